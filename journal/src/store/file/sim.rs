//! The crash sweep (redb's pattern): a simulated store directory behind
//! the [`Dir`] seam, and every file-backend write run once to count its
//! fsyncs, then again crashing at each fsync in turn, the image a crash
//! leaves rebuilt and read back with the reader's rule.
//!
//! The simulation, `SimDir`: a file's bytes are durable only once that
//! file is fsynced; a name's creation, link, unlink or rename only once the
//! directory is. A crash may also have made any prefix of the name changes
//! since the directory's last fsync durable (metadata is journalled in
//! order), and any prefix of the bytes written to a file since its last
//! fsync (none, half or all of them are tried): every such image is
//! checked. The fsync the crash is armed at
//! fails and so does every call after it, as if the process were dead.

use super::seam::{Dir, DirFile};
use super::testing::{raw, rec};
use super::FileStore;
use crate::lines::{self, Tail};
use crate::store::Appender;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Default, Clone)]
struct Inode {
    written: Vec<u8>,
    durable: Vec<u8>,
}

/// One name change: names set (to an inode) or removed, as one step.
type Change = Vec<(String, Option<usize>)>;

#[derive(Default)]
struct State {
    inodes: Vec<Inode>,
    names: BTreeMap<String, usize>,
    durable: BTreeMap<String, usize>,
    /// Name changes since the directory's last fsync, in order.
    pending: Vec<Change>,
    syncs: usize,
    crash_at: Option<usize>,
    crashed: bool,
    /// Calls that change something or sync it, so far.
    calls: usize,
    /// Fail this call (counted from 0) as a full disk does, once; the
    /// process lives on (the fault sweep).
    fail_at: Option<usize>,
}

fn dead() -> io::Error {
    io::Error::other("simulated crash: the process is dead")
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

impl State {
    fn alive(&self) -> io::Result<()> {
        match self.crashed {
            true => Err(dead()),
            false => Ok(()),
        }
    }

    /// One call that changes something or syncs it: fails, as on a full
    /// disk, when it is the one the fault sweep armed.
    fn call(&mut self) -> io::Result<()> {
        self.alive()?;
        let n = self.calls;
        self.calls += 1;
        match self.fail_at == Some(n) {
            true => Err(io::ErrorKind::StorageFull.into()),
            false => Ok(()),
        }
    }

    /// One fsync: fails, and kills the process, when it is the armed one.
    fn sync(&mut self) -> io::Result<()> {
        self.call()?;
        if self.crash_at == Some(self.syncs) {
            self.crashed = true;
            return Err(dead());
        }
        self.syncs += 1;
        Ok(())
    }

    fn change(&mut self, change: Change) {
        for (n, to) in &change {
            match to {
                Some(i) => self.names.insert(n.clone(), *i),
                None => self.names.remove(n),
            };
        }
        self.pending.push(change);
    }

    fn new_inode(&mut self) -> usize {
        self.inodes.push(Inode::default());
        self.inodes.len() - 1
    }

    fn free(&self, to: &str) -> io::Result<()> {
        match self.names.contains_key(to) {
            true => Err(io::ErrorKind::AlreadyExists.into()),
            false => Ok(()),
        }
    }

    fn named(&self, path: &Path) -> io::Result<usize> {
        self.names
            .get(&name(path))
            .copied()
            .ok_or_else(|| io::ErrorKind::NotFound.into())
    }
}

/// The simulated store directory.
#[derive(Clone, Default)]
pub(super) struct SimDir(Arc<Mutex<State>>);

struct SimFile {
    state: Arc<Mutex<State>>,
    inode: usize,
}

/// What a crash leaves: durable names and their durable bytes.
pub(super) type Image = BTreeMap<String, Vec<u8>>;

impl SimDir {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap()
    }

    /// A durable file named `n` holding `bytes`.
    pub(super) fn put(&self, n: &str, bytes: &[u8]) {
        let mut s = self.state();
        let i = s.new_inode();
        s.inodes[i] = Inode {
            written: bytes.to_vec(),
            durable: bytes.to_vec(),
        };
        s.names.insert(n.into(), i);
        s.durable.insert(n.into(), i);
    }

    /// A durable second name `to` of the file named `from`.
    fn put_link(&self, from: &str, to: &str) {
        let mut s = self.state();
        let i = s.names[from];
        s.names.insert(to.into(), i);
        s.durable.insert(to.into(), i);
    }

    /// What the directory holds now, for a process that lives on: the live
    /// names and everything written to them.
    fn live(&self) -> Image {
        let s = self.state();
        s.names
            .iter()
            .map(|(n, &i)| (n.clone(), s.inodes[i].written.clone()))
            .collect()
    }

    /// Every image a crash now can leave: for each prefix of the pending
    /// name changes, each file's durable bytes, or (a file written past its
    /// durable bytes) those plus half, or all, of what was written since.
    fn images(&self) -> Vec<Image> {
        let s = self.state();
        let mut names = s.durable.clone();
        let image = |names: &BTreeMap<String, usize>, landed: fn(usize) -> usize| {
            names
                .iter()
                .map(|(n, &i)| {
                    let Inode { written, durable } = &s.inodes[i];
                    let bytes = match written.starts_with(durable) {
                        true => written[..durable.len() + landed(written.len() - durable.len())]
                            .to_vec(),
                        false => durable.clone(),
                    };
                    (n.clone(), bytes)
                })
                .collect::<Image>()
        };
        let lands: [fn(usize) -> usize; 3] = [|_| 0, |n| n / 2, |n| n];
        let mut out = std::collections::BTreeSet::new();
        out.extend(lands.iter().map(|&l| image(&names, l)));
        for change in &s.pending {
            for (n, to) in change {
                match to {
                    Some(i) => names.insert(n.clone(), *i),
                    None => names.remove(n),
                };
            }
            out.extend(lands.iter().map(|&l| image(&names, l)));
        }
        out.into_iter().collect()
    }
}

