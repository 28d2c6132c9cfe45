//! The audit log's file (issue 38): [`crate::audit::LOG_FILE`] in the
//! store directory, one entry a line, appended as a journal is (the line
//! with its `\n`, then an fdatasync; the directory fsynced when the file
//! is new). Its name ends in `.jsonl`, not `.json`: the agent's listing
//! (`*.json` whose stem is a run id) and this tool's never take it for a
//! run.
//!
//! Appenders take an exclusive flock on the log itself for the append
//! (waiting for another fisk-admin's, which holds it only for one
//! append), so two invocations never number two entries alike. A final
//! line without its `\n` is an entry whose append never returned (the
//! writer was killed before its fdatasync, so the write it announced was
//! not begun): the next append cuts it first, durably. Writes go through
//! the directory seam, so the crash sweep (`sim.rs`) covers them.

use super::dir::open_error;
use super::seam::{nofollow, Dir, OsDir};
use super::FileStore;
use crate::audit::{link, Entry, LOG_FILE};
use crate::error::{Error, Result, Where};
use std::io;
use std::path::PathBuf;

/// Bytes read from the log's end to find its last entry: more than any
/// entry takes (an entry carried from another store holds one).
const TAIL: u64 = 64 * 1024;

/// The log's last whole entry: its number and link, `(0, None)` when there is none.
fn last_entry(whole: &[u8]) -> (u64, Option<String>) {
    let body = whole.strip_suffix(b"\n").unwrap_or(whole);
    if body.is_empty() {
        return (0, None);
    }
    let line = match memchr::memrchr(b'\n', body) {
        Some(at) => body.get(at + 1..).unwrap_or_default(),
        None => body,
    };
    let n = match Entry::decode(line) {
        Ok(e) => e.n,
        // A last line that is no entry (edited by hand): numbered by its
        // place, so the chain goes on from it (verify names it).
        Err(_) => body.split(|c| *c == b'\n').count() as u64,
    };
    (n, Some(link(line)))
}

impl FileStore {
    /// `<dir>/fisk-admin-audit.jsonl`.
    pub(crate) fn audit_path(&self) -> PathBuf {
        self.dir().join(LOG_FILE)
    }

    /// The log's bytes as stored; `None` when the store has no log.
    pub(crate) fn audit_bytes(&self) -> Result<Option<Vec<u8>>> {
        let path = self.audit_path();
        match nofollow().read(true).open(&path) {
            Ok(mut f) => super::whole::read_regular(&path, &mut f).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(open_error(&path, e)),
        }
    }

    /// Append the entry `make` makes for its number and link (the next
    /// number and the link of the last entry), under the log's lock,
    /// durably. Returns the entry's number and bytes.
    pub(crate) fn audit_append(
        &self,
        make: &mut dyn FnMut(u64, Option<String>) -> Vec<u8>,
    ) -> Result<(u64, Vec<u8>)> {
        use std::os::unix::fs::MetadataExt;
        let path = self.audit_path();
        let io_err = |e: io::Error| Error::io(&path, e);
        self.ensure_dir()?;
        for _ in 0..8 {
            let existed = std::fs::symlink_metadata(&path).is_ok();
            // The lock: the log itself, opened (made, empty, when missing:
            // the append below makes its name durable) and flocked.
            let lock = nofollow()
                .read(true)
                .append(true)
                .create(true)
                .open(&path)
                .map_err(|e| open_error(&path, e))?;
            lock.lock().map_err(io_err)?;
            // Still the file at the path (an appender that failed on a log
            // it had just made removes it again): else open it anew.
            match (lock.metadata(), std::fs::symlink_metadata(&path)) {
                (Ok(a), Ok(b)) if a.ino() == b.ino() && a.dev() == b.dev() => {}
                _ => continue,
            }
            let done = self.audit_append_in(&*OsDir::shared(self.dir()), make);
            if done.is_err() && !existed && lock.metadata().is_ok_and(|m| m.len() == 0) {
                // Made here and left empty (a full disk): leave no log.
                let _ = std::fs::remove_file(&path);
            }
            let _ = lock.unlock();
            return done;
        }
        Err(Error::Audit {
            at: Where::Path(path.clone()),
            message: "the log kept being replaced while this appended to it; nothing was written, try again".into(),
        })
    }

