//! The fenced writer (SPEC 8): each record published with its msg id and
//! the literal fence on the record before it, and a refused or unanswered
//! publish told apart by what the target subject holds afterwards.
//!
//! [`Writer`] is the async core of it (no runtime); the public
//! [`JetStreamAppender`](super::JetStreamAppender) wraps one.

use super::conn::new_nonce;
use super::core::Core;
use super::subject::is_tombstone;
use crate::error::{Error, Remedy, Result};
use crate::fold::{check_append, Append};
use crate::id;
use crate::nats;
use async_nats::jetstream;
use std::sync::Arc;

/// The header the literal fence names its subject with (async-nats has no
/// constant for it).
pub const EXPECTED_SUBJECT_HEADER: &str = "Nats-Expected-Last-Subject-Sequence-Subject";

/// A message fenced as every write is (SPEC 8): stored only if the last
/// message on the subjects `on` (one subject, or a run's `PREFIX.RUN.>`)
/// is at stream sequence `expected` (0: there is none), once under
/// `msg_id`.
pub(super) fn fenced(
    body: impl Into<bytes::Bytes>,
    msg_id: String,
    expected: u64,
    on: String,
) -> jetstream::message::PublishMessage {
    jetstream::message::PublishMessage::build()
        .payload(body.into())
        .message_id(msg_id)
        .expected_last_subject_sequence(expected)
        .header(
            async_nats::HeaderName::from_static(EXPECTED_SUBJECT_HEADER),
            on,
        )
}
pub(super) const MSG_ID_HEADER: &str = "Nats-Msg-Id";

/// JetStream's error code for a failed fence (wrong last sequence), on one
/// server and on a replicated stream alike (journal/tests/cluster.rs pins
/// both on nats-server 2.15).
pub(super) const WRONG_LAST_SEQUENCE: u64 = 10071;
/// A replicated stream's leader refuses a fenced publish with this code
/// ("wrong last sequence", no sequence named) while an earlier publish
/// fenced on the same subject is still being replicated: not that the
/// fence failed, but that it cannot be decided yet (journal/tests/cluster.rs
/// races two publishes to pin it). Read as a refusal; on a replicated
/// stream the writer then looks whether its fence holds and, if so,
/// publishes again ([`Writer::fence_holds`]).
pub(super) const FENCE_IN_FLIGHT: u64 = 10164;
pub(super) const SUBJECT_FULL: u64 = 10077;
/// A replicated stream's leader: a message with this msg id is still being
/// replicated. Ours is the only publish with that id (its nonce is fresh
/// for every open), so it is this writer's earlier try, not yet decided.
pub(super) const DUPLICATE_IN_PROCESS: u64 = 10158;
/// JetStream: the message is larger than the stream's max message size.
pub(super) const MESSAGE_TOO_LARGE: u64 = 10054;

/// The JetStream error code a refused publish carries, if any.
/// Whether a 10077 is the stream's own limit (`max_bytes`, `max_msgs`
/// with discard new: every append is refused until there is room), not the
/// one-message-per-subject rule that fences a second writer. The server
/// words them "maximum bytes exceeded", "maximum messages exceeded" and
/// "maximum messages per subject exceeded".
pub(super) fn stream_full(e: &jetstream::context::PublishError) -> bool {
    let text = e.to_string();
    error_code(e) == Some(SUBJECT_FULL)
        && (text.contains("maximum bytes exceeded")
            || (text.contains("maximum messages exceeded") && !text.contains("per subject")))
}

/// Whether a publish was refused by its fence (SPEC 8): a wrong last
/// sequence (10071), a fence a replicated stream cannot decide yet (10164,
/// see [`FENCE_IN_FLIGHT`]) or a subject that already holds its message
/// (10077, when it is not the stream's own limit).
pub(super) fn refused_by_fence(e: &jetstream::context::PublishError) -> bool {
    use async_nats::jetstream::context::PublishErrorKind as K;
    e.kind() == K::WrongLastSequence
        || (!stream_full(e)
            && matches!(
                error_code(e),
                Some(WRONG_LAST_SEQUENCE | FENCE_IN_FLIGHT | SUBJECT_FULL)
            ))
}

