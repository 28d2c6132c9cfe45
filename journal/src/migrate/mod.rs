//! Copying runs between stores, byte for byte (CLI.md `migrate`).
//!
//! The rules, per run:
//!
//! - The source is read with the reader's rule: a torn tail is dropped and
//!   reported. Interior corruption (or seqs that are not 1..N) skips the run
//!   with an error, unless `include_corrupt` copies the readable prefix and
//!   says so. A live source run is skipped unless `allow_live`.
//! - The destination is compared first. Absent: the run is created. A
//!   byte-identical prefix of the source: the copy continues after it (so an
//!   interrupted migrate resumes, and a finished one is a no-op). Anything
//!   else is a conflict, reported and never overwritten.
//! - Records are appended with [`Appender::append_raw`] in seq order: the
//!   bytes are never re-encoded.
//! - Every run is read back and verified: same record count, same SHA-256
//!   over the bodies (each followed by `\n`, i.e. the bytes of a clean
//!   journal file). Only then may the source be deleted.
//!
//! Runs are copied concurrently on a bounded pool, so memory is bounded by
//! the number of jobs (times the largest run: a few runs per job are
//! between reading and writing; a JetStream source also holds up to 16 MiB
//! per job of runs being read and 4 MiB per job of runs read and waiting
//! for a copy), not by the number of runs.

use crate::error::{Error, Result};
use crate::lines::Tail;
use crate::record::Entry;
use crate::store::jetstream::{JetStreamStore, NewRun, ReadBudget, RunMessage};
use crate::store::{Appender, Journal, Store};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone)]
pub struct Options {
    pub dry_run: bool,
    pub include_corrupt: bool,
    pub allow_live: bool,
    pub delete_source: bool,
    /// Convert version-3 runs to version 1 while copying (SPEC 12): the
    /// copy's meta record says version 1, every other byte is the source's.
    pub upgrade: bool,
    /// Runs copied at once (at least 1).
    pub jobs: usize,
}

/// What happened to one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Copied (or continued) and verified.
    Copied,
    /// The destination already held the whole run; verified.
    Complete,
    /// Dry run: would be copied.
    WouldCopy,
    /// Skipped: a writer holds the source run.
    SkippedLive,
    /// Skipped: the source run is corrupt.
    SkippedCorrupt,
    /// The destination holds a different run under this id.
    Conflict,
    /// Copying or verifying failed.
    Failed,
}

impl Outcome {
    /// Whether the run counts as done for the exit status.
    pub fn ok(self) -> bool {
        matches!(
            self,
            Outcome::Copied | Outcome::Complete | Outcome::WouldCopy
        )
    }
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Copied => "copied",
            Outcome::Complete => "complete",
            Outcome::WouldCopy => "would-copy",
            Outcome::SkippedLive => "skipped-live",
            Outcome::SkippedCorrupt => "skipped-corrupt",
            Outcome::Conflict => "conflict",
            Outcome::Failed => "failed",
        }
    }
}

/// The report for one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub run: String,
    pub result: Outcome,
    /// Records of the run as copied (the source's readable records).
    pub records: u64,
    /// Bytes of those records (bodies plus a newline each).
    pub bytes: u64,
    /// Records the destination held before this migrate.
    pub already: u64,
    /// Records appended by this migrate.
    pub appended: u64,
    /// SHA-256 over the bodies, when verified.
    pub sha256: Option<String>,
    pub source_deleted: bool,
    /// The copy holds less than the source: a torn tail was dropped, or
    /// only a readable prefix was copied (`--include-corrupt`).
    pub partial: bool,
    /// Records after the copied prefix were left behind (corruption or
    /// seqs out of order): the source is never deleted.
    #[serde(skip)]
    pub prefix_only: bool,
    /// The failure came from a store (connection, server, disk), not from
    /// this run's data: later runs would fail the same way.
    #[serde(skip)]
    pub store_failed: bool,
    /// What the operator must know: dropped tails, prefixes, conflicts, errors.
    pub notes: Vec<String>,
}

impl RunReport {
    fn new(run: &str) -> RunReport {
        RunReport {
            run: run.to_owned(),
            result: Outcome::Failed,
            records: 0,
            bytes: 0,
            already: 0,
            appended: 0,
            sha256: None,
            source_deleted: false,
            partial: false,
            prefix_only: false,
            store_failed: false,
            notes: Vec::new(),
        }
    }
    fn end(mut self, result: Outcome, note: impl Into<String>) -> RunReport {
        self.result = result;
        let note = note.into();
        if !note.is_empty() {
            self.notes.push(note);
        }
        self
    }
}

/// Counters a progress display can read while a migrate runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub runs_done: AtomicU64,
    pub records: AtomicU64,
}

