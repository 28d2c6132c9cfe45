//! Copying runs between stores, byte for byte (CLI.md `migrate`).
//!
//! The rules, per run:
//!
//! - The source is read with the reader's rule: a torn tail is dropped and
//!   reported. Interior corruption (or seqs that are not 1..N) skips the run
//!   with an error, unless `include_corrupt` copies the readable prefix and
//!   says so. A live source run is skipped unless `allow_live`. A run
//!   whose messages have no meta record (JetStream, `orphan-messages`) is
//!   copied as it is stored only with `include_corrupt` (`orphan`).
//! - The destination is compared first. Absent: the run is created. A
//!   byte-identical prefix of the source: the copy continues after it (so an
//!   interrupted migrate resumes, and a finished one is a no-op). Anything
//!   else is a conflict, reported and never overwritten.
//! - Records are appended with [`Appender::append_raw`](crate::store::Appender::append_raw) in seq order: the
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
//!
//! The parts: `select` (which runs, and each source run read and
//! checked), `copy` (into the destination), `orphan` (runs without a meta
//! record), `check` (reading copies back, then deleting sources) and
//! `report` (where each run's copy stands, and what it ends with: the
//! leaf the others share, so no two of them import each other).

mod check;
mod copy;
mod custody;
mod orphan;
mod report;
mod select;

pub use self::check::verify_copies;
pub use self::report::{Outcome, RunReport};
pub use self::select::select;
pub use crate::digest::{digest, hex};

use self::check::{after_verify, verify_bulk, Checked};
use self::copy::{after_create, batch_of, copy_run, write_dest};
use self::report::{Check, Copied};
use self::select::read_source;
use crate::error::{Error, Result};
use crate::store::{Creator, Handed, NewRunSender, Prefetched, ReadBudget, Store};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone)]
/// How `migrate` runs (its flags).
pub struct Options {
    /// `--dry-run`: say what would be copied, copy nothing.
    pub dry_run: bool,
    /// `--include-corrupt`: copy the readable prefix of a corrupt run.
    pub include_corrupt: bool,
    /// `--allow-live`: copy runs being written too.
    pub allow_live: bool,
    /// `--delete-source`: delete each source run once its copy is verified.
    pub delete_source: bool,
    /// Convert version-3 runs to version 1 while copying (SPEC 12): the
    /// copy's meta record says version 1, every other byte is the source's.
    pub upgrade: bool,
    /// Runs copied at once (at least 1).
    pub jobs: usize,
    /// Copy the source as it was at this cut ([`Store::cut`], taken
    /// before the runs were listed): a JetStream source's records stored
    /// after that stream sequence are left for a later migrate, and a run
    /// created after it is skipped. `None`: whatever is stored when each
    /// run is read.
    pub cut: Option<u64>,
    /// How a report names each [`Lever`] (the front end's word for it,
    /// a flag on a command line); [`Lever::field`] names it as this
    /// struct does.
    pub named: fn(Lever) -> &'static str,
}

impl Default for Options {
    /// Copy every readable run that no writer holds, one at a time,
    /// reports naming the options as this struct does.
    fn default() -> Options {
        Options {
            dry_run: false,
            include_corrupt: false,
            allow_live: false,
            delete_source: false,
            upgrade: false,
            jobs: 1,
            named: Lever::field,
            cut: None,
        }
    }
}

/// An option of [`Options`] a run's report points at: the one that would
/// copy a run migrate skipped, or the one that made it copy what it did.
/// The report names it as [`Options::named`] says, so a front end's
/// reports speak its own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lever {
    /// [`Options::allow_live`].
    AllowLive,
    /// [`Options::include_corrupt`].
    IncludeCorrupt,
    /// [`Options::upgrade`].
    Upgrade,
}

impl Lever {
    /// The option's name in [`Options`].
    pub fn field(self) -> &'static str {
        match self {
            Lever::AllowLive => "allow_live",
            Lever::IncludeCorrupt => "include_corrupt",
            Lever::Upgrade => "upgrade",
        }
    }
}

