//! `answer RUN TOOL_USE_ID`: answer a deferred call by hand (SPEC 6).
//!
//! Load and check first, with no lock taken, so every refusal leaves the
//! journal exactly as it was; then take the run lock, make sure nothing was
//! appended in between, and append exactly one ordinary `tool_result`.

use crate::cli::AnswerArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, truncate, Format};
use journal::fold::{FoldOptions, RunState};
use journal::record::{Block, Payload, ToolResult, ToolResultBlock};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::process::ExitCode;

/// The largest answer accepted (SPEC 6).
pub const MAX_CONTENT: usize = 256 * 1024;

pub fn run(g: &Invocation, a: AnswerArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    // A file is read before the store is opened: a missing one is the
    // operator's typo, said before anything else.
    let given = given_content(&a)?;
    let store = open_store(&crate::open::unheld(g, a.force))?;
    let journal = store.read(&a.run)?;
    let st = store.fold(&a.run, &journal, FoldOptions::default())?;
    let tool_use_id = match a.tool_use_id.clone() {
        Some(id) => id,
        None => only_waiting(g, &st, &a.run)?,
    };
    check(g, &st, &a.run, &tool_use_id)?;
    // SPEC 6: the answer is counted under the provider that took the call,
    // so it carries the deferred record's kind and dispatched (and, for a
    // dispatched remote call, the derived `remote` older readers count).
    let deferred = st
        .pending
        .as_ref()
        .and_then(|p| p.deferred.iter().find(|d| d.tool_use_id == tool_use_id));
    // Asked for only once every check passed: nobody types an answer the
    // run would refuse.
    let content = match given {
        Some(c) => c,
        None => ask_content(&a, &tool_use_id, deferred)?,
    };
    let (mut app, generation) = writer_of(&store, &a.run, &journal, &st)?;
    let (kind, dispatched) =
        deferred.map_or((String::new(), false), |d| (d.kind.clone(), d.dispatched));
    let record = app.append_next(
        Payload::ToolResult(ToolResult {
            tool_use_id: tool_use_id.clone(),
            result: ToolResultBlock {
                tool_use_id: tool_use_id.clone(),
                content,
                is_error: a.is_error,
                ..ToolResultBlock::default()
            },
            remote: kind == "remote" && dispatched,
            kind,
            dispatched,
            ..ToolResult::default()
        }),
        generation,
    )?;
    drop(app);
    let bytes = record.encode().unwrap_or_default();
    let answered = Answered {
        run: &a.run,
        seq: record.seq,
        record: serde_json::from_slice(&bytes).map_err(|e| Failure::new(e.to_string()))?,
        resume: crate::hint::resume(g, &a.run),
        tool_use_id: &tool_use_id,
        line: String::from_utf8_lossy(&bytes).into_owned(),
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&answered)?)?,
        Format::Text => render(out, &answered)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Become the run's writer for a hand-written record (`answer`,
/// `approve`), after every check passed: refused while a writer holds it
/// (file: its lock; JetStream: SPEC 8's hold), for a version no agent
/// writes, or when the journal grew since it was read and checked.
pub fn writer_of(
    store: &journal::store::Store,
    run: &str,
    journal: &journal::store::Journal,
    st: &RunState,
) -> Result<
    (
        Box<dyn journal::store::Appender>,
        journal::record::Generation,
    ),
    Failure,
> {
    store.check_writable(run)?;
    let generation = st.generation.ok_or_else(|| {
        Failure::refused(format!(
            "run {run}: format version {} is not one this tool writes to; nothing was written",
            st.version
        ))
    })?;
    let app = store.open_appender(run)?;
    if app.last_seq() != journal.last_seq() {
        return Err(Failure::refused(format!(
            "run {run}: the journal changed while it was being checked (seq {} then {}); nothing was written",
            journal.last_seq(),
            app.last_seq()
        ))
        .help("run the command again"));
    }
    // Under the lock: the generation too, since `upgrade` rewrites a
    // journal to version 1 keeping its seqs (issue 24.6).
    let now = store.summary(run).version;
    if now != Some(generation.version()) {
        return Err(Failure::refused(format!(
            "run {run}: the journal changed while it was being checked (format version {} then {}); nothing was written",
            generation.version(),
            now.map_or_else(|| "unreadable".to_owned(), |v| v.to_string())
        ))
        .help("run the command again"));
    }
    Ok((app, generation))
}

