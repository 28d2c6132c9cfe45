//! Where journals live. The file backend is in [`file`](mod@file), the JetStream one
//! in [`jetstream`]; both give the same [`Journal`] and [`Summary`] shapes
//! so every command reads alike. [`Store`] is the only place that knows
//! the backends: this file holds what one command does to one run, `many`
//! what `migrate`, `validate`, `verify` and the whole-store reads do over
//! many, and `appender`
//! the one-writer contract both backends' appenders keep.

mod address;
mod appender;
pub mod backup;
mod breaker;
pub(crate) mod custody;
pub mod file;
pub mod follow;
pub mod jetstream;
mod keep;
mod many;
mod summary;

pub use address::{Address, FromAgent};
pub use appender::Appender;
pub(crate) use appender::{already_stored, encoded, next_record};
pub use breaker::Breaker;
pub(crate) use custody::Batch;
pub use custody::{Logged, Plan};
pub use many::{release, NewRun, ReadBudget};
pub(crate) use many::{Creator, Handed, NewRunSender, Prefetched};
pub use summary::{Listed, Summary};

use crate::lines::Tail;
use crate::record::{Entry, Record};
use keep::*;
use std::path::PathBuf;

/// What a write of a whole run is, for a store that cannot write one in
/// one step (JetStream: the run is marked until it is whole, and the
/// mark names this; FORMAT.md, "Writing a run whole").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    /// fisk-admin's arguments after the store's flags: the command that
    /// writes the run and, run again, finishes it (`["fork", "a",
    /// "--at-seq", "5", "--as", "b"]`).
    pub command: Vec<String>,
    /// When the write began (a re-run that finds its mark plans with the
    /// mark's time, so it writes the same bytes).
    pub at: crate::time::Time,
}

/// A run read in full with the reader's rule (torn tail dropped).
#[derive(Debug)]
pub struct Journal {
    /// The run's id.
    pub run: String,
    /// The records read, each with where it is stored.
    pub entries: Vec<Entry>,
    /// How the journal ends (a torn final line is dropped, and said here).
    pub tail: Tail,
    /// Stored size in bytes, including any torn tail.
    pub bytes: u64,
}

impl Journal {
    /// The records, in order.
    pub fn records(&self) -> impl Iterator<Item = &Record> + Clone {
        self.entries.iter().map(|e| &e.record)
    }
    /// The entry a fold refusal is about: the first record with its seq
    /// (for a seq that does not increase, the first that follows a record
    /// with the same seq or a higher one).
    pub(crate) fn refused_at(&self, e: &crate::fold::FoldError) -> Option<&Entry> {
        let seq = e.seq()?;
        let mut prev: Option<u64> = None;
        let backwards = matches!(e, crate::fold::FoldError::SeqNotIncreasing { .. });
        self.entries.iter().find(|x| {
            let here = x.record.seq == seq && (!backwards || prev.is_some_and(|p| p >= seq));
            prev = Some(x.record.seq);
            here
        })
    }
    /// The last record's seq, 0 when there is none.
    pub fn last_seq(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.record.seq)
    }
}

/// What [`Store::verify`] found: the store's own report (when it has one)
/// and one per run, and how many runs were checked.
#[derive(Debug, Default)]
pub struct Verified {
    /// One report per run checked (and the store's own, first, when it has one).
    pub reports: Vec<crate::verify::Report>,
    /// How many runs were checked.
    pub runs: usize,
}

