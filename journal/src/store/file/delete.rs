//! `rm` on the file backend, and migrate's delete of a copied source:
//! under the run lock, the journal kept under a second name first (`rm`),
//! then the journal and its lock unlinked and the directory fsynced.

use super::FileStore;
use crate::error::{Error, Result};
use std::path::PathBuf;

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
    pub fn delete_copied(&self, run: &str, last: u64) -> Result<Vec<PathBuf>> {
        self.delete_if(run, Some(last)).map(|(removed, _)| removed)
    }

    fn delete_if(&self, run: &str, last: Option<u64>) -> Result<(Vec<PathBuf>, Option<PathBuf>)> {
        let path = self.require(run)?;
        let lock_path = self.lock_path(run)?;
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
        let mut removed = Vec::new();
        // A second name of the journal, left by a creator that died, goes
        // with it.
        let (tmp, was_there) = self.remove_stale_tmp(run)?;
        if was_there {
            removed.push(tmp);
        }
        // `rm` keeps the journal under a second name first (a link: no copy,
        // the same inode, owner and mode); a copy's source was verified in
        // its copy and goes.
        let kept = match last {
            Some(_) => None,
            None => Some(self.keep_beside(run, "removed", |p| std::fs::hard_link(&path, p))?),
        };
        std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        removed.push(path);
        // Unlinking while holding the lock: a writer that opens the old lock
        // file now finds no journal and stops.
        std::fs::remove_file(&lock_path).map_err(|e| Error::io(&lock_path, e))?;
        removed.push(lock_path);
        drop(lock);
        crate::durable::sync_dir(self.dir()).map_err(|e| Error::io(self.dir(), e))?;
        Ok((removed, kept))
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
}
