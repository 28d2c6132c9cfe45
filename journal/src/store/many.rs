//! The operations over many runs that `migrate`, `validate`, `verify` and
//! the whole-store reads (`stats --all`, `search --in`, `inbox`) need (a
//! bulk read for copying with its budget, every run read once, a bulk
//! create, digests, delete-after-copy, verifying a whole store), each done
//! the way its backend does best, so that nothing outside `store/` knows a
//! backend.

use super::{file, jetstream, Journal, Store, Summary, Verified};

pub use jetstream::{release, NewRun, ReadBudget};

/// A run's messages as [`Store::copy_each`] read them, for
/// [`Store::journal_for_copy`].
pub struct Prefetched(Vec<jetstream::RunMessage>);

impl Prefetched {
    /// Body bytes held (what [`Store::copy_each`] counts against its budget).
    pub fn bytes(&self) -> u64 {
        self.0.iter().map(|m| m.body.len() as u64).sum()
    }
}

/// The picked runs' `ends` and `keys`, given in the order their summaries
/// came (`at`: each one's place in the list, none twice), in the list's
/// order, as the list cut down to them holds their ids: as they came,
/// unless a summary came out of step.
fn in_list_order<E, K>(at: Vec<usize>, ends: Vec<E>, keys: Vec<K>) -> (Vec<E>, Vec<K>) {
    if at.windows(2).all(|w| matches!(w, [a, b] if a < b)) {
        return (ends, keys);
    }
    let mut z: Vec<_> = at.into_iter().zip(ends).zip(keys).collect();
    z.sort_by_key(|((i, _), _)| *i);
    z.into_iter().map(|((_, e), k)| (e, k)).unzip()
}

/// Bytes of a bulk-read source handed to a copy, released from the
/// reader's count when dropped.
struct Release<'a>(&'a std::sync::atomic::AtomicU64, u64);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        release(self.0, self.1);
    }
}

/// The feeding side of [`Store::create_many`]: [`send`](Self::send) hands
/// a new run to the store's creator. Dropping every sender ends the
/// creator's input.
pub struct NewRunSender<'a>(Feed<'a>);

enum Feed<'a> {
    /// JetStream: to the creator's pipeline, waiting while it is full.
    Pipeline(jetstream::NewRunSender),
    /// File: written on the sender's own thread, whole (one write, one
    /// fsync, no lock: there is nothing to pipeline, and the runs stay
    /// as parallel as their senders); how it ended goes back to the
    /// sender, not through a channel to the creator's thread: a message
    /// a run handed across threads had the allocator (mimalloc) hold
    /// 6 MB more by 2,000 runs, though the heap held no more
    /// (bench/RESULTS.md, issue 25).
    Whole(&'a file::FileStore),
}

/// What became of a run handed to [`NewRunSender::send`].
pub enum Handed {
    /// Queued: the creator reports how it ends ([`Creator::run`]).
    Queued,
    /// Written there and then: the records stored and how it ended (as
    /// [`Appender::append_batch`](super::Appender::append_batch)).
    Made(u64, crate::Result<()>),
}

impl NewRunSender<'_> {
    /// Whether `run` is worth handing over as a new run: `false` when the
    /// store can tell cheaply that it exists (file: its journal is there),
    /// for the caller to compare it in place rather than have it refused.
    /// JetStream: always `true` (asking would cost a round trip per run;
    /// the creator refuses an existing run at its first append).
    pub(crate) fn may_create(&self, run: &str) -> bool {
        match &self.0 {
            Feed::Pipeline(_) => true,
            Feed::Whole(f) => !f.journal_path(run).is_ok_and(|p| p.exists()),
        }
    }

    /// Hand a run (index, id, its records: exactly seqs 1..N) to the
    /// creator, waiting while it is full, or write it now (file). `Err`
    /// gives the run back when the creator is gone.
    pub fn send(&self, run: NewRun) -> std::result::Result<Handed, NewRun> {
        match &self.0 {
            Feed::Pipeline(tx) => tx.send(run).map(|()| Handed::Queued),
            Feed::Whole(f) => {
                let (_, id, records) = run;
                let (n, r) = f.create_whole(&id, records);
                Ok(Handed::Made(n, r))
            }
        }
    }
}

