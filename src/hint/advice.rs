//! The way past a refusal, a failure or a finding, in words and as a
//! command to paste: the library's [`Remedy`] and errors turned into advice.

use super::*;

/// `remedy` as advice naming the command that applies it, complete for
/// pasting (this invocation's store flags, the run, the stream, and each of
/// `calls` where the command takes a call). `run` and `stream` are
/// placeholders only where the error names neither.
pub fn advice(
    g: &Invocation,
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
        Remedy::NewTurn => format!(
            "continue it with a new user turn: {}",
            ticked(&resume_with(g, run, None, true))
        ),
        Remedy::List => format!("{} lists the runs in this store", c(&["ls"])),
        // The subject is the operator's to choose: the command is printed
        // without it and refuses to run until `--subject` is added.
        Remedy::CreateStream => format!(
            "create it with {}, the subject the agents write under added, quoted (its prefix and `.>`); or ask the operator who owns it",
            c(&["stream", "create", stream, "--subject"])
        ),
        Remedy::CheckStream => format!("{} lists every problem", c(&["stream", "check", stream])),
        // `--force` overrides the hold for this one command; resume's
        // `--force` is for drift only, so a pasted drift hint never takes
        // over a run in flight.
        Remedy::Unhold => "if its writer is known to be gone, run the same command with --force \
             (resume: with --hold 0)"
            .into(),
        Remedy::Approve => format!("approve with {} (one dispatch each)", each("approve")),
        Remedy::Answer => format!("answer with {} ({})", each("answer"), Need::Answer.says()),
        Remedy::Salvage => {
            // migrate names its stores itself: only the connection flags.
            let conn = Invocation {
                state_dir: None,
                store: None,
                ..g.clone()
            };
            // This store as a URI when the invocation named it; else the
            // command names none and refuses to run until --from is given.
            let from = match (&g.store, &g.state_dir) {
                (Some(uri), _) => Some(std::ffi::OsString::from(uri)),
                (None, Some(d)) => {
                    let mut uri = std::ffi::OsString::from("file:");
                    uri.push(d.as_os_str());
                    Some(uri)
                }
                (None, None) => None,
            };
            let mut m = cmd(&conn, &["migrate"]);
            if let Some(from) = &from {
                m = m.arg("--from").arg(from);
            }
            let m = m.arg("--to").arg("file:salvaged").arg("--include-corrupt").arg(run);
            match from {
                Some(_) => format!("{} copies the records before the damage", ticked(&m)),
                None => format!(
                    "{} copies the records before the damage once --from and this store's URI (file:DIR or jetstream:STREAM) are added",
                    ticked(&m)
                ),
            }
        }
        Remedy::Recover => format!(
            "{} keeps every intact record past the damage (it shows what it would do and asks first; the damaged journal is kept as a backup)",
            c(&["recover", run])
        ),
        Remedy::Remove => format!("{} deletes it (keeping a backup)", c(&["rm", run])),
        Remedy::ChmodJournal | Remedy::ChmodJournals => {
            "chmod 600 the journal(s), as the finding says".into()
        }
        Remedy::ChmodStore => "chmod 700 the store directory".into(),
        // A remedy newer than this binary (Remedy is non-exhaustive): the
        // findings with their lines are the way in.
        _ => format!("run {} for every finding with its line", c(&["verify", run])),
    }
}

/// The command that applies `remedy` to `run` in `store`, complete for
/// pasting: `fisk-admin` with this invocation's store flags, or the
/// `chmod` a permissions finding asks for. `None` where no one command
/// does it.
pub fn fix(g: &Invocation, store: &Store, remedy: Remedy, run: &str) -> Option<String> {
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
        Remedy::Recover => command(g, &["recover", run]),
        Remedy::Answer => answer_run(g, run).line(),
        Remedy::List => command(g, &["ls"]),
        Remedy::CheckStream => command(g, &["stream", "check", run]),
        Remedy::Salvage => {
            // migrate names its stores itself: only the connection flags.
            let conn = Invocation {
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
        // A remedy newer than this binary: no one command known.
        _ => return None,
    })
}

