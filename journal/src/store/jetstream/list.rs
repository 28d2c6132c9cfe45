//! `ls` summaries of many runs at once (SPEC 9 over a fleet, issue 16
//! item 6), on a stream that allows direct gets.
//!
//! A run's summary needs its last message (on `<prefix>.<id>.>`: its
//! subject gives the run's length), its meta record, and the records from
//! the last one back to the last assistant record. Read one run at a time
//! (`read.rs`), that is two to four requests a run, the first through the
//! leader's `STREAM.MSG.GET` (its answer is base64 inside JSON: about twice
//! the server's work of a direct get). Here each run costs one request,
//! the direct get of its last message (the wildcard in the request's
//! body; a group's go out together on one subscription, answers matched
//! by reply subject); everything after that is asked for a group of runs
//! at once, in rounds, by batched direct gets (`multi_last` over literal
//! subjects, nats-server 2.11 and later): round one brings every meta
//! record and each run's record before its last, the next rounds the
//! records further back of the runs that need them, twice as many each
//! round (up to [`LONGEST_STEP`]). bench/RESULTS.md ("issue 16 on JetStream") has the alternatives
//! measured: an ordered consumer over `<prefix>.*._meta`, one over
//! `<prefix>.>` (every record is a subject of its own, so its last message
//! per subject is every message), the subject listing.
//!
//! The rule is the one tail walk (`store/summary/walk.rs`) that `read.rs`'s
//! `summary_inner` also feeds: the same records read, the same errors in
//! the same order; only the fetching is batched. A stream without direct
//! gets, or a server without batched ones, is summarised that way instead
//! (the journal's tests compare the two on damaged runs).
//!
//! Memory: [`GROUPS`] groups of [`GROUP`] runs are summarised at a time,
//! each holding its runs' tails until they are summarised; one batched get
//! brings at most [`BATCH_BYTES`](super::multi::BATCH_BYTES) (or one larger message, alone).

use super::core::Core;
use super::multi::{Answer, MOST_ANSWERS};
use super::CONCURRENCY;
use crate::error::{Error, Result};
use crate::id;
use crate::nats::REQUEST_TIMEOUT;
use crate::record::Record;
use crate::store::summary::TailWalk;
use crate::store::Summary;
use async_nats::jetstream::message::StreamMessage;
use async_nats::StatusCode;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs summarised together: their rounds of batched gets are shared.
const GROUP: usize = 256;

/// Groups summarised at a time: up to 1,024 last-message gets in flight.
/// On one connection to a local server, more than 128 in flight did not go
/// faster (bench/RESULTS.md).
const GROUPS: usize = 4;

/// Subjects in one batched get: the server answers at most 1,024
/// messages to one (413 beyond).
const BATCH_SUBJECTS: usize = 1000;

/// Records back asked for at once for one run, at most (the first two
/// rounds ask for one, then twice as many each round).
const LONGEST_STEP: u64 = 64;

/// What the server answered for one subject: its message, or `None` when
/// it holds none.
type Got = Result<Option<StreamMessage>>;

/// A run being summarised: where reading its tail has got to.
struct Tail {
    index: usize,
    run: String,
    last: StreamMessage,
    /// For a tail of seq 1: whether record 2 exists is still to be asked
    /// (then an upgrade was interrupted).
    behind: bool,
    /// The interrupted upgrade, or the failure to ask about it.
    refused: Option<Error>,
    /// The meta record, `None` until it is read.
    meta: Option<Result<Record>>,
    /// The walk back from the last record: what it has read, and whether
    /// it wants more.
    walk: TailWalk,
    /// The next record back to read; 0 when the tail is complete.
    next: u64,
    /// Rounds that asked for records back.
    rounds: u32,
    /// Why the tail could not be read (a missing or unreadable record).
    failed: Option<Error>,
}

impl Tail {
    /// The records the next round asks for, newest first: `next`, and in
    /// the third round and after, 2, 4, .. [`LONGEST_STEP`] records back
    /// from it; none once the meta record has failed (that failure is the
    /// summary).
    fn records_wanted(&self) -> impl Iterator<Item = u64> {
        let wanted = self.next >= 2 && !matches!(self.meta, Some(Err(_)));
        let step = 1u64
            .checked_shl(self.rounds.saturating_sub(1))
            .unwrap_or(LONGEST_STEP)
            .min(LONGEST_STEP);
        let lowest = self.next.saturating_sub(step - 1).max(2);
        (lowest..=self.next).rev().filter(move |_| wanted)
    }
}

