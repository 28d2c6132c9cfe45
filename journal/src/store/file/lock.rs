//! The run lock (SPEC 7): an exclusive flock on `<id>.lock`, and who holds
//! one, read from `/proc/locks` in one place.

use super::dir::{nofollow, open_error};
use super::FileStore;
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fs::File;
use std::path::Path;

/// The pid holding a flock on `lock`, from `/proc/locks`, for messages.
fn holder(lock: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(lock).ok()?;
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = md.dev();
    let maj = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let min = (dev & 0xff) | ((dev >> 12) & !0xff);
    let want = format!("{maj:02x}:{min:02x}:{}", md.ino());
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&want.as_str()))
            .then(|| f.get(4).map(|pid| format!("pid {pid}")))
            .flatten()
    })
}

impl FileStore {
    /// Take the run lock: an exclusive, non-blocking flock on `<id>.lock`.
    pub fn lock(&self, run: &str) -> Result<File> {
        use std::os::unix::fs::MetadataExt;
        let path = self.lock_path(run)?;
        for _ in 0..8 {
            let f = nofollow()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| open_error(&path, e))?;
            match f.try_lock() {
                // `rm` unlinks the lock file while holding it: a lock taken
                // on the unlinked file would not exclude a writer opening
                // the path anew, so it must still be the file at the path.
                Ok(()) => match (f.metadata(), std::fs::symlink_metadata(&path)) {
                    (Ok(a), Ok(b)) if a.ino() == b.ino() && a.dev() == b.dev() => return Ok(f),
                    _ => continue,
                },
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Live {
                        run: run.to_owned(),
                        holder: holder(&path),
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
        match dry_run {
            false => Ok(Some(self.lock(run)?)),
            true if self.is_live(run)? => Err(Error::Live {
                run: run.to_owned(),
                holder: holder(&self.lock_path(run)?),
            }),
            true => Ok(None),
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
pub struct LiveLocks {
    held: Option<HashSet<(u64, u64, u64)>>,
}

impl LiveLocks {
    pub fn snapshot() -> LiveLocks {
        let held = std::fs::read_to_string("/proc/locks").ok().map(|text| {
            text.lines()
                .filter_map(|line| {
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
                    Some((maj, min, ino))
                })
                .collect()
        });
        LiveLocks { held }
    }

    pub fn is_held(&self, lock: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(md) = std::fs::metadata(lock) else {
            return false;
        };
        match &self.held {
            Some(set) => {
                let dev = md.dev();
                let maj = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
                let min = (dev & 0xff) | ((dev >> 12) & !0xff);
                set.contains(&(maj, min, md.ino()))
            }
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
}
