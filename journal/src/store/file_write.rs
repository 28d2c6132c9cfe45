//! The file backend's writing half (SPEC 2, SPEC 7): the run lock, the
//! appender, `repair` and `rm`. Readers (in [`super::file`]) never come here.
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

use super::file::FileStore;
use super::Appender;
use crate::error::{Error, Result};
use crate::fold::{check_append, Append};
use crate::lines::{self, Tail};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Where an appender's bytes go. The seam that lets a test fail a write,
/// tear one, or fail an fsync, and check what the appender does next.
pub trait Media: Send {
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

/// The real media: a journal opened `O_APPEND`, and its directory.
pub struct OsFile {
    file: File,
    dir: PathBuf,
    /// A new journal has no name until its first record is durable: a run
    /// never exists without its meta record, whatever moment the process
    /// dies at.
    publish: Option<Publish>,
}

/// How a new journal gets its real name.
enum Publish {
    /// Written under a temporary name, linked to the real one, and the
    /// temporary name removed.
    Named { tmp: PathBuf, real: PathBuf },
    /// An unnamed file (`O_TMPFILE`) linked to the real name: nothing is
    /// left behind when the process dies first.
    Unnamed { real: PathBuf },
}

impl Media for OsFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        // link(2) refuses an existing name: two creators cannot both win.
        match self.publish.take() {
            None => {}
            Some(Publish::Named { tmp, real }) => {
                if let Err(e) = std::fs::hard_link(&tmp, &real) {
                    // Lost to another creator: leave nothing behind.
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
                std::fs::remove_file(&tmp)?;
            }
            Some(Publish::Unnamed { real }) => {
                link_unnamed(&self.file, &real)?;
                // The fdatasync before the link wrote the inode with no
                // link; without a journal (ext2, ext4 `^has_journal`) the
                // directory's fsync does not write it again, and a power
                // cut would leave the name on an unlinked inode. One more
                // fsync of the file first (nearly free where a journal
                // commits both together).
                self.file.sync_all()?;
            }
        }
        File::open(&self.dir)?.sync_all()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.file.sync_all()
    }
    fn size(&mut self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }
}

/// The one writer of a run. Holds the run lock until dropped.
pub struct FileAppender {
    run: String,
    path: PathBuf,
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
    pub fn with_media(
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
            return Err(Error::Refused {
                run: self.run.clone(),
                message: format!("record seq {seq} is empty or holds a raw newline; a journal line cannot carry it"),
            });
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
                    return Err(Error::Exists {
                        run: self.run.clone(),
                        location: format!(
                            "directory {}",
                            self.path.parent().unwrap_or(Path::new(".")).display()
                        ),
                    });
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
    pub last_seq: u64,
    pub needs_newline: bool,
}

/// Read a journal with the writer's rule: interior corruption and a torn
/// tail are refused (never appended onto); an unterminated final record is
/// fine, the next append adds its newline.
pub fn scan(run: &str, path: &Path, bytes: &[u8]) -> Result<Scan> {
    match lines::decode_all(bytes) {
        Err(bad) => Err(Error::Corrupt {
            run: run.to_owned(),
            path: path.to_path_buf(),
            line: bad.line,
            offset: bad.offset,
            message: format!(
                "line does not parse: {}; nothing is appended to a corrupt journal",
                bad.error
            ),
        }),
        Ok((_, Tail::Torn { line, offset, .. })) => Err(Error::TornTail {
            run: run.to_owned(),
            path: path.to_path_buf(),
            line,
            offset,
        }),
        Ok((entries, tail)) => Ok(Scan {
            last_seq: entries.last().map_or(0, |e| e.record.seq),
            needs_newline: matches!(tail, Tail::Unterminated { .. }),
        }),
    }
}

/// Give an unnamed file (`O_TMPFILE`) the name `real`, through
/// `/proc/self/fd` (`AT_EMPTY_PATH` would need `CAP_DAC_READ_SEARCH`).
/// `real` is never followed: a name that exists, even a symbolic link, is
/// `EEXIST`.
fn link_unnamed(file: &File, real: &Path) -> io::Result<()> {
    let fd = proc_fd(file);
    let flags = rustix::fs::AtFlags::SYMLINK_FOLLOW;
    match rustix::fs::linkat(rustix::fs::CWD, &fd, rustix::fs::CWD, real, flags) {
        Ok(()) => Ok(()),
        // Either name can be the missing one: say both.
        Err(e) if e == rustix::io::Errno::NOENT => Err(io::Error::other(format!(
            "cannot give the new journal its name: the store directory is gone, or {} is (no /proc?)",
            fd.display()
        ))),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// `/proc/self/fd/<fd>` of an open file.
fn proc_fd(file: &File) -> PathBuf {
    use std::os::unix::io::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

fn nofollow() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    o
}

/// Map an open error: `ELOOP` under `O_NOFOLLOW` means a symbolic link.
fn open_error(path: &Path, e: io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        Error::Symlink {
            path: path.to_path_buf(),
        }
    } else {
        Error::io(path, e)
    }
}

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

    /// The store directory, created 0700 when missing.
    fn ensure_dir(&self) -> Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(self.dir())
            .map_err(|e| Error::io(self.dir(), e))
    }