pub(super) fn error_code(e: &jetstream::context::PublishError) -> Option<u64> {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<jetstream::Error>())
        .map(|j| j.error_code().0)
}

impl Core {
    /// A writer for a new run: its first append is seq 1 and fails when the
    /// run already exists.
    pub(super) async fn create(self: &Arc<Self>, run: &str) -> Result<Writer> {
        id::check(run)?;
        if self.last_of_run(run).await?.is_some() {
            return Err(self.exists_error(run));
        }
        self.writer(run, 0, 0)
    }

    /// A writer for a new run without looking first: the fence of its seq 1
    /// refuses it when anything is stored under the run's subjects
    /// (`Error::Exists` when the meta record is there, `Error::Live`
    /// otherwise). One round trip less than [`create`](Self::create), and
    /// none at all here.
    pub(super) fn create_new(self: &Arc<Self>, run: &str) -> Result<Writer> {
        id::check(run)?;
        self.writer(run, 0, 0)
    }

    /// A writer for a new run whose first record is seq `first` (a copy
    /// of records without their meta record): like
    /// [`create_new`](Self::create_new), its first publish expects nothing
    /// stored under the run's subjects.
    pub(super) fn create_from(self: &Arc<Self>, run: &str, first: u64) -> Result<Writer> {
        id::check(run)?;
        self.writer(run, first.saturating_sub(1), 0)
    }

    /// A writer for an existing run, continuing after its last record.
    /// A run that ends on a delete's fence is refused: that delete was
    /// interrupted (or is under way), and nothing may follow the fence.
    pub(super) async fn open(self: &Arc<Self>, run: &str) -> Result<Writer> {
        // A run being written whole is no run yet (`whole.rs`): its last
        // message may be a record, so the mark is looked for.
        if let Some(p) = self.pending(run).await? {
            return Err(p.refusal(run));
        }
        let (last, n) = self.tail(run).await?;
        if is_tombstone(&last.payload) {
            return Err(self.being_deleted(run, format!(
                "its last message, on {}, is the fence of a delete that was interrupted or is under way; nothing is appended after it",
                last.subject
            )));
        }
        self.writer(run, n, last.sequence)
    }

    /// A writer refused because the run is being deleted (`why`).
    fn being_deleted(&self, run: &str, why: String) -> Error {
        Error::refused_until(
            run,
            format!(
                "is being deleted in stream {} on {}: {why}",
                self.name,
                self.server()
            ),
            Remedy::Remove,
        )
    }

    pub(super) fn writer(
        self: &Arc<Self>,
        run: &str,
        last_seq: u64,
        last_stream_seq: u64,
    ) -> Result<Writer> {
        Ok(Writer {
            core: Arc::clone(self),
            run: run.to_owned(),
            nonce: new_nonce()?,
            last_seq,
            last_stream_seq,
            staged: false,
        })
    }
}

/// A fenced writer for one run (SPEC 8), async: the core of a
/// [`JetStreamAppender`](super::JetStreamAppender). The nonce is fresh for
/// every open, so a msg id never repeats across runs or opens.
#[derive(Clone)]
pub(super) struct Writer {
    pub(super) core: Arc<Core>,
    pub(super) run: String,
    nonce: String,
    pub(super) last_seq: u64,
    /// Stream sequence of the record at `last_seq` (0 for a new run).
    pub(super) last_stream_seq: u64,
    /// Record N goes to the run's staging subject `<prefix>.<id>._writing.<N>`
    /// instead of its record subject (`whole.rs`: a run replaced in place
    /// is written there first).
    pub(super) staged: bool,
}

impl Writer {
    /// This open's nonce: record N is published with msg id `<nonce>-<N>`.
    pub(super) fn nonce(&self) -> &str {
        &self.nonce
    }
    pub(super) fn msg_id(&self, seq: u64) -> String {
        format!("{}-{seq}", self.nonce)
    }

    /// The subject record `seq` is published on: its record subject, or
    /// its staging subject for a staged writer.
    pub(super) fn subject_of(&self, seq: u64) -> String {
        match self.staged {
            true => self.core.stage_subject(&self.run, seq),
            false => self.core.subject(&self.run, seq),
        }
    }

