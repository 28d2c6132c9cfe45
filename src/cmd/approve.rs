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
//!
//! `approve RUN... --all-pending` approves once every call of those runs
//! that waits on an approval: listed, then asked for on a terminal
//! (`--yes` otherwise; `--dry-run` lists only), one record per call.

use crate::cli::ApproveArgs;
use crate::error::{CmdResult, Failure};
use crate::hint;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, Format};
use journal::ops::approve::{approve_all, pending, prepare, Request, Target};
use journal::ops::Why;
use journal::runner::Gated;
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
    if a.all_pending {
        return all_pending(g, a, out);
    }
    let style = g.style;
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let target = match (&a.tool_use_id, &a.tool) {
        (Some(id), None) => Target::Call(id),
        (None, Some(tool)) => Target::Tool(tool),
        _ => {
            return Err(Failure::new(
                "give the call to approve (TOOL_USE_ID) or a tool to approve for the rest of the run (--tool and its name), not both",
            ))
        }
    };
    let prepared = prepare(
        &store,
        &Request {
            run: &a.run,
            target,
        },
    )
    .map_err(|e| match &e {
        // The library does not know its argument as `--tool`.
        journal::Error::Refused(r) if matches!(r.why, Why::NotAToolName { .. }) => Failure {
            message: format!("--tool {e}"),
            ..Failure::from(e)
        },
        _ => Failure::from(e),
    })?;
    if a.write.dry_run {
        let what = match prepared.call() {
            Some(id) => format!(
                "approve {} ({}) once in run {}",
                sanitize(id, false),
                sanitize(prepared.tool(), false),
                a.run
            ),
            None => format!(
                "approve tool {} for the rest of run {}",
                sanitize(prepared.tool(), false),
                a.run
            ),
        };
        let details = serde_json::json!({"tool": prepared.tool(), "tool_use_id": prepared.call()});
        crate::output::would(out, style, &a.run, &what, details)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let done = prepared.commit()?;
    let approved = approved(g, &a.run, done)?;
    match style.format {
        Format::Json => json_pretty(out, &sorted(&approved)?)?,
        Format::Text => render(out, &approved)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The library's approval as printed.
fn approved(
    g: &Invocation,
    run: &str,
    done: journal::ops::approve::Approved,
) -> Result<Approved, Failure> {
    Ok(Approved {
        seq: done.written.seq,
        kind: match done.call {
            Some(_) => "call_approval",
            None => "decision",
        },
        tool: done.tool,
        tool_use_id: done.call,
        record: serde_json::from_slice(&done.written.line)
            .map_err(|e| Failure::new(e.to_string()))?,
        next: hint::resume(g, run),
        run: run.to_owned(),
    })
}

/// A call `--all-pending` approves (`--dry-run`'s JSON rows).
#[derive(Serialize)]
struct ToApprove {
    run: String,
    tool_use_id: String,
    tool: String,
}

/// `approve RUN... --all-pending`: every call of those runs that waits on
/// an approval, listed, asked for (`--yes` without a terminal), then
/// approved once each through the library, one `call_approval` per call.
/// Every run is looked at before anything is written; a run with nothing
/// to approve is said and skipped.
fn all_pending(g: &Invocation, a: ApproveArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let mut runs: Vec<String> = Vec::new();
    for r in std::iter::once(a.run).chain(a.tool_use_id).chain(a.more) {
        if !runs.contains(&r) {
            runs.push(r);
        }
    }
    let mut todo: Vec<(String, Vec<Gated>)> = Vec::new();
    for run in runs {
        journal::id::check(&run)?;
        match pending(&store, &run) {
            Ok(calls) => todo.push((run, calls)),
            Err(journal::Error::Refused(r)) if r.why == Why::NothingPending => {
                eprintln!("fisk-admin: {r}");
            }
            Err(e) => return Err(Failure::from(e)),
        }
    }
    let rows: Vec<ToApprove> = todo
        .iter()
        .flat_map(|(run, calls)| {
            calls.iter().map(move |c| ToApprove {
                run: run.clone(),
                tool_use_id: c.tool_use_id.clone(),
                tool: c.tool.clone(),
            })
        })
        .collect();
    if rows.is_empty() {
        return Err(Failure::refused(
            "no call of these runs waits on an approval; nothing was written",
        ));
    }
    let listed: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} ({}) in run {}",
                sanitize(&r.tool_use_id, false),
                sanitize(&r.tool, false),
                sanitize(&r.run, false)
            )
        })
        .collect();
    if a.write.dry_run {
        match style.format {
            Format::Json => json_pretty(out, &sorted(&rows)?)?,
            Format::Text => {
                for l in &listed {
                    writeln!(out, "would approve {l} once")?;
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !a.write.yes {
        confirm(&listed)?;
    }
    let mut done = Vec::new();
    let mut exit = 0;
    for (run, calls) in &todo {
        for result in approve_all(&store, run, calls) {
            match result {
                Ok(d) => done.push(approved(g, run, d)?),
                Err(e) => {
                    exit = exit.max(crate::error::exit_of(&e));
                    crate::error::say(&crate::error::describe(g, &e), None, style);
                }
            }
        }
    }
    match style.format {
        Format::Json => json_pretty(out, &sorted(&done)?)?,
        Format::Text => {
            for d in &done {
                render_one(out, d)?;
            }
            // One resume per run, after its approvals.
            let mut resumed: Vec<&str> = Vec::new();
            for d in &done {
                if !resumed.contains(&d.run.as_str()) {
                    resumed.push(&d.run);
                    writeln!(out, "{}", d.next.step("", "next"))?;
                }
            }
        }
    }
    Ok(ExitCode::from(exit))
}

/// Ask on the terminal; without one, refuse.
fn confirm(listed: &[String]) -> Result<(), Failure> {
    let mut lines = vec!["approve once:".to_owned()];
    lines.extend(listed.iter().map(|l| format!("  {l}")));
    crate::ask::confirm(
        &lines,
        &format!("approve {} call(s)?", listed.len()),
        &format!(
            "approve --all-pending would approve {} call(s) and there is no terminal to ask on; nothing was written",
            listed.len()
        ),
        "pass --yes to approve without asking (--dry-run lists them)",
        "nothing was written",
    )
}

fn render(out: &mut dyn Write, a: &Approved) -> io::Result<()> {
    render_one(out, a)?;
    writeln!(out, "{}", a.next.step("", "next"))
}

/// What was approved, in one line.
fn render_one(out: &mut dyn Write, a: &Approved) -> io::Result<()> {
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
    Ok(())
}