/// The creating side of [`Store::create_many`]: runs on a thread of its
/// own, reporting each run handed to its [`NewRunSender`] as it ends.
pub struct Creator<'a>(Make<'a>);

enum Make<'a> {
    Pipeline {
        js: &'a jetstream::JetStreamStore,
        rx: jetstream::NewRunReceiver,
    },
    /// File: every run was written by its sender; nothing to report.
    Whole,
}

impl Creator<'_> {
    /// Create every run sent until all senders are dropped; a run named in
    /// `exists()` (called once, by a creator that uses it) is reported as
    /// existing, not written. `done` gets each
    /// run's index, the records stored, and how it ended (as
    /// [`Appender::append_batch`](super::Appender::append_batch); an existing run: `Error::Exists` or
    /// `Error::Live`, nothing stored). JetStream: the appends of many runs
    /// pipelined, at most `inflight` runs one by one at a time when they
    /// cannot be (see [`jetstream::JetStreamStore::create_runs`]). File:
    /// each run was written whole by its sender, which had how it ended
    /// ([`Handed::Made`]; [`file::FileStore::create_whole`] refuses an
    /// existing run itself): nothing is reported, `exists` is not called.
    pub fn run(
        self,
        inflight: usize,
        exists: impl FnOnce() -> std::collections::HashSet<String>,
        done: impl FnMut(usize, u64, crate::Result<()>),
    ) {
        match self.0 {
            Make::Pipeline { js, rx } => js.create_runs(rx, inflight, &exists(), done),
            Make::Whole => {}
        }
    }
}

/// The operations over many runs that `migrate`, `validate` and `verify`
/// need, each done the way its backend does best.
impl Store {
    /// The run's stored records in seq order as the lines of a journal
    /// (each body followed by `\n`; a file journal's bytes as stored).
    pub fn read_lines(&self, run: &str) -> crate::Result<Vec<u8>> {
        self.read_lines_at(run, None)
    }

    /// [`read_lines`](Self::read_lines) as the store held the run at
    /// `cut` (a stream's [`cut`](Self::cut)): only the records stored at
    /// or before it, none when the run was created after it. `None` (a
    /// file store's cut): as it is now.
    pub fn read_lines_at(&self, run: &str, cut: Option<u64>) -> crate::Result<Vec<u8>> {
        match self {
            Store::File(f) => Ok(f.read_bytes(run)?.1),
            Store::JetStream(j) => {
                let mut messages = j.read_messages(run)?;
                if let Some(cut) = cut {
                    jetstream::upto_cut(&mut messages, cut);
                }
                jetstream::sort_by_seq(&mut messages);
                Ok(jetstream::as_lines(&messages))
            }
        }
    }

