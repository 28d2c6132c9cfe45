//! Every hint is worded here. Commands printed for an operator to paste
//! carry the store and connection flags of this invocation (never a
//! password or token: those stay in the environment or the context),
//! shell-quoted where needed. The library names the way past a refusal or
//! finding as a [`Remedy`]; [`advice`] turns it into words and a command.

use crate::invocation::{Invocation, DEFAULT_HOLD};
use journal::store::{Restore, Store};
use journal::{Error, Remedy, Where};

mod advice;

pub use advice::*;

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

/// What an operator still gives a printed command when it runs. It is
/// never a word of the command (a placeholder the command would accept
/// and store: a printed answer hint once stored its own placeholder word
/// as the answer): the command as printed either asks for it or cannot
/// run without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// The answer to a deferred call: `answer` reads it from standard
    /// input, or asks for it on a terminal.
    Answer,
    /// A new user turn: `resume --prompt -` reads it the same way.
    Prompt,
    /// The agent file the run was started with: `resume` asks for its
    /// path on a terminal; elsewhere `--agent` must be added.
    Agent,
    /// The NATS password this invocation used, never printed: from
    /// `NATS_PASSWORD`, `--password-file` or a context.
    Password,
    /// The NATS token this invocation used, never printed: from
    /// `NATS_TOKEN`, `--token-file` or a context.
    Token,
}

impl Need {
    /// How the operator gives it, in words.
    pub fn says(self) -> &'static str {
        match self {
            Need::Answer => "it reads the answer from standard input, or asks for it on a terminal",
            Need::Prompt => "it reads the new user turn from standard input, or asks for it on a terminal",
            Need::Agent => {
                "it asks for the agent file the run was started with (or add --agent and its path)"
            }
            Need::Password => {
                "the NATS password is not printed: it comes from NATS_PASSWORD, --password-file or the context"
            }
            Need::Token => {
                "the NATS token is not printed: it comes from NATS_TOKEN, --token-file or the context"
            }
        }
    }
}

/// A command printed for an operator to paste: the words it runs, and what
/// the operator still gives it ([`Need`]). In text it is one shell line
/// (`Display`); in JSON `{argv, supply}`.
/// A word is bytes (a path need not be UTF-8): the text form names exactly
/// those bytes ([`journal::shell::word`]); JSON, which holds only Unicode,
/// shows such a word lossily.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cmd {
    #[serde(serialize_with = "lossy_words")]
    pub argv: Vec<std::ffi::OsString>,
    pub supply: Vec<Need>,
}

fn lossy_words<S: serde::Serializer>(argv: &[std::ffi::OsString], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(argv.iter().map(|w| w.to_string_lossy()))
}

impl Cmd {
    /// The command as a step to paste (the one rule, issue 39 d-22): its
    /// `label` on a line of its own, the command alone on the next, and
    /// what it still needs under it as a shell comment, each line led by
    /// `indent`; so a triple-click takes the command whole, and a paste of
    /// all the lines runs it and nothing else.
    pub fn step(&self, indent: &str, label: &str) -> String {
        let mut text = format!("{indent}{label}:\n{indent}  {self}");
        for n in &self.supply {
            text.push_str(&format!("\n{indent}  # {}", n.says()));
        }
        text
    }

    fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Cmd {
        self.argv.push(a.as_ref().to_owned());
        self
    }

    fn needs(mut self, n: Need) -> Cmd {
        if !self.supply.contains(&n) {
            self.supply.push(n);
            self.supply.sort();
        }
        self
    }
}

impl std::fmt::Display for Cmd {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let words: Vec<String> = self.argv.iter().map(|a| journal::shell::word(a)).collect();
        f.write_str(&words.join(" "))
    }
}

/// A server URL list as a hint prints it: each URL without its userinfo
/// (`nats://u:p@host` is `nats://host`), with the user named in it, and
/// whether a password or a token was left out.
fn server_without_secrets(urls: &str) -> (String, Option<String>, Option<Need>) {
    let mut user = None;
    let mut need = None;
    let shown: Vec<String> = urls
        .split(',')
        .map(|url| {
            let p = journal::nats::split_url(url);
            if p.password.is_some() {
                need = Some(Need::Password);
            } else if p.token.is_some() {
                need.get_or_insert(Need::Token);
            }
            if user.is_none() {
                user = p.user;
            }
            p.url
        })
        .collect();
    (shown.join(","), user, need)
}