impl Dir for SimDir {
    fn create(&self, path: &Path, _append: bool) -> io::Result<Box<dyn DirFile>> {
        let mut s = self.state();
        s.call()?;
        s.free(&name(path))?;
        let inode = s.new_inode();
        s.change(vec![(name(path), Some(inode))]);
        Ok(Box::new(SimFile {
            state: self.0.clone(),
            inode,
        }))
    }
    fn create_unnamed(&self) -> Option<Box<dyn DirFile>> {
        let mut s = self.state();
        s.alive().ok()?;
        let inode = s.new_inode();
        Some(Box::new(SimFile {
            state: self.0.clone(),
            inode,
        }))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn DirFile>> {
        let s = self.state();
        s.alive()?;
        let inode = s.named(path)?;
        Ok(Box::new(SimFile {
            state: self.0.clone(),
            inode,
        }))
    }
    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state();
        s.call()?;
        let i = s.named(from)?;
        s.free(&name(to))?;
        s.change(vec![(name(to), Some(i))]);
        Ok(())
    }
    fn unlink(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state();
        s.call()?;
        s.named(path)?;
        s.change(vec![(name(path), None)]);
        Ok(())
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state();
        s.call()?;
        let i = s.named(from)?;
        s.change(vec![(name(to), Some(i)), (name(from), None)]);
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        self.state().names.contains_key(&name(path))
    }
    fn sync_dir(&self) -> io::Result<()> {
        let mut s = self.state();
        s.sync()?;
        s.durable = s.names.clone();
        s.pending.clear();
        Ok(())
    }
}

impl SimFile {
    fn with<T>(&self, f: impl FnOnce(&mut Inode) -> T) -> io::Result<T> {
        let mut s = self.state.lock().unwrap();
        s.alive()?;
        Ok(f(&mut s.inodes[self.inode]))
    }
    /// [`with`](Self::with) for a call that changes the file.
    fn change_with(&self, f: impl FnOnce(&mut Inode)) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        s.call()?;
        f(&mut s.inodes[self.inode]);
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        s.sync()?;
        let inode = &mut s.inodes[self.inode];
        inode.durable = inode.written.clone();
        Ok(())
    }
}

