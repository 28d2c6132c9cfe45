//! `recover` in place on the file backend (SPEC 6.1), under the run lock:
//!
//! 1. read the journal again and make sure it is the one planned (a
//!    writer that got in between the plan and the lock is not overwritten);
//! 2. keep the bytes that could not be read beside it,
//!    `<id>.unreadable-<UTC time>.bak` (0600, fsynced with its directory
//!    entry), so nothing the disk still held is thrown away;
//! 3. replace the journal as `upgrade` does ([`FileStore::replace_journal`]):
//!    the original kept under a second name, `<id>.recovered-<UTC
//!    time>.bak`, the new journal written whole to a temporary file, fsynced,
//!    renamed over `<id>.json`, the directory fsynced.
//!
//! Killed at any point, the run is the damaged journal or the recovered
//! one, never neither and never a mix; the original's inode is never
//! written to, so its backup holds it exactly (the crash sweep in
//! `sim.rs` checks every fsync).

use super::seam::{write_new, Dir, OsDir};
use super::FileStore;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

impl FileStore {
    /// Replace the damaged journal `planned` of `run` by `new` (see the
    /// module doc): where the original and the unreadable bytes are kept.
    pub(crate) fn recover(
        &self,
        run: &str,
        planned: &[u8],
        new: &[u8],
        unreadable: &[u8],
    ) -> Result<(PathBuf, Option<PathBuf>)> {
        let path = self.require(run)?;
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::refused(
                run,
                format!(
                    "{} is a symbolic link, which no writer here follows (replace it with the file it points to); nothing was changed",
                    crate::shell::shown(&path)
                ),
            ));
        }
        let _lock = self.lock_unless_dry(run, false)?;
        let (_, bytes) = self.read_bytes(run)?;
        if bytes != planned {
            return Err(Error::refused(
                run,
                "the journal changed while it was being planned (a writer got to it); nothing was changed: recover it again",
            ));
        }
        self.recover_in(
            &OsDir(self.dir().to_path_buf()),
            run,
            &path,
            new,
            unreadable,
        )
    }

    /// Steps 2 and 3 of the module doc in `dir`.
    pub(super) fn recover_in(
        &self,
        dir: &dyn Dir,
        run: &str,
        path: &Path,
        new: &[u8],
        unreadable: &[u8],
    ) -> Result<(PathBuf, Option<PathBuf>)> {
        let aside = match unreadable.is_empty() {
            true => None,
            false => {
                Some(self.keep_beside(dir, run, "unreadable", |p| write_new(dir, p, unreadable))?)
            }
        };
        match self.replace_journal_or(dir, run, path, new, "recovered") {
            Ok(kept) => Ok((kept, aside)),
            Err((e, replaced)) => {
                // Nothing else changed: the bytes kept aside go too. (Once
                // the journal is replaced they stay with its backup.)
                if let (Some(a), false) = (&aside, replaced) {
                    let _ = dir.unlink(a);
                }
                Err(e)
            }
        }
    }
}
