//! The one writer of a run: what every backend's appender promises.

use crate::record::{Payload, Record};

/// Appending to one run (SPEC 2). An implementation holds whatever makes it
/// the run's only writer (the file lock; the JetStream fence) for its whole
/// life, and advances `last_seq` only after a record is durably stored.
pub trait Appender: Send {
    /// The run's id.
    fn run(&self) -> &str;
    /// The seq of the last durably stored record (0 for a new run).
    fn last_seq(&self) -> u64;
    /// Append the record's canonical bytes. `Ok(false)` when its seq is at
    /// or below `last_seq` (a duplicate: skipped, SPEC 2); a gap is an error.
    fn append(&mut self, record: &Record) -> crate::Result<bool> {
        let raw = encoded(self.run(), record)?;
        self.append_raw(record.seq, &raw)
    }
    /// Append a new record this tool wrote, as the next seq of a journal
    /// of `generation` (SPEC 2): on version 1 it is stamped with `time`
    /// (now, unless the caller knows when the event happened), on version
    /// 3 never. Returns the record as stored. A seq past the largest there
    /// is, or one the journal already holds, is refused: for a writer that
    /// meant to add a record, a skipped duplicate is not success.
    fn append_next(
        &mut self,
        payload: Payload,
        generation: crate::record::Generation,
    ) -> crate::Result<Record> {
        let record = next_record(self.run(), self.last_seq(), payload, generation)?;
        if self.append(&record)? {
            Ok(record)
        } else {
            Err(already_stored(self.run(), record.seq))
        }
    }
    /// Append bytes exactly as given (a copied record; no newline).
    fn append_raw(&mut self, seq: u64, raw: &[u8]) -> crate::Result<bool>;

    /// Whether this writer still holds the run, asked before an effect
    /// that cannot be taken back (a tool): `Error::Live` when another
    /// writer has stored a record since this one's last. A lock (file)
    /// cannot be taken over, so the default says yes.
    fn check_held(&self) -> crate::Result<()> {
        Ok(())
    }

    /// Append copied records in order, stopping at the first error: how many
    /// were stored (duplicates skipped are not counted) and how it ended. A
    /// backend may do this faster than one `append_raw` at a time (JetStream
    /// runs the whole loop on its runtime); the rules are the same.
    fn append_batch(&mut self, records: Vec<(u64, Vec<u8>)>) -> (u64, crate::Result<()>) {
        let mut stored = 0;
        for (seq, raw) in records {
            match self.append_raw(seq, &raw) {
                Ok(true) => stored += 1,
                Ok(false) => {}
                Err(e) => return (stored, Err(e)),
            }
        }
        (stored, Ok(()))
    }
}

/// The bytes [`Appender::append`] stores for `record` of run `run`:
/// refused when it has no payload. Shared with the async appender.
pub(crate) fn encoded(run: &str, record: &Record) -> crate::Result<Vec<u8>> {
    record.encode().ok_or_else(|| {
        crate::Error::refused(
            run,
            format!(
                "record seq {} ({}) has no payload to encode",
                record.seq, record.protocol
            ),
        )
    })
}

/// The record [`Appender::append_next`] appends after `last_seq`: the
/// next seq, stamped as `generation` stamps (SPEC 2). Shared with the
/// async appender, so both number and stamp alike.
pub(crate) fn next_record(
    run: &str,
    last_seq: u64,
    payload: Payload,
    generation: crate::record::Generation,
) -> crate::Result<Record> {
    let seq = last_seq.checked_add(1).ok_or_else(|| {
        crate::Error::refused(
            run,
            "its last seq is the largest there is; nothing was written",
        )
    })?;
    let mut record = Record::new(seq, payload);
    record.time = generation.stamps_time().then(crate::time::Time::now);
    Ok(record)
}

/// [`Appender::append_next`]'s refusal when its record was skipped as a
/// duplicate: for a writer that meant to add a record, that is not success.
pub(crate) fn already_stored(run: &str, seq: u64) -> crate::Error {
    crate::Error::refused(
        run,
        format!("seq {seq} was already in the journal; nothing was written"),
    )
}
