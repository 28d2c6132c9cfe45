//! The audit log on a stream (issue 38): entry `n` on
//! `<prefix>._audit.<n>` of the sessions stream. `_audit` is no run id, so
//! the agent's listing (`<prefix>.*._meta`) and its reads of a run
//! (`<prefix>.<id>.>`) never meet these subjects, and neither does any
//! delete of a run; fisk-admin's own walks of every subject leave them out
//! (`orphan.rs`).
//!
//! An entry is appended as a record is (SPEC 8): published with a msg id
//! of its own and fenced on the log's last message (the wildcard fence on
//! `<prefix>._audit.>`), so two invocations never store two entries under
//! one number or out of order; a fence refused reads the log's end again
//! and numbers the entry after it. A publish whose answer was lost is
//! adopted when the subject holds its msg id. The message's store time is
//! the entry's time as the store has it.

use super::append::{error_code, fenced, refused_by_fence};
use super::core::Core;
use super::pull::Reading;
use crate::audit::{link, Entry, TOKEN};
use crate::error::{Error, Result};
use async_nats::jetstream;

/// A message of the log as stored.
#[derive(Debug, Clone)]
pub struct LogMessage {
    /// The entry number its subject names (`None`: a subject that names none).
    pub n: Option<u64>,
    /// Its subject.
    pub subject: String,
    /// Its stream sequence.
    pub stream_seq: u64,
    /// When the server stored it.
    pub stored: crate::time::Time,
    /// Its body.
    pub body: Vec<u8>,
}

/// Tries of one append against other appenders before it gives up.
const TRIES: usize = 32;

impl Core {
    /// `<prefix>._audit.>`.
    pub(super) fn audit_filter(&self) -> String {
        format!("{}.{TOKEN}.>", self.prefix)
    }

    /// `<prefix>._audit.<n>`.
    fn audit_subject(&self, n: u64) -> String {
        format!("{}.{TOKEN}.{n}", self.prefix)
    }

    /// Whether `subject` is one of the log's.
    pub(super) fn is_audit_subject(&self, subject: &str) -> bool {
        subject
            .strip_prefix(&self.prefix)
            .and_then(|r| r.strip_prefix('.'))
            .and_then(|r| r.strip_prefix(TOKEN))
            .is_some_and(|r| r.starts_with('.'))
    }

    fn audit_error(&self, message: String) -> Error {
        Error::Audit {
            at: self.place(),
            message,
        }
    }