    /// Verify `runs` (every run when none is named): the store's own
    /// findings first (file: the directory's mode, names that are not run
    /// ids, orphan locks; JetStream: the stream's configuration, and runs
    /// whose messages have no meta record, `orphan-messages`), then each
    /// run's, read in parallel. A named run the store does not hold is an
    /// error.
    pub fn verify(
        &self,
        runs: &[String],
        check: Option<&dyn crate::verify::RecordCheck>,
    ) -> crate::Result<Verified> {
        use crate::verify::Report;
        let named = !runs.is_empty();
        let mut reports = Vec::new();
        let mut orphaned = 0;
        let runs: Vec<String> = match self {
            Store::File(f) => {
                let listing = f.list()?;
                if runs.is_empty() {
                    reports.push(Report {
                        findings: file::verify_store_dir(f, &listing),
                        ..Report::default()
                    });
                    listing.runs
                } else {
                    runs.to_vec()
                }
            }
            Store::JetStream(j) => {
                reports.push(Report {
                    findings: jetstream::stream_config_findings(
                        j.name(),
                        &jetstream::check_config(j.config()),
                    ),
                    ..Report::default()
                });
                // Runs without a meta record: found by listing every
                // subject (every run is read below anyway), or for a
                // named run its own; reported once each, not read as runs.
                let orphans = match runs.is_empty() {
                    true => {
                        let (orphans, invalid) = j.orphans_and_invalid()?;
                        reports.extend(
                            invalid
                                .iter()
                                .map(|t| jetstream::invalid_id_report(j.prefix(), t)),
                        );
                        orphans
                    }
                    false => {
                        let mut found = Vec::new();
                        for r in runs {
                            crate::id::check(r)?;
                            found.extend(j.orphan(r)?);
                        }
                        found
                    }
                };
                orphaned = orphans.len();
                for o in &orphans {
                    reports.push(match o.pending {
                        // A run being written whole, not yet its meta record.
                        true => jetstream::write_interrupted_report(
                            &o.run,
                            j.pending(&o.run).ok().flatten().as_ref(),
                        ),
                        false => jetstream::orphan_report(j.prefix(), o),
                    });
                }
                let orphans: std::collections::HashSet<&str> =
                    orphans.iter().map(|o| o.run.as_str()).collect();
                let listed = match runs.is_empty() {
                    true => j.runs()?,
                    false => runs.to_vec(),
                };
                listed
                    .into_iter()
                    .filter(|r| !orphans.contains(r.as_str()))
                    .collect()
            }
        };
        let named = if named { runs.as_slice() } else { &[] };
        for r in named {
            if !self.exists(r)? {
                return Err(crate::Error::NotFound {
                    run: r.clone(),
                    at: self.place(),
                });
            }
        }
        match self {
            Store::File(f) => {
                let mut runs = file::verify_file_runs(f, &runs, check, named.is_empty());
                reports.append(&mut runs);
            }
            Store::JetStream(j) => {
                for (r, read) in runs.iter().zip(j.read_many(&runs)) {
                    reports.push(match read {
                        Ok(messages) => {
                            jetstream::verify_run_on(r, messages, check, !j.config().deny_purge)
                        }
                        // The server gone or frozen is not this run's
                        // finding: verify could not do its job (exit 2).
                        Err(e) if e.is_store_failure() => return Err(e),
                        Err(e) => crate::verify::unreadable(r, &e),
                    });
                }
            }
        }
        Ok(Verified {
            reports,
            runs: runs.len() + orphaned,
        })
    }

    /// The store as a place, for errors about it as a whole.
    pub fn place(&self) -> crate::Where {
        match self {
            Store::File(f) => crate::Where::Path(f.dir().to_path_buf()),
            Store::JetStream(j) => j.place(),
        }
    }

    /// Read each of `runs` and hand it to `copy` (with its index) exactly
    /// once, on the current rayon pool: the results in the order given.
    /// Each backend reads the way it does best. File: each run is read by
    /// `copy` itself ([`journal_for_copy`](Self::journal_for_copy) with
    /// `None`), in parallel. JetStream: one consumer over many runs costs
    /// the server far less than a read per run, so the runs are read in
    /// bulk on a thread of their own ([`jetstream::JetStreamStore::stream_runs`])
    /// and each is handed over as soon as it is complete, with its
    /// messages when the bulk read vouches for them (else `None`: read on
    /// its own). Memory then holds at most `budget` of runs read and not
    /// yet copied: the bytes are released once `copy` returns, or panics.
    pub(crate) fn copy_each<R: Send>(
        &self,
        runs: &[String],
        budget: ReadBudget,
        copy: impl Fn(usize, Option<Prefetched>) -> R + Sync + Send,
    ) -> Vec<R> {
        self.bulk_each(runs, None, budget, copy)
    }

