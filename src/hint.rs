//! Every hint is worded here. Commands printed for an operator to paste
//! carry the store and connection flags of this invocation (never a
//! password or token: those stay in the environment or the context),
//! shell-quoted where needed. The library names the way past a refusal or
//! finding as a [`Remedy`]; [`advice`] turns it into words and a command.

use crate::cli::Global;
use journal::store::{Restore, Store};
use journal::{Error, Remedy, Where};

/// The default `--hold` (CLI.md): left out of a hint when unchanged.
const DEFAULT_HOLD_SECS: u64 = 600;

/// `s` as one shell word that pastes back to exactly `s`: as is when it
/// holds only characters no shell treats specially, single-quoted when it
/// holds nothing a terminal acts on, else `$'...'` with those characters
/// as octal escapes ([`journal::shell::word`]).
pub fn quote(s: &str) -> String {
    journal::shell::word(std::ffi::OsStr::new(s))
}

/// [`quote`] for a path, which need not be UTF-8: a name that is not
/// pastes back to its bytes, never to U+FFFD.
pub fn quote_path(p: &std::path::Path) -> String {
    journal::shell::path_word(p)
}

/// ` --state-dir DIR --context C ...`: the flags that chose the store and
/// the connection, each with a leading space; empty when none were given.
pub fn store_flags(g: &Global) -> String {
    // Each flag and its value as one shell word.
    let mut flags: Vec<(&str, String)> = Vec::new();
    if let Some(d) = &g.state_dir {
        flags.push(("state-dir", quote_path(d)));
    }
    if let Some(s) = &g.store {
        flags.push(("store", quote(s)));
    }
    if let Some(c) = &g.config {
        flags.push(("config", quote_path(c)));
    }
    if let Some(c) = &g.context {
        flags.push(("context", quote(c)));
    }
    if let Some(s) = &g.server {
        flags.push(("server", quote(s)));
    }
    if let Some(c) = &g.creds {
        flags.push(("creds", quote_path(c)));
    }
    if let Some(u) = &g.user {
        flags.push(("user", quote(u)));
    }
    if g.hold.as_secs() != DEFAULT_HOLD_SECS {
        flags.push(("hold", format!("{}s", g.hold.as_secs())));
    }
    flags
        .iter()
        .map(|(name, v)| format!(" --{name} {v}"))
        .collect()
}

/// `fisk-admin <store flags> <args>`.
pub fn command(g: &Global, args: &[&str]) -> String {
    let words: Vec<String> = args.iter().map(|a| quote(a)).collect();
    format!("fisk-admin{} {}", store_flags(g), words.join(" "))
}

/// The command that resumes `run` after an answer or an approval. The
/// journal holds only the agent file's fingerprint, not its path: the
/// command is complete when this invocation named it (`--config`), else it
/// says which file `--agent` takes.
pub fn resume(g: &Global, run: &str) -> String {
    let (c, note) = resume_with(g, run, None, &[]);
    format!("{c}{note}")
}

/// `resume RUN` with this invocation's flags, then `more`: the agent file
/// `agent` (the one a failed resume was given), else `--config`'s, else
/// `--agent FILE` with the note saying which file that is (empty when no
/// note is needed), to go after the command.
fn resume_with(
    g: &Global,
    run: &str,
    agent: Option<&std::path::Path>,
    more: &[&str],
) -> (String, &'static str) {
    let more: String = more.iter().map(|a| format!(" {}", quote(a))).collect();
    let resume = command(g, &["resume", run]);
    match (agent, &g.config) {
        (Some(a), _) => (format!("{resume} --agent {}{more}", quote_path(a)), ""),
        (None, Some(_)) => (format!("{resume}{more}"), ""),
        (None, None) => (
            format!("{resume} --agent FILE{more}"),
            " (FILE: the agent file the run was started with)",
        ),
    }
}

