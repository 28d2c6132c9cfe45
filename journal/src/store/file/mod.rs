//! The file backend (SPEC 7): `<dir>/<id>.json` journals, `<dir>/<id>.lock`
//! run locks. Readers never lock and never write.
//!
//! The module is split by job: `whole` (opening and reading a whole
//! journal file), `read` (reads, digests and `ls` summaries), `lock` (the
//! run lock and who holds it, `/proc/locks` read in one place), `dir` (the
//! directory: the 0700 mkdir, backup names, open errors), `seam` (the one
//! seam under every write, the OS's or a simulated directory's, with the
//! no-follow open and how a new journal gets its name), `append` (the
//! appender and its durability order), `create` (new runs), `repair`,
//! `delete`, `upgrade` and `verify` (the directory's own findings and each
//! journal's). `sim` and `testing` are the simulated directory and the
//! crash sweep, for tests only. This file holds the store itself: its
//! paths and its listing.

use crate::error::{Error, Result, Where};
use crate::id;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

mod append;
mod audit;
mod backups;
mod create;
mod delete;
mod dir;
mod follow;
mod lock;
mod loose;
mod read;
mod recover;
mod repair;
mod seam;
mod upgrade;
mod verify;
mod whole;

#[cfg(test)]
mod sim;
#[cfg(test)]
mod sim_custody;
#[cfg(test)]
mod testing;

pub use append::{scan, FileAppender, Scan};
pub(crate) use audit::log_lines;
pub use dir::MissingDirs;
pub(crate) use follow::FileFollow;
pub use lock::LiveLocks;
pub(crate) use loose::run_of;
pub use loose::Loose;
pub(crate) use verify::verify_file_runs;
pub use verify::{verify_file_run, verify_store_dir};

/// The default store directory: `$XDG_STATE_HOME/fisk-ai/runs`, else
/// `~/.local/state/fisk-ai/runs`. Never the working directory.
pub(crate) fn default_dir() -> Result<PathBuf> {
    state_home().map(|(home, _)| home.join("fisk-ai").join("runs"))
}

/// The XDG state home and what chose it: `$XDG_STATE_HOME` when it is an
/// absolute path (the XDG spec says to ignore a relative one), else
/// `~/.local/state`.
pub(crate) fn state_home() -> Result<(PathBuf, &'static str)> {
    crate::paths::state_home().ok_or(Error::NoStateHome)
}

#[derive(Debug, Clone)]
/// A store of journal files in one directory (`<dir>/<id>.json`, SPEC 1).
pub struct FileStore {
    dir: PathBuf,
    /// Who writes through this store, for the audit log (issue 38):
    /// set, every write is logged ahead of it.
    actor: Option<std::sync::Arc<crate::audit::Actor>>,
}

/// What a directory listing found.
#[derive(Debug, Default)]
pub struct Listing {
    /// Valid run ids with a journal, sorted.
    pub runs: Vec<String>,
    /// `.json` files whose name is not a valid id: the agent cannot see them.
    pub invalid: Vec<PathBuf>,
    /// Lock files with no journal beside them (a journal whose name is not
    /// a valid id still owns its lock).
    pub orphan_locks: Vec<PathBuf>,
    /// Temporary files an interrupted create or upgrade left
    /// (`<id>.creating.tmp`, `<id>.upgrading.tmp`): nothing reads them; the
    /// next create or upgrade of the run replaces them, `rm` removes them.
    pub leftover: Vec<PathBuf>,
}

impl FileStore {
    /// A file store in `dir` (nothing is created or checked).
    pub fn new(dir: impl Into<PathBuf>) -> FileStore {
        FileStore {
            dir: dir.into(),
            actor: None,
        }
    }

    /// Who writes through this store (see [`crate::store::Store::with_actor`]).
    pub(crate) fn actor(&self) -> Option<&crate::audit::Actor> {
        self.actor.as_deref()
    }

