//! `approve RUN TOOL_USE_ID` and `approve RUN --tool <tool>`: approve a gated
//! call once (`call_approval`) or a tool for the rest of the run
//! (`decision`), both written `"optional": true` (SPEC 6), so the resume
//! dispatches the call without asking again. A one-shot approval is spent
//! by the run's next terminal (SPEC 3 rule 9); a standing one is dropped
//! when the tools change (SPEC 4).
//!
//! The write rules are the library's (`journal::ops::approve`): it checks
//! with no lock, so every refusal leaves the journal exactly as it was,
//! then writes exactly one record. This command renders it.

use crate::cli::ApproveArgs;
use crate::error::{CmdResult, Failure};
use crate::hint;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, Format};
use journal::ops::approve::{approve, Request, Target};
use journal::ops::Why;
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// The approval written (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Approved {
    run: String,
    seq: u64,
    /// `call_approval` or `decision`.
    kind: &'static str,
    tool: String,
    tool_use_id: Option<String>,
    /// The record as stored.
    record: serde_json::Value,
    /// What continues the run.
    next: hint::Cmd,
}

pub fn run(g: &Invocation, a: ApproveArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(&crate::open::unheld(g, a.force))?;
    let target = match (&a.tool_use_id, &a.tool) {
        (Some(id), None) => Target::Call(id),
        (None, Some(tool)) => Target::Tool(tool),
        _ => {
            return Err(Failure::new(
                "give the call to approve (TOOL_USE_ID) or a tool to approve for the rest of the run (--tool and its name), not both",
            ))
        }
    };
    let done = approve(
        &store,
        &Request {
            run: &a.run,
            target,
        },
    )
    .map_err(|e| match &e {
        // The library does not know its argument as `--tool`.
        journal::Error::Op(r) if matches!(r.why, Why::NotAToolName { .. }) => Failure {
            message: format!("--tool {e}"),
            ..Failure::from(e)
        },
        _ => Failure::from(e),
    })?;
    let approved = Approved {
        seq: done.written.seq,
        kind: match done.call {
            Some(_) => "call_approval",
            None => "decision",
        },
        tool: done.tool,
        tool_use_id: done.call,
        record: serde_json::from_slice(&done.written.line)
            .map_err(|e| Failure::new(e.to_string()))?,
        next: hint::resume(g, &a.run),
        run: a.run,
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&approved)?)?,
        Format::Text => render(out, &approved)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut dyn Write, a: &Approved) -> io::Result<()> {
    match &a.tool_use_id {
        Some(id) => writeln!(
            out,
            "approved {} ({}) once in run {} (seq {})",
            sanitize(id, false),
            sanitize(&a.tool, false),
            a.run,
            a.seq
        )?,
        None => writeln!(
            out,
            "approved tool {} for the rest of run {} (seq {})",
            sanitize(&a.tool, false),
            a.run,
            a.seq
        )?,
    }
    writeln!(out, "next: {}", a.next.line())
}