impl DirFile for SimFile {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.change_with(|i| i.written.extend_from_slice(bytes))
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.sync()
    }
    fn sync_all(&mut self) -> io::Result<()> {
        self.sync()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.change_with(|i| i.written.resize(len as usize, 0))
    }
    fn len(&mut self) -> io::Result<u64> {
        self.with(|i| i.written.len() as u64)
    }
    fn read_regular(&mut self, path: &Path) -> crate::Result<Vec<u8>> {
        self.with(|i| i.written.clone())
            .map_err(|e| crate::Error::io(path, e))
    }
    fn link_unnamed(&self, to: &Path) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        s.call()?;
        s.free(&name(to))?;
        s.change(vec![(name(to), Some(self.inode))]);
        Ok(())
    }
}

/// The store the sweep's operations run in: its directory is only a name.
pub(super) fn store() -> FileStore {
    FileStore::new("/sim")
}

/// Create run `r` in `sim` through the appender's media and append seqs 1
/// and 2: whether both landed.
fn create_two(sim: &SimDir) -> bool {
    let p = path("r.json");
    let Ok(media) = store().new_media(Arc::new(sim.clone()), "r", &p, None) else {
        return false;
    };
    let scan = super::Scan::default();
    let mut a = super::FileAppender::with_media("r", &p, Box::new(media), scan, true);
    a.append(&rec(1)).is_ok() && a.append(&rec(2)).is_ok()
}

pub(super) fn path(n: &str) -> std::path::PathBuf {
    store().dir().join(n)
}

pub(super) fn lines_of(records: &[u64]) -> Vec<u8> {
    records
        .iter()
        .flat_map(|&s| raw(s).1.into_iter().chain([b'\n']))
        .collect()
}

/// The seqs of a journal read back with the reader's rule, which must
/// find no interior damage; its tail is returned too.
pub(super) fn read_back(bytes: &[u8]) -> (Vec<u64>, Tail) {
    let (entries, tail) = lines::decode_all(bytes).expect("no interior damage after a crash");
    (entries.iter().map(|e| e.record.seq).collect(), tail)
}

/// Run `op` (which says whether it succeeded) on a directory `setup`
/// made, once to count its fsyncs, then crashing at each; `check` sees
/// every image, and whether the operation ran to its end. Returns the
/// fsync count and how many images were checked.
pub(super) fn sweep(
    setup: impl Fn(&SimDir),
    op: impl Fn(&SimDir) -> bool,
    check: impl Fn(&Image, bool),
) -> (usize, usize) {
    let fresh = || {
        let sim = SimDir::default();
        setup(&sim);
        sim
    };
    let sim = fresh();
    assert!(op(&sim), "the operation fails with no crash");
    let count = sim.state().syncs;
    let mut checked = 0;
    for k in 0..=count {
        let sim = fresh();
        sim.state().crash_at = Some(k);
        let ok = op(&sim);
        let crashed = sim.state().crashed;
        assert_eq!(ok, !crashed, "crash at fsync {k} of {count}");
        assert_eq!(crashed, k < count);
        for image in sim.images() {
            check(&image, ok);
            checked += 1;
        }
    }
    (count, checked)
}

/// Whether `seqs` are `before` followed by a prefix of `new`.
fn old_plus_prefix(seqs: &[u64], before: &[u64], new: &[u64]) -> bool {
    seqs.len() >= before.len()
        && seqs[..before.len()] == *before
        && new.starts_with(&seqs[before.len()..])
}

fn journals(image: &Image) -> Vec<&String> {
    image.keys().filter(|n| n.ends_with(".json")).collect()
}

#[test]
fn an_append_crashed_at_any_fsync_leaves_the_old_records_and_a_prefix_of_the_new() {
    let (count, checked) = sweep(
        |sim| sim.put("r.json", &lines_of(&[1])),
        |sim| {
            let p = path("r.json");
            let Ok((media, scan)) = super::append::open_media(Arc::new(sim.clone()), "r", &p)
            else {
                return false;
            };
            let mut a = super::FileAppender::with_media("r", &p, Box::new(media), scan, false);
            a.append(&rec(2)).is_ok() && a.append(&rec(3)).is_ok()
        },
        |image, done| {
            let (seqs, tail) = read_back(&image["r.json"]);
            assert!(!matches!(tail, Tail::Torn { .. }) || !done);
            assert!(old_plus_prefix(&seqs, &[1], &[2, 3]), "{seqs:?}");
            assert!(!done || seqs == [1, 2, 3]);
            // The writer's own rule takes it up again, or (a torn tail)
            // asks for `repair` first.
            let scan = super::append::scan("r", Path::new("r.json"), &image["r.json"]);
            match tail {
                Tail::Torn { .. } => assert!(matches!(scan, Err(crate::Error::TornTail { .. }))),
                _ => assert!(scan.is_ok(), "{scan:?}"),
            }
        },
    );
    assert_eq!((count, checked), (2, 7));
}

