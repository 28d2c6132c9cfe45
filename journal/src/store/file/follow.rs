//! Following a journal file as its writer appends to it (`show RUN
//! --follow`): a poll of the file's size every [`POLL`], the new bytes read
//! from the descriptor opened at the start, cut into lines.
//!
//! Polling, not inotify (`notify`): a journal grows by one record per step
//! of a run, seconds apart, so a tenth of a second is soon enough; a poll
//! sees a file on any filesystem (NFS, a container's bind mount) where
//! change notifications are not delivered, and needs no thread or crate.
//!
//! The writer's rules (SPEC 7) decide what a line is: a final line without
//! its `\n` that does not decode is a write in progress, waited on, never
//! reported; a line that does not decode although a `\n` ends it is
//! corruption, an error naming the file and the line. The journal replaced
//! whole (`repair`, `upgrade` and `recover` write a new file and rename it
//! over the old: another inode) or removed ends the follow with an error
//! saying so: the records read so far may no longer be the run's.

use crate::error::{Error, Result, Where};
use crate::record::Record;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the file's size is looked at while nothing new came.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// A journal file followed from a byte offset.
pub(crate) struct FileFollow {
    run: String,
    path: PathBuf,
    file: File,
    /// The device and inode opened: another one under the path is a
    /// journal written anew.
    id: (u64, u64),
    /// Bytes consumed: every line before this offset was yielded (or was
    /// read before the follow began).
    offset: u64,
    /// Lines consumed (for the line number of a bad one).
    lines: usize,
    /// Bytes read past `offset` that do not make a line yet.
    pending: Vec<u8>,
    /// The last record yielded had no `\n`: the one the writer adds
    /// before its next record (SPEC 7) is not a line of its own.
    newline_owed: bool,
}

impl FileFollow {
    /// Open the journal at `path` and read it: the follower, and the bytes
    /// shown so far, up to the end of the last line that is whole (a
    /// final line cut short is left for [`poll`](Self::poll) to yield
    /// when its writer has finished it). `file` is the journal at `path`,
    /// opened by the caller under its rules (a store's refuses a link
    /// outside the store; a FIFO or device is refused either way).
    pub(crate) fn start(run: &str, path: &Path, mut file: File) -> Result<(Vec<u8>, FileFollow)> {
        let io = |e| Error::io(path, e);
        let meta = file.metadata().map_err(io)?;
        let mut bytes = super::whole::read(&mut file).map_err(io)?;
        // The final line, when it has no `\n`: a record whose newline has
        // not come yet is shown; anything else waits.
        let start = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let last = bytes.get(start..).unwrap_or_default();
        let newline_owed = !last.is_empty() && Record::decode(last).is_ok();
        let pending = if newline_owed || last.is_empty() {
            Vec::new()
        } else {
            let cut = last.to_vec();
            bytes.truncate(start);
            cut
        };
        let lines = crate::lines::split(&bytes).count();
        let follow = FileFollow {
            run: run.to_owned(),
            path: path.to_path_buf(),
            file,
            id: (meta.dev(), meta.ino()),
            offset: bytes.len() as u64,
            lines,
            pending,
            newline_owed,
        };
        Ok((bytes, follow))
    }

    /// [`start`](Self::start) on the file at `path`, opened as a journal
    /// is (a FIFO or a device refused).
    pub(crate) fn start_path(run: &str, path: &Path) -> Result<(Vec<u8>, FileFollow)> {
        let file = super::whole::open(path).map_err(|e| Error::io(path, e))?;
        FileFollow::start(run, path, file)
    }

    /// Name the run in errors (a journal file's id is read from it).
    pub(crate) fn named(&mut self, run: &str) {
        self.run = run.to_owned();
    }

    /// The records appended since the last call, each with its line as
    /// stored: waits up to `wait` for one, returns as soon as there is
    /// one (empty when none came). Ends early at a terminal record:
    /// whatever follows it is not read.
    pub(crate) fn poll(&mut self, wait: Duration) -> Result<Vec<(Vec<u8>, Record)>> {
        let until = Instant::now() + wait;
        loop {
            self.check_same()?;
            self.read_more()?;
            let got = self.lines_out()?;
            let now = Instant::now();
            if !got.is_empty() || now >= until {
                return Ok(got);
            }
            std::thread::sleep(POLL.min(until - now));
        }
    }