/// A writer for `run` in `store`: a new run when `create`, else continuing
/// the existing one.
pub fn dest_appender(store: &Store, run: &str, create: bool) -> Result<Box<dyn Appender>> {
    if create {
        store.create_appender(run)
    } else {
        store.open_appender(run)
    }
}

/// Delete a run from `store` after it was copied and verified, only when
/// it still ends at seq `last` (what was copied).
pub fn delete_run(store: &Store, run: &str, last: u64) -> Result<()> {
    match store {
        Store::File(f) => f.delete_copied(run, last).map(|_| ()),
        Store::JetStream(j) => j.delete_copied(run, last).map(|_| ()),
    }
}

/// The runs to copy: the named ones (checked) or every run of the source.
pub fn select(from: &Store, named: &[String]) -> Result<Vec<String>> {
    if named.is_empty() {
        return from.runs();
    }
    let mut runs = Vec::with_capacity(named.len());
    for r in named {
        crate::id::check(r)?;
        if !runs.contains(r) {
            runs.push(r.clone());
        }
    }
    Ok(runs)
}

pub use crate::digest::{digest, hex};

/// Bytes of a JetStream source the bulk reader may hold per job: of runs
/// still being read (enough for runs interleaved in the stream), and of
/// runs read and waiting for a copy (enough to keep every job busy).
const OPEN_PER_JOB: u64 = 16 << 20;
const WAITING_PER_JOB: u64 = 4 << 20;

