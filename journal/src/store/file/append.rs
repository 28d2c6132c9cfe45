//! The file backend's appender (SPEC 2, SPEC 7): the one writer of a run,
//! and the seam under it that lets a test crash it.
//!
//! Durability order of one append: write `line + "\n"` in one call, fsync the
//! file (and, for the first record of a new journal, the directory), and
//! only then advance `last_seq`. A write that fails is cut back to the last
//! durable length so the same seq is appended again; a failed fsync leaves
//! the file in a state we cannot know, so the appender refuses every later
//! append and the run must be reopened (reopening reads what really landed:
//! a record that made it is then a duplicate and skipped).
//!
//! Every file is opened with `O_NOFOLLOW`: the tool never writes through a
//! symbolic link. Journals and backups are created 0600, the directory 0700.

use super::dir::{exists, open_error};
use super::seam::{Dir, DirFile, OsDir, Publish};
use super::{missing_or, FileStore};
use crate::error::{Error, Result, Where};
use crate::fold::{check_append, Append};
use crate::lines::{self, Tail};
use crate::store::Appender;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where an appender's bytes go. The seam that lets a test fail a write,
/// tear one, or fail an fsync, and check what the appender does next.
pub(crate) trait Media: Send {
    /// Append `bytes` at the end. On error some prefix may have landed.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Make everything written so far durable (fsync).
    fn sync(&mut self) -> io::Result<()>;
    /// Make the directory entry of a new journal durable.
    fn sync_dir(&mut self) -> io::Result<()>;
    /// Cut the file back to `len` bytes and make that durable.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
    /// The current length.
    fn size(&mut self) -> io::Result<u64>;
}

/// The media of a journal in a store directory: the journal open to
/// append (an unnamed file, or one under a temporary name, for a new
/// journal), and the directory, both through the [`Dir`] seam.
pub(crate) struct DirMedia {
    pub(super) file: Box<dyn DirFile>,
    pub(super) dir: Arc<dyn Dir>,
    /// A new journal has no name until its first record is durable: a run
    /// never exists without its meta record, whatever moment the process
    /// dies at.
    pub(super) publish: Option<Publish>,
    /// A new journal until it has its name and the directory is fsynced:
    /// what its creator made for it, removed when the media is dropped
    /// before then (the run never came to exist).
    pub(super) debris: Option<Debris>,
}

/// What the creator of a new journal made for it besides the journal.
pub(super) struct Debris {
    /// The journal's real name: while it does not exist, the run does not.
    pub(super) real: PathBuf,
    /// Its temporary name, when it has one (a new file: the creator's).
    pub(super) tmp: Option<PathBuf>,
    /// The lock file, when the creator created it (it is on the real file
    /// system, as every run lock is, and still locked when this is dropped:
    /// [`FileAppender`] drops its media before its lock).
    pub(super) lock: Option<PathBuf>,
}

impl DirMedia {
    /// The media of a new journal, to be named `real` by `publish`; `lock`
    /// is the lock file its creator created, if it did.
    pub(super) fn new_journal(
        file: Box<dyn DirFile>,
        dir: Arc<dyn Dir>,
        publish: Publish,
        lock: Option<PathBuf>,
    ) -> DirMedia {
        let (real, tmp) = match &publish {
            Publish::Named { tmp, real } => (real.clone(), Some(tmp.clone())),
            Publish::Unnamed { real } => (real.clone(), None),
        };
        DirMedia {
            file,
            dir,
            publish: Some(publish),
            debris: Some(Debris { real, tmp, lock }),
        }
    }
}

impl Drop for DirMedia {
    /// A new journal that never got its name leaves nothing: its temporary
    /// name is removed (also when the link made it a second name of a
    /// journal that did get its name but was not fsynced into the
    /// directory), and the lock file its creator made, unless a journal
    /// exists under the real name after all. Errors are ignored: a process
    /// that dies here leaves what the next writer of the id removes.
    fn drop(&mut self) {
        let Some(debris) = self.debris.take() else {
            return;
        };
        if let Some(tmp) = &debris.tmp {
            let _ = super::dir::remove_if_present(&*self.dir, tmp);
        }
        if let Some(lock) = &debris.lock {
            if !self.dir.exists(&debris.real) {
                let _ = self.dir.unlink(lock);
            }
        }
    }
}

