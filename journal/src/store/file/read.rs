//! Reading the file backend: a run's bytes, its digest, the run read with
//! the reader's rule, and the `ls` summary read from a head and a tail
//! window (SPEC 9). Readers never lock and never write.

use super::whole;
use super::{missing_or, FileStore, LiveLocks};
use crate::error::{Error, Result, Where};
use crate::lines;
use crate::record::{Entry, Record};
use crate::store::summary::TailWalk;
use crate::store::{Journal, Summary};
use crate::time::Time;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

impl FileStore {
    pub(crate) fn open(&self, run: &str) -> Result<(PathBuf, File)> {
        let path = self.journal_path(run)?;
        self.refuse_outside_link(&path)?;
        match whole::open(&path) {
            Ok(f) => Ok((path, f)),
            Err(e) => Err(missing_or(run, &path, e, |p, e| Error::io(p, e))),
        }
    }

    /// A journal that is a symbolic link is read only when its target is
    /// inside the store directory: nothing outside the store (a link to
    /// `/etc/shadow`) is ever read, let alone printed as "corruption".
    fn refuse_outside_link(&self, path: &std::path::Path) -> Result<()> {
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        // Not a link, or one to something that is not a file at all (the
        // open refuses that, naming what it is).
        if !is_link || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return Ok(());
        }
        let inside = match (
            std::fs::canonicalize(path),
            std::fs::canonicalize(self.dir()),
        ) {
            (Ok(target), Ok(dir)) => target.parent() == Some(dir.as_path()),
            _ => false,
        };
        if inside {
            return Ok(());
        }
        Err(Error::NotAFile {
            path: path.to_path_buf(),
            what: "a symbolic link to a file outside the store directory: it is not read".into(),
        })
    }

    /// The journal's bytes, exactly as stored.
    // For tests (journal/tests/mutations.rs), not API: a front end goes through `Store`.
    #[doc(hidden)]
    pub fn read_bytes(&self, run: &str) -> Result<(PathBuf, Vec<u8>)> {
        let (path, mut f) = self.open(run)?;
        let bytes = whole::read(&mut f).map_err(|e| Error::io(&path, e))?;
        Ok((path, bytes))
    }

    /// The journal's line count (a final unterminated line counts) and the
    /// SHA-256 of its bytes with every line ending in `\n` (a final record
    /// may lack its newline: SPEC 7), streamed through a small buffer: what
    /// `migrate` compares a copy against, without decoding it.
    pub fn digest(&self, run: &str) -> Result<(usize, [u8; 32])> {
        use sha2::{Digest, Sha256};
        use std::io::Read;
        let (path, mut f) = self.open(run)?;
        let mut h = Sha256::new();
        let mut buf = [0u8; 64 << 10];
        let (mut lines, mut last) = (0, b'\n');
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&path, e)),
            };
            let chunk = buf.get(..n).unwrap_or_default();
            lines += memchr::memchr_iter(b'\n', chunk).count();
            last = chunk.last().copied().unwrap_or(last);
            h.update(chunk);
        }
        if last != b'\n' {
            h.update(b"\n");
            lines += 1;
        }
        Ok((lines, h.finalize().into()))
    }

    /// Read a run with the reader's rule: a torn tail is dropped, interior
    /// corruption is an error naming the line.
    pub fn read(&self, run: &str) -> Result<Journal> {
        let (path, bytes) = self.read_bytes(run)?;
        match lines::decode_all(&bytes) {
            Ok((entries, tail)) => Ok(journal(run, entries, tail, &bytes)),
            Err(bad) => Err(Error::Corrupt {
                run: run.to_owned(),
                at: Where::Line {
                    path,
                    line: bad.line,
                    offset: bad.offset,
                },
                message: format!("line does not parse: {}", bad.error),
            }),
        }
    }

    /// Read a run up to the first line that does not parse instead of
    /// failing: the readable prefix, and why reading stopped early.
    pub fn read_prefix(&self, run: &str) -> Result<(Journal, Option<String>)> {
        let (_, bytes) = self.read_bytes(run)?;
        let (entries, tail, stop) = lines::decode_prefix(&bytes);
        let stopped = stop.map(|bad| {
            format!(
                "line {} (byte {}) does not parse: {}",
                bad.line, bad.offset, bad.error
            )
        });
        Ok((journal(run, entries, tail, &bytes), stopped))
    }

    /// Summarise a run from its meta record and its tail (SPEC 9): the cost
    /// does not grow with the journal's length.
    pub fn summary(&self, run: &str, locks: &LiveLocks) -> Summary {
        let mut s = match self.summary_inner(run) {
            Ok(s) => s,
            Err(e) => {
                let mut s = Summary::corrupt(run, &e);
                if let Ok(md) = self
                    .journal_path(run)
                    .and_then(|p| std::fs::metadata(&p).map_err(|e| Error::io(p, e)))
                {
                    s.bytes = Some(md.len());
                    s.updated = md.modified().ok().map(Time::from_system);
                }
                s
            }
        };
        let held = self.lock_path(run).is_ok_and(|p| locks.is_held(&p));
        s.set_live(held.then_some(crate::state::Holder::Lock { holder: None }));
        s
    }

    fn summary_inner(&self, run: &str) -> Result<Summary> {
        let (path, f) = self.open(run)?;
        let md = f.metadata().map_err(|e| Error::io(&path, e))?;
        let size = md.len();
        let corrupt = |offset: u64, message: String| Error::Corrupt {
            run: run.to_owned(),
            at: Where::Line {
                path: path.clone(),
                line: 0,
                offset,
            },
            message,
        };
        let read =
            |start: u64, len: u64| read_range(&f, start, len).map_err(|e| Error::io(&path, e));
        if size == 0 {
            return Err(corrupt(0, "the journal is empty".into()));
        }

        // A small journal is read in one go; a large one as a head and a
        // tail window, so the cost does not grow with its length.
        const WHOLE: u64 = 128 * 1024;
        let whole = if size <= WHOLE {
            Some(read(0, size)?)
        } else {
            None
        };

        // The meta record: the first line.
        let (head, meta_end) = match &whole {
            Some(buf) => match memchr::memchr(b'\n', buf) {
                Some(i) => (buf.get(..i).unwrap_or_default().to_vec(), i as u64 + 1),
                None => (buf.clone(), size),
            },
            None => {
                let mut chunk = 16 * 1024;
                loop {
                    let mut head = read(0, chunk.min(size))?;
                    if let Some(i) = memchr::memchr(b'\n', &head) {
                        head.truncate(i);
                        break (head, i as u64 + 1);
                    }
                    if head.len() as u64 >= size {
                        break (head, size);
                    }
                    chunk *= 4;
                }
            }
        };
        let meta = Record::decode(&head)
            .map_err(|e| corrupt(0, format!("the first line does not parse: {e}")))?;

        // The tail, backwards to the last assistant record.
        let mut window: u64 = 64 * 1024;
        loop {
            let start = size.saturating_sub(window).max(meta_end);
            let owned;
            let buf: &[u8] = match &whole {
                Some(w) => w.get(start as usize..).unwrap_or_default(),
                None => {
                    owned = read(start, size - start)?;
                    &owned
                }
            };
            // Unless we reached the meta record, the window starts mid-line.
            let (body, body_start) = if start > meta_end {
                match memchr::memchr(b'\n', buf) {
                    Some(i) => (buf.get(i + 1..).unwrap_or_default(), start + i as u64 + 1),
                    None => {
                        window *= 4;
                        continue;
                    }
                }
            } else {
                (buf, start)
            };
            // The window's lines from its last (the journal's last) back,
            // as far as the walk wants.
            let raw: Vec<_> = lines::split(body).collect();
            let mut walk = TailWalk::new();
            for l in raw.iter().rev() {
                let decoded = Record::decode(l.bytes).map_err(|e| {
                    corrupt(
                        body_start + l.offset,
                        format!("an interior line does not parse: {e}"),
                    )
                });
                if !walk.feed(decoded)? {
                    break;
                }
            }
            if !walk.wants_more() || start <= meta_end {
                // A torn final line, or a final record with no newline.
                let damaged = walk.torn() || buf.last().is_some_and(|b| *b != b'\n');
                let mut s = Summary::from_tail(run, &meta, &walk.into_tail());
                if damaged {
                    s.set_damaged_tail();
                }
                if let Some(p) = s.problem.as_mut() {
                    *p = format!("{}: {p}", crate::shell::shown(&path));
                }
                s.bytes = Some(size);
                // SPEC 9: the last record's time; an undated one, the mtime.
                if s.updated.is_none() {
                    s.updated = md.modified().ok().map(Time::from_system);
                }
                return Ok(s);
            }
            window *= 4;
        }
    }
}

/// The run read from `bytes`, what is stored.
fn journal(run: &str, entries: Vec<Entry>, tail: lines::Tail, bytes: &[u8]) -> Journal {
    Journal {
        run: run.to_owned(),
        entries,
        tail,
        bytes: bytes.len() as u64,
    }
}

/// `len` bytes from `start` (fewer only at end of file), with positioned
/// reads: one system call for the whole range in the common case.
fn read_range(f: &File, start: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    let mut got = 0usize;
    while let Some(rest) = buf.get_mut(got..).filter(|r| !r.is_empty()) {
        match f.read_at(rest, start + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(got);
    Ok(buf)
}