/// `remedy` as advice naming the command that applies it, complete for
/// pasting (this invocation's store flags, the run, the stream, and each of
/// `calls` where the command takes a call). `run` and `stream` are
/// placeholders only where the error names neither.
pub fn advice(
    g: &Global,
    remedy: Remedy,
    run: Option<&str>,
    stream: Option<&str>,
    calls: &[String],
) -> String {
    let run = run.unwrap_or("RUN");
    let stream = stream.unwrap_or("STREAM");
    let c = |args: &[&str]| format!("`{}`", command(g, args));
    // The command for each call, or for the run when no call is named.
    let each = |verb: &str| -> String {
        match calls {
            [] => c(&[verb, run]),
            _ => calls
                .iter()
                .map(|id| c(&[verb, run, id]))
                .collect::<Vec<_>>()
                .join(", "),
        }
    };
    match remedy {
        Remedy::Verify => format!("run {} for every finding with its line", c(&["verify", run])),
        Remedy::Repair => format!(
            "run {} to cut it (its bytes are kept in a backup file), then try again",
            c(&["repair", run])
        ),
        Remedy::Upgrade => format!(
            "run {} to convert it to the current format (or finish a conversion)",
            c(&["upgrade", run])
        ),
        Remedy::Again => "run the same command again to finish it".into(),
        Remedy::Force => {
            "if that is intended, run the same command with --force to continue anyway".into()
        }
        Remedy::NewTurn => {
            let (c, note) = resume_with(g, run, None, &["--prompt", "TEXT"]);
            format!("continue it with a new user turn: `{c}`{note}")
        }
        Remedy::List => format!("{} lists the runs in this store", c(&["ls"])),
        Remedy::CreateStream => format!(
            "create it with {} (the subject prefix the agents write under; or ask the operator who owns it)",
            c(&["stream", "create", stream, "--subject", "PREFIX.>"])
        ),
        Remedy::CheckStream => format!("{} lists every problem", c(&["stream", "check", stream])),
        // `--force` overrides the hold for this one command; resume's
        // `--force` is for drift only, so a pasted drift hint never takes
        // over a run in flight.
        Remedy::Unhold => "if its writer is known to be gone, run the same command with --force \
             (resume: with --hold 0)"
            .into(),
        Remedy::Approve => format!(
            "approve with {} (one dispatch each), or the tool for the rest of the run with {}",
            each("approve"),
            c(&["approve", run, "--tool", "NAME"])
        ),
        Remedy::Answer => format!(
            "answer with {} (the answer on standard input, or --content TEXT)",
            each("answer")
        ),
        Remedy::Salvage => {
            // migrate names its stores itself: only the connection flags.
            let conn = Global {
                state_dir: None,
                store: None,
                ..g.clone()
            };
            format!(
                "`{}` copies the records before the damage (URI: this store, file:DIR or jetstream:STREAM)",
                command(&conn, &["migrate", "--from", "URI", "--to", "file:salvaged", "--include-corrupt", run])
            )
        }
        Remedy::Remove => format!("{} deletes it (keeping a backup)", c(&["rm", run])),
        Remedy::ChmodJournal | Remedy::ChmodJournals => {
            "chmod 600 the journal(s), as the finding says".into()
        }
        Remedy::ChmodStore => "chmod 700 the store directory".into(),
    }
}

/// The command that applies `remedy` to `run` in `store`, complete for
/// pasting: `fisk-admin` with this invocation's store flags, or the
/// `chmod` a permissions finding asks for. `None` where no one command
/// does it.
pub fn fix(g: &Global, store: &Store, remedy: Remedy, run: &str) -> Option<String> {
    // The store as a place: a directory, or a stream.
    let place = store.place();
    let file_dir = match &place {
        Where::Path(d) => Some(d.as_path()),
        _ => None,
    };
    Some(match remedy {
        Remedy::Verify => command(g, &["verify", run]),
        Remedy::Repair => command(g, &["repair", run]),
        Remedy::Upgrade => command(g, &["upgrade", run]),
        Remedy::Remove => command(g, &["rm", run]),
        Remedy::Answer => command(g, &["answer", run, "--content", "TEXT"]),
        Remedy::List => command(g, &["ls"]),
        Remedy::CheckStream => command(g, &["stream", "check", run]),
        Remedy::Salvage => {
            // migrate names its stores itself: only the connection flags.
            let conn = Global {
                state_dir: None,
                store: None,
                ..g.clone()
            };
            // `file:` and the directory, as one word (the directory need
            // not be UTF-8).
            let from = match &place {
                Where::Path(d) => {
                    let mut uri = std::ffi::OsString::from("file:");
                    uri.push(d.as_os_str());
                    journal::shell::word(&uri)
                }
                Where::Stream { stream, .. } => quote(&format!("jetstream:{stream}")),
                _ => return None,
            };
            format!(
                "{} --from {from} --to file:salvaged --include-corrupt {}",
                command(&conn, &["migrate"]),
                quote(run)
            )
        }
        Remedy::ChmodJournal => {
            let path = file_dir?.join(format!("{run}.json"));
            format!("chmod 600 {}", quote_path(&path))
        }
        Remedy::ChmodJournals => {
            format!("chmod 600 {}/*.json", quote_path(file_dir?))
        }
        Remedy::ChmodStore => format!("chmod 700 {}", quote_path(file_dir?)),
        Remedy::Again
        | Remedy::Force
        | Remedy::NewTurn
        | Remedy::CreateStream
        | Remedy::Unhold
        | Remedy::Approve => return None,
    })
}

