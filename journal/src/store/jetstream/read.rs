//! Reading runs: the last message on a subject (direct get, or the leader
//! when direct gets are off or unanswered), a run's messages (direct gets
//! for short runs, a consumer otherwise), decoding them with the reader's
//! rule, and `ls` summaries from the meta record and the tail (SPEC 9).

use super::core::Core;
use super::pull::{Drain, Reading};
use super::whole::Pending;
use super::{sort_by_seq, RunMessage, CONCURRENCY};
use crate::error::{Error, Result};
use crate::id;
use crate::lines::{Tail, Verdict};
use crate::record::{Entry, Record};
use crate::store::summary::{at_rest, rest_step, TailWalk};
use crate::store::{Journal, Summary};
use async_nats::jetstream::message::StreamMessage;
use futures_util::StreamExt;
use std::time::Duration;

/// Runs up to this many records are read by direct gets, longer ones by a
/// consumer.
const DIRECT_READ_MAX: u64 = 1000;

impl Core {
    /// The last message stored on `subject` (which may be a wildcard).
    pub(super) async fn last_on(
        &self,
        subject: &str,
        wildcard: bool,
    ) -> Result<Option<StreamMessage>> {
        let run = self.parse_subject(subject).map(|(r, _)| r);
        if self.direct && !wildcard {
            use async_nats::jetstream::stream::DirectGetErrorKind as K;
            match self.stream.direct_get_last_for_subject(subject).await {
                Ok(m) => return Ok(Some(m)),
                Err(e) if e.kind() == K::NotFound => return Ok(None),
                // 503: no responder for direct gets; use the leader below.
                Err(e) if matches!(e.kind(), K::ErrorResponse(c, _) if c.as_u16() == 503) => {}
                Err(e) => {
                    return Err(self.err(run, format!("cannot read {subject}: {e}")));
                }
            }
        }
        use async_nats::jetstream::stream::LastRawMessageErrorKind as K;
        match self.stream.get_last_raw_message_by_subject(subject).await {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.kind() == K::NoMessageFound => Ok(None),
            Err(e) => Err(self.err(run, format!("cannot read {subject}: {e}"))),
        }
    }

    /// The run's last message (on `<prefix>.<id>.>`), `None` for no run.
    pub(super) async fn last_of_run(&self, run: &str) -> Result<Option<StreamMessage>> {
        id::check(run)?;
        self.last_on(&format!("{}.{run}.>", self.prefix), true)
            .await
    }

    /// The run's tail (its last message) and the seq its subject names:
    /// the run's length. Refused when the run is absent, when the tail is
    /// on no record subject (corrupt), or when it is the meta record of an
    /// interrupted upgrade.
    pub(super) async fn tail(&self, run: &str) -> Result<(StreamMessage, u64)> {
        let Some(last) = self.last_of_run(run).await? else {
            return Err(self.not_found(run));
        };
        let n = self.tail_seq(run, &last)?;
        if self.tail_behind(run, n).await? {
            return Err(self.interrupted(run));
        }
        Ok((last, n))
    }

    /// The seq a run's last message names: the run's length (unless the
    /// tail is behind, see [`tail_behind`](Self::tail_behind)). Corrupt
    /// when it is on no record subject.
    pub(super) fn tail_seq(&self, run: &str, last: &StreamMessage) -> Result<u64> {
        if self.is_writing(&last.subject) {
            // A run being written whole (`whole.rs`): its mark, or its
            // stage, was stored last.
            return Err(match Pending::parse(&last.payload, last.sequence) {
                Some(p) => p.refusal(run),
                None => Error::refused_until(
                    run,
                    format!(
                        "its last message, on {}, is a record staged by a fisk-admin recover that did not finish; recover the run again (fisk-admin recover {run}) to finish it",
                        last.subject
                    ),
                    crate::Remedy::Recover,
                ),
            });
        }
        self.parse_subject(&last.subject)
            .and_then(|(_, s)| s)
            .ok_or_else(|| Error::Corrupt {
                run: run.to_owned(),
                at: self.at_subject(last.subject.to_string(), 0),
                message: "the run's last message is not on a record subject".into(),
            })
    }

    /// Whether a run's tail (its last message) is its meta record while
    /// record 2 exists: an upgrade interrupted between its two publishes
    /// (`upgrade.rs`). Then the tail's seq is not the run's length.
    pub(super) async fn tail_behind(&self, run: &str, last_n: u64) -> Result<bool> {
        if last_n != 1 {
            return Ok(false);
        }
        Ok(self.last_on(&self.subject(run, 2), false).await?.is_some())
    }

    pub(super) async fn exists(&self, run: &str) -> Result<bool> {
        Ok(self.last_of_run(run).await?.is_some())
    }