/// The store a command works on. Every command goes through this, so each
/// works on every backend.
///
/// ```
/// use journal::{Address, FoldOptions, Store};
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(
///     dir.path().join("g-tool-batch.json"),
///     include_bytes!("../../../testdata/agent-journals/v1/g-tool-batch.json"),
/// )?;
/// // Open: a file store is a directory as it is.
/// let store: Store = Address::File { dir: dir.path().to_path_buf() }
///     .open(&Default::default(), std::time::Duration::ZERO)?;
/// // List, read and fold; a fold refusal would point at its record.
/// assert_eq!(store.runs()?, ["g-tool-batch"]);
/// let journal = store.read("g-tool-batch")?;
/// let state = store.fold("g-tool-batch", &journal, FoldOptions::default())?;
/// assert_eq!(state.run_id, "g-tool-batch");
/// assert_eq!(state.last_seq, journal.last_seq());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[non_exhaustive]
pub enum Store {
    /// A directory of journal files.
    File(file::FileStore),
    /// A JetStream stream.
    JetStream(Box<jetstream::JetStreamStore>),
}

/// What `repair` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// The tail is clean.
    /// How many records the journal holds.
    Nothing {
        /// How many records the journal holds.
        records: usize,
    },
    /// The final record lacked its `\n`; one was added.
    AddedNewline {
        /// The final record's line.
        line: usize,
        /// How many records the journal holds.
        records: usize,
    },
    /// A torn final line of `len` bytes at `offset` was cut; its bytes are
    /// in `backup` (`None` on a dry run).
    CutTorn {
        /// The torn line's number.
        line: usize,
        /// The byte offset it started at.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// The backup its bytes are in.
        backup: Option<PathBuf>,
        /// How many records the journal holds.
        records: usize,
    },
    /// JetStream: the run ended on the fence of a delete or recover that
    /// was interrupted or could not go on (a stream that denies purges);
    /// the fence was taken away (`None`: a dry run) and the run is as it
    /// was before it was fenced.
    RemovedFence {
        /// The fence's subject.
        subject: String,
        /// How many records the run holds.
        records: usize,
    },
}

/// What deleting a run did.
#[derive(Debug, Clone)]
pub struct Deleted {
    /// What is gone (paths, or messages on a stream).
    pub removed: Vec<String>,
    /// The run's bytes, kept: beside the journal (file) or in a file store
    /// of its own under the XDG state home (JetStream).
    pub kept: Option<PathBuf>,
    /// How the run is put back.
    pub restore: Option<Restore>,
    /// The run may not be gone entirely (JetStream: a writer stored more
    /// meanwhile, or that could not be checked).
    pub warning: Option<String>,
}

/// A stream that does not allow rollups ([`Store::rollup_refusal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollupsOff {
    /// The stream's name.
    pub stream: String,
}

/// How [`Store::put_back`] goes on.
pub(crate) enum PutBack {
    /// The run's journal is the backup again.
    Linked(PathBuf),
    /// Copy the run back from this one-run store.
    Copy(Store),
}

/// How a deleted run is put back from its backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restore {
    /// Hard-link the kept file back to the journal's name (a shell
    /// command: `ln` refuses a name that was taken meanwhile).
    Link {
        /// The kept file.
        kept: PathBuf,
        /// The journal's name.
        journal: PathBuf,
    },
    /// Copy the run from the file store it was kept in back to the stream.
    Copy {
        /// The file store the run was kept in.
        from: PathBuf,
        /// The stream to copy it back to.
        stream: String,
        /// The run's id.
        run: String,
    },
}

/// Runs a file store summarises (in parallel) before handing them on, in
/// [`Store::summaries_each`] and [`Store::read_picked`]: enough to keep
/// both cores busy, few enough that a group's summaries (about 1 KB
/// each) and journals are a few MB.
const SUMMARY_GROUP: usize = 2048;

impl From<file::FileStore> for Store {
    fn from(f: file::FileStore) -> Store {
        Store::File(f)
    }
}

impl From<jetstream::JetStreamStore> for Store {
    fn from(j: jetstream::JetStreamStore) -> Store {
        Store::JetStream(Box::new(j))
    }
}

impl Store {
    /// A store that is a directory of journal files: all opening one
    /// takes (no NATS settings, no hold: a writer's lock tells).
    pub fn directory(dir: impl Into<PathBuf>) -> Store {
        Store::File(file::FileStore::new(dir))
    }

    /// Where fisk-admin notes which run `run` was forked from
    /// (journal/FORMAT.md, "Forks: what a fork came from"), kept as the
    /// backups are: beside the journal on the file backend
    /// (`<dir>/<id>.fork`, a name the agent's listing skips), under the
    /// state home on JetStream
    /// (`$XDG_STATE_HOME/fisk-admin/forks/<STREAM>/<id>.json`). The meta
    /// record the agent reads is never changed for it.
    pub fn fork_note(&self, run: &str) -> crate::Result<PathBuf> {
        match self {
            Store::File(f) => Ok(f.dir().join(format!("{run}.fork"))),
            Store::JetStream(j) => {
                let (home, _) = file::state_home()?;
                Ok(home
                    .join("fisk-admin")
                    .join("forks")
                    .join(j.name())
                    .join(format!("{run}.json")))
            }
        }
    }

    /// Whether a run's summary says how many bytes its journal takes (a
    /// journal file's size). A stream keeps no per-run size.
    pub fn keeps_sizes(&self) -> bool {
        matches!(self, Store::File(_))
    }

