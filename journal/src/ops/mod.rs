//! Operations an operator does by hand on a run (SPEC 6): answering a
//! deferred call, approving a gated one, ending a run that crashed (6.1). They exist here, not in a front
//! end, because each is a write rule: every refusal is checked with no
//! lock taken (so a refusal leaves the journal exactly as it was), then the
//! operation becomes the run's writer, makes sure nothing changed since it
//! looked, and appends exactly one record. `fork` and `recover` (6.1)
//! write a whole journal instead, a new run or (recover in place) the run
//! replaced with its original kept, after the same checks.
//!
//! Each operation takes a request and returns an outcome; a refusal is an
//! [`Error::Op`] holding a [`Refusal`], typed so that a
//! front end can say what to do next in its own words. This module prints
//! nothing and names no command.

pub mod answer;
pub mod approve;
pub mod backups;
pub mod end;
pub mod fork;
pub mod inbox;
pub mod recover;
pub mod remove;

use crate::fold::RunState;
use crate::record::{Generation, Payload};
pub use crate::refusal::{Change, Open, Refusal, Why, MAX_CONTENT, MAX_TOOL};
pub use crate::state::Op;
use crate::state::{permit, Ask, State};
use crate::store::{Appender, Journal, Store};
use crate::{Error, Result};

/// The one record an operation wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The record's seq.
    pub seq: u64,
    /// The record's line, byte for byte as stored (no newline).
    pub line: Vec<u8>,
}

/// `why` as the error refusing an operation on `run`.
fn refuse(op: Op, run: &str, why: Why) -> Error {
    Error::Op(Box::new(Refusal {
        op,
        run: run.to_owned(),
        why,
    }))
}

/// Where `run` stands, as `journal` read and `st` folded from it, and
/// whether the table lets `op` write to it, asked as `ask`
/// ([`crate::state::permit`]).
fn standing(
    op: Op,
    store: &Store,
    run: &str,
    journal: &Journal,
    st: &RunState,
    ask: Ask,
) -> Result<State> {
    let state = store.state_of(run, journal, st)?;
    permit(op, run, &state, ask)?;
    Ok(state)
}

/// Become the run's writer for a hand-written record, once every check
/// passed: refused while a writer holds it (file: its lock; JetStream:
/// SPEC 8's hold), for a version no agent writes, or when the journal
/// changed since `journal` was read and `st` folded from it.
fn become_writer(
    op: Op,
    store: &Store,
    run: &str,
    journal: &Journal,
    st: &RunState,
) -> Result<(Box<dyn Appender>, Generation)> {
    store.check_writable(run)?;
    let generation = st.generation.ok_or_else(|| {
        refuse(
            op,
            run,
            Why::NotWritable {
                version: st.version,
            },
        )
    })?;
    let app = store.open_appender(run)?;
    if app.last_seq() != journal.last_seq() {
        return Err(refuse(
            op,
            run,
            Why::Changed(Change::Seq {
                then: journal.last_seq(),
                now: app.last_seq(),
            }),
        ));
    }
    // Under the lock: the generation too, since `upgrade` rewrites a
    // journal to version 1 keeping its seqs (issue 24.6).
    let now = store.summary(run).version;
    if now != Some(generation.version()) {
        return Err(refuse(
            op,
            run,
            Why::Changed(Change::Version {
                then: generation.version(),
                now,
            }),
        ));
    }
    Ok((app, generation))
}

/// Check nothing changed, then append `payload` as the run's next record:
/// exactly one record, and the writer let go before returning.
fn write_one(
    op: Op,
    store: &Store,
    run: &str,
    journal: &Journal,
    st: &RunState,
    payload: Payload,
) -> Result<Written> {
    let (mut app, generation) = become_writer(op, store, run, journal, st)?;
    let record = app.append_next(payload, generation)?;
    drop(app);
    Ok(Written {
        seq: record.seq,
        // It was encoded to be stored: it encodes.
        line: record.encode().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests;