/// The flags that chose the store and the connection, as words
/// (`--state-dir DIR --context C ...`), and what of the connection is left
/// out because it is secret: a password or token (given as a flag, from
/// the environment, or inside the server URL) is never printed.
fn store_words(g: &Invocation) -> Cmd {
    let mut c = Cmd {
        argv: vec!["fisk-admin".into()],
        supply: Vec::new(),
    };
    if let Some(d) = &g.state_dir {
        c = c.arg("--state-dir").arg(d);
    }
    if let Some(s) = &g.store {
        c = c.arg("--store").arg(s);
    }
    if let Some(f) = &g.config {
        c = c.arg("--config").arg(f);
    }
    if let Some(r) = &g.root_dir {
        c = c.arg("--root-dir").arg(r);
    }
    if let Some(x) = &g.context {
        c = c.arg("--context").arg(x);
    }
    let mut user = g.user.clone();
    if let Some(s) = &g.server {
        let (shown, in_url, need) = server_without_secrets(s);
        c = c.arg("--server").arg(shown);
        if user.is_none() {
            user = in_url;
        }
        if let Some(n) = need {
            c = c.needs(n);
        }
    }
    if let Some(f) = &g.creds {
        c = c.arg("--creds").arg(f);
    }
    if let Some(u) = &user {
        c = c.arg("--user").arg(u);
    }
    // A file that holds the secret is named; the secret itself never is.
    match (&g.password_file, &g.password) {
        (Some(f), _) => c = c.arg("--password-file").arg(f),
        (None, Some(_)) => c = c.needs(Need::Password),
        (None, None) => {}
    }
    match (&g.token_file, &g.token) {
        (Some(f), _) => c = c.arg("--token-file").arg(f),
        (None, Some(_)) => c = c.needs(Need::Token),
        (None, None) => {}
    }
    if g.hold != DEFAULT_HOLD {
        // A form --hold reads back exactly, a fraction of a second included.
        c = c.arg("--hold").arg(journal::time::format_duration(g.hold));
    }
    c
}

/// `fisk-admin <store flags> <args>`, with what it still needs.
pub fn cmd(g: &Invocation, args: &[&str]) -> Cmd {
    args.iter().fold(store_words(g), |c, a| c.arg(a))
}

/// `verify --against SEAL [--key KEY.pub]` with this invocation's store
/// flags: the check of a store against a seal (issue 38).
pub fn verify_against(
    g: &Invocation,
    seal: &std::path::Path,
    key: Option<&std::path::Path>,
) -> Cmd {
    let c = cmd(g, &["verify", "--against"]).arg(seal);
    match key {
        Some(k) => {
            let mut public = k.as_os_str().to_owned();
            if !public.to_string_lossy().ends_with(".pub") {
                public.push(".pub");
            }
            c.arg("--key").arg(public)
        }
        None => c,
    }
}

/// `fisk-admin <store flags> <args>` as one shell line.
pub fn command(g: &Invocation, args: &[&str]) -> String {
    cmd(g, args).to_string()
}

/// `fisk-admin <args> --file PATH`: a command on a journal file, with no
/// store flags (a file is read with no store).
pub fn on_file(args: &[&str], path: &std::path::Path) -> String {
    let c = Cmd {
        argv: vec!["fisk-admin".into()],
        supply: Vec::new(),
    };
    args.iter()
        .fold(c, |c, a| c.arg(a))
        .arg("--file")
        .arg(path)
        .to_string()
}

/// The command that answers the deferred call `id` of `run`: it reads the
/// answer from standard input, or asks for it on a terminal.
pub fn answer(g: &Invocation, run: &str, id: &str) -> Cmd {
    cmd(g, &["answer", run, id]).needs(Need::Answer)
}

/// The command that approves the gated call `id` of `run` once.
pub fn approve(g: &Invocation, run: &str, id: &str) -> Cmd {
    cmd(g, &["approve", run, id])
}

