//! Deleting runs: migrate's delete of a verified copy's source, and `rm`,
//! which first keeps every message of the run as a one-run file store.
//!
//! A delete fences the run before it purges anything (FORMAT.md,
//! "Deleting"): it publishes a tombstone on the subject of the record
//! after the run's last one, fenced on the stream sequence of the run's
//! last message over `<prefix>.<id>.>`. Once that lands no writer can
//! append: fisk-admin's literal fence needs that subject empty, the
//! agent's wildcard fence needs the run's last message to be its own, and
//! no writer opens a run that ends on a tombstone (fisk-admin's appender
//! refuses it; the agent cannot load it: the body does not parse). If it
//! does not land, a writer got there first and nothing is deleted. Either
//! way the stream holds the whole run or, after the purge, none of it.
//!
//! The backup is written through the [`Store`](crate::store::Store) API,
//! as a one-run file store ([`crate::store::keep_run`]), outside the
//! runtime: the blocking facade reads the run ([`Core::to_keep`]), fences
//! it ([`Core::fence`]), keeps it, then purges it ([`Core::purge_kept`]).

use super::append::{fenced, refused_by_fence, stream_full, MSG_ID_HEADER};
use super::conn::new_nonce;
use super::core::Core;
use super::subject::{is_tombstone, TOMBSTONE};
use super::{as_lines, sort_by_seq};
use crate::error::{Error, Result};
use crate::id;

/// What [`Core::fence`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fence {
    /// The tombstone landed at this stream sequence: purge through it.
    At(u64),
    /// No tombstone, and none needed or possible: no fenced writer can
    /// append (the run holds no record subject, or its last seq is the
    /// largest there is), or the stream is full and refuses every writer
    /// alike. Purge through the last message read.
    Unfenced,
}

/// Which command fences a run: its tombstone says which one finishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
    /// `rm`, `migrate --delete-source`: deleting the run.
    Delete,
    /// `recover` in place: replacing the run (`whole.rs`).
    Recover,
}

/// A run as `rm` keeps it, read before it is purged.
pub(super) struct ToKeep {
    /// The records in seq order, one line each: the kept journal.
    pub(super) journal: Vec<u8>,
    /// The messages on no record subject, as JSON lines (empty for none).
    pub(super) others: Vec<u8>,
    /// The last stream sequence read: the fence expects it, the purge
    /// stops there (or at the fence).
    pub(super) upto: u64,
    /// The highest seq a subject of the run names (tombstones of an
    /// interrupted delete included): the fence goes after it.
    pub(super) last: u64,
    /// The run's last message is the fence of an interrupted delete: no
    /// writer can append, so no hold applies.
    pub(super) fenced: bool,
    /// Fences of interrupted deletes read (not kept, purged, not counted).
    pub(super) fences: u64,
}

impl Core {
    /// Delete a copied run by purging `<prefix>.<id>.>` (no backup: its
    /// copy is verified), only when the run still ends at seq `last`;
    /// returns how many messages were removed. The run is fenced at the
    /// stream sequence of that record first, so a writer that appended
    /// meanwhile makes this `Error::SourceChanged` and nothing is deleted,
    /// and one that tries after it is refused. The hold (SPEC 8) is
    /// checked after the run's end is read, so it judges the state the
    /// fence keeps.
    pub(super) async fn delete_copied(
        &self,
        run: &str,
        last: u64,
        hold: std::time::Duration,
    ) -> Result<u64> {
        id::check(run)?;
        let Some(m) = self.last_of_run(run).await? else {
            return Err(self.not_found(run));
        };
        let top = self.parse_subject(&m.subject).and_then(|(_, s)| s);
        // The fence of an interrupted delete is no record of the run.
        let have = match is_tombstone(&m.payload) {
            true => top.map(|t| t.saturating_sub(1)),
            false => top,
        };
        let changed = |have: Option<u64>| Error::SourceChanged {
            run: run.to_owned(),
            have: have.unwrap_or(0),
            copied: last,
        };
        if have != Some(last) {
            return Err(changed(have));
        }
        self.check_held_for_delete(run, &m, hold).await?;
        let (upto, fences) = match self.fence(run, top.unwrap_or(last), m.sequence).await {
            Ok(Fence::At(seq)) => (seq, 1 + u64::from(is_tombstone(&m.payload))),
            Ok(Fence::Unfenced) => (m.sequence, u64::from(is_tombstone(&m.payload))),
            Err(Error::Live { .. }) => {
                let now = self.last_of_run(run).await?;
                let have = now.and_then(|m| self.parse_subject(&m.subject).and_then(|(_, s)| s));
                return Err(changed(have));
            }
            Err(e) => return Err(e),
        };
        // Fences are not counted: they were no messages of the run.
        Ok(self.purge_through(run, upto).await?.saturating_sub(fences))
    }