/// Copy `runs` from `from` to `to`. Never fails as a whole: every run gets
/// its report, in the order given.
///
/// Runs are read and checked concurrently (`jobs` at once). A JetStream
/// source is read in bulk and each run copied as soon as it is complete
/// ([`JetStreamStore::stream_runs`]). New runs on a JetStream destination
/// go to one task that pipelines their appends across runs
/// ([`JetStreamStore::create_runs`]); other copies are made on the pool. A
/// file destination is read back run by run as each copy ends; a JetStream
/// destination is read back once the copies are done, in bulk
/// ([`JetStreamStore::digests`]), which costs the server far less than a
/// read per run. Sources are deleted (`delete_source`) only after their
/// copy is verified.
pub fn migrate(
    from: &Store,
    to: &Store,
    runs: &[String],
    opts: &Options,
    progress: &Progress,
) -> Vec<RunReport> {
    use rayon::prelude::*;
    let bulk = matches!(to, Store::JetStream(_)) && !opts.dry_run;
    // Once a store fails (a server gone, a disk full), every further run
    // would wait out the same timeout: stop starting new runs instead.
    let abort: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let store_failed = |run: &str| {
        if let Ok(mut a) = abort.lock() {
            if a.is_none() {
                *a = Some(format!("run {run}"));
            }
        }
    };
    // New runs on a JetStream destination are created by one task that
    // pipelines their appends (`create_runs`); the rest is copied in place.
    let creator = match (to, opts.dry_run) {
        (Store::JetStream(j), false) => Some(j),
        _ => None,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<NewRun>(opts.jobs.max(1));
    let copy_one = |i: usize, r: &String, pre: Option<Vec<RunMessage>>, tx: &Sender| {
        if let Some(why) = abort.lock().ok().and_then(|a| a.clone()) {
            progress.runs_done.fetch_add(1, Ordering::Relaxed);
            let note = format!(
                "not attempted: an earlier run failed on the store ({why}); re-run to continue"
            );
            return Step::Done(RunReport::new(r).end(Outcome::Failed, note), None);
        }
        let step = match creator {
            Some(_) => match read_source(from, r, opts, pre) {
                Err(rep) => Step::Done(rep, None),
                Ok(src) => {
                    let check = Check {
                        records: src.journal.entries.len(),
                        sha256: src.want,
                    };
                    let batch = batch_of(src.journal.entries, 0);
                    match tx.blocking_send((i, r.clone(), batch)) {
                        Ok(()) => Step::Sent(src.rep, check),
                        // The creator is gone: copy this one in place.
                        Err(_) => {
                            let (rep, c) = copy_run(from, to, r, opts, progress, bulk, None);
                            Step::Done(rep, c)
                        }
                    }
                }
            },
            None => {
                let (rep, c) = copy_run(from, to, r, opts, progress, bulk, pre);
                Step::Done(rep, c)
            }
        };
        if let Step::Done(rep, check) = &step {
            if rep.result == Outcome::Failed && rep.store_failed {
                store_failed(&rep.run);
            }
            if check.is_none() {
                progress.runs_done.fetch_add(1, Ordering::Relaxed);
            }
        }
        step
    };
    let work = |tx: &Sender| -> Vec<Step> {
        match from {
            // A JetStream source is read in one pass (or a consumer per
            // group of runs: a read per run costs the server far more) and
            // each run is copied as soon as it has been read; memory holds
            // at most `OPEN_PER_JOB` + `WAITING_PER_JOB` per job. A run the
            // bulk read cannot vouch for is read on its own.
            Store::JetStream(js) => {
                let held = AtomicU64::new(0);
                std::thread::scope(|s| {
                    let jobs = opts.jobs.max(1) as u64;
                    let budget = ReadBudget {
                        open: OPEN_PER_JOB.saturating_mul(jobs),
                        waiting: WAITING_PER_JOB.saturating_mul(jobs),
                    };
                    let (read_tx, read_rx) = std::sync::mpsc::channel();
                    let held_ref = &held;
                    s.spawn(move || {
                        js.stream_runs(runs, budget, held_ref, |i, pre| {
                            let _ = read_tx.send((i, pre));
                        })
                    });
                    let mut out: Vec<_> = read_rx
                        .into_iter()
                        .par_bridge()
                        .filter_map(|(i, pre): (usize, Option<Vec<RunMessage>>)| {
                            let bytes = pre.iter().flatten().map(|m| m.body.len() as u64).sum();
                            // Released however the copy ends, a panic
                            // included: the reader waits for these bytes.
                            let _release = Release(&held, bytes);
                            runs.get(i).map(|r| (i, copy_one(i, r, pre, tx)))
                        })
                        .collect();
                    out.sort_by_key(|(i, _)| *i);
                    out.into_iter().map(|(_, r)| r).collect()
                })
            }
            Store::File(_) => runs
                .par_iter()
                .enumerate()
                .map(|(i, r)| copy_one(i, r, None, tx))
                .collect(),
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .thread_name(|i| format!("migrate-{i}"))
        .build();
    let (steps, created) = std::thread::scope(|s| {
        let creating = creator.map(|j| {
            let rx = rx;
            s.spawn(move || {
                // Runs that exist are compared, not created: with many runs
                // to copy, one listing finds them cheaper than a refused
                // create each (which would also stop the creator's pipeline).
                let exists = match runs.len() >= LIST_DEST_FROM {
                    true => j.runs().unwrap_or_default().into_iter().collect(),
                    false => std::collections::HashSet::new(),
                };
                let mut ended = std::collections::HashMap::new();
                let inflight = CREATE_INFLIGHT_PER_JOB * opts.jobs.max(1);
                j.create_runs(rx, inflight, &exists, |i, n, r| {
                    progress.records.fetch_add(n, Ordering::Relaxed);
                    if r.as_ref().is_err_and(Error::is_store_failure) {
                        store_failed(runs.get(i).map_or("?", String::as_str));
                    }
                    ended.insert(i, (n, r));
                });
                ended
            })
        });
        let tx = tx;
        let steps = match &pool {
            Ok(pool) => pool.install(|| work(&tx)),
            Err(_) => work(&tx),
        };
        drop(tx);
        let created = creating
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (steps, created)
    });
    // Runs handed to the creator: how their creation ended.
    let mut created = created;
    let steps: Vec<(Step, Option<Created>)> = steps
        .into_iter()
        .enumerate()
        .map(|(i, step)| {
            let ended = matches!(step, Step::Sent(..))
                .then(|| created.remove(&i))
                .flatten();
            (step, ended)
        })
        .collect();
    // Runs refused at create exist already: what they hold is read in bulk
    // (record count and digest), so each is compared without a read of
    // its own.
    let refused: Vec<(String, u64)> = steps
        .iter()
        .filter_map(|(step, ended)| match (step, ended) {
            (Step::Sent(rep, c), Some((0, Err(Error::Exists { .. } | Error::Live { .. })))) => {
                Some((rep.run.clone(), c.records as u64))
            }
            _ => None,
        })
        .collect();
    let held: std::collections::HashMap<String, (u64, String)> = match creator {
        Some(j) if !refused.is_empty() => {
            let names: Vec<String> = refused.iter().map(|(r, _)| r.clone()).collect();
            let records = refused.iter().map(|(_, n)| n).sum();
            names
                .iter()
                .cloned()
                .zip(j.digests(&names, records))
                .filter_map(|(r, d)| d.ok().flatten().map(|x| (r, x)))
                .collect()
        }
        _ => std::collections::HashMap::new(),
    };
    let finish = |(step, ended): (Step, Option<Created>)| match step {
        Step::Done(rep, check) => (rep, check),
        Step::Sent(rep, check) => {
            let dest = held.get(&rep.run);
            let r = after_create(from, to, opts, progress, rep, check, (ended, dest));
            if r.1.is_none() {
                progress.runs_done.fetch_add(1, Ordering::Relaxed);
            }
            r
        }
    };
    let copied: Vec<(RunReport, Option<Check>)> = match &pool {
        Ok(pool) => pool.install(|| steps.into_par_iter().map(finish).collect()),
        Err(_) => steps.into_iter().map(finish).collect(),
    };
    let Store::JetStream(js) = to else {
        return copied.into_iter().map(|(rep, _)| rep).collect();
    };
    // Bulk verification of every run copied to JetStream, then deletes.
    let verified = verify_bulk(js, to, copied);
    let finish = |(rep, checked): (RunReport, bool)| {
        if !checked {
            return rep;
        }
        let rep = after_verify(from, rep, opts);
        progress.runs_done.fetch_add(1, Ordering::Relaxed);
        rep
    };
    match &pool {
        Ok(pool) => pool.install(|| verified.into_par_iter().map(finish).collect()),
        Err(_) => verified.into_iter().map(finish).collect(),
    }
}

type Sender = tokio::sync::mpsc::Sender<NewRun>;

/// Bytes of a JetStream source handed to a copy, released from the bulk
/// reader's count when dropped.
struct Release<'a>(&'a AtomicU64, u64);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        crate::store::jetstream::release(self.0, self.1);
    }
}

