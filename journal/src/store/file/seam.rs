//! The directory-level seam under every file-backend write: [`Dir`] (the
//! store directory: files created, opened for append, linked, unlinked,
//! renamed, and the directory fsynced) and [`DirFile`] (one open file:
//! written, its length set, fsynced, and an unnamed one given a name).
//!
//! [`OsDir`] is the real directory and issues exactly the system calls the
//! backend always has. The tests' `SimDir` (`sim.rs`) keeps durable names
//! apart from live ones and durable bytes apart from written ones, crashes
//! at a chosen fsync, and produces the image a crash leaves: that is how
//! every write order here is checked at every fsync (the crash sweep).
//! Reads and the run lock stay on the real file system: they change
//! nothing a crash could leave half done.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The store directory, as the writers see it. Paths are full paths of
/// entries in the directory.
pub(crate) trait Dir: Send + Sync {
    /// A new file (0600, never through a symbolic link, never replacing a
    /// name: `AlreadyExists`), opened for writing, `O_APPEND` when `append`.
    fn create(&self, path: &Path, append: bool) -> io::Result<Box<dyn DirFile>>;
    /// A new unnamed file in the directory (`O_TMPFILE`) that can be given
    /// a name, or `None` where there are none.
    fn create_unnamed(&self) -> Option<Box<dyn DirFile>>;
    /// An existing journal opened to read it and append to it, never
    /// through a symbolic link.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn DirFile>>;
    /// A second name `to` of the file named `from` (refusing an existing `to`).
    fn link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Remove a name.
    fn unlink(&self, path: &Path) -> io::Result<()>;
    /// Move `from` over `to`, atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Whether anything (a symbolic link included) has the name.
    fn exists(&self, path: &Path) -> bool;
    /// fsync the directory: the names created and removed so far last.
    fn sync_dir(&self) -> io::Result<()>;
}

/// One file open for writing in a [`Dir`].
pub(crate) trait DirFile: Send {
    /// Write all of `bytes` (at the end, for a file opened to append). On
    /// error some prefix may have landed.
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// `fdatasync`.
    fn sync_data(&mut self) -> io::Result<()>;
    /// `fsync`.
    fn sync_all(&mut self) -> io::Result<()>;
    /// Cut (or extend) the file to `len` bytes; not durable until a sync.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// The current length.
    fn len(&mut self) -> io::Result<u64>;
    /// The whole file, after checking it is a regular file; `path` names
    /// it in errors.
    fn read_regular(&mut self, path: &Path) -> crate::Result<Vec<u8>>;
    /// Give this unnamed file (see [`Dir::create_unnamed`]) the name `to`,
    /// refusing an existing one.
    fn link_unnamed(&self, to: &Path) -> io::Result<()>;
    /// The last `max` bytes of the file (all of it when shorter) and the
    /// offset they start at; `path` names it in errors.
    fn read_tail(&mut self, path: &Path, max: u64) -> crate::Result<(u64, Vec<u8>)> {
        let all = self.read_regular(path)?;
        let start = all
            .len()
            .saturating_sub(usize::try_from(max).unwrap_or(usize::MAX));
        Ok((start as u64, all.get(start..).unwrap_or_default().to_vec()))
    }
}

/// The real store directory.
#[derive(Debug, Clone)]
pub(crate) struct OsDir(pub(super) PathBuf);

impl OsDir {
    pub(super) fn shared(dir: &Path) -> Arc<dyn Dir> {
        Arc::new(OsDir(dir.to_path_buf()))
    }
}

/// A real open file.
pub(crate) struct OsHandle(pub(super) File);

impl OsHandle {
    pub(super) fn boxed(file: File) -> Box<dyn DirFile> {
        Box::new(OsHandle(file))
    }
}

impl Dir for OsDir {
    fn create(&self, path: &Path, append: bool) -> io::Result<Box<dyn DirFile>> {
        let mut o = nofollow();
        match append {
            true => o.append(true),
            false => o.write(true),
        };
        o.create_new(true).open(path).map(OsHandle::boxed)
    }

    fn create_unnamed(&self) -> Option<Box<dyn DirFile>> {
        unnamed_file(&self.0).map(OsHandle::boxed)
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn DirFile>> {
        nofollow()
            .read(true)
            .append(true)
            .open(path)
            .map(OsHandle::boxed)
    }

    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }

