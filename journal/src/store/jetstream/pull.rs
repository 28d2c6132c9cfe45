//! Reading through an ephemeral pull consumer: its configuration, the
//! batches (bounded by count and by bytes), and the server's answers that
//! end a batch without ending the read (409, 503), which async-nats
//! reports only as text.

use super::JetStreamStore;
use crate::error::{Error, Result};
use crate::nats;
use async_nats::jetstream;
use std::time::Duration;

/// Bytes one pull request may bring (on top of its message count): what a
/// reader has in flight, whatever the size of the records. A message
/// larger than this is fetched on its own.
const FETCH_BYTES: usize = 8 << 20;

/// An ephemeral pull consumer for reading: no acks, everything from the
/// start, in memory. It is deleted when the read ends; the server drops it
/// 5 minutes after its last use should this process die first (long
/// enough for a bulk read paused while its copies catch up).
pub(super) fn read_consumer_config(
    filter: String,
    filters: Vec<String>,
) -> jetstream::consumer::pull::Config {
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
pub(super) struct Pull<'a> {
    consumer: &'a jetstream::consumer::PullConsumer,
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

impl<'a> Pull<'a> {
    pub(super) fn new(consumer: &'a jetstream::consumer::PullConsumer, max: usize) -> Pull<'a> {
        Pull {
            consumer,
            max,
            alone: false,
            unanswered: 0,
        }
    }

    /// The next batch: at most `max` of the `left` messages.
    pub(super) async fn next(
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
    pub(super) fn ended(&mut self, e: &(dyn std::error::Error + Send + Sync), got: u64) -> bool {
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
    pub(super) fn stalled(&mut self, got: u64) -> bool {
        if got > 0 {
            self.unanswered = 0;
            return false;
        }
        !self.alone && self.unanswered == 0
    }
}

impl JetStreamStore {
    /// An ephemeral pull consumer without acks over these runs (over the
    /// whole prefix when `whole`); its pending count at creation says where
    /// the read ends. The caller deletes it.
    pub(super) async fn ephemeral_consumer(
        &self,
        runs: &[String],
        whole: bool,
        what: &str,
    ) -> Result<jetstream::consumer::PullConsumer> {
        let (filter, filters) = if whole {
            (format!("{}.>", self.prefix), Vec::new())
        } else {
            let f = runs.iter().map(|r| format!("{}.{r}.>", self.prefix));
            (String::new(), f.collect())
        };
        self.stream
            .create_consumer(read_consumer_config(filter, filters))
            .await
            .map_err(|e| self.err(None, format!("cannot read {what}: {e}")))
    }

    pub(super) fn stalled(&self, what: &str, seen: u64, count: u64) -> Error {
        self.err(
            None,
            format!(
                "reading {what} stalled after {seen} of {count} messages (no message within {}s); is the server up? re-run to retry",
                nats::REQUEST_TIMEOUT.as_secs()
            ),
        )
    }
}
