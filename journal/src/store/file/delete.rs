//! `rm` on the file backend, and migrate's delete of a copied source:
//! under the run lock, the journal kept under a second name first (`rm`),
//! then the journal and its lock unlinked and the directory fsynced.

use super::seam::{Dir, OsDir};
use super::FileStore;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

impl FileStore {
    /// Remove a run's journal and lock (refusing a live run), keeping the
    /// journal as `<id>.removed-<UTC time>.bak` beside it. Returns what
    /// was removed and the backup.
    pub fn delete(&self, run: &str) -> Result<(Vec<PathBuf>, Option<PathBuf>)> {
        self.delete_if(run, None)
    }

    /// [`delete`](Self::delete), only when the run still ends at seq
    /// `last` (checked under the lock), and with no backup: a copy's source
    /// is deleted only once its copy is verified, and never with records
    /// the copy does not hold.
    // For tests (journal/tests/), not API: `migrate` uses it.
    #[doc(hidden)]
    pub fn delete_copied(&self, run: &str, last: u64) -> Result<Vec<PathBuf>> {
        self.delete_if(run, Some(last)).map(|(removed, _)| removed)
    }

    fn delete_if(&self, run: &str, last: Option<u64>) -> Result<(Vec<PathBuf>, Option<PathBuf>)> {
        let path = self.require(run)?;
        let lock_path = self.lock_path(run)?;
        // A lock file this delete makes only to take the lock is not one
        // of the run's names to report (b-27).
        let had_lock = std::fs::symlink_metadata(&lock_path).is_ok();
        let lock = self.lock(run)?;
        if let Some(want) = last {
            let (_, bytes) = self.read_bytes(run)?;
            let (entries, _, _) = crate::lines::decode_prefix(&bytes);
            let have = entries.last().map_or(0, |e| e.record.seq);
            if have != want {
                return Err(Error::SourceChanged {
                    run: run.to_owned(),
                    have,
                    copied: want,
                });
            }
        }
        let os = OsDir(self.dir().to_path_buf());
        let (mut removed, kept) =
            self.unlink_run(&os, run, &path, &lock_path, last.is_none(), lock)?;
        if !had_lock {
            removed.retain(|p| p != &lock_path);
        }
        Ok((removed, kept))
    }

    /// The names of `run` removed from `dir` (its journal at `path`, its
    /// lock file at `lock_path`, a stale temporary name), the journal kept
    /// under a backup name first when `keep`; `lock` is released once the
    /// names are gone, and then the directory fsynced.
    pub(super) fn unlink_run<L>(
        &self,
        dir: &dyn Dir,
        run: &str,
        path: &Path,
        lock_path: &Path,
        keep: bool,
        lock: L,
    ) -> Result<(Vec<PathBuf>, Option<PathBuf>)> {
        let mut removed = Vec::new();
        // A second name of the journal, left by a creator that died, goes
        // with it.
        let (tmp, was_there) = self.remove_stale_tmp(dir, run)?;
        if was_there {
            removed.push(tmp);
        }
        // So does the temporary file of an upgrade that was killed.
        let upgrading = self.dir().join(format!("{run}.upgrading.tmp"));
        if super::dir::remove_if_present(dir, &upgrading)? {
            removed.push(upgrading);
        }
        // `rm` keeps the journal under a second name first (a link: no copy,
        // the same inode, owner and mode); a copy's source was verified in
        // its copy and goes.
        // An rm killed after it linked the backup and before it unlinked
        // the journal left that link: the same rm again keeps it as the
        // backup rather than making a second name of the same file.
        let before = keep
            .then(|| self.kept_before(run, "removed", |p| same_file(p, path)))
            .flatten();
        let made = match (keep, &before) {
            (true, None) => Some(self.keep_beside(dir, run, "removed", |p| dir.link(path, p))?),
            _ => None,
        };
        if let Err(e) = dir.unlink(path) {
            // The run is still there: the backup made for it is not needed.
            if let Some(k) = &made {
                let _ = dir.unlink(k);
            }
            return Err(Error::io(path, e));
        }
        let kept = made.or(before);
        removed.push(path.to_path_buf());
        // Unlinking while holding the lock: a writer that opens the old lock
        // file now finds no journal and stops. The run is gone already: a
        // lock file that cannot be removed is left as an orphan lock
        // (harmless, and `verify` names it), not reported as a failed rm.
        if dir.unlink(lock_path).is_ok() {
            removed.push(lock_path.to_path_buf());
        }
        drop(lock);
        dir.sync_dir().map_err(|e| Error::io(self.dir(), e))?;
        Ok((removed, kept))
    }
}

/// Whether `a` and `b` name the same file (device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::rec;
    use super::*;
    use crate::store::Appender;

    #[test]
    fn a_copied_source_is_deleted_only_while_it_ends_where_the_copy_does() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let mut a = store.create_appender("r").unwrap();
        a.append(&rec(1)).unwrap();
        a.append(&rec(2)).unwrap();
        drop(a);
        // The copy holds seq 1 only: the source has more, it stays.
        let e = store.delete_copied("r", 1).unwrap_err();
        assert!(e.to_string().contains("not deleted"), "{e}");
        assert_eq!(store.read("r").unwrap().entries.len(), 2);
        let removed = store.delete_copied("r", 2).unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(store.list().unwrap().runs.is_empty());
    }

    /// Issue 36.5: an rm killed after it linked its backup and before it
    /// unlinked the journal (the crash sweep's image) left the backup;
    /// the same rm again keeps that one, and makes no second.
    #[test]
    fn an_rm_again_after_a_kill_keeps_the_backup_it_made_not_a_second() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let mut a = store.create_appender("r").unwrap();
        a.append(&rec(1)).unwrap();
        drop(a);
        let left = dir.path().join("r.removed-20261201T000000Z.bak");
        std::fs::hard_link(dir.path().join("r.json"), &left).unwrap();
        // Another run's backup, and one of an older r with other bytes,
        // are not it.
        std::fs::write(dir.path().join("r.removed-20250101T000000Z.bak"), b"old").unwrap();
        let (_, kept) = store.delete("r").unwrap();
        assert_eq!(kept, Some(left.clone()));
        let backups: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("r.removed-"))
            .collect();
        assert_eq!(backups.len(), 2, "{backups:?}");
        assert!(!dir.path().join("r.json").exists());
        assert!(left.exists());
    }
}
