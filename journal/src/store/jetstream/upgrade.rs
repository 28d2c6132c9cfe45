//! `upgrade` on JetStream (SPEC 12).
//!
//! A record subject holds one message and refuses a second (SPEC 8), so the
//! meta record is replaced in place by a rollup (`Nats-Rollup: sub`): the
//! server stores the new message and drops the old one on that subject in
//! one step, so the subject always holds one of the two. The stream must
//! allow rollups; one that does not is refused before anything is written
//! (`fisk-admin upgrade` asks once for a whole batch, with the command that
//! allows them: `stream edit STREAM --allow-rollup`).
//!
//! The agent (and this tool) take the last message on a run's subjects as
//! its tail: its seq is the run's last seq, its stream sequence what the
//! next append is fenced on. The new meta record is now that last message,
//! so the run's last record is rolled up again right after it, with the
//! same bytes: the tail is the last record once more. (Both read a run's
//! records sorted by seq, so no other record needs to move.) Each publish
//! is fenced on the whole run (the agent's wildcard fence): a writer that
//! appended since the run was read makes it fail, and nothing of that
//! writer's is lost.
//!
//! Order of work: read and plan (a damaged run is refused); check the hold
//! (SPEC 8) ([`Core::upgrade_plan`]); keep the run as a file journal under
//! the XDG state home, fsynced, before anything on the stream changes (the
//! blocking facade does, outside the runtime); publish the new meta and
//! then the last record again ([`Core::upgrade_publish`]). Killed at any
//! point, every subject holds its record, and the meta record is the old
//! one or the new one. Killed between the two publishes, the run's tail is
//! its meta record: readers here notice (record 2 exists behind a tail of
//! seq 1) and say to run `upgrade` again, which finishes the job; the agent
//! refuses to append to it until then (its next seq is taken), so nothing
//! is written wrongly.

use super::core::Core;
use super::{as_lines, sort_by_seq, EXPECTED_SUBJECT_HEADER};
use crate::error::{Error, Remedy, Result};
use crate::upgrade::{plan, Outcome, Plan};
use std::time::Duration;

/// What upgrading a run takes, once it is read, planned and checked.
pub(super) enum Step {
    /// Nothing to write: the run is current, or this is a dry run.
    Done(Outcome),
    /// Keep the run, then [`publish`](Core::upgrade_publish) this.
    Write(Upgrade),
}

/// An upgrade planned: the run as kept, and the two rollups.
pub(super) struct Upgrade {
    /// The run as it stands, as the lines of a journal: what is kept.
    pub(super) bytes: Vec<u8>,
    pub(super) records: usize,
    /// The new meta record; `None` when an interrupted upgrade is resumed.
    meta: Option<Vec<u8>>,
    /// The last record (seq, body), published again after the meta.
    last: Option<(u64, Vec<u8>)>,
    /// The run's last stream sequence, which the first rollup is fenced on.
    fence: u64,
}

impl Upgrade {
    pub(super) fn resumed(&self) -> bool {
        self.meta.is_none()
    }
}