impl Core {
    /// Summaries of `runs`, in the order given: batched where the stream
    /// allows direct gets, else run by run.
    pub(super) async fn summaries(&self, runs: &[String], hold: Duration) -> Vec<Summary> {
        // Each group's summaries go straight into the one list, in order:
        // 100,000 of them are never held twice.
        let mut out = Vec::with_capacity(runs.len());
        self.summaries_each(runs, hold, |s| out.push(s)).await;
        out
    }

    /// [`summaries`](Self::summaries), each handed to `each` in the order
    /// given as soon as its group is done: the caller keeps what it needs
    /// of them, and no more than [`GROUPS`] groups are held here (issue
    /// 40: a pass over 300,000 runs that prints a few rows).
    pub(super) async fn summaries_each(
        &self,
        runs: &[String],
        hold: Duration,
        mut each: impl FnMut(Summary),
    ) {
        if !self.direct {
            for part in runs.chunks(GROUP * GROUPS) {
                self.summaries_one_by_one(part, hold)
                    .await
                    .into_iter()
                    .for_each(&mut each);
            }
            return;
        }
        // Indices, not borrowed items, cross the stream combinators: so
        // the future is Send for any lifetime, and may run as a task.
        let groups = runs.len().div_ceil(GROUP);
        let group = |i: usize| runs.get(i * GROUP..runs.len().min((i + 1) * GROUP));
        let mut parts = futures_util::stream::iter(0..groups)
            .map(|i| self.summarise_group(group(i).unwrap_or_default(), hold, i))
            .buffered(GROUPS);
        while let Some(part) = parts.next().await {
            part.into_iter().for_each(&mut each);
        }
    }

    /// One group: the last message of each run, then rounds of batched
    /// gets until every tail is complete.
    async fn summarise_group(&self, runs: &[String], hold: Duration, lane: usize) -> Vec<Summary> {
        // A run named twice is read once (a round's answers are keyed by
        // subject) and its summary given twice.
        let mut unique: Vec<&String> = runs.iter().collect();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() < runs.len() {
            let unique: Vec<String> = unique.into_iter().cloned().collect();
            let once = Box::pin(self.summarise_group(&unique, hold, lane)).await;
            let by_run: HashMap<&str, &Summary> =
                unique.iter().map(String::as_str).zip(&once).collect();
            return runs
                .iter()
                .map(|r| match by_run.get(r.as_str()) {
                    Some(s) => (*s).clone(),
                    None => Summary::unread(r),
                })
                .collect();
        }
        let lasts = self.lasts_of_runs(runs, lane).await;
        let mut done: Vec<Option<Summary>> = vec![None; runs.len()];
        let mut open = Vec::new();
        for (index, (run, last)) in runs.iter().zip(lasts).enumerate() {
            match self.start_tail(index, run, last) {
                Ok(t) => open.push(t),
                Err(e) => {
                    if let Some(d) = done.get_mut(index) {
                        *d = Some(Summary::corrupt(run, &e));
                    }
                }
            }
        }
        loop {
            let mut wanted = Vec::new();
            for t in &open {
                if t.behind {
                    wanted.push(self.subject(&t.run, 2));
                }
                if t.meta.is_none() {
                    wanted.push(self.subject(&t.run, 1));
                }
                wanted.extend(t.records_wanted().map(|k| self.subject(&t.run, k)));
            }
            if wanted.is_empty() {
                break;
            }
            let mut got = self.get_subjects(wanted, lane).await;
            for t in &mut open {
                self.take(t, &mut got);
            }
        }
        for t in open {
            let i = t.index;
            let s = self.finish(t, hold);
            if let Some(d) = done.get_mut(i) {
                *d = Some(s);
            }
        }
        done.into_iter()
            .zip(runs)
            .map(|(s, run)| s.unwrap_or_else(|| Summary::unread(run)))
            .collect()
    }