    pub(crate) fn require(&self, run: &str) -> Result<PathBuf> {
        let path = self.journal_path(run)?;
        match std::fs::symlink_metadata(&path) {
            // A symbolic link is refused by the open (`O_NOFOLLOW`), with
            // its own message.
            Ok(md) if !md.is_file() && !md.file_type().is_symlink() => Err(Error::NotAFile {
                what: super::whole::not_a_journal(md.file_type()),
                path,
            }),
            Ok(_) => Ok(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::NotFound {
                run: run.to_owned(),
                path,
            }),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// A new run: lock, then create the journal (0600, refusing an existing
    /// one). The journal is written as `<id>.creating.tmp` and takes
    /// its real name when its first record is durable (see [`OsFile`]); a
    /// process killed before that leaves only that temporary file, which no
    /// reader takes for a journal.
    pub fn create_appender(&self, run: &str) -> Result<FileAppender> {
        let path = self.journal_path(run)?;
        self.ensure_dir()?;
        let lock = self.lock(run)?;
        let exists = || Error::Exists {
            run: run.to_owned(),
            location: format!("directory {}", self.dir().display()),
        };
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(exists());
        }
        let tmp = self.remove_stale_tmp(run)?;
        let file = nofollow()
            .append(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| open_error(&tmp, e))?;
        let media = OsFile {
            file,
            dir: self.dir().to_path_buf(),
            publish: Some(Publish::Named {
                tmp,
                real: path.clone(),
            }),
        };
        let mut a = FileAppender::with_media(run, &path, Box::new(media), Scan::default(), true);
        a._lock = Some(lock);
        Ok(a)
    }

    /// A new run written whole in one step (migrate's copies): its records
    /// go into an unnamed file in the store directory (`O_TMPFILE`) with
    /// one write, are fsynced, and only then take the journal's name
    /// (`linkat`, which refuses an existing name); then the file (its link
    /// count) and the directory are fsynced. Returns how many records were
    /// stored, as [`Appender::append_batch`] does, whose rules it follows.
    ///
    /// No run lock is taken and no lock file created: the run does not
    /// exist until it is complete, and this writer never touches it again;
    /// whoever opens it later takes the lock. Nothing is left behind when
    /// the process dies before the link. Where there are no unnamed files
    /// (the file system, the kernel, or no `/proc` to link one through),
    /// the run is created under its lock as [`FileStore::create_appender`]
    /// does.
    pub fn create_whole(&self, run: &str, records: Vec<(u64, Vec<u8>)>) -> (u64, Result<()>) {
        let path = match self
            .journal_path(run)
            .and_then(|p| self.ensure_dir().map(|()| p))
        {
            Ok(p) => p,
            Err(e) => return (0, Err(e)),
        };
        if std::fs::symlink_metadata(&path).is_ok() {
            let e = Error::Exists {
                run: run.to_owned(),
                location: format!("directory {}", self.dir().display()),
            };
            return (0, Err(e));
        }
        self.create_whole_in(run, &path, records, self.unnamed_file())
    }

    /// An unnamed file in the store directory that can be linked (through
    /// `/proc`). `None` when there is none, for whatever reason: the file
    /// system, kernel or container has no unnamed files, or the directory
    /// cannot be written (EACCES, EROFS, ENOSPC ...), which the locked path
    /// the caller falls back to then reports with its path.
    fn unnamed_file(&self) -> Option<File> {
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o600)
            .open(self.dir())
            .ok()
            .filter(|f| std::fs::symlink_metadata(proc_fd(f)).is_ok())
    }