/// How the creator ended a run: records stored, and the outcome.
type Created = (u64, Result<()>);

/// Runs the JetStream creator finishes at once per job when it cannot
/// pipeline (another writer busy on the stream): each run's fenced appends
/// then chain, so throughput comes from many runs at once.
const CREATE_INFLIGHT_PER_JOB: usize = 4;

/// From this many runs to copy into JetStream, the destination's runs are
/// listed first.
const LIST_DEST_FROM: usize = 32;

/// Where one run stands after the first pass.
enum Step {
    /// Its report, and what the copy must be verified against.
    Done(RunReport, Option<Check>),
    /// Handed to the JetStream creator as a new run.
    Sent(RunReport, Check),
}

/// The report of a run handed to the JetStream creator, from how its
/// creation ended (`None`: it never ended, the creator failed). A run that
/// already exists is copied in place instead (compared, then continued).
fn after_create(
    from: &Store,
    to: &Store,
    opts: &Options,
    progress: &Progress,
    mut rep: RunReport,
    check: Check,
    (ended, dest): (Option<Created>, Option<&(u64, String)>),
) -> (RunReport, Option<Check>) {
    let want = check.records as u64;
    match ended {
        Some((n, Ok(()))) if n == want => {
            rep.appended = n;
            (rep, Some(check))
        }
        Some((n, Ok(()))) => {
            rep.appended = n;
            (changed_meanwhile(rep, 0, check.records), None)
        }
        // Refused at seq 1, nothing written: the run exists. Compare it
        // and continue it (the source is read again: its records went to
        // the creator). `dest`, what the bulk read found there, settles a
        // byte-identical prefix; anything else is read on its own, which
        // also says where it differs.
        Some((0, Err(Error::Exists { .. } | Error::Live { .. }))) => {
            let run = rep.run.clone();
            let source = match read_source(from, &run, opts, None) {
                Ok(src) => src,
                Err(rep) => return (rep, None),
            };
            let copied = match dest {
                // The whole run, byte-identical: the bulk read verified it.
                Some((n, sha))
                    if *n == source.journal.entries.len() as u64
                        && holds_prefix(&source.journal, *n, sha) =>
                {
                    let mut rep = source.rep;
                    rep.already = *n;
                    let c = Check {
                        records: source.journal.entries.len(),
                        sha256: source.want,
                    };
                    let rep = judge(rep, c, source.journal.entries.len(), sha.clone());
                    return (after_verify(from, rep, opts), None);
                }
                Some((n, sha)) if holds_prefix(&source.journal, *n, sha) => {
                    let n = usize::try_from(*n).unwrap_or(usize::MAX);
                    continue_copy(to, &run, opts, progress, source, n, true)
                }
                _ => write_dest(to, &run, opts, progress, source, false),
            };
            match copied {
                Ok((rep, check)) => (rep, Some(check)),
                Err(rep) => (rep, None),
            }
        }
        Some((n, Err(e))) => {
            rep.appended = n;
            (append_failed(rep, e, n), None)
        }
        None => (
            rep.end(
                Outcome::Failed,
                "the JetStream writer stopped before this run was copied; re-run to continue",
            ),
            None,
        ),
    }
}

