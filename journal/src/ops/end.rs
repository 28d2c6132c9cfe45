//! `end`: a run that crashed and will never resume closed by hand with
//! one `terminal` record the agent reads (SPEC 6.1, the agent's
//! "terminate"). In two steps, so a front end can list what it would end
//! (a dry run, a confirmation) before anything is written: [`prepare`]
//! loads and checks with no lock, [`Prepared::commit`] takes the writer's
//! place, re-checks and appends.
//!
//! Only an open run is ended (an ended one has nothing to end), never a
//! live one, and a run waiting on a person (deferred calls to answer,
//! gated calls to approve) only when the operator says so: ending it
//! drops what the person was asked.
//!
//! Which runs it ends is the run model's table ([`crate::state`]): an
//! open run; a run that waits on a person or is ready to resume (a person
//! answered or approved, nobody resumed it) only when it is named and the
//! operator forces it; never an ended, damaged or live one.
//!
//! The record is the agent's own shape for its generation: version 1 gets
//! a `time` (the appender stamps it) and the `summary` the agent's runner
//! copies onto every terminal it writes (the conversation's turns, context
//! and counters, as the fold of the journal up to it gives them:
//! [`RunState::conversation_summary`]), so the agent's own listing shows
//! what the run cost. Version 3 has neither.

use super::{refuse, write_one, Change, Op, Seen, Why, Written};
use crate::fold::{FoldOptions, RunState};
use crate::record::{Payload, Reason, Terminal};
use crate::state::{permit, Ask, State};
use crate::store::{Journal, Store};
use crate::Result;

/// What to end.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The run's id.
    pub run: &'a str,
    /// One of the agent's five reasons; `suspended` leaves the run
    /// resumable. A front end's default is `error` ([`DEFAULT_REASON`]).
    pub reason: &'a Reason,
    /// The operator's words, stored exactly; `None` writes no message.
    pub message: Option<&'a str>,
    /// The run was named, not selected by a filter.
    pub named: bool,
    /// End it even when it holds a person's act (it waits on a person, or
    /// is ready to resume): taken only when the run is named.
    pub force: bool,
    /// The last seq the operator was shown (a listing before a
    /// confirmation): a run that changed since is refused, since what was
    /// confirmed is no longer what would be ended.
    pub seen: Option<u64>,
}

/// The reason a run is ended with when none is given (SPEC 6.1).
pub const DEFAULT_REASON: Reason = Reason::Error;

/// The five reasons the agent writes and reads.
pub const REASONS: [Reason; 5] = [
    Reason::Completed,
    Reason::Suspended,
    Reason::Error,
    Reason::Budget,
    Reason::MaxIterations,
];

/// The run an end would close, as its checks saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// The run's format version (1 or 3).
    pub version: i64,
    /// Its last seq.
    pub last_seq: u64,
    /// What it waited on, when the operator said to end it anyway:
    /// the deferred calls and the calls waiting on an approval.
    pub waiting_on: Vec<String>,
}

/// An end checked, not yet written. Pure data: [`Prepared::commit`]
/// writes it on the blocking store, [`crate::ops::asynch::end`] on the
/// async one.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    seen: Seen,
    terminal: Terminal,
    open: Open,
}

impl Checked {
    /// The run as the checks saw it.
    pub fn open(&self) -> &Open {
        &self.open
    }

    /// What the checks saw of the run.
    pub fn seen(&self) -> &Seen {
        &self.seen
    }

    /// The record to write.
    pub fn payload(&self) -> Payload {
        Payload::Terminal(self.terminal.clone())
    }

    /// What was written, as [`Ended`].
    pub(crate) fn ended(self, written: Written) -> Ended {
        Ended {
            written,
            open: self.open,
        }
    }
}

/// A checked end on the blocking store, not yet written.
pub struct Prepared<'s> {
    store: &'s Store,
    checked: Checked,
}

/// The terminal written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The record written.
    pub written: Written,
    /// The run as it was before.
    pub open: Open,
}