    /// Whether who writes a run is known only by how recent its last
    /// record is (SPEC 8's hold: a stream has no lock a writer holds), so
    /// a writer that failed half way leaves its own run held for the hold.
    pub fn guards_by_hold(&self) -> bool {
        matches!(self, Store::JetStream(_))
    }

    /// Why a run's meta record cannot be replaced in place here (what
    /// `upgrade` does): a stream that does not allow rollups, said with
    /// the stream's name. `None` where it can.
    pub fn rollup_refusal(&self) -> Option<RollupsOff> {
        match self {
            Store::File(_) => None,
            Store::JetStream(j) => (!j.config().allow_rollup).then(|| RollupsOff {
                stream: j.name().to_owned(),
            }),
        }
    }

    /// The store as `--store` names it: `file:DIR` or `jetstream:STREAM`
    /// (a metrics label, a line a script reads back). A directory that is
    /// not UTF-8 is shown lossily.
    pub fn uri(&self) -> String {
        match self {
            Store::File(f) => format!("file:{}", f.dir().display()),
            Store::JetStream(j) => format!("jetstream:{}", j.name()),
        }
    }

    /// For messages: "directory /x" or "stream S on nats://..".
    pub fn describe(&self) -> String {
        match self {
            Store::File(f) => format!("directory {}", crate::shell::shown(f.dir())),
            Store::JetStream(j) => j.describe(),
        }
    }

    /// The directories a command that creates runs here may create (file:
    /// the store directory and the missing ones above it; JetStream:
    /// none), for it to remove again when it stored nothing
    /// ([`file::MissingDirs::remove_empty`]).
    pub fn missing_dirs(&self) -> file::MissingDirs {
        match self {
            Store::File(f) => f.missing_dirs(),
            Store::JetStream(_) => file::MissingDirs::default(),
        }
    }

    /// Valid run ids, sorted.
    pub fn runs(&self) -> crate::Result<Vec<String>> {
        match self {
            Store::File(f) => Ok(f.list()?.runs),
            Store::JetStream(j) => j.runs(),
        }
    }

    /// Read a run with the reader's rule.
    pub fn read(&self, run: &str) -> crate::Result<Journal> {
        match self {
            Store::File(f) => f.read(run),
            Store::JetStream(j) => j.read(run),
        }
    }

    /// Read a run up to the first record that breaks it (interior
    /// corruption, a subject that does not match its record) instead of
    /// failing: the readable prefix, and why reading stopped early.
    pub fn read_prefix(&self, run: &str) -> crate::Result<(Journal, Option<String>)> {
        match self {
            Store::File(f) => f.read_prefix(run),
            Store::JetStream(j) => j.read_prefix(run),
        }
    }

    /// Read a run as far as seq `until`: as [`read`](Self::read), but a
    /// run broken after that seq (interior corruption, a subject that does
    /// not match its record) reads up to its first bad record instead of
    /// failing, as SPEC 1.1 has inspection read "as far as they can". The
    /// journal returned then ends before the bad record (its tail clean);
    /// a run broken at or before `until` fails as `read` does.
    pub fn read_until(&self, run: &str, until: u64) -> crate::Result<Journal> {
        let (journal, stopped) = self.read_prefix(run)?;
        if stopped.is_none() || journal.entries.iter().any(|e| e.record.seq >= until) {
            return Ok(journal);
        }
        // The refusal `read` gives, with where the bad record is.
        self.read(run)
    }

    /// What `ls` shows for one run (meta record and tail only).
    pub fn summary(&self, run: &str) -> Summary {
        match self {
            Store::File(f) => f.summary(run, &file::LiveLocks::snapshot()),
            Store::JetStream(j) => j
                .summaries(std::slice::from_ref(&run.to_owned()))
                .pop()
                .unwrap_or_else(|| Summary::unread(run)),
        }
    }

    /// Whether the run exists.
    pub fn exists(&self, run: &str) -> crate::Result<bool> {
        match self {
            Store::File(f) => Ok(f.journal_path(run)?.exists()),
            Store::JetStream(j) => j.exists(run),
        }
    }

    /// Summaries of every run, in parallel (SPEC 9: meta + tail only).
    pub fn summaries(&self) -> crate::Result<Vec<Summary>> {
        use rayon::prelude::*;
        match self {
            Store::File(f) => {
                let runs = f.list()?.runs;
                let locks = file::LiveLocks::snapshot();
                Ok(runs.par_iter().map(|id| f.summary(id, &locks)).collect())
            }
            Store::JetStream(j) => {
                let runs = j.runs()?;
                Ok(j.summaries(&runs))
            }
        }
    }