/// Verify the runs that carry a [`Check`] by reading them back from `js`
/// in bulk; a run whose messages are irregular, or whose group could not be
/// read, is read on its own instead. Each report comes back with whether
/// it was verified here.
fn verify_bulk(
    js: &JetStreamStore,
    to: &Store,
    items: Vec<(RunReport, Option<Check>)>,
) -> Vec<(RunReport, bool)> {
    use rayon::prelude::*;
    let pending: Vec<String> = items
        .iter()
        .filter(|(_, c)| c.is_some())
        .map(|(r, _)| r.run.clone())
        .collect();
    let records = items
        .iter()
        .filter_map(|(_, c)| c.as_ref().map(|c| c.records as u64))
        .sum();
    let mut found = js.digests(&pending, records).into_iter();
    let paired: Vec<_> = items
        .into_iter()
        .map(|(rep, check)| {
            let got = check.as_ref().map(|_| found.next());
            (rep, check, got)
        })
        .collect();
    paired
        .into_par_iter()
        .map(|(rep, check, got)| match (check, got) {
            // Exactly the records 1..N: the digest decides.
            (Some(c), Some(Some(Ok(Some((n, have)))))) => (judge(rep, c, n as usize, have), true),
            // The store failed (the server gone): reading each run on its
            // own would wait out the same timeout once per run.
            (Some(_), Some(Some(Err(e)))) => {
                let mut rep = rep;
                rep.store_failed = true;
                let note = format!("cannot read the copy back to verify it: {e}; re-run to verify");
                (rep.end(Outcome::Failed, note), true)
            }
            // Anything irregular: read this run on its own, which also says
            // what is wrong.
            (Some(c), _) => (verify_by_read(to, rep, c), true),
            (None, _) => (rep, false),
        })
        .collect()
}

/// Verify copies already in `to` as `migrate` does after copying: each
/// `(run, records, sha256)` is what the run must hold. A report per run,
/// `copied` when it matches, `failed` with the reason otherwise.
pub fn verify_copies(to: &Store, expected: &[(String, usize, String)]) -> Vec<RunReport> {
    let items = expected
        .iter()
        .map(|(run, records, sha256)| {
            let mut rep = RunReport::new(run);
            rep.records = *records as u64;
            rep.appended = *records as u64;
            let c = Check {
                records: *records,
                sha256: sha256.clone(),
            };
            (rep, Some(c))
        })
        .collect::<Vec<_>>();
    match to {
        Store::JetStream(js) => verify_bulk(js, to, items)
            .into_iter()
            .map(|(r, _)| r)
            .collect(),
        Store::File(_) => items
            .into_iter()
            .map(|(rep, c)| match c {
                Some(c) => verify_by_read(to, rep, c),
                None => rep,
            })
            .collect(),
    }
}

/// What a copied run must look like when read back.
#[derive(Debug, Clone)]
struct Check {
    records: usize,
    sha256: String,
}

/// Read the run back on its own and compare. A file copy is compared as
/// raw bytes: its lines are counted and the whole file hashed, which is the
/// digest of its bodies exactly when it is a clean journal of them.
fn verify_by_read(to: &Store, mut rep: RunReport, c: Check) -> RunReport {
    let got = match to {
        Store::File(fs) => fs.digest(&rep.run).map(|(n, sha)| (n, hex(&sha))),
        _ => to.read(&rep.run).map(|j| {
            let have = digest(j.entries.iter().map(|e| e.raw.as_slice()));
            (j.entries.len(), have)
        }),
    };
    match got {
        Ok((n, have)) => judge(rep, c, n, have),
        Err(e) => {
            rep.store_failed = e.is_store_failure();
            rep.end(
                Outcome::Failed,
                format!("cannot read the copy back to verify it: {e}"),
            )
        }
    }
}

/// The verdict on a copy read back with `n` records and digest `have`.
fn judge(mut rep: RunReport, c: Check, n: usize, have: String) -> RunReport {
    if n != c.records || have != c.sha256 {
        return rep.end(
            Outcome::Failed,
            format!(
                "verification failed: the copy has {n} records (sha256 {have}), the source {} (sha256 {})",
                c.records, c.sha256
            ),
        );
    }
    rep.sha256 = Some(c.sha256);
    rep.result = if rep.appended == 0 {
        Outcome::Complete
    } else {
        Outcome::Copied
    };
    if rep.already > 0 && rep.appended > 0 {
        rep.notes
            .push(format!("continued after seq {} already there", rep.already));
    }
    rep
}

/// `--delete-source` for a run whose copy was verified.
fn after_verify(from: &Store, mut rep: RunReport, opts: &Options) -> RunReport {
    if !opts.delete_source || rep.sha256.is_none() || !rep.result.ok() {
        return rep;
    }
    if rep.prefix_only {
        // The records after the prefix exist only in the source.
        rep.notes.push(
            "source kept: only its readable prefix was copied; repair or inspect it (fisk-admin verify), then delete it by hand"
                .into(),
        );
        return rep;
    }
    match delete_run(from, &rep.run, rep.records) {
        Ok(()) => {
            rep.source_deleted = true;
            rep.notes.push("source deleted after verification".into());
        }
        Err(e) => {
            rep.result = Outcome::Failed;
            rep.notes.push(format!(
                "copied and verified, but deleting the source failed: {e}"
            ));
        }
    }
    rep
}

