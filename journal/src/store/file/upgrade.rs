//! `upgrade` on the file backend (SPEC 12), under the run lock:
//!
//! 1. read the journal and plan (a damaged journal is refused, nothing
//!    written);
//! 2. keep the original: a second name of the same file,
//!    `<id>.v3-<UTC time>.bak` (a hard link: no copy, same inode), with its
//!    directory entry fsynced;
//! 3. write the upgraded journal whole to `<id>.upgrading.tmp` (0600) and
//!    fsync it;
//! 4. rename it over `<id>.json` and fsync the directory.
//!
//! The original inode is never written to, so the backup always holds the
//! original bytes. Killed before step 4's rename, the run is the old
//! journal (plus, maybe, a backup and a temporary file, neither read as a
//! journal: their names do not end in `.json`); after it, the new one. A
//! rename is atomic: there is no moment with neither. The lock keeps the
//! agent's writer out throughout; a temporary file left by a killed upgrade
//! is replaced by the next one.

use super::dir::remove_if_present;
use super::seam::{write_new, Dir, OsDir};
use super::FileStore;
use crate::error::{Error, Result};
use crate::upgrade::{plan, Outcome, Plan};
use std::path::{Path, PathBuf};

impl FileStore {
    /// Upgrade one run from version 3 to version 1 (see the module doc).
    pub fn upgrade(&self, run: &str, dry_run: bool) -> Result<Outcome> {
        let path = self.require(run)?;
        // A journal that is a symbolic link is refused, as every writer
        // here refuses one: its backup would be the link, not the bytes,
        // and the rename would part the run from the file the agent reads.
        let refused =
            |message: String| Error::refused(run, format!("{message}; nothing was changed"));
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(refused(format!(
                "{} is a symbolic link, which no writer here follows (replace it with the file it points to)",
                crate::shell::shown(&path)
            )));
        }
        // Planned first without the lock, as a dry run plans: a live run, a
        // current one and a refusal end here having created nothing (not
        // even a lock file for a run that had none).
        self.lock_unless_dry(run, true)?;
        let (_, bytes) = self.read_bytes(run)?;
        if let Plan::Current = plan(run, &bytes).map_err(refused)? {
            return Ok(Outcome::Current);
        }
        // Planned again under the lock: that is what is written.
        let _lock = self.lock_unless_dry(run, dry_run)?;
        let (_, bytes) = self.read_bytes(run)?;
        let (meta, records) = match plan(run, &bytes).map_err(refused)? {
            Plan::Current => return Ok(Outcome::Current),
            Plan::Upgrade { meta, records } => (meta, records),
        };
        if dry_run {
            return Ok(Outcome::Would { records });
        }
        let new = upgraded(&bytes, &meta);
        let kept =
            self.replace_journal(&OsDir(self.dir().to_path_buf()), run, &path, &new, "v3")?;
        Ok(Outcome::Upgraded {
            records,
            kept,
            resumed: false,
        })
    }

    /// Steps 2 to 4 of the module doc in `dir`: the journal at `path`
    /// kept under a backup name (`<id>.<why>-<UTC time>.bak`, returned),
    /// and replaced by `new`. `recover` writes the same way (`why`
    /// `recovered`), through the same temporary name: one name for a
    /// journal being rewritten, whichever command rewrites it.
    pub(super) fn replace_journal(
        &self,
        dir: &dyn Dir,
        run: &str,
        path: &Path,
        new: &[u8],
        why: &str,
    ) -> Result<PathBuf> {
        self.replace_journal_or(dir, run, path, new, why)
            .map_err(|(e, _)| e)
    }

    /// [`replace_journal`](Self::replace_journal), a failure saying
    /// whether the journal was replaced all the same (only the last
    /// directory fsync failed).
    pub(super) fn replace_journal_or(
        &self,
        dir: &dyn Dir,
        run: &str,
        path: &Path,
        new: &[u8],
        why: &str,
    ) -> std::result::Result<PathBuf, (Error, bool)> {
        // A stale temporary file goes first: a failure here leaves no backup.
        let tmp = self.dir().join(format!("{run}.upgrading.tmp"));
        remove_if_present(dir, &tmp).map_err(|e| (e, false))?;
        let kept = self
            .keep_beside(dir, run, why, |p| dir.link(path, p))
            .map_err(|e| (e, false))?;
        let written = write_new(dir, &tmp, new);
        if let Err(e) = written {
            // Nothing but the backup changed: take it back too.
            let _ = dir.unlink(&tmp);
            let _ = dir.unlink(&kept);
            return Err((Error::io(&tmp, e), false));
        }
        if let Err(e) = dir.rename(&tmp, path) {
            let _ = dir.unlink(&tmp);
            let _ = dir.unlink(&kept);
            return Err((Error::io(path, e), false));
        }
        dir.sync_dir()
            .map_err(|e| (Error::io(self.dir(), e), true))?;
        Ok(kept)
    }
}

/// The journal `bytes` with its first line replaced by `meta`.
pub(super) fn upgraded(bytes: &[u8], meta: &[u8]) -> Vec<u8> {
    let meta_end = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
    let mut new = Vec::with_capacity(bytes.len());
    new.extend_from_slice(meta);
    new.extend_from_slice(bytes.get(meta_end..).unwrap_or_default());
    new
}