    /// [`summaries`](Self::summaries) of every run, in id order, handed to
    /// `each` a group at a time as they are made: memory holds a group
    /// (and the run ids), not every summary, so a command that prints a
    /// few rows of a store of 300,000 runs holds a few rows (issue 40).
    pub fn summaries_each(&self, mut each: impl FnMut(Summary)) -> crate::Result<()> {
        use rayon::prelude::*;
        match self {
            Store::File(f) => {
                let runs = f.list()?.runs;
                let locks = file::LiveLocks::snapshot();
                for group in runs.chunks(SUMMARY_GROUP) {
                    let part: Vec<Summary> =
                        group.par_iter().map(|id| f.summary(id, &locks)).collect();
                    part.into_iter().for_each(&mut each);
                }
                Ok(())
            }
            Store::JetStream(j) => {
                let runs = j.runs()?;
                j.summaries_each(&runs, each)
            }
        }
    }

    /// Runs with messages and no meta record (JetStream, `orphan-messages`;
    /// the file backend has none: its runs are its journals), sorted.
    /// Lists every subject of the stream.
    pub(crate) fn orphans(&self) -> crate::Result<Vec<jetstream::Orphan>> {
        match self {
            Store::File(_) => Ok(Vec::new()),
            Store::JetStream(j) => j.orphans(),
        }
    }

    /// `run` when its messages have no meta record (JetStream).
    pub fn orphan(&self, run: &str) -> crate::Result<Option<jetstream::Orphan>> {
        match self {
            Store::File(_) => Ok(None),
            Store::JetStream(j) => j.orphan(run),
        }
    }

    /// The records of `run`, an orphan (see [`orphan`](Self::orphan)), as
    /// stored, in seq order, and how many of its messages are on no record
    /// subject. The file backend has no orphans.
    pub(crate) fn read_headless(&self, run: &str) -> crate::Result<jetstream::Headless> {
        match self {
            Store::File(_) => Err(crate::Error::NotFound {
                run: run.to_owned(),
                at: self.place(),
            }),
            Store::JetStream(j) => j.read_headless(run),
        }
    }

    /// A new, empty file store to keep a backup in: `base`, or
    /// `<base>-<N>` for the first free N ([`file::FileStore::new_backup`]).
    pub(crate) fn new_backup(base: &std::path::Path) -> crate::Result<Store> {
        file::FileStore::new_backup(base).map(Store::File)
    }

    /// A new run whose stored form is exactly `bytes`: what another store
    /// held, kept byte for byte (a backup), so no record rule applies.
    /// File: the journal written in one step, named only once durable
    /// ([`file::FileStore::write_whole`]); an existing run is refused.
    /// JetStream stores records, not a journal's bytes: refused (a backup
    /// is a file store, [`new_backup`](Self::new_backup)). Returns where
    /// the run is.
    pub(crate) fn write_whole(&self, run: &str, bytes: &[u8]) -> crate::Result<PathBuf> {
        match self {
            Store::File(f) => f.write_whole(run, bytes),
            Store::JetStream(_) => Err(crate::Error::refused(
                run,
                "a JetStream store holds records, not a journal's bytes; a backup is kept in a file store",
            )),
        }
    }

    /// A new run of these records, consecutive seqs that start after 1 (a
    /// copy of an orphan's records: no meta record), written as they are:
    /// how many were stored and how it ended. File: the journal written
    /// whole, byte for byte, as a backup is ([`file::FileStore::write_whole`]);
    /// JetStream: each record on its own subject, the first fenced on the
    /// run being empty. An existing run is refused.
    pub(crate) fn create_headless(
        &self,
        run: &str,
        records: Vec<(u64, Vec<u8>)>,
    ) -> (u64, crate::Result<()>) {
        let n = records.len() as u64;
        match self {
            Store::File(_) => {
                let mut bytes = Vec::with_capacity(records.iter().map(|(_, b)| b.len() + 1).sum());
                for (_, b) in &records {
                    bytes.extend_from_slice(b);
                    bytes.push(b'\n');
                }
                match self.write_whole(run, &bytes) {
                    Ok(_) => (n, Ok(())),
                    Err(e) => (0, Err(e)),
                }
            }
            Store::JetStream(j) => {
                let first = records.first().map_or(1, |(s, _)| *s);
                match j.create_headless(run, first) {
                    Ok(mut a) => a.append_batch(records),
                    Err(e) => (0, Err(e)),
                }
            }
        }
    }

