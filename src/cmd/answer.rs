//! `answer RUN TOOL_USE_ID`: answer a deferred call by hand (SPEC 6).
//!
//! The write rules are the library's (`journal::ops::answer`): it checks
//! with no lock, then writes exactly one record. This command reads the
//! answer (given, piped, typed or edited: asked for only once every check
//! passed) and renders what was written.

use crate::cli::AnswerArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, truncate, Format};
use journal::ops::answer::{self, Call, Request, MAX_CONTENT};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, a: AnswerArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    // A file is read before the store is opened: a missing one is the
    // operator's typo, said before anything else.
    let given = given_content(&a)?;
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let prepared = answer::prepare(
        &store,
        &Request {
            run: &a.run,
            call: a.tool_use_id.as_deref(),
            is_error: a.is_error,
        },
    )?;
    if a.write.dry_run {
        let c = prepared.call();
        crate::output::would(
            out,
            style,
            &a.run,
            &format!(
                "answer {} ({}) in run {}",
                sanitize(&c.tool_use_id, false),
                sanitize(&c.tool, false),
                a.run
            ),
            serde_json::json!({"tool_use_id": c.tool_use_id, "tool": c.tool}),
        )?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    // Asked for only once every check passed: nobody types an answer the
    // run would refuse.
    let content = match given {
        Some(c) => c,
        None => ask_content(&a, prepared.call())?,
    };
    let tool_use_id = prepared.call().tool_use_id.clone();
    let written = prepared.commit(content)?;
    let answered = Answered {
        run: &a.run,
        seq: written.seq,
        record: serde_json::from_slice(&written.line).map_err(|e| Failure::new(e.to_string()))?,
        resume: crate::hint::resume(g, &a.run),
        tool_use_id: &tool_use_id,
        line: String::from_utf8_lossy(&written.line).into_owned(),
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&answered)?)?,
        Format::Text => render(out, &answered)?,
    }
    Ok(ExitCode::SUCCESS)
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
    writeln!(out, "{}", a.resume.step("", "resume the run with"))
}

/// The answer as given on the command line: `--content` exactly, or
/// `--content-file` (one trailing newline dropped, as an editor ends a
/// file with one); `None` when it is to be read or asked for.
fn given_content(a: &AnswerArgs) -> Result<Option<String>, Failure> {
    if let Some(c) = &a.content {
        answer::check_size(&a.run, c.len())?;
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
    answer::check_size(&a.run, buf.len())?;
    String::from_utf8(buf).map(Some).map_err(|e| {
        Failure::refused(format!(
            "the answer in {name} is not UTF-8 text (byte {}); nothing was written",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The answer from standard input, the terminal or the editor, with the
/// call it answers shown first where a person reads it.
fn ask_content(a: &AnswerArgs, call: &Call) -> Result<String, Failure> {
    let mut context = vec![
        format!(
            "Answering {} in run {}",
            sanitize(&call.tool_use_id, false),
            a.run
        ),
        format!("  tool: {}", sanitize(&call.tool, false)),
    ];
    if !call.note.is_empty() {
        context.push(format!("  note: {}", sanitize(&call.note, false)));
    }
    if !call.handle.is_empty() {
        context.push(format!("  handle: {}", sanitize(&call.handle, false)));
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