#[test]
fn a_created_journal_crashed_at_any_fsync_is_absent_or_begins_with_its_meta_record() {
    let (count, checked) = sweep(
        // A temporary journal left by a creator that died.
        |sim| sim.put("r.creating.tmp", b"{\"seq\":1,\"ki"),
        create_two,
        |image, done| {
            assert!(journals(image).len() <= 1, "{image:?}");
            match image.get("r.json") {
                None => assert!(!done, "{image:?}"),
                Some(bytes) => {
                    // At most a torn tail: the second record's, never the
                    // meta record's.
                    let (seqs, tail) = read_back(bytes);
                    assert!(tail.is_clean() || !done);
                    assert!(!seqs.is_empty() && old_plus_prefix(&seqs, &[], &[1, 2]));
                    assert!(!done || seqs == [1, 2]);
                }
            }
            if done {
                assert_eq!(image.keys().collect::<Vec<_>>(), ["r.json"]);
            }
        },
    );
    // The first record's fdatasync, the directory's, the second record's.
    assert_eq!(count, 3);
    assert!(checked > count + 1, "{checked}");
}

#[test]
fn a_run_created_whole_crashed_at_any_fsync_is_absent_or_complete() {
    let all = [1, 2, 3];
    let (count, _) = sweep(
        |_| {},
        |sim| {
            let p = path("r.json");
            let records = all.iter().map(|&s| raw(s)).collect();
            let unnamed = sim.create_unnamed();
            assert!(unnamed.is_some());
            let (stored, r) =
                store().create_whole_in(Arc::new(sim.clone()), "r", &p, records, unnamed);
            r.is_ok() && stored == 3
        },
        |image, done| {
            match image.get("r.json") {
                None => assert!(!done),
                Some(bytes) => assert_eq!(read_back(bytes), (all.to_vec(), Tail::Clean)),
            }
            // Nothing else is ever left.
            assert!(image.keys().all(|n| n == "r.json"), "{image:?}");
        },
    );
    // The data, the file again after the link, the directory.
    assert_eq!(count, 3);
}

#[test]
fn a_repair_crashed_at_any_fsync_leaves_the_old_journal_or_the_cut_one_with_its_bytes_kept() {
    let mut old = lines_of(&[1, 2]);
    let offset = old.len();
    old.extend_from_slice(b"{\"seq\":3,\"ki");
    let torn = old[offset..].to_vec();
    let (count, _) = sweep(
        |sim| sim.put("r.json", &old),
        |sim| {
            let p = path("r.json");
            let Ok(mut file) = sim.open_append(&p) else {
                return false;
            };
            let Ok(bytes) = file.read_regular(&p) else {
                return false;
            };
            let Ok((_, Tail::Torn { offset, .. })) = lines::decode_all(&bytes) else {
                panic!("the journal is torn");
            };
            let saved = &bytes[offset as usize..];
            store()
                .cut_torn(sim, &mut *file, "r", &p, saved, offset)
                .is_ok()
        },
        |image, done| {
            let bytes = &image["r.json"];
            let backups: Vec<_> = image.iter().filter(|(n, _)| n.ends_with(".bak")).collect();
            assert!(backups.len() <= 1);
            if *bytes == old {
                assert!(!done);
            } else {
                assert_eq!(*bytes, old[..offset]);
                assert_eq!(read_back(bytes), (vec![1, 2], Tail::Clean));
                // Cut only once the cut bytes are kept.
                let (n, kept) = backups[0];
                assert!(n.starts_with("r.torn-"), "{n}");
                assert_eq!(*kept, torn);
            }
        },
    );
    // The backup, its directory entry, the cut.
    assert_eq!(count, 3);

    let (count, _) = sweep(
        |sim| sim.put("r.json", &raw(1).1),
        |sim| {
            let p = path("r.json");
            sim.open_append(&p)
                .map_err(|e| crate::Error::io(&p, e))
                .and_then(|mut f| super::repair::add_newline(&mut *f, &p))
                .is_ok()
        },
        |image, done| {
            let (seqs, tail) = read_back(&image["r.json"]);
            assert_eq!(seqs, [1]);
            // Unterminated, or with its newline; always once done.
            assert!(!done || tail.is_clean(), "{tail:?}");
        },
    );
    assert_eq!(count, 1);
}