/// The command that puts a deleted run back, complete for pasting: on
/// JetStream, `migrate` with this invocation's connection flags (not its
/// store flags: migrate names its stores itself).
pub fn restore(g: &Global, r: &Restore) -> String {
    match r {
        Restore::Link { kept, journal } => {
            let (k, j) = (quote_path(kept), quote_path(journal));
            format!("ln {k} {j} && rm {k}")
        }
        Restore::Copy { from, stream, run } => {
            let conn = Global {
                state_dir: None,
                store: None,
                ..g.clone()
            };
            let mut uri = std::ffi::OsString::from("file:");
            uri.push(from.as_os_str());
            format!(
                "{} --from {} --to {} {}",
                command(&conn, &["migrate"]),
                journal::shell::word(&uri),
                quote(&format!("jetstream:{stream}")),
                quote(run)
            )
        }
    }
}

/// What to do next about a library error, as commands with this
/// invocation's flags.
pub fn for_error(g: &Global, e: &Error) -> Option<String> {
    let stream = match e {
        Error::NoStream { stream, .. }
        | Error::Config {
            at: Where::Stream { stream, .. },
            ..
        } => Some(stream.as_str()),
        _ => None,
    };
    match e {
        Error::Poisoned { run, .. } => Some(format!(
            "run `{}`, then resume to continue from what was stored",
            command(g, &["verify", run])
        )),
        Error::Symlink { .. } => Some(
            "fisk-admin never writes through one; replace it with the file it points to".into(),
        ),
        Error::Io { path, source } if is_full(source) => Some(full(path)),
        Error::NoStateHome => Some(
            "name the store with --state-dir DIR (or --store URI), or set XDG_STATE_HOME".into(),
        ),
        Error::NotFound {
            run,
            at: Where::Path(p),
        } => {
            let list = advice(g, Remedy::List, None, None, &[]);
            let dir = match p.extension() {
                Some(x) if x == "json" => p.parent().unwrap_or(p),
                _ => p.as_path(),
            };
            Some(match similar(run, dir).as_slice() {
                [] => list,
                names => format!(
                    "did you mean {}? {list}",
                    names
                        .iter()
                        .map(|n| format!("`{}`", quote(n)))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            })
        }
        Error::Refused {
            run,
            remedy: Some(r),
            calls,
            ..
        } => Some(advice(g, *r, Some(run), stream, calls)),
        _ => Some(advice(g, Remedy::of(e)?, run_of(e), stream, &[])),
    }
}

/// The help for a failed `resume RUN --agent AGENT`: the commands a
/// refusal asks for name the agent file this resume was given.
/// The help for a failed `resume RUN --agent AGENT` (with `--prompt` when
/// `prompted`): the commands a refusal asks for name the agent file this
/// resume was given and keep its new turn. `None`: the error's own help.
pub fn for_resume_error(
    g: &Global,
    run: &str,
    agent: &std::path::Path,
    prompted: bool,
    e: &Error,
) -> Option<String> {
    let resume = |more: &[&str]| format!("`{}`", resume_with(g, run, Some(agent), more).0);
    match Remedy::of(e) {
        Some(Remedy::NewTurn) => Some(format!(
            "continue it with a new user turn: {}",
            resume(&["--prompt", "TEXT"])
        )),
        Some(Remedy::Force) if prompted => Some(format!(
            "if that is intended, {} continues anyway (TEXT: the new turn)",
            resume(&["--prompt", "TEXT", "--force"])
        )),
        Some(Remedy::Force) => Some(format!(
            "if that is intended, {} continues anyway",
            resume(&["--force"])
        )),
        _ => None,
    }
}

/// The runs in the store directory `dir` whose ids are close to `run`: it
/// is a prefix of one, or a few edits away (a typo). At most three, the
/// closest first.
fn similar(run: &str, dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut close: Vec<(usize, String)> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?.to_owned();
            let d = if id.starts_with(run) {
                0
            } else {
                distance(run, &id)
            };
            (d <= (run.chars().count() / 4).clamp(1, 3)).then_some((d, id))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, id)| id).collect()
}