    /// Record `seq` as SPEC 8 publishes it: msg id `<nonce>-<seq>` and the
    /// fence, on the record before it (stored at stream sequence `prev`)
    /// or, for seq 1 (and the first record of a headless copy, which has
    /// no record before it: `prev` 0), on the whole run: empty (`prev`
    /// 0), or ending at `prev` (a run written whole after its mark,
    /// `whole.rs`: the mark, or the last staged record, is its last
    /// message).
    pub(super) fn fenced(
        &self,
        seq: u64,
        prev: u64,
        body: bytes::Bytes,
    ) -> jetstream::message::PublishMessage {
        let st = &self.core;
        let on = if seq == 1 || prev == 0 {
            // A new run: nothing may exist anywhere under the run's
            // subjects but what `prev` names (the agent's wildcard fence,
            // here on an empty run or one message, so constant cost). This
            // is what makes a create safe without looking first: a run that
            // holds anything else refuses it.
            format!("{}.{}.>", st.prefix, self.run)
        } else {
            self.subject_of(seq - 1)
        };
        fenced(body, self.msg_id(seq), prev, on)
    }

    /// [`Appender::append_raw`](crate::store::Appender::append_raw):
    /// `Ok(false)` for a duplicate, skipped.
    pub(super) async fn append_raw(&mut self, seq: u64, raw: &[u8]) -> Result<bool> {
        if !self.admit(seq)? {
            return Ok(false);
        }
        let stream_seq = self
            .publish_bytes(seq, bytes::Bytes::copy_from_slice(raw))
            .await?;
        self.last_seq = seq;
        self.last_stream_seq = stream_seq;
        Ok(true)
    }

    async fn publish_bytes(&self, seq: u64, raw: bytes::Bytes) -> Result<u64> {
        let st = &self.core;
        let raw_len = raw.len();
        let subject = self.subject_of(seq);
        let Some(outcome) = self.publish_riding(seq, &subject, raw).await else {
            return Err(st.err(
                Some(&self.run),
                format!(
                    "cannot publish seq {seq} to {}: the connection took no message for {}s; re-run to continue from the last stored record",
                    st.server(),
                    nats::REQUEST_TIMEOUT.as_secs()
                ),
            ));
        };
        match outcome {
            Ok(ack) if ack.stream == st.name => Ok(ack.sequence),
            // This subject's fault, not the store's: other runs go on.
            Ok(ack) => Err(st.overlap(
                &subject,
                format!(
                    "seq {seq} was stored in stream {} instead of {}; the subjects overlap, check the stream configuration",
                    ack.stream, st.name
                ),
            )),
            Err(e) => {
                use async_nats::jetstream::context::PublishErrorKind as K;
                let code = error_code(&e);
                // A full stream refuses every writer alike: it is the
                // store's limit, not a fence (issue 18).
                if stream_full(&e) {
                    return Err(Error::Unavailable {
                        at: st.place(),
                        message: format!(
                            "the stream is full and refuses every append ({e}); seq {seq} of run {} was not stored. Raise its limit (nats stream edit {} --max-bytes -1 --max-msgs -1) or make room",
                            self.run, st.name
                        ),
                    });
                }
                let fenced = refused_by_fence(&e);
                // Whether refused or unanswered, the target subject says
                // what happened.
                let mut found = st.last_on(&subject, false).await;
                if let Ok(Some(m)) = &found {
                    if self.is_ours(seq, m) {
                        return Ok(m.sequence); // our write; only its ack was lost
                    }
                }
                // A direct get may be answered by a replica that has not
                // applied our write yet (after a leader change): the
                // leader's answer is the one a fence goes by.
                if fenced && st.config.num_replicas > 1 {
                    if let Ok(m) = st.stream.get_last_raw_message_by_subject(&subject).await {
                        if self.is_ours(seq, &m) {
                            return Ok(m.sequence);
                        }
                        found = Ok(Some(m));
                    }
                }
                // Too large for this stream or server: the record's
                // fault, not the store's (other runs go on).
                if e.kind() == K::MaxPayloadExceeded || code == Some(MESSAGE_TOO_LARGE) {
                    return Err(Error::refused(
                        &self.run,
                        format!(
                            "seq {seq} ({} bytes) is larger than stream {} on {} accepts ({e}); raise the stream's max message size (nats stream edit {} --max-msg-size) or the server's max_payload",
                            raw_len,
                            st.name,
                            st.server(),
                            st.name
                        ),
                    ));
                }
                if fenced {
                    // Refused, and what the subject holds is unknown: not
                    // a verdict on another writer, a failure to re-run.
                    if let Err(read) = &found {
                        return Err(st.err(
                            Some(&self.run),
                            format!(
                                "seq {seq} on {subject} was refused by its fence ({e}) and reading the subject back failed ({read}); nothing was adopted, re-run to continue from the last stored record"
                            ),
                        ));
                    }
                    if let Ok(Some(m)) = &found {
                        if is_tombstone(&m.payload) {
                            let why = format!("a delete fenced it; seq {seq} was not stored, nor will any other record be");
                            return Err(st.being_deleted(&self.run, why));
                        }
                    }
                    // Nothing left of the run: a delete purged it.
                    if let (Ok(None), true) = (&found, seq > 1) {
                        if let Ok(None) = st.last_of_run(&self.run).await {
                            let why = format!("it was purged while this writer appended to it; seq {seq} was not stored");
                            return Err(st.being_deleted(&self.run, why));
                        }
                    }
                    return Err(match found {
                        Ok(Some(_)) if seq == 1 => Error::Exists {
                            run: self.run.clone(),
                            at: st.place(),
                        },
                        _ => Error::Live {
                            run: self.run.clone(),
                            holder: Some(format!(
                                "another writer appended to it in stream {} on {}: seq {seq} was refused by the fence",
                                st.name,
                                st.server()
                            )),
                        },
                    });
                }
                // Unanswered, or refused for none of the run's own reasons
                // above: the server's failure.
                Err(st.err(
                    Some(&self.run),
                    format!(
                        "publishing seq {seq} on {subject} failed: {e}; nothing was adopted, re-run to continue from the last stored record"
                    ),
                ))
            }
        }
    }
}