#[test]
fn an_rm_crashed_at_any_fsync_leaves_the_run_or_its_backup_never_neither() {
    let journal = lines_of(&[1, 2]);
    for keep in [true, false] {
        let (count, _) = sweep(
            |sim| {
                sim.put("r.json", &journal);
                sim.put("r.lock", b"");
                // A second name left by a creator that died.
                sim.put_link("r.json", "r.creating.tmp");
            },
            |sim| {
                let (p, lock) = (path("r.json"), path("r.lock"));
                store().unlink_run(sim, "r", &p, &lock, keep, ()).is_ok()
            },
            |image, done| {
                let backups: Vec<_> = image
                    .iter()
                    .filter(|(n, _)| n.starts_with("r.removed-") && n.ends_with(".bak"))
                    .collect();
                if let Some(bytes) = image.get("r.json") {
                    assert_eq!(*bytes, journal);
                } else if keep {
                    assert_eq!(backups.len(), 1, "neither run nor backup: {image:?}");
                    assert_eq!(*backups[0].1, journal);
                }
                if done {
                    assert!(!image.contains_key("r.json"));
                    assert!(!image.contains_key("r.lock"));
                    assert!(!image.contains_key("r.creating.tmp"));
                    assert_eq!(backups.len(), usize::from(keep));
                }
            },
        );
        // The backup's directory entry (rm only), then the unlinks'.
        assert_eq!(count, 1 + usize::from(keep));
    }
}

#[test]
fn an_upgrade_crashed_at_any_fsync_leaves_the_old_journal_or_the_new_one_and_the_original_kept() {
    let meta = |v: u8| {
        format!(
            r#"{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{{"version":{v},"run_id":"r","created":"2026-09-22T09:14:03Z","fingerprint":{{"provider":"p","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":1,"max_iterations":1}},"prompt":"hi"}}}}"#
        )
    };
    let mut old = format!("{}\n", meta(3)).into_bytes();
    old.extend_from_slice(&lines_of(&[2]));
    let crate::upgrade::Plan::Upgrade { meta: new_meta, .. } =
        crate::upgrade::plan("r", &old).unwrap()
    else {
        panic!("a version-3 journal is upgraded");
    };
    let new = super::upgrade::upgraded(&old, &new_meta);
    assert_ne!(new, old);
    let (count, _) = sweep(
        |sim| {
            sim.put("r.upgrading.tmp", b"half");
            sim.put("r.json", &old);
        },
        |sim| {
            store()
                .replace_journal(sim, "r", &path("r.json"), &new, "v3")
                .is_ok()
        },
        |image, done| {
            let bytes = image.get("r.json").expect("never neither journal");
            assert_eq!(read_back(bytes).1, Tail::Clean);
            let backups: Vec<_> = image
                .iter()
                .filter(|(n, _)| n.starts_with("r.v3-") && n.ends_with(".bak"))
                .collect();
            assert!(backups.len() <= 1);
            if let Some((_, kept)) = backups.first() {
                assert_eq!(**kept, old, "the backup holds the original");
            }
            if *bytes == old {
                assert!(!done);
            } else {
                assert_eq!(*bytes, new);
                assert_eq!(backups.len(), 1, "upgraded with no backup: {image:?}");
            }
        },
    );
    // The backup's directory entry, the new file, the rename's entry.
    assert_eq!(count, 3);
}