/// The one deferred call the run waits on, for `answer RUN` without an id;
/// with none or several waiting, the id must be given.
fn only_waiting(g: &Invocation, st: &RunState, run: &str) -> Result<String, Failure> {
    let open = st
        .pending
        .as_ref()
        .map_or(&[][..], |p| &p.open_deferrals[..]);
    match open {
        [one] => Ok(one.tool_use_id.clone()),
        [] => Err(Failure::refused(format!(
            "run {run} waits on no deferred call; nothing was written"
        ))),
        several => Err(Failure::refused(format!(
            "run {run} waits on {} deferred calls ({}); name the one to answer",
            several.len(),
            several
                .iter()
                .map(|d| sanitize(&d.tool_use_id, false).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .help(crate::hint::advice(
            g,
            journal::Remedy::Answer,
            Some(run),
            None,
            &several
                .iter()
                .map(|d| d.tool_use_id.clone())
                .collect::<Vec<_>>(),
        ))),
    }
}

/// The answer written (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Answered<'a> {
    run: &'a str,
    seq: u64,
    /// The record as stored.
    record: serde_json::Value,
    /// The command that continues the run.
    resume: crate::hint::Cmd,
    #[serde(skip)]
    tool_use_id: &'a str,
    /// The record's line, byte for byte as stored (`record` is the same
    /// record as a value, its keys sorted).
    line: String,
}

fn render(out: &mut dyn Write, a: &Answered) -> io::Result<()> {
    writeln!(
        out,
        "answered {} in run {} (seq {}):",
        sanitize(a.tool_use_id, false),
        a.run,
        a.seq
    )?;
    writeln!(out, "  {}", truncate(&sanitize(&a.line, false), 400))?;
    writeln!(out, "resume the run with: {}", a.resume.line())
}

/// The refusals of SPEC 6, each with its own message.
fn check(g: &Invocation, st: &RunState, run: &str, id: &str) -> Result<(), Failure> {
    let shown = sanitize(id, false);
    let committed = st.messages.iter().any(|m| {
        m.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult(r) if r.tool_use_id == id))
    });
    let pending_answered = st.pending.as_ref().is_some_and(|p| p.answered.contains(id));
    if committed || pending_answered {
        return Err(Failure::refused(format!(
            "run {run}: tool call {shown} is already answered; nothing was written"
        ))
        .help(format!(
            "`{}` shows the answer; {} continues the run",
            crate::hint::command(g, &["show", run, "--transcript"]),
            crate::hint::ticked(&crate::hint::resume(g, run))
        )));
    }
    let Some(p) = &st.pending else {
        return Err(Failure::refused(format!(
            "run {run} has no pending batch: no tool call waits for an answer, so {shown} is not deferred"
        ))
        .help(format!(
            "`{}` shows where the run stands",
            crate::hint::command(g, &["show", run])
        )));
    };
    if !p.deferred.iter().any(|d| d.tool_use_id == id) {
        let waiting: Vec<String> = p
            .open_deferrals
            .iter()
            .map(|d| sanitize(&d.tool_use_id, false).into_owned())
            .collect();
        let what = if p.assistant.tool_use_ids().any(|t| t == id) {
            "is in the pending batch but was not deferred (resume runs it again)"
        } else {
            "is not a call of the pending batch"
        };
        return Err(Failure::refused(format!(
            "run {run}: tool call {shown} is not deferred: it {what}; only deferred calls are answered by hand"
        ))
        .help(if waiting.is_empty() {
            "the run waits on no deferred call".to_owned()
        } else {
            format!("the run waits on: {}", waiting.join(", "))
        }));
    }
    Ok(())
}

