//! `answer`: a deferred call answered by hand (SPEC 6), as one ordinary
//! `tool_result`. In two steps, because the content is asked for only
//! once every check passed (nobody types an answer the run would refuse):
//! [`prepare`] loads and checks with no lock, [`Prepared::commit`] takes
//! the writer's place, re-checks and appends.
//!
//! ```
//! use journal::ops::answer::{self, Request};
//! use journal::{Address, Store};
//! use std::os::unix::fs::PermissionsExt;
//!
//! // A temporary copy of a run suspended on one deferred call (`tu_d`).
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("g-deferral-waiting.json");
//! std::fs::write(
//!     &path,
//!     include_bytes!("../../../testdata/agent-journals/v1/g-deferral-waiting.json"),
//! )?;
//! std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
//! let store: Store = Address::File { dir: dir.path().to_path_buf() }
//!     .open(&Default::default(), std::time::Duration::ZERO)?;
//!
//! // No call named: the one the run waits on. Every check is made here.
//! let req = Request { run: "g-deferral-waiting", call: None, is_error: false };
//! let prepared = answer::prepare(&store, &req)?;
//! assert_eq!(prepared.call().tool_use_id, "tu_d");
//!
//! // Only now is the content asked for; one record is appended.
//! let written = prepared.commit("change CHG-1234 approved".to_owned())?;
//! assert_eq!(written.seq, 5);
//! let journal = store.read("g-deferral-waiting")?;
//! assert!(!journal::fold(journal.records())?.waiting);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{refuse, write_one, Op, Seen, Why, Written};
use crate::fold::{CallState, FoldOptions, RunState};
use crate::record::{Payload, ToolResult, ToolResultBlock};
use crate::state::{permit, Ask, State};
use crate::store::{Journal, Store};
use crate::Result;

/// The largest answer accepted (SPEC 6).
pub use crate::refusal::MAX_CONTENT;

/// What to answer.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The run's id.
    pub run: &'a str,
    /// The call; `None` for the one deferred call the run waits on.
    pub call: Option<&'a str>,
    /// The answer is an error result.
    pub is_error: bool,
}

/// The deferred call being answered, as its deferral describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The call's tool_use id.
    pub tool_use_id: String,
    /// The call's tool.
    pub tool: String,
    /// The deferral's note to whoever answers.
    pub note: String,
    /// The deferral's handle (where the call was sent).
    pub handle: String,
    /// The provider that took the call (SPEC 6: the answer is counted
    /// under it), and whether it was dispatched.
    pub kind: String,
    /// The call was dispatched.
    pub dispatched: bool,
}

/// An answer checked: every refusal of SPEC 6 made, waiting for its
/// content. Pure data: [`Prepared::commit`] writes it on the blocking
/// store, [`crate::ops::asynch::commit_answer`] on the async one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    seen: Seen,
    is_error: bool,
    call: Call,
}

impl Checked {
    /// The call the answer is for.
    pub fn call(&self) -> &Call {
        &self.call
    }

    /// What the checks saw of the run.
    pub fn seen(&self) -> &Seen {
        &self.seen
    }

    /// The record that answers the call with `content`: refused over the
    /// size rule. SPEC 6: it carries the deferred record's kind and
    /// dispatched (and, for a dispatched remote call, the derived `remote`
    /// older readers count).
    pub fn payload(&self, content: String) -> Result<Payload> {
        check_size(&self.seen.run, content.len())?;
        let c = &self.call;
        Ok(Payload::ToolResult(ToolResult {
            tool_use_id: c.tool_use_id.clone(),
            result: ToolResultBlock {
                tool_use_id: c.tool_use_id.clone(),
                content,
                is_error: self.is_error,
                ..ToolResultBlock::default()
            },
            remote: c.kind == "remote" && c.dispatched,
            kind: c.kind.clone(),
            dispatched: c.dispatched,
            ..ToolResult::default()
        }))
    }
}

/// Every check of SPEC 6 on the run as read (`journal`, and `st` folded
/// from it) and where it stands (`state`): pure, no store, so that either
/// shape of store (blocking or async) asks the same.
pub fn check(journal: &Journal, st: &RunState, state: &State, req: &Request) -> Result<Checked> {
    let run = req.run;
    let permitted = || permit(Op::Answer, run, state, Ask::NAMED);
    // What is wrong with the call named says more than the run's state;
    // with none named, the state says why there is none to answer.
    let call = match req.call {
        Some(id) => {
            let call = check_call(st, run, id)?;
            permitted()?;
            call
        }
        None => {
            permitted()?;
            check_call(st, run, &only_waiting(st, run)?)?
        }
    };
    Ok(Checked {
        seen: Seen::of(Op::Answer, run, journal, st)?,
        is_error: req.is_error,
        call,
    })
}

/// A checked answer on the blocking store, waiting for its content.
pub struct Prepared<'s> {
    store: &'s Store,
    checked: Checked,
}

/// Load the run and make every check of SPEC 6, with no lock taken.
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

impl Prepared<'_> {
    /// The call the answer is for.
    pub fn call(&self) -> &Call {
        self.checked.call()
    }

    /// Become the writer, make sure nothing changed since [`prepare`],
    /// and append the answer: exactly one record.
    pub fn commit(self, content: String) -> Result<Written> {
        let payload = self.checked.payload(content)?;
        write_one(Op::Answer, self.store, &self.checked.seen, payload)
    }
}

/// The answer's size rule (`len` bytes), for a front end to apply as early as it likes
/// (before the run is loaded); [`Prepared::commit`] applies it again.
pub fn check_size(run: &str, len: usize) -> Result<()> {
    match len > MAX_CONTENT {
        true => Err(refuse(Op::Answer, run, Why::TooBig)),
        false => Ok(()),
    }
}

/// The one deferred call the run waits on, for an answer with no call
/// named; with none or several waiting, the call must be named.
fn only_waiting(st: &RunState, run: &str) -> Result<String> {
    let open = st
        .pending
        .as_ref()
        .map_or(&[][..], |p| &p.open_deferrals[..]);
    match open {
        [one] => Ok(one.tool_use_id.clone()),
        [] => Err(refuse(Op::Answer, run, Why::WaitsOnNone)),
        several => Err(refuse(
            Op::Answer,
            run,
            Why::WaitsOnSeveral {
                calls: several.iter().map(|d| d.tool_use_id.clone()).collect(),
            },
        )),
    }
}

/// The refusals of SPEC 6; the call when it is one that waits on an answer.
fn check_call(st: &RunState, run: &str, id: &str) -> Result<Call> {
    let state = st.call(id);
    let why = match state {
        CallState::AwaitsAnswer { deferral: d, .. } => {
            return Ok(Call {
                tool_use_id: id.to_owned(),
                tool: d.tool_name.clone(),
                note: d.note.clone(),
                handle: d.handle.clone(),
                kind: d.kind.clone(),
                dispatched: d.dispatched,
            })
        }
        s if s.answered() => Why::AlreadyAnswered { call: id.into() },
        CallState::AwaitsApproval { tool } => Why::Gated {
            call: id.into(),
            tool: tool.into(),
        },
        CallState::NoBatch { .. } => Why::NoPendingBatch { call: id.into() },
        s => Why::NotDeferred {
            call: id.into(),
            in_batch: !matches!(s, CallState::NotInBatch { .. }),
            waiting: st.pending.as_ref().map_or_else(Vec::new, |p| {
                p.open_deferrals
                    .iter()
                    .map(|d| d.tool_use_id.clone())
                    .collect()
            }),
        },
    };
    Err(refuse(Op::Answer, run, why))
}
