//! The blocking facade: [`JetStreamStore`] and [`JetStreamAppender`], the
//! public, synchronous face of the async core (`core.rs`, `append.rs`'s
//! `Writer`), as mini-redis's `BlockingClient` is of its `Client`.
//!
//! Each holds the runtime (`Rt`) and a core, and nothing else; every
//! method is one call into the core, blocked on (`block_on`), run as a
//! task and waited for (`task`: a caller's thread sleeps once instead of
//! at every await, what keeps many concurrent callers cheap), or bridged
//! (`bridge`: the core on a thread of its own, the caller's callback on
//! the caller's thread, outside the runtime). Pure work (decoding, places)
//! and file writes (the backups of `rm` and `upgrade`) run here, outside
//! the runtime. The core holds no facade type and no runtime, so no async
//! code can call back into a method here. A host inside tokio uses the
//! same core through [`AsyncJetStreamStore`] instead (`asynch.rs`), which
//! is also how [`JetStreamStore::connect`] binds.

use super::append::Writer;
use super::asynch::AsyncJetStreamStore;
use super::budget::ReadBudget;
use super::chain::NewRunReceiver;
use super::conn::Rt;
use super::core::Core;
use super::delete::Fence;
use super::upgrade::Step;
use super::whole::{Finish, Pending};
use super::DEFAULT_HOLD;
use super::{Headless, Orphan, RunMessage};
use crate::error::{Result, Where};
use crate::nats::Settings;
use crate::store::{keep_run, keep_run_once, Intent, Journal, Summary};
use crate::upgrade::Outcome;
use async_nats::jetstream::stream;
use std::collections::HashSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// A bound JetStream session store.
#[derive(Clone)]
pub struct JetStreamStore {
    pub(super) rt: Rt,
    pub(super) core: Arc<Core>,
    /// SPEC 8's hold: a run not at rest whose last record is younger than
    /// this is live (zero: no hold).
    hold: Duration,
    /// Who writes through this store, for the audit log (issue 38).
    actor: Option<Arc<crate::audit::Actor>>,
}

impl JetStreamStore {
    /// Connect and bind to `name`, refusing a stream that breaks SPEC 8.
    pub fn connect(settings: &Settings, name: &str) -> Result<JetStreamStore> {
        let s = JetStreamStore::connect_unchecked(settings, name)?;
        s.core.check()?;
        Ok(s)
    }

    /// Bind without checking the configuration beyond its subject (verify
    /// reports the problems as findings instead).
    pub fn connect_unchecked(settings: &Settings, name: &str) -> Result<JetStreamStore> {
        // Bound through the async store, inside this store's runtime: the
        // connection's tasks run on it.
        let rt = Rt::new()?;
        let bound = rt.block_on(AsyncJetStreamStore::connect_unchecked(settings, name))?;
        Ok(JetStreamStore {
            rt,
            core: bound.core,
            hold: DEFAULT_HOLD,
            actor: None,
        })
    }

    /// Who writes through this store (see [`crate::store::Store::with_actor`]).
    pub(crate) fn actor(&self) -> Option<&crate::audit::Actor> {
        self.actor.as_deref()
    }

    /// This store, its writes logged as `actor`'s; the NATS user the
    /// connection authenticates as is added from its settings.
    pub(crate) fn set_actor(&mut self, actor: Option<crate::audit::Actor>) {
        self.actor = actor.map(|mut a| {
            a.nats_user = crate::nats::user_of(&self.core.settings);
            Arc::new(a)
        });
    }

    /// This store with another hold (`--hold`; zero turns it off).
    pub fn with_hold(mut self, hold: Duration) -> JetStreamStore {
        self.hold = hold;
        self
    }

    /// Refused (`Error::Held`) while the run is within the hold: for every
    /// command that writes or deletes (SPEC 8).
    pub fn check_held(&self, run: &str) -> Result<()> {
        self.rt.block_on(self.core.check_held(run, self.hold))
    }