    /// SPEC 8's hold before a delete, given the run's last message: a run
    /// that ends on the fence of an interrupted delete is held by no
    /// writer (none can append after it), however recent the fence.
    pub(super) async fn check_held_for_delete(
        &self,
        run: &str,
        last: &async_nats::jetstream::message::StreamMessage,
        hold: std::time::Duration,
    ) -> Result<()> {
        match is_tombstone(&last.payload) {
            true => Ok(()),
            false => self.check_held(run, hold).await,
        }
    }

    /// Fence `run` against every writer before it is deleted: a tombstone
    /// published on the subject of record `last + 1`, expecting the run's
    /// last message (over `<prefix>.<id>.>`) at stream sequence `upto`.
    /// `Error::Live` when a writer stored anything after `upto` (nothing
    /// is changed then).
    pub(super) async fn fence(&self, run: &str, last: u64, upto: u64) -> Result<Fence> {
        self.fence_for(run, last, upto, Why::Delete).await
    }

    /// [`fence`](Self::fence), its tombstone saying which command fenced
    /// the run and so finishes what it began.
    pub(super) async fn fence_for(
        &self,
        run: &str,
        last: u64,
        upto: u64,
        why: Why,
    ) -> Result<Fence> {
        // Nothing a fenced writer could append after: no record subject
        // (a literal fence needs one before it, a new run's an empty run),
        // or no seq after the last.
        let Some(next) = last.checked_add(1).filter(|_| last >= 1) else {
            return Ok(Fence::Unfenced);
        };
        let subject = self.subject(run, next);
        let msg_id = format!("{}-delete", new_nonce()?);
        let (doing, finish) = match why {
            Why::Delete => ("deleted", "delete"),
            Why::Recover => ("recovered", "recover"),
        };
        let body = format!(
            "{}run {run} is being {doing} by fisk-admin ({}, {}); if this is its last message, that {finish} was interrupted: {finish} the run again (fisk-admin {} {run}) to finish",
            String::from_utf8_lossy(TOMBSTONE),
            crate::id::worker_name(),
            crate::time::Time::now(),
            match why {
                Why::Delete => "rm",
                Why::Recover => "recover",
            }
        );
        let msg = fenced(
            body,
            msg_id.clone(),
            upto,
            format!("{}.{run}.>", self.prefix),
        );
        let (why, fenced) = match self.conn.publish(subject.clone(), msg).await {
            Some(Ok(ack)) if ack.stream == self.name => return Ok(Fence::At(ack.sequence)),
            // This subject's fault, not the store's.
            Some(Ok(ack)) => {
                return Err(self.overlap(
                    &subject,
                    format!(
                        "the delete's fence on {subject} was stored in stream {} instead of {}; the subjects overlap, check the stream configuration; nothing was deleted",
                        ack.stream, self.name
                    ),
                ))
            }
            // Full: every writer is refused alike, none can append until
            // something is purged.
            Some(Err(e)) if stream_full(&e) => return Ok(Fence::Unfenced),
            Some(Err(e)) => (e.to_string(), refused_by_fence(&e)),
            None => ("no answer".to_owned(), false),
        };
        // Refused or unanswered: the subject says whether it is ours.
        match self.last_on(&subject, false).await {
            Ok(Some(m))
                if m.headers
                    .get(MSG_ID_HEADER)
                    .is_some_and(|v| v.as_str() == msg_id) =>
            {
                Ok(Fence::At(m.sequence))
            }
            _ if fenced => Err(Error::Live {
                run: run.to_owned(),
                holder: Some(format!(
                    "a writer appended to it while it was being deleted, in stream {} on {}; nothing was deleted",
                    self.name,
                    self.server()
                )),
            }),
            // Unanswered, or refused for no reason of the fence's (those are
            // `Live` above, a full stream `Unfenced`): the server's failure.
            _ => Err(self.err(
                Some(run),
                format!("cannot fence the run on {subject} before deleting it ({why}); nothing was deleted"),
            )),
        }
    }