/// Every check of SPEC 6.1 on the run as read (`journal`, and `st` folded
/// from it) and where it stands (`state`): pure, no store, so that either
/// shape of store asks the same.
pub fn check(journal: &Journal, st: &RunState, state: &State, req: &Request) -> Result<Checked> {
    let run = req.run;
    if !REASONS.contains(req.reason) {
        return Err(refuse(
            Op::End,
            run,
            Why::NotAReason {
                reason: req.reason.as_str().to_owned(),
            },
        ));
    }
    if let Some(then) = req.seen.filter(|s| *s != journal.last_seq()) {
        return Err(refuse(
            Op::End,
            run,
            Why::Changed(Change::Seq {
                then,
                now: journal.last_seq(),
            }),
        ));
    }
    let ask = Ask {
        named: req.named,
        force: req.force,
    };
    permit(Op::End, run, state, ask)?;
    let seen = Seen::of(Op::End, run, journal, st)?;
    let mut terminal = Terminal::new(
        req.reason.clone(),
        req.message.map(str::to_owned).unwrap_or_default(),
    );
    if seen.generation == crate::record::Generation::Current {
        terminal.summary = Some(st.conversation_summary());
    }
    let open = Open {
        version: st.version,
        last_seq: journal.last_seq(),
        waiting_on: waiting_on(st),
    };
    Ok(Checked {
        seen,
        terminal,
        open,
    })
}

/// Load the run and make every check of SPEC 6.1, with no lock taken.
pub fn prepare<'s>(store: &'s Store, req: &Request) -> Result<Prepared<'s>> {
    if !REASONS.contains(req.reason) {
        return Err(refuse(
            Op::End,
            req.run,
            Why::NotAReason {
                reason: req.reason.as_str().to_owned(),
            },
        ));
    }
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
    /// The run as the checks saw it.
    pub fn open(&self) -> &Open {
        self.checked.open()
    }

    /// Become the writer, make sure nothing changed since [`prepare`],
    /// and append the terminal: exactly one record.
    pub fn commit(self) -> Result<Ended> {
        let c = self.checked;
        let written = write_one(Op::End, self.store, &c.seen, c.payload())?;
        Ok(c.ended(written))
    }
}

/// Check and write in one step.
pub fn end(store: &Store, req: &Request) -> Result<Ended> {
    prepare(store, req)?.commit()
}

/// The calls a person has to act on: the open deferrals, then the calls
/// waiting on an approval.
fn waiting_on(st: &RunState) -> Vec<String> {
    let mut calls: Vec<String> = st.pending.as_ref().map_or_else(Vec::new, |p| {
        p.open_deferrals
            .iter()
            .map(|d| d.tool_use_id.clone())
            .collect()
    });
    calls.extend(st.needs_approval.iter().map(|g| g.tool_use_id.clone()));
    calls
}

#[cfg(test)]
mod tests {
    use super::super::tests::store_with;
    use super::*;
    use crate::fold::Status;
    use crate::Error;
    use std::path::PathBuf;