    /// The run's messages (every one, in stream order, exactly as stored).
    /// `complete`: read through a consumer, which also sees messages on
    /// subjects that are not record subjects (verify needs them).
    pub(super) async fn read_run(&self, run: &str, complete: bool) -> Result<Vec<RunMessage>> {
        // The last message says whether the run exists and, for a run with
        // sane subjects, how long it is.
        let Some(last) = self.last_of_run(run).await? else {
            return Err(self.not_found(run));
        };
        let last_n = self.parse_subject(&last.subject).and_then(|(_, s)| s);
        match last_n {
            // Short runs: direct gets of every record subject, pipelined,
            // cost the server less than creating a consumer.
            Some(n) if !complete && self.direct && n <= DIRECT_READ_MAX => {
                if let Some(out) = self.read_direct(run, n, &last).await? {
                    return Ok(out);
                }
                self.read_consumer(run).await
            }
            _ => self.read_consumer(run).await,
        }
    }

    /// Records 1..=n by direct get; `None` when the run holds anything the
    /// subjects 1..=n do not account for (then a consumer reads it all).
    async fn read_direct(
        &self,
        run: &str,
        n: u64,
        last: &StreamMessage,
    ) -> Result<Option<Vec<RunMessage>>> {
        // The tail may be behind, or the run marked as being written
        // (`whole.rs`): then the consumer reads all of it, and says so.
        let mark = self.mark_subject(run);
        let (behind, marked) = tokio::join!(self.tail_behind(run, n), self.last_on(&mark, false));
        if behind? || marked?.is_some() {
            return Ok(None);
        }
        let gets = futures_util::stream::iter(1..n)
            .map(|k| {
                let subject = self.subject(run, k);
                async move { self.last_on(&subject, false).await.map(|m| (k, subject, m)) }
            })
            .buffered(64)
            .collect::<Vec<_>>()
            .await;
        let mut out = Vec::with_capacity(n as usize);
        for g in gets {
            let (k, subject, m) = g?;
            let Some(m) = m else {
                return Ok(None); // a gap: let the consumer see what is there
            };
            out.push(RunMessage {
                subject,
                subject_seq: Some(k),
                stream_seq: m.sequence,
                body: m.payload.to_vec(),
            });
        }
        out.push(RunMessage {
            subject: last.subject.to_string(),
            subject_seq: Some(n),
            stream_seq: last.sequence,
            body: last.payload.to_vec(),
        });
        // A message on a subject that is not a record subject is not seen
        // here; the reader's rule does not use it, and verify reads with a
        // consumer instead.
        Ok(Some(out))
    }

    async fn read_consumer(&self, run: &str) -> Result<Vec<RunMessage>> {
        id::check(run)?;
        let filter = format!("{}.{run}.>", self.prefix);
        let reading = Reading {
            run: Some(run),
            what: &filter,
            verb: "read",
            batch: 10_000,
        };
        let mut drain = self.open_drain(reading, filter.clone(), Vec::new()).await?;
        let out = self.fetch_all(run, &mut drain).await;
        drain.close().await;
        let out = out?;
        if out.is_empty() {
            return Err(self.not_found(run));
        }
        Ok(out)
    }