    /// `f`, a core call, as a task on the runtime's workers, waited for.
    fn task<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        self.rt
            .run_task(f)
            .unwrap_or_else(|why| Err(self.core.err(None, why)))
    }

    /// The stream's name.
    pub fn name(&self) -> &str {
        &self.core.name
    }
    /// The subject prefix the stream binds (`<prefix>.>`).
    pub fn prefix(&self) -> &str {
        &self.core.prefix
    }
    /// The server this store is connected to, without credentials.
    pub fn server(&self) -> &str {
        self.core.server()
    }
    /// The connection settings this store was opened with.
    pub fn settings(&self) -> &Settings {
        &self.core.settings
    }
    /// The stream's configuration as the server gave it at bind time.
    pub fn config(&self) -> &stream::Config {
        &self.core.config
    }

    /// For messages: "stream S on nats://..".
    pub fn describe(&self) -> String {
        self.core.describe()
    }

    /// The stream as a place.
    pub fn place(&self) -> Where {
        self.core.place()
    }

    /// Where record `seq` of `run` is stored: its subject.
    pub fn at_record(&self, run: &str, seq: u64, position: usize) -> Where {
        self.core.at_record(run, seq, position)
    }

    /// `<prefix>.<id>._meta` for seq 1, `<prefix>.<id>.<N>` otherwise.
    pub fn subject(&self, run: &str, seq: u64) -> String {
        self.core.subject(run, seq)
    }

    /// The run's seq for a subject of this stream, if it is a record subject.
    pub fn parse_subject<'a>(&self, subject: &'a str) -> Option<(&'a str, Option<u64>)> {
        self.core.parse_subject(subject)
    }

    /// Append an audit entry (`audit.rs`): `make` makes it for its number
    /// and the link of the entry before it.
    pub(crate) fn audit_append(
        &self,
        make: &mut (dyn FnMut(u64, Option<String>) -> Vec<u8> + Send),
    ) -> Result<(u64, Vec<u8>)> {
        self.core.writable()?;
        self.rt.block_on(self.core.audit_append(make))
    }

    /// The audit log's messages, in stream order (`audit.rs`).
    pub fn audit_read(&self) -> Result<Vec<super::LogMessage>> {
        self.rt.block_on(self.core.audit_read())
    }

    /// Valid run ids with a meta record, sorted.
    pub fn runs(&self) -> Result<Vec<String>> {
        self.rt.block_on(self.core.runs())
    }

    /// Runs (valid ids) with messages and no meta record, sorted: found
    /// by listing every subject of the stream (`orphan.rs`).
    pub fn orphans(&self) -> Result<Vec<Orphan>> {
        self.rt.block_on(self.core.orphans())
    }

    /// [`orphans`](Self::orphans), and the run tokens on the stream's
    /// subjects that are not valid run ids (`orphan.rs`).
    pub fn orphans_and_invalid(&self) -> Result<(Vec<Orphan>, Vec<String>)> {
        self.rt.block_on(self.core.orphans_and_invalid())
    }

    /// `run` when it has messages and no meta record.
    pub fn orphan(&self, run: &str) -> Result<Option<Orphan>> {
        self.rt.block_on(self.core.orphan(run))
    }

    /// The records of a run without a meta record, as stored, in seq
    /// order, and how many of its messages are on no record subject. A
    /// delete's fence is neither.
    pub fn read_headless(&self, run: &str) -> Result<Headless> {
        let mut messages = self.read_messages(run)?;
        messages.retain(|m| !super::subject::is_tombstone(&m.body));
        super::sort_by_seq(&mut messages);
        let others = messages.iter().filter(|m| m.subject_seq.is_none()).count();
        let records = messages
            .into_iter()
            .filter_map(|m| m.subject_seq.map(|s| (s, m.body)))
            .collect();
        Ok(Headless { records, others })
    }

    /// Whether the stream holds a message of `run` (any of its subjects).
    pub fn exists(&self, run: &str) -> Result<bool> {
        self.rt.block_on(self.core.exists(run))
    }

    /// Every message of the run in stream order, exactly as stored.
    pub fn read_messages(&self, run: &str) -> Result<Vec<RunMessage>> {
        let (core, run) = (self.core.clone(), run.to_owned());
        self.task(async move { core.read_run(&run, false).await })
    }

    /// Every message of the run in stream order, exactly as stored, read
    /// through a consumer whatever the tail says: a damaged run's tail may
    /// be any of its records (`recover` reads this).
    pub fn read_all_messages(&self, run: &str) -> Result<Vec<RunMessage>> {
        let (core, run) = (self.core.clone(), run.to_owned());
        self.task(async move { core.read_run(&run, true).await })
    }

    /// Read a run with the reader's rule. Messages are atomic, so there is no
    /// torn write; a final body that does not decode is still dropped (as a
    /// file's final line would be) and one before it is corruption.
    pub fn read(&self, run: &str) -> Result<Journal> {
        let messages = self.read_messages(run)?;
        self.core.decode_run(run, messages, false).map(|(j, _)| j)
    }

    /// Like [`read`](Self::read), but stop at the first message that breaks
    /// the run instead of failing: the readable prefix and why it stopped.
    pub fn read_prefix(&self, run: &str) -> Result<(Journal, Option<String>)> {
        let messages = self.read_messages(run)?;
        self.core.decode_run(run, messages, true)
    }

    /// Summarise a run from its meta record and its tail (SPEC 9): the last
    /// message, then backwards by direct get to the last assistant record.
    pub fn summary(&self, run: &str) -> Summary {
        self.rt.block_on(self.core.summary(run, self.hold))
    }

    /// Summaries of `runs`, concurrently (bounded), in the order given.
    pub fn summaries(&self, runs: &[String]) -> Vec<Summary> {
        self.rt.block_on(self.core.summaries(runs, self.hold))
    }

    /// [`summaries`](Self::summaries), each handed to `each` in the order
    /// given as soon as its group of runs is summarised: the listing is
    /// never held whole. `each` runs on the caller's thread, outside the
    /// runtime.
    pub fn summaries_each(&self, runs: &[String], each: impl FnMut(Summary)) -> Result<()> {
        let (core, hold) = (&self.core, self.hold);
        self.rt.bridge(
            move |tx| async move {
                core.summaries_each(runs, hold, |s| {
                    let _ = tx.send(s);
                })
                .await
            },
            each,
        )
    }

    /// Read many runs completely (every message on `<prefix>.<id>.>`),
    /// concurrently (bounded), in the order given.
    pub fn read_many(&self, runs: &[String]) -> Vec<Result<Vec<RunMessage>>> {
        self.rt.block_on(self.core.read_many(runs))
    }

    /// `e`, the store's failure met reading another run (the server gone,
    /// the stream deleted), as `run`'s: the same words at `run`'s place;
    /// `None` when `e` is not the store's failure.
    pub(crate) fn failure_for(&self, run: &str, e: &crate::Error) -> Option<crate::Error> {
        match e {
            crate::Error::Unavailable { message, .. } => {
                Some(self.core.err(Some(run), message.clone()))
            }
            _ => self.core.for_each_run(e),
        }
    }

    /// A journal from messages read by [`stream_runs`](Self::stream_runs),
    /// decoded exactly as [`read`](Self::read) (or, `lenient`,
    /// [`read_prefix`](Self::read_prefix)) would.
    pub fn journal_from(
        &self,
        run: &str,
        messages: Vec<RunMessage>,
        lenient: bool,
    ) -> Result<(Journal, Option<String>)> {
        self.core.decode_run(run, messages, lenient)
    }

    /// The sequence of the last message the stream holds now (0 when it
    /// holds none): a cut for [`journal_upto`](Self::journal_upto).
    pub fn last_sequence(&self) -> Result<u64> {
        let core = self.core.clone();
        self.task(async move {
            let mut stream = core.stream.clone();
            Ok(core
                .conn
                .info(&mut stream, &core.name)
                .await?
                .state
                .last_sequence)
        })
    }

    /// The run as the stream held it at sequence `upto` (a cut taken
    /// with [`last_sequence`](Self::last_sequence)): its messages stored
    /// at or before it ([`upto_cut`](super::upto_cut)), from `messages`
    /// when given, else read now, decoded as
    /// [`read_prefix`](Self::read_prefix) (`lenient`) or
    /// [`read`](Self::read) do: empty when the run was created after the
    /// cut.
    pub fn journal_upto(
        &self,
        run: &str,
        messages: Option<Vec<RunMessage>>,
        upto: u64,
        lenient: bool,
    ) -> Result<(Journal, Option<String>)> {
        let mut messages = match messages {
            Some(m) => m,
            None => self.read_messages(run)?,
        };
        super::upto_cut(&mut messages, upto);
        self.core.decode_run(run, messages, lenient)
    }

    /// Count and SHA-256 (over each body followed by `\n`) of each run, read
    /// back through one consumer (over the whole prefix when `records`, the
    /// records expected in these runs, are at least half the stream, else
    /// one per group of runs) instead of a read per run. `Ok(None)` for a
    /// run whose messages are not exactly its record subjects 1..N in
    /// stream order (absent, gaps, stray subjects, records rewritten out of
    /// order): the caller reads such a run on its own. When a group cannot
    /// be read, each of its runs gets the store's failure (or, when it was
    /// none, `Ok(None)`: read on its own).
    pub fn digests(&self, runs: &[String], records: u64) -> Vec<Result<Option<(u64, String)>>> {
        let (core, owned) = (self.core.clone(), runs.to_vec());
        match self.task(async move { core.digests(owned, records).await }) {
            Ok(v) => v,
            Err(e) => runs
                .iter()
                .map(|_| self.core.for_each_run(&e).map_or(Ok(None), Err))
                .collect(),
        }
    }

    /// Read these runs for copying, handing each to `deliver` (with its
    /// index in `runs`) as soon as all of it has been read, so that copies
    /// overlap the reading: each run's messages in seq order, or `None` for
    /// a run this read cannot vouch for (absent, gaps, stray subjects, or
    /// more interleaved with other runs than `budget` allows): the caller
    /// reads that one on its own. Every run is delivered exactly once, on
    /// the caller's thread.
    ///
    /// When these runs hold at least half the stream's messages, one
    /// consumer reads the whole prefix in a single pass (filtering costs
    /// the server more than reading the few other messages); otherwise one
    /// consumer per group of runs, filtered to them. Each run is complete
    /// at the stream sequence of its last message, looked up first.
    ///
    /// Memory: `held` counts the body bytes read and not yet released by
    /// the caller (who subtracts a delivered run's bytes when done with
    /// it). Reading pauses while the runs handed over and not yet released
    /// hold more than `budget.waiting`, and once the runs still open hold
    /// more than `budget.open` gives up the ones holding the most (each
    /// then delivered `None` when the pass reaches its end) until they
    /// hold half of it. So at most `open + waiting`
    /// is held, and one pull more may be in flight: at most 8 MiB, or one
    /// larger message.
    pub fn stream_runs(
        &self,
        runs: &[String],
        budget: ReadBudget,
        held: &AtomicU64,
        deliver: impl FnMut(usize, Option<Vec<RunMessage>>),
    ) {
        self.stream_runs_ending(runs, None, budget, held, deliver);
    }

    /// [`stream_runs`](Self::stream_runs), given each run's length and the
    /// stream sequence of its last message as a listing found them
    /// (`None`: read on its own), instead of looking them up.
    pub(crate) fn stream_runs_ending(
        &self,
        runs: &[String],
        ends: Option<Vec<Option<(u64, u64)>>>,
        budget: ReadBudget,
        held: &AtomicU64,
        mut deliver: impl FnMut(usize, Option<Vec<RunMessage>>),
    ) {
        let mut sent = vec![false; runs.len()];
        let mut give = |i: usize, m: Option<Vec<RunMessage>>| {
            if let Some(s) = sent.get_mut(i) {
                if !*s {
                    *s = true;
                    deliver(i, m);
                }
            }
        };
        let core = &self.core;
        // A failed pass is not reported here: the runs it did not deliver
        // are read run by run, which reports the store's failure per run.
        let _ = self.rt.bridge(
            move |tx| async move {
                let mut send = |i, m| {
                    let _ = tx.send((i, m));
                };
                core.stream_pass(runs, ends, budget, held, &mut send).await
            },
            |(i, m)| give(i, m),
        );
        for i in 0..runs.len() {
            give(i, None);
        }
    }

    /// A writer for a new run: its first append is seq 1 and fails when the
    /// run already exists.
    pub fn create(&self, run: &str) -> Result<JetStreamAppender> {
        self.core.writable()?;
        let w = self.rt.block_on(self.core.create(run))?;
        Ok(self.appender(w))
    }

    /// A writer for a new run without looking first: the fence of its seq 1
    /// refuses it when anything is stored under the run's subjects
    /// (`Error::Exists` when the meta record is there, `Error::Live`
    /// otherwise). One round trip less than [`create`](Self::create).
    pub fn create_new(&self, run: &str) -> Result<JetStreamAppender> {
        self.core.writable()?;
        self.core.create_new(run).map(|w| self.appender(w))
    }

    /// A writer for a new run without a meta record, whose first record
    /// is seq `first` (a copy of an orphan's records, `migrate
    /// --include-corrupt`): its first append is refused, as
    /// [`create_new`](Self::create_new)'s, when anything is stored under
    /// the run's subjects.
    pub fn create_headless(&self, run: &str, first: u64) -> Result<JetStreamAppender> {
        self.core.writable()?;
        self.core.create_from(run, first).map(|w| self.appender(w))
    }

    /// A writer for an existing run, continuing after its last record.
    pub fn open(&self, run: &str) -> Result<JetStreamAppender> {
        self.core.writable()?;
        let w = self.rt.block_on(self.core.open(run))?;
        Ok(self.appender(w))
    }

    fn appender(&self, w: Writer) -> JetStreamAppender {
        JetStreamAppender {
            rt: self.rt.clone(),
            w,
        }
    }

    /// Create each run received on `items` (`(index, run, records)`, the
    /// records exactly seqs 1..N) as [`create_new`](Self::create_new) and
    /// [`Appender::append_batch`](crate::store::Appender::append_batch)
    /// would, with the appends of many runs pipelined (see `chain.rs`). A
    /// run named in `exists` is not written: it is reported as existing.
    /// `inflight` bounds the runs finished one by one at a time (after an
    /// interruption, or once another writer is busy on the stream). `done`
    /// gets each run's index, the records stored, and how it ended, on the
    /// caller's thread.
    pub fn create_runs(
        &self,
        items: NewRunReceiver,
        inflight: usize,
        exists: &HashSet<String>,
        mut done: impl FnMut(usize, u64, Result<()>),
    ) {
        let core = &self.core;
        // A sealed stream: nothing is attempted, each run fails alike.
        if core.writable().is_err() {
            let mut items = items;
            while let Some((i, _, _)) = items.recv_here() {
                done(i, 0, core.writable());
            }
            return;
        }
        // The receiver moves into the core's thread: keep a way back to it
        // should that thread not start.
        let items = std::sync::Mutex::new(Some(items));
        let taken = &items;
        let bridged = self.rt.bridge(
            move |tx| async move {
                let Some(rx) = taken.lock().ok().and_then(|mut g| g.take()) else {
                    return;
                };
                let done = |i, n, r| {
                    let _ = tx.send((i, n, r));
                };
                core.create_runs(rx, inflight, exists, done).await
            },
            |(i, n, r): (usize, u64, Result<()>)| done(i, n, r),
        );
        // No thread for the core: nothing was attempted, each run fails.
        if let Err(e) = bridged {
            if let Some(mut rx) = items.into_inner().ok().flatten() {
                while let Some((i, run, _)) = rx.recv_here() {
                    let why = format!("not attempted: {e}; re-run to continue");
                    done(i, 0, Err(self.core.err(Some(&run), why)));
                }
            }
        }
    }

    /// Delete a copied run by purging `<prefix>.<id>.>` (no backup: its
    /// copy is verified), only when the run still ends at seq `last` and
    /// is not within the hold (SPEC 8); returns how many messages were
    /// removed. The run is fenced first (`delete.rs`): a writer that
    /// appended meanwhile makes this `Error::SourceChanged` and nothing is
    /// deleted; one that tries later is refused.
    pub fn delete_copied(&self, run: &str, last: u64) -> Result<u64> {
        self.core.writable()?;
        self.rt
            .block_on(self.core.delete_copied(run, last, self.hold))
    }

    /// Delete a run (`rm`), keeping it: every message of the run is read,
    /// the run is checked against the hold (SPEC 8) and fenced
    /// (`delete.rs`: `Error::Live`, nothing deleted, when a writer
    /// appended since it was read), then written, in seq order and one
    /// line each (a file journal), to `<keep>/<run>.json`, fsynced, by the
    /// file store (here, outside the runtime); then exactly those messages
    /// and the fence are purged. Returns the messages purged (fences not
    /// counted), the file kept, and a warning when the run may not be
    /// gone entirely (once the purge is done, the backup is always
    /// reported).
    pub fn delete_keeping(&self, run: &str, keep: &Path) -> Result<(u64, PathBuf, Option<String>)> {
        self.core.writable()?;
        let kept = self.rt.block_on(self.core.to_keep(run))?;
        // The hold judges the run as read: the fence keeps it so.
        if !kept.fenced {
            self.check_held(run)?;
        }
        let fence = self
            .rt
            .block_on(self.core.fence(run, kept.last, kept.upto))?;
        let file = self.keep_fenced(run, &kept, fence, keep)?;
        let (upto, fences) = match fence {
            Fence::At(at) => (at, kept.fences + 1),
            Fence::Unfenced => (kept.upto, kept.fences),
        };
        let (purged, warning) = self.rt.block_on(self.core.purge_kept(run, upto))?;
        Ok((purged.saturating_sub(fences), file, warning))
    }

    /// The run's mark, when a write of it as a whole is not finished
    /// (`whole.rs`): `None` for a run written whole, or none at all.
    pub fn pending(&self, run: &str) -> Result<Option<Pending>> {
        self.rt.block_on(self.core.pending(run))
    }

    /// Write the new run `run` of `records` (exactly seqs 1..N), marked
    /// until it is whole, or finish what `intent`'s command began
    /// (`whole.rs`). An existing run is refused, and so is a mark of
    /// another command.
    pub fn create_marked(
        &self,
        run: &str,
        records: Vec<(u64, Vec<u8>)>,
        intent: &Intent,
    ) -> Result<()> {
        self.core.writable()?;
        let records = records.into_iter().map(|(s, b)| (s, b.into())).collect();
        self.rt
            .block_on(self.core.create_marked(run, records, intent))
    }

    /// Replace the run `run`, read as `planned` (its records in seq order,
    /// one line each, as `Store::raw` reads them), by
    /// `records` (seqs 1..N): refused when the run changed since, or is
    /// within the hold; fenced as a delete fences it, kept as a one-run
    /// file store in the new directory `keep` (here, outside the
    /// runtime), then replaced through a stage (`whole.rs`). Returns the
    /// journal kept. The stream must allow purges.
    pub fn replace_whole(
        &self,
        run: &str,
        planned: &[u8],
        records: Vec<(u64, Vec<u8>)>,
        intent: &Intent,
        keep: &Path,
    ) -> Result<PathBuf> {
        self.core.writable()?;
        self.core.needs_purge(run, "recover in place")?;
        let kept = self.rt.block_on(self.core.to_keep(run))?;
        if kept.journal != planned {
            return Err(crate::Error::refused(
                run,
                "the run changed while it was being planned (a writer got to it); nothing was changed: recover it again",
            ));
        }
        // The hold judges the run as read: the fence keeps it so.
        if !kept.fenced {
            self.check_held(run)?;
        }
        let fence = self.rt.block_on(self.core.fence_for(
            run,
            kept.last,
            kept.upto,
            super::delete::Why::Recover,
        ))?;
        let file = self.keep_fenced(run, &kept, fence, keep)?;
        let after = match fence {
            Fence::At(at) => at,
            Fence::Unfenced => kept.upto,
        };
        let records = records.into_iter().map(|(s, b)| (s, b.into())).collect();
        let shown = crate::shell::shown(&file);
        self.rt
            .block_on(self.core.replace_staged(run, records, intent, shown, after))?;
        Ok(file)
    }

    /// Finish the staged replacement `p` of `run` an interrupted command
    /// began (`whole.rs`): the records of the run as written (seqs 1..N,
    /// in order), or `None`
    /// when its stage was not whole (the old run was never touched; the
    /// mark and stage are taken away, and the run is as it was).
    pub fn finish_replace(&self, run: &str, p: &Pending) -> Result<Option<Vec<Vec<u8>>>> {
        self.core.writable()?;
        self.core.needs_purge(run, "recover in place")?;
        Ok(match self.rt.block_on(self.core.finish_staged(run, p))? {
            Finish::Done(records) => Some(records.into_iter().map(|(_, b)| b.to_vec()).collect()),
            Finish::Dropped => None,
        })
    }

    /// Take away the fences an interrupted delete or recover left after
    /// the run's last record (`delete.rs`): their subjects (with
    /// `dry_run`, the one that would go first); empty when there are none.
    pub fn take_fences(&self, run: &str, dry_run: bool) -> Result<Vec<String>> {
        if !dry_run {
            self.core.writable()?;
        }
        self.rt.block_on(self.core.take_fences(run, dry_run))
    }

    /// Why `what` (deleting runs, replacing one in place) cannot be done
    /// here: the stream denies purges. `None` when it allows them.
    pub fn purge_refusal(&self, what: &str) -> Option<String> {
        self.core.purge_refusal(what)
    }

    /// Refused when a new run written whole could not be unmarked once
    /// whole (`whole.rs`: the stream denies both purges and deletes).
    pub fn check_whole_write(&self, run: &str) -> Result<()> {
        self.core.unmark_way(run).map(|_| ())
    }

    /// The crash seam (`conn.rs`'s `Cut`): die at the `at`th request that
    /// changes the stream from now (0: never), which reaches the server
    /// when `lands`; every later one fails without reaching it.
    // For tests (journal/tests/jetstream_whole.rs), not API.
    #[doc(hidden)]
    pub fn cut_at(&self, at: u64, lands: bool) {
        self.core.conn.cut.arm(at, lands);
    }

    /// How many requests that change the stream were made since the last
    /// [`cut_at`](Self::cut_at).
    // For tests (journal/tests/jetstream_whole.rs), not API.
    #[doc(hidden)]
    pub fn cut_steps(&self) -> u64 {
        self.core.conn.cut.taken()
    }

    /// Keep the run read as `kept` and fenced by `fence` in `keep` (once:
    /// a copy of the same bytes a killed command left is taken), here,
    /// outside the runtime; when it cannot be kept, the fence is taken
    /// back and the run is as it was.
    fn keep_fenced(
        &self,
        run: &str,
        kept: &super::delete::ToKeep,
        fence: Fence,
        keep: &Path,
    ) -> Result<PathBuf> {
        keep_run_once(keep, run, &kept.journal, &kept.others).or_else(|e| {
            if let Fence::At(at) = fence {
                self.rt.block_on(self.core.unfence(run, kept.last, at))?;
            }
            Err(e)
        })
    }

    /// Upgrade one run from version 3 to version 1, keeping it first in a
    /// new directory `keep` (see `upgrade.rs`; kept here, outside the
    /// runtime, between reading and publishing). A run not at rest whose
    /// last record is younger than `hold` is refused as live unless
    /// `force`.
    pub fn upgrade(
        &self,
        run: &str,
        dry_run: bool,
        keep: &Path,
        hold: Duration,
        force: bool,
    ) -> Result<Outcome> {
        crate::id::check(run)?;
        let up = match self
            .rt
            .block_on(self.core.upgrade_plan(run, dry_run, hold, force))?
        {
            Step::Done(outcome) => return Ok(outcome),
            Step::Write(up) => up,
        };
        self.core.writable()?;
        let (records, resumed) = (up.records, up.resumed());
        let kept = keep_run(keep, run, &up.bytes, &[])?;
        if let Err((e, published)) = self.rt.block_on(self.core.upgrade_publish(run, up)) {
            // The fence refused the first rollup: nothing of this upgrade
            // reached the stream and the run is as it was (a concurrent
            // upgrade won, and kept its own copy), so this one's copy goes
            // rather than pile up. Any other failure keeps it: a publish
            // whose ack was lost may have been stored.
            if !published && matches!(e, crate::Error::Live { .. }) {
                let _ = std::fs::remove_file(&kept);
                if let Some(dir) = kept.parent() {
                    let _ = std::fs::remove_dir(dir);
                }
            }
            return Err(e);
        }
        Ok(Outcome::Upgraded {
            records,
            kept,
            resumed,
        })
    }
}

