//! Where journals live. The file backend is in [`file`]; both backends give
//! the same [`Journal`] and [`Summary`] shapes so every command reads alike.

pub mod file;
pub mod jetstream;

use crate::fold::{fold_with, FoldOptions};
use crate::lines::Tail;
use crate::record::{Entry, Payload, Record};
use crate::time::Time;
use std::path::PathBuf;

/// A run read in full with the reader's rule (torn tail dropped).
#[derive(Debug)]
pub struct Journal {
    pub run: String,
    pub entries: Vec<Entry>,
    pub tail: Tail,
    /// Stored size in bytes, including any torn tail.
    pub bytes: u64,
}

impl Journal {
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.entries.iter().map(|e| &e.record)
    }
    /// The entry a fold refusal is about: the first record with its seq
    /// (for a seq that does not increase, the first that follows a record
    /// with the same seq or a higher one).
    pub fn refused_at(&self, e: &crate::fold::FoldError) -> Option<&Entry> {
        let seq = e.seq()?;
        let mut prev: Option<u64> = None;
        let backwards = matches!(e, crate::fold::FoldError::SeqNotIncreasing { .. });
        self.entries.iter().find(|x| {
            let here = x.record.seq == seq && (!backwards || prev.is_some_and(|p| p >= seq));
            prev = Some(x.record.seq);
            here
        })
    }
    pub fn last_seq(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.record.seq)
    }
}

/// What `ls` shows for a run (SPEC 9, SPEC 11), built from the meta record
/// and the tail only. Serialised as SPEC 11's `ls --format json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub run_id: String,
    /// SPEC 9 status; `corrupt` when the run could not be summarised.
    pub status: String,
    /// The pending turn waits on deferred calls nobody has answered.
    pub waiting: bool,
    pub open_deferrals: usize,
    pub live: bool,
    pub version: Option<i64>,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub caller: Option<String>,
    /// The last seq.
    pub records: Option<u64>,
    /// Stored size; `None` where the store cannot tell without reading the
    /// whole run (JetStream keeps no per-run size).
    pub bytes: Option<u64>,
    pub created: Option<Time>,
    /// The last record's `time`; else the file's mtime or the message's
    /// store time (set by the backend).
    pub updated: Option<Time>,
    pub prompt: Option<String>,
    /// Why the run could not be summarised (`None` unless `corrupt`).
    pub problem: Option<String>,
}

impl Summary {
    /// Summarise from the meta record and the records from the last
    /// assistant record onwards (or everything when there is none). The
    /// fold over just those records gives the same status, waiting and
    /// deferrals as a fold over the whole journal: nothing before the last
    /// assistant can leave a turn open, and any record after the last
    /// terminal is in the tail.
    pub fn from_tail(run: &str, meta: &Record, tail: &[Record]) -> Summary {
        let last = tail.last().unwrap_or(meta);
        let mut s = Summary {
            records: Some(last.seq),
            updated: last.time,
            ..Summary::corrupt(run, String::new())
        };
        s.problem = None;
        if let Some(Payload::Meta(m)) = &meta.payload {
            s.version = Some(m.version);
            s.agent = Some(m.agent.clone()).filter(|a| !a.is_empty());
            s.caller = Some(m.caller.clone()).filter(|a| !a.is_empty());
            s.model = Some(m.fingerprint.model.clone());
            s.created = Some(m.created);
            s.prompt = Some(m.prompt.clone());
        }
        let opts = FoldOptions {
            any_version: true,
            until_seq: None,
        };
        match fold_with(std::iter::once(meta).chain(tail), opts) {
            Ok(st) => {
                s.status = st.status.to_string();
                s.waiting = st.waiting;
                s.open_deferrals = st.open_deferrals;
            }
            Err(e) => s.problem = Some(e.to_string()),
        }
        s
    }

    pub fn corrupt(run: &str, problem: String) -> Summary {
        Summary {
            run_id: run.to_owned(),
            status: "corrupt".into(),
            waiting: false,
            open_deferrals: 0,
            live: false,
            version: None,
            agent: None,
            model: None,
            caller: None,
            records: None,
            bytes: None,
            created: None,
            updated: None,
            prompt: None,
            problem: Some(problem),
        }
    }
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
        .join(format!("{run}-{stamp}")))
}

/// Appending to one run (SPEC 2). An implementation holds whatever makes it
/// the run's only writer (the file lock; the JetStream fence) for its whole
/// life, and advances `last_seq` only after a record is durably stored.
pub trait Appender: Send {
    fn run(&self) -> &str;
    /// The seq of the last durably stored record (0 for a new run).
    fn last_seq(&self) -> u64;
    /// Append the record's canonical bytes. `Ok(false)` when its seq is at
    /// or below `last_seq` (a duplicate: skipped, SPEC 2); a gap is an error.
    fn append(&mut self, record: &Record) -> crate::Result<bool> {
        let raw = record.encode().ok_or_else(|| crate::Error::Store {
            context: format!("run {}", self.run()),
            message: format!(
                "record seq {} ({}) has no payload to encode",
                record.seq, record.protocol
            ),
        })?;
        self.append_raw(record.seq, &raw)
    }
    /// Append a record this tool wrote to a journal of `generation` (SPEC
    /// 2): on version 1 it is stamped with `time`, after the append rule
    /// accepted its seq; on version 3 it never is. Returns the record as
    /// stored, or `None` when its seq was a duplicate (nothing stored).
    fn append_new(
        &mut self,
        mut record: Record,
        generation: crate::record::Generation,
    ) -> crate::Result<Option<Record>> {
        if crate::fold::check_append(self.last_seq(), record.seq) == crate::fold::Append::Next {
            record.time = if generation.stamps_time() {
                record.time.or_else(|| Some(crate::time::Time::now()))
            } else {
                None
            };
        }
        Ok(self.append(&record)?.then_some(record))
    }
    /// Append bytes exactly as given (a copied record; no newline).
    fn append_raw(&mut self, seq: u64, raw: &[u8]) -> crate::Result<bool>;