    /// [`copy_each`](Self::copy_each), given where each run ended
    /// ([`Summary`]'s `stream_end`) when a listing found it.
    fn bulk_each<R: Send>(
        &self,
        runs: &[String],
        ends: Option<Vec<Option<(u64, u64)>>>,
        budget: ReadBudget,
        copy: impl Fn(usize, Option<Prefetched>) -> R + Sync + Send,
    ) -> Vec<R> {
        use rayon::prelude::*;
        use std::sync::PoisonError;
        let Store::JetStream(j) = self else {
            return (0..runs.len())
                .into_par_iter()
                .map(|i| copy(i, None))
                .collect();
        };
        let held = std::sync::atomic::AtomicU64::new(0);
        // Each run's result in its place, as it comes: no list of
        // (index, result) to sort at the end (a whole-store pass whose
        // visits return nothing holds a byte a run).
        let out: std::sync::Mutex<Vec<Option<R>>> =
            std::sync::Mutex::new(std::iter::repeat_with(|| None).take(runs.len()).collect());
        std::thread::scope(|s| {
            let (read_tx, read_rx) = std::sync::mpsc::channel();
            let held_ref = &held;
            s.spawn(move || {
                j.stream_runs_ending(runs, ends, budget, held_ref, |i, m| {
                    let _ = read_tx.send((i, m.map(Prefetched)));
                })
            });
            read_rx
                .into_iter()
                .par_bridge()
                .for_each(|(i, pre): (usize, Option<Prefetched>)| {
                    let bytes = pre.as_ref().map_or(0, Prefetched::bytes);
                    // Released however the copy ends, a panic included:
                    // the reader waits for these bytes.
                    let _release = Release(&held, bytes);
                    let r = copy(i, pre);
                    let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(slot) = out.get_mut(i) {
                        *slot = Some(r);
                    }
                });
        });
        out.into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .into_iter()
            .flatten()
            .collect()
    }

    /// Read each of `runs` (as listed: [`summaries`](Self::summaries))
    /// completely with the reader's rule and hand it to
    /// `visit` (with its index) exactly once, on the current rayon pool:
    /// the results in the order given. What a whole-store pass (`stats
    /// --all`, `search --in`, `inbox`) reads, and exactly what
    /// [`read_batch`](Self::read_batch) would give each run, healthy or
    /// damaged. File: each run read by its worker, in parallel. JetStream:
    /// one pass of one consumer over the stream (or over groups of these
    /// runs when they are a small part of it), each run handed over as
    /// soon as it is complete (where its summary says it ended: a run
    /// stored to since is read as it was listed), however the runs
    /// interleave; a run the pass cannot vouch for (damaged, changed
    /// meanwhile, not summarised from its tail, or given up to keep
    /// memory bounded) is read on its own as `read_batch` reads it.
    /// Memory holds at most [`READ_EACH`](Self::READ_EACH) of runs read and
    /// not yet visited (and one pull), whatever the store's size.
    pub fn read_each<R: Send>(
        &self,
        runs: &[&Summary],
        visit: impl Fn(usize, crate::Result<Journal>) -> R + Sync + Send,
    ) -> Vec<R> {
        self.read_each_within(runs, Self::READ_EACH, visit)
    }

    /// How much of a JetStream store [`read_each`](Self::read_each) holds:
    /// 32 MiB of runs still being read (interleaved with others), 8 MiB
    /// of runs read and waiting for their visit (the reader outruns the
    /// decoding; more waiting only costs memory).
    pub const READ_EACH: ReadBudget = ReadBudget {
        open: 32 << 20,
        waiting: 8 << 20,
    };

    /// [`read_each`](Self::read_each) within `budget` (the tests give it
    /// none, so that every run is read on its own).
    // For tests (journal/tests/jetstream_read.rs), not API.
    #[doc(hidden)]
    pub fn read_each_within<R: Send>(
        &self,
        runs: &[&Summary],
        budget: ReadBudget,
        visit: impl Fn(usize, crate::Result<Journal>) -> R + Sync + Send,
    ) -> Vec<R> {
        let ids: Vec<String> = runs.iter().map(|s| s.run_id.clone()).collect();
        let ends: Vec<Option<(u64, u64)>> = runs.iter().map(|s| s.stream_end).collect();
        self.read_listed(&ids, ends, budget, visit)
    }