impl Writer {
    /// Whether `m` is record `seq` as this writer published it (its msg id).
    fn is_ours(&self, seq: u64, m: &async_nats::jetstream::message::StreamMessage) -> bool {
        m.headers
            .get(MSG_ID_HEADER)
            .is_some_and(|v| v.as_str() == self.msg_id(seq))
    }

    /// Publish record `seq` fenced, riding through a leader election: while
    /// no stream leader answers (no responders, or an ack that never came:
    /// the leader died, or one is being elected) and the
    /// [`Ride`](super::conn::Ride) allows (the connection up, the stream
    /// replicated), or while an earlier try of this message is still being
    /// replicated ([`DUPLICATE_IN_PROCESS`]), or while a replicated stream
    /// refuses a fence that holds (see [`fence_holds`](Self::fence_holds)),
    /// publish it again, the same message with the same msg id and fence,
    /// for up to [`RIDE_THROUGH`](super::conn::RIDE_THROUGH). A retry never stores
    /// the record twice: if the first publish was stored after all, the
    /// retry is a duplicate by msg id (acked with the first one's
    /// sequence) or is refused by its fence (and the caller reads our
    /// record back). A connection that is down, or a stream of one that
    /// does not answer, is not retried here: that error is returned at
    /// once.
    async fn publish_riding(
        &self,
        seq: u64,
        subject: &str,
        raw: bytes::Bytes,
    ) -> Option<std::result::Result<jetstream::publish::PublishAck, jetstream::context::PublishError>>
    {
        use async_nats::jetstream::context::PublishErrorKind as K;
        let st = &self.core;
        let ride = st.conn.ride(Some(st.config.num_replicas));
        let mut pause = std::time::Duration::from_millis(100);
        loop {
            let msg = self.fenced(seq, self.last_stream_seq, raw.clone());
            let outcome = st.conn.publish(subject.to_owned(), msg).await;
            // No leader answered, or our earlier try of this message is
            // still being replicated (10158): asked again, the server then
            // acks it as a duplicate or refuses its fence.
            let leaderless = matches!(&outcome, Some(Err(e)) if matches!(e.kind(), K::StreamNotFound | K::TimedOut)
                || error_code(e) == Some(DUPLICATE_IN_PROCESS));
            let refused = matches!(&outcome, Some(Err(e)) if refused_by_fence(e));
            // A refused fence is looked into only on a replicated stream,
            // which is in a cluster anyway: only the ride's time bounds it.
            if leaderless && ride.again(pause) {
                // Publish again below.
            } else if !(refused
                && st.config.num_replicas > 1
                && ride.left(pause)
                && self.fence_holds(seq).await)
            {
                return outcome;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_secs(1));
        }
    }