/// The answer as given on the command line: `--content` exactly, or
/// `--content-file` (one trailing newline dropped, as an editor ends a
/// file with one); `None` when it is to be read or asked for.
fn given_content(a: &AnswerArgs) -> Result<Option<String>, Failure> {
    if let Some(c) = &a.content {
        if c.len() > MAX_CONTENT {
            return Err(too_big());
        }
        return Ok(Some(c.clone()));
    }
    let Some(p) = &a.content_file else {
        return Ok(None);
    };
    let name = crate::hint::quote_path(p);
    let file = std::fs::File::open(p)
        .map_err(|e| Failure::new(format!("reading the answer from {name}: {e}")))?;
    let mut buf = Vec::new();
    file.take(MAX_CONTENT as u64 + 2)
        .read_to_end(&mut buf)
        .map_err(|e| Failure::new(format!("reading the answer from {name}: {e}")))?;
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    // An empty file is far more often a mistake than an answer, and an
    // answer cannot be taken back.
    if buf.is_empty() {
        return Err(Failure::refused(format!(
            "the answer read from {name} is empty; nothing was written"
        ))
        .help("to answer with empty content on purpose, pass --content ''"));
    }
    if buf.len() > MAX_CONTENT {
        return Err(too_big());
    }
    String::from_utf8(buf).map(Some).map_err(|e| {
        Failure::refused(format!(
            "the answer in {name} is not UTF-8 text (byte {}); nothing was written",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The answer from standard input, the terminal or the editor, with the
/// call it answers shown first where a person reads it.
fn ask_content(
    a: &AnswerArgs,
    id: &str,
    deferred: Option<&journal::record::Deferred>,
) -> Result<String, Failure> {
    let mut context = vec![format!(
        "Answering {} in run {}",
        sanitize(id, false),
        a.run
    )];
    if let Some(d) = deferred {
        context.push(format!("  tool: {}", sanitize(&d.tool_name, false)));
        if !d.note.is_empty() {
            context.push(format!("  note: {}", sanitize(&d.note, false)));
        }
        if !d.handle.is_empty() {
            context.push(format!("  handle: {}", sanitize(&d.handle, false)));
        }
    }
    let asked = crate::ask::Asked {
        what: "the answer",
        context: &context,
        max: MAX_CONTENT,
    };
    crate::ask::text(&asked, a.edit)
        .map(|(text, _)| text)
        .map_err(|f| match f.help {
            Some(_) => f,
            None => f.help("to answer with empty content on purpose, pass --content ''"),
        })
}

fn too_big() -> Failure {
    Failure::refused(format!(
        "the answer is larger than {MAX_CONTENT} bytes (256 KiB); nothing was written"
    ))
    .help("shorten it, or store it elsewhere and answer with a reference to it")
}

#[cfg(test)]
mod tests {
    use super::*;
    use journal::store::file::FileStore;
    use journal::store::Store;
    use std::os::unix::fs::PermissionsExt;

    /// The interleaving of issue 24.6, made deterministic: the run is read
    /// and checked as version 3, `upgrade` then makes it version 1 keeping
    /// its seqs, and only then does the writer take the lock. It must see
    /// the generation changed and refuse, not append a version-3 record.
    #[test]
    fn a_writer_refuses_a_journal_upgraded_since_it_was_checked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.path().join("g-deferral-waiting.json");
        std::fs::write(
            &path,
            include_bytes!("../../testdata/agent-journals/v3/g-deferral-waiting.json"),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let store = Store::File(FileStore::new(dir.path()));
        let run = "g-deferral-waiting";
        let journal = store.read(run).unwrap();
        let st = store.fold(run, &journal, FoldOptions::default()).unwrap();
        assert_eq!(st.version, 3);
        store
            .upgrade(run, false, std::time::Duration::ZERO, false)
            .unwrap();
        let upgraded = std::fs::read(&path).unwrap();
        let Err(e) = writer_of(&store, run, &journal, &st) else {
            panic!("a writer of version 3 was given the upgraded journal");
        };
        assert!(e.message.contains("format version 3 then 1"), "{e:?}");
        assert_eq!(e.exit, 1);
        assert_eq!(std::fs::read(&path).unwrap(), upgraded);
        // Read again, it writes as version 1.
        let journal = store.read(run).unwrap();
        let st = store.fold(run, &journal, FoldOptions::default()).unwrap();
        let (_, generation) = writer_of(&store, run, &journal, &st).unwrap();
        assert_eq!(generation.version(), 1);
    }
}
