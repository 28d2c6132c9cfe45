//! Reading through an ephemeral pull consumer: its configuration, the
//! batches (bounded by count and by bytes), and the server's answers that
//! end a batch without ending the read (409, 503), which async-nats
//! reports only as text.
//!
//! [`Drain`] is the one loop over a consumer's messages that every read
//! through a consumer uses (a long run, migrate's digests, migrate's bulk
//! read): it asks for batch after batch until the consumer's pending count
//! at creation has been seen, tells a batch that only ended from a read
//! that failed, and fails a read that stalls. Consumers count against the
//! stream's limits: whoever opens a drain closes it, whatever happened.

use super::core::Core;
use crate::error::{Error, Result};
use crate::nats;
use async_nats::jetstream;
use futures_util::StreamExt;
use std::time::Duration;

/// Bytes one pull request may bring (on top of its message count): what a
/// reader has in flight, whatever the size of the records. A message
/// larger than this is fetched on its own.
const FETCH_BYTES: usize = 8 << 20;

/// An ephemeral pull consumer for reading: no acks, everything from the
/// start, in memory. It is deleted when the read ends; the server drops it
/// 5 minutes after its last use should this process die first (long
/// enough for a bulk read paused while its copies catch up).
fn read_consumer_config(filter: String, filters: Vec<String>) -> jetstream::consumer::pull::Config {
    jetstream::consumer::pull::Config {
        filter_subject: filter,
        filter_subjects: filters,
        ack_policy: jetstream::consumer::AckPolicy::None,
        deliver_policy: jetstream::consumer::DeliverPolicy::All,
        inactive_threshold: Duration::from_secs(300),
        memory_storage: true,
        num_replicas: 1,
        ..Default::default()
    }
}

/// The batches of a pull consumer, each at most `max` messages and
/// [`FETCH_BYTES`] (so what is in flight is bounded by bytes, not only by
/// count), waiting at most the request timeout for them.
struct Pull {
    consumer: jetstream::consumer::PullConsumer,
    max: usize,
    /// The next message alone is larger than a batch may be: it is asked
    /// for on its own, with no byte limit.
    alone: bool,
    /// Pulls in a row the consumer was not there to answer (503).
    unanswered: u32,
}

/// Pulls in a row a consumer may leave unanswered (503, no responders)
/// before the read fails. In a cluster a new consumer answers only once
/// its leader has started, a moment after it was created; the waits
/// between pulls grow by 20 ms each (about 5 s in all).
const UNANSWERED_PULLS: u32 = 22;

impl Pull {
    fn new(consumer: jetstream::consumer::PullConsumer, max: usize) -> Pull {
        Pull {
            consumer,
            max,
            alone: false,
            unanswered: 0,
        }
    }

    /// The next batch: at most `max` of the `left` messages.
    async fn next(
        &mut self,
        left: u64,
    ) -> std::result::Result<jetstream::consumer::pull::Batch, jetstream::consumer::pull::BatchError>
    {
        if self.unanswered > 0 {
            tokio::time::sleep(Duration::from_millis(20 * u64::from(self.unanswered))).await;
        }
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(self.max);
        let fetch = self.consumer.fetch().expires(nats::REQUEST_TIMEOUT);
        let fetch = match std::mem::take(&mut self.alone) {
            true => fetch.max_messages(1),
            false => fetch.max_messages(want).max_bytes(FETCH_BYTES),
        };
        fetch.messages().await
    }

    /// Whether the error that ended a batch only ends the batch, and the
    /// read goes on with the next one. `got` messages came in the batch.
    /// async-nats reports the server's status only as text.
    ///
    /// - The batch is full (409 "Message Size Exceeds MaxBytes": the next
    ///   message would pass the byte limit). With nothing received, the
    ///   next message alone is larger than a batch: the next batch asks
    ///   for it alone.
    /// - Nothing answered the pull (503, no responders) and nothing came:
    ///   a new consumer in a cluster whose leader has not started yet.
    ///   The next pull waits a little, up to [`UNANSWERED_PULLS`] times.
    fn ended(&mut self, e: &(dyn std::error::Error + Send + Sync), got: u64) -> bool {
        let text = e.to_string();
        if text.contains("Message Size Exceeds MaxBytes") {
            self.alone |= got == 0;
            self.unanswered = 0;
            return true;
        }
        if got == 0 && text.contains("stream: 503") && self.unanswered < UNANSWERED_PULLS {
            self.unanswered += 1;
            return true;
        }
        false
    }