    /// [`audit_append`](Self::audit_append) through the directory seam,
    /// the lock held.
    pub(super) fn audit_append_in(
        &self,
        dir: &dyn Dir,
        make: &mut dyn FnMut(u64, Option<String>) -> Vec<u8>,
    ) -> Result<(u64, Vec<u8>)> {
        let path = self.audit_path();
        let io_err = |e: io::Error| Error::io(&path, e);
        let mut file = match dir.open_append(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let line = make(1, None);
                let mut f = dir.create(&path, true).map_err(io_err)?;
                f.write_all(&[&line[..], b"\n"].concat())
                    .and_then(|()| f.sync_all())
                    .and_then(|()| dir.sync_dir())
                    .map_err(io_err)?;
                return Ok((1, line));
            }
            Err(e) => return Err(open_error(&path, e)),
        };
        let (start, tail) = file.read_tail(&path, TAIL)?;
        // Where the log's whole lines end: after its last `\n`.
        let whole_end = match memchr::memrchr(b'\n', &tail) {
            Some(at) => start + at as u64 + 1,
            None if start == 0 => 0,
            // No line end in the tail: a line longer than any entry.
            None => {
                return Err(Error::Audit {
                    at: Where::Path(path.clone()),
                    message: format!(
                        "its last {TAIL} bytes hold no line end: it is not an audit log this tool wrote; nothing was written"
                    ),
                })
            }
        };
        let len = start + tail.len() as u64;
        if whole_end < len {
            // A torn entry: its append never returned, so its write was
            // never begun. Cut, durably, before anything follows it.
            file.set_len(whole_end)
                .and_then(|()| file.sync_data())
                .map_err(io_err)?;
        }
        let keep = usize::try_from(whole_end - start).unwrap_or(0);
        let mut whole = tail.get(..keep).unwrap_or_default().to_vec();
        if start > 0 && memchr::memchr(b'\n', whole.strip_suffix(b"\n").unwrap_or(&whole)).is_none()
        {
            // The last line began before the tail read: read it all.
            whole = file.read_regular(&path)?;
            whole.truncate(usize::try_from(whole_end).unwrap_or(0));
        }
        let (n, prev) = last_entry(&whole);
        let line = make(n + 1, prev);
        file.write_all(&[&line[..], b"\n"].concat())
            .and_then(|()| file.sync_data())
            .map_err(io_err)?;
        if whole_end == 0 {
            // The file is new (made by the lock's open): its name too.
            dir.sync_dir().map_err(io_err)?;
        }
        Ok((n + 1, line))
    }
}

/// The log at `path` as lines: each whole line and where it starts; a
/// final line without its `\n` (an append that never returned) is left
/// out, as readers leave out a journal's torn tail.
pub(crate) fn log_lines(bytes: &[u8]) -> Vec<(u64, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0usize;
    for line in bytes.split_inclusive(|c| *c == b'\n') {
        if let Some(body) = line.strip_suffix(b"\n") {
            if !body.is_empty() {
                out.push((at as u64, body));
            }
        }
        at += line.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_entry_is_found_and_a_line_that_is_no_entry_is_numbered_by_its_place() {
        assert_eq!(last_entry(b""), (0, None));
        let e = Entry {
            n: 7,
            ..Entry::default()
        }
        .encode();
        let log = [&b"x\n"[..], &e, b"\n"].concat();
        assert_eq!(last_entry(&log), (7, Some(link(&e))));
        assert_eq!(last_entry(b"a\nb\ngarbage\n"), (3, Some(link(b"garbage"))));
        assert_eq!(log_lines(b"a\n\nb\ntorn").len(), 2);
    }

    #[test]
    fn entries_are_numbered_and_linked_and_a_torn_one_is_cut_first() {
        let d = tempfile::tempdir().unwrap();
        let store = FileStore::new(d.path());
        let mut make = |n: u64, prev: Option<String>| {
            Entry {
                n,
                prev,
                ..Entry::default()
            }
            .encode()
        };
        let (n1, l1) = store.audit_append(&mut make).unwrap();
        assert_eq!(n1, 1);
        // A torn append left behind.
        let path = store.audit_path();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"n\":2,\"pr");
        std::fs::write(&path, &bytes).unwrap();
        let (n2, l2) = store.audit_append(&mut make).unwrap();
        assert_eq!(n2, 2);
        let e2 = Entry::decode(&l2).unwrap();
        assert_eq!(e2.prev, Some(link(&l1)));
        let stored = std::fs::read(&path).unwrap();
        assert_eq!(stored, [&l1[..], b"\n", &l2, b"\n"].concat());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // The store's listing does not take it for a run.
        assert!(store.list().unwrap().runs.is_empty());
    }
}