    /// A whole-store pass that holds what its caller keeps, not the store
    /// (issue 40): every run's summary goes to `pick`, in id order (as
    /// [`summaries_each`](Self::summaries_each) makes them); each run it
    /// picks, with a value of the caller's, is then read whole as
    /// [`read_each`](Self::read_each) reads it and handed to `visit` with
    /// its id and that value, exactly once, on the current rayon pool, in
    /// no set order. File: a group of runs at a time, its picked runs read
    /// (in parallel) before the next group is summarised, so memory holds a
    /// group. JetStream: the one pass over the stream needs the end of every
    /// run it reads before it starts, so memory holds each picked run's id,
    /// end and value (about 90 bytes a run beside the value), then the
    /// pass's budget ([`READ_EACH`](Self::READ_EACH)).
    pub fn read_picked<K: Send + Sync>(
        &self,
        mut pick: impl FnMut(Summary) -> Option<K>,
        visit: impl Fn(&str, &K, crate::Result<Journal>) + Sync + Send,
    ) -> crate::Result<()> {
        use rayon::prelude::*;
        let j = match self {
            Store::JetStream(j) => j,
            Store::File(f) => {
                let runs = f.list()?.runs;
                let locks = file::LiveLocks::snapshot();
                for group in runs.chunks(super::SUMMARY_GROUP) {
                    let part: Vec<Summary> =
                        group.par_iter().map(|id| f.summary(id, &locks)).collect();
                    let picked: Vec<(String, K)> = part
                        .into_iter()
                        .filter_map(|s| {
                            let id = s.run_id.clone();
                            pick(s).map(|k| (id, k))
                        })
                        .collect();
                    picked
                        .par_iter()
                        .for_each(|(id, k)| visit(id, k, self.read_alone(id)));
                }
                return Ok(());
            }
        };
        // The runs listed, and which of them are picked (by their place
        // in the list, once each): the list is then cut down to the picked
        // ids where it lies, so the pass holds each id once and no second
        // list of them (bench/RESULTS.md, issue 40).
        let mut listed = j.runs()?;
        let mut picked = vec![false; listed.len()];
        let most = listed.len();
        let mut at: Vec<usize> = Vec::new();
        let mut ends: Vec<Option<(u64, u64)>> = Vec::new();
        let mut keys: Vec<K> = Vec::new();
        let mut place = 0usize;
        j.summaries_each(&listed, |s| {
            // Summaries come one a run in the list's order; a summary out
            // of step is placed by its id all the same.
            let here = match listed.get(place) {
                Some(r) if *r == s.run_id => Some(place),
                _ => listed.binary_search(&s.run_id).ok(),
            };
            place = here.unwrap_or(place) + 1;
            let end = s.stream_end;
            let slot = here.and_then(|i| Some((i, picked.get_mut(i)?)));
            // A run summarised twice is seen and picked once.
            if slot.as_ref().is_some_and(|(_, taken)| **taken) {
                return;
            }
            // Every summary is seen (`pick` counts what it cannot read);
            // only a run of the list can be read.
            let Some(k) = pick(s) else { return };
            if let Some((i, taken)) = slot {
                *taken = true;
                // Never more than the runs listed: the last growth of
                // each list stops there, not at twice what it held.
                crate::held::push_within(&mut at, i, most);
                crate::held::push_within(&mut ends, end, most);
                crate::held::push_within(&mut keys, k, most);
            }
        })?;
        let (ends, keys) = in_list_order(at, ends, keys);
        let mut k = 0usize;
        listed.retain(|_| {
            let keep = picked.get(k).copied().unwrap_or(false);
            k += 1;
            keep
        });
        drop(picked);
        // Sized for every run listed: what was not picked would be held
        // through the whole pass beside its budget.
        let ids = crate::held::fit(listed);
        let ends = crate::held::fit(ends);
        let keys = crate::held::fit(keys);
        self.read_listed(&ids, ends, Self::READ_EACH, |i, j| {
            if let (Some(id), Some(k)) = (ids.get(i), keys.get(i)) {
                visit(id, k, j);
            }
        });
        Ok(())
    }