impl Media for DirMedia {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        if let Some(publish) = self.publish.take() {
            publish.link(&*self.dir, &mut *self.file)?;
        }
        self.dir.sync_dir()?;
        // Named and durable: the run exists.
        self.debris = None;
        Ok(())
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.file.sync_all()
    }
    fn size(&mut self) -> io::Result<u64> {
        self.file.len()
    }
}

/// The one writer of a run. Holds the run lock until dropped.
pub struct FileAppender {
    run: String,
    path: PathBuf,
    /// Declared before the lock, so dropped while the lock is still held:
    /// a new journal's media removes what its creator made (see
    /// [`Debris`]) under the lock.
    media: Box<dyn Media>,
    /// The flock on `<id>.lock`; the kernel drops it when this closes or the
    /// process dies.
    _lock: Option<File>,
    last_seq: u64,
    /// The final record lacks its `\n`: the next append writes it first.
    needs_newline: bool,
    /// A new journal: the first append also fsyncs the directory.
    sync_dir: bool,
    /// Set when the file's state is unknown (a failed fsync or cut).
    poisoned: Option<String>,
}

impl FileAppender {
    /// An appender over any media (tests use this with a simulated disk).
    pub(crate) fn with_media(
        run: &str,
        path: &Path,
        media: Box<dyn Media>,
        scan: Scan,
        new_journal: bool,
    ) -> FileAppender {
        FileAppender {
            run: run.to_owned(),
            path: path.to_path_buf(),
            media,
            _lock: None,
            last_seq: scan.last_seq,
            needs_newline: scan.needs_newline,
            sync_dir: new_journal,
            poisoned: None,
        }
    }

    /// The appender, holding the run lock `lock` until it is dropped.
    pub(super) fn holding(mut self, lock: File) -> FileAppender {
        self._lock = Some(lock);
        self
    }

    fn io(&self, e: io::Error) -> Error {
        Error::io(&self.path, e)
    }
}

impl Appender for FileAppender {
    fn run(&self) -> &str {
        &self.run
    }

    fn last_seq(&self) -> u64 {
        self.last_seq
    }

    fn append_raw(&mut self, seq: u64, raw: &[u8]) -> Result<bool> {
        match self.admit(seq, raw)? {
            Append::Duplicate => Ok(false),
            _ => {
                let mut line = Vec::with_capacity(raw.len() + 2);
                self.push_line(&mut line, raw);
                self.write_durably(&line, seq)?;
                Ok(true)
            }
        }
    }

    /// Copied records in one write and one fsync (migrate): the same rules
    /// as one `append_raw` after another, and `last_seq` still advances only
    /// once the bytes are durable.
    fn append_batch(&mut self, records: Vec<(u64, Vec<u8>)>) -> (u64, Result<()>) {
        let size = records.iter().map(|(_, r)| r.len() + 1).sum::<usize>() + 1;
        let mut buf = Vec::with_capacity(size);
        let mut stored = 0;
        let mut last = self.last_seq;
        let mut stop = Ok(());
        for (seq, raw) in &records {
            // Checked against the seq the batch has reached so far.
            let admitted = check_append(last, *seq);
            match admitted {
                Append::Duplicate => continue,
                Append::Gap => {
                    stop = Err(self.gap(*seq, last));
                    break;
                }
                Append::Next => {}
            }
            if let Err(e) = self.check_line(*seq, raw) {
                stop = Err(e);
                break;
            }
            self.push_line(&mut buf, raw);
            last = *seq;
            stored += 1;
        }
        if let Err(e) = self.check_poisoned() {
            return (0, Err(e));
        }
        if stored > 0 {
            if let Err(e) = self.write_durably(&buf, last) {
                return (0, Err(e));
            }
        }
        (stored, stop)
    }
}

impl FileAppender {
    fn check_poisoned(&self) -> Result<()> {
        match &self.poisoned {
            None => Ok(()),
            Some(why) => Err(Error::Poisoned {
                run: self.run.clone(),
                path: self.path.clone(),
                why: why.clone(),
            }),
        }
    }

