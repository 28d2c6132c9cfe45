//! Reads over many runs at once: migrate's digests of copies read back,
//! and the one pass that reads runs whole for migrate's copies and for
//! the whole-store reads (`Store::read_each`: `stats --all`, `search
//! --in`, `inbox`), one consumer over the whole prefix or one per group
//! of runs instead of a read per run, the runs folded as they complete
//! however they interleave, within a memory budget.

use super::budget::{release, ReadBudget};
use super::core::Core;
use super::gets::Listed;
use super::pull::Reading;
use super::RunMessage;
use crate::error::Result;
use crate::id;
use futures_util::StreamExt;

/// Messages asked for at a time by migrate's bulk reader.
const FETCH_BATCH: usize = 1000;

/// How the runs of a bulk read are split between consumers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grouping {
    /// Runs one filtered consumer reads at most.
    group: usize,
    /// One consumer reads the whole prefix when these runs hold at least
    /// 1/`share` of the stream's messages.
    share: u64,
    /// One consumer reads the whole prefix when these runs need more than
    /// one filtered consumer: each filtered consumer scans the stream.
    scan_once: bool,
    /// The stream's messages, when the caller has just asked for them
    /// (else [`Core::groups`] asks).
    total: Option<u64>,
}

impl Grouping {
    /// This grouping, for a stream the caller found to hold `total`
    /// messages.
    fn of_stream(self, total: u64) -> Self {
        Grouping {
            total: Some(total),
            ..self
        }
    }
}

/// migrate's: the whole prefix when the runs are half the stream, else
/// 256 runs a consumer.
const GROUP: Grouping = Grouping {
    group: 256,
    share: 2,
    scan_once: false,
    total: None,
};

/// A whole-store read's ([`Store::read_each`](crate::store::Store::read_each)).
/// A consumer filtered to many runs costs the server more than one over
/// the whole prefix, and each consumer scans the stream: on 10,000 runs
/// (183,333 messages; bench/RESULTS.md "issue 28") `inbox`, which reads
/// the third of the runs that wait, cost the server 3.5-4.2 s of CPU
/// through 14 consumers of 256 runs, 1.9-2.4 s through one of them all,
/// and 1.2-1.4 s through the whole prefix (its listing included). So the
/// whole prefix from an eighth of the stream on (a bound chosen from those
/// figures, not measured at the crossing); below, one consumer for up to
/// 4,096 runs (about 100 KB of filters with short ids, under the server's
/// default 1 MB payload; a refused consumer leaves each run read on its
/// own). Beyond 4,096 runs, the whole prefix once (issue 40): `inbox` on
/// 300,000 runs (bench/RESULTS.md, "Issue 40"), one in ten waiting and
/// their ids shuffled through the stream, cost the server 85 s of CPU
/// through 8 consumers of 4,096 runs, each scanning all of it, where the
/// whole prefix costs it a tenth of that a message delivered; at 30,000
/// runs one filtered consumer and the whole prefix cost both processes
/// the same (4.0-4.2 CPU-seconds).
const READ_GROUP: Grouping = Grouping {
    group: 4096,
    share: 8,
    scan_once: true,
    total: None,
};

/// Batched gets read the runs of a whole-store read when they hold less
/// than 1/`GETS_SHARE` of the stream's messages; a consumer over the whole
/// prefix, which costs less a message delivered, reads more.
const GETS_SHARE: u64 = 2;

impl Core {
    /// The messages the stream holds now.
    async fn messages(&self) -> Result<u64> {
        let mut stream = self.stream.clone();
        let info = self.conn.info(&mut stream, &self.name).await?;
        Ok(info.state.messages)
    }

    /// How the runs `items` stand for, `expected` messages in all, are read:
    /// whether through one consumer over the whole prefix, and in which
    /// groups. When these runs are much of the stream (`grouping.share`),
    /// one consumer over the whole prefix costs the server least (no
    /// per-message filter matching); otherwise one consumer per
    /// `grouping.group` runs, filtered to them, so other runs are not
    /// read.
    async fn groups<T: Clone>(
        &self,
        items: Vec<T>,
        expected: u64,
        grouping: Grouping,
    ) -> Result<(bool, Vec<Vec<T>>)> {
        let total = match grouping.total {
            Some(t) => t,
            None => self.messages().await?,
        };
        let whole = expected.saturating_mul(grouping.share) >= total
            || (grouping.scan_once && items.len() > grouping.group);
        let groups = if whole {
            vec![items]
        } else {
            items
                .chunks(grouping.group.max(1))
                .map(<[T]>::to_vec)
                .collect()
        };
        Ok((whole, groups))
    }

