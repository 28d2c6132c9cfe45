//! The run lock (SPEC 7): an exclusive flock on `<id>.lock`, and who holds
//! one, read from `/proc/locks` in one place.

use super::dir::open_error;
use super::seam::nofollow;
use super::FileStore;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

impl FileStore {
    /// Take the run lock: an exclusive, non-blocking flock on `<id>.lock`.
    pub fn lock(&self, run: &str) -> Result<File> {
        self.lock_noting(run).map(|(f, _)| f)
    }

    /// [`lock`](Self::lock), and whether this call created the lock file
    /// (a creator that then fails removes it again: the run never came to
    /// exist).
    pub(super) fn lock_noting(&self, run: &str) -> Result<(File, bool)> {
        use std::os::unix::fs::MetadataExt;
        let path = self.lock_path(run)?;
        for _ in 0..8 {
            let open = |create_new: bool| {
                nofollow()
                    .read(true)
                    .write(true)
                    .create_new(create_new)
                    .open(&path)
            };
            // Created here, or opened as another writer left it.
            let (f, created) = match open(true) {
                Ok(f) => (f, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open(false) {
                    Ok(f) => (f, false),
                    // Removed in between (a concurrent rm): try again.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(open_error(&path, e)),
                },
                Err(e) => return Err(open_error(&path, e)),
            };
            match f.try_lock() {
                // `rm` unlinks the lock file while holding it: a lock taken
                // on the unlinked file would not exclude a writer opening
                // the path anew, so it must still be the file at the path.
                Ok(()) => match (f.metadata(), std::fs::symlink_metadata(&path)) {
                    (Ok(a), Ok(b)) if a.ino() == b.ino() && a.dev() == b.dev() => {
                        return Ok((f, created))
                    }
                    _ => continue,
                },
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Live {
                        run: run.to_owned(),
                        holder: LiveLocks::snapshot().holder(&path),
                    })
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::Live {
            run: run.to_owned(),
            holder: Some("the lock file kept being replaced (a concurrent rm?); try again".into()),
        })
    }

    /// The run lock for a command that writes; for its dry run, none: a dry
    /// run only reads, like every reader it takes no lock and creates
    /// nothing, and says whether a writer would stop the real one.
    pub(crate) fn lock_unless_dry(&self, run: &str, dry_run: bool) -> Result<Option<File>> {
        if !dry_run {
            return Ok(Some(self.lock(run)?));
        }
        let (locks, path) = (LiveLocks::snapshot(), self.lock_path(run)?);
        match locks.is_held(&path) {
            true => Err(Error::Live {
                run: run.to_owned(),
                holder: locks.holder(&path),
            }),
            false => Ok(None),
        }
    }

    /// Whether a writer holds the run's lock right now.
    pub fn is_live(&self, run: &str) -> Result<bool> {
        Ok(LiveLocks::snapshot().is_held(&self.lock_path(run)?))
    }
}

/// The flock locks held on this machine, read from `/proc/locks`, so that
/// detecting a live run never takes a lock a writer could need at that very
/// moment. Where `/proc/locks` is unavailable, a shared lock is tried and
/// released at once on a lock file opened read-only (never created).
// For tests (journal/tests/mutations.rs), not API: a front end goes through `Store`.
#[doc(hidden)]
pub struct LiveLocks {
    /// The locked files, by (major, minor, inode), and the pid of the
    /// first lock listed on each.
    held: Option<HashMap<(u64, u64, u64), String>>,
}

impl LiveLocks {
    /// The locks held now, read from `/proc/locks` (none known where it cannot be read).
    pub fn snapshot() -> LiveLocks {
        let held = std::fs::read_to_string("/proc/locks").ok().map(|text| {
            let mut held = HashMap::new();
            for line in text.lines() {
                if let Some((file, pid)) = flock(line) {
                    held.entry(file).or_insert_with(|| pid.to_owned());
                }
            }
            held
        });
        LiveLocks { held }
    }

    /// Whether a process held the lock file `lock` at the snapshot.
    pub(crate) fn is_held(&self, lock: &Path) -> bool {
        let Ok(md) = std::fs::metadata(lock) else {
            return false;
        };
        match &self.held {
            Some(held) => held.contains_key(&file_id(&md)),
            None => match File::open(lock) {
                Ok(f) => match f.try_lock_shared() {
                    Ok(()) => {
                        let _ = f.unlock();
                        false
                    }
                    Err(_) => true,
                },
                Err(_) => false,
            },
        }
    }

    /// Who holds a flock on `lock` ("pid N"), for messages; `None` when
    /// nobody does or `/proc/locks` cannot say.
    pub fn holder(&self, lock: &Path) -> Option<String> {
        let md = std::fs::metadata(lock).ok()?;
        let pid = self.held.as_ref()?.get(&file_id(&md))?;
        Some(format!("pid {pid}"))
    }
}

/// One `/proc/locks` line, when it is a flock held (not waited for): the
/// locked file's (major, minor, inode) and the holder's pid.
fn flock(line: &str) -> Option<((u64, u64, u64), &str)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    // "1: FLOCK ADVISORY WRITE pid maj:min:ino start end";
    // blocked waiters are "1: -> FLOCK ...".
    if f.get(1) != Some(&"FLOCK") {
        return None;
    }
    let mut dev = f.get(5)?.split(':');
    let maj = u64::from_str_radix(dev.next()?, 16).ok()?;
    let min = u64::from_str_radix(dev.next()?, 16).ok()?;
    let ino = dev.next()?.parse().ok()?;
    Some(((maj, min, ino), f.get(4)?))
}

/// A file's (major, minor, inode), as `/proc/locks` names it (the
/// kernel's `dev_t` encoding, as glibc's `major`/`minor` decode it).
fn file_id(md: &std::fs::Metadata) -> (u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let dev = md.dev();
    let maj = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let min = (dev & 0xff) | ((dev >> 12) & !0xff);
    (maj, min, md.ino())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_flock_is_read_and_a_waiter_or_another_kind_is_not() {
        let held = "1: FLOCK  ADVISORY  WRITE 4242 00:2a:1234 0 EOF";
        assert_eq!(flock(held), Some(((0, 0x2a, 1234), "4242")));
        assert_eq!(
            flock("1: -> FLOCK  ADVISORY  WRITE 4243 00:2a:1234 0 EOF"),
            None
        );
        assert_eq!(flock("2: POSIX  ADVISORY  WRITE 7 fd:01:99 0 EOF"), None);
    }

    #[test]
    fn a_lock_taken_here_is_seen_with_its_pid() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let path = store.lock_path("r").unwrap();
        assert!(!LiveLocks::snapshot().is_held(&path));
        let _lock = store.lock("r").unwrap();
        let locks = LiveLocks::snapshot();
        assert!(locks.is_held(&path));
        if Path::new("/proc/locks").exists() {
            let pid = format!("pid {}", std::process::id());
            assert_eq!(locks.holder(&path), Some(pid));
        }
    }
}