/// The fault sweep (issue 18, no debris): `op` on a directory `setup`
/// made, once to count its calls, then failing each call in turn as a full
/// disk does, the process living on. `check` sees what the directory then
/// holds (its live names and bytes), what it held before, and whether the
/// operation said it succeeded. Returns the number of calls.
fn fault_sweep(
    setup: impl Fn(&SimDir),
    op: impl Fn(&SimDir) -> bool,
    check: impl Fn(&Image, &Image, bool),
) -> usize {
    let fresh = || {
        let sim = SimDir::default();
        setup(&sim);
        sim
    };
    let sim = fresh();
    let before = sim.live();
    let calls_before = sim.state().calls;
    assert!(op(&sim), "the operation fails with no fault");
    let count = sim.state().calls - calls_before;
    for k in 0..count {
        let sim = fresh();
        sim.state().fail_at = Some(calls_before + k);
        let ok = op(&sim);
        check(&sim.live(), &before, ok);
    }
    count
}

/// `image` without the names `skip`: what a writer may remove before it
/// fails (a stale temporary file is debris of a dead writer).
fn without(image: &Image, skip: &str) -> Image {
    image
        .iter()
        .filter(|(n, _)| *n != skip)
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect()
}

#[test]
fn a_created_journal_that_fails_at_any_call_leaves_no_temporary_file() {
    let count = fault_sweep(
        |_| {},
        create_two,
        |live, _, done| {
            let names: Vec<&String> = live.keys().collect();
            match live.get("r.json") {
                // The run never came to exist: nothing of it is left.
                None => assert!(names.is_empty() && !done, "{names:?}"),
                // It exists from its meta record on; a later failure leaves
                // it as a crash would (a second record whose fsync failed
                // may be there: the writer then stops, SPEC 2).
                Some(bytes) => {
                    assert_eq!(names, ["r.json"]);
                    let (seqs, tail) = read_back(bytes);
                    assert!(tail.is_clean());
                    assert!(seqs == [1, 2] || !done && seqs == [1], "{seqs:?}");
                }
            }
        },
    );
    assert!(count >= 5, "{count}");
}

#[test]
fn a_run_created_whole_that_fails_at_any_call_leaves_nothing() {
    fault_sweep(
        |_| {},
        |sim| {
            let p = path("r.json");
            let records = [1, 2, 3].iter().map(|&s| raw(s)).collect();
            let unnamed = sim.create_unnamed();
            let (stored, r) =
                store().create_whole_in(Arc::new(sim.clone()), "r", &p, records, unnamed);
            r.is_ok() && stored == 3
        },
        |live, _, done| match live.get("r.json") {
            None => assert!(live.is_empty() && !done, "{live:?}"),
            Some(bytes) => {
                assert_eq!(live.len(), 1);
                assert_eq!(read_back(bytes), (vec![1, 2, 3], Tail::Clean));
            }
        },
    );
}

#[test]
fn a_repair_that_fails_at_any_call_leaves_the_journal_and_no_backup_or_the_cut_and_its_backup() {
    let mut old = lines_of(&[1, 2]);
    let offset = old.len();
    old.extend_from_slice(b"{\"seq\":3,\"ki");
    let torn = old[offset..].to_vec();
    let count = fault_sweep(
        |sim| sim.put("r.json", &old),
        |sim| {
            let p = path("r.json");
            let Ok(mut file) = sim.open_append(&p) else {
                return false;
            };
            store()
                .cut_torn(sim, &mut *file, "r", &p, &torn, offset as u64)
                .is_ok()
        },
        |live, before, _| {
            if live == before {
                return;
            }
            // Cut (the cut's own fsync may be the call that failed): only
            // once the bytes are kept.
            assert_eq!(live["r.json"], old[..offset]);
            let backups: Vec<_> = live.iter().filter(|(n, _)| n.ends_with(".bak")).collect();
            assert_eq!(backups.len(), 1, "{live:?}");
            assert_eq!(*backups[0].1, torn);
        },
    );
    // The backup created, written and fsynced, the directory, the cut and
    // its fsync.
    assert_eq!(count, 6);
}