    /// Count and SHA-256 of each run, read back in bulk: see
    /// [`JetStreamStore::digests`](super::JetStreamStore::digests). Fails
    /// as a whole when the stream's info cannot be read; a group that
    /// cannot be read gives each of its runs the store's failure, or
    /// `Ok(None)` (read on its own) when it was not one. A group whose
    /// read failed on the store is read again as long as the
    /// [`Ride`](super::conn::Ride) allows (the connection up, the stream
    /// replicated): a replicated stream whose leader died answers no
    /// consumer until another is elected (migrate's check of its copies
    /// rides through the election as its writes do).
    pub(super) async fn digests(
        &self,
        runs: Vec<String>,
        records: u64,
    ) -> Result<Vec<Result<Option<(u64, String)>>>> {
        let (whole, groups) = self.groups(runs, records, GROUP).await?;
        let done = futures_util::stream::iter(groups)
            .map(|g| async move {
                let n = g.len();
                let ride = self.conn.ride(Some(self.config.num_replicas));
                let pause = std::time::Duration::from_millis(500);
                loop {
                    match self.digest_group(&g, whole).await {
                        Ok(v) => break v.into_iter().map(Ok).collect::<Vec<_>>(),
                        Err(e) if e.is_store_failure() && ride.again(pause) => {
                            tokio::time::sleep(pause).await;
                        }
                        Err(e) => {
                            break (0..n)
                                .map(|_| self.for_each_run(&e).map_or(Ok(None), Err))
                                .collect()
                        }
                    }
                }
            })
            .buffered(2)
            .collect::<Vec<_>>()
            .await;
        Ok(done.into_iter().flatten().collect())
    }

    /// `whole`: read every message under the prefix (and keep only these
    /// runs'); else filter the consumer to these runs.
    async fn digest_group(
        &self,
        runs: &[String],
        whole: bool,
    ) -> Result<Vec<Option<(u64, String)>>> {
        struct Acc {
            next: u64,
            ok: bool,
            sha: crate::digest::Lines,
        }
        let mut acc: Vec<Acc> = runs
            .iter()
            .map(|_| Acc {
                next: 1,
                ok: true,
                sha: crate::digest::Lines::default(),
            })
            .collect();
        self.consume_group(runs, whole, "read back", |i, s, _, m| {
            let Some(a) = acc.get_mut(i) else { return };
            if s == Some(a.next) {
                a.sha.push(&m.payload);
                a.next += 1;
            } else {
                a.ok = false;
            }
        })
        .await?;
        Ok(acc
            .into_iter()
            .map(|a| (a.ok && a.next > 1).then(|| (a.next - 1, a.sha.finish())))
            .collect())
    }

    /// The reading of
    /// [`JetStreamStore::stream_runs`](super::JetStreamStore::stream_runs)
    /// (see there), handing each run read to `give`; runs it does not
    /// deliver are delivered `None` by the caller. `known`: each run's
    /// length and the stream sequence of its last message, as a listing
    /// found them (`None` for a run the pass does not read), so they are
    /// not looked up again.
    pub(super) async fn stream_pass(
        &self,
        runs: &[String],
        known: Option<Vec<Option<(u64, u64)>>>,
        budget: ReadBudget,
        held: &std::sync::atomic::AtomicU64,
        give: &mut impl FnMut(usize, Option<Vec<RunMessage>>),
    ) -> Result<()> {
        for r in runs {
            id::check(r)?;
        }
        // Each run's last message: its record count and the stream
        // sequence it ends at (only those are kept, not the message).
        if let Some(mut ends) = known {
            // One end a run (the caller's list, not a copy of it: 7 MB at
            // 300,000 runs).
            ends.resize(runs.len(), None);
            // One look at the stream's size serves both choices: batched
            // gets or a consumer, and the consumer's grouping.
            let total = self.messages().await?;
            if self.by_gets(&ends, total) {
                let listed = ends.iter().enumerate().filter_map(|(index, e)| {
                    e.map(|(records, end)| Listed {
                        index,
                        records,
                        end,
                    })
                });
                let refused = self
                    .pass_by_gets(runs, listed.collect(), budget, held, give)
                    .await;
                // The server refused batched gets: the rest through a
                // consumer (the runs handed over are not read again).
                let left: std::collections::HashSet<usize> = refused.into_iter().collect();
                for (i, e) in ends.iter_mut().enumerate() {
                    if !left.contains(&i) {
                        *e = None;
                    }
                }
                if left.is_empty() {
                    return Ok(());
                }
            }
            return self
                .pass_ending(runs, ends, READ_GROUP.of_stream(total), budget, held, give)
                .await;
        }
        let lasts = futures_util::stream::iter(runs.iter())
            .map(|r| async move {
                // A run whose lookup failed is read on its own (which
                // reports why), not the whole selection.
                let last = self.last_of_run(r).await.ok().flatten()?;
                let n = self.parse_subject(&last.subject).and_then(|(_, s)| s)?;
                Some((n, last.sequence))
            })
            .buffered(64)
            .collect::<Vec<_>>()
            .await;
        self.pass_ending(runs, lasts, GROUP, budget, held, give)
            .await
    }

