//! `approve RUN TOOL_USE_ID` and `approve RUN --tool <tool>`: approve a gated
//! call once (`call_approval`) or a tool for the rest of the run
//! (`decision`), both written `"optional": true` (SPEC 6), so the resume
//! dispatches the call without asking again. A one-shot approval is spent
//! by the run's next terminal (SPEC 3 rule 9); a standing one is dropped
//! when the tools change (SPEC 4).
//!
//! As `answer`: load and check first with no lock, so every refusal leaves
//! the journal exactly as it was; then take the writer's place, make sure
//! nothing was appended in between, and append exactly one record.

use crate::cli::ApproveArgs;
use crate::error::{CmdResult, Failure};
use crate::hint;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, Format};
use journal::fold::{FoldOptions, RunState};
use journal::record::{Block, CallApproval, Decision, Kind, Payload, Reason};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// The longest tool name `--tool` takes.
const MAX_TOOL: usize = 256;

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
    let journal = store.read(&a.run)?;
    let st = store.fold(&a.run, &journal, FoldOptions::default())?;
    let (payload, tool, id) = match (&a.tool_use_id, &a.tool) {
        (Some(id), None) => {
            let tool = check_call(g, &st, &a.run, id)?;
            let p = Payload::CallApproval(CallApproval {
                tool_use_id: id.clone(),
                tool_name: tool.clone(),
                ..CallApproval::default()
            });
            (p, tool, Some(id.clone()))
        }
        (None, Some(tool)) => {
            check_tool(&st, &a.run, tool)?;
            let p = Payload::Decision(Decision {
                tool: tool.clone(),
                ..Decision::default()
            });
            (p, tool.clone(), None)
        }
        _ => {
            return Err(Failure::new(
                "give the call to approve (TOOL_USE_ID) or a tool to approve for the rest of the run (--tool and its name), not both",
            ))
        }
    };
    // A run a writer holds is live, which says more than "not suspended".
    store.check_writable(&a.run)?;
    check_suspended(&journal, &st, &a.run, a.tool.as_deref())?;
    let (mut app, generation) = super::answer::writer_of(&store, &a.run, &journal, &st)?;
    let kind = match payload {
        Payload::CallApproval(_) => "call_approval",
        _ => "decision",
    };
    let record = app.append_next(payload, generation)?;
    drop(app);
    let bytes = record.encode().unwrap_or_default();
    let approved = Approved {
        seq: record.seq,
        kind,
        tool,
        tool_use_id: id,
        record: serde_json::from_slice(&bytes).map_err(|e| Failure::new(e.to_string()))?,
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

/// The refusals for a one-shot approval; the call's tool when it is one
/// that waits.
fn check_call(g: &Invocation, st: &RunState, run: &str, id: &str) -> Result<String, Failure> {
    let shown = sanitize(id, false);
    let committed = st.messages.iter().any(|m| {
        m.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult(r) if r.tool_use_id == id))
    });
    let Some(p) = &st.pending else {
        let why = match committed {
            true => "it is already answered",
            false => "the run has no pending batch",
        };
        return Err(Failure::refused(format!(
            "run {run}: tool call {shown} waits on nothing: {why}; nothing was written"
        )));
    };
    let Some(call) = p.assistant.blocks().iter().find_map(|b| match b {
        Block::ToolUse(c) if c.id == id => Some(c),
        _ => None,
    }) else {
        let pending: Vec<String> = p
            .assistant
            .tool_use_ids()
            .map(|t| sanitize(t, false).into_owned())
            .collect();
        return Err(Failure::refused(format!(
            "run {run}: {shown} is not a call of the pending batch ({}); nothing was written",
            pending.join(", ")
        )));
    };
    if committed || p.answered.contains(id) {
        return Err(Failure::refused(format!(
            "run {run}: tool call {shown} is already answered; nothing was written"
        )));
    }
    if p.deferred.iter().any(|d| d.tool_use_id == id) {
        return Err(Failure::refused(format!(
            "run {run}: tool call {shown} was deferred: it waits on an answer, not an approval; nothing was written"
        ))
        .help(hint::advice(
            g,
            journal::Remedy::Answer,
            Some(run),
            None,
            &[id.to_owned()],
        )));
    }
    if st.call_approvals.iter().any(|c| c.tool_use_id == id) {
        return Err(Failure::refused(format!(
            "run {run}: tool call {shown} is already approved; nothing was written"
        )));
    }
    if st.approvals.contains(&call.name) {
        return Err(Failure::refused(format!(
            "run {run}: tool {} is approved for the whole run already; nothing was written",
            sanitize(&call.name, false)
        )));
    }
    Ok(call.name.clone())
}