    /// A run's tail from its last message, as `tail` and the first step of
    /// `summary_inner` read it: the run absent, or its last message on no
    /// record subject, is the summary.
    fn start_tail(&self, index: usize, run: &str, last: Got) -> Result<Tail> {
        let last = last?.ok_or_else(|| self.not_found(run))?;
        let last_n = self.tail_seq(run, &last)?;
        let mut t = Tail {
            index,
            run: run.to_owned(),
            behind: last_n == 1,
            refused: None,
            meta: None,
            walk: TailWalk::new(),
            next: 0,
            rounds: 0,
            failed: None,
            last,
        };
        if last_n == 1 {
            t.meta = Some(self.decode_body(run, &t.last));
            return Ok(t);
        }
        // The last record (the walk drops one that does not decode, as a
        // torn tail).
        t.next = match t.walk.feed(self.decode_body(run, &t.last)) {
            Ok(true) if last_n > 2 => last_n - 1,
            Ok(_) => 0,
            Err(e) => return Err(e),
        };
        Ok(t)
    }

    /// Take what a round brought for `t` out of `got`.
    fn take(&self, t: &mut Tail, got: &mut HashMap<String, Got>) {
        let run = t.run.clone();
        let mut answer = |seq: u64| {
            let subject = self.subject(&run, seq);
            got.remove(&subject)
                .unwrap_or_else(|| Err(self.err(Some(&run), format!("no answer for {subject}"))))
        };
        // What this round asked for, before the fields change.
        let records: Vec<u64> = t.records_wanted().collect();
        if std::mem::take(&mut t.behind) {
            match answer(2) {
                Ok(None) => {}
                Ok(Some(_)) => t.refused = Some(self.interrupted(&t.run)),
                Err(e) => t.refused = Some(e),
            }
        }
        if t.meta.is_none() {
            t.meta = Some(match answer(1) {
                Ok(Some(m)) => self.decode_body(&t.run, &m),
                Ok(None) => Err(self.no_meta(&t.run)),
                Err(e) => Err(e),
            });
        }
        if records.is_empty() {
            return;
        }
        t.rounds += 1;
        for k in records {
            let m = match answer(k) {
                Ok(Some(m)) => m,
                Ok(None) => {
                    t.failed = Some(self.missing(&t.run, k));
                    break;
                }
                Err(e) => {
                    t.failed = Some(e);
                    break;
                }
            };
            // Not the last record: the walk returns one that does not
            // decode, corruption.
            match t.walk.feed(self.decode_body(&t.run, &m)) {
                Ok(more) => {
                    t.next = if !more || k <= 2 { 0 } else { k - 1 };
                    if !more {
                        break;
                    }
                }
                Err(e) => {
                    t.failed = Some(e);
                    break;
                }
            }
        }
        if t.failed.is_some() {
            t.next = 0;
        }
    }

    /// The summary of a complete tail, with `summary_inner`'s precedence
    /// of failures: the tail's own (an interrupted upgrade), then the meta
    /// record's, then a record's on the way back.
    fn finish(&self, t: Tail, hold: Duration) -> Summary {
        let run = t.run.as_str();
        if let Some(e) = &t.refused {
            return Summary::corrupt(run, e);
        }
        let meta = match &t.meta {
            Some(Ok(m)) => m,
            Some(Err(e)) => return Summary::corrupt(run, e),
            None => return Summary::corrupt(run, &self.no_meta(run)),
        };
        if let Some(e) = &t.failed {
            return Summary::corrupt(run, e);
        }
        let torn = t.walk.torn();
        self.summary_of(run, meta, &t.walk.into_tail(), torn, &t.last, hold)
    }