/// A fenced writer for one run (SPEC 8): the blocking face of the core's
/// writer. The nonce is fresh for every open, so a msg id never repeats
/// across runs or opens.
#[derive(Clone)]
pub struct JetStreamAppender {
    rt: Rt,
    w: Writer,
}

impl JetStreamAppender {
    /// This open's nonce: record N is published with msg id `<nonce>-<N>`.
    pub fn nonce(&self) -> &str {
        self.w.nonce()
    }
    /// The msg id record `seq` is published with (`<nonce>-<seq>`).
    pub fn msg_id(&self, seq: u64) -> String {
        self.w.msg_id(seq)
    }
    /// Stream sequence of the last stored record.
    pub fn last_stream_seq(&self) -> u64 {
        self.w.last_stream_seq
    }
}

impl crate::store::Appender for JetStreamAppender {
    fn run(&self) -> &str {
        &self.w.run
    }

    fn last_seq(&self) -> u64 {
        self.w.last_seq
    }

    fn append_raw(&mut self, seq: u64, raw: &[u8]) -> Result<bool> {
        self.rt.block_on(self.w.append_raw(seq, raw))
    }

    fn check_held(&self) -> Result<()> {
        self.rt.block_on(self.w.check_held())
    }

    fn append_batch(&mut self, records: Vec<(u64, Vec<u8>)>) -> (u64, Result<()>) {
        let mut w = self.w.clone();
        let task = async move {
            let records = records.into_iter().map(|(s, b)| (s, b.into())).collect();
            let (stored, result) = w.append_bytes(records).await;
            (w, stored, result)
        };
        match self.rt.run_task(task) {
            Ok((w, stored, result)) => {
                self.w = w;
                (stored, result)
            }
            Err(why) => (0, Err(self.w.core.err(None, why))),
        }
    }
}