    /// `ls --all`: what the agent's listing cannot see, as `corrupt` runs
    /// (JetStream: runs whose messages have no meta record; the file
    /// backend lists every journal already).
    pub fn unlisted_summaries(&self) -> crate::Result<Vec<Summary>> {
        let Store::JetStream(j) = self else {
            return Ok(Vec::new());
        };
        Ok(j.orphans()?
            .into_iter()
            .map(|o| match o.pending {
                // A run being written whole, not yet its meta record.
                true => Summary {
                    problem: Some(match j.pending(&o.run) {
                        Ok(Some(p)) => format!("write-interrupted: {}", p.describe(&o.run)),
                        _ => format!("write-interrupted: run {} is half written", o.run),
                    }),
                    remedy: Some(crate::Remedy::Again),
                    ..Summary::unread(&o.run)
                },
                false => Summary {
                    records: o.seqs.map(|(_, last)| last),
                    problem: Some(format!("orphan-messages: {}", o.describe(j.prefix()))),
                    remedy: Some(crate::Remedy::Salvage),
                    ..Summary::unread(&o.run)
                },
            })
            .collect())
    }

    /// Start a new run: the returned appender is its only writer, and its
    /// first record must be the run's meta record (the runner's `run`, and
    /// any front end that starts runs). Refuses a run that exists.
    pub fn create_appender(&self, run: &str) -> crate::Result<Box<dyn Appender>> {
        match self {
            Store::File(f) => Ok(Box::new(f.create_appender(run)?)),
            Store::JetStream(j) => Ok(Box::new(j.create(run)?)),
        }
    }

    /// Become the writer of an existing run: takes the run lock (a live
    /// run is refused), finds the last seq, refuses a torn tail. A missing
    /// final newline is written before the first append, not here, so a
    /// writer that then decides to write nothing changes nothing.
    pub fn open_appender(&self, run: &str) -> crate::Result<Box<dyn Appender>> {
        match self {
            Store::File(f) => Ok(Box::new(f.open_appender(run)?)),
            Store::JetStream(j) => Ok(Box::new(j.open(run)?)),
        }
    }

    /// Where in the store a fold refusal points: the journal's path, line
    /// and byte (file), or the record's subject (JetStream); `None` when it
    /// is about no one record.
    pub(crate) fn refused_at(
        &self,
        run: &str,
        journal: &Journal,
        e: &crate::fold::FoldError,
    ) -> Option<crate::Where> {
        let entry = journal.refused_at(e)?;
        Some(match self {
            Store::File(f) => crate::Where::Line {
                path: f.journal_path(run).ok()?,
                line: entry.line,
                offset: entry.offset,
            },
            Store::JetStream(j) => j.at_record(run, entry.record.seq, entry.line),
        })
    }

    /// Fold a run read from this store, a refusal pointing at the record
    /// it is about (`refused_at`).
    pub fn fold(
        &self,
        run: &str,
        journal: &Journal,
        opts: crate::fold::FoldOptions,
    ) -> crate::Result<crate::fold::RunState> {
        crate::fold::fold_with(journal.records(), opts).map_err(|source| crate::Error::Fold {
            run: run.to_owned(),
            at: self.refused_at(run, journal, &source),
            source,
        })
    }

    /// Delete a run (refusing a live one), keeping a backup first: what
    /// was removed, where the run was kept and how to put it back.
    pub fn delete(&self, run: &str) -> crate::Result<Deleted> {
        match self {
            Store::File(f) => {
                let (removed, kept) = f.delete(run)?;
                let journal = f.journal_path(run)?;
                Ok(Deleted {
                    removed: removed.iter().map(|p| crate::shell::shown(p)).collect(),
                    restore: kept.as_ref().map(|k| Restore::Link {
                        kept: k.clone(),
                        journal,
                    }),
                    kept,
                    warning: None,
                })
            }
            Store::JetStream(j) => {
                // The hold is checked on the run as the delete reads it.
                let keep = keep_dir("removed", j.name(), run, "rm", "deleted")?;
                let (n, kept, warning) = j.delete_keeping(run, &keep)?;
                let dir = kept.parent().map(std::path::Path::to_path_buf);
                Ok(Deleted {
                    removed: vec![format!(
                        "{n} message(s) on {}.{run}.> in stream {}",
                        j.prefix(),
                        j.name()
                    )],
                    restore: dir.map(|from| Restore::Copy {
                        from,
                        stream: j.name().to_owned(),
                        run: run.to_owned(),
                    }),
                    kept: Some(kept),
                    warning,
                })
            }
        }
    }