    /// The last message on each subject, batched where the server can.
    async fn get_subjects(&self, subjects: Vec<String>, lane: usize) -> HashMap<String, Got> {
        let mut out = HashMap::with_capacity(subjects.len());
        let mut one_by_one = Vec::new();
        if self.batched_gets.load(Ordering::Relaxed) {
            let batches = subjects.len().div_ceil(BATCH_SUBJECTS);
            let batch = |i: usize| {
                let end = subjects.len().min((i + 1) * BATCH_SUBJECTS);
                subjects.get(i * BATCH_SUBJECTS..end).unwrap_or_default()
            };
            let batches: Vec<_> = futures_util::stream::iter(0..batches)
                .map(|i| async move { (batch(i), self.multi_last(batch(i), lane).await) })
                .buffer_unordered(GROUPS)
                .collect()
                .await;
            for (batch, answer) in batches {
                match answer {
                    Ok(Some(mut found)) => {
                        for s in batch {
                            let m = found.remove(s);
                            out.insert(s.clone(), Ok(m));
                        }
                    }
                    Ok(None) => {
                        self.batched_gets.store(false, Ordering::Relaxed);
                        one_by_one.extend(batch.iter().cloned());
                    }
                    Err(why) => {
                        for s in batch {
                            let run = self.parse_subject(s).map(|(r, _)| r);
                            let e = self.err(run, format!("cannot read {s}: {why}"));
                            out.insert(s.clone(), Err(e));
                        }
                    }
                }
            }
        } else {
            one_by_one = subjects;
        }
        let each: Vec<(String, Got)> = futures_util::stream::iter(one_by_one)
            .map(|s| async move {
                let m = self.last_on(&s, false).await;
                (s, m)
            })
            .buffered(CONCURRENCY)
            .collect()
            .await;
        out.extend(each);
        out
    }

    /// One batched direct get of the last message on each of `subjects`
    /// (literal, at most [`BATCH_SUBJECTS`]), asked again for those a full
    /// answer left out. `Ok(None)` when the server takes no batched gets
    /// (before 2.11, or no responder for direct gets): ask one by one.
    async fn multi_last(
        &self,
        subjects: &[String],
        lane: usize,
    ) -> std::result::Result<Option<HashMap<String, StreamMessage>>, String> {
        let mut ask = self.multi_get(lane).await?;
        let mut found = HashMap::with_capacity(subjects.len());
        let mut todo: Vec<&String> = subjects.iter().collect();
        loop {
            let (got, pending) = match ask.ask(&todo, None).await? {
                Answer::Got(got, pending) => (got, pending),
                Answer::Unsupported => return Ok(None),
                Answer::TooMany => return Err(format!("413 more than {MOST_ANSWERS} messages")),
            };
            let brought = got.len();
            for m in got {
                found.insert(m.subject.to_string(), m);
            }
            if pending == 0 {
                return Ok(Some(found));
            }
            if brought == 0 {
                return Err(format!(
                    "a batched get brought nothing of {pending} messages"
                ));
            }
            todo.retain(|s| !found.contains_key(s.as_str()));
        }
    }