/// Copy one run. With `bulk`, the copy is not read back here: the report
/// comes back with the [`Check`] the caller verifies it against.
fn copy_run(
    from: &Store,
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    bulk: bool,
    pre: Option<Vec<RunMessage>>,
) -> (RunReport, Option<Check>) {
    let rep = copy_inner(from, to, run, opts, progress, pre);
    let (rep, check) = match rep {
        Ok(x) => x,
        Err(rep) => return (rep, None),
    };
    if bulk {
        return (rep, Some(check));
    }
    let rep = verify_by_read(to, rep, check);
    (after_verify(from, rep, opts), None)
}

/// Read and check the source run (the reader's rule, live runs, seqs
/// 1..N, `--include-corrupt`): `Err` with the final report when the run
/// ends here.
fn read_source(
    from: &Store,
    run: &str,
    opts: &Options,
    pre: Option<Vec<RunMessage>>,
) -> std::result::Result<Source, RunReport> {
    let rep = RunReport::new(run);
    let failed = |mut rep: RunReport, e: Error| {
        rep.store_failed = e.is_store_failure();
        rep.end(Outcome::Failed, e.to_string())
    };

    // The source.
    if !opts.allow_live {
        match from.is_live(run) {
            Ok(true) => {
                return Err(rep.end(
                    Outcome::SkippedLive,
                    "a writer holds the source run now; let it finish, or pass --allow-live to copy what is stored",
                ))
            }
            Ok(false) => {}
            Err(e) => return Err(failed(rep, e)),
        }
    }
    let read = match (from, pre) {
        (Store::JetStream(js), Some(messages)) => js
            .journal_from(run, messages, opts.include_corrupt)
            .map(|(j, why)| (j, why.filter(|_| opts.include_corrupt))),
        _ if opts.include_corrupt => from.read_prefix(run),
        _ => from.read(run).map(|j| (j, None)),
    };
    let (mut src, stopped) = match read {
        Ok(x) => x,
        Err(e @ Error::Corrupt { .. }) => {
            return Err(rep.end(
                Outcome::SkippedCorrupt,
                format!("{e}; --include-corrupt copies the readable prefix"),
            ))
        }
        Err(e) => return Err(failed(rep, e)),
    };
    let mut rep = rep;
    if let Some(why) = stopped {
        rep.partial = true;
        rep.prefix_only = true;
        rep.notes.push(format!(
            "source is corrupt ({why}): copied only its readable prefix (--include-corrupt)"
        ));
    }
    if let Tail::Torn {
        line, bytes, error, ..
    } = &src.tail
    {
        rep.partial = true;
        rep.notes.push(format!(
            "source torn tail dropped: line {line}, {} bytes ({error})",
            bytes.len()
        ));
    }
    if let Some(bad) = first_out_of_order(&src.entries) {
        let seq = src.entries.get(bad).map_or(0, |e| e.record.seq);
        let what = format!(
            "record {} has seq {seq}, not {}: the run's seqs are not 1..N",
            bad + 1,
            bad + 1
        );
        if !opts.include_corrupt {
            return Err(rep.end(
                Outcome::SkippedCorrupt,
                format!("{what}; run `fisk-admin verify {run}`; --include-corrupt copies the records before it"),
            ));
        }
        src.entries.truncate(bad);
        rep.partial = true;
        rep.prefix_only = true;
        rep.notes.push(format!(
            "{what}: copied only the {bad} records before it (--include-corrupt)"
        ));
    }
    if src.entries.is_empty() {
        return Err(rep.end(
            Outcome::SkippedCorrupt,
            "the source run has no readable record; nothing to copy",
        ));
    }
    if opts.upgrade {
        upgrade_meta(&mut src, &mut rep)?;
    }
    rep.records = src.entries.len() as u64;
    rep.bytes = src.entries.iter().map(|e| e.raw.len() as u64 + 1).sum();
    let want = digest(src.entries.iter().map(|e| e.raw.as_slice()));
    Ok(Source {
        rep,
        journal: src,
        want,
    })
}