    /// [`create_whole`](Self::create_whole) into `unnamed`, or without one
    /// under the run lock.
    fn create_whole_in(
        &self,
        run: &str,
        path: &Path,
        records: Vec<(u64, Vec<u8>)>,
        unnamed: Option<File>,
    ) -> (u64, Result<()>) {
        let Some(file) = unnamed else {
            return match self.create_appender(run) {
                Ok(mut a) => a.append_batch(records),
                Err(e) => (0, Err(e)),
            };
        };
        let media = OsFile {
            file,
            dir: self.dir().to_path_buf(),
            publish: Some(Publish::Unnamed {
                real: path.to_path_buf(),
            }),
        };
        FileAppender::with_media(run, path, Box::new(media), Scan::default(), true)
            .append_batch(records)
    }

    /// The temporary name of a journal being created: `<id>.creating.tmp`.
    /// Under the run lock no creator of this id is at work, so a file there
    /// was left by one that died: before its first record was durable (it
    /// holds nothing worth keeping), or between linking the journal's real
    /// name and removing this one (then it is a second name of the
    /// journal). Either way it is removed. One fixed name per id: no
    /// directory scan, which would make creating n runs cost n^2. Looked up
    /// first: unlinking a missing name still locks the directory.
    fn remove_stale_tmp(&self, run: &str) -> Result<PathBuf> {
        let tmp = self.dir().join(format!("{run}.creating.tmp"));
        if std::fs::symlink_metadata(&tmp).is_ok() {
            match std::fs::remove_file(&tmp) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&tmp, e)),
            }
        }
        Ok(tmp)
    }

    /// An existing run: lock, read what is stored, refuse a torn tail.
    pub fn open_appender(&self, run: &str) -> Result<FileAppender> {
        let path = self.require(run)?;
        let lock = self.lock(run)?;
        self.remove_stale_tmp(run)?;
        let mut file = nofollow()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => Error::NotFound {
                    run: run.to_owned(),
                    path: path.clone(),
                },
                _ => open_error(&path, e),
            })?;
        super::whole::regular(&file).map_err(|e| Error::io(&path, e))?;
        let bytes = super::whole::read(&mut file).map_err(|e| Error::io(&path, e))?;
        let found = scan(run, &path, &bytes)?;
        let media = OsFile {
            file,
            dir: self.dir().to_path_buf(),
            publish: None,
        };
        let mut a = FileAppender::with_media(run, &path, Box::new(media), found, false);
        a._lock = Some(lock);
        Ok(a)
    }

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
        let tmp = self.dir().join(format!("{run}.creating.tmp"));
        if std::fs::symlink_metadata(&tmp).is_ok() {
            self.remove_stale_tmp(run)?;
            removed.push(tmp);
        }
        // `rm` keeps the journal under a second name first (a link: no copy,
        // the same inode, owner and mode); a copy's source was verified in
        // its copy and goes.
        let kept = match last {
            Some(_) => None,
            None => {
                let stamp = crate::time::compact(std::time::SystemTime::now());
                Some(self.first_free(
                    |n| format!("{run}.removed-{stamp}{n}.bak"),
                    |p| std::fs::hard_link(&path, p),
                )?)
            }
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

    /// Fix the tail only (see [`Repair`]); with `dry_run`, say what would be done.
    pub fn repair(&self, run: &str, dry_run: bool) -> Result<Repair> {
        let path = self.require(run)?;
        let _lock = self.lock_unless_dry(run, dry_run)?;
        let mut file = nofollow()
            .read(true)
            .write(!dry_run)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| open_error(&path, e))?;
        super::whole::regular(&file).map_err(|e| Error::io(&path, e))?;
        let bytes = super::whole::read(&mut file).map_err(|e| Error::io(&path, e))?;
        let (entries, tail) = match lines::decode_all(&bytes) {
            Ok(x) => x,
            Err(bad) => {
                let after = lines::split(&bytes).filter(|l| l.line > bad.line).count();
                return Err(Error::Refused {
                    run: run.to_owned(),
                    message: format!(
                        "{} line {} (byte {}) does not parse ({}), and {after} line(s) follow it. \
                         repair only cuts a torn final line: cutting here would throw away the \
                         {after} intact record(s) after it, and dropping just this line would leave \
                         a hole in the sequence that resume could not fold. Nothing was changed. \
                         Run `fisk-admin verify {run}` for the full report and recover the line \
                         from a backup or by hand.",
                        path.display(),
                        bad.line,
                        bad.offset,
                        bad.error,
                    ),
                });
            }
        };
        let records = entries.len();
        match tail {
            Tail::Clean => Ok(Repair::Nothing { records }),
            Tail::Unterminated { line, .. } => {
                if !dry_run {
                    file.write_all(b"\n")
                        .and_then(|()| file.sync_data())
                        .map_err(|e| Error::io(&path, e))?;
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
                    let backup = self.save_backup(run, saved)?;
                    file.set_len(offset)
                        .and_then(|()| file.sync_all())
                        .map_err(|e| Error::io(&path, e))?;
                    Some(backup)
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

    /// Save cut bytes beside the journal: `<id>.torn-<UTC time>.bak`, 0600,
    /// fsynced with its directory entry before the journal is touched. The
    /// name does not end in `.json`, so no reader takes it for a journal.
    fn save_backup(&self, run: &str, bytes: &[u8]) -> Result<PathBuf> {
        crate::id::check(run)?;
        let stamp = crate::time::compact(std::time::SystemTime::now());
        self.first_free(
            |n| format!("{run}.torn-{stamp}{n}.bak"),
            |path| crate::durable::write_new(path, bytes),
        )
    }

    /// The first free name `name("")`, `name("-1")` ... in the store
    /// directory, made by `make` (which must fail with `AlreadyExists` on a
    /// taken name and never replace one), then the directory fsynced.
    pub(crate) fn first_free(
        &self,
        name: impl Fn(&str) -> String,
        make: impl Fn(&Path) -> io::Result<()>,
    ) -> Result<PathBuf> {
        for n in 0..100 {
            let suffix = if n == 0 {
                String::new()
            } else {
                format!("-{n}")
            };
            let path = self.dir().join(name(&suffix));
            match make(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(open_error(&path, e)),
            }
            File::open(self.dir())
                .and_then(|d| d.sync_all())
                .map_err(|e| Error::io(self.dir(), e))?;
            return Ok(path);
        }
        Err(Error::Store {
            context: self.dir().display().to_string(),
            message: format!(
                "no free name like {} for a backup; nothing was changed",
                name("")
            ),
        })
    }
}

/// What `repair` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// The tail is clean.
    Nothing { records: usize },
    /// The final record lacked its `\n`; one was added.
    AddedNewline { line: usize, records: usize },
    /// A torn final line of `len` bytes at `offset` was cut; its bytes are
    /// in `backup` (`None` on a dry run).
    CutTorn {
        line: usize,
        offset: u64,
        len: u64,
        backup: Option<PathBuf>,
        records: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Payload, Record, Terminal};
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

    fn rec(seq: u64) -> Record {
        Record::new(
            seq,
            Payload::Terminal(Terminal {
                reason: "suspended".into(),
                message: format!("r{seq}"),
                ..Terminal::default()
            }),
        )
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

    fn raw(seq: u64) -> (u64, Vec<u8>) {
        (seq, rec(seq).encode().unwrap())
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
            matches!(torn, Err(Error::TornTail { line: 2, .. })),
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

    #[test]
    fn a_stale_temporary_journal_is_replaced_and_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        // What a creator killed before its first fsync leaves behind.
        std::fs::write(dir.path().join("r1.creating.tmp"), b"{\"seq\":1,\"ki").unwrap();
        assert!(store.list().unwrap().runs.is_empty());
        let mut a = store.create_appender("r1").unwrap();
        a.append(&rec(1)).unwrap();
        drop(a);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        let j = store.read("r1").unwrap();
        assert_eq!(j.entries.len(), 1);
        assert_eq!(j.entries[0].raw, rec(1).encode().unwrap());

        // A creator killed between linking the real name and removing the
        // temporary one leaves a second name of the journal: the next
        // writer removes it, and the journal is untouched.
        let tmp = dir.path().join("r1.creating.tmp");
        std::fs::hard_link(dir.path().join("r1.json"), &tmp).unwrap();
        let mut a = store.open_appender("r1").unwrap();
        assert!(!tmp.exists());
        a.append(&rec(2)).unwrap();
        drop(a);
        assert_eq!(store.read("r1").unwrap().entries.len(), 2);
        // And `rm` takes such a name with the journal.
        std::fs::hard_link(dir.path().join("r1.json"), &tmp).unwrap();
        let kept = std::fs::read(dir.path().join("r1.json")).unwrap();
        let (removed, backup) = store.delete("r1").unwrap();
        assert!(removed.contains(&tmp), "{removed:?}");
        // Only the backup `rm` keeps is left, with the journal's bytes.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(backup.as_ref(), Some(&left[0]));
        let name = left[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("r1.removed-") && name.ends_with(".bak"),
            "{name}"
        );
        assert_eq!(std::fs::read(&left[0]).unwrap(), kept);
    }

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

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_run_created_whole_appears_complete_with_no_lock_file_and_never_overwrites() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("runs"));
        let batch: Vec<(u64, Vec<u8>)> = (1..=3).map(raw).collect();
        let (stored, r) = store.create_whole("r1", batch.clone());
        r.unwrap();
        assert_eq!(stored, 3);
        // Only the journal: no lock file, no temporary name (where there
        // are unnamed files; else the run was created under its lock).
        let unnamed = store.unnamed_file().is_some();
        match unnamed {
            true => assert_eq!(names(store.dir()), ["r1.json"]),
            false => assert_eq!(names(store.dir()), ["r1.json", "r1.lock"]),
        }
        let path = store.dir().join("r1.json");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let want: Vec<u8> = batch
            .iter()
            .flat_map(|(_, b)| b.iter().copied().chain([b'\n']))
            .collect();
        assert_eq!(std::fs::read(&path).unwrap(), want);
        // A writer can take the run afterwards and go on.
        let mut a = store.open_appender("r1").unwrap();
        assert_eq!(a.last_seq(), 3);
        a.append(&rec(4)).unwrap();
        drop(a);

        // An existing journal is refused and left as it was.
        let before = std::fs::read(&path).unwrap();
        let (stored, r) = store.create_whole("r1", batch.clone());
        assert_eq!(stored, 0);
        assert!(matches!(r, Err(Error::Exists { .. })), "{r:?}");
        assert_eq!(std::fs::read(&path).unwrap(), before);

        // So is a symbolic link at the name: never written through.
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, store.dir().join("r2.json")).unwrap();
        let (stored, r) = store.create_whole("r2", batch.clone());
        assert_eq!(stored, 0);
        assert!(matches!(r, Err(Error::Exists { .. })), "{r:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");

        // A gap stops the batch: the records before it make the run.
        let gapped = vec![raw(1), raw(2), raw(4)];
        let (stored, r) = store.create_whole("r3", gapped);
        assert_eq!(stored, 2);
        assert!(r.unwrap_err().to_string().contains("gap"));
        assert_eq!(store.read("r3").unwrap().entries.len(), 2);
    }

    #[test]
    fn without_unnamed_files_a_whole_run_is_created_under_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let path = store.journal_path("r1").unwrap();
        let (stored, r) = store.create_whole_in("r1", &path, vec![raw(1), raw(2)], None);
        r.unwrap();
        assert_eq!(stored, 2);
        assert_eq!(names(dir.path()), ["r1.json", "r1.lock"]);
        assert_eq!(store.read("r1").unwrap().entries.len(), 2);
    }

    #[test]
    fn a_creator_that_loses_the_name_to_another_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        // Another creator's journal appears after the existence check.
        let real = dir.path().join("r1.json");
        std::fs::write(&real, b"theirs\n").unwrap();
        let tmp = dir.path().join("r1.creating.tmp");
        let media = |unnamed: bool| match unnamed {
            true => store.unnamed_file().map(|file| OsFile {
                file,
                dir: dir.path().to_path_buf(),
                publish: Some(Publish::Unnamed { real: real.clone() }),
            }),
            false => Some(OsFile {
                file: nofollow().append(true).create_new(true).open(&tmp).unwrap(),
                dir: dir.path().to_path_buf(),
                publish: Some(Publish::Named {
                    tmp: tmp.clone(),
                    real: real.clone(),
                }),
            }),
        };
        // Both ways of publishing a new journal; without unnamed files
        // here, create_whole never uses one, so only the named way can race.
        for unnamed in [true, false] {
            let Some(media) = media(unnamed) else {
                eprintln!("no unnamed files (O_TMPFILE) in {dir:?}: the named way only");
                continue;
            };
            let mut a =
                FileAppender::with_media("r1", &real, Box::new(media), Scan::default(), true);
            let (stored, r) = a.append_batch(vec![raw(1)]);
            assert_eq!(stored, 0);
            assert!(matches!(r, Err(Error::Exists { .. })), "{r:?}");
            assert_eq!(std::fs::read(&real).unwrap(), b"theirs\n");
            assert_eq!(names(dir.path()), ["r1.json"]);
        }
    }

    /// Whether this directory has unnamed files, found without
    /// [`FileStore::unnamed_file`] (so that a broken one cannot hide).
    fn has_unnamed_files(dir: &Path) -> bool {
        let opened = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o600)
            .open(dir);
        opened.is_ok() && Path::new("/proc/self/fd").is_dir()
    }

    #[test]
    fn unnamed_files_are_used_wherever_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        assert_eq!(
            store.unnamed_file().is_some(),
            has_unnamed_files(dir.path())
        );
    }

    #[test]
    fn an_unnamed_file_takes_a_free_name_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let open = || {
            let mut f = store.unnamed_file()?;
            f.write_all(b"new\n").unwrap();
            Some(f)
        };
        let Some(first) = open() else {
            eprintln!("no unnamed files (O_TMPFILE) in {dir:?}: nothing to link");
            return;
        };
        let taken = dir.path().join("taken");
        std::os::unix::fs::symlink(dir.path().join("target"), &taken).unwrap();
        let e = link_unnamed(&first, &taken).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(!dir.path().join("target").exists());
        let free = dir.path().join("free");
        link_unnamed(&open().unwrap(), &free).unwrap();
        assert_eq!(std::fs::read(&free).unwrap(), b"new\n");
    }
}