    fn gap(&self, seq: u64, last: u64) -> Error {
        Error::Gap {
            run: self.run.clone(),
            seq,
            last,
        }
    }

    fn check_line(&self, seq: u64, raw: &[u8]) -> Result<()> {
        if raw.contains(&b'\n') || raw.is_empty() {
            // The record's fault, not the store's: other runs go on.
            return Err(Error::refused(
                &self.run,
                format!("record seq {seq} is empty or holds a raw newline; a journal line cannot carry it"),
            ));
        }
        Ok(())
    }

    /// SPEC 2's decision for one record, after the writer's own checks.
    fn admit(&self, seq: u64, raw: &[u8]) -> Result<Append> {
        self.check_poisoned()?;
        let a = check_append(self.last_seq, seq);
        match a {
            Append::Duplicate => {}
            Append::Gap => return Err(self.gap(seq, self.last_seq)),
            Append::Next => self.check_line(seq, raw)?,
        }
        Ok(a)
    }

    /// `raw` and its `\n` onto `buf`, after the newline a final record
    /// lacked when `buf` is the first thing written.
    fn push_line(&self, buf: &mut Vec<u8>, raw: &[u8]) {
        if buf.is_empty() && self.needs_newline {
            buf.push(b'\n');
        }
        buf.extend_from_slice(raw);
        buf.push(b'\n');
    }

    /// Write whole lines, fsync, publish a new journal, then advance to
    /// `last`. A failed write is cut back so the same seqs are appended
    /// again onto a clean line end.
    fn write_durably(&mut self, lines: &[u8], last: u64) -> Result<()> {
        let before = self.media.size().map_err(|e| self.io(e))?;
        if let Err(e) = self.media.write(lines) {
            if let Err(cut) = self.media.truncate(before) {
                self.poisoned = Some(format!("write: {e}; cutting it back: {cut}"));
            }
            return Err(self.io(e));
        }
        if let Err(e) = self.media.sync() {
            self.poisoned = Some(format!("fsync: {e}"));
            return Err(self.io(e));
        }
        if self.sync_dir {
            if let Err(e) = self.media.sync_dir() {
                self.poisoned = Some(format!("publishing the new journal: {e}"));
                if e.kind() == io::ErrorKind::AlreadyExists {
                    let dir = self.path.parent().unwrap_or(Path::new("."));
                    return Err(exists(&self.run, dir));
                }
                return Err(self.io(e));
            }
            self.sync_dir = false;
        }
        self.needs_newline = false;
        self.last_seq = last;
        Ok(())
    }
}

/// What a writer must know about an existing journal before appending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scan {
    /// The last record's seq (0 for an empty journal).
    pub last_seq: u64,
    /// The final record lacks its `\n`: the next append adds it first.
    pub needs_newline: bool,
}

/// Read a journal with the writer's rule: interior corruption and a torn
/// tail are refused (never appended onto); an unterminated final record is
/// fine, the next append adds its newline.
pub fn scan(run: &str, path: &Path, bytes: &[u8]) -> Result<Scan> {
    match lines::decode_all(bytes) {
        Err(bad) => Err(Error::Corrupt {
            run: run.to_owned(),
            at: Where::Line {
                path: path.to_path_buf(),
                line: bad.line,
                offset: bad.offset,
            },
            message: format!(
                "line does not parse: {}; nothing is appended to a corrupt journal",
                bad.error
            ),
        }),
        Ok((_, Tail::Torn { line, offset, .. })) => Err(Error::TornTail {
            run: run.to_owned(),
            at: Where::Line {
                path: path.to_path_buf(),
                line,
                offset,
            },
        }),
        Ok((entries, tail)) => Ok(Scan {
            last_seq: entries.last().map_or(0, |e| e.record.seq),
            needs_newline: matches!(tail, Tail::Unterminated { .. }),
        }),
    }
}