    /// This store, its writes logged as `actor`'s.
    pub(crate) fn set_actor(&mut self, actor: Option<crate::audit::Actor>) {
        self.actor = actor.map(std::sync::Arc::new);
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/<id>.json`, after checking the id.
    pub fn journal_path(&self, run: &str) -> Result<PathBuf> {
        id::check(run)?;
        Ok(self.dir.join(format!("{run}.json")))
    }

    /// `<dir>/<id>.lock`, after checking the id.
    pub fn lock_path(&self, run: &str) -> Result<PathBuf> {
        id::check(run)?;
        Ok(self.dir.join(format!("{run}.lock")))
    }

    /// The runs in the directory. A missing directory is an error that says
    /// which directory was looked at.
    pub fn list(&self) -> Result<Listing> {
        // The directory is read entry by entry and only the names kept
        // (issue 40): sorting while walking held every entry's path and
        // metadata at once, and a set of every journal's name, about 70 MB
        // for 300,000 runs before the first was read.
        let mut listing = Listing::default();
        let mut locks = Vec::new();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| Error::io(self.dir.clone(), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(self.dir.clone(), e))?;
            let file_type = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
            // Names are bytes: one that is not UTF-8 is compared, and
            // reported, as it is (never lossily: two such names differ).
            let file_name = entry.file_name();
            let name = file_name.as_bytes();
            // A directory is not a run, unless it is named like a journal:
            // then it is listed, and reading it says what it is.
            if file_type.is_dir() && !name.ends_with(b".json") {
                continue;
            }
            if let Some(stem) = name.strip_suffix(b".json") {
                match std::str::from_utf8(stem).ok().filter(|s| id::is_valid(s)) {
                    Some(run) => listing.runs.push(run.to_owned()),
                    None => listing.invalid.push(entry.path()),
                }
            } else if name.ends_with(b".lock") {
                locks.push(entry.path());
            } else if name.ends_with(b".creating.tmp") || name.ends_with(b".upgrading.tmp") {
                listing.leftover.push(entry.path());
            }
        }
        // In file name order, as bytes: `a-b.json` before `a.json`.
        fn name(r: &str) -> impl Iterator<Item = u8> + '_ {
            r.bytes().chain(".json".bytes())
        }
        listing.runs.sort_unstable_by(|a, b| name(a).cmp(name(b)));
        listing.invalid.sort_unstable();
        listing.leftover.sort_unstable();
        locks.sort_unstable();
        // Every journal owns the lock of its name, a valid id or not: its
        // lock is no orphan. Locks are few; each is looked up.
        listing.orphan_locks = locks
            .into_iter()
            .filter(|lock| {
                let name = lock.file_name().map_or(&[][..], |n| n.as_bytes());
                let stem = name.strip_suffix(b".lock").unwrap_or(name);
                let journal = [stem, b".json"].concat();
                let journal = self.dir.join(std::ffi::OsStr::from_bytes(&journal));
                std::fs::symlink_metadata(journal).is_err()
            })
            .collect();
        Ok(listing)
    }

    /// The journal's path, after checking that it names a regular file (a
    /// symbolic link is let through, for the no-follow open to refuse).
    pub(crate) fn require(&self, run: &str) -> Result<PathBuf> {
        let path = self.journal_path(run)?;
        match std::fs::symlink_metadata(&path) {
            // A symbolic link is refused by the open (`O_NOFOLLOW`), with
            // its own message.
            Ok(md) if !md.is_file() && !md.file_type().is_symlink() => Err(Error::NotAFile {
                what: whole::not_a_journal(md.file_type()),
                path,
            }),
            Ok(_) => Ok(path),
            Err(e) => Err(missing_or(run, &path, e, |p, e| Error::io(p, e))),
        }
    }
}

/// A failed look-up or open of `run`'s journal at `path`: `NotFound`
/// naming the run when there is no file there, else what `other` makes of
/// the error.
fn missing_or(
    run: &str,
    path: &Path,
    e: std::io::Error,
    other: impl FnOnce(&Path, std::io::Error) -> Error,
) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            run: run.to_owned(),
            at: Where::Path(path.to_path_buf()),
        },
        _ => other(path, e),
    }
}