    /// [`read_each_within`](Self::read_each_within) of runs given by id
    /// and where each ended when listed (`Summary::stream_end`).
    fn read_listed<R: Send>(
        &self,
        ids: &[String],
        ends: Vec<Option<(u64, u64)>>,
        budget: ReadBudget,
        visit: impl Fn(usize, crate::Result<Journal>) -> R + Sync + Send,
    ) -> Vec<R> {
        use std::sync::PoisonError;
        // The store's failure once a run read on its own met it (the
        // server gone): the runs still to read are given it without
        // asking, each would wait out its own timeout.
        let failed: std::sync::Mutex<Option<crate::Error>> = std::sync::Mutex::new(None);
        self.bulk_each(ids, Some(ends), budget, |i, pre| {
            let run = ids.get(i).map_or("", String::as_str);
            let journal = match (self, pre) {
                (Store::JetStream(j), Some(Prefetched(messages))) => {
                    j.journal_from(run, messages, false).map(|(x, _)| x)
                }
                (Store::JetStream(j), None) => {
                    let earlier = failed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .as_ref()
                        .and_then(|e| j.failure_for(run, e));
                    match earlier {
                        Some(e) => Err(e),
                        None => {
                            let read = self.read_alone(run);
                            if let Err(e) = &read {
                                let mut f = failed.lock().unwrap_or_else(PoisonError::into_inner);
                                if f.is_none() {
                                    *f = j.failure_for(run, e);
                                }
                            }
                            read
                        }
                    }
                }
                (Store::File(_), _) => self.read_alone(run),
            };
            visit(i, journal)
        })
    }

    /// One run read on its own as [`read_batch`](Self::read_batch) reads
    /// it: on JetStream every message on the run's subjects (`read`, by
    /// direct gets, would not see a message on no record subject).
    fn read_alone(&self, run: &str) -> crate::Result<Journal> {
        self.read_batch(std::slice::from_ref(&run.to_owned()))
            .pop()
            .unwrap_or_else(|| Err(crate::Error::refused(run, "not read")))
    }

    /// The run to copy, from what [`copy_each`](Self::copy_each)
    /// delivered or else read now, with the reader's rule; `lenient`: its
    /// readable prefix and why reading stopped early, as
    /// [`read_prefix`](Self::read_prefix); `cut` (a stream's
    /// [`cut`](Self::cut)): only what it held at that sequence.
    pub(crate) fn journal_for_copy(
        &self,
        run: &str,
        pre: Option<Prefetched>,
        lenient: bool,
        cut: Option<u64>,
    ) -> crate::Result<(Journal, Option<String>)> {
        match (self, pre, cut) {
            // As the stream held it at the cut.
            (Store::JetStream(j), pre, Some(upto)) => j
                .journal_upto(run, pre.map(|Prefetched(m)| m), upto, lenient)
                .map(|(journal, why)| (journal, why.filter(|_| lenient))),
            (Store::JetStream(j), Some(Prefetched(messages)), None) => j
                .journal_from(run, messages, lenient)
                .map(|(journal, why)| (journal, why.filter(|_| lenient))),
            _ if lenient => self.read_prefix(run),
            _ => self.read(run).map(|j| (j, None)),
        }
    }

    /// A cut of the store as it is now, for a copy or a seal that takes
    /// nothing stored after it (`journal_for_copy`,
    /// [`read_lines_at`](Self::read_lines_at)):
    /// a stream's last sequence; `None` for a file store, whose runs a
    /// writer holds locked.
    pub fn cut(&self) -> crate::Result<Option<u64>> {
        match self {
            Store::JetStream(j) => j.last_sequence().map(Some),
            Store::File(_) => Ok(None),
        }
    }

    /// A creator of many new runs (see [`Creator::run`]), fed through the
    /// sender, whose `send` blocks while `capacity` runs wait (JetStream,
    /// where one thread pipelines their appends across runs) or writes the
    /// run whole there and then (file).
    pub(crate) fn create_many(&self, capacity: usize) -> (NewRunSender<'_>, Creator<'_>) {
        match self {
            Store::JetStream(js) => {
                let (tx, rx) = jetstream::new_runs(capacity);
                (
                    NewRunSender(Feed::Pipeline(tx)),
                    Creator(Make::Pipeline { js, rx }),
                )
            }
            Store::File(f) => (NewRunSender(Feed::Whole(f)), Creator(Make::Whole)),
        }
    }