    /// Convert a version-3 run to version 1 (SPEC 12) ([`Store::upgrade`]), keeping the original
    /// first: beside the journal (file), or as a file journal under the XDG
    /// state home (JetStream, where SPEC 8's `hold` applies unless `force`).
    ///
    /// A version-3 run is upgraded only as the run model's table lets it
    /// ([`crate::state`], asked as `ask`): one that waits on a person or is
    /// ready to resume only when named and forced, a damaged or corrupt one
    /// never. A dry run makes the same checks. Not logged: [`Store::upgrade`]
    /// logs it (`custody.rs`).
    pub(super) fn upgrade_as_is(
        &self,
        run: &str,
        dry_run: bool,
        hold: std::time::Duration,
        force: bool,
        ask: crate::state::Ask,
    ) -> crate::Result<crate::upgrade::Outcome> {
        // A person's act is the table's to judge; what else refuses an
        // upgrade (a damaged journal, a live one, an upgrade interrupted
        // half way, which the next one finishes) the upgrade judges under
        // its lock or fence. `force` is past SPEC 8's hold.
        let summary = self.summary(run);
        let state = match force {
            true => summary.state_unheld(),
            false => summary.state.clone(),
        };
        if summary.version == Some(3) && state.holds_a_persons_act() {
            crate::state::permit(crate::state::Op::Upgrade, run, &state, ask)?;
        }
        match self {
            Store::File(f) => f.upgrade(run, dry_run),
            Store::JetStream(j) => {
                let keep = keep_dir("upgraded", j.name(), run, "upgrade", "changed")?;
                j.upgrade(run, dry_run, &keep, hold, force)
            }
        }
    }

    /// The run as stored, damaged or not, as a journal's bytes: the file
    /// (file); the bodies of the messages on its record subjects, in seq
    /// order, one a line (JetStream). What `recover` plans from.
    pub(crate) fn raw(&self, run: &str) -> crate::Result<Vec<u8>> {
        match self {
            Store::File(f) => f.read_bytes(run).map(|(_, b)| b),
            Store::JetStream(j) => {
                let mut messages = j.read_all_messages(run)?;
                if messages.is_empty() {
                    return Err(crate::Error::NotFound {
                        run: run.to_owned(),
                        at: self.place(),
                    });
                }
                // The fence of an interrupted delete or recover is no
                // record of the run (a recover again fences after it).
                messages.retain(|m| m.subject_seq.is_some() && !jetstream::is_tombstone(&m.body));
                jetstream::sort_by_seq(&mut messages);
                Ok(jetstream::as_lines(&messages))
            }
        }
    }

    /// Replace the damaged run `run`, read as `planned` ([`raw`](Self::raw)),
    /// by `records` (what `recover` made of it), keeping the original first
    /// and `unreadable` (its bytes no record was read from) beside it; a run
    /// that changed since it was read is refused. File: under the run lock,
    /// as `upgrade` replaces a journal (`file::recover`), the bytes that
    /// could not be read kept beside it too. JetStream: the run fenced as
    /// `rm` fences it (SPEC 8's hold applies), kept as a file journal under
    /// the XDG state home, then replaced through a stage on the stream,
    /// marked until it is whole (`jetstream/whole.rs`: killed anywhere, the
    /// stream holds the old run, the new one, or a marked run that
    /// `intent`'s command finishes). Returns where the original and the
    /// unreadable bytes are kept.
    pub(crate) fn recover_in_place(
        &self,
        run: &str,
        planned: &[u8],
        records: &[Vec<u8>],
        unreadable: &[u8],
        intent: &Intent,
    ) -> crate::Result<(PathBuf, Option<PathBuf>)> {
        match self {
            Store::File(f) => f.recover(run, planned, &crate::lines::join(records), unreadable),
            Store::JetStream(j) => {
                let keep = keep_dir("recovered", j.name(), run, "recover", "changed")?;
                let records = (1u64..).zip(records.iter().cloned()).collect();
                let kept = j.replace_whole(run, planned, records, intent, &keep)?;
                Ok((kept, None))
            }
        }
    }