    /// Whether a batch that brought `got` messages is a stall: it brought
    /// nothing, and not for a message too large for a batch (which comes
    /// next on its own) nor for a consumer not answering yet (asked again).
    fn stalled(&mut self, got: u64) -> bool {
        if got > 0 {
            self.unanswered = 0;
            return false;
        }
        !self.alone && self.unanswered == 0
    }
}

/// What a [`Drain`] reads, for its errors.
pub(super) struct Reading<'a> {
    /// The run read, when one run is: the errors name it.
    pub(super) run: Option<&'a str>,
    /// What is read: a filter, or "N runs (<prefix>.<id>.>)".
    pub(super) what: &'a str,
    /// How a failed pull says what it was for: "read", "read back".
    pub(super) verb: &'a str,
    /// Messages asked for by one pull.
    pub(super) batch: usize,
}

/// The messages of one ephemeral consumer, to the end: its pending count
/// at creation, so the read knows where it ends (a consumer on an empty
/// filter would otherwise wait forever).
pub(super) struct Drain<'a> {
    store: &'a Core,
    reading: Reading<'a>,
    pull: Pull,
    batch: Option<jetstream::consumer::pull::Batch>,
    count: u64,
    /// Messages received so far, and when the current batch was asked for.
    seen: u64,
    before: u64,
}

impl Core {
    /// A drain of a new ephemeral consumer without acks over `filter` (or
    /// `filters`). The caller [closes](Drain::close) it.
    pub(super) async fn open_drain<'a>(
        &'a self,
        reading: Reading<'a>,
        filter: String,
        filters: Vec<String>,
    ) -> Result<Drain<'a>> {
        let consumer = self
            .stream
            .create_consumer(read_consumer_config(filter, filters))
            .await
            .map_err(|e| self.err(reading.run, format!("cannot read {}: {e}", reading.what)))?;
        let count = consumer.cached_info().num_pending;
        Ok(Drain {
            store: self,
            pull: Pull::new(consumer, reading.batch),
            reading,
            batch: None,
            count,
            seen: 0,
            before: 0,
        })
    }

    /// The filters of a consumer over these runs: the whole prefix when
    /// `whole`, else one filter a run.
    pub(super) fn runs_filter(&self, runs: &[String], whole: bool) -> (String, Vec<String>) {
        if whole {
            (format!("{}.>", self.prefix), Vec::new())
        } else {
            let f = runs.iter().map(|r| format!("{}.{r}.>", self.prefix));
            (String::new(), f.collect())
        }
    }
}

impl Drain<'_> {
    /// How many messages the consumer holds: what the drain reads.
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// The next message, `None` once all of them came.
    pub(super) async fn next(&mut self) -> Result<Option<jetstream::Message>> {
        self.next_when(|| true).await
    }

    /// [`next`](Self::next), asking for the next batch only once `ready`
    /// (polled every 2 ms until then).
    pub(super) async fn next_when(
        &mut self,
        ready: impl Fn() -> bool,
    ) -> Result<Option<jetstream::Message>> {
        let (run, what) = (self.reading.run, self.reading.what);
        loop {
            if let Some(batch) = self.batch.as_mut() {
                let got = self.seen - self.before;
                match batch.next().await {
                    Some(Ok(m)) => {
                        self.seen += 1;
                        return Ok(Some(m));
                    }
                    Some(Err(e)) if self.pull.ended(&*e, got) => {}
                    Some(Err(e)) => {
                        return Err(self.store.err(run, format!("reading {what} failed: {e}")))
                    }
                    None => {}
                }
                self.batch = None;
                if self.pull.stalled(got) {
                    return Err(self.stalled());
                }
            }
            if self.seen >= self.count {
                return Ok(None);
            }
            while !ready() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            self.before = self.seen;
            let batch = self.pull.next(self.count - self.seen).await.map_err(|e| {
                let verb = self.reading.verb;
                self.store.err(run, format!("cannot {verb} {what}: {e}"))
            })?;
            self.batch = Some(batch);
        }
    }

    fn stalled(&self) -> Error {
        self.store.err(
            self.reading.run,
            format!(
                "reading {} stalled after {} of {} messages (no message within {}s); is the server up? re-run to retry",
                self.reading.what,
                self.seen,
                self.count,
                nats::REQUEST_TIMEOUT.as_secs()
            ),
        )
    }

    /// Delete the consumer: consumers count against the stream's limits,
    /// never leave one behind.
    pub(super) async fn close(self) {
        let name = self.pull.consumer.cached_info().name.clone();
        let _ = self.store.stream.delete_consumer(&name).await;
    }
}