/// `--upgrade`: a version-3 source is copied as version 1, its meta
/// record's version the only byte that differs; the copy is verified
/// against the upgraded bytes. Other versions are copied as they are.
fn upgrade_meta(src: &mut Journal, rep: &mut RunReport) -> std::result::Result<(), RunReport> {
    use crate::record::{Payload, VERSION, VERSION_AUGUST};
    let Some(first) = src.entries.first_mut() else {
        return Ok(());
    };
    let Some(Payload::Meta(m)) = first.record.payload.as_mut() else {
        return Ok(());
    };
    if m.version != VERSION_AUGUST {
        return Ok(());
    }
    match crate::upgrade::meta_as_current(&first.raw) {
        Ok(raw) => {
            first.raw = raw;
            m.version = VERSION;
            rep.notes
                .push("upgraded while copying: version 3 -> 1 (--upgrade)".into());
            Ok(())
        }
        Err(e) => Err(rep.clone().end(
            Outcome::SkippedCorrupt,
            format!("--upgrade cannot convert it: {e}"),
        )),
    }
}

/// A source run read and checked, ready to copy.
struct Source {
    rep: RunReport,
    journal: Journal,
    /// SHA-256 over its bodies.
    want: String,
}

/// Copy one run: `Err` with the final report when the run ends here
/// (skipped, conflict, failed, dry run), else the report and what the copy
/// must be verified against.
fn copy_inner(
    from: &Store,
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    pre: Option<Vec<RunMessage>>,
) -> std::result::Result<(RunReport, Check), RunReport> {
    let source = read_source(from, run, opts, pre)?;
    write_dest(to, run, opts, progress, source, true)
}

/// Copy a source run into `to`: compared first, then continued or created
/// (on JetStream, with `create_first`, created at once: the seq 1 fence
/// refuses a run that exists, and only then is it compared).
fn write_dest(
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    source: Source,
    create_first: bool,
) -> std::result::Result<(RunReport, Check), RunReport> {
    let Source {
        mut rep,
        journal: src,
        want,
    } = source;
    let failed = |mut rep: RunReport, e: Error| {
        rep.store_failed = e.is_store_failure();
        rep.end(Outcome::Failed, e.to_string())
    };

    // The destination. On JetStream, a new run is simply created: the fence
    // of its seq 1 refuses it when anything is stored under the run, and
    // only then is the destination read and compared. Elsewhere (and for a
    // dry run) the destination is read first.
    if let (Store::JetStream(j), false, true) = (to, opts.dry_run, create_first) {
        let mut app = match j.create_new(run) {
            Ok(a) => a,
            Err(e) => return Err(failed(rep, e)),
        };
        // A copy: a refusal at seq 1 goes on to compare `src` below.
        let batch = batch_of(src.entries.clone(), 0);
        match append_from(&mut app, batch, &mut rep, progress) {
            Ok(()) => {
                return Ok((
                    rep,
                    Check {
                        records: src.entries.len(),
                        sha256: want,
                    },
                ))
            }
            // Refused at seq 1, nothing written: the run exists.
            Err(Some((Error::Exists { .. } | Error::Live { .. }, 0))) => {}
            Err(Some((err, stored))) => return Err(append_failed(rep, err, stored)),
            Err(None) => return Err(changed_meanwhile(rep, 0, src.entries.len())),
        }
    }
    let dest = match to.read(run) {
        Ok(j) => Some(j),
        Err(Error::NotFound { .. }) => None,
        Err(e @ Error::Corrupt { .. }) => {
            return Err(rep.end(
                Outcome::Conflict,
                format!("the destination run cannot be read ({e}); it was left untouched"),
            ))
        }
        Err(e) => return Err(failed(rep, e)),
    };
    let already = match &dest {
        Some(d) => match compare(&src, d) {
            Ok(n) => n,
            Err(why) => {
                return Err(rep.end(
                    Outcome::Conflict,
                    format!("{why}; the destination was left untouched"),
                ))
            }
        },
        None => 0,
    };
    continue_copy(
        to,
        run,
        opts,
        progress,
        Source {
            rep,
            journal: src,
            want,
        },
        already,
        dest.is_some(),
    )
}