    /// The last message of each run. The direct gets of a group go out
    /// together on one subscription, each with a reply subject of its own
    /// (`<inbox>.<index>`), and their answers are matched by it: no
    /// request state, timer or wake-up per run. A run they leave
    /// unanswered (no responder, a server that does not take the request)
    /// is asked on its own.
    async fn lasts_of_runs(&self, runs: &[String], lane: usize) -> Vec<Got> {
        let mut out: Vec<Option<Got>> = runs.iter().map(|_| None).collect();
        if self.direct_wildcards.load(Ordering::Relaxed) {
            if let Err(why) = self.direct_lasts(runs, &mut out, lane).await {
                for (slot, run) in out.iter_mut().zip(runs) {
                    if slot.is_none() {
                        let what = format!("{}.{run}.>", self.prefix);
                        let e = self.err(Some(run), format!("cannot read {what}: {why}"));
                        *slot = Some(Err(e));
                    }
                }
            }
        }
        let left: Vec<usize> = (0..runs.len())
            .filter(|i| out.get(*i).is_some_and(Option::is_none))
            .collect();
        let asked: Vec<(usize, Got)> = futures_util::stream::iter(left)
            .map(|i| async move {
                match runs.get(i) {
                    Some(r) => (i, self.last_of_run_direct(r).await),
                    None => (i, Ok(None)),
                }
            })
            .buffered(CONCURRENCY)
            .collect()
            .await;
        for (i, got) in asked {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(got);
            }
        }
        out.into_iter()
            .zip(runs)
            .map(|(got, run)| got.unwrap_or_else(|| Err(self.not_found(run))))
            .collect()
    }

    /// [`lasts_of_runs`](Self::lasts_of_runs)'s direct gets: fills `out`
    /// with each answer, leaves `None` where the run is to be asked on its
    /// own; `Err` when the server stops answering (what it has not
    /// answered fails).
    async fn direct_lasts(
        &self,
        runs: &[String],
        out: &mut [Option<Got>],
        lane: usize,
    ) -> std::result::Result<(), String> {
        let client = self.reader(lane).await;
        let inbox = client.new_inbox();
        let mut sub = client
            .subscribe(format!("{inbox}.*"))
            .await
            .map_err(|e| e.to_string())?;
        let to = format!("{}.DIRECT.GET.{}", self.conn.api, self.name);
        let mut waiting = 0usize;
        for (i, (run, slot)) in runs.iter().zip(out.iter_mut()).enumerate() {
            if let Err(e) = id::check(run) {
                *slot = Some(Err(e));
                continue;
            }
            let subject = format!("{}.{run}.>", self.prefix);
            let body = serde_json::json!({ "last_by_subj": subject });
            let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
            client
                .publish_with_reply(to.clone(), format!("{inbox}.{i}"), body.into())
                .await
                .map_err(|e| e.to_string())?;
            waiting += 1;
        }
        while waiting > 0 {
            let m = match tokio::time::timeout(REQUEST_TIMEOUT, sub.next()).await {
                Ok(Some(m)) => m,
                Ok(None) => return Err("the connection closed".into()),
                Err(_) => return Err(format!("no answer within {}s", REQUEST_TIMEOUT.as_secs())),
            };
            let index = m
                .subject
                .rsplit('.')
                .next()
                .and_then(|t| t.parse::<usize>().ok());
            let (Some(i), Some(run)) = (index, index.and_then(|i| runs.get(i))) else {
                continue;
            };
            let Some(slot) = out.get_mut(i).filter(|s| s.is_none()) else {
                continue;
            };
            waiting -= 1;
            let fail = |e: String| {
                let what = format!("{}.{run}.>", self.prefix);
                Some(Err(self.err(Some(run), format!("cannot read {what}: {e}"))))
            };
            *slot = match m.status {
                None => match StreamMessage::try_from(m) {
                    Ok(m) => Some(Ok(Some(m))),
                    Err(e) => fail(e.to_string()),
                },
                Some(StatusCode::NOT_FOUND) => Some(Ok(None)),
                // A server that does not take the request: asked on its
                // own, through the leader.
                Some(StatusCode::TIMEOUT) => {
                    self.direct_wildcards.store(false, Ordering::Relaxed);
                    None
                }
                // No responder for direct gets: the same.
                Some(StatusCode::NO_RESPONDERS) => None,
                Some(s) => {
                    let why = m.description.unwrap_or_default();
                    fail(format!("{} {why}", s.as_u16()))
                }
            };
        }
        Ok(())
    }

    /// The run's last message (on `<prefix>.<id>.>`) by direct get, the
    /// wildcard in the request's body; through the leader as
    /// [`last_of_run`](Self::last_of_run) when no one answers that.
    async fn last_of_run_direct(&self, run: &str) -> Result<Option<StreamMessage>> {
        id::check(run)?;
        if self.direct_wildcards.load(Ordering::Relaxed) {
            let subject = format!("{}.{run}.>", self.prefix);
            let fail = |e: String| self.err(Some(run), format!("cannot read {subject}: {e}"));
            let body = serde_json::json!({ "last_by_subj": subject });
            let body = serde_json::to_vec(&body).map_err(|e| fail(e.to_string()))?;
            let to = format!("{}.DIRECT.GET.{}", self.conn.api, self.name);
            use async_nats::RequestErrorKind as K;
            match self.conn.js.client().request(to, body.into()).await {
                Ok(m) => match m.status {
                    None => {
                        return StreamMessage::try_from(m)
                            .map(Some)
                            .map_err(|e| fail(e.to_string()))
                    }
                    Some(StatusCode::NOT_FOUND) => return Ok(None),
                    // A server that does not take the request: the leader's.
                    Some(StatusCode::TIMEOUT) => {
                        self.direct_wildcards.store(false, Ordering::Relaxed)
                    }
                    Some(s) => {
                        let why = m.description.unwrap_or_default();
                        return Err(fail(format!("{} {why}", s.as_u16())));
                    }
                },
                // No responder for direct gets: the leader answers below.
                Err(e) if e.kind() == K::NoResponders => {}
                Err(e) => return Err(fail(e.to_string())),
            }
        }
        self.last_of_run(run).await
    }
}