/// Counters a progress display can read while a migrate runs.
#[derive(Debug, Default)]
pub struct Progress {
    /// Runs whose copy has ended (copied, complete, skipped or failed);
    /// a copy read back in bulk is verified after every run is counted.
    pub runs_done: AtomicU64,
    /// Records stored in the destination.
    pub records: AtomicU64,
    /// The destination's audit log entry for this migrate (issue 38),
    /// written before its first write, and only if there is one.
    pub(crate) batch: custody::Gate,
}

/// Bytes of a JetStream source the bulk reader may hold per job: of runs
/// still being read (enough for runs interleaved in the stream), and of
/// runs read and waiting for a copy (enough to keep every job busy).
const OPEN_PER_JOB: u64 = 16 << 20;
const WAITING_PER_JOB: u64 = 4 << 20;

/// Runs the JetStream creator finishes at once per job when it cannot
/// pipeline (another writer busy on the stream): each run's fenced appends
/// then chain, so throughput comes from many runs at once.
const CREATE_INFLIGHT_PER_JOB: usize = 4;

/// From this many runs to copy into JetStream, the destination's runs are
/// listed first.
const LIST_DEST_FROM: usize = 32;

/// Copy `runs` from `from` to `to`. Never fails as a whole: every run gets
/// its report, in the order given.
///
/// Runs are read and checked concurrently (`jobs` at once), each copied as
/// soon as the source has read it (`Store::copy_each`). Each run is
/// handed to the destination's creator (`Store::create_many`; a
/// JetStream one pipelines their appends across runs) as a new run
/// (`copy_all`). Runs that creator found existing are then compared
/// and continued (`finish_created`). Once the copies are done they are
/// read back ([`Store::digests`], `verify_all`). Sources are deleted
/// (`delete_source`) only after their copy is verified.
pub fn migrate(
    from: &Store,
    to: &Store,
    runs: &[String],
    opts: &Options,
    progress: &Progress,
) -> Vec<RunReport> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .thread_name(|i| format!("migrate-{i}"))
        .build()
        .ok();
    let abort = crate::store::Breaker::default();
    let cx = Cx {
        from,
        to,
        runs,
        opts,
        progress,
        abort: &abort,
    };
    // Logged in the destination's audit log (issue 38): the intent before
    // the first run is written (a migrate that writes nothing logs
    // nothing); a copy whose intent cannot be stored is not made.
    progress.batch.arm(format!(
        "a copy of {} run(s) from {}",
        runs.len(),
        from.describe()
    ));
    let (steps, created) = copy_all(&cx, pool.as_ref());
    let copied = finish_created(&cx, pool.as_ref(), steps, created);
    let mut reports = verify_all(&cx, pool.as_ref(), copied);
    if let Some(b) = progress.batch.begun() {
        custody::log_copies(from, to, &b, &mut reports);
    }
    reports
}

/// What every phase of one migrate works with.
struct Cx<'a> {
    from: &'a Store,
    to: &'a Store,
    runs: &'a [String],
    opts: &'a Options,
    progress: &'a Progress,
    abort: &'a crate::store::Breaker,
}

/// How the creator ended a run.
struct Created {
    /// Records stored (duplicates skipped not counted).
    stored: u64,
    /// How it ended.
    end: Result<()>,
}

/// Where one run stands after the first pass.
enum Step {
    /// Copied in place.
    Done(Copied),
    /// Handed to the creator as a new run: how it ended when the store
    /// wrote it there and then, else the creator says.
    Sent(RunReport, Check, Option<Created>),
}

/// Map `items` with `f`, in parallel on `pool` (in order), else in turn.
fn on_pool<T: Send, R: Send>(
    pool: Option<&rayon::ThreadPool>,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    match pool {
        Some(pool) => pool.install(|| items.into_par_iter().map(f).collect()),
        None => items.into_iter().map(f).collect(),
    }
}