    /// Whether record `seq`'s fence holds now, as the stream's leader
    /// reads it: nothing is stored on its subject, and the record before
    /// it is where this writer stored it (for a new run: nothing is stored
    /// under the run's subjects). A replicated stream's leader refuses a
    /// fence it cannot decide yet ([`FENCE_IN_FLIGHT`], 10164: an earlier
    /// publish fenced on the same subject is still being replicated; issue
    /// 28 saw it under load with nothing else writing, on fences that
    /// held); such a refusal is published again, with the same msg id and
    /// fence, so the server decides again.
    async fn fence_holds(&self, seq: u64) -> bool {
        use async_nats::jetstream::stream::LastRawMessageErrorKind as K;
        let st = &self.core;
        if self.last_stream_seq == 0 || seq == 1 {
            return match st.last_of_run(&self.run).await {
                Ok(None) => self.last_stream_seq == 0,
                Ok(Some(m)) => self.last_stream_seq != 0 && m.sequence == self.last_stream_seq,
                Err(_) => false,
            };
        }
        let (target, before) = (self.subject_of(seq), self.subject_of(seq - 1));
        let stored = st.stream.get_last_raw_message_by_subject(&target).await;
        if !matches!(stored, Err(e) if e.kind() == K::NoMessageFound) {
            return false;
        }
        let prev = st.stream.get_last_raw_message_by_subject(&before).await;
        matches!(prev, Ok(m) if m.sequence == self.last_stream_seq)
    }

    /// [`Appender::check_held`](crate::store::Appender::check_held): the
    /// run's last message (over `<prefix>.<id>.>`) is still this writer's
    /// last record, else another writer (or a delete) took the run. A
    /// writer that has stored nothing yet has nothing to compare.
    pub(super) async fn check_held(&self) -> Result<()> {
        if self.last_stream_seq == 0 {
            return Ok(());
        }
        let st = &self.core;
        let last = st.last_of_run(&self.run).await?;
        match last {
            Some(m) if m.sequence == self.last_stream_seq => Ok(()),
            Some(m) if is_tombstone(&m.payload) => Err(st.being_deleted(
                &self.run,
                format!("a delete fenced it after seq {}; nothing more is run or stored", self.last_seq),
            )),
            None => Err(st.being_deleted(
                &self.run,
                format!("it was purged after seq {}; nothing more is run or stored", self.last_seq),
            )),
            Some(m) => Err(Error::Live {
                run: self.run.clone(),
                holder: Some(format!(
                    "another writer took it over in stream {} on {}: {} was stored after this writer's seq {}; nothing more is run or stored here",
                    st.name,
                    st.server(),
                    m.subject,
                    self.last_seq
                )),
            }),
        }
    }

    /// SPEC 2's decision for record `seq`: `true` to store it next,
    /// `false` for a duplicate (skipped), an error for a gap.
    fn admit(&self, seq: u64) -> Result<bool> {
        match check_append(self.last_seq, seq) {
            Append::Next => Ok(true),
            Append::Duplicate => Ok(false),
            // The run's records, not the store: nothing is published.
            Append::Gap => Err(Error::Gap {
                run: self.run.clone(),
                seq,
                last: self.last_seq,
            }),
        }
    }

    /// [`Appender::append_batch`](crate::store::Appender::append_batch), awaited
    /// on the caller's task: each record fenced on the one before it.
    pub(super) async fn append_bytes(
        &mut self,
        records: Vec<(u64, bytes::Bytes)>,
    ) -> (u64, Result<()>) {
        let mut stored = 0;
        for (seq, raw) in records {
            match self.admit(seq) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => return (stored, Err(e)),
            }
            match self.publish_bytes(seq, raw).await {
                Ok(stream_seq) => {
                    self.last_seq = seq;
                    self.last_stream_seq = stream_seq;
                    stored += 1;
                }
                Err(e) => return (stored, Err(e)),
            }
        }
        (stored, Ok(()))
    }
}