impl FileStore {
    /// An existing run: lock, read what is stored, refuse a torn tail.
    pub fn open_appender(&self, run: &str) -> Result<FileAppender> {
        let path = self.require(run)?;
        let lock = self.lock(run)?;
        self.remove_stale_tmp(&OsDir(self.dir().to_path_buf()), run)?;
        let (media, found) = open_media(OsDir::shared(self.dir()), run, &path)?;
        Ok(FileAppender::with_media(run, &path, Box::new(media), found, false).holding(lock))
    }
}

/// An existing journal at `path`, opened in `dir` to append to, and what
/// a writer must know of it.
pub(super) fn open_media(dir: Arc<dyn Dir>, run: &str, path: &Path) -> Result<(DirMedia, Scan)> {
    let mut file = dir
        .open_append(path)
        .map_err(|e| missing_or(run, path, e, open_error))?;
    let bytes = file.read_regular(path)?;
    let found = scan(run, path, &bytes)?;
    let media = DirMedia {
        file,
        dir,
        publish: None,
        debris: None,
    };
    Ok((media, found))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{raw, rec};
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A simulated disk: `written` is what the page cache holds, `durable`
    /// what survives a crash. Faults are armed per call.
    #[derive(Default)]
    struct Disk {
        written: Vec<u8>,
        durable: Vec<u8>,
        /// Fail the next write after landing this many bytes of it.
        fail_write_after: Option<usize>,
        fail_sync: bool,
        fail_truncate: bool,
    }

    #[derive(Clone, Default)]
    struct Sim(Arc<Mutex<Disk>>);

    impl Media for Sim {
        fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut d = self.0.lock().unwrap();
            if let Some(n) = d.fail_write_after.take() {
                d.written.extend_from_slice(&bytes[..n.min(bytes.len())]);
                return Err(io::Error::other("simulated: no space left on device"));
            }
            d.written.extend_from_slice(bytes);
            Ok(())
        }
        fn sync(&mut self) -> io::Result<()> {
            let mut d = self.0.lock().unwrap();
            if std::mem::take(&mut d.fail_sync) {
                return Err(io::Error::other("simulated: fsync EIO"));
            }
            d.durable = d.written.clone();
            Ok(())
        }
        fn sync_dir(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn truncate(&mut self, len: u64) -> io::Result<()> {
            let mut d = self.0.lock().unwrap();
            if d.fail_truncate {
                return Err(io::Error::other("simulated: truncate failed"));
            }
            d.written.truncate(len as usize);
            d.durable = d.written.clone();
            Ok(())
        }
        fn size(&mut self) -> io::Result<u64> {
            Ok(self.0.lock().unwrap().written.len() as u64)
        }
    }
    fn appender(sim: &Sim) -> FileAppender {
        let bytes = sim.0.lock().unwrap().durable.clone();
        let found = scan("r", Path::new("r.json"), &bytes).unwrap();
        FileAppender::with_media(
            "r",
            Path::new("r.json"),
            Box::new(sim.clone()),
            found,
            false,
        )
    }

    fn lines_of(sim: &Sim) -> Vec<u64> {
        let d = sim.0.lock().unwrap();
        let (entries, tail) = lines::decode_all(&d.written).unwrap();
        assert!(tail.is_clean());
        entries.iter().map(|e| e.record.seq).collect()
    }

    #[test]
    fn a_batch_is_one_durable_write_that_skips_duplicates_and_stops_at_a_gap() {
        let sim = Sim::default();
        let mut a = appender(&sim);
        let (n, r) = a.append_batch(vec![raw(1), raw(2), raw(1), raw(3)]);
        assert_eq!((n, r.is_ok()), (3, true));
        assert_eq!(a.last_seq(), 3);
        assert_eq!(lines_of(&sim), vec![1, 2, 3]);
        // A gap: what precedes it is stored, then the batch stops.
        let (n, r) = a.append_batch(vec![raw(4), raw(6), raw(7)]);
        assert_eq!(n, 1);
        assert!(r.is_err());
        assert_eq!(a.last_seq(), 4);
        assert_eq!(lines_of(&sim), vec![1, 2, 3, 4]);
        // A failed write stores nothing and leaves no partial line.
        sim.0.lock().unwrap().fail_write_after = Some(10);
        let (n, r) = a.append_batch(vec![raw(5), raw(6)]);
        assert_eq!((n, r.is_err()), (0, true));
        assert_eq!(a.last_seq(), 4);
        assert_eq!(lines_of(&sim), vec![1, 2, 3, 4]);
    }

    #[test]
    fn a_failed_write_does_not_advance_last_seq_and_the_same_seq_is_appended_next() {
        let sim = Sim::default();
        let mut a = appender(&sim);
        assert!(a.append(&rec(1)).unwrap());
        sim.0.lock().unwrap().fail_write_after = Some(7);
        assert!(a.append(&rec(2)).is_err());
        assert_eq!(a.last_seq(), 1);
        // The torn bytes were cut back: the next record cannot glue onto them.
        assert_eq!(lines_of(&sim), vec![1]);
        // seq 3 would be a gap: the caller must re-append seq 2.
        assert!(a.append(&rec(3)).is_err());
        assert!(a.append(&rec(2)).unwrap());
        assert_eq!(a.last_seq(), 2);
        assert_eq!(lines_of(&sim), vec![1, 2]);
    }

    #[test]
    fn a_failed_fsync_stops_the_writer_and_a_reopen_sees_what_landed() {
        let sim = Sim::default();
        let mut a = appender(&sim);
        a.append(&rec(1)).unwrap();
        sim.0.lock().unwrap().fail_sync = true;
        assert!(a.append(&rec(2)).is_err());
        assert_eq!(a.last_seq(), 1);
        assert!(a.append(&rec(2)).is_err(), "a poisoned writer must refuse");
        // Here the bytes did land; a new writer reads them and skips seq 2.
        {
            let mut d = sim.0.lock().unwrap();
            d.durable = d.written.clone();
        }
        let mut b = appender(&sim);
        assert_eq!(b.last_seq(), 2);
        assert!(!b.append(&rec(2)).unwrap(), "duplicate is skipped");
        assert!(b.append(&rec(3)).unwrap());
    }

    #[test]
    fn a_crash_mid_write_leaves_a_torn_tail_that_the_writer_refuses_until_repaired() {
        let sim = Sim::default();
        let mut a = appender(&sim);
        a.append(&rec(1)).unwrap();
        // The crash: half the line reaches the disk, the process dies
        // before it can cut it back.
        {
            let mut d = sim.0.lock().unwrap();
            d.fail_truncate = true;
            d.fail_write_after = Some(20);
        }
        assert!(a.append(&rec(2)).is_err());
        assert_eq!(a.last_seq(), 1);
        drop(a);
        let mut d = sim.0.lock().unwrap();
        d.durable = d.written.clone();
        let torn = scan("r", Path::new("r.json"), &d.durable);
        assert!(
            matches!(&torn, Err(e @ Error::TornTail { .. }) if e.place().and_then(Where::line) == Some(2)),
            "{torn:?}"
        );
        // What repair does: cut at the torn line's offset.
        let cut = d.durable.iter().position(|&b| b == b'\n').unwrap() + 1;
        d.durable.truncate(cut);
        d.written.truncate(cut);
        d.fail_truncate = false;
        drop(d);
        let mut b = appender(&sim);
        assert_eq!(b.last_seq(), 1);
        assert!(b.append(&rec(2)).unwrap());
        assert_eq!(lines_of(&sim), vec![1, 2]);
    }

    #[test]
    fn a_missing_final_newline_is_written_before_the_next_record() {
        let sim = Sim::default();
        let line = rec(1).encode().unwrap();
        {
            let mut d = sim.0.lock().unwrap();
            d.written = line.clone();
            d.durable = line;
        }
        let mut a = appender(&sim);
        assert_eq!(a.last_seq(), 1);
        a.append(&rec(2)).unwrap();
        assert_eq!(lines_of(&sim), vec![1, 2]);
    }

    #[test]
    fn duplicates_are_skipped_without_writing() {
        let sim = Sim::default();
        let mut a = appender(&sim);
        a.append(&rec(1)).unwrap();
        let before = sim.0.lock().unwrap().written.clone();
        assert!(!a.append(&rec(1)).unwrap());
        assert_eq!(sim.0.lock().unwrap().written, before);
    }
}
