//! `repair` on the file backend: under the run lock, a torn final line is
//! cut (its bytes kept beside the journal first) or a missing final
//! newline added. Nothing else is ever changed.

use super::dir::open_error;
use super::seam::{nofollow, write_new, Dir, DirFile, OsDir, OsHandle};
use super::FileStore;
use crate::error::{Error, Remedy, Result};
use crate::lines::{self, Tail};
use crate::store::Repair;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

impl FileStore {
    /// Fix the tail only (see [`Repair`]); with `dry_run`, say what would be done.
    pub fn repair(&self, run: &str, dry_run: bool) -> Result<Repair> {
        let path = self.require(run)?;
        // Looked at first without the lock, as a dry run looks: a live run,
        // a clean tail and interior damage end here having created nothing
        // (not even a lock file for a run that had none).
        self.lock_unless_dry(run, true)?;
        let bytes = open_journal(&path, false)?.read_regular(&path)?;
        if let (records, Tail::Clean) = decode(run, &path, &bytes)? {
            return Ok(Repair::Nothing { records });
        }
        let _lock = self.lock_unless_dry(run, dry_run)?;
        let mut file = open_journal(&path, !dry_run)?;
        // Read again under the lock: that is what is cut.
        let bytes = file.read_regular(&path)?;
        let (records, tail) = decode(run, &path, &bytes)?;
        match tail {
            Tail::Clean => Ok(Repair::Nothing { records }),
            Tail::Unterminated { line, .. } => {
                if !dry_run {
                    add_newline(&mut *file, &path)?;
                }
                Ok(Repair::AddedNewline { line, records })
            }
            Tail::Torn {
                line,
                offset,
                bytes: torn,
                terminated,
                ..
            } => {
                let len = torn.len() as u64 + u64::from(terminated);
                let backup = if dry_run {
                    None
                } else {
                    let saved = bytes.get(offset as usize..).unwrap_or_default();
                    let os = OsDir(self.dir().to_path_buf());
                    Some(self.cut_torn(&os, &mut *file, run, &path, saved, offset)?)
                };
                Ok(Repair::CutTorn {
                    line,
                    offset,
                    len,
                    backup,
                    records,
                })
            }
        }
    }

    /// Cut the torn tail `saved` at `offset` off the journal `file` at
    /// `path`: the bytes saved beside the journal first,
    /// `<id>.torn-<UTC time>.bak`, 0600, fsynced with its directory entry
    /// before the journal is touched; then the cut, fsynced. The backup's
    /// name does not end in `.json`, so no reader takes it for a journal.
    pub(super) fn cut_torn(
        &self,
        dir: &dyn Dir,
        file: &mut dyn DirFile,
        run: &str,
        path: &Path,
        saved: &[u8],
        offset: u64,
    ) -> Result<PathBuf> {
        // A repair killed after it saved the bytes and before it cut them
        // left that backup: the same repair again keeps it rather than
        // saving the same bytes twice.
        let before = self.kept_before(run, "torn", |p| {
            std::fs::read(p).is_ok_and(|b| b.as_slice() == saved)
        });
        let (backup, made) = match before {
            Some(b) => (b, false),
            None => (
                self.keep_beside(dir, run, "torn", |p| write_new(dir, p, saved))?,
                true,
            ),
        };
        if let Err(e) = file.set_len(offset) {
            // The journal is as it was: the backup made for it is not needed.
            if made {
                let _ = dir.unlink(&backup);
            }
            return Err(Error::io(path, e));
        }
        // Cut, but maybe not durably: the backup stays, the bytes are in it.
        file.sync_all().map_err(|e| Error::io(path, e))?;
        Ok(backup)
    }
}

/// The journal at `path`, opened as a writer opens it: never through a
/// symbolic link, and without blocking (a FIFO in its place); for writing
/// when `write`.
fn open_journal(path: &Path, write: bool) -> Result<Box<dyn DirFile>> {
    nofollow()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map(OsHandle::boxed)
        .map_err(|e| open_error(path, e))
}

/// The journal `bytes` of `run` at `path` read with the reader's rule: its
/// record count and its tail; interior damage refused (nothing cuts it).
fn decode(run: &str, path: &Path, bytes: &[u8]) -> Result<(usize, Tail)> {
    match lines::decode_all(bytes) {
        Ok((entries, tail)) => Ok((entries.len(), tail)),
        Err(bad) => {
            let after = lines::split(bytes).filter(|l| l.line > bad.line).count();
            Err(Error::refused_until(
                run,
                format!(
                    "{} line {} (byte {}) does not parse ({}), and {after} line(s) follow it. \
                     repair only cuts a torn final line: cutting here would throw away the \
                     {after} intact record(s) after it, and dropping just this line would leave \
                     a hole in the sequence that resume could not fold. Nothing was changed; \
                     recover rebuilds the run from every intact record and says what the \
                     damage cost.",
                    crate::shell::shown(path),
                    bad.line,
                    bad.offset,
                    bad.error,
                ),
                Remedy::Recover,
            ))
        }
    }
}

/// The missing final newline of the journal `file` at `path`, written and
/// fsynced.
pub(super) fn add_newline(file: &mut dyn DirFile, path: &Path) -> Result<()> {
    file.write_all(b"\n")
        .and_then(|()| file.sync_data())
        .map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36.5: a repair killed after it saved the torn bytes and
    /// before it cut them (the crash sweep's image) left their backup;
    /// the same repair again cuts and keeps that backup, and saves no
    /// second copy of the same bytes.
    #[test]
    fn a_repair_again_after_a_kill_keeps_the_backup_it_made_not_a_second() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let mut a = store.create_appender("r").unwrap();
        crate::store::Appender::append(&mut a, &super::super::testing::rec(1)).unwrap();
        drop(a);
        let journal = dir.path().join("r.json");
        let whole = std::fs::read(&journal).unwrap();
        let torn = br#"{"seq":2,"prot"#;
        let mut bytes = whole.clone();
        bytes.extend_from_slice(torn);
        std::fs::write(&journal, &bytes).unwrap();
        let left = dir.path().join("r.torn-20261201T000000Z.bak");
        std::fs::write(&left, torn).unwrap();
        // An earlier backup of other bytes is not it.
        std::fs::write(dir.path().join("r.torn-20250101T000000Z.bak"), b"other").unwrap();
        match store.repair("r", false).unwrap() {
            Repair::CutTorn { backup, .. } => assert_eq!(backup, Some(left)),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(&journal).unwrap(), whole);
        let backups = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("r.torn-")
            })
            .count();
        assert_eq!(backups, 2);
    }
}