#[test]
fn an_rm_that_fails_at_any_call_leaves_the_run_or_deletes_it_with_its_backup() {
    let journal = lines_of(&[1, 2]);
    fault_sweep(
        |sim| {
            sim.put("r.json", &journal);
            sim.put("r.lock", b"");
            sim.put_link("r.json", "r.creating.tmp");
        },
        |sim| {
            let (p, lock) = (path("r.json"), path("r.lock"));
            store().unlink_run(sim, "r", &p, &lock, true, ()).is_ok()
        },
        |live, before, done| {
            if live.contains_key("r.json") {
                // Not deleted: as it was (a stale second name may be gone).
                assert!(!done);
                assert!(
                    *live == *before || *live == without(before, "r.creating.tmp"),
                    "{live:?}"
                );
                return;
            }
            // Deleted: only the backup is left, with the journal's bytes
            // (the directory's fsync may be the call that failed), and the
            // lock file when its unlink failed: an orphan lock, harmless.
            let lock = live.contains_key("r.lock");
            let names: Vec<&String> = live.keys().filter(|n| *n != "r.lock").collect();
            assert_eq!(names.len(), 1, "{names:?}");
            assert!(names[0].starts_with("r.removed-"), "{names:?}");
            assert_eq!(live[names[0]], journal);
            assert!(done || !lock, "{live:?}");
        },
    );
}

#[test]
fn an_upgrade_that_fails_at_any_call_leaves_the_old_journal_and_no_backup_or_the_new_one_and_its_backup(
) {
    let old = lines_of(&[1, 2]);
    let new = lines_of(&[1, 2, 3]);
    fault_sweep(
        |sim| {
            sim.put("r.upgrading.tmp", b"half");
            sim.put("r.json", &old);
        },
        |sim| {
            store()
                .replace_journal(sim, "r", &path("r.json"), &new, "v3")
                .is_ok()
        },
        |live, before, done| {
            if live["r.json"] == old {
                assert!(!done);
                assert!(
                    *live == *before || *live == without(before, "r.upgrading.tmp"),
                    "{live:?}"
                );
                return;
            }
            assert_eq!(live["r.json"], new);
            let names: Vec<&String> = live.keys().filter(|n| *n != "r.json").collect();
            assert_eq!(names.len(), 1, "{names:?}");
            assert!(names[0].starts_with("r.v3-"), "{names:?}");
            assert_eq!(live[names[0]], old);
        },
    );
}

#[test]
fn a_recover_crashed_at_any_fsync_leaves_the_damaged_journal_or_the_recovered_one_and_both_kept() {
    let mut old = lines_of(&[1, 2]);
    old.extend_from_slice(b"\x00\x00garbage\n");
    old.extend_from_slice(&lines_of(&[3]));
    let new = lines_of(&[1, 2, 3]);
    let (count, _) = sweep(
        |sim| sim.put("r.json", &old),
        |sim| {
            store()
                .recover_in(sim, "r", &path("r.json"), &new, b"\x00\x00garbage\n")
                .is_ok()
        },
        |image, done| {
            let bytes = image.get("r.json").expect("never neither journal");
            let kept: Vec<_> = image
                .iter()
                .filter(|(n, _)| n.starts_with("r.recovered-") && n.ends_with(".bak"))
                .collect();
            assert!(kept.len() <= 1);
            if let Some((_, k)) = kept.first() {
                assert_eq!(**k, old, "the backup holds the original");
            }
            if *bytes == old {
                assert!(!done);
            } else {
                assert_eq!(*bytes, new);
                assert_eq!(kept.len(), 1, "recovered with no backup: {image:?}");
                let aside: Vec<_> = image
                    .iter()
                    .filter(|(n, _)| n.starts_with("r.unreadable-"))
                    .collect();
                assert_eq!(aside.len(), 1, "{image:?}");
                assert_eq!(aside[0].1.as_slice(), b"\x00\x00garbage\n");
            }
        },
    );
    // The unreadable bytes (file and entry), the backup's entry, the new
    // file, the rename's entry.
    assert!(count >= 4, "{count}");
}

#[test]
fn a_recover_that_fails_at_any_call_leaves_the_damaged_journal_and_nothing_else_or_the_recovered_one(
) {
    let mut old = lines_of(&[1]);
    old.extend_from_slice(b"garbage\n");
    old.extend_from_slice(&lines_of(&[2]));
    let new = lines_of(&[1, 2]);
    fault_sweep(
        |sim| sim.put("r.json", &old),
        |sim| {
            store()
                .recover_in(sim, "r", &path("r.json"), &new, b"garbage\n")
                .is_ok()
        },
        |live, before, done| {
            if live["r.json"] == old {
                assert!(!done);
                assert_eq!(*live, *before, "debris left: {live:?}");
                return;
            }
            // Replaced (done, or only the last directory fsync failed):
            // the original and the unreadable bytes are both kept.
            assert_eq!(live["r.json"], new);
            assert_eq!(live.len(), 3, "{live:?}");
        },
    );
}

