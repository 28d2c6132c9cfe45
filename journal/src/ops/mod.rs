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
//! [`Error::Refused`] holding a [`Refusal`], typed so that a
//! front end can say what to do next in its own words. This module prints
//! nothing and names no command.

pub mod answer;
pub mod approve;
pub mod asynch;
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

/// Run `run` read, folded and placed in the run model: what the checks
/// of every operation start from.
fn loaded(store: &Store, run: &str) -> Result<(Journal, RunState, crate::state::State)> {
    let journal = store.read(run)?;
    let st = store.fold(run, &journal, crate::fold::FoldOptions::default())?;
    let state = store.state_of(run, &journal, &st)?;
    Ok((journal, st, state))
}

/// `why` as the error refusing an operation on `run`.
fn refuse(op: Op, run: &str, why: Why) -> Error {
    Error::Refused(Box::new(Refusal {
        op: Some(op),
        run: run.to_owned(),
        why,
        remedy: None,
        calls: Vec::new(),
    }))
}

/// What an operation's checks saw of a run: the run, its last seq and the
/// generation that writes it. The write that follows makes sure nothing
/// changed since (else [`Why::Changed`]), under the run's lock (file) or
/// its fence (JetStream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The run's id.
    pub run: String,
    /// Its last seq when checked.
    pub last_seq: u64,
    /// The generation its records are written in.
    pub generation: Generation,
    /// Its records as checked, as a digest the audit log states before
    /// and (with the record written) after the write (issue 38).
    pub lines: crate::audit::Lines,
}

impl Seen {
    /// What the checks of `op` saw of `journal` and `st` folded from it:
    /// refused for a version no agent writes.
    fn of(op: Op, run: &str, journal: &Journal, st: &RunState) -> Result<Seen> {
        let generation = st.generation.ok_or_else(|| {
            refuse(
                op,
                run,
                Why::NotWritable {
                    version: st.version,
                },
            )
        })?;
        Ok(Seen {
            run: run.to_owned(),
            last_seq: journal.last_seq(),
            generation,
            lines: crate::audit::Lines::of(journal.entries.iter().map(|e| e.raw.as_slice())),
        })
    }

    /// Refused unless the run still ends at the seq checked, in the
    /// generation checked (`upgrade` rewrites a journal to version 1
    /// keeping its seqs, issue 24.6): what a writer asks once it holds
    /// the run, `now` being its last seq and `version` the run's version
    /// as read then.
    fn unchanged(&self, op: Op, now: u64, version: Option<i64>) -> Result<()> {
        if now != self.last_seq {
            return Err(refuse(
                op,
                &self.run,
                Why::Changed(Change::Seq {
                    then: self.last_seq,
                    now,
                }),
            ));
        }
        if version != Some(self.generation.version()) {
            return Err(refuse(
                op,
                &self.run,
                Why::Changed(Change::Version {
                    then: self.generation.version(),
                    now: version,
                }),
            ));
        }
        Ok(())
    }
}

/// Become the run's writer for a hand-written record, once every check
/// passed: refused while a writer holds it (file: its lock; JetStream:
/// SPEC 8's hold), or when the run changed since it was checked.
fn become_writer(op: Op, store: &Store, seen: &Seen) -> Result<Box<dyn Appender>> {
    store.check_writable(&seen.run)?;
    let app = store.open_appender(&seen.run)?;
    // Under the lock (or the fence): the seq, and the generation too.
    seen.unchanged(op, app.last_seq(), store.summary(&seen.run).version)?;
    Ok(app)
}

/// Check nothing changed, then append `payload` as the run's next record:
/// exactly one record, and the writer let go before returning. The
/// blocking store's commit; [`asynch`] has the async store's.
///
/// Logged (issue 38) under the writer's lock or fence: the intent states
/// the run as checked and the run with this record appended, so a kill
/// between the intent and the outcome is settled from the run alone.
fn write_one(op: Op, store: &Store, seen: &Seen, payload: Payload) -> Result<Written> {
    let mut app = become_writer(op, store, seen)?;
    let record = crate::store::next_record(&seen.run, app.last_seq(), payload, seen.generation)?;
    let line = crate::store::encoded(&seen.run, &record)?;
    let plan = plan_of(op, seen, record.seq, &line);
    store.audited(&plan, || match app.append_raw(record.seq, &line)? {
        true => Ok(()),
        false => Err(crate::store::already_stored(&seen.run, record.seq)),
    })?;
    drop(app);
    Ok(Written {
        seq: record.seq,
        line,
    })
}

/// What the audit log's intent says of the one record `line` (seq `seq`)
/// an operation appends to the run `seen` (issue 38): the run as checked
/// and with the record appended.
fn plan_of(op: Op, seen: &Seen, seq: u64, line: &[u8]) -> crate::store::Plan {
    crate::store::Plan {
        op: op.word().to_owned(),
        run: seen.run.clone(),
        before: Some(seen.lines.digest()),
        after: Some(crate::audit::Digest::after(&seen.lines, line)),
        written: crate::audit::Seqs::range(seq, seq),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