/// The first pass: every run read and copied, or handed to the
/// destination's creator (which runs beside the pool meanwhile): a step
/// per run, in order, and how the creator ended the runs it was handed.
fn copy_all(cx: &Cx, pool: Option<&rayon::ThreadPool>) -> (Vec<Step>, HashMap<usize, Created>) {
    // New runs go to the destination's creator, which makes them as its
    // store does best (JetStream: one thread pipelines their appends);
    // a dry run writes nothing: every run is compared in place.
    let creating = match cx.opts.dry_run {
        false => Some(cx.to.create_many(cx.opts.jobs.max(1))),
        true => None,
    };
    let (tx, creator) = creating.unzip();
    std::thread::scope(|s| {
        let creating = creator.map(|c| s.spawn(move || create_new_runs(cx, c)));
        let steps = match pool {
            Some(pool) => pool.install(|| read_and_copy(cx, tx.as_ref())),
            None => read_and_copy(cx, tx.as_ref()),
        };
        drop(tx);
        let created = creating
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (steps, created)
    })
}

/// The creator's thread: creates the runs handed to it until the senders
/// are gone; how each ended, by index.
fn create_new_runs(cx: &Cx, creator: Creator) -> HashMap<usize, Created> {
    // Runs that exist are compared, not created: with many runs to copy,
    // one listing finds them cheaper than a refused create each (which
    // would also stop a JetStream creator's pipeline). Listed only by a
    // creator that asks.
    let exists = || match cx.runs.len() >= LIST_DEST_FROM {
        true => cx.to.runs().unwrap_or_default().into_iter().collect(),
        false => HashSet::new(),
    };
    let mut ended = HashMap::new();
    let inflight = CREATE_INFLIGHT_PER_JOB * cx.opts.jobs.max(1);
    creator.run(inflight, exists, |i, n, r| {
        ended.insert(i, created(cx, i, n, r));
    });
    ended
}

/// A new run ended (`n` records stored): counted, and a store failure
/// stops the runs not yet started.
fn created(cx: &Cx, i: usize, n: u64, end: Result<()>) -> Created {
    cx.progress.records.fetch_add(n, Ordering::Relaxed);
    cx.progress.runs_done.fetch_add(1, Ordering::Relaxed);
    // Once a store fails (a server gone, a disk full), every further run
    // would wait out the same timeout: new runs are not started.
    if end.as_ref().is_err_and(Error::is_store_failure) {
        let run = cx.runs.get(i).map_or("?", String::as_str);
        cx.abort.trip(format!("run {run}"));
    }
    Created { stored: n, end }
}

/// Read every source run and copy it (or hand it to `tx`), on the current
/// pool: a step per run, in order. The source reads them the way it reads
/// best ([`Store::copy_each`]: a JetStream source in bulk, holding at most
/// `OPEN_PER_JOB` + `WAITING_PER_JOB` per job; a run the bulk read cannot
/// vouch for is read on its own).
fn read_and_copy(cx: &Cx, tx: Option<&NewRunSender>) -> Vec<Step> {
    let jobs = cx.opts.jobs.max(1) as u64;
    let budget = ReadBudget {
        open: OPEN_PER_JOB.saturating_mul(jobs),
        waiting: WAITING_PER_JOB.saturating_mul(jobs),
    };
    let runs = cx.runs;
    cx.from.copy_each(runs, budget, |i, pre| {
        let r = runs.get(i).map_or("", String::as_str);
        copy_one(cx, i, r, pre, tx)
    })
}

