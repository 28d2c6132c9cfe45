//! The backups beside a file store's journals: listed (reads only), a
//! run put back from its `rm` backup, and a backup removed, both through
//! the directory seam, so the crash sweep covers them (`sim.rs`).

use super::seam::{Dir, OsDir};
use super::FileStore;
use crate::error::{Error, Result};
use crate::store::backup::{parse_file_name, Backup};
use std::collections::HashMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

impl FileStore {
    /// The backups beside the journals, each file once by what it holds
    /// ([`Backup::held`]).
    pub(crate) fn backups(&self) -> Result<Vec<Backup>> {
        let entries = match std::fs::read_dir(self.dir()) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(self.dir(), e)),
        };
        let mut found = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(self.dir(), e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Some((kind, run, when)) = parse_file_name(&name) else {
                continue;
            };
            let path = entry.path();
            // Never followed: a backup is a regular file this tool made.
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            found.push(Backup {
                id: name,
                kind,
                run,
                when,
                path,
                bytes: meta.len(),
                held: meta.blocks().saturating_mul(512),
            });
        }
        found.sort_by(|a, b| (a.when, &a.id).cmp(&(b.when, &b.id)));
        self.held_once(&mut found);
        Ok(found)
    }

    /// A file reached by several names is counted once: a backup that is
    /// a second name of its run's journal (same device and inode) holds
    /// nothing extra, and of several backups of one inode only the first
    /// listed holds its blocks.
    fn held_once(&self, found: &mut [Backup]) {
        let mut seen: HashMap<(u64, u64), ()> = HashMap::new();
        for b in found.iter_mut() {
            let Ok(meta) = std::fs::symlink_metadata(&b.path) else {
                continue;
            };
            if meta.nlink() < 2 {
                continue;
            }
            let key = (meta.dev(), meta.ino());
            let journal_is_it = self
                .journal_path(&b.run)
                .ok()
                .and_then(|j| std::fs::symlink_metadata(j).ok())
                .is_some_and(|j| (j.dev(), j.ino()) == key);
            if journal_is_it || seen.insert(key, ()).is_some() {
                b.held = 0;
            }
        }
    }

    /// Put run `run` back from its `rm` backup at `backup`: the backup
    /// linked to the journal's name (never over a run of that name), the
    /// directory fsynced, then the backup's name unlinked and the
    /// directory fsynced again. A crash leaves the backup and no run, or
    /// the run (with the backup's name still beside it until the second
    /// fsync); run again, the restore finishes: a journal that holds the
    /// backup's very bytes is the restore's own.
    pub(crate) fn restore_backup(&self, run: &str, backup: &Path) -> Result<PathBuf> {
        self.restore_in(&OsDir(self.dir().to_path_buf()), run, backup)
    }

    pub(super) fn restore_in(&self, dir: &dyn Dir, run: &str, backup: &Path) -> Result<PathBuf> {
        let journal = self.journal_path(run)?;
        match dir.link(backup, &journal) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let bytes = |p: &Path| dir.open_append(p).map_err(|e| Error::io(p, e));
                let same = bytes(&journal)?.read_regular(&journal)?
                    == bytes(backup)?.read_regular(backup)?;
                if !same {
                    return Err(Error::refused(
                        run,
                        format!(
                            "a run {run} exists in {} and is not this backup's; the backup is restored only while none does (delete or rename that run first); nothing was changed",
                            crate::shell::shown(self.dir())
                        ),
                    ));
                }
            }
            Err(e) => return Err(Error::io(&journal, e)),
        }
        dir.sync_dir().map_err(|e| Error::io(self.dir(), e))?;
        match dir.unlink(backup) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(backup, e)),
        }
        dir.sync_dir().map_err(|e| Error::io(self.dir(), e))?;
        Ok(journal)
    }

    /// Remove the backup at `path` (a name beside the journals), and make
    /// that durable. One already gone is gone.
    pub(crate) fn prune_backup(&self, path: &Path) -> Result<()> {
        self.prune_in(&OsDir(self.dir().to_path_buf()), path)
    }

    pub(super) fn prune_in(&self, dir: &dyn Dir, path: &Path) -> Result<()> {
        match dir.unlink(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        dir.sync_dir().map_err(|e| Error::io(self.dir(), e))
    }
}