/// Levenshtein distance, in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let left = row.get(j).copied().unwrap_or(usize::MAX);
            let cost = usize::from(ca != *cb);
            let v = (prev + cost).min(above + 1).min(left + 1);
            prev = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = v;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

/// The file system (or the user's quota) has no room: no free blocks or
/// no free inodes.
fn is_full(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(e.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded)
}

/// What to do about a file system that is full at `path`. Writers leave
/// nothing half written when they fail (journal/FORMAT.md, "No debris"),
/// so the same command can simply be run again.
fn full(path: &std::path::Path) -> String {
    // A bare name's parent is "": the working directory.
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let dir = quote_path(dir);
    format!(
        "the file system holding {dir} is full: no free space, or no free inodes \
         (`df -h {dir}` and `df -i {dir}` say which); free some, then run the same command again"
    )
}

/// The run an error is about, when it is about one.
pub fn run_of(e: &Error) -> Option<&str> {
    match e {
        Error::NotFound { run, .. }
        | Error::Corrupt { run, .. }
        | Error::Fold { run, .. }
        | Error::Live { run, .. }
        | Error::Exists { run, .. }
        | Error::TornTail { run, .. }
        | Error::Refused { run, .. }
        | Error::Poisoned { run, .. }
        | Error::Gap { run, .. }
        | Error::SourceChanged { run, .. } => Some(run),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn global(args: &[&str]) -> Global {
        let mut all = vec!["fisk-admin"];
        all.extend_from_slice(args);
        all.push("info");
        crate::cli::Cli::parse_from(all).global
    }

    #[test]
    fn a_hint_carries_the_store_flags_but_never_a_secret() {
        let g = global(&[
            "--store",
            "jetstream:S",
            "--context",
            "prod ctx",
            "--password",
            "hunter2",
            "--token",
            "t0k",
            "--user",
            "ops",
        ]);
        let c = command(&g, &["answer", "r1", "toolu_1"]);
        assert_eq!(
            c,
            "fisk-admin --store jetstream:S --context 'prod ctx' --user ops answer r1 toolu_1"
        );
        assert!(!c.contains("hunter2") && !c.contains("t0k"));
        assert_eq!(quote("it's"), r"'it'\''s'");
        // Pasted, it is the same text, and it prints no escape raw.
        assert_eq!(quote("it's\u{1b}"), r"$'it\'s\033'");
    }

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(distance("deferal-waiting", "deferral-waiting"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("héllo", "hello"), 1);
    }

    #[test]
    fn every_remedy_names_its_command_with_the_run_or_stream() {
        let cases = [
            (Remedy::Verify, "`fisk-admin verify r-1`"),
            (Remedy::Repair, "`fisk-admin repair r-1`"),
            (Remedy::Upgrade, "`fisk-admin upgrade r-1`"),
            (Remedy::Again, "the same command again"),
            (Remedy::Force, "--force"),
            (Remedy::List, "`fisk-admin ls`"),
            (
                Remedy::CreateStream,
                "`fisk-admin stream create S --subject 'PREFIX.>'`",
            ),
            (Remedy::CheckStream, "`fisk-admin stream check S`"),
            (Remedy::Answer, "`fisk-admin answer r-1`"),
            (Remedy::Approve, "`fisk-admin approve r-1`"),
            (Remedy::Unhold, "the same command with --force"),
            (
                Remedy::NewTurn,
                "`fisk-admin resume r-1 --agent FILE --prompt TEXT`",
            ),
        ];
        let g = global(&[]);
        for (r, want) in cases {
            let a = advice(&g, r, Some("r-1"), Some("S"), &[]);
            assert!(a.contains(want), "{r:?}: {a}");
        }
        // With the flags of the invocation, and one command per call.
        let g = global(&["--state-dir", "/s t"]);
        let calls = ["g1".to_owned(), "g2".to_owned()];
        let a = advice(&g, Remedy::Approve, Some("r-1"), None, &calls);
        assert!(
            a.contains("`fisk-admin --state-dir '/s t' approve r-1 g1`, `fisk-admin --state-dir '/s t' approve r-1 g2`"),
            "{a}"
        );
        let a = advice(&g, Remedy::Verify, Some("r-1"), None, &[]);
        assert!(
            a.contains("`fisk-admin --state-dir '/s t' verify r-1`"),
            "{a}"
        );
    }
}