/// The first pass for run `i`: not attempted after a store failed; else
/// read and handed to the creator (`tx`), or copied in place.
fn copy_one(
    cx: &Cx,
    i: usize,
    r: &str,
    pre: Option<Prefetched>,
    tx: Option<&NewRunSender>,
) -> Step {
    let (from, to, opts, progress) = (cx.from, cx.to, cx.opts, cx.progress);
    if let Some(why) = cx.abort.tripped() {
        progress.runs_done.fetch_add(1, Ordering::Relaxed);
        let note = format!(
            "not attempted: an earlier run failed on the store ({why}); re-run to continue"
        );
        return Step::Done(Copied::Ended(RunReport::new(r).end(Outcome::Failed, note)));
    }
    // A run without a meta record (JetStream; never one the bulk read
    // vouched for) has a copy of its own, with `--include-corrupt`.
    let orphan = opts.include_corrupt && pre.is_none() && matches!(from.orphan(r), Ok(Some(_)));
    let step = match tx {
        _ if orphan => Step::Done(Copied::Ended(orphan::copy_orphan(
            from, to, r, opts, progress,
        ))),
        Some(tx) => match read_source(from, r, opts, pre) {
            Err(rep) => Step::Done(Copied::Ended(rep)),
            // There already, as the destination can tell cheaply: compared
            // and continued in place, not refused by the creator (which
            // would have the source read again).
            Ok(src) if !tx.may_create(r) => Step::Done(write_dest(to, r, opts, progress, src)),
            Ok(src) => {
                let check = Check {
                    records: src.journal.entries.len(),
                    sha256: src.want,
                };
                if let Err(e) = progress.batch.open(to) {
                    return Step::Done(Copied::Ended(report::failed(src.rep, e)));
                }
                let batch = batch_of(src.journal.entries, 0);
                match tx.send((i, r.to_owned(), batch)) {
                    Ok(Handed::Queued) => Step::Sent(src.rep, check, None),
                    Ok(Handed::Made(n, end)) => {
                        Step::Sent(src.rep, check, Some(created(cx, i, n, end)))
                    }
                    // The creator is gone: copy this one in place.
                    Err(_) => Step::Done(copy_run(from, to, r, opts, progress, None)),
                }
            }
        },
        None => Step::Done(copy_run(from, to, r, opts, progress, pre)),
    };
    if let Step::Done(copied) = &step {
        let rep = copied.report();
        if rep.result == Outcome::Failed && rep.store_failed {
            cx.abort.trip(format!("run {}", rep.run));
        }
        progress.runs_done.fetch_add(1, Ordering::Relaxed);
    }
    step
}

/// The second pass: each run handed to the creator gets its report from
/// how its creation ended. Runs refused at create exist already: what they
/// hold is read in bulk (record count and digest), so each is compared
/// without a read of its own.
fn finish_created(
    cx: &Cx,
    pool: Option<&rayon::ThreadPool>,
    steps: Vec<Step>,
    mut created: HashMap<usize, Created>,
) -> Vec<Copied> {
    let steps: Vec<(Step, Option<Created>)> = steps
        .into_iter()
        .enumerate()
        .map(|(i, step)| match step {
            Step::Sent(rep, check, made) => {
                let ended = made.or_else(|| created.remove(&i));
                (Step::Sent(rep, check, None), ended)
            }
            done => (done, None),
        })
        .collect();
    let refused: Vec<(String, u64)> = steps
        .iter()
        .filter_map(|(step, ended)| match (step, ended) {
            (
                Step::Sent(rep, c, _),
                Some(Created {
                    stored: 0,
                    end: Err(Error::Exists { .. } | Error::Live { .. }),
                }),
            ) => Some((rep.run.clone(), c.records as u64)),
            _ => None,
        })
        .collect();
    let held: HashMap<String, (u64, String)> = if refused.is_empty() {
        HashMap::new()
    } else {
        let names: Vec<String> = refused.iter().map(|(r, _)| r.clone()).collect();
        let records = refused.iter().map(|(_, n)| n).sum();
        names
            .iter()
            .cloned()
            .zip(cx.to.digests(&names, records))
            .filter_map(|(r, d)| d.ok().flatten().map(|x| (r, x)))
            .collect()
    };
    on_pool(pool, steps, |(step, ended)| match step {
        Step::Done(copied) => copied,
        Step::Sent(rep, check, _) => {
            let dest = held.get(&rep.run);
            after_create(cx, rep, check, ended, dest)
        }
    })
}

/// The last pass: every copy not yet verified is read back
/// ([`Store::digests`]: a JetStream destination in bulk, which costs the
/// server far less than a read per run; a file one run by run, in
/// parallel), then its source deleted (`delete_source`).
fn verify_all(cx: &Cx, pool: Option<&rayon::ThreadPool>, copied: Vec<Copied>) -> Vec<RunReport> {
    let verified = match pool {
        Some(pool) => pool.install(|| verify_bulk(cx.to, copied)),
        None => verify_bulk(cx.to, copied),
    };
    on_pool(pool, verified, |checked| match checked {
        Checked::Earlier(rep) => rep,
        Checked::Now(rep) => after_verify(cx.from, rep, cx.opts),
    })
}
