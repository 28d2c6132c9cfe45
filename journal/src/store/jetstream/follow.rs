//! Following a run on a stream (`show RUN --follow`): the run read as
//! always, then an ordered consumer on its subjects from the stream
//! sequence after the last message read, so nothing stored between the
//! read and the consumer is missed and nothing read is delivered again.
//! The consumer is ephemeral, so the server drops it soon after the
//! follower goes.
//!
//! A server that dies or freezes, or a stream deleted, used to leave the
//! follower waiting in silence, and one restarted failed it with
//! "consumer not found" (issue 36.5). Now the follower keeps the stream
//! sequence of what it has seen and looks after its own consumer: after
//! [`CHECK`] of silence it asks the server whether the stream is there
//! and holds nothing of the run it has not delivered (each ask bounded by
//! the request timeout); a consumer that fails or falls behind is opened
//! again from there. A server that does not answer is said once
//! ([`JetStreamFollow::notice`]) and waited for, and said again once it
//! answers; a stream or run deleted ends the follow, saying so.

use super::blocking::JetStreamStore;
use super::conn::Rt;
use super::core::Core;
use super::subject::is_tombstone;
use super::{as_lines, sort_by_seq};
use crate::error::Result;
use crate::record::Record;
use crate::store::follow::Notice;
use async_nats::jetstream::consumer::{pull, DeliverPolicy};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After the first new message, how long a poll waits for the next one
/// before it returns what it has: records a writer stores together come
/// back together.
const SETTLE: Duration = Duration::from_millis(20);

/// How long the follower waits in silence before it asks whether the
/// server is there (and its consumer has missed nothing).
const CHECK: Duration = Duration::from_secs(1);

/// A JetStream run followed (what `Store::follow` starts on a stream).
pub struct JetStreamFollow {
    rt: Rt,
    core: Arc<Core>,
    run: String,
    /// The consumer; `None` once it failed, until it is opened again.
    messages: Option<pull::Ordered>,
    /// The highest record seq read or yielded: a new message for one at
    /// or below it is the run written anew (an upgrade).
    last: u64,
    /// The first stream sequence not seen yet: a consumer is opened from
    /// here, and what one delivers below it is passed over.
    unseen: u64,
    /// When the server last showed it was there (a message, an answer).
    heard: Instant,
    /// The server does not answer: said once, until it does again.
    down: bool,
    /// What the follower has to say, once (the server gone, or back).
    notice: Option<Notice>,
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
        let opened = self.rt.block_on(open(&self.core, run, next))?;
        let follow = JetStreamFollow {
            rt: self.rt.clone(),
            core: self.core.clone(),
            run: run.to_owned(),
            messages: Some(opened),
            last,
            unseen: next,
            heard: Instant::now(),
            down: false,
            notice: None,
        };
        Ok((as_lines(&messages), follow))
    }
}

/// An ordered consumer on `run`'s subjects from stream sequence `from`,
/// on the stream as the server has it now (looked up again: it may have
/// been recreated). `Error::NoStream` when the stream is gone.
async fn open(core: &Core, run: &str, from: u64) -> Result<pull::Ordered> {
    let stream = core.conn.stream(&core.name).await?;
    let filter = format!("{}.{run}.>", core.prefix);
    let consumer = stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: filter,
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: from,
            },
            ..Default::default()
        })
        .await
        .map_err(|e| core.err(Some(run), format!("cannot follow the run: {e}")))?;
    consumer
        .messages()
        .await
        .map_err(|e| core.err(Some(run), format!("cannot follow the run: {e}")))
}

/// What a look at the server found.
enum Look {
    /// There, and the consumer has missed nothing.
    Fine,
    /// There, and the stream holds a message of the run the consumer has
    /// not delivered: open it again.
    Behind,
}

impl JetStreamFollow {
    /// What the follower has to say since the last call, once: the server
    /// does not answer (it waits), or answers again (it goes on).
    pub(crate) fn notice(&mut self) -> Option<Notice> {
        self.notice.take()
    }

    /// The server does not answer (`why`): said once; the consumer is
    /// opened again once it does.
    fn lost(&mut self, why: &crate::Error) {
        self.messages = None;
        if !self.down {
            self.down = true;
            self.notice = Some(Notice::Waiting {
                why: why.to_string(),
            });
        }
    }

    /// The server answers (again).
    fn heard(&mut self) {
        self.heard = Instant::now();
        if std::mem::take(&mut self.down) {
            self.notice = Some(Notice::Back {
                run: self.run.clone(),
            });
        }
    }

    /// The follow cannot go on: the stream or the run is gone.
    fn gone(&self, e: crate::Error) -> crate::Error {
        match e {
            crate::Error::NoStream { stream, .. } => crate::Error::refused(
                &self.run,
                format!("stream {stream} was deleted while the run was followed"),
            ),
            e => e,
        }
    }

    /// Whether the server is there and the consumer has missed nothing
    /// (one stream lookup and one direct get, each bounded by the request
    /// timeout); a run with no message left was deleted.
    fn look(&self) -> Result<Look> {
        let core = &self.core;
        let run = &self.run;
        self.rt.block_on(async {
            core.conn.stream(&core.name).await?;
            match core.last_of_run(run).await? {
                None => Err(crate::Error::refused(
                    run,
                    "the run was deleted while it was followed (no message of it is left)",
                )),
                Some(m) if m.sequence >= self.unseen => Ok(Look::Behind),
                Some(_) => Ok(Look::Fine),
            }
        })
    }

    /// The records stored since the last call, each with its body: waits
    /// up to `wait` for one.
    pub(crate) fn poll(&mut self, wait: Duration) -> Result<Vec<(Vec<u8>, Record)>> {
        let mut out = Vec::new();
        let mut wait = wait;
        loop {
            if self.messages.is_none() {
                let reopened = self.rt.block_on(open(&self.core, &self.run, self.unseen));
                match reopened {
                    Ok(m) => {
                        self.messages = Some(m);
                        self.heard();
                    }
                    Err(e @ crate::Error::NoStream { .. }) => return Err(self.gone(e)),
                    Err(e) => {
                        self.lost(&e);
                        // Not asked again sooner than a check would be.
                        std::thread::sleep(wait.min(CHECK));
                        return Ok(out);
                    }
                }
            }
            let Some(messages) = self.messages.as_mut() else {
                return Ok(out);
            };
            // The timer is made inside the runtime: it needs its clock.
            let next = self
                .rt
                .block_on(async { tokio::time::timeout(wait, messages.next()).await });
            let m = match next {
                Err(_elapsed) => {
                    if out.is_empty() && self.heard.elapsed() >= CHECK {
                        match self.look() {
                            Ok(Look::Fine) => self.heard(),
                            Ok(Look::Behind) => {
                                self.messages = None;
                                continue;
                            }
                            Err(e @ (crate::Error::NoStream { .. } | crate::Error::Refused(_))) => {
                                return Err(self.gone(e))
                            }
                            Err(e) => self.lost(&e),
                        }
                    }
                    return Ok(out);
                }
                // The consumer failed or ended (the server restarted and
                // lost it, the connection dropped): open it again from the
                // last message seen.
                Ok(None) | Ok(Some(Err(_))) => {
                    self.messages = None;
                    continue;
                }
                Ok(Some(Ok(m))) => m,
            };
            self.heard();
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
