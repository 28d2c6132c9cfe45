//! The store directory: opens that never follow a symbolic link, the
//! directory created 0700, and the first free name for a backup.

use super::seam::Dir;
use super::FileStore;
use crate::error::{Error, Result, Where};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Map an open error: `ELOOP` under `O_NOFOLLOW` means a symbolic link.
pub(super) fn open_error(path: &Path, e: io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        Error::Symlink {
            path: path.to_path_buf(),
        }
    } else {
        Error::io(path, e)
    }
}

/// The run is in the store directory `dir` already.
pub(super) fn exists(run: &str, dir: &Path) -> Error {
    Error::Exists {
        run: run.to_owned(),
        at: Where::Path(dir.to_path_buf()),
    }
}

/// Remove `path` when it is there: `Ok(true)` when it was. Looked up
/// first: unlinking a missing name still locks the directory.
pub(super) fn remove_if_present(dir: &dyn Dir, path: &Path) -> Result<bool> {
    if !dir.exists(path) {
        return Ok(false);
    }
    match dir.unlink(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Directories a command may create (see [`FileStore::missing_dirs`]).
#[derive(Debug, Default)]
pub struct MissingDirs(Vec<PathBuf>);

impl MissingDirs {
    /// Remove each of the directories that is there and empty, deepest
    /// first, stopping at the first that is not (it holds what was stored,
    /// or what someone else put there meanwhile): what a command that
    /// created the store and then stored nothing in it leaves behind.
    pub fn remove_empty(&self) {
        for d in &self.0 {
            if std::fs::remove_dir(d).is_err() {
                return;
            }
        }
    }
}

impl FileStore {
    /// A new, empty store directory to keep a backup in: `base`, or
    /// `<base>-<N>` for the first free N (below 100), created 0700 with
    /// every missing directory above it (0700 too), each fsynced into its
    /// parent. `Error::NoFreeName` when every name is taken.
    pub(crate) fn new_backup(base: &Path) -> Result<FileStore> {
        let sync = |d: &Path| crate::durable::sync_dir(d).map_err(|e| Error::io(d, e));
        let mkdir = |d: &Path| private_dir().create(d);
        let parent = base.parent().unwrap_or(Path::new("."));
        // Each missing ancestor, top down, fsynced into its own parent.
        let missing: Vec<&Path> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .collect();
        for d in missing.into_iter().rev() {
            match mkdir(d) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(d, e)),
            }
            if let Some(up) = d.parent() {
                sync(up)?;
            }
        }
        let made = first_free_path(
            |suffix| {
                let mut name = base.as_os_str().to_owned();
                name.push(suffix);
                PathBuf::from(name)
            },
            mkdir,
        )
        .map_err(|(dir, e)| Error::io(&dir, e))?;
        let Some(dir) = made else {
            return Err(Error::NoFreeName {
                dir: base.to_path_buf(),
                like: "a backup directory".into(),
            });
        };
        if let Err(e) = sync(parent) {
            let _ = std::fs::remove_dir(&dir);
            return Err(e);
        }
        Ok(FileStore::new(dir))
    }

    /// The directories creating a run here would create: the store
    /// directory and each missing one above it, deepest first (none when
    /// the store directory exists). Taken before a command that may create
    /// the store, so that it can remove them again if it stores nothing.
    pub fn missing_dirs(&self) -> MissingDirs {
        MissingDirs(
            self.dir()
                .ancestors()
                .take_while(|a| !a.as_os_str().is_empty() && std::fs::symlink_metadata(a).is_err())
                .map(Path::to_path_buf)
                .collect(),
        )
    }

    /// The store directory, created 0700 (with every missing parent)
    /// when missing: the one place a store directory is made.
    pub fn ensure_dir(&self) -> Result<()> {
        private_dir()
            .recursive(true)
            .create(self.dir())
            .map_err(|e| Error::io(self.dir(), e))
    }

    /// Keep something of `run` beside its journal, made by `make` (as for
    /// [`first_free`](Self::first_free)) in `dir`, under the first free name
    /// `<id>.<why>-<UTC time>[-N].bak`: a name that does not end in
    /// `.json`, so no reader takes it for a journal.
    pub(super) fn keep_beside(
        &self,
        dir: &dyn Dir,
        run: &str,
        why: &str,
        make: impl Fn(&Path) -> io::Result<()>,
    ) -> Result<PathBuf> {
        crate::id::check(run)?;
        let stamp = crate::time::compact(std::time::SystemTime::now());
        self.first_free(
            dir,
            |n| crate::store::backup::file_name(run, why, &stamp, n),
            make,
        )
    }

    /// A backup `<id>.<why>-*.bak` of `run` beside its journal that `same`
    /// says already holds what is to be kept: what an earlier command,
    /// killed after it kept the run and before it changed it, left. The
    /// same command again takes that one instead of keeping the run a
    /// second time (issue 36.5). Looked up in the directory as it is
    /// (reading changes nothing); `None` when there is none, or the
    /// directory cannot be listed.
    pub(super) fn kept_before(
        &self,
        run: &str,
        why: &str,
        same: impl Fn(&Path) -> bool,
    ) -> Option<PathBuf> {
        let prefix = format!("{run}.{why}-");
        let mut found: Vec<PathBuf> = std::fs::read_dir(self.dir())
            .ok()?
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".bak"))
            })
            .map(|e| e.path())
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file()))
            .collect();
        found.sort();
        found.into_iter().find(|p| same(p))
    }

    /// The first free name `name("")`, `name("-1")` ... in the store
    /// directory, made by `make` (which must fail with `AlreadyExists` on a
    /// taken name and never replace one), then the directory fsynced.
    fn first_free(
        &self,
        dir: &dyn Dir,
        name: impl Fn(&str) -> String,
        make: impl Fn(&Path) -> io::Result<()>,
    ) -> Result<PathBuf> {
        let made = first_free_path(|suffix| self.dir().join(name(suffix)), make)
            .map_err(|(path, e)| open_error(&path, e))?;
        let Some(path) = made else {
            return Err(Error::NoFreeName {
                dir: self.dir().to_path_buf(),
                like: name(""),
            });
        };
        if let Err(e) = dir.sync_dir() {
            // The caller goes no further: the name goes too.
            let _ = dir.unlink(&path);
            return Err(Error::io(self.dir(), e));
        }
        Ok(path)
    }
}

/// Every directory this backend makes is its owner's only (0700).
fn private_dir() -> std::fs::DirBuilder {
    let mut b = std::fs::DirBuilder::new();
    b.mode(0o700);
    b
}

/// The first of `path("")`, `path("-1")` ... `path("-99")` that `make`
/// creates: a name it finds taken fails with `AlreadyExists` and the next
/// is tried. The one "first free name" rule of the backups beside a
/// journal and the backup stores. `None` when every name is taken; the
/// path and error of any other failure.
fn first_free_path(
    path: impl Fn(&str) -> PathBuf,
    make: impl Fn(&Path) -> io::Result<()>,
) -> std::result::Result<Option<PathBuf>, (PathBuf, io::Error)> {
    for n in 0..100 {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let p = path(&suffix);
        match make(&p) {
            Ok(()) => return Ok(Some(p)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err((p, e)),
        }
    }
    Ok(None)
}