    /// Why `what` (deleting runs: `rm`, `migrate --delete-source`;
    /// replacing one in place: `recover`) cannot be done on this store:
    /// a JetStream stream that denies purges. `None` where it can. Asked
    /// once, before any run is touched (dry runs too).
    pub fn purge_refusal(&self, what: &str) -> Option<String> {
        match self {
            Store::File(_) => None,
            Store::JetStream(j) => j.purge_refusal(what),
        }
    }

    /// Refused when a new run could not be written whole here (JetStream:
    /// the stream denies purges and message deletes alike, so the mark a
    /// run carries until it is whole could not be taken away). Asked
    /// before anything is written, dry runs too.
    pub(crate) fn check_whole_write(&self, run: &str) -> crate::Result<()> {
        match self {
            Store::File(_) => Ok(()),
            Store::JetStream(j) => j.check_whole_write(run),
        }
    }

    /// The run's mark, when a write of it as a whole was begun and not
    /// finished (JetStream, `jetstream/whole.rs`; a file is written whole
    /// in one step, so never there).
    pub fn pending(&self, run: &str) -> crate::Result<Option<jetstream::Pending>> {
        match self {
            Store::File(_) => Ok(None),
            Store::JetStream(j) => j.pending(run),
        }
    }

    /// Finish the replacement of `run` in place that the command its mark
    /// `p` names began and did not finish (JetStream): the run's records
    /// as written (seqs 1..N, in order), or `None` when the replacement
    /// had not got as far as touching the run (it is as it was: replace it
    /// again).
    pub(crate) fn finish_replace(
        &self,
        run: &str,
        p: &jetstream::Pending,
    ) -> crate::Result<Option<Vec<Vec<u8>>>> {
        match self {
            Store::File(_) => Ok(None),
            Store::JetStream(j) => j.finish_replace(run, p),
        }
    }

    /// Write the new run `run` of these records (exactly seqs 1..N) so
    /// that no reader takes it for whole before it is: the one way
    /// `fork`, `recover --as` and `backups restore` create a run. File:
    /// written whole in one step (`FileStore::create_whole`).
    /// JetStream: marked until it is whole (`jetstream/whole.rs`); a
    /// re-run of `intent`'s command goes on from what is stored. An
    /// existing run is refused (`Error::Exists`), and so is a run another
    /// command left half written.
    pub fn create_marked(
        &self,
        run: &str,
        records: Vec<(u64, Vec<u8>)>,
        intent: &Intent,
    ) -> crate::Result<()> {
        match self {
            Store::File(f) => f.create_whole(run, records).1,
            Store::JetStream(j) => j.create_marked(run, records, intent),
        }
    }

    /// Fix a damaged tail, not logged ([`Store::repair`] logs it).
    pub(super) fn repair_as_is(&self, run: &str, dry_run: bool) -> crate::Result<Repair> {
        match self {
            Store::File(f) => f.repair(run, dry_run),
            // A JetStream record is a whole message: a tail cannot be torn
            // and a newline cannot be missing. What can end a run that is
            // no record is the fence of an interrupted delete or recover.
            Store::JetStream(j) => {
                let taken = j.take_fences(run, dry_run)?;
                let records = j.read(run)?.entries.len();
                Ok(match taken.into_iter().next() {
                    Some(subject) => Repair::RemovedFence { subject, records },
                    None => Repair::Nothing { records },
                })
            }
        }
    }

    /// Read each of `runs` completely with the reader's rule, many at once:
    /// in parallel (file) or concurrently on one connection (JetStream),
    /// in the order given. A JetStream run is read whole, every message on
    /// `<prefix>.<id>.>` (a message on no record subject is the run's
    /// error), as [`read_each`](Self::read_each) reads the runs it cannot
    /// vouch for.
    pub fn read_batch(&self, runs: &[String]) -> Vec<crate::Result<Journal>> {
        use rayon::prelude::*;
        match self {
            Store::File(f) => runs.par_iter().map(|r| f.read(r)).collect(),
            Store::JetStream(j) => runs
                .iter()
                .zip(j.read_many(runs))
                .map(|(r, m)| m.and_then(|m| j.journal_from(r, m, false).map(|(x, _)| x)))
                .collect(),
        }
    }

    /// How many runs [`read_batch`](Self::read_batch) is best given at once.
    pub const READ_BATCH: usize = 32;