/// The rest of [`write_dest`] once the destination is known to hold the
/// source's first `already` records, byte-identical (`exists`: it holds
/// the run at all).
fn continue_copy(
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    source: Source,
    already: usize,
    exists: bool,
) -> std::result::Result<(RunReport, Check), RunReport> {
    let Source {
        mut rep,
        journal: mut src,
        want,
    } = source;
    let failed = |mut rep: RunReport, e: Error| {
        rep.store_failed = e.is_store_failure();
        rep.end(Outcome::Failed, e.to_string())
    };
    rep.already = already as u64;
    if opts.dry_run {
        return Err(if already == src.entries.len() {
            rep.end(Outcome::Complete, "")
        } else {
            let note = if already > 0 {
                format!("would continue after seq {already}")
            } else {
                String::new()
            };
            rep.end(Outcome::WouldCopy, note)
        });
    }

    // Copy what is missing.
    let n = src.entries.len();
    let appended = if let (Store::File(f), false) = (to, exists) {
        // A new file run is written whole: one write, one fsync, no lock.
        let batch = batch_of(std::mem::take(&mut src.entries), 0);
        let want_n = batch.len() as u64;
        counted(f.create_whole(run, batch), want_n, &mut rep, progress)
    } else if already < n {
        let mut app = match dest_appender(to, run, !exists) {
            Ok(a) => a,
            Err(e) => return Err(failed(rep, e)),
        };
        if app.last_seq() != already as u64 {
            return Err(rep.end(
                Outcome::Conflict,
                format!(
                    "the destination changed while migrating (it now ends at seq {}, was {already}); re-run to compare again",
                    app.last_seq()
                ),
            ));
        }
        let batch = batch_of(std::mem::take(&mut src.entries), already);
        append_from(app.as_mut(), batch, &mut rep, progress)
    } else {
        Ok(())
    };
    match appended {
        Ok(()) => {}
        Err(Some((err, stored))) => return Err(append_failed(rep, err, stored)),
        Err(None) => return Err(changed_meanwhile(rep, already, n)),
    }
    Ok((
        rep,
        Check {
            records: n,
            sha256: want,
        },
    ))
}

/// Append `batch` (the source's records after the first `already`: see
/// [`batch_of`]), counting them in the report. `Err(Some((error, stored)))` when an append failed,
/// `Err(None)` when some seqs were already there (skipped as duplicates).
fn append_from(
    app: &mut dyn Appender,
    batch: Vec<(u64, Vec<u8>)>,
    rep: &mut RunReport,
    progress: &Progress,
) -> std::result::Result<(), Option<(Error, u64)>> {
    let want_n = batch.len() as u64;
    counted(app.append_batch(batch), want_n, rep, progress)
}

/// Count what an append of `want_n` records stored (see [`append_from`]).
fn counted(
    (stored, result): (u64, Result<()>),
    want_n: u64,
    rep: &mut RunReport,
    progress: &Progress,
) -> std::result::Result<(), Option<(Error, u64)>> {
    rep.appended += stored;
    progress.records.fetch_add(stored, Ordering::Relaxed);
    match result {
        Err(err) => Err(Some((err, stored))),
        Ok(()) if stored != want_n => Err(None),
        Ok(()) => Ok(()),
    }
}

/// The records of `entries` after the first `already`, as appended.
fn batch_of(entries: Vec<Entry>, already: usize) -> Vec<(u64, Vec<u8>)> {
    entries
        .into_iter()
        .skip(already)
        .map(|e| (e.record.seq, e.raw))
        .collect()
}

fn append_failed(mut rep: RunReport, err: Error, stored: u64) -> RunReport {
    let note = if matches!(err, Error::Refused { .. }) {
        format!("{err} (after {stored} records of this run were copied; this destination cannot take the rest)")
    } else {
        format!("{err} (after {stored} records of this run were copied; re-run to continue)")
    };
    rep.store_failed = err.is_store_failure();
    rep.end(Outcome::Failed, note)
}

fn changed_meanwhile(rep: RunReport, already: usize, n: usize) -> RunReport {
    rep.end(
        Outcome::Conflict,
        format!(
            "the destination already held some of seqs {}..{n} while copying them; re-run to compare again",
            already + 1
        ),
    )
}

/// Whether the first `n` records of `src` have digest `sha` (a
/// destination holding `n` records with that digest holds them).
fn holds_prefix(src: &Journal, n: u64, sha: &str) -> bool {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    match src.entries.get(..n) {
        Some(head) => digest(head.iter().map(|e| e.raw.as_slice())) == sha,
        None => false,
    }
}

/// The index of the first entry whose seq is not its position.
fn first_out_of_order(entries: &[Entry]) -> Option<usize> {
    entries
        .iter()
        .enumerate()
        .find(|(i, e)| e.record.seq != *i as u64 + 1)
        .map(|(i, _)| i)
}

/// How many records of `src` the destination already holds, byte-identical,
/// or why it is a different run.
fn compare(src: &Journal, dest: &Journal) -> std::result::Result<usize, String> {
    if let Tail::Torn { line, .. } = &dest.tail {
        return Err(format!(
            "the destination run has a torn tail at line {line}; repair it first (`fisk-admin repair {}`)",
            dest.run
        ));
    }
    if dest.entries.len() > src.entries.len() {
        return Err(format!(
            "the destination run has {} records, the source only {}",
            dest.entries.len(),
            src.entries.len()
        ));
    }
    for (i, (d, s)) in dest.entries.iter().zip(&src.entries).enumerate() {
        if d.raw != s.raw {
            return Err(format!(
                "the destination run differs from the source at record {} (seq {})",
                i + 1,
                s.record.seq
            ));
        }
    }
    Ok(dest.entries.len())
}
