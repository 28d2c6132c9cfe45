//! Following a run on a stream (`show RUN --follow`): the run read as
//! always, then an ordered consumer on its subjects from the stream
//! sequence after the last message read, so nothing stored between the
//! read and the consumer is missed and nothing read is delivered again.
//! An ordered consumer (no acks, in memory, one replica) recreates itself
//! from the last sequence it delivered when the server loses it; it is
//! ephemeral, so the server drops it soon after the follower goes.

use super::blocking::JetStreamStore;
use super::conn::Rt;
use super::core::Core;
use super::subject::is_tombstone;
use super::{as_lines, sort_by_seq};
use crate::error::Result;
use crate::record::Record;
use async_nats::jetstream::consumer::{pull, DeliverPolicy};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

/// After the first new message, how long a poll waits for the next one
/// before it returns what it has: records a writer stores together come
/// back together.
const SETTLE: Duration = Duration::from_millis(20);

/// A JetStream run followed (what `Store::follow` starts on a stream).
pub struct JetStreamFollow {
    rt: Rt,
    core: Arc<Core>,
    run: String,
    messages: pull::Ordered,
    /// The highest record seq read or yielded: a new message for one at
    /// or below it is the run written anew (an upgrade).
    last: u64,
    /// The first stream sequence not seen yet. A consumer the server
    /// lost before it delivered anything is recreated from the stream's
    /// start (async-nats's ordered consumer): what it delivers again
    /// below this is passed over, not taken for a rewrite.
    unseen: u64,
}

impl JetStreamStore {
    /// Read `run` (its messages in seq order, as the lines of a journal)
    /// and open the consumer that follows it.
    pub(crate) fn follow(&self, run: &str) -> Result<(Vec<u8>, JetStreamFollow)> {
        let mut messages = self.read_messages(run)?;
        sort_by_seq(&mut messages);
        let next = messages.iter().map(|m| m.stream_seq).max().unwrap_or(0) + 1;
        let last = messages
            .iter()
            .filter_map(|m| m.subject_seq)
            .max()
            .unwrap_or(0);
        let core = self.core.clone();
        let filter = format!("{}.{run}.>", core.prefix);
        let opened = self.rt.block_on(async {
            let consumer = core
                .stream
                .create_consumer(pull::OrderedConfig {
                    filter_subject: filter,
                    deliver_policy: DeliverPolicy::ByStartSequence {
                        start_sequence: next,
                    },
                    ..Default::default()
                })
                .await
                .map_err(|e| core.err(Some(run), format!("cannot follow the run: {e}")))?;
            consumer
                .messages()
                .await
                .map_err(|e| core.err(Some(run), format!("cannot follow the run: {e}")))
        })?;
        let follow = JetStreamFollow {
            rt: self.rt.clone(),
            core,
            run: run.to_owned(),
            messages: opened,
            last,
            unseen: next,
        };
        Ok((as_lines(&messages), follow))
    }
}

impl JetStreamFollow {
    /// The records stored since the last call, each with its body: waits
    /// up to `wait` for one.
    pub(crate) fn poll(&mut self, wait: Duration) -> Result<Vec<(Vec<u8>, Record)>> {
        let mut out = Vec::new();
        let mut wait = wait;
        loop {
            // The timer is made inside the runtime: it needs its clock.
            let messages = &mut self.messages;
            let next = self
                .rt
                .block_on(async { tokio::time::timeout(wait, messages.next()).await });
            let m = match next {
                Err(_elapsed) => return Ok(out),
                Ok(None) => {
                    return Err(self
                        .core
                        .err(Some(&self.run), "the server ended the follow".into()))
                }
                Ok(Some(Err(e))) => {
                    return Err(self
                        .core
                        .err(Some(&self.run), format!("following the run: {e}")))
                }
                Ok(Some(Ok(m))) => m,
            };
            let stream_seq = m.info().map(|i| i.stream_sequence).map_err(|e| {
                self.core.err(
                    Some(&self.run),
                    format!("a message without JetStream metadata: {e}"),
                )
            })?;
            if stream_seq < self.unseen {
                continue;
            }
            self.unseen = stream_seq + 1;
            let subject = m.message.subject.to_string();
            let body = m.message.payload.to_vec();
            if is_tombstone(&body) {
                return Err(crate::Error::refused(
                    &self.run,
                    format!("the run was deleted while it was followed ({subject})"),
                ));
            }
            // Only record subjects hold records (verify reports the rest).
            let Some((_, Some(n))) = self.core.parse_subject(&subject) else {
                continue;
            };
            if n <= self.last {
                return Err(crate::Error::refused(
                    &self.run,
                    format!(
                        "record {n} was stored again on {subject} while the run was followed (an upgrade writes a run anew); follow it again to read the new one"
                    ),
                ));
            }
            let record = Record::decode(&body).map_err(|e| {
                self.core.corrupt(
                    &self.run,
                    subject.clone(),
                    usize::try_from(n).unwrap_or(0),
                    format!("the body on {subject} does not parse: {e}"),
                )
            })?;
            self.last = n;
            out.push((body, record));
            wait = SETTLE;
        }
    }
}