/// The command that puts a deleted run back, complete for pasting: on
/// JetStream, `migrate` with this invocation's connection flags (not its
/// store flags: migrate names its stores itself).
pub fn restore(g: &Invocation, r: &Restore) -> String {
    match r {
        Restore::Link { kept, journal } => {
            let (k, j) = (quote_path(kept), quote_path(journal));
            format!("ln {k} {j} && rm {k}")
        }
        Restore::Copy { from, stream, run } => {
            let conn = Invocation {
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
pub fn for_error(g: &Invocation, e: &Error) -> Option<String> {
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
        Error::InvalidId { .. } => for_run_path(std::env::args_os().skip(1)),
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
        Error::Refused(r) => match (&r.remedy, r.state()) {
            (Some(remedy), _) => Some(advice(g, *remedy, Some(&r.run), stream, &r.calls)),
            (None, Some(s)) => Some(for_state(g, s, stream)),
            (None, None) => for_refusal(g, r),
        },
        _ => Some(advice(g, Remedy::of(e)?, run_of(e), stream, &[])),
    }
}

/// What to do next about a hand-written operation refused (answer,
/// approve, end, recover).
pub(super) fn for_refusal(g: &Invocation, r: &journal::ops::Refusal) -> Option<String> {
    use journal::ops::{Op, Why};
    let run = r.run.as_str();
    Some(match &r.why {
        Why::AlreadyAnswered { .. } if r.op == Some(Op::Answer) => format!(
            "`{}` shows the answer; {} continues the run",
            command(g, &["show", run, "--transcript"]),
            ticked(&resume(g, run))
        ),
        Why::NoPendingBatch { .. } => format!(
            "`{}` shows where the run stands",
            command(g, &["show", run])
        ),
        Why::NotDeferred { waiting, .. } => match waiting.as_slice() {
            [] => "the run waits on no deferred call".to_owned(),
            ids => format!(
                "the run waits on: {}",
                ids.iter()
                    .map(|d| crate::output::sanitize(d, false).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        Why::WaitsOnSeveral { calls } => advice(g, Remedy::Answer, Some(run), None, calls),
        Why::Deferred { call } => advice(
            g,
            Remedy::Answer,
            Some(run),
            None,
            std::slice::from_ref(call),
        ),
        Why::Gated { call, .. } => advice(
            g,
            Remedy::Approve,
            Some(run),
            None,
            std::slice::from_ref(call),
        ),
        Why::UnknownTool { .. } => format!(
            "`{}` shows the calls that wait, each with its approve command",
            command(g, &["show", run])
        ),
        Why::TooBig => "shorten it, or store it elsewhere and answer with a reference to it".into(),
        Why::Changed(_) => "run the command again".into(),
        Why::Unrecoverable { .. } => format!(
            "`{}` lists every damaged line; migrate's --include-corrupt still copies the records before the damage to another store, and a backup of your own is the only way back to the rest",
            command(g, &["verify", run])
        ),
        _ => return None,
    })
}

/// What to do next about a write the run's state does not allow (the run
/// model's table, `journal::state`): the way the table names, and, where
/// naming the run with `--force` would pass, that.
pub(super) fn for_state(
    g: &Invocation,
    r: &journal::state::Refused,
    stream: Option<&str>,
) -> String {
    use journal::state::Way;
    let run = r.run.as_str();
    let way = match r.way {
        Way::Answer => advice(g, Remedy::Answer, Some(run), stream, &[]),
        Way::Approve => format!(
            "`{}` lists the calls that wait on an approval, each with its approve command",
            command(g, &["show", run])
        ),
        Way::Resume => format!("{} goes on", ticked(&resume(g, run))),
        // A JetStream record is a whole message: no tail to cut there;
        // recover, forced, rebuilds the run without the bad last message.
        Way::Repair if stream.is_some() => format!(
            "`{}` rebuilds it without its bad last message (a dry run first: `--dry-run`)",
            command(g, &["recover", run, "--force"])
        ),
        Way::Repair => advice(g, Remedy::Repair, Some(run), stream, &[]),
        Way::Recover => advice(g, Remedy::Recover, Some(run), stream, &[]),
        Way::Wait => advice(g, Remedy::Unhold, Some(run), stream, &[]),
        _ => format!(
            "`{}` shows where the run stands",
            command(g, &["show", run])
        ),
    };
    match (r.forcible, r.by_filter) {
        (true, false) => format!("{way}; to go ahead anyway, run the same command with --force"),
        (true, true) => format!(
            "{way}; a filter never takes such a run: name it and add --force to go ahead anyway"
        ),
        _ => way,
    }
}

/// A run named by the path of its journal (`show runs/x.json`, an existing
/// file ending in `.json` whose stem is a run id): the same command, `args`
/// (this invocation's, without the program name), with `--state-dir` the
/// file's directory and the run its id. Any other file named to a command
/// that reads one (`show`, `verify`, `fold`, `stats`, `query`, `export`) is read
/// with `--file`. The store flags given are left out (the directory or the
/// file replaces them), and so are secrets.
pub fn for_run_path<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> Option<String> {
    use std::path::Path;
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let named = args.iter().enumerate().find_map(|(i, a)| {
        let p = Path::new(a);
        let id = p.file_stem()?.to_str()?;
        let journal = p.extension()? == "json" && journal::id::is_valid(id) && p.is_file();
        journal.then_some((i, p, id))
    });
    let Some((at, path, id)) = named else {
        return for_file_path(&args);
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let words = rewritten(
        &args,
        at,
        vec![format!("fisk-admin --state-dir {}", quote_path(dir))],
        vec![quote(id)],
    );
    Some(format!(
        "{} is the journal file of run {}: read it with `{}`",
        quote_path(path),
        quote(id),
        words
    ))
}

/// [`for_run_path`] for a file that is not `<id>.json`: `--file PATH`,
/// for a command that takes it.
pub(super) fn for_file_path(args: &[std::ffi::OsString]) -> Option<String> {
    const READ_A_FILE: [&str; 6] = ["show", "verify", "fold", "stats", "query", "export"];
    let command = args
        .iter()
        .position(|a| a.to_str().is_some_and(|a| READ_A_FILE.contains(&a)))?;
    let (at, path) = args
        .iter()
        .enumerate()
        .skip(command + 1)
        .find_map(|(i, a)| {
            let p = std::path::Path::new(a);
            let flag = a.to_string_lossy().starts_with('-');
            (!flag && !journal::id::is_valid(&a.to_string_lossy()) && p.is_file()).then_some((i, p))
        })?;
    let words = rewritten(
        args,
        at,
        vec!["fisk-admin".to_owned()],
        vec!["--file".to_owned(), quote_path(path)],
    );
    Some(format!(
        "{} is a file: read it as a journal with `{}`",
        quote_path(path),
        words
    ))
}

/// `args` as one shell line after `head`, the word at `at` replaced by
/// `with`; the store's flags (replaced) and secrets left out, with their
/// values.
pub(super) fn rewritten(
    args: &[std::ffi::OsString],
    at: usize,
    head: Vec<String>,
    with: Vec<String>,
) -> String {
    // Flags whose value goes with them: the store's (replaced) and secrets.
    let dropped = [
        "--state-dir",
        "--store",
        "--config",
        "--root-dir",
        "--password",
        "--token",
    ];
    let mut words = head;
    let mut skip = false;
    for (i, a) in args.iter().enumerate() {
        let text = a.to_string_lossy();
        if std::mem::take(&mut skip) {
            continue;
        }
        if dropped.contains(&text.as_ref()) {
            skip = true;
        } else if dropped.iter().any(|d| text.starts_with(&format!("{d}="))) {
        } else if i == at {
            words.extend(with.iter().cloned());
        } else {
            words.push(journal::shell::word(a));
        }
    }
    words.join(" ")
}

/// The help for a failed `resume RUN --agent AGENT`: the commands a
/// refusal asks for name the agent file this resume was given.
/// The help for a failed `resume RUN --agent AGENT` (with `--prompt` when
/// `prompted`): the commands a refusal asks for name the agent file this
/// resume was given and keep its new turn. `None`: the error's own help.
pub fn for_resume_error(
    g: &Invocation,
    run: &str,
    agent: &std::path::Path,
    prompted: bool,
    e: &Error,
) -> Option<String> {
    let resume = |new_turn: bool, force: bool| {
        let c = resume_with(g, run, Some(agent), new_turn);
        ticked(&match force {
            true => c.arg("--force"),
            false => c,
        })
    };
    match Remedy::of(e) {
        Some(Remedy::NewTurn) => Some(format!(
            "continue it with a new user turn: {}",
            resume(true, false)
        )),
        Some(Remedy::Force) => Some(format!(
            "if that is intended, {} continues anyway",
            resume(prompted, true)
        )),
        _ => None,
    }
}

/// What `run` or `resume` says when a JetStream store failed under the
/// run (its server went away, or a stream leader did and no other was
/// reachable): the records stored are whole, and `resume` goes on from
/// them. With `--hold 0s`, since the run is left in the middle of a turn
/// and so within its hold (SPEC 8), and the writer the hold protects was
/// this command. A file store's failure (a full disk) keeps its own help.
pub fn for_run_store_failure(
    g: &Invocation,
    store: &Store,
    run: &str,
    agent: &std::path::Path,
    e: &Error,
) -> Option<String> {
    let on_stream = store.guards_by_hold();
    (on_stream && e.is_store_failure()).then(|| {
        let g = Invocation {
            hold: std::time::Duration::ZERO,
            ..g.clone()
        };
        let c = resume_with(&g, run, Some(agent), false);
        format!(
            "every record stored is whole; once the store answers again, continue the run with {} (--hold 0s: the run is left in its turn, within its hold, and its writer was this command, which has stopped)",
            ticked(&c)
        )
    })
}

/// The runs in the store directory `dir` whose ids are close to `run`: it
/// is a prefix of one, or a few edits away (a typo). At most three, the
/// closest first.
pub(super) fn similar(run: &str, dir: &std::path::Path) -> Vec<String> {
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
pub(super) fn distance(a: &str, b: &str) -> usize {
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
pub(super) fn is_full(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(e.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded)
}

/// What to do about a file system that is full at `path`. Writers leave
/// nothing half written when they fail (journal/FORMAT.md, "No debris"),
/// so the same command can simply be run again.
pub(super) fn full(path: &std::path::Path) -> String {
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
        | Error::Poisoned { run, .. }
        | Error::Gap { run, .. }
        | Error::SourceChanged { run, .. } => Some(run),
        Error::Refused(r) => Some(&r.run),
        _ => None,
    }
}