    /// Append the entry `make` makes for its number and link, fenced on
    /// the log's end. Returns the entry's number and bytes.
    pub(super) async fn audit_append(
        &self,
        make: &mut (dyn FnMut(u64, Option<String>) -> Vec<u8> + Send),
    ) -> Result<(u64, Vec<u8>)> {
        let filter = self.audit_filter();
        let nonce = crate::digest::random_hex::<12>().map_err(|e| {
            self.audit_error(format!(
                "no randomness for a msg id: {e}; nothing was written"
            ))
        })?;
        for _ in 0..TRIES {
            let last = self.last_on(&filter, true).await.map_err(|e| {
                self.audit_error(format!(
                    "cannot read its last entry: {e}; nothing was written"
                ))
            })?;
            let (n, prev, fence) = match &last {
                None => (0, None, 0),
                Some(m) => {
                    let n = m
                        .subject
                        .rsplit('.')
                        .next()
                        .and_then(|t| t.parse::<u64>().ok())
                        .or_else(|| Entry::decode(&m.payload).ok().map(|e| e.n))
                        .unwrap_or(0);
                    (n, Some(link(&m.payload)), m.sequence)
                }
            };
            let line = make(n + 1, prev);
            let subject = self.audit_subject(n + 1);
            let msg_id = format!("{nonce}-{}", n + 1);
            let msg = fenced(line.clone(), msg_id.clone(), fence, filter.clone());
            let outcome = self.conn.publish(subject.clone(), msg).await;
            let refused = match outcome {
                Some(Ok(ack)) if ack.stream == self.name => return Ok((n + 1, line)),
                Some(Ok(ack)) => {
                    return Err(self.audit_error(format!(
                        "entry {} was stored in stream {} instead of {}: the subjects overlap; check the stream configuration",
                        n + 1,
                        ack.stream,
                        self.name
                    )))
                }
                // A full stream refuses every append alike: the store's
                // limit (as for a record), not another appender.
                Some(Err(e)) if super::append::stream_full(&e) => {
                    return Err(Error::Unavailable {
                        at: self.place(),
                        message: format!(
                            "the stream is full and refuses every append ({e}); the audit log's entry {} was not stored, so nothing was written. Raise its limit (nats stream edit {} --max-bytes -1 --max-msgs -1) or make room",
                            n + 1,
                            self.name
                        ),
                    })
                }
                Some(Err(e)) if refused_by_fence(&e) => true,
                Some(Err(e)) => {
                    let too_large = error_code(&e) == Some(10054)
                        || e.kind() == jetstream::context::PublishErrorKind::MaxPayloadExceeded;
                    let why = match too_large {
                        true => format!("entry {} ({} bytes) is larger than the stream takes ({e})", n + 1, line.len()),
                        false => format!("entry {} was not stored ({e})", n + 1),
                    };
                    // Lost, or refused: the subject says which.
                    if self.audit_is_ours(&subject, &msg_id).await {
                        return Ok((n + 1, line));
                    }
                    return Err(self.audit_error(format!("{why}; nothing was written")));
                }
                None => false,
            };
            if self.audit_is_ours(&subject, &msg_id).await {
                return Ok((n + 1, line));
            }
            if !refused {
                return Err(self.audit_error(format!(
                    "entry {} got no answer from {}; nothing was written",
                    n + 1,
                    self.server()
                )));
            }
            // Another appender took the number: number after it.
        }
        Err(self.audit_error(format!(
            "{TRIES} appends in a row were beaten by other appenders; nothing was written, try again"
        )))
    }

    /// Whether `subject` holds the message published with `msg_id`.
    async fn audit_is_ours(&self, subject: &str, msg_id: &str) -> bool {
        matches!(
            self.last_on(subject, false).await,
            Ok(Some(m)) if m.headers.get(super::append::MSG_ID_HEADER).is_some_and(|v| v.as_str() == msg_id)
        )
    }

    /// Every message of the log, in stream order; empty when there is none.
    pub(super) async fn audit_read(&self) -> Result<Vec<LogMessage>> {
        let filter = self.audit_filter();
        if self.last_on(&filter, true).await?.is_none() {
            return Ok(Vec::new());
        }
        let reading = Reading {
            run: None,
            what: &filter,
            verb: "read",
            batch: 10_000,
        };
        let mut drain = self.open_drain(reading, filter.clone(), Vec::new()).await?;
        let mut out = Vec::new();
        let read: Result<()> = async {
            while let Some(m) = drain.next().await? {
                let info = m.info().map_err(|e| {
                    self.err(None, format!("a message without JetStream metadata: {e}"))
                })?;
                let subject = m.message.subject.to_string();
                out.push(LogMessage {
                    n: subject.rsplit('.').next().and_then(|t| t.parse().ok()),
                    stream_seq: info.stream_sequence,
                    stored: crate::time::Time::from_system(std::time::SystemTime::from(
                        info.published,
                    )),
                    subject,
                    body: m.message.payload.to_vec(),
                });
            }
            Ok(())
        }
        .await;
        drain.close().await;
        read?;
        // In the log's order: by the entry number its subject names (a
        // message published again to a subject has a later stream
        // sequence, but keeps its place).
        out.sort_by_key(|m| (m.n.unwrap_or(u64::MAX), m.stream_seq));
        Ok(out)
    }
}