/// CLI.md: an approval is for a suspended run. Taken when the run's last
/// terminal is `suspended` and only what is written while a run rests
/// follows it (answers and approvals by hand, the agent's
/// `memory_revisions`, skipped optional records); or when the run stopped
/// in the middle of a batch with no terminal after it (killed, or a resume
/// killed after its claim) and the batch still has a call to approve (of
/// `tool`, for a standing approval): the runner's resume refuses such a
/// run until its gated calls are approved, so refusing here would leave
/// it stuck. Refused otherwise, a completed or failed run above all: an
/// approval would reopen it (SPEC 3 rule 13).
fn check_suspended(
    journal: &journal::store::Journal,
    st: &RunState,
    run: &str,
    tool: Option<&str>,
) -> Result<(), Failure> {
    let records: Vec<&journal::record::Record> = journal.records().collect();
    let last = records
        .iter()
        .rposition(|r| r.kind() == Some(Kind::Terminal));
    let rests = |r: &&journal::record::Record| {
        matches!(
            r.kind(),
            Some(Kind::ToolResult | Kind::CallApproval | Kind::Decision | Kind::MemoryRevisions)
        ) || (r.kind().is_none() && r.optional)
    };
    let after = |i: usize| records.get(i + 1..).unwrap_or_default();
    let nothing = "; nothing was written";
    let open = match last {
        Some(i) if after(i).iter().all(rests) => {
            let reason = match records.get(i).and_then(|r| r.payload.as_ref()) {
                Some(Payload::Terminal(t)) => t.reason(),
                _ => Reason::parse(""),
            };
            if reason == Reason::Suspended {
                return Ok(());
            }
            return Err(Failure::refused(format!(
                "run {run} is not suspended: it ended {}; an approval is for a run suspended on a gated call, and would reopen this one{nothing}",
                sanitize(reason.as_str(), false)
            )));
        }
        Some(i) => match after(i).iter().find(|r| !rests(r)) {
            Some(r) => format!(
                "records follow its last terminal (seq {}, {})",
                r.seq,
                r.kind().map_or("a record", |k| k.key())
            ),
            None => "records follow its last terminal".to_owned(),
        },
        None => "it has no terminal record".to_owned(),
    };
    // Open: stopped mid-batch, or not waiting on an approval at all.
    let waits = st.pending.as_ref().is_some_and(|p| {
        p.assistant.blocks().iter().any(|b| match b {
            Block::ToolUse(c) => {
                !p.answered.contains(&c.id)
                    && !p.deferred.iter().any(|d| d.tool_use_id == c.id)
                    && tool.is_none_or(|t| t == c.name)
            }
            _ => false,
        })
    });
    if waits {
        return Ok(());
    }
    let of = match tool {
        Some(t) => format!(" of tool {}", sanitize(t, false)),
        None => String::new(),
    };
    Err(Failure::refused(format!(
        "run {run} is not suspended: {open}, and no call{of} waits unanswered in a pending batch (it is running, or it stopped with nothing to approve){nothing}"
    )))
}

/// The refusals for a standing approval.
fn check_tool(st: &RunState, run: &str, tool: &str) -> Result<(), Failure> {
    if tool.is_empty() || tool.len() > MAX_TOOL || tool.chars().any(char::is_control) {
        return Err(Failure::refused(format!(
            "--tool {:?} is not a tool name (1 to {MAX_TOOL} bytes, no control characters); nothing was written",
            sanitize(tool, false)
        )));
    }
    if st.approvals.iter().any(|t| t == tool) {
        return Err(Failure::refused(format!(
            "run {run}: tool {} is approved for the whole run already; nothing was written",
            sanitize(tool, false)
        )));
    }
    Ok(())
}
