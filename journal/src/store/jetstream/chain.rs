//! Creating many new runs at once with their appends pipelined: migrate's
//! way into a JetStream destination.
//!
//! A run's records must be fenced (SPEC 8): record N is published with the
//! literal fence on record N-1, whose stream sequence the fence names.
//! Waiting for each ack to learn that sequence makes every run a chain of
//! round trips. Here one publisher sends the records of run after run in a
//! single pipeline and *predicts* each sequence instead: message k of the
//! pipeline lands at stream sequence `base + k`, where `base` is the
//! acknowledged sequence of its first message.
//!
//! The prediction is checked by the server, not trusted:
//!
//! - every message but the first also carries `Nats-Expected-Last-Msg-Id`
//!   = the msg id of the message before it. The server stores a message
//!   only when the stream's last message is exactly our previous one, so
//!   a stored message proves that all the pipeline's earlier messages were
//!   stored, consecutively, with nothing else in between. The first
//!   refusal (a fence, a run that exists, a foreign message in between)
//!   therefore refuses everything after it (error 10070), never a hole;
//! - each record still carries its literal fence on the record before it,
//!   with the predicted sequence, exactly as a single append would (the
//!   two headers together refuse every writer the agent's fence refuses).
//!
//! After a refusal the pipeline is drained, and each run it interrupted
//! is finished by its own appender from its last acknowledged record,
//! with the same msg ids (so a write whose ack was lost is adopted) and
//! the usual disambiguation of a refused fence. When one run's own fence
//! refused it (the run exists), a new pipeline goes on with the next runs.
//! A foreign message between two of ours (another writer is busy on the
//! stream) turns the pipeline off for the rest of the call: each run is
//! then created on its own, a chain of round trips. No ack at all (the
//! server or the connection failed) fails the runs left and every run
//! after them, which a re-run continues.

use super::append::Writer;
use super::append::{error_code, MESSAGE_TOO_LARGE, SUBJECT_FULL, WRONG_LAST_SEQUENCE};
use super::core::Core;
use crate::error::Result;
use async_nats::jetstream::context::PublishAckFuture;
use bytes::Bytes;
use futures_util::StreamExt;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

/// A run for
/// [`JetStreamStore::create_runs`](super::JetStreamStore::create_runs):
/// its index (for the caller), id, and records (seq, body).
pub type NewRun = (usize, String, Vec<(u64, Vec<u8>)>);

/// The feeding side of
/// [`JetStreamStore::create_runs`](super::JetStreamStore::create_runs),
/// for threads outside the runtime: [`send`](Self::send) blocks while the
/// creator is `capacity` runs behind. Dropping every sender ends the creator's input.
/// Part of the blocking facade: the async core is only ever handed the
/// receiving side.
pub struct NewRunSender(tokio::sync::mpsc::Sender<NewRun>);

/// The creator's side of a [`NewRunSender`], handed to
/// [`JetStreamStore::create_runs`](super::JetStreamStore::create_runs)
/// (which awaits it in the core).
pub struct NewRunReceiver(tokio::sync::mpsc::Receiver<NewRun>);

/// A channel of new runs holding at most `capacity` (at least 1) not yet
/// taken by the creator.
pub fn new_runs(capacity: usize) -> (NewRunSender, NewRunReceiver) {
    let (tx, rx) = tokio::sync::mpsc::channel(capacity.max(1));
    (NewRunSender(tx), NewRunReceiver(rx))
}

impl NewRunSender {
    /// Hand a run to the creator, waiting while it is full. `Err` gives the
    /// run back when the creator is gone.
    pub fn send(&self, run: NewRun) -> std::result::Result<(), NewRun> {
        self.0.blocking_send(run).map_err(|e| e.0)
    }
}

impl NewRunReceiver {
    /// The next run, waiting for it on this thread: for the facade only,
    /// outside the runtime (the core awaits the channel instead).
    pub(super) fn recv_here(&mut self) -> Option<NewRun> {
        self.0.blocking_recv()
    }
}

/// Messages the pipeline keeps unacknowledged: well below the client's
/// command buffer ([`crate::nats::CLIENT_CAPACITY`]), which must keep room
/// for the requests the error handling makes while the connection is down.
const WINDOW: usize = 2048;