/// The command that resumes `run` after an answer or an approval. The
/// journal holds only the agent file's fingerprint, not its path: the
/// command is complete when this invocation named it (`--config`), else
/// it asks for the file ([`Need::Agent`]).
pub fn resume(g: &Invocation, run: &str) -> Cmd {
    resume_with(g, run, None, false)
}

/// `resume RUN` with this invocation's flags and the agent file `agent`
/// (the one a run or a failed resume was given), else `--config`'s, else
/// asked for; with `--prompt -` (the new turn asked for) when `new_turn`.
pub fn resume_with(
    g: &Invocation,
    run: &str,
    agent: Option<&std::path::Path>,
    new_turn: bool,
) -> Cmd {
    let mut c = cmd(g, &["resume", run]);
    match (agent, &g.config) {
        (Some(a), _) => c = c.arg("--agent").arg(a),
        (None, Some(_)) => {}
        (None, None) => c = c.needs(Need::Agent),
    }
    if new_turn {
        c = c.arg("--prompt").arg("-").needs(Need::Prompt);
    }
    c
}

/// This invocation's flags for the hints of a `run` or `resume` given the
/// agent file `agent`: when no flag chose the store, the agent file did,
/// so the hints name it with `--config` (`approve` and `answer` take no
/// `--agent`) and find the same store.
pub fn with_agent_store(g: &Invocation, agent: &std::path::Path) -> Invocation {
    let mut with_store = g.clone();
    if g.state_dir.is_none() && g.store.is_none() && g.config.is_none() {
        with_store.config = Some(agent.to_path_buf());
    }
    with_store
}

/// `answer RUN` for the one call a run waits on (the id left out): it
/// reads the answer likewise.
fn answer_run(g: &Invocation, run: &str) -> Cmd {
    cmd(g, &["answer", run]).needs(Need::Answer)
}

/// A command in running text: in backticks, what it still needs after it.
pub fn ticked(c: &Cmd) -> String {
    match c.supply.as_slice() {
        [] => format!("`{c}`"),
        needs => format!(
            "`{c}` ({})",
            needs
                .iter()
                .map(|n| n.says())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn global(args: &[&str]) -> Invocation {
        let mut all = vec!["fisk-admin"];
        all.extend_from_slice(args);
        all.push("info");
        crate::cli::Cli::parse_from(all).global.resolve()
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
                "`fisk-admin stream create S --subject`",
            ),
            (Remedy::CheckStream, "`fisk-admin stream check S`"),
            (
                Remedy::Answer,
                "`fisk-admin answer r-1` (it reads the answer from standard input",
            ),
            (Remedy::Approve, "`fisk-admin approve r-1`"),
            (Remedy::Unhold, "the same command with --force"),
            (
                Remedy::NewTurn,
                "`fisk-admin resume r-1 --prompt -` (it reads the new user turn",
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

    #[test]
    fn a_server_url_is_printed_without_its_password_or_token() {
        let g = global(&["--server", "nats://ops:hunter2@10.0.0.1:4222,tls://t0k@h2"]);
        let c = cmd(&g, &["ls"]);
        let line = c.step("", "next");
        assert!(!line.contains("hunter2") && !line.contains("t0k"), "{line}");
        assert_eq!(
            c.to_string(),
            "fisk-admin --server nats://10.0.0.1:4222,tls://h2 --user ops ls"
        );
        assert_eq!(c.supply, vec![Need::Password]);
        // A token alone in the URL.
        let g = global(&["--server", "nats://s3cret@host"]);
        let c = cmd(&g, &["ls"]);
        assert_eq!(c.to_string(), "fisk-admin --server nats://host ls");
        assert_eq!(c.supply, vec![Need::Token]);
        // A file that holds the secret is named; it is not the secret.
        let g = global(&["--server", "nats://host", "--password-file", "/run/pw"]);
        assert_eq!(
            cmd(&g, &["ls"]).to_string(),
            "fisk-admin --server nats://host --password-file /run/pw ls"
        );
        // JSON: argv words and what is still needed.
        let v = serde_json::to_value(answer(&global(&[]), "r1", "t1")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"argv": ["fisk-admin", "answer", "r1", "t1"], "supply": ["answer"]})
        );
    }
}