    /// Refuse a journal that is gone or is another file now.
    fn check_same(&self) -> Result<()> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::refused(
                    &self.run,
                    format!(
                        "the journal {} was removed while it was followed",
                        crate::shell::shown(&self.path)
                    ),
                ))
            }
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        if (meta.dev(), meta.ino()) != self.id {
            return Err(Error::refused(
                &self.run,
                format!(
                    "the journal {} was replaced while it was followed (a repair, an upgrade or a recover wrote it anew); follow it again to read the new one",
                    crate::shell::shown(&self.path)
                ),
            ));
        }
        Ok(())
    }

    /// Read what the file holds past what was read.
    fn read_more(&mut self) -> Result<()> {
        let len = self
            .file
            .metadata()
            .map_err(|e| Error::io(&self.path, e))?
            .len();
        let have = self.offset + self.pending.len() as u64;
        if len < have {
            // Cut: a torn tail `repair` dropped is pending bytes only;
            // bytes already yielded are never taken back.
            if len < self.offset {
                return Err(Error::refused(
                    &self.run,
                    format!(
                        "the journal {} was cut to {len} bytes while it was followed, below the {} already read",
                        crate::shell::shown(&self.path),
                        self.offset
                    ),
                ));
            }
            self.pending
                .truncate(usize::try_from(len - self.offset).unwrap_or(0));
            return Ok(());
        }
        let mut at = have;
        let mut buf = vec![0u8; 64 << 10];
        while at < len {
            let n = self
                .file
                .read_at(&mut buf, at)
                .map_err(|e| Error::io(&self.path, e))?;
            if n == 0 {
                break;
            }
            self.pending
                .extend_from_slice(buf.get(..n).unwrap_or_default());
            at += n as u64;
        }
        Ok(())
    }

    /// The whole lines of `pending`, decoded, up to a terminal record.
    fn lines_out(&mut self) -> Result<Vec<(Vec<u8>, Record)>> {
        let mut out = Vec::new();
        let mut used = 0usize;
        loop {
            let rest = self.pending.get(used..).unwrap_or_default();
            if rest.is_empty() {
                break;
            }
            if std::mem::take(&mut self.newline_owed) && rest.first() == Some(&b'\n') {
                used += 1;
                continue;
            }
            let (line, len, terminated) = match memchr::memchr(b'\n', rest) {
                Some(i) => (rest.get(..i).unwrap_or_default(), i + 1, true),
                None => (rest, rest.len(), false),
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                if !terminated {
                    break;
                }
                used += len;
                self.lines += 1;
                continue;
            }
            let record = match Record::decode(line) {
                Ok(r) => r,
                // A write in progress: its end will come.
                Err(_) if !terminated => break,
                Err(e) => {
                    return Err(Error::Corrupt {
                        run: self.run.clone(),
                        at: Where::Line {
                            path: self.path.clone(),
                            line: self.lines + 1,
                            offset: self.offset + used as u64,
                        },
                        message: format!("line does not parse: {e}"),
                    })
                }
            };
            // A whole record whose `\n` is still to come (SPEC 7 lets a
            // final record lack it).
            self.newline_owed = !terminated;
            let end = matches!(record.payload, Some(crate::record::Payload::Terminal(_)));
            out.push((line.to_vec(), record));
            used += len;
            self.lines += 1;
            if end {
                break;
            }
        }
        self.offset += used as u64;
        self.pending.drain(..used);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The three records of a finished version-1 run: meta, assistant,
    /// terminal.
    fn records() -> Vec<String> {
        let text = std::fs::read_to_string("../testdata/runs-v1/simple-completed.json").unwrap();
        text.lines().map(str::to_owned).collect()
    }

    fn start(path: &Path) -> (Vec<u8>, FileFollow) {
        let f = File::open(path).unwrap();
        FileFollow::start("r1", path, f).unwrap()
    }

    fn append(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn a_line_cut_short_is_waited_on_and_yielded_once_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r1.json");
        let r = records();
        let user = r[1].as_bytes();
        let (head, tail) = user.split_at(20);
        std::fs::write(&p, [r[0].as_bytes(), b"\n", head].concat()).unwrap();
        let (bytes, mut f) = start(&p);
        assert_eq!(bytes, [r[0].as_bytes(), b"\n"].concat());
        assert!(f.poll(Duration::ZERO).unwrap().is_empty());
        append(&p, tail);
        // Whole now, its `\n` still to come: yielded, and its newline not
        // taken for a line.
        let got = f.poll(Duration::ZERO).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, user);
        assert_eq!(got[0].1.seq, 2);
        append(&p, b"\n");
        append(&p, r[2].as_bytes());
        append(&p, b"\n{\"seq\":4}\n");
        let got = f.poll(Duration::from_millis(500)).unwrap();
        // Ends at the terminal: what follows it is not read.
        assert_eq!(got.iter().map(|(_, r)| r.seq).collect::<Vec<_>>(), [3]);
    }

    #[test]
    fn a_bad_whole_line_names_its_line_and_a_replaced_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r1.json");
        let r = records();
        std::fs::write(&p, format!("{}\n\n", r[0])).unwrap();
        let (_, mut f) = start(&p);
        append(&p, b"{not json\n");
        let e = f.poll(Duration::ZERO).unwrap_err();
        assert!(
            matches!(&e, Error::Corrupt { at: Where::Line { line: 3, path, .. }, .. } if *path == p),
            "{e:?}"
        );
        let (_, mut f) = start(&p);
        let q = dir.path().join("new.json");
        std::fs::write(&q, format!("{}\n{}\n", r[0], r[1])).unwrap();
        std::fs::rename(&q, &p).unwrap();
        let e = f.poll(Duration::ZERO).unwrap_err().to_string();
        assert!(e.contains("was replaced while it was followed"), "{e}");
        std::fs::remove_file(&p).unwrap();
        let e = f.poll(Duration::ZERO).unwrap_err().to_string();
        assert!(e.contains("was removed while it was followed"), "{e}");
    }
}