    /// Purge the run's messages (`<prefix>.<id>.>`) stored up to stream
    /// sequence `upto`; one stored after it survives. Returns how many were
    /// removed.
    async fn purge_through(&self, run: &str, upto: u64) -> Result<u64> {
        let filter = format!("{}.{run}.>", self.prefix);
        self.purge(&filter, Some(upto.saturating_add(1)))
            .await
            .map_err(|e| self.err(Some(run), format!("cannot purge {filter}: {e}")))
    }

    /// Purge the messages on `filter` (below stream sequence `below`, when
    /// given): how many were removed. A step of the crash seam
    /// (`conn.rs`'s `Cut`); the error is the server's words.
    pub(super) async fn purge(
        &self,
        filter: &str,
        below: Option<u64>,
    ) -> std::result::Result<u64, String> {
        use super::conn::Step;
        let step = self.conn.cut.step();
        if step == Step::Dead {
            return Err("no answer (the process is dead)".into());
        }
        let request = self.stream.purge().filter(filter);
        let done = match below {
            Some(n) => request.sequence(n).await,
            None => request.await,
        };
        match (step, done) {
            (Step::Go, Ok(r)) => Ok(r.purged),
            (Step::Go, Err(e)) => Err(e.to_string()),
            _ => Err("no answer (the process died)".into()),
        }
    }

    /// Delete the message at stream sequence `seq` (for a stream that
    /// denies purges but not deletes). A step of the crash seam; the error
    /// is the server's words.
    pub(super) async fn delete_msg(&self, seq: u64) -> std::result::Result<(), String> {
        use super::conn::Step;
        let step = self.conn.cut.step();
        if step == Step::Dead {
            return Err("no answer (the process is dead)".into());
        }
        let done = self.stream.delete_message(seq).await;
        match (step, done) {
            (Step::Go, Ok(_)) => Ok(()),
            (Step::Go, Err(e)) => Err(e.to_string()),
            _ => Err("no answer (the process died)".into()),
        }
    }

    /// Every message of the run, as `rm` keeps it: the records in seq
    /// order, one line each (a file journal), and beside them any message
    /// on a subject that names no record (damage, a foreign writer), with
    /// its subject, so nothing is lost. The tombstone of an interrupted
    /// delete is no part of the run and is not kept.
    pub(super) async fn to_keep(&self, run: &str) -> Result<ToKeep> {
        id::check(run)?;
        let mut messages = self.read_run(run, true).await?;
        let upto = messages.iter().map(|m| m.stream_seq).max().unwrap_or(0);
        let last = messages
            .iter()
            .filter_map(|m| m.subject_seq)
            .max()
            .unwrap_or(0);
        let fenced = messages
            .iter()
            .max_by_key(|m| m.stream_seq)
            .is_some_and(|m| is_tombstone(&m.body));
        let before = messages.len();
        messages.retain(|m| !is_tombstone(&m.body));
        let fences = (before - messages.len()) as u64;
        sort_by_seq(&mut messages);
        let journal = as_lines(messages.iter().filter(|m| m.subject_seq.is_some()));
        let mut others = Vec::new();
        for m in messages.iter().filter(|m| m.subject_seq.is_none()) {
            let line = serde_json::json!({
                "subject": m.subject,
                "stream_seq": m.stream_seq,
                "body": String::from_utf8_lossy(&m.body),
                "body_hex": crate::digest::hex(&m.body),
            });
            others.extend_from_slice(line.to_string().as_bytes());
            others.push(b'\n');
        }
        Ok(ToKeep {
            journal,
            others,
            upto,
            last,
            fenced,
            fences,
        })
    }

