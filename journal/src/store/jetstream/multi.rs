//! Batched direct gets (`multi_last`, nats-server 2.11 and later): the
//! last message on each of many subjects in one request, answered as a
//! run of messages on one reply subject and an end-of-batch status.
//! `list.rs` asks for literal subjects (meta records, tails); `gets.rs`
//! for whole runs (`<prefix>.<id>.>`: with one message a subject, SPEC 8,
//! the last message of each subject a wildcard matches is every record of
//! the run).

use super::core::Core;
use crate::nats::REQUEST_TIMEOUT;
use async_nats::jetstream::message::StreamMessage;
use async_nats::StatusCode;
use futures_util::StreamExt;

/// Bytes one batched get may bring: the server stops after the message
/// that passes this, and says how many it left out.
pub(super) const BATCH_BYTES: usize = 8 << 20;

/// Messages the server answers to one batched get at most
/// (`maxAllowedResponses`): more matched is refused whole (413).
pub(super) const MOST_ANSWERS: usize = 1024;

/// What one batched get brought.
pub(super) enum Answer {
    /// The messages, in the order the server sent them, and how many
    /// more it left out for [`BATCH_BYTES`].
    Got(Vec<StreamMessage>, u64),
    /// More messages matched than one answer may hold ([`MOST_ANSWERS`]).
    TooMany,
    /// No batched gets here (an older server, or no one answers direct
    /// gets): ask some other way.
    Unsupported,
}

/// One subscription asking batched gets of a stream, one at a time.
pub(super) struct MultiGet {
    client: async_nats::Client,
    sub: async_nats::Subscriber,
    inbox: String,
    to: String,
}

impl Core {
    /// A subscription for batched gets of this stream, on the connection
    /// of lane `lane` ([`reader`](Core::reader)).
    pub(super) async fn multi_get(&self, lane: usize) -> Result<MultiGet, String> {
        let client = self.reader(lane).await;
        let inbox = client.new_inbox();
        let sub = client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| e.to_string())?;
        let to = format!("{}.DIRECT.GET.{}", self.conn.api, self.name);
        Ok(MultiGet {
            client,
            sub,
            inbox,
            to,
        })
    }
}

impl MultiGet {
    /// The last message on each of `subjects` (literal or wildcards),
    /// stored at or before `up_to` when given. `Err` says why the server
    /// did not answer.
    pub(super) async fn ask<S: serde::Serialize>(
        &mut self,
        subjects: &[S],
        up_to: Option<u64>,
    ) -> Result<Answer, String> {
        let mut body = serde_json::json!({ "multi_last": subjects, "max_bytes": BATCH_BYTES });
        if let (Some(at), Some(o)) = (up_to, body.as_object_mut()) {
            o.insert("up_to_seq".into(), at.into());
        }
        let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        self.client
            .publish_with_reply(self.to.clone(), self.inbox.clone(), body.into())
            .await
            .map_err(|e| e.to_string())?;
        let mut got = Vec::new();
        loop {
            let m = match tokio::time::timeout(REQUEST_TIMEOUT, self.sub.next()).await {
                Ok(Some(m)) => m,
                Ok(None) => return Err("the connection closed".into()),
                Err(_) => return Err(format!("no answer within {}s", REQUEST_TIMEOUT.as_secs())),
            };
            let Some(status) = m.status else {
                got.push(StreamMessage::try_from(m).map_err(|e| e.to_string())?);
                continue;
            };
            let why = m.description.clone().unwrap_or_default();
            return match status.as_u16() {
                // End of batch: how many it left out.
                204 => Ok(Answer::Got(got, pending_of(&m))),
                // None of the subjects holds a message.
                404 if got.is_empty() && why == "No Results" => Ok(Answer::Got(got, 0)),
                413 if got.is_empty() => Ok(Answer::TooMany),
                // No batched gets here (408: an older server takes the
                // request for an empty one), or no one answers them.
                408 => Ok(Answer::Unsupported),
                _ if status == StatusCode::NO_RESPONDERS => Ok(Answer::Unsupported),
                _ => Err(format!("{} {why}", status.as_u16())),
            };
        }
    }
}

/// The messages a batched get's end-of-batch says it left out.
fn pending_of(m: &async_nats::Message) -> u64 {
    m.headers
        .as_ref()
        .and_then(|h| h.get("Nats-Num-Pending"))
        .and_then(|v| v.as_str().parse().ok())
        .unwrap_or(0)
}
