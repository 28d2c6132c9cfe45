//! `approve`: a gated call approved once (`call_approval`) or a tool for
//! the rest of the run (`decision`), both written `"optional": true`
//! (SPEC 6), so the resume dispatches the call without asking again. A
//! one-shot approval is spent by the run's next terminal (SPEC 3 rule 9);
//! a standing one is dropped when the tools change (SPEC 4).

use super::{refuse, write_one, Op, Open, Seen, Why, Written, MAX_TOOL};
use crate::fold::{CallState, FoldOptions, Gated, RunState};
use crate::record::{CallApproval, Decision, Kind, Payload, Reason, Record};
use crate::state::{permit, Ask, State};
use crate::store::{Journal, Store};
use crate::Result;

/// What to approve.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// One call of the pending batch, once.
    Call(&'a str),
    /// A tool, for the rest of the run.
    Tool(&'a str),
}

#[derive(Debug, Clone, Copy)]
/// What to approve, in which run.
pub struct Request<'a> {
    /// The run's id.
    pub run: &'a str,
    /// The call or tool to approve.
    pub target: Target<'a>,
}

/// The approval written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// The record written.
    pub written: Written,
    /// The approved call's tool, or the tool approved.
    pub tool: String,
    /// The call approved once; `None` for a standing approval.
    pub call: Option<String>,
}

/// An approval checked, not yet written: what a dry run shows. Pure
/// data: [`Prepared::commit`] writes it on the blocking store,
/// [`crate::ops::asynch::approve`] on the async one.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    seen: Seen,
    payload: Payload,
    tool: String,
    call: Option<String>,
}

impl Checked {
    /// The approved call's tool, or the tool approved.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The call approved once; `None` for a standing approval.
    pub fn call(&self) -> Option<&str> {
        self.call.as_deref()
    }

    /// What the checks saw of the run.
    pub fn seen(&self) -> &Seen {
        &self.seen
    }

    /// The record to write.
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// What was written, as [`Approved`].
    pub(crate) fn approved(self, written: Written) -> Approved {
        Approved {
            written,
            tool: self.tool,
            call: self.call,
        }
    }
}

/// An approval checked on the blocking store, not yet written.
pub struct Prepared<'s> {
    store: &'s Store,
    checked: Checked,
}

impl Prepared<'_> {
    /// The approved call's tool, or the tool approved.
    pub fn tool(&self) -> &str {
        self.checked.tool()
    }

    /// The call approved once; `None` for a standing approval.
    pub fn call(&self) -> Option<&str> {
        self.checked.call()
    }

    /// Become the writer, make sure nothing changed since [`prepare`],
    /// and append the approval: exactly one record.
    pub fn commit(self) -> Result<Approved> {
        let c = self.checked;
        let written = write_one(Op::Approve, self.store, &c.seen, c.payload.clone())?;
        Ok(c.approved(written))
    }
}

/// Every check of an approval on the run as read (`journal`, and `st`
/// folded from it) and where it stands (`state`): pure, no store, so that
/// either shape of store asks the same. What is wrong with the call or
/// tool named says more than the run's state; then the state; then that
/// the run is at its gate.
pub fn check(journal: &Journal, st: &RunState, state: &State, req: &Request) -> Result<Checked> {
    let run = req.run;
    let (payload, tool, call, of_tool) = match req.target {
        Target::Call(id) => {
            let tool = check_call(st, run, id)?;
            let p = Payload::CallApproval(CallApproval {
                tool_use_id: id.to_owned(),
                tool_name: tool.clone(),
                ..CallApproval::default()
            });
            (p, tool, Some(id.to_owned()), None)
        }
        Target::Tool(tool) => {
            check_tool(st, run, tool)?;
            let p = Payload::Decision(Decision {
                tool: tool.to_owned(),
                ..Decision::default()
            });
            (p, tool.to_owned(), None, Some(tool))
        }
    };
    permit(Op::Approve, run, state, Ask::NAMED)?;
    check_suspended(journal, st, run, of_tool)?;
    Ok(Checked {
        seen: Seen::of(Op::Approve, run, journal, st)?,
        payload,
        tool,
        call,
    })
}

/// Load the run and make every check of the approval, with no lock taken.
pub fn prepare<'s>(store: &'s Store, req: &Request) -> Result<Prepared<'s>> {
    let run = req.run;
    let journal = store.read(run)?;
    let st = store.fold(run, &journal, FoldOptions::default())?;
    let state = store.state_of(run, &journal, &st)?;
    Ok(Prepared {
        store,
        checked: check(&journal, &st, &state, req)?,
    })
}

/// Check the approval with no lock taken, then become the writer, make
/// sure nothing changed, and append it.
pub fn approve(store: &Store, req: &Request) -> Result<Approved> {
    prepare(store, req)?.commit()
}

/// The calls of `run` that wait on an approval (the fold's
/// [`RunState::needs_approval`] that [`RunState::call`] still reads as
/// waiting), in the pending batch's order: what `approve --all-pending`
/// lists before it asks. Refused (`Why::NothingPending`) when there is
/// none.
pub fn pending(store: &Store, run: &str) -> Result<Vec<Gated>> {
    let journal = store.read(run)?;
    let st = store.fold(run, &journal, FoldOptions::default())?;
    let calls: Vec<Gated> = st
        .needs_approval
        .iter()
        .filter(|g| matches!(st.call(&g.tool_use_id), CallState::AwaitsApproval { .. }))
        .cloned()
        .collect();
    if calls.is_empty() {
        return Err(refuse(Op::Approve, run, Why::NothingPending));
    }
    Ok(calls)
}