    /// Take back a fence that landed at stream sequence `at` on the
    /// subject of record `last + 1`, when the delete it was for cannot go
    /// on (its backup could not be written): the run is as it was.
    pub(super) async fn unfence(&self, run: &str, last: u64, at: u64) -> Result<()> {
        let subject = self.subject(run, last.saturating_add(1));
        self.purge(&subject, Some(at.saturating_add(1)))
            .await
            .map(|_| ())
            // A purge request that failed: the server's failure (what it
            // leaves of this run, and the way past it, is in the words).
            .map_err(|e| {
                self.err(
                    Some(run),
                    format!(
                        "the run was fenced for deletion, which then failed, and the fence on {subject} could not be taken back ({e}); delete the run again to finish"
                    ),
                )
            })
    }

    /// Take away the fences a delete or a recover left after the run's
    /// last record (`repair` on JetStream): the run is as it was before
    /// it was fenced. A delete's fence is taken back by a purge of its
    /// subject, or on a stream that denies purges by a message delete (a
    /// delete or recover there cannot finish: they need purges; issue
    /// 36.3). The subjects of the fences (taken away, or with `dry_run`
    /// that would be); empty when the run ends on none.
    pub(super) async fn take_fences(&self, run: &str, dry_run: bool) -> Result<Vec<String>> {
        id::check(run)?;
        let mut taken = Vec::new();
        loop {
            let Some(last) = self.last_of_run(run).await? else {
                return match taken.is_empty() {
                    true => Err(self.not_found(run)),
                    false => Ok(taken),
                };
            };
            if !is_tombstone(&last.payload) {
                return Ok(taken);
            }
            let subject = last.subject.to_string();
            if dry_run {
                taken.push(subject);
                return Ok(taken);
            }
            let done = match (self.config.deny_purge, self.config.deny_delete) {
                (false, _) => self
                    .purge(&subject, Some(last.sequence.saturating_add(1)))
                    .await
                    .map(|_| ()),
                (true, false) => self.delete_msg(last.sequence).await,
                (true, true) => {
                    return Err(Error::refused(
                        run,
                        format!(
                            "its last message, on {subject}, is the fence of a delete or recover that could not finish, and stream {} denies both purges and message deletes (deny_purge, deny_delete), so the fence cannot be taken away; copy the run off (fisk-admin migrate --from jetstream:{} --to DEST {run}), which leaves the fence behind",
                            self.name, self.name
                        ),
                    ))
                }
            };
            done.map_err(|e| {
                self.err(
                    Some(run),
                    format!("cannot take away the fence on {subject}: {e}"),
                )
            })?;
            taken.push(subject);
        }
    }

    /// Purge the messages [`to_keep`](Self::to_keep) read and the fence
    /// after them (up to stream sequence `upto`), once they are kept. The
    /// fence lets nothing be stored after it; a message stored anyway (a
    /// new run of the same id, created once the purge emptied it; or with
    /// no fence, a writer on a stream that was full) is not purged, and
    /// makes this a warning. Returns the messages purged and a warning
    /// when the run may not be gone entirely.
    pub(super) async fn purge_kept(&self, run: &str, upto: u64) -> Result<(u64, Option<String>)> {
        let purged = self.purge_through(run, upto).await?;
        let warning = match self.last_of_run(run).await {
            Ok(None) => None,
            Ok(Some(_)) => Some(format!(
                "a writer stored more of run {run} while it was deleted: the messages saved were \
                 purged, the newer ones are still on the stream; delete the run again once the \
                 writer has stopped (its backup will hold them)"
            )),
            Err(e) => Some(format!(
                "run {run} was purged, but whether anything was stored meanwhile could not be \
                 checked ({e}); list the store to see"
            )),
        };
        Ok((purged, warning))
    }
}