/// JetStream: `Nats-Expected-Last-Msg-Id` does not match the stream's
/// last message.
const WRONG_LAST_MSG_ID: u64 = 10070;

/// A run being created on the pipeline.
struct Chained {
    /// The caller's index.
    i: usize,
    app: Writer,
    records: Vec<(u64, Bytes)>,
    /// Records published, and acknowledged (a prefix of them).
    sent: usize,
    acked: usize,
    /// Stream sequence of the last record published (predicted until its
    /// ack arrives).
    prev: u64,
}

/// Why a message was not handed to the connection.
enum Unsent {
    /// Larger than the server takes: its run's own fault (its appender
    /// reports it).
    TooLarge,
    Failed(String),
}

/// How a pipeline ended.
enum Ended {
    /// Every run handed in was created (or reported).
    Closed,
    /// One run's own fence or size refused it: the runs left are finished
    /// one by one (which says what is wrong), then a new pipeline follows.
    Refused,
    /// Another writer's message came between two of ours: the runs left
    /// are finished one by one, and so is every run after them.
    Foreign,
    /// No answer (the server or the connection failed): the runs left fail
    /// with this reason, and so does every run after them, unattempted (a
    /// re-run continues them all).
    Failed(String),
}

impl Core {
    /// [`JetStreamStore::create_runs`](super::JetStreamStore::create_runs)
    /// (see there), awaited: `done` gets each run's index, the records
    /// stored, and how it ended.
    pub(super) async fn create_runs(
        self: &Arc<Self>,
        items: NewRunReceiver,
        inflight: usize,
        exists: &HashSet<String>,
        mut done: impl FnMut(usize, u64, Result<()>),
    ) {
        let mut rx = items.0;
        // A clustered stream checks a fence before the message before it
        // is stored (while it is still being proposed), so a pipeline
        // would be refused at every second record: runs go one by one.
        let mut pipelined = self.config.num_replicas <= 1;
        while pipelined {
            let mut left = Vec::new();
            let ended = self.pipeline(&mut rx, exists, &mut done, &mut left).await;
            if let Ended::Failed(why) = &ended {
                for c in left.drain(..) {
                    let e = self.err(Some(&c.app.run), format!("{why}; re-run to continue"));
                    done(c.i, c.acked as u64, Err(e));
                }
            }
            let finished = futures_util::stream::iter(left)
                .map(|mut c| async move {
                    let rest = c.records.split_off(c.acked);
                    let (n, r) = c.app.append_bytes(rest).await;
                    (c.i, c.acked as u64 + n, r)
                })
                .buffer_unordered(inflight.max(1));
            let mut finished = std::pin::pin!(finished);
            while let Some((i, n, r)) = finished.next().await {
                done(i, n, r);
            }
            match ended {
                Ended::Closed => return,
                Ended::Refused => {}
                Ended::Foreign => pipelined = false,
                // Every run would wait out the same timeout: none is
                // attempted (migrate stops handing them in).
                Ended::Failed(why) => {
                    while let Some((i, run, _)) = rx.recv().await {
                        let e = self.err(
                            Some(&run),
                            format!("not attempted: {why}; re-run to continue"),
                        );
                        done(i, 0, Err(e));
                    }
                    return;
                }
            }
        }
        // Another writer is busy on the stream, or the stream is
        // replicated: each run on its own.
        let runs =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|x| (x, rx)) },
            );
        let ended = runs
            .map(|(i, run, records)| async move {
                if exists.contains(&run) {
                    return (i, 0, Err(self.exists_error(&run)));
                }
                match self.create_new(&run) {
                    Ok(mut app) => {
                        let records = records.into_iter().map(|(s, b)| (s, b.into()));
                        let (n, r) = app.append_bytes(records.collect()).await;
                        (i, n, r)
                    }
                    Err(e) => (i, 0, Err(e)),
                }
            })
            .buffer_unordered(inflight.max(1));
        let mut ended = std::pin::pin!(ended);
        while let Some((i, n, r)) = ended.next().await {
            done(i, n, r);
        }
    }

    /// One pipeline: runs from `rx` until it closes or a message is
    /// refused. Returns how it ended; the runs it left unfinished are
    /// added to `left`.
    async fn pipeline(
        self: &Arc<Self>,
        rx: &mut tokio::sync::mpsc::Receiver<NewRun>,
        exists: &HashSet<String>,
        done: &mut impl FnMut(usize, u64, Result<()>),
        left: &mut Vec<Chained>,
    ) -> Ended {
        // Runs with records not yet acknowledged, in pipeline order; the
        // window's acks belong to them in the same order.
        let mut runs: VecDeque<Chained> = VecDeque::new();
        let mut window: VecDeque<PublishAckFuture> = VecDeque::new();
        // Stream sequence of the pipeline's first message, once acked.
        let mut base: Option<u64> = None;
        let mut k: u64 = 0;
        let mut last_id: Option<String> = None;
        let mut closed = false;
        loop {
            let publishing = runs.back().is_some_and(|c| c.sent < c.records.len());
            let first_unacked = base.is_none() && !window.is_empty();
            if !publishing && !closed && !first_unacked && window.len() < WINDOW {
                // The next run: wait for one only when nothing is in flight.
                let next = if window.is_empty() {
                    // Everything sent is stored: the next message starts
                    // the pipeline afresh (a write by another writer while
                    // this one waits is then no refusal).
                    base = None;
                    k = 0;
                    last_id = None;
                    rx.recv().await
                } else {
                    match rx.try_recv() {
                        Ok(x) => Some(x),
                        Err(tokio::sync::mpsc::error::TryRecvError::Empty) => None,
                        Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                            closed = true;
                            None
                        }
                    }
                };
                match next {
                    Some((i, run, records)) => {
                        match self.start(i, &run, records, exists, done) {
                            Some((c, true)) => runs.push_back(c),
                            Some((c, false)) => left.push(c),
                            None => {}
                        }
                        continue;
                    }
                    None if window.is_empty() => closed = true,
                    None => {}
                }
            }
            if closed && window.is_empty() {
                left.extend(runs);
                return Ended::Closed;
            }
            let publishing = runs.back().is_some_and(|c| c.sent < c.records.len());
            if publishing && window.len() < WINDOW && !first_unacked {
                let Some(c) = runs.back_mut() else { continue };
                let Some((seq, body)) = c.records.get(c.sent).cloned() else {
                    continue;
                };
                let id = c.app.msg_id(seq);
                let mut msg = c.app.fenced(seq, c.prev, body);
                if let Some(last) = &last_id {
                    msg = msg.expected_last_message_id(last);
                }
                let subject = self.subject(&c.app.run, seq);
                match self.send(subject, msg).await {
                    Ok(ack) => window.push_back(ack),
                    // Not sent, its run's fault: what was sent stands.
                    Err(Unsent::TooLarge) => {
                        return self.drain(runs, window, false, Ended::Refused, left).await
                    }
                    Err(Unsent::Failed(why)) => {
                        return self
                            .drain(runs, window, false, Ended::Failed(why), left)
                            .await
                    }
                }
                c.sent += 1;
                c.prev = base.map_or(0, |b| b + k);
                k += 1;
                last_id = Some(id);
                continue;
            }
            // Wait for the oldest ack.
            let Some(ack) = window.pop_front() else {
                continue;
            };
            let outcome = ack.await;
            let Some(c) = runs.front_mut() else {
                let why = "an acknowledgement without its run".to_owned();
                return self
                    .drain(runs, window, false, Ended::Failed(why), left)
                    .await;
            };
            match outcome {
                Ok(a) if a.stream == self.name => {
                    if base.is_none() {
                        base = Some(a.sequence);
                        c.prev = a.sequence;
                    }
                    let seq = c.records.get(c.acked).map_or(0, |(s, _)| *s);
                    c.acked += 1;
                    c.app.last_seq = seq;
                    c.app.last_stream_seq = a.sequence;
                    if c.acked == c.records.len() {
                        if let Some(c) = runs.pop_front() {
                            done(c.i, c.acked as u64, Ok(()));
                        }
                    }
                }
                // Stored in another stream: the runs left go one by one,
                // which says what is wrong.
                Ok(_) => return self.drain(runs, window, true, Ended::Foreign, left).await,
                Err(e) => {
                    let ended = match error_code(&e) {
                        Some(WRONG_LAST_SEQUENCE | SUBJECT_FULL | MESSAGE_TOO_LARGE) => {
                            Ended::Refused
                        }
                        Some(WRONG_LAST_MSG_ID) => Ended::Foreign,
                        _ => Ended::Failed(format!(
                            "stream {} on {} did not store a record of run {} ({e})",
                            self.name,
                            self.server(),
                            c.app.run
                        )),
                    };
                    return self.drain(runs, window, true, ended, left).await;
                }
            }
        }
    }

    /// A run handed in: reported at once (it exists, its id is bad), or
    /// ready for the pipeline (`true`) or for its own appender (`false`:
    /// its records are not exactly seqs 1..N, which the appender reports).
    fn start(
        self: &Arc<Self>,
        i: usize,
        run: &str,
        records: Vec<(u64, Vec<u8>)>,
        exists: &HashSet<String>,
        done: &mut impl FnMut(usize, u64, Result<()>),
    ) -> Option<(Chained, bool)> {
        if exists.contains(run) {
            done(i, 0, Err(self.exists_error(run)));
            return None;
        }
        let app = match self.create_new(run) {
            Ok(app) => app,
            Err(e) => {
                done(i, 0, Err(e));
                return None;
            }
        };
        let regular = !records.is_empty()
            && records
                .iter()
                .enumerate()
                .all(|(n, (seq, _))| *seq == n as u64 + 1);
        let c = Chained {
            i,
            app,
            records: records.into_iter().map(|(s, b)| (s, b.into())).collect(),
            sent: 0,
            acked: 0,
            prev: 0,
        };
        Some((c, regular))
    }

    /// After a refusal: take the acks still due (all refused, by the chain
    /// of msg ids) and add the runs left unfinished to `left`, each with
    /// its acknowledged prefix. The acks are awaited together, so their
    /// timeouts run at once; after a failure (`Ended::Failed`) they are not
    /// awaited at all: the runs left fail, and a re-run continues them.
    /// `popped`: the front run's first unacknowledged message has already
    /// been taken from the window (and failed).
    async fn drain(
        &self,
        runs: VecDeque<Chained>,
        window: VecDeque<PublishAckFuture>,
        popped: bool,
        ended: Ended,
        left: &mut Vec<Chained>,
    ) -> Ended {
        let acks = match ended {
            Ended::Failed(_) => Vec::new(),
            _ => {
                futures_util::future::join_all(
                    window.into_iter().map(std::future::IntoFuture::into_future),
                )
                .await
            }
        };
        let mut acks = acks.into_iter();
        for (n, mut c) in runs.into_iter().enumerate() {
            let failed = popped && n == 0;
            let due = (c.sent - c.acked).saturating_sub(usize::from(failed));
            let mut ok = !failed;
            for _ in 0..due {
                match acks.next() {
                    Some(Ok(a)) if ok && a.stream == self.name => {
                        let seq = c.records.get(c.acked).map_or(0, |(s, _)| *s);
                        c.acked += 1;
                        c.app.last_seq = seq;
                        c.app.last_stream_seq = a.sequence;
                    }
                    _ => ok = false,
                }
            }
            c.sent = c.acked;
            left.push(c);
        }
        ended
    }

    /// Hand one message to the connection, within the request timeout: a
    /// connection that is down stops taking messages once its buffer is
    /// full, and would otherwise hold the pipeline for ever.
    async fn send(
        &self,
        subject: String,
        msg: async_nats::jetstream::message::PublishMessage,
    ) -> std::result::Result<PublishAckFuture, Unsent> {
        use async_nats::jetstream::context::PublishErrorKind as K;
        let sent = tokio::time::timeout(
            crate::nats::REQUEST_TIMEOUT,
            self.conn.js.send_publish(subject, msg),
        )
        .await;
        match sent {
            Ok(Ok(ack)) => Ok(ack),
            Ok(Err(e)) if e.kind() == K::MaxPayloadExceeded => Err(Unsent::TooLarge),
            Ok(Err(e)) => Err(Unsent::Failed(format!(
                "cannot publish to {}: {e}",
                self.server()
            ))),
            Err(_) => Err(Unsent::Failed(format!(
                "cannot publish to {}: the connection took no message for {}s",
                self.server(),
                crate::nats::REQUEST_TIMEOUT.as_secs()
            ))),
        }
    }
}