    /// Whether the runs of `ends` (their lengths) are read by batched
    /// gets ([`pass_by_gets`](Self::pass_by_gets)) rather than a
    /// consumer: where the server allows it, and the runs hold less than
    /// [`GETS_SHARE`] of the stream's `total` messages.
    fn by_gets(&self, ends: &[Option<(u64, u64)>], total: u64) -> bool {
        if !self.gets_whole_runs() {
            return false;
        }
        let expected = ends
            .iter()
            .flatten()
            .fold(0u64, |a, (n, _)| a.saturating_add(*n));
        expected.saturating_mul(GETS_SHARE) < total
    }

    /// [`stream_pass`](Self::stream_pass) once each run's end is known
    /// (`ends`: its length and last stream sequence; `None`: delivered
    /// `None` at once), split between consumers as `grouping` says.
    ///
    /// Memory (issue 40): besides `runs` and `ends`, a run costs an index
    /// (and, when `runs` are not sorted, a map entry to find it by its
    /// subject); only the runs being read hold messages, so a pass over
    /// 300,000 runs written one after another holds a few of them.
    async fn pass_ending(
        &self,
        runs: &[String],
        ends: Vec<Option<(u64, u64)>>,
        grouping: Grouping,
        budget: ReadBudget,
        held: &std::sync::atomic::AtomicU64,
        give: &mut impl FnMut(usize, Option<Vec<RunMessage>>),
    ) -> Result<()> {
        use std::collections::HashMap;
        use std::sync::atomic::Ordering;
        let mut expected = 0u64;
        let mut index: Vec<usize> = Vec::with_capacity(ends.iter().flatten().count());
        for (i, end) in ends.iter().enumerate() {
            match end {
                Some((n, _)) => {
                    expected = expected.saturating_add(*n);
                    index.push(i);
                }
                None => give(i, None),
            }
        }
        let (whole, groups) = self.groups(index, expected, grouping).await?;
        let release = |bytes: u64| release(held, bytes);
        // The listing's runs come sorted: a run is then found by its id
        // without a map of every run.
        let sorted = runs.windows(2).all(|w| matches!(w, [a, b] if a < b));
        for g in groups {
            // A run's position in the group, from its id.
            let at: HashMap<&str, usize> = match sorted {
                true => HashMap::new(),
                false => g
                    .iter()
                    .enumerate()
                    .filter_map(|(k, i)| runs.get(*i).map(|r| (r.as_str(), k)))
                    .collect(),
            };
            let find = |run: &str| match sorted {
                true => {
                    let i = runs.binary_search_by(|r| r.as_str().cmp(run)).ok()?;
                    g.binary_search(&i).ok()
                }
                false => at.get(run).copied(),
            };
            // The runs of the group being read: their messages so far and
            // the bytes counted in `held` for them. A run that went wrong
            // (not its next record, or given up for the budget) is in
            // `irregular` until its end, then read on its own.
            let mut reading: HashMap<usize, (Vec<RunMessage>, u64)> = HashMap::new();
            // The runs begun and not yet ended, by id: a run's later
            // messages are found here rather than by searching every run
            // again (on a stream of runs written interleaved, a search of
            // 300,000 ids misses the cache at each step: bench/RESULTS.md,
            // issue 40). Holds the runs open at once, not every run.
            let mut begun: HashMap<&str, usize> = HashMap::new();
            let mut irregular: std::collections::HashSet<usize> = Default::default();
            let mut open = g.len();
            let mut incomplete = 0u64;
            let what = format!("{} runs ({}.<id>.>)", g.len(), self.prefix);
            let reading_what = Reading {
                run: None,
                what: &what,
                verb: "read",
                batch: FETCH_BATCH,
            };
            let (filter, filters) = match whole {
                true => self.runs_filter(&[], true),
                false => {
                    let names: Vec<String> =
                        g.iter().filter_map(|i| runs.get(*i).cloned()).collect();
                    self.runs_filter(&names, false)
                }
            };
            let mut drain = self.open_drain(reading_what, filter, filters).await?;
            let read = async {
                while open > 0 {
                    // Before each pull, wait for the caller to release runs
                    // it was handed (what is held beyond the runs still open).
                    let ready = || {
                        held.load(Ordering::Relaxed).saturating_sub(incomplete) <= budget.waiting
                    };
                    let Some(m) = drain.next_when(ready).await? else {
                        break;
                    };
                    let Some((run, s)) = self.parse_subject(&m.message.subject) else {
                        continue;
                    };
                    let Some(k) = begun.get(run).copied().or_else(|| find(run)) else {
                        continue;
                    };
                    let Some(i) = g.get(k).copied() else {
                        continue;
                    };
                    let Some((n, end)) = ends.get(i).copied().flatten() else {
                        continue;
                    };
                    let stream_seq = m.info().map(|x| x.stream_sequence).unwrap_or(0);
                    if stream_seq > end {
                        continue; // stored after the lookup: not part of this copy
                    }
                    if stream_seq < end {
                        if let Some(id) = runs.get(i) {
                            begun.entry(id.as_str()).or_insert(k);
                        }
                    }
                    if !irregular.contains(&k) {
                        let (v, bytes) = reading.entry(k).or_default();
                        if s == Some(v.len() as u64 + 1) {
                            let len = m.message.payload.len() as u64;
                            held.fetch_add(len, Ordering::Relaxed);
                            incomplete += len;
                            *bytes += len;
                            v.push(RunMessage {
                                subject: m.message.subject.to_string(),
                                subject_seq: s,
                                stream_seq,
                                body: m.message.payload.to_vec(),
                            });
                        } else {
                            let b = *bytes;
                            reading.remove(&k);
                            irregular.insert(k);
                            incomplete = incomplete.saturating_sub(b);
                            release(b);
                        }
                    }
                    if stream_seq == end {
                        begun.remove(run);
                        let done = match irregular.remove(&k) {
                            true => None,
                            false => reading.remove(&k),
                        };
                        let bytes = done.as_ref().map_or(0, |(_, b)| *b);
                        incomplete = incomplete.saturating_sub(bytes);
                        let done = done.map(|(v, _)| v).filter(|v| v.len() as u64 == n);
                        if done.is_none() {
                            release(bytes);
                        }
                        open -= 1;
                        give(i, done);
                    }
                    if incomplete > budget.open {
                        // Too interleaved to finish within the budget:
                        // the runs holding the most are given up (each
                        // read on its own once it ends here) until half
                        // the budget is held, so the rest goes on in one
                        // pass and the scan is not paid per message.
                        let mut holding: Vec<(u64, usize)> = reading
                            .iter()
                            .filter(|(_, (_, b))| *b > 0)
                            .map(|(k, (_, b))| (*b, *k))
                            .collect();
                        holding.sort_unstable_by(|a, b| b.cmp(a));
                        for (b, k) in holding {
                            if incomplete <= budget.open / 2 {
                                break;
                            }
                            reading.remove(&k);
                            irregular.insert(k);
                            incomplete = incomplete.saturating_sub(b);
                            release(b);
                        }
                    }
                }
                Ok::<(), crate::Error>(())
            }
            .await;
            drain.close().await;
            // What this pass did not finish is released (and read run by run).
            release(reading.values().map(|(_, b)| b).sum());
            read?;
        }
        Ok(())
    }