    fn unlink(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn exists(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok()
    }

    fn sync_dir(&self) -> io::Result<()> {
        crate::durable::sync_dir(&self.0)
    }
}

impl DirFile for OsHandle {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn sync_all(&mut self) -> io::Result<()> {
        self.0.sync_all()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn len(&mut self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn read_regular(&mut self, path: &Path) -> crate::Result<Vec<u8>> {
        super::whole::read_regular(path, &mut self.0)
    }
    fn link_unnamed(&self, to: &Path) -> io::Result<()> {
        link_unnamed(&self.0, to)
    }
    fn read_tail(&mut self, path: &Path, max: u64) -> crate::Result<(u64, Vec<u8>)> {
        use std::os::unix::fs::FileExt;
        let md = self.0.metadata().map_err(|e| crate::Error::io(path, e))?;
        if !md.is_file() {
            return self.read_regular(path).map(|b| (0, b));
        }
        let start = md.len().saturating_sub(max);
        let mut buf = vec![0; usize::try_from(md.len() - start).unwrap_or(0)];
        self.0
            .read_exact_at(&mut buf, start)
            .map_err(|e| crate::Error::io(path, e))?;
        Ok((start, buf))
    }
}

/// A new file (never replacing one, never through a symbolic link)
/// holding `bytes`, 0600, fsynced; the caller fsyncs the directory. The
/// same system calls as [`crate::durable::write_new`]. A file it created
/// and could not fill (a full disk) is removed again: no empty or partial
/// file is left under the name.
pub(super) fn write_new(dir: &dyn Dir, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = dir.create(path, false)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if written.is_err() {
        drop(f);
        let _ = dir.unlink(path);
    }
    written
}

/// An unnamed file in the directory `dir` that can be linked (through
/// `/proc`). `None` when there is none, for whatever reason: the file
/// system, kernel or container has no unnamed files, or the directory
/// cannot be written (EACCES, EROFS, ENOSPC ...), which the locked path
/// the caller falls back to then reports with its path.
pub(super) fn unnamed_file(dir: &Path) -> Option<File> {
    OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)
        .ok()
        .filter(|f| std::fs::symlink_metadata(proc_fd(f)).is_ok())
}

/// Give an unnamed file (`O_TMPFILE`) the name `real`, through
/// `/proc/self/fd` (`AT_EMPTY_PATH` would need `CAP_DAC_READ_SEARCH`).
/// `real` is never followed: a name that exists, even a symbolic link, is
/// `EEXIST`.
pub(super) fn link_unnamed(file: &File, real: &Path) -> io::Result<()> {
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

/// Options for a file that is never opened through a symbolic link, and
/// created 0600.
pub(super) fn nofollow() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    o
}

/// How a new journal gets its real name.
pub(super) enum Publish {
    /// Written under a temporary name, linked to the real one, and the
    /// temporary name removed.
    Named { tmp: PathBuf, real: PathBuf },
    /// An unnamed file (`O_TMPFILE`) linked to the real name: nothing is
    /// left behind when the process dies first.
    Unnamed { real: PathBuf },
}

impl Publish {
    /// Give the new journal, open as `file` in `dir` and durable, its real
    /// name. link(2) refuses an existing name: two creators cannot both win.
    pub(super) fn link(self, dir: &dyn Dir, file: &mut dyn DirFile) -> io::Result<()> {
        match self {
            Publish::Named { tmp, real } => {
                if let Err(e) = dir.link(&tmp, &real) {
                    // Lost to another creator: leave nothing behind.
                    let _ = dir.unlink(&tmp);
                    return Err(e);
                }
                dir.unlink(&tmp)
            }
            Publish::Unnamed { real } => {
                file.link_unnamed(&real)?;
                // The fdatasync before the link wrote the inode with no
                // link; without a journal (ext2, ext4 `^has_journal`) the
                // directory's fsync does not write it again, and a power
                // cut would leave the name on an unlinked inode. One more
                // fsync of the file first (nearly free where a journal
                // commits both together).
                file.sync_all()
            }
        }
    }
}