/// An rm backup's name, as `keep_beside` makes one.
const RM_BACKUP: &str = "r.removed-20261206T000000.000000000Z.bak";

/// A directory holding `image`'s names and bytes, all durable (each name
/// its own file: the restore reads bytes, never inodes).
fn sim_of(image: &Image) -> SimDir {
    let sim = SimDir::default();
    for (n, b) in image {
        sim.put(n, b);
    }
    sim
}

#[test]
fn a_restore_crashed_at_any_fsync_leaves_the_backup_or_the_run_and_a_rerun_finishes() {
    let journal = lines_of(&[1, 2]);
    let (count, checked) = sweep(
        |sim| sim.put(RM_BACKUP, &journal),
        |sim| store().restore_in(sim, "r", &path(RM_BACKUP)).is_ok(),
        |image, done| {
            let run = image.get("r.json");
            let kept = image.get(RM_BACKUP);
            assert!(run.is_some() || kept.is_some(), "neither: {image:?}");
            for bytes in [run, kept].into_iter().flatten() {
                assert_eq!(*bytes, journal, "{image:?}");
            }
            if done {
                assert!(run.is_some() && kept.is_none(), "{image:?}");
            }
            // Run again on what the crash left: done, the backup's name gone.
            if kept.is_some() {
                let again = sim_of(image);
                store()
                    .restore_in(&again, "r", &path(RM_BACKUP))
                    .expect("a rerun finishes the restore");
                let now = again.live();
                assert_eq!(now.get("r.json"), Some(&journal));
                assert!(!now.contains_key(RM_BACKUP), "{now:?}");
            }
        },
    );
    // The run's name, then the backup's unlink.
    assert_eq!(count, 2);
    assert!(checked >= 3, "{checked}");
}

#[test]
fn a_restore_never_replaces_another_run_of_the_id() {
    let (journal, other) = (lines_of(&[1, 2]), lines_of(&[1]));
    let sim = SimDir::default();
    sim.put(RM_BACKUP, &journal);
    sim.put("r.json", &other);
    assert!(store().restore_in(&sim, "r", &path(RM_BACKUP)).is_err());
    let now = sim.live();
    assert_eq!(now.get("r.json"), Some(&other));
    assert_eq!(now.get(RM_BACKUP), Some(&journal));
}

#[test]
fn a_restore_that_fails_at_any_call_leaves_the_backup_or_the_run() {
    let journal = lines_of(&[1, 2]);
    let calls = fault_sweep(
        |sim| sim.put(RM_BACKUP, &journal),
        |sim| store().restore_in(sim, "r", &path(RM_BACKUP)).is_ok(),
        |live, _, done| {
            let (run, kept) = (live.get("r.json"), live.get(RM_BACKUP));
            assert!(run.is_some() || kept.is_some(), "neither: {live:?}");
            if done {
                assert!(run.is_some() && kept.is_none(), "{live:?}");
            }
        },
    );
    assert!(calls >= 4, "{calls}");
}

#[test]
fn a_prune_crashed_at_any_fsync_leaves_the_backup_or_nothing_and_the_run_untouched() {
    let (journal, kept) = (lines_of(&[1, 2, 3]), lines_of(&[1, 2]));
    let (count, _) = sweep(
        |sim| {
            sim.put("r.json", &journal);
            sim.put(RM_BACKUP, &kept);
        },
        |sim| store().prune_in(sim, &path(RM_BACKUP)).is_ok(),
        |image, done| {
            assert_eq!(image.get("r.json"), Some(&journal), "{image:?}");
            if let Some(b) = image.get(RM_BACKUP) {
                assert!(!done && *b == kept, "{image:?}");
            }
        },
    );
    assert_eq!(count, 1);
    // Pruned again (the id gone by then): nothing to do, no error.
    let sim = SimDir::default();
    sim.put("r.json", &journal);
    assert!(store().prune_in(&sim, &path(RM_BACKUP)).is_ok());
}