    /// Fixture `name` of `testdata/agent-journals/{generation}`, without
    /// its last `drop` lines.
    fn fixture(generation: &str, name: &str, drop: usize) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/agent-journals")
            .join(generation)
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        lines[..lines.len() - drop]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect()
    }

    fn req<'a>(run: &'a str, reason: &'a Reason) -> Request<'a> {
        Request {
            run,
            reason,
            message: None,
            named: true,
            force: false,
            seen: None,
        }
    }

    /// The refusal of `req` on `text`, the journal left as it was.
    fn refused(run: &str, text: &str, reason: &Reason, force: bool) -> Error {
        let (_d, store, path) = store_with(run, text);
        let r = Request {
            force,
            ..req(run, reason)
        };
        let e = end(&store, &r).unwrap_err();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{e}");
        e
    }

    fn why(e: Error) -> Why {
        match e {
            Error::Refused(r) => {
                assert_eq!(r.op, Some(Op::End));
                r.why
            }
            other => panic!("not a refusal: {other}"),
        }
    }

    #[test]
    fn an_ended_run_has_nothing_to_end() {
        for g in ["v1", "v3"] {
            let text = fixture(g, "g-pending-suspended", 0);
            let e = refused("g-pending-suspended", &text, &Reason::Error, true);
            assert!(e.to_string().contains("end has nothing to do"), "{e}");
            let Some(r) = e.refusal().and_then(|r| r.state()) else {
                panic!("{e}")
            };
            assert_eq!(r.state, crate::state::State::Suspended);
            assert!(!r.forcible);
        }
    }

    #[test]
    fn a_run_waiting_on_a_person_is_ended_only_when_named_and_forced() {
        for g in ["v1", "v3"] {
            let run = "g-deferral-waiting";
            let text = fixture(g, run, 1);
            let e = refused(run, &text, &Reason::Error, false);
            let Some(r) = e.refusal().and_then(|r| r.state()) else {
                panic!("{e}")
            };
            assert_eq!(r.state, crate::state::State::WaitingAnswer);
            assert!(r.forcible && !r.by_filter);
            // Selected by a filter, forced or not: refused.
            let (_d, store, path) = store_with(run, &text);
            let filtered = Request {
                named: false,
                force: true,
                ..req(run, &Reason::Error)
            };
            assert!(end(&store, &filtered).is_err());
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            let r = Request {
                force: true,
                ..req(run, &Reason::Error)
            };
            let done = end(&store, &r).unwrap();
            assert_eq!(done.open.waiting_on, vec!["tu_d".to_owned()]);
        }
    }

    #[test]
    fn a_live_run_is_refused() {
        let run = "g-pending-crash";
        let text = fixture("v3", run, 0);
        let (d, store, path) = store_with(run, &text);
        let _lock = crate::store::file::FileStore::new(d.path())
            .lock(run)
            .unwrap();
        let e = end(&store, &req(run, &Reason::Error)).unwrap_err();
        assert!(matches!(e, Error::Live { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn a_version_no_agent_writes_is_refused() {
        let run = "g-pending-crash";
        let text = fixture("v3", run, 0).replacen(r#""version":3"#, r#""version":2"#, 1);
        let (_d, store, path) = store_with(run, &text);
        let e = end(&store, &req(run, &Reason::Error)).unwrap_err();
        // The fold refuses version 2 before the op looks at it, or the op
        // refuses it as not writable: either way nothing is written.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{e}");
        let e = refused(run, &text, &Reason::Other("terminated".into()), false);
        assert_eq!(
            why(e),
            Why::NotAReason {
                reason: "terminated".into()
            }
        );
    }

    #[test]
    fn an_open_run_is_ended_in_its_own_generation() {
        let run = "g-pending-crash";
        for (g, timed) in [("v1", true), ("v3", false)] {
            let text = fixture(g, run, 0);
            let (_d, store, path) = store_with(run, &text);
            let r = Request {
                message: Some("worker lost <in> the \"reboot\""),
                ..req(run, &Reason::Suspended)
            };
            let stale = Request { seen: Some(2), ..r };
            let e = prepare(&store, &stale).map(|_| ()).unwrap_err();
            assert_eq!(why(e), Why::Changed(Change::Seq { then: 2, now: 3 }));
            let p = prepare(&store, &Request { seen: Some(3), ..r }).unwrap();
            assert_eq!(p.open().last_seq, 3);
            // Checked but not committed: nothing written.
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            let done = p.commit().unwrap();
            assert_eq!(done.written.seq, 4);
            let line = String::from_utf8(done.written.line).unwrap();
            assert_eq!(line.contains(r#""time":"#), timed, "{line}");
            // Version 1 carries the agent's summary of the conversation so
            // far (one model call, one tool call); version 3 none.
            let summary = match timed {
                true => {
                    r#","summary":{"turns":1,"context_tokens":10,"counters":{"llm_calls":1,"tool_calls":1,"tool_calls_by_kind":{"1":1},"in_tokens":10,"out_tokens":5}}"#
                }
                false => "",
            };
            assert!(
                line.ends_with(&format!(r#""terminal":{{"reason":"suspended","message":"worker lost \u003cin\u003e the \"reboot\""{summary}}}}}"#)),
                "{line}"
            );
            let after = std::fs::read_to_string(&path).unwrap();
            assert_eq!(after, format!("{text}{line}\n"));
            // Ended now: the fold says so, and a second end is refused.
            let journal = store.read(run).unwrap();
            let st = store.fold(run, &journal, FoldOptions::default()).unwrap();
            assert_eq!(st.status, Status::Terminal(Reason::Suspended));
            let e = end(&store, &req(run, &Reason::Error)).unwrap_err();
            assert!(e.refusal().is_some_and(|r| r.state().is_some()), "{e}");
        }
        // No message given: none written.
        let text = fixture("v3", run, 0);
        let (_d, store, _) = store_with(run, &text);
        let done = end(&store, &req(run, &DEFAULT_REASON)).unwrap();
        let line = String::from_utf8(done.written.line).unwrap();
        assert!(
            line.ends_with(r#""terminal":{"reason":"error"}}"#),
            "{line}"
        );
    }
}