    async fn fetch_all(&self, run: &str, drain: &mut Drain<'_>) -> Result<Vec<RunMessage>> {
        let count = drain.count();
        let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(1 << 16));
        while let Some(m) = drain.next().await? {
            // A delivery the server sent without its metadata: the
            // server's fault, not the run's.
            let stream_seq = m.info().map(|i| i.stream_sequence).map_err(|e| {
                self.err(
                    Some(run),
                    format!("a message without JetStream metadata: {e}"),
                )
            })?;
            let subject = m.message.subject.to_string();
            let subject_seq = self.parse_subject(&subject).and_then(|(_, s)| s);
            out.push(RunMessage {
                subject,
                subject_seq,
                stream_seq,
                body: m.message.payload.to_vec(),
            });
        }
        Ok(out)
    }

    /// A run's messages decoded with the reader's rule. Messages are
    /// atomic, so there is no torn write; a final body that does not decode
    /// is still dropped (as a file's final line would be) and one before it
    /// is corruption, or with `lenient` where the readable prefix stops.
    pub(super) fn decode_run(
        &self,
        run: &str,
        mut messages: Vec<RunMessage>,
        lenient: bool,
    ) -> Result<(Journal, Option<String>)> {
        // A run being written whole is no run yet (`whole.rs`).
        let mark = self.mark_subject(run);
        if let Some(m) = messages.iter().find(|m| m.subject == mark) {
            return Err(match Pending::parse(&m.body, m.stream_seq) {
                Some(p) => p.refusal(run),
                None => self.corrupt(
                    run,
                    mark,
                    0,
                    "the message on it is not a fisk-admin mark".into(),
                ),
            });
        }
        sort_by_seq(&mut messages);
        let bytes = messages.iter().map(|m| m.body.len() as u64 + 1).sum();
        let n = messages.len();
        let mut entries = Vec::with_capacity(n);
        let mut tail = Tail::Clean;
        let mut stopped = None;
        for (i, m) in messages.into_iter().enumerate() {
            let position = i + 1;
            let decoded = Record::decode(&m.body);
            // A message is atomic: its body is a terminated line.
            let verdict = Verdict::of(decoded.is_ok(), position == n, true);
            let problem = match (m.subject_seq, decoded) {
                (Some(s), Ok(r)) if r.seq == s => {
                    entries.push(Entry {
                        line: position,
                        offset: 0,
                        raw: m.body,
                        record: r,
                    });
                    continue;
                }
                (None, _) => format!("subject {} is not a record subject", m.subject),
                (Some(s), Ok(r)) => format!("subject {} holds seq {}, not {s}", m.subject, r.seq),
                (Some(_), Err(e)) if verdict.is_dropped() => {
                    tail = Tail::Torn {
                        line: position,
                        offset: 0,
                        terminated: true,
                        bytes: m.body,
                        error: e,
                    };
                    break;
                }
                (Some(_), Err(e)) => format!("the body on {} does not parse: {e}", m.subject),
            };
            if lenient {
                stopped = Some(format!("stopped at message {position}: {problem}"));
                break;
            }
            return Err(Error::Corrupt {
                run: run.to_owned(),
                at: self.at_subject(m.subject.to_string(), position),
                message: problem,
            });
        }
        Ok((
            Journal {
                run: run.to_owned(),
                entries,
                tail,
                bytes,
            },
            stopped,
        ))
    }

    /// Summarise a run from its meta record and its tail (SPEC 9): the last
    /// message, then backwards by direct get to the last assistant record.
    pub(super) async fn summary(&self, run: &str, hold: std::time::Duration) -> Summary {
        match self.summary_inner(run, hold).await {
            Ok(s) => s,
            Err(e) => Summary::corrupt(run, &e),
        }
    }

    /// Whether the run is at rest ([`at_rest`]) and how long ago its last
    /// message was stored: reads the tail backwards past the records
    /// written to a suspended run only.
    pub(super) async fn rest(&self, run: &str) -> Result<(bool, std::time::Duration)> {
        let (last, last_n) = self.tail(run).await?;
        let age = age_of(&last);
        // The fence of an interrupted delete or recover: no writer can
        // append after it, so none holds the run.
        if super::subject::is_tombstone(&last.payload) {
            return Ok((true, age));
        }
        let mut n = last_n;
        let mut m = Some(last);
        while let Some(msg) = m {
            let kind = Record::decode(&msg.payload).ok().and_then(|r| r.kind());
            match rest_step(kind) {
                Some(at_rest) => return Ok((at_rest, age)),
                None if n > 1 => {
                    n -= 1;
                    m = self.last_on(&self.subject(run, n), false).await?;
                }
                None => return Ok((false, age)),
            }
        }
        Ok((false, age))
    }

    /// SPEC 8's hold: `Err(Held)` when the run is not at rest and its last
    /// message is younger than `hold` (zero: no hold).
    pub(super) async fn check_held(&self, run: &str, hold: std::time::Duration) -> Result<()> {
        if hold.is_zero() {
            return Ok(());
        }
        let (at_rest, age) = match self.rest(run).await {
            Ok(x) => x,
            // A tail no writer can append after (not on a record subject,
            // or an interrupted upgrade's meta record): nothing holds it.
            Err(Error::Corrupt { .. } | Error::Refused(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        if !at_rest && age < hold {
            return Err(Error::Held {
                run: run.to_owned(),
                at: self.at_run(run),
                age_secs: age.as_secs(),
                hold_secs: hold.as_secs(),
            });
        }
        Ok(())
    }

    async fn summary_inner(&self, run: &str, hold: std::time::Duration) -> Result<Summary> {
        let (last, last_n) = self.tail(run).await?;
        let decode = |m: &StreamMessage| self.decode_body(run, m);
        let meta = if last_n == 1 {
            decode(&last)?
        } else {
            let subject = self.subject(run, 1);
            match self.last_on(&subject, false).await? {
                Some(m) => decode(&m)?,
                None => return Err(self.no_meta(run)),
            }
        };
        // Backwards from the last record, by direct get, as far as the
        // walk wants (never to the meta record).
        let mut walk = TailWalk::new();
        let mut n = last_n;
        while n > 1 && walk.wants_more() {
            let m = if n == last_n {
                last.clone()
            } else {
                let subject = self.subject(run, n);
                match self.last_on(&subject, false).await? {
                    Some(m) => m,
                    None => return Err(self.missing(run, n)),
                }
            };
            walk.feed(decode(&m))?;
            n -= 1;
        }
        let torn = walk.torn();
        Ok(self.summary_of(run, &meta, &walk.into_tail(), torn, &last, hold))
    }

    /// The body of a stored message as a record.
    pub(super) fn decode_body(&self, run: &str, m: &StreamMessage) -> Result<Record> {
        Record::decode(&m.payload).map_err(|e| {
            self.corrupt(
                run,
                m.subject.to_string(),
                0,
                format!("the body on {} does not parse: {e}", m.subject),
            )
        })
    }

    /// A run whose last message is a record but whose meta record is gone.
    pub(super) fn no_meta(&self, run: &str) -> Error {
        let subject = self.subject(run, 1);
        let message = format!("no meta record on {subject}");
        self.corrupt(run, subject, 1, message)
    }

    /// Record `n`, before the run's last, is gone.
    pub(super) fn missing(&self, run: &str, n: u64) -> Error {
        let subject = self.subject(run, n);
        let message = format!("record {n} is missing ({subject}): records were lost");
        self.corrupt(run, subject, usize::try_from(n).unwrap_or(0), message)
    }

    /// The summary from the meta record, the `tail` (in seq order, from the
    /// last assistant record on) and the run's last message.
    pub(super) fn summary_of(
        &self,
        run: &str,
        meta: &Record,
        tail: &[Record],
        torn: bool,
        last: &StreamMessage,
        hold: std::time::Duration,
    ) -> Summary {
        let stored = crate::time::Time::from_system(system_time(last));
        // SPEC 8/9: live while not at rest and younger than the hold.
        let at_rest = at_rest(tail.iter().rev().map(Record::kind));
        let age = age_of(last);
        let mut s = Summary::from_tail(run, meta, tail);
        if torn {
            s.set_damaged_tail();
        }
        let held = !at_rest && !hold.is_zero() && age < hold;
        s.set_live(held.then(|| crate::state::Holder::Hold {
            at: self.at_run(run),
            age_secs: age.as_secs(),
            hold_secs: hold.as_secs(),
        }));
        s.stream_end = self
            .parse_subject(&last.subject)
            .and_then(|(_, n)| n)
            .map(|n| (n, last.sequence));
        if let Some(p) = s.problem.as_mut() {
            *p = format!("stream {} run {run}: {p}", self.name);
        }
        // SPEC 9: the last record's time; an undated one, its store time.
        s.updated = s.updated.or(Some(stored));
        s
    }

    /// Summaries of `runs` read run by run (concurrently, bounded), in the
    /// order given: for a stream without direct gets (`list.rs` batches
    /// them otherwise).
    pub(super) async fn summaries_one_by_one(
        &self,
        runs: &[String],
        hold: std::time::Duration,
    ) -> Vec<Summary> {
        // Indices cross the combinators (see `list.rs`'s `summaries`).
        futures_util::stream::iter(0..runs.len())
            .map(|i| async move {
                match runs.get(i) {
                    Some(r) => self.summary(r, hold).await,
                    None => Summary::unread(""),
                }
            })
            .buffered(CONCURRENCY)
            .collect()
            .await
    }

    /// Read many runs completely (every message on `<prefix>.<id>.>`),
    /// concurrently (bounded), in the order given.
    pub(super) async fn read_many(&self, runs: &[String]) -> Vec<Result<Vec<RunMessage>>> {
        futures_util::stream::iter(runs.iter())
            .map(|r| self.read_run(r, true))
            .buffered(CONCURRENCY)
            .collect()
            .await
    }
}

/// How old a run's last record is (SPEC 8's hold): by when the stream
/// stored it, as the agent measures it (issue 24.11), never by the
/// record's own `time`, which is the writer's clock: one running behind
/// left its run unprotected, one running ahead locked it for the skew. A
/// copy (`migrate`, a restore) is as old as the copy. A store time ahead
/// of this machine's clock counts as now.
fn age_of(m: &StreamMessage) -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(system_time(m))
        .unwrap_or_default()
}

fn system_time(m: &StreamMessage) -> std::time::SystemTime {
    let nanos = m.time.unix_timestamp_nanos();
    let secs = nanos.div_euclid(1_000_000_000);
    let sub = nanos.rem_euclid(1_000_000_000) as u32;
    match u64::try_from(secs) {
        Ok(s) => std::time::UNIX_EPOCH + Duration::new(s, sub),
        Err(_) => std::time::UNIX_EPOCH,
    }
}