    /// Every message of these runs through one ephemeral consumer (over the
    /// whole prefix when `whole`), handing each to `visit` with the run's
    /// index, the subject's seq, and the stream sequence. The consumer is
    /// deleted afterwards whatever happens. `verb` says what a failed pull
    /// was for.
    async fn consume_group(
        &self,
        runs: &[String],
        whole: bool,
        verb: &str,
        mut visit: impl FnMut(usize, Option<u64>, u64, &async_nats::Message),
    ) -> Result<()> {
        for r in runs {
            id::check(r)?;
        }
        let mut index = std::collections::HashMap::with_capacity(runs.len());
        for (i, r) in runs.iter().enumerate() {
            index.insert(r.as_str(), i);
        }
        let what = format!("{} runs ({}.<id>.>)", runs.len(), self.prefix);
        let reading = Reading {
            run: None,
            what: &what,
            verb,
            batch: 10_000,
        };
        let (filter, filters) = self.runs_filter(runs, whole);
        let mut drain = self.open_drain(reading, filter, filters).await?;
        let read = async {
            while let Some(m) = drain.next().await? {
                let Some((run, s)) = self.parse_subject(&m.message.subject) else {
                    continue;
                };
                let Some(i) = index.get(run).copied() else {
                    continue;
                };
                let stream_seq = m.info().map(|i| i.stream_sequence).unwrap_or(0);
                visit(i, s, stream_seq, &m.message);
            }
            Ok(())
        }
        .await;
        drain.close().await;
        read
    }
}