impl Core {
    /// The first half of upgrading one run from version 3 to version 1
    /// (see the module doc): read, plan, check the stream and the hold. A
    /// run not at rest whose last record is younger than `hold` is refused
    /// as live unless `force`.
    pub(super) async fn upgrade_plan(
        &self,
        run: &str,
        dry_run: bool,
        hold: Duration,
        force: bool,
    ) -> Result<Step> {
        let refused =
            |message: String| Error::refused(run, format!("{message}; nothing was changed"));
        // Everything on the run's subjects, whatever their order.
        let mut messages = self.read_run(run, true).await?;
        if let Some(m) = messages.iter().find(|m| m.subject_seq.is_none()) {
            return Err(Error::refused_until(
                run,
                format!(
                    "a message on {} names no record; nothing was changed",
                    m.subject
                ),
                Remedy::Verify,
            ));
        }
        // Every subject names a record: seq order is subject order.
        sort_by_seq(&mut messages);
        let bytes = as_lines(&messages);
        // The tail: the message stored last. It must be the last record.
        let last_record = messages.last().and_then(|m| m.subject_seq).unwrap_or(0);
        let tail = messages.iter().max_by_key(|m| m.stream_seq);
        let tail_in_place = tail.and_then(|m| m.subject_seq) == Some(last_record);
        let meta = match plan(run, &bytes).map_err(refused)? {
            Plan::Current if tail_in_place => return Ok(Step::Done(Outcome::Current)),
            // A version-1 run whose tail is not its last record: an upgrade
            // of it was interrupted between its two publishes. Finish it.
            Plan::Current => None,
            Plan::Upgrade { meta, .. } => Some(meta),
        };
        let records = messages.len();
        if dry_run {
            return Ok(Step::Done(Outcome::Would { records }));
        }
        if !self.config.allow_rollup {
            return Err(refused(format!(
                "stream {} does not allow rollups, which upgrade needs to replace a record in place: allow them on the stream for the upgrade, and forbid them again after it",
                self.name
            )));
        }
        if !force {
            // SPEC 8's hold, as every writer checks it.
            self.check_held(run, hold).await?;
        }

        let fence = tail.map_or(0, |m| m.stream_seq);
        let last = messages
            .last()
            .filter(|_| last_record > 1)
            .map(|m| (last_record, m.body.clone()));
        Ok(Step::Write(Upgrade {
            bytes,
            records,
            meta,
            last,
            fence,
        }))
    }

    /// The second half, once the run is kept (on a resumed upgrade, the
    /// version-1 run as it stands): the new meta record, then the last
    /// record again. A failure says whether any of it was published: when
    /// none was, the run on the stream is as it was (another upgrade, or
    /// another writer, got there first) and the copy kept for this one is
    /// not needed.
    pub(super) async fn upgrade_publish(
        &self,
        run: &str,
        up: Upgrade,
    ) -> std::result::Result<(), (Error, bool)> {
        let mut fence = up.fence;
        let mut published = false;
        if let Some(meta) = up.meta {
            fence = self
                .rollup(run, 1, meta, fence)
                .await
                .map_err(|e| (e, published))?;
            published = true;
        }
        if let Some((seq, body)) = up.last {
            self.rollup(run, seq, body, fence)
                .await
                .map_err(|e| (e, published))?;
        }
        Ok(())
    }

    /// Put `body` on record `seq`'s subject in place of what is there (a
    /// rollup), fenced on the run's last stream sequence being `last`.
    /// Returns the new message's stream sequence.
    async fn rollup(&self, run: &str, seq: u64, body: Vec<u8>, last: u64) -> Result<u64> {
        use async_nats::jetstream::message::PublishMessage;
        let subject = self.subject(run, seq);
        let msg = PublishMessage::build()
            .payload(body.into())
            .header("Nats-Rollup", "sub")
            .expected_last_subject_sequence(last)
            .header(
                async_nats::HeaderName::from_static(EXPECTED_SUBJECT_HEADER),
                format!("{}.{run}.>", self.prefix),
            );
        let Some(ack) = self.conn.publish(subject.clone(), msg).await else {
            return Err(self.err(
                Some(run),
                format!(
                    "cannot publish to {subject}: the connection took no message; the same upgrade again finishes it"
                ),
            ));
        };
        match ack {
            Ok(a) => Ok(a.sequence),
            Err(e) => {
                use async_nats::jetstream::context::PublishErrorKind as K;
                if e.kind() == K::WrongLastSequence {
                    return Err(Error::Live {
                        run: run.to_owned(),
                        holder: Some(format!(
                            "another writer appended to it on stream {} during the upgrade (record {seq} was refused by the fence); once it has stopped, the same upgrade again finishes it",
                            self.name
                        )),
                    });
                }
                Err(self.err(
                    Some(run),
                    format!(
                        "cannot replace record {seq} on {subject}: {e}; the same upgrade again finishes it"
                    ),
                ))
            }
        }
    }
}
