//! Where journals live. The file backend is in [`file`](mod@file), the JetStream one
//! in [`jetstream`]; both give the same [`Journal`] and [`Summary`] shapes
//! so every command reads alike. [`Store`] is the only place that knows
//! the backends: this file holds what one command does to one run, `many`
//! what `migrate`, `validate`, `verify` and the whole-store reads do over
//! many, and `appender`
//! the one-writer contract both backends' appenders keep.

mod appender;
pub mod backup;
mod breaker;
pub mod file;
pub mod jetstream;
mod many;
mod summary;

pub use appender::Appender;
pub use breaker::Breaker;
pub use many::{release, NewRun, ReadBudget};
pub(crate) use many::{Creator, Handed, NewRunSender, Prefetched};
pub use summary::{Listed, Summary};

use crate::lines::Tail;
use crate::record::{Entry, Record};
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

/// Where a JetStream run is kept before `why` (`removed`, `upgraded`)
/// changes it: `$XDG_STATE_HOME/fisk-admin/<why>/<STREAM>/<id>-<UTC time>`
/// (else under `~/.local/state`), a directory that becomes a file store of
/// the one run.
fn keep_dir(
    why: &str,
    stream: &str,
    run: &str,
    command: &str,
    undone: &str,
) -> crate::Result<PathBuf> {
    let (home, _) = file::state_home().map_err(|_| {
        crate::Error::Usage(format!(
            "{command} on JetStream keeps each run in $XDG_STATE_HOME/fisk-admin/{why} \
             (else ~/.local/state/...), but neither XDG_STATE_HOME nor HOME is an \
             absolute path; set one of them; nothing was {undone}"
        ))
    })?;
    let stamp = crate::time::compact(std::time::SystemTime::now());
    Ok(home
        .join("fisk-admin")
        .join(why)
        .join(stream)
        .join(backup::dir_name(run, &stamp)))
}

