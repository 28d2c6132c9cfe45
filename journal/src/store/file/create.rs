//! New runs on the file backend: a journal created under its lock and
//! appended to, or written whole in one step, and how a new journal gets
//! its name only once its first record is durable (named: a temporary
//! name linked to the real one; unnamed: `O_TMPFILE` linked through
//! `/proc`).

use super::append::{DirMedia, FileAppender, Media, Scan};
use super::dir::{exists, open_error, remove_if_present};
use super::seam::{Dir, DirFile, OsDir, Publish};
use super::FileStore;
use crate::error::{Error, Result};
use crate::store::Appender;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl FileStore {
    /// A new run: lock, then create the journal (0600, refusing an existing
    /// one). The journal is written as `<id>.creating.tmp` and takes
    /// its real name when its first record is durable (see `DirMedia`); a
    /// process killed before that leaves only that temporary file, which no
    /// reader takes for a journal.
    ///
    /// A creator that fails before the journal has its name leaves nothing
    /// of the run: the temporary file, and the lock file when this created
    /// it, are removed (under the lock) when the appender is dropped. An
    /// existing run is refused before anything is created.
    pub(crate) fn create_appender(&self, run: &str) -> Result<FileAppender> {
        let path = self.journal_path(run)?;
        let os = OsDir::shared(self.dir());
        if os.exists(&path) {
            return Err(exists(run, self.dir()));
        }
        self.ensure_dir()?;
        let (lock, created) = self.lock_noting(run)?;
        let lock_path = self.lock_path(run)?;
        let made = created.then_some(lock_path);
        let media = match os.exists(&path) {
            true => Err(exists(run, self.dir())),
            false => self.new_media(os.clone(), run, &path, made.clone()),
        };
        match media {
            Ok(media) => {
                Ok(
                    FileAppender::with_media(run, &path, Box::new(media), Scan::default(), true)
                        .holding(lock),
                )
            }
            Err(e) => {
                // The lock file is the run's when its journal exists.
                if let (Some(made), false) = (made, os.exists(&path)) {
                    let _ = std::fs::remove_file(made);
                }
                Err(e)
            }
        }
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
    pub(crate) fn create_whole(
        &self,
        run: &str,
        records: Vec<(u64, Vec<u8>)>,
    ) -> (u64, Result<()>) {
        let path = match self
            .journal_path(run)
            .and_then(|p| self.ensure_dir().map(|()| p))
        {
            Ok(p) => p,
            Err(e) => return (0, Err(e)),
        };
        let os = OsDir::shared(self.dir());
        if os.exists(&path) {
            return (0, Err(exists(run, self.dir())));
        }
        let unnamed = os.create_unnamed();
        self.create_whole_in(os, run, &path, records, unnamed)
    }

    /// A new run whose journal holds exactly `bytes`: what another store
    /// held, kept byte for byte (a backup), so no record rule applies (an
    /// empty or damaged journal is written as it is). Written in one step
    /// and named only once durable, as [`create_whole`](Self::create_whole)
    /// names a journal: an unnamed file linked to `<id>.json`, or where
    /// there are none, `<id>.creating.tmp` (a new file: never another
    /// creator's) linked to it; then the directory fsynced. No run lock is
    /// taken and no lock file created. An existing journal is refused;
    /// nothing is left behind on failure. Returns the journal's path.
    pub(crate) fn write_whole(&self, run: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.journal_path(run)?;
        self.ensure_dir()?;
        let os = OsDir::shared(self.dir());
        if os.exists(&path) {
            return Err(exists(run, self.dir()));
        }
        let (file, publish) = match os.create_unnamed() {
            Some(file) => (file, Publish::Unnamed { real: path.clone() }),
            None => {
                let tmp = self.dir().join(format!("{run}.creating.tmp"));
                let file = os.create(&tmp, false).map_err(|e| open_error(&tmp, e))?;
                let publish = Publish::Named {
                    tmp,
                    real: path.clone(),
                };
                (file, publish)
            }
        };
        // Dropped on failure: the temporary name goes with it.
        let mut media = DirMedia::new_journal(file, os, publish, None);
        let written = media
            .write(bytes)
            .and_then(|()| media.sync())
            .and_then(|()| media.sync_dir());
        match written {
            Ok(()) => Ok(path),
            Err(e) => match e.kind() {
                io::ErrorKind::AlreadyExists => Err(exists(run, self.dir())),
                _ => Err(Error::io(&path, e)),
            },
        }
    }

    /// An unnamed file in the store directory that can be linked (through
    /// `/proc`), as [`Dir::create_unnamed`] makes one.
    #[cfg(test)]
    fn unnamed_file(&self) -> Option<std::fs::File> {
        super::seam::unnamed_file(self.dir())
    }

    /// A new journal's media in `dir` (the run's lock held, its name
    /// checked free): the journal open under its temporary name, to be
    /// linked to `path` once its first record is durable. `lock` is the
    /// lock file when its creator created it: removed with the temporary
    /// name if the journal never gets its name.
    pub(super) fn new_media(
        &self,
        dir: Arc<dyn Dir>,
        run: &str,
        path: &Path,
        lock: Option<PathBuf>,
    ) -> Result<DirMedia> {
        let (tmp, _) = self.remove_stale_tmp(&*dir, run)?;
        let file = dir.create(&tmp, true).map_err(|e| open_error(&tmp, e))?;
        let publish = Publish::Named {
            tmp,
            real: path.to_path_buf(),
        };
        Ok(DirMedia::new_journal(file, dir, publish, lock))
    }

    /// [`create_whole`](Self::create_whole) into `unnamed`, or without one
    /// under the run lock.
    pub(super) fn create_whole_in(
        &self,
        dir: Arc<dyn Dir>,
        run: &str,
        path: &Path,
        records: Vec<(u64, Vec<u8>)>,
        unnamed: Option<Box<dyn DirFile>>,
    ) -> (u64, Result<()>) {
        let Some(file) = unnamed else {
            return match self.create_appender(run) {
                Ok(mut a) => a.append_batch(records),
                Err(e) => (0, Err(e)),
            };
        };
        let publish = Publish::Unnamed {
            real: path.to_path_buf(),
        };
        let media = DirMedia::new_journal(file, dir, publish, None);
        FileAppender::with_media(run, path, Box::new(media), Scan::default(), true)
            .append_batch(records)
    }

    /// The temporary name of a journal being created: `<id>.creating.tmp`.
    /// Under the run lock no creator of this id is at work, so a file there
    /// was left by one that died: before its first record was durable (it
    /// holds nothing worth keeping), or between linking the journal's real
    /// name and removing this one (then it is a second name of the
    /// journal). Either way it is removed. One fixed name per id: no
    /// directory scan, which would make creating n runs cost n^2.
    /// Returns the name, and whether a file was there.
    pub(super) fn remove_stale_tmp(&self, dir: &dyn Dir, run: &str) -> Result<(PathBuf, bool)> {
        let tmp = self.dir().join(format!("{run}.creating.tmp"));
        let was_there = remove_if_present(dir, &tmp)?;
        Ok((tmp, was_there))
    }
}

#[cfg(test)]
mod tests {
    use super::super::seam::nofollow;
    use super::super::seam::{link_unnamed, OsHandle};
    use super::super::testing::{names, raw, rec};
    use super::*;
    use crate::error::Error;
    use std::fs::OpenOptions;
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;

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
        let (stored, r) = store.create_whole_in(
            OsDir::shared(dir.path()),
            "r1",
            &path,
            vec![raw(1), raw(2)],
            None,
        );
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
            true => store.unnamed_file().map(|file| {
                let publish = Publish::Unnamed { real: real.clone() };
                DirMedia::new_journal(
                    OsHandle::boxed(file),
                    OsDir::shared(dir.path()),
                    publish,
                    None,
                )
            }),
            false => {
                let file = nofollow().append(true).create_new(true).open(&tmp).unwrap();
                let publish = Publish::Named {
                    tmp: tmp.clone(),
                    real: real.clone(),
                };
                let dir = OsDir::shared(dir.path());
                Some(DirMedia::new_journal(
                    OsHandle::boxed(file),
                    dir,
                    publish,
                    None,
                ))
            }
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

    #[test]
    fn a_journal_written_whole_from_bytes_keeps_them_exactly_and_takes_no_lock() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("kept"));
        // No record rule: a body with a raw newline, a gap, no final
        // newline; and an empty journal.
        let damaged = b"{\"seq\":1}\n\n{\"seq\":3}\nnot json";
        let path = store.write_whole("r1", damaged).unwrap();
        assert_eq!(path, store.dir().join("r1.json"));
        assert_eq!(std::fs::read(&path).unwrap(), damaged);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let empty = store.write_whole("r2", b"").unwrap();
        assert_eq!(std::fs::read(empty).unwrap(), b"");
        assert_eq!(names(store.dir()), ["r1.json", "r2.json"]);
        // An existing journal is refused and left as it was.
        let e = store.write_whole("r1", b"other\n").unwrap_err();
        assert!(matches!(e, Error::Exists { .. }), "{e:?}");
        assert_eq!(std::fs::read(&path).unwrap(), damaged);
        assert!(store.write_whole("../x", b"").is_err());
    }

    #[test]
    fn a_backup_store_takes_the_first_free_name_and_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("a/b/run-1");
        let first = FileStore::new_backup(&base).unwrap();
        assert_eq!(first.dir(), base);
        for d in [dir.path().join("a"), dir.path().join("a/b"), base.clone()] {
            let mode = std::fs::metadata(&d).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{d:?}");
        }
        let second = FileStore::new_backup(&base).unwrap();
        assert_eq!(second.dir(), dir.path().join("a/b/run-1-1"));
        assert!(names(second.dir()).is_empty());
        for n in 2..100 {
            std::fs::create_dir(dir.path().join(format!("a/b/run-1-{n}"))).unwrap();
        }
        let e = FileStore::new_backup(&base).unwrap_err();
        assert!(matches!(e, Error::NoFreeName { .. }), "{e:?}");
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