/// Approve each of `calls` of `run` once (what [`pending`] listed and the
/// operator agreed to, not whatever waits by now): one `call_approval`
/// each, through [`approve`], so each is checked and written on its own;
/// one outcome per call, in order.
pub fn approve_all(store: &Store, run: &str, calls: &[Gated]) -> Vec<Result<Approved>> {
    calls
        .iter()
        .map(|g| {
            approve(
                store,
                &Request {
                    run,
                    target: Target::Call(&g.tool_use_id),
                },
            )
        })
        .collect()
}

/// The refusals for a one-shot approval; the call's tool when it is one
/// that waits.
fn check_call(st: &RunState, run: &str, id: &str) -> Result<String> {
    let call = id.to_owned();
    let why = match st.call(id) {
        CallState::NoBatch { answered } => Why::WaitsOnNothing { call, answered },
        CallState::NotInBatch { .. }
        | CallState::AwaitsAnswer {
            in_batch: false, ..
        } => Why::NotInBatch {
            call,
            batch: st.pending.as_ref().map_or_else(Vec::new, |p| {
                p.assistant.tool_use_ids().map(str::to_owned).collect()
            }),
        },
        CallState::Answered { .. } => Why::AlreadyAnswered { call },
        CallState::AwaitsAnswer { .. } => Why::Deferred { call },
        CallState::Approved {
            standing: false, ..
        } => Why::AlreadyApproved { call },
        CallState::Approved { tool, .. } => Why::ToolApproved { tool: tool.into() },
        CallState::AwaitsApproval { tool } | CallState::ToRun { tool } => return Ok(tool.into()),
    };
    Err(refuse(Op::Approve, run, why))
}

/// An approval is for a suspended run (CLI.md). Taken when the run's last
/// terminal is `suspended` and only what is written while a run rests
/// follows it (answers and approvals by hand, the agent's
/// `memory_revisions`, skipped optional records); or when the run stopped
/// in the middle of a batch with no terminal after it (killed, or a resume
/// killed after its claim) and the batch still has a call to approve (of
/// `tool`, for a standing approval): the runner's resume refuses such a
/// run until its gated calls are approved, so refusing here would leave
/// it stuck. Refused otherwise, a completed or failed run above all: an
/// approval would reopen it (SPEC 3 rule 13).
fn check_suspended(journal: &Journal, st: &RunState, run: &str, tool: Option<&str>) -> Result<()> {
    let records: Vec<&Record> = journal.records().collect();
    let last = records
        .iter()
        .rposition(|r| r.kind() == Some(Kind::Terminal));
    let rests = |r: &&Record| {
        matches!(
            r.kind(),
            Some(Kind::ToolResult | Kind::CallApproval | Kind::Decision | Kind::MemoryRevisions)
        ) || (r.kind().is_none() && r.optional)
    };
    let after = |i: usize| records.get(i + 1..).unwrap_or_default();
    let open = match last {
        Some(i) if after(i).iter().all(rests) => {
            let reason = match records.get(i).and_then(|r| r.payload.as_ref()) {
                Some(Payload::Terminal(t)) => t.reason(),
                _ => Reason::parse(""),
            };
            if reason == Reason::Suspended {
                return Ok(());
            }
            return Err(refuse(
                Op::Approve,
                run,
                Why::Ended {
                    reason: reason.as_str().to_owned(),
                },
            ));
        }
        Some(i) => match after(i).iter().find(|r| !rests(r)) {
            Some(r) => Open::After {
                seq: r.seq,
                kind: r.kind().map(|k| k.key()),
            },
            None => Open::Followed,
        },
        None => Open::NoTerminal,
    };
    // Open: stopped mid-batch, or not waiting on an approval at all.
    let waits = st.pending.as_ref().is_some_and(|p| {
        p.assistant.tool_use_ids().any(|id| {
            st.call(id)
                .to_run()
                .is_some_and(|t| tool.is_none_or(|want| want == t))
        })
    });
    if waits {
        return Ok(());
    }
    Err(refuse(
        Op::Approve,
        run,
        Why::NotWaiting {
            open,
            tool: tool.map(str::to_owned),
        },
    ))
}

/// The refusals for a standing approval: not a tool name, approved
/// already, or a tool neither a pending call nor the conversation names.
fn check_tool(st: &RunState, run: &str, tool: &str) -> Result<()> {
    if tool.is_empty() || tool.len() > MAX_TOOL || tool.chars().any(char::is_control) {
        return Err(refuse(
            Op::Approve,
            run,
            Why::NotAToolName { tool: tool.into() },
        ));
    }
    if st.approvals.iter().any(|t| t == tool) {
        return Err(refuse(
            Op::Approve,
            run,
            Why::ToolApproved { tool: tool.into() },
        ));
    }
    let tools = st.tools_called();
    if !tools.iter().any(|t| t == tool) {
        return Err(refuse(
            Op::Approve,
            run,
            Why::UnknownTool {
                tool: tool.into(),
                tools,
            },
        ));
    }
    Ok(())
}