/// Keep a run as a one-run file store: `journal` as `<dir>/<run>.json`, in
/// a new directory `dir` = `<keep>[-<N>]` (the first free N, none for the
/// first), which `migrate` copies back. Both go through the [`Store`]: the
/// directory ([`Store::new_backup`]: 0700, every directory created on the
/// way fsynced into its parent) and the journal ([`Store::write_whole`]:
/// byte for byte, whatever the stream held, damaged runs above all; 0600,
/// fsynced, named only once durable, no run lock). `others` (messages on
/// no record subject, JSON lines), when any, go to
/// `<dir>/<run>.other.jsonl` (not a journal, so written here), fsynced
/// with the directory. On failure nothing half-written is left behind.
/// Returns the journal's path.
pub(crate) fn keep_run(
    keep: &std::path::Path,
    run: &str,
    journal: &[u8],
    others: &[u8],
) -> crate::Result<PathBuf> {
    use crate::Error;
    let store = Store::new_backup(keep)?;
    let crate::Where::Path(dir) = store.place() else {
        return Err(Error::refused(run, "a backup is kept in a file store"));
    };
    let file = dir.join(format!("{run}.json"));
    let other = dir.join(format!("{run}.other.jsonl"));
    let written = store
        .write_whole(run, journal)
        .and_then(|_| match others.is_empty() {
            true => Ok(()),
            false => crate::durable::write_new(&other, others)
                .map_err(|e| Error::io(&other, e))
                .and_then(|()| crate::durable::sync_dir(&dir).map_err(|e| Error::io(&dir, e))),
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_file(&other);
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    Ok(file)
}

/// [`keep_run`], unless a copy of exactly these bytes was kept before by
/// the same command, killed before it went on ([`kept_before`]): that
/// one's journal then. For `rm` and `recover`, which never remove a copy
/// they kept (two `upgrade`s at once each remove their own on a lost
/// race, so they keep one each).
pub(crate) fn keep_run_once(
    keep: &std::path::Path,
    run: &str,
    journal: &[u8],
    others: &[u8],
) -> crate::Result<PathBuf> {
    match kept_before(keep, run, journal, others) {
        Some(file) => Ok(file),
        None => keep_run(keep, run, journal, others),
    }
}

/// A copy of `run` kept before beside `keep` (a directory
/// `<run>-<UTC time>[-N]` under the same parent) holding exactly
/// `journal` and `others`: what the same command left when it was killed
/// after keeping the run and before changing it (issue 36.5: `rm` again
/// kept a second copy). Its journal's path; `None` when there is none.
fn kept_before(
    keep: &std::path::Path,
    run: &str,
    journal: &[u8],
    others: &[u8],
) -> Option<PathBuf> {
    let parent = keep.parent()?;
    let prefix = format!("{run}-");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.into_iter().find_map(|d| {
        let file = d.join(format!("{run}.json"));
        let other = std::fs::read(d.join(format!("{run}.other.jsonl"))).unwrap_or_default();
        let same = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_file())
            && std::fs::read(&file).is_ok_and(|b| b == journal)
            && other == others;
        same.then_some(file)
    })
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

impl Store {
    /// A store that is a directory of journal files: all opening one
    /// takes (no NATS settings, no hold: a writer's lock tells).
    pub fn directory(dir: impl Into<PathBuf>) -> Store {
        Store::File(file::FileStore::new(dir))
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

    /// Convert a version-3 run to version 1 (SPEC 12), keeping the original
    /// first: beside the journal (file), or as a file journal under the XDG
    /// state home (JetStream, where SPEC 8's `hold` applies unless `force`).
    ///
    /// A version-3 run is upgraded only as the run model's table lets it
    /// ([`crate::state`], asked as `ask`): one that waits on a person or is
    /// ready to resume only when named and forced, a damaged or corrupt one
    /// never. A dry run makes the same checks.
    pub fn upgrade(
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
    /// by the journal `plan` made of it, keeping the original first; a run
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
        plan: &crate::recover::Plan,
        intent: &Intent,
    ) -> crate::Result<(PathBuf, Option<PathBuf>)> {
        match self {
            Store::File(f) => f.recover(run, planned, &plan.journal(), &plan.unreadable),
            Store::JetStream(j) => {
                let keep = keep_dir("recovered", j.name(), run, "recover", "changed")?;
                let records = (1u64..).zip(plan.records.iter().cloned()).collect();
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
    /// written whole in one step ([`file::FileStore::create_whole`]).
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

    /// Fix a damaged tail (file backend: a torn final line or a missing
    /// final newline), under the run lock.
    pub fn repair(&self, run: &str, dry_run: bool) -> crate::Result<Repair> {
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

    /// Every backup the destructive commands kept of this store's runs,
    /// oldest first ([`backup`]).
    pub fn backups(&self) -> crate::Result<Vec<backup::Backup>> {
        match self {
            Store::File(f) => f.backups(),
            Store::JetStream(j) => {
                let (mut found, _) = backup::list_kept(j.name())?;
                found.sort_by(|a, b| (a.when, &a.id).cmp(&(b.when, &b.id)));
                Ok(found)
            }
        }
    }

    /// What prunes killed half way left (JetStream: a backup directory
    /// renamed to be removed), for the next prune to finish.
    pub(crate) fn unfinished_prunes(&self) -> crate::Result<Vec<PathBuf>> {
        match self {
            Store::File(_) => Ok(Vec::new()),
            Store::JetStream(j) => backup::list_kept(j.name()).map(|(_, p)| p),
        }
    }

    /// Remove backup `b`, or finish the removal an interrupted prune left
    /// at `b.path`, durably: the file beside the journals (through the
    /// directory seam), or the backup directory (renamed first).
    pub(crate) fn prune_backup(&self, path: &std::path::Path) -> crate::Result<()> {
        match self {
            Store::File(f) => f.prune_backup(path),
            Store::JetStream(_) => backup::remove_kept(path),
        }
    }

    /// Whether the run `b.run` stored now is what putting backup `b` back
    /// makes, or the start of it: a restore interrupted after the run's
    /// name (file) or first records (JetStream) were stored, which the
    /// next restore finishes. Its records, whole lines, are a prefix of
    /// the backup's.
    pub(crate) fn holds_backup(&self, b: &backup::Backup) -> crate::Result<bool> {
        let kept = match self {
            Store::File(_) => b.path.clone(),
            Store::JetStream(_) => b.path.join(format!("{}.json", b.run)),
        };
        let kept = std::fs::read(&kept).map_err(|e| crate::Error::io(&kept, e))?;
        let have = self.raw(&b.run)?;
        Ok(kept.starts_with(&have) && (have.is_empty() || have.ends_with(b"\n")))
    }

    /// Start putting run `b.run` back from its backup `b`: on the file
    /// backend it is done here (the backup linked back, crash-safe: see
    /// `FileStore::restore_backup`); on JetStream the run is to be copied
    /// back from the one-run file store the backup is, which the caller
    /// does (a copy between stores is `migrate`'s), then removes the
    /// backup ([`prune_backup`](Self::prune_backup)).
    pub(crate) fn put_back(&self, b: &backup::Backup) -> crate::Result<PutBack> {
        match self {
            Store::File(f) => f.restore_backup(&b.run, &b.path).map(PutBack::Linked),
            Store::JetStream(_) => Ok(PutBack::Copy(Store::File(file::FileStore::new(&b.path)))),
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
                ..
            }) => Ok(Some(Holder::Hold {
                at,
                age_secs,
                hold_secs,
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

/// Where a store is, as a URI, an agent file or the default names it: a
/// directory of journal files, or a JetStream stream. The rules that turn
/// a name into an address are here so that every front end reads them
/// alike; which name wins (a flag over a variable over an agent file) is
/// the front end's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Address {
    /// A file store: a directory of journal files.
    File {
        /// The directory.
        dir: PathBuf,
    },
    /// A JetStream store: a stream, on the server the NATS settings name.
    JetStream {
        /// The stream's name.
        stream: String,
    },
}

/// The store an agent file chooses, and why, in words (`info` shows them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromAgent {
    /// The address chosen.
    pub address: Address,
    /// Why, in words.
    pub why: String,
    /// The agent's root directory, when one places the store.
    pub root: Option<crate::agent::Root>,
}

impl Address {
    /// `file:DIR` (or `file:///DIR`) or `jetstream:STREAM`.
    pub fn parse(uri: &str) -> crate::Result<Address> {
        let bad = |m: String| crate::Error::Usage(m);
        if let Some(dir) = uri.strip_prefix("file:") {
            // The URL form names a local path after `//` (`file:///var/...`);
            // anything else there (`file://`, `file://host/...`) is not a
            // directory here.
            let dir = match dir.strip_prefix("//") {
                Some(path) if path.starts_with('/') => path,
                Some(_) => {
                    return Err(bad(format!(
                        "store {uri:?}: file: takes a local directory, e.g. file:/var/lib/fisk-ai/runs or file:///var/lib/fisk-ai/runs"
                    )))
                }
                None => dir,
            };
            if dir.is_empty() {
                return Err(bad(format!(
                    "store {uri:?}: file: needs a directory, e.g. file:/var/lib/fisk-ai/runs"
                )));
            }
            Ok(Address::File {
                dir: crate::agent::tidy(std::path::Path::new(dir)),
            })
        } else if let Some(stream) = uri.strip_prefix("jetstream:") {
            if stream.is_empty() || stream.contains(['.', '*', '>', ' ', '/', '\\']) {
                return Err(bad(format!(
                    "store {uri:?}: jetstream: needs a stream name (no '.', '*', '>', spaces or slashes)"
                )));
            }
            Ok(Address::JetStream {
                stream: stream.to_owned(),
            })
        } else {
            Err(bad(format!(
                "store {uri:?} is not understood: use file:DIR or jetstream:STREAM"
            )))
        }
    }

    /// The default store (a directory under the XDG state home), and where
    /// it is as a rule: `under $XDG_STATE_HOME` or `under ~/.local/state
    /// (...)`.
    pub fn default_store() -> crate::Result<(Address, String)> {
        let base = match file::state_home()?.1 {
            "$XDG_STATE_HOME" => "under $XDG_STATE_HOME".to_owned(),
            other => format!("under {other} (XDG_STATE_HOME is not set to an absolute path)"),
        };
        Ok((
            Address::File {
                dir: file::default_dir()?,
            },
            base,
        ))
    }

    /// The store of the agent file at `path`: see [`Address::from_agent`].
    pub fn from_agent_file(
        path: &std::path::Path,
        root_override: Option<&std::path::Path>,
    ) -> crate::Result<FromAgent> {
        Address::from_agent(&crate::agent::AgentFile::load(path)?, root_override)
    }

    /// The store an agent file chooses, as the agent would: its
    /// `harness.sessions` block, placed by the root directory
    /// (`root_override`, the agent's `--root-dir`, else the file's
    /// `root_directory`); a file that names no store means the agent's
    /// default (`<root>/runs` under a root).
    pub fn from_agent(
        a: &crate::agent::AgentFile,
        root_override: Option<&std::path::Path>,
    ) -> crate::Result<FromAgent> {
        let root = crate::agent::root(root_override, Some(a))?;
        let shown = crate::shell::shown(&a.path);
        let config = |message: String| crate::Error::Config {
            at: crate::Where::Path(a.path.clone()),
            message,
        };
        let backend = a.harness.sessions.as_ref().map(|s| s.backend.as_str());
        let (address, why) = match backend {
            None | Some("" | "file") => {
                // The root has its own line in `info` and its own help.
                let dir = a.file_store_dir(root.as_ref());
                let default = || Address::default_store();
                let why = match (&dir, backend) {
                    (Some(_), Some(_)) => format!("harness.sessions in {shown}"),
                    (Some(_), None) => {
                        format!("{shown}: no harness.sessions, so the root directory's runs")
                    }
                    (None, Some(_)) => format!(
                        "harness.sessions in {shown}: no directory, so the default, {}",
                        default()?.1
                    ),
                    (None, None) => format!(
                        "{shown}: no harness.sessions, so the default, {}",
                        default()?.1
                    ),
                };
                let address = match dir {
                    Some(dir) => Address::File { dir },
                    None => default()?.0,
                };
                (address, why)
            }
            Some("jetstream") => {
                let stream = a
                    .harness
                    .sessions
                    .as_ref()
                    .map(|s| s.options.stream.clone())
                    .unwrap_or_default();
                if stream.is_empty() {
                    return Err(config(
                        "harness.sessions.backend is jetstream but options.stream is empty; name the stream".into(),
                    ));
                }
                (
                    Address::JetStream { stream },
                    format!("harness.sessions in {shown}"),
                )
            }
            Some(other) => {
                return Err(config(format!(
                    "harness.sessions.backend {other:?} is not known: use file or jetstream"
                )))
            }
        };
        Ok(FromAgent { address, why, root })
    }

    /// The store at this address: a directory as it is (whether it must
    /// exist is the caller's to say), or the stream bound with `settings`
    /// (unused for a directory) and SPEC 8's `hold`, refused when its
    /// configuration breaks SPEC 8.
    pub fn open(
        &self,
        settings: &crate::nats::Settings,
        hold: std::time::Duration,
    ) -> crate::Result<Store> {
        Ok(match self {
            Address::File { dir } => Store::directory(dir.clone()),
            Address::JetStream { stream } => Store::JetStream(Box::new(
                jetstream::JetStreamStore::connect(settings, stream)?.with_hold(hold),
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Address, Store};
    use std::path::PathBuf;

    #[test]
    fn an_address_is_a_directory_or_a_stream() {
        let file = |d: &str| Address::File {
            dir: PathBuf::from(d),
        };
        assert_eq!(Address::parse("file:/var/runs").unwrap(), file("/var/runs"));
        assert_eq!(
            Address::parse("file:///var/runs").unwrap(),
            file("/var/runs")
        );
        assert_eq!(Address::parse("file:./a/./b").unwrap(), file("./a/b"));
        assert_eq!(
            Address::parse("jetstream:RUNS").unwrap(),
            Address::JetStream {
                stream: "RUNS".into()
            }
        );
        for (uri, says) in [
            ("file://host/x", "takes a local directory"),
            ("file:", "needs a directory"),
            ("jetstream:a.b", "needs a stream name"),
            ("s3:x", "is not understood"),
        ] {
            let e = Address::parse(uri).unwrap_err();
            assert!(matches!(e, crate::Error::Usage(_)), "{e:?}");
            assert!(e.to_string().contains(says), "{uri}: {e}");
        }
    }

    #[test]
    fn an_agent_file_names_its_store() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, body: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, body).unwrap();
            p
        };
        let p = write(
            "a.yaml",
            "harness:\n  sessions: {backend: file, options: {directory: ./journals}}\n",
        );
        let chose = Address::from_agent_file(&p, None).unwrap();
        assert_eq!(
            chose.address,
            Address::File {
                dir: dir.path().join("journals")
            }
        );
        assert!(
            chose.why.starts_with("harness.sessions in "),
            "{}",
            chose.why
        );
        // `--root-dir` places a file store that names no directory.
        let p = write("b.yaml", "harness:\n  sessions: {backend: file}\n");
        let chose = Address::from_agent_file(&p, Some(dir.path())).unwrap();
        assert_eq!(
            chose.address,
            Address::File {
                dir: dir.path().join("runs")
            }
        );
        assert_eq!(chose.root.map(|r| r.from), Some("--root-dir".to_owned()));
        let p = write(
            "c.yaml",
            "harness:\n  sessions: {backend: jetstream, options: {stream: RUNS}}\n",
        );
        assert_eq!(
            Address::from_agent_file(&p, None).unwrap().address,
            Address::JetStream {
                stream: "RUNS".into()
            }
        );
        let p = write("d.yaml", "harness:\n  sessions: {backend: jetstream}\n");
        let e = Address::from_agent_file(&p, None).unwrap_err();
        assert!(e.to_string().contains("options.stream is empty"), "{e}");
        let p = write("e.yaml", "harness:\n  sessions: {backend: s3}\n");
        let e = Address::from_agent_file(&p, None).unwrap_err();
        assert!(e.to_string().contains("\"s3\" is not known"), "{e}");
        // A directory opens as it is.
        let at = Address::File {
            dir: dir.path().to_path_buf(),
        };
        let store = at
            .open(&crate::nats::Settings::default(), std::time::Duration::ZERO)
            .unwrap();
        assert!(matches!(store, Store::File(_)));
    }
}