    /// Whether a copy of `run` should wait for its writer (`deleting`: the
    /// source is deleted once copied). File: a lock held says for certain
    /// that a writer is there, so a live run always waits. JetStream:
    /// SPEC 8's hold only suspects one, which matters before a delete; a
    /// copy of a run still in flight is otherwise finished by the next
    /// migrate.
    pub(crate) fn live_for_copy(&self, run: &str, deleting: bool) -> crate::Result<bool> {
        match self {
            Store::JetStream(_) if !deleting => Ok(false),
            _ => self.is_live(run),
        }
    }

    /// Whether a writer holds the run now: the lock (file), or SPEC 8's
    /// hold (JetStream, which has no lock).
    pub fn is_live(&self, run: &str) -> crate::Result<bool> {
        match self.check_writable(run) {
            Ok(()) => Ok(false),
            Err(crate::Error::Live { .. } | crate::Error::Held { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Who holds `run` now, if anyone: its lock (file) or SPEC 8's hold
    /// (JetStream), as every writer checks before it writes.
    pub fn holder(&self, run: &str) -> crate::Result<Option<crate::state::Holder>> {
        use crate::state::Holder;
        match self.check_writable(run) {
            Ok(()) => Ok(None),
            Err(crate::Error::Live { holder, .. }) => Ok(Some(Holder::Lock { holder })),
            Err(crate::Error::Held {
                at,
                age_secs,
                hold_secs,
                written_secs,
                ..
            }) => Ok(Some(Holder::Hold {
                at,
                age_secs,
                hold_secs,
                written_secs,
            })),
            Err(e) => Err(e),
        }
    }

    /// Where `run` stands ([`crate::state`]), read whole: the fold of its
    /// journal, its tail and who holds it. A run the agent cannot read
    /// (interior damage, a fold refusal) is [`State::Corrupt`]; a run that
    /// is not there, or a store that fails, is the error.
    ///
    /// [`State::Corrupt`]: crate::state::State::Corrupt
    pub fn state(&self, run: &str) -> crate::Result<crate::state::State> {
        self.state_read(run, true)
    }

    /// [`state`](Self::state), leaving out who holds the run when `held`
    /// is false: what a command that only reads the run judges it by.
    pub(crate) fn state_read(&self, run: &str, held: bool) -> crate::Result<crate::state::State> {
        let journal = match self.read(run) {
            Ok(j) => j,
            Err(crate::Error::Corrupt { .. } | crate::Error::Fold { .. }) => {
                return Ok(crate::state::State::Corrupt)
            }
            Err(e) => return Err(e),
        };
        match self.fold(run, &journal, crate::fold::FoldOptions::inspect()) {
            Ok(st) if !held => Ok(crate::state::State::of_fold(
                &st,
                !journal.tail.is_clean(),
                None,
            )),
            Ok(st) => self.state_of(run, &journal, &st),
            Err(crate::Error::Fold { .. }) => Ok(crate::state::State::Corrupt),
            Err(e) => Err(e),
        }
    }

    /// Where `run` stands, as `journal` read and `st` folded from it, and
    /// whoever holds it now.
    pub fn state_of(
        &self,
        run: &str,
        journal: &Journal,
        st: &crate::fold::RunState,
    ) -> crate::Result<crate::state::State> {
        let live = self.holder(run)?;
        Ok(crate::state::State::of_fold(
            st,
            !journal.tail.is_clean(),
            live,
        ))
    }

    /// For a writer that holds the run's appender already: refused
    /// (`Error::Held`) while SPEC 8's hold says another writer may be at
    /// work (JetStream). The tail it judges is no older than the
    /// appender's fence, so what the hold let through is what the next
    /// append extends, or that append is refused. On the file backend the
    /// lock the appender holds is the answer: nothing more to check.
    pub(crate) fn check_hold(&self, run: &str) -> crate::Result<()> {
        match self {
            Store::File(_) => Ok(()),
            Store::JetStream(j) => j.check_held(run),
        }
    }

    /// Refused while a writer holds the run: `Error::Live` (file: its lock
    /// is held) or `Error::Held` (JetStream: SPEC 8's hold). Every command
    /// that writes or deletes asks first; the lock, taken after, is what
    /// counts on the file backend.
    pub(crate) fn check_writable(&self, run: &str) -> crate::Result<()> {
        match self {
            Store::File(f) => match f.is_live(run)? {
                true => Err(crate::Error::Live {
                    run: run.to_owned(),
                    holder: None,
                }),
                false => Ok(()),
            },
            Store::JetStream(j) => j.check_held(run),
        }
    }
}

#[cfg(test)]
mod tests;
