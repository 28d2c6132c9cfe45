//! Completion on the command line (clap_complete's dynamic completion):
//! `show <TAB>` offers the runs of the store the words typed so far
//! select, chosen as the tool chooses it (`--state-dir DIR`, `--store
//! URI`, `--config` or `resume --agent` with `--root-dir`,
//! `FISK_ADMIN_STORE`, else the default directory), on either backend
//! (issue 39, c-33: a JetStream store is listed through the connection the
//! words name, `--server`, `--context` and the rest, within a bound); and
//! `answer RUN <TAB>` and `approve RUN <TAB>` offer the calls of that run
//! that wait on an answer, or on an approval.
//!
//! A completion must answer at once: whatever a store cannot say within
//! [`BOUND`] (a server that does not answer) completes to nothing.

use clap_complete::engine::CompletionCandidate;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

/// The longest a completion waits on a store.
const BOUND: Duration = Duration::from_secs(2);

/// The words being completed (after the `--` clap_complete's protocol
/// puts before them).
fn words() -> Vec<OsString> {
    let args: Vec<OsString> = std::env::args_os().collect();
    match args.iter().position(|a| a == "--") {
        Some(i) => args.get(i + 1..).unwrap_or_default().to_vec(),
        None => args,
    }
}

/// The value of flag `name` (`--name V` or `--name=V`), the last given.
fn flag(words: &[OsString], name: &str) -> Option<OsString> {
    let mut found = None;
    for (i, a) in words.iter().enumerate() {
        let text = a.to_string_lossy();
        match text.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            Some(v) => found = Some(v.into()),
            None if text == name => found = words.get(i + 1).cloned(),
            None => {}
        }
    }
    found
}

/// The invocation the words name: the store flags and the connection
/// flags, the environment as the tool reads it.
fn invocation(words: &[OsString]) -> crate::invocation::Invocation {
    let text = |name: &str| flag(words, name).and_then(|v| v.into_string().ok());
    let path = |name: &str| flag(words, name).map(PathBuf::from);
    let mut g = crate::invocation::Invocation::typed(
        path("--state-dir"),
        text("--store"),
        path("--config"),
        path("--root-dir"),
    );
    g.context = text("--context");
    g.server = text("--server");
    g.creds = path("--creds");
    g.user = text("--user");
    g.token_file = path("--token-file");
    g.password_file = path("--password-file");
    g
}

/// What `f` gives from the store the words name, within [`BOUND`]; empty
/// when the store cannot be opened or does not answer in time.
fn from_store<T: Send + 'static>(
    f: impl FnOnce(&journal::store::Store) -> Vec<T> + Send + 'static,
) -> Vec<T> {
    let words = words();
    let agent = flag(&words, "--agent").map(PathBuf::from);
    let g = invocation(&words);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let opened = match agent {
            Some(a) => crate::open::agent_store(&g, &a, true),
            None => crate::open::open_store(&g),
        };
        let _ = tx.send(opened.map(|s| f(&s)).unwrap_or_default());
    });
    rx.recv_timeout(BOUND).unwrap_or_default()
}

/// The run ids of the store that start with what is typed.
pub fn run_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy().into_owned();
    let mut ids: Vec<String> = from_store(move |store| {
        store
            .runs()
            .unwrap_or_default()
            .into_iter()
            .filter(|id| id.starts_with(&typed))
            .collect()
    });
    ids.sort();
    ids.into_iter().map(CompletionCandidate::new).collect()
}

/// The run a call id is completed for: the first word after the
/// subcommand that is not a flag (or a flag's value).
fn run_named(words: &[OsString], sub: &str) -> Option<String> {
    let at = words.iter().position(|w| w == sub)?;
    let mut rest = words.get(at + 1..)?.iter().map(|w| w.to_string_lossy());
    while let Some(w) = rest.next() {
        if w.starts_with("--") && !w.contains('=') {
            // A flag that takes a value takes the next word.
            if matches!(w.as_ref(), "--content" | "--content-file" | "--tool") {
                rest.next();
            }
            continue;
        }
        if w.starts_with('-') {
            continue;
        }
        return Some(w.into_owned());
    }
    None
}

/// `answer RUN <TAB>`: the calls of RUN waiting on an answer.
pub fn answer_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    call_ids(current, "answer", journal::ops::inbox::Waits::Answer)
}

/// `approve RUN <TAB>`: the calls of RUN waiting on an approval.
pub fn approve_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    call_ids(current, "approve", journal::ops::inbox::Waits::Approval)
}

fn call_ids(
    current: &OsStr,
    sub: &str,
    waits: journal::ops::inbox::Waits,
) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy().into_owned();
    let Some(run) = run_named(&words(), sub) else {
        return Vec::new();
    };
    let found: Vec<(String, String)> = from_store(move |store| {
        let summary = store.summary(&run);
        journal::ops::inbox::inbox(store, std::slice::from_ref(&summary))
            .items
            .into_iter()
            .filter(|i| i.waits == waits && i.call.starts_with(&typed))
            .map(|i| (i.call, i.tool))
            .collect()
    });
    found
        .into_iter()
        .map(|(call, tool)| CompletionCandidate::new(call).help(Some(tool.into())))
        .collect()
}