    /// Append copied records in order, stopping at the first error: how many
    /// were stored (duplicates skipped are not counted) and how it ended. A
    /// backend may do this faster than one `append_raw` at a time (JetStream
    /// runs the whole loop on its runtime); the rules are the same.
    fn append_batch(&mut self, records: Vec<(u64, Vec<u8>)>) -> (u64, crate::Result<()>) {
        let mut stored = 0;
        for (seq, raw) in records {
            match self.append_raw(seq, &raw) {
                Ok(true) => stored += 1,
                Ok(false) => {}
                Err(e) => return (stored, Err(e)),
            }
        }
        (stored, Ok(()))
    }
}

/// The store a command works on. Every command goes through this, so each
/// works on every backend.
pub enum Store {
    File(file::FileStore),
    JetStream(Box<jetstream::JetStreamStore>),
}

/// What `repair` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// The tail is clean.
    Nothing { records: usize },
    /// The final record lacked its `\n`; one was added.
    AddedNewline { line: usize, records: usize },
    /// A torn final line of `len` bytes at `offset` was cut; its bytes are
    /// in `backup` (`None` on a dry run).
    CutTorn {
        line: usize,
        offset: u64,
        len: u64,
        backup: Option<PathBuf>,
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
    /// The command that puts the run back.
    pub restore: Option<String>,
    /// The run may not be gone entirely (JetStream: a writer stored more
    /// meanwhile, or that could not be checked).
    pub warning: Option<String>,
}

impl Store {
    /// For messages: "directory /x" or "stream S on nats://..".
    pub fn describe(&self) -> String {
        match self {
            Store::File(f) => format!("directory {}", f.dir().display()),
            Store::JetStream(j) => j.describe(),
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

    /// Start a new run: the returned appender is its only writer. Refuses a
    /// run that exists.
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
    pub fn refused_at(
        &self,
        run: &str,
        journal: &Journal,
        e: &crate::fold::FoldError,
    ) -> Option<String> {
        let entry = journal.refused_at(e)?;
        Some(match self {
            Store::File(f) => format!(
                "{} line {} (byte {})",
                f.journal_path(run).ok()?.display(),
                entry.line,
                entry.offset
            ),
            Store::JetStream(j) => format!(
                "stream {} subject {}",
                j.name(),
                j.subject(run, entry.record.seq)
            ),
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
                    removed: removed.iter().map(|p| p.display().to_string()).collect(),
                    // `ln` refuses a name that was taken meanwhile.
                    restore: kept.as_ref().map(|k| {
                        format!(
                            "ln {} {} && rm {}",
                            k.display(),
                            journal.display(),
                            k.display()
                        )
                    }),
                    kept,
                    warning: None,
                })
            }
            Store::JetStream(j) => {
                let keep = keep_dir("removed", j.name(), run, "rm", "deleted")?;
                let (n, kept, warning) = j.delete_keeping(run, &keep)?;
                let dir = kept.parent().map(|d| d.display().to_string());
                Ok(Deleted {
                    removed: vec![format!(
                        "{n} message(s) on {}.{run}.> in stream {}",
                        j.prefix(),
                        j.name()
                    )],
                    restore: dir.map(|d| {
                        format!(
                            "fisk-admin migrate --from file:{d} --to jetstream:{} {run}",
                            j.name()
                        )
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
    pub fn upgrade(
        &self,
        run: &str,
        dry_run: bool,
        hold: std::time::Duration,
        force: bool,
    ) -> crate::Result<crate::upgrade::Outcome> {
        match self {
            Store::File(f) => f.upgrade(run, dry_run),
            Store::JetStream(j) => {
                let keep = keep_dir("upgraded", j.name(), run, "upgrade", "changed")?;
                j.upgrade(run, dry_run, &keep, hold, force)
            }
        }
    }

    /// Fix a damaged tail (file backend: a torn final line or a missing
    /// final newline), under the run lock.
    pub fn repair(&self, run: &str, dry_run: bool) -> crate::Result<Repair> {
        match self {
            Store::File(f) => f.repair(run, dry_run),
            // A JetStream record is a whole message: a tail cannot be torn
            // and a newline cannot be missing.
            Store::JetStream(j) => Ok(Repair::Nothing {
                records: j.read(run)?.entries.len(),
            }),
        }
    }

    /// Whether a writer holds the run now (JetStream cannot tell: false).
    pub fn is_live(&self, run: &str) -> crate::Result<bool> {
        match self {
            Store::File(f) => f.is_live(run),
            Store::JetStream(_) => Ok(false),
        }
    }
}