    /// Write a new run of these records (exactly seqs 1..N) at once: how
    /// many were stored and how it ended, as
    /// [`Appender::append_batch`](super::Appender::append_batch). File: written whole, one write and one
    /// fsync, no lock ([`file::FileStore::create_whole`]); JetStream: a
    /// created appender's batch. An existing run is refused.
    pub(crate) fn create_whole(
        &self,
        run: &str,
        records: Vec<(u64, Vec<u8>)>,
    ) -> (u64, crate::Result<()>) {
        match self {
            Store::File(f) => f.create_whole(run, records),
            Store::JetStream(_) => match self.create_appender(run) {
                Ok(mut a) => a.append_batch(records),
                Err(e) => (0, Err(e)),
            },
        }
    }

    /// The run's record count and SHA-256 over its bodies (each followed
    /// by `\n`), read back on its own. A file is hashed as raw bytes: the
    /// digest of its bodies exactly when it is a clean journal of them.
    pub fn digest(&self, run: &str) -> crate::Result<(usize, String)> {
        match self {
            Store::File(f) => f.digest(run).map(|(n, sha)| (n, crate::digest::hex(&sha))),
            Store::JetStream(j) => j.read(run).map(|j| {
                let have = crate::digest::digest(j.entries.iter().map(|e| e.raw.as_slice()));
                (j.entries.len(), have)
            }),
        }
    }

    /// Record count and digest of each of `runs` (`records`: what they
    /// are expected to hold in all), in the order given, on the current
    /// rayon pool: `Ok(None)` for a run this cannot vouch for (read it
    /// with [`digest`](Self::digest), which also says what is wrong).
    /// File: each run hashed on its own, in parallel (one that cannot be
    /// read is `None`); JetStream: read in bulk, which costs the server
    /// far less than a read per run.
    // For tests (journal/tests/jetstream.rs), not API: `migrate` uses it.
    #[doc(hidden)]
    pub fn digests(
        &self,
        runs: &[String],
        records: u64,
    ) -> Vec<crate::Result<Option<(u64, String)>>> {
        match self {
            Store::JetStream(j) => j.digests(runs, records),
            Store::File(f) => {
                use rayon::prelude::*;
                runs.par_iter()
                    .map(|r| {
                        Ok(f.digest(r)
                            .ok()
                            .map(|(n, sha)| (n as u64, crate::digest::hex(&sha))))
                    })
                    .collect()
            }
        }
    }

    /// Delete a run after it was copied and verified, only when it still
    /// ends at seq `last` (what was copied).
    // For tests (journal/tests/), not API: `migrate` uses it.
    #[doc(hidden)]
    pub fn delete_copied(&self, run: &str, last: u64) -> crate::Result<()> {
        match self {
            Store::File(f) => f.delete_copied(run, last).map(|_| ()),
            // The hold is checked on the run as the delete reads it.
            Store::JetStream(j) => j.delete_copied(run, last).map(|_| ()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::in_list_order;

    #[test]
    fn picked_runs_out_of_step_are_put_back_in_the_lists_order() {
        let (e, k) = in_list_order(vec![0, 2, 5], vec!['a', 'c', 'f'], vec![10, 30, 60]);
        assert_eq!((e, k), (vec!['a', 'c', 'f'], vec![10, 30, 60]));
        let (e, k) = in_list_order(vec![5, 0, 2], vec!['f', 'a', 'c'], vec![60, 10, 30]);
        assert_eq!((e, k), (vec!['a', 'c', 'f'], vec![10, 30, 60]));
        let (e, k) = in_list_order(Vec::new(), Vec::<u8>::new(), Vec::<u8>::new());
        assert!(e.is_empty() && k.is_empty());
    }
}
