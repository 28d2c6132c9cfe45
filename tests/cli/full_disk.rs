//! Issue 18 item 6: no debris on a full disk. Each command that writes is
//! run on a small tmpfs filled to every level from "nothing free" up to
//! what the command needs, once counting blocks and once counting inodes
//! (a file or directory created on a disk with no free inode fails the
//! same way). After each try the store must be byte for byte what it was
//! (every name, mode and content; the filler is outside the store), or
//! hold the completed operation: never a temporary file, an empty backup,
//! a lock file or a directory left by a run that never came to exist.
//!
//! The tests mount a tmpfs (they run as root, as CI does). A machine where
//! the mount is refused fails them, saying why: they are never skipped.

use crate::support::*;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One page of tmpfs: the unit its size is counted in.
const PAGE: u64 = 4096;

/// A tmpfs mounted on a fresh directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `size` bytes and `inodes` inodes.
    fn mount(size: u64, inodes: u64) -> Tmpfs {
        let dir = tempfile::tempdir().expect("mount point");
        let opts = format!("size={size},nr_inodes={inodes},mode=0755");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &opts, "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!(
                "the full-disk tests need a small tmpfs and could not mount one \
                 (mount -t tmpfs -o {opts} tmpfs {}: {}{}); they must run as root \
                 (or with CAP_SYS_ADMIN), as CI does",
                dir.path().display(),
                String::from_utf8_lossy(&o.stderr).trim(),
                o.status
            ),
            Err(e) => panic!(
                "the full-disk tests need a small tmpfs and could not run mount(8): {e}; \
                 they must run as root, as CI does"
            ),
        }
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Everything on the disk removed.
    fn clear(&self) {
        for e in std::fs::read_dir(self.path()).expect("read tmpfs") {
            let p = e.expect("entry").path();
            // Whatever a failed command left, writable again first.
            let _ = Command::new("chmod")
                .arg("-R")
                .arg("u+rwx")
                .arg(&p)
                .status();
            match p.is_dir() && !p.is_symlink() {
                true => std::fs::remove_dir_all(&p),
                false => std::fs::remove_file(&p),
            }
            .unwrap_or_else(|e| panic!("cannot clear {}: {e}", p.display()));
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let umount = |lazy: bool| {
            let mut c = Command::new("umount");
            if lazy {
                c.arg("-l");
            }
            c.arg(self.dir.path()).status().is_ok_and(|s| s.success())
        };
        if !umount(false) && !umount(true) {
            eprintln!(
                "could not unmount the tmpfs at {}",
                self.dir.path().display()
            );
        }
    }
}

/// Which of the disk's limits a sweep fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    Blocks,
    Inodes,
}

/// The names the filler uses, at the top of the disk; never a store.
const FILL: &str = "fill";
const FILL_INODES: &str = "fill-inodes";

/// Fill `limit` of the disk at `root` completely, then free `free` pages
/// (or inodes) of it again.
fn fill(root: &Path, limit: Limit, free: u64) {
    match limit {
        Limit::Blocks => {
            let path = root.join(FILL);
            let mut f = std::fs::File::create(&path).expect("filler");
            let chunk = vec![0xa5u8; PAGE as usize];
            while f.write_all(&chunk).is_ok() {}
            let len = f.metadata().expect("filler").len();
            // The pages it holds, less `free` of them.
            let pages = len.div_ceil(PAGE);
            assert!(pages > free, "the disk is too small to leave {free} pages");
            f.set_len((pages - free) * PAGE).expect("free pages");
        }
        Limit::Inodes => {
            let dir = root.join(FILL_INODES);
            std::fs::create_dir(&dir).expect("inode filler");
            let mut made = Vec::new();
            loop {
                let p = dir.join(made.len().to_string());
                match std::fs::File::create(&p) {
                    Ok(_) => made.push(p),
                    Err(_) => break,
                }
            }
            assert!(made.len() as u64 >= free, "too few inodes to free {free}");
            for p in made.iter().take(free as usize) {
                std::fs::remove_file(p).expect("free inode");
            }
        }
    }
}

/// What one entry is: its mode and kind, and its bytes (a file), its
/// target (a link) or nothing (a directory).
#[derive(Debug, PartialEq, Eq, Clone)]
struct Entry {
    mode: u32,
    what: What,
}

#[derive(Debug, PartialEq, Eq, Clone)]
enum What {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
}

/// Every entry under the disk's root but the filler, by path relative
/// to it (as bytes: a name need not be UTF-8).
type Snapshot = BTreeMap<Vec<u8>, Entry>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).expect("read dir") {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(root).expect("under root").to_path_buf();
            if dir == root && (rel == Path::new(FILL) || rel == Path::new(FILL_INODES)) {
                continue;
            }
            // The audit log (issue 38) records every attempt, one that
            // failed too: it is no part of the store "as it was".
            if p.file_name().is_some_and(|n| n == "fisk-admin-audit.jsonl") {
                continue;
            }
            let md = std::fs::symlink_metadata(&p).expect("stat");
            let what = if md.file_type().is_symlink() {
                What::Link(std::fs::read_link(&p).expect("readlink"))
            } else if md.is_dir() {
                todo.push(p.clone());
                What::Dir
            } else {
                What::File(std::fs::read(&p).expect("read"))
            };
            let mode = md.mode();
            out.insert(rel.as_os_str().as_bytes().to_vec(), Entry { mode, what });
        }
    }
    out
}

/// The names in `a` and `b` that differ, for a failure message.
fn difference(a: &Snapshot, b: &Snapshot) -> String {
    let mut out = Vec::new();
    for (n, e) in a {
        match b.get(n) {
            None => out.push(format!("gone: {}", String::from_utf8_lossy(n))),
            Some(f) if f != e => out.push(format!(
                "changed: {} (mode {:o} -> {:o}{})",
                String::from_utf8_lossy(n),
                e.mode,
                f.mode,
                if e.what == f.what { "" } else { ", content" }
            )),
            Some(_) => {}
        }
    }
    for (n, f) in b {
        if !a.contains_key(n) {
            let size = match &f.what {
                What::File(b) => format!("{} bytes", b.len()),
                What::Dir => "a directory".into(),
                What::Link(t) => format!("a link to {}", t.display()),
            };
            out.push(format!("new: {} ({size})", String::from_utf8_lossy(n)));
        }
    }
    out.join("; ")
}

/// The names in `after` that `before` did not have, and the ones it lost.
fn new_and_gone(before: &Snapshot, after: &Snapshot) -> (Vec<String>, Vec<String>) {
    let show = |n: &Vec<u8>| String::from_utf8_lossy(n).into_owned();
    let new = after.keys().filter(|n| !before.contains_key(*n)).map(show);
    let gone = before.keys().filter(|n| !after.contains_key(*n)).map(show);
    (new.collect(), gone.collect())
}

fn file<'a>(s: &'a Snapshot, name: &str) -> Option<&'a [u8]> {
    match s.get(name.as_bytes()).map(|e| &e.what) {
        Some(What::File(b)) => Some(b),
        _ => None,
    }
}

/// One operation under test.
struct Case<'a> {
    what: &'a str,
    /// Make the store on the empty disk (with room to spare).
    setup: &'a dyn Fn(&Path),
    /// Run the command on the disk.
    op: &'a dyn Fn(&Path) -> Run,
    /// `Ok` when `after` holds the completed operation over `before`.
    completed: &'a dyn Fn(&Path, &Snapshot, &Snapshot) -> Result<(), String>,
    /// The one thing a failure may leave that the store did not hold: the
    /// lock file of a run that had none (an empty file, 0600), which is
    /// the run's from then on (journal/FORMAT.md, "No debris").
    lock_of: Option<&'a str>,
}

/// `after` is `before`, but for the lock file `lock_of` may have added.
fn unchanged(case: &Case, before: &Snapshot, after: &Snapshot) -> bool {
    let mut after = after.clone();
    if let Some(lock) = case.lock_of.filter(|l| !before.contains_key(l.as_bytes())) {
        let added = after.remove(lock.as_bytes());
        let empty = Entry {
            mode: 0o100600,
            what: What::File(Vec::new()),
        };
        if added.is_some_and(|e| e != empty) {
            return false;
        }
    }
    *before == after
}

/// What a sweep saw: the least free pages (or inodes) the command
/// completed with.
struct Swept {
    needed: u64,
}

/// Run `case` with 0, 1, 2 ... pages (or inodes) free until it completes,
/// checking every try: a failure exits non-zero, says the disk is full
/// and leaves the store as it was; a success leaves the completed
/// operation.
fn sweep(disk: &Tmpfs, limit: Limit, case: &Case) -> Swept {
    let root = disk.path();
    for free in 0..64 {
        disk.clear();
        (case.setup)(root);
        let before = snapshot(root);
        fill(root, limit, free);
        let r = (case.op)(root);
        let after = snapshot(root);
        let at = format!("{} with {free} {limit:?} free", case.what);
        if r.code == 0 {
            if let Err(why) = (case.completed)(root, &before, &after) {
                panic!(
                    "{at}: exited 0 but the store does not hold the completed operation: {why}\n\
                     changes: {}\nstdout {}\nstderr {}",
                    difference(&before, &after),
                    r.stdout,
                    r.stderr
                );
            }
            eprintln!("{at}: completed");
            return Swept { needed: free };
        }
        eprintln!("{at}: failed, store unchanged: {}", r.stderr.trim());
        // As one line: the help is wrapped to the terminal's width.
        let said = r.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            said.contains("No space left on device")
                && said.contains("is full")
                && said.contains("then run the same command again"),
            "{at}: failed without saying the disk is full and what to do (exit {}): {}",
            r.code,
            r.stderr
        );
        assert!(
            unchanged(case, &before, &after),
            "{at}: failed (exit {}) and left the store changed: {}\nstderr {}",
            r.code,
            difference(&before, &after),
            r.stderr
        );
    }
    panic!(
        "{}: never completed, even with 64 {limit:?} free",
        case.what
    );
}

/// Both sweeps of `case` on one disk: blocks, then inodes.
fn sweep_both(case: &Case) -> (Swept, Swept) {
    let disk = Tmpfs::mount(512 * 1024, 64);
    let blocks = sweep(&disk, Limit::Blocks, case);
    let inodes = sweep(&disk, Limit::Inodes, case);
    (blocks, inodes)
}

fn fisk_at(args: &[&str]) -> Run {
    let home = tempfile::tempdir().expect("home");
    fisk_in(home.path(), args, None)
}

/// `runs/<name>.json` (0600) copied from testdata `<dir>/<name>.json`,
/// with the lock file the agent leaves beside every journal it wrote; the
/// store 0700.
fn put_run(root: &Path, dir: &str, name: &str) {
    let from = format!("{dir}/{name}.json");
    let runs = root.join("runs");
    std::fs::create_dir_all(&runs).expect("runs");
    std::fs::set_permissions(&runs, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let journal = runs.join(format!("{name}.json"));
    std::fs::copy(testdata(&from), &journal).expect("copy");
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let lock = runs.join(format!("{name}.lock"));
    std::fs::write(&lock, b"").expect("lock");
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

fn runs_dir(root: &Path) -> String {
    s(&root.join("runs")).to_owned()
}

/// A store's findings with `verify --format json`, the summary dropped.
fn findings(store: &Path) -> Vec<serde_json::Value> {
    fisk_at(&["--state-dir", s(store), "verify", "--format", "json"])
        .json_lines()
        .into_iter()
        .filter(|v| v.get("summary").is_none())
        .collect()
}

/// Regression test for issue 18 ("a `run` that fails at its first write
/// leaves `<id>.creating.tmp` and `<id>.lock`"), also with the store
/// directory missing, which `run` creates.
#[test]
fn a_run_that_fails_on_a_full_disk_leaves_no_temporary_journal_lock_or_directory() {
    let agent = Fixture::new(&[turn("done", &[])]);
    let agent_file = agent.path("agent.yaml");
    for store_exists in [true, false] {
        let setup = |root: &Path| {
            if store_exists {
                std::fs::create_dir(root.join("runs")).expect("runs");
                std::fs::set_permissions(root.join("runs"), std::fs::Permissions::from_mode(0o700))
                    .expect("chmod");
            }
        };
        let op = |root: &Path| {
            let runs = runs_dir(root);
            let args = [
                "--state-dir",
                &runs,
                "run",
                "--agent",
                s(&agent_file),
                "--id",
                "r1",
                "go",
            ];
            fisk_at(&args)
        };
        let completed = |root: &Path, before: &Snapshot, after: &Snapshot| {
            let (mut new, gone) = new_and_gone(before, after);
            new.sort();
            let mut want = vec!["runs/r1.json", "runs/r1.lock"];
            if !store_exists {
                want.insert(0, "runs");
            }
            if new != want || !gone.is_empty() {
                return Err(format!("new {new:?}, gone {gone:?}"));
            }
            let bad: Vec<_> = findings(&root.join("runs"))
                .into_iter()
                .filter(|f| f["severity"] != "info")
                .collect();
            match bad.is_empty() {
                true => Ok(()),
                false => Err(format!("verify: {bad:?}")),
            }
        };
        let what = match store_exists {
            true => "run",
            false => "run into a missing store directory",
        };
        let case = Case {
            what,
            setup: &setup,
            op: &op,
            completed: &completed,
            lock_of: None,
        };
        let (blocks, inodes) = sweep_both(&case);
        // It needed a page, and the lock file and the journal their
        // inodes (and the directory one): every level short of that was tried.
        assert!(blocks.needed >= 1);
        assert!(inodes.needed >= 2 + u64::from(!store_exists));
    }
}

/// `answer` with an answer three pages long: a write that lands only part
/// of it is cut back.
#[test]
fn an_answer_that_fails_on_a_full_disk_leaves_the_journal_as_it_was() {
    let content = "a".repeat(3 * PAGE as usize);
    let setup = |root: &Path| put_run(root, "runs-v1", "deferral-waiting");
    let op = |root: &Path| {
        let runs = runs_dir(root);
        fisk_at(&[
            "--state-dir",
            &runs,
            "answer",
            "deferral-waiting",
            "--content",
            &content,
        ])
    };
    let completed = |root: &Path, before: &Snapshot, after: &Snapshot| {
        let (new, gone) = new_and_gone(before, after);
        if !new.is_empty() || !gone.is_empty() {
            return Err(format!("new {new:?}, gone {gone:?}"));
        }
        let (old, now) = (
            file(before, "runs/deferral-waiting.json"),
            file(after, "runs/deferral-waiting.json"),
        );
        let (Some(old), Some(now)) = (old, now) else {
            return Err("no journal".into());
        };
        let added = now.strip_prefix(old).ok_or("the old records changed")?;
        let added = std::str::from_utf8(added).map_err(|e| e.to_string())?;
        if added.lines().count() != 1 || !added.contains(&content) {
            return Err(format!(
                "appended {} bytes, not the one answer",
                added.len()
            ));
        }
        match findings(&root.join("runs"))
            .iter()
            .any(|f| f["severity"] == "error")
        {
            true => Err("verify finds errors".into()),
            false => Ok(()),
        }
    };
    let case = Case {
        what: "answer",
        setup: &setup,
        op: &op,
        completed: &completed,
        lock_of: None,
    };
    let (blocks, _) = sweep_both(&case);
    assert!(blocks.needed >= 3, "needed {} pages", blocks.needed);
}

/// Regression test for issue 18 ("a `repair` refused for lack of space
/// leaves an empty `.torn-*.bak`"): a torn tail two pages long.
#[test]
fn a_repair_refused_for_lack_of_space_leaves_no_backup() {
    let torn = format!(
        "{{\"seq\":99,\"protocol\":\"{}",
        "x".repeat(2 * PAGE as usize)
    );
    let setup = |root: &Path| {
        put_run(root, "runs-v1", "tool-batch");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(root.join("runs/tool-batch.json"))
            .expect("journal");
        f.write_all(torn.as_bytes()).expect("torn tail");
    };
    let op = |root: &Path| fisk_at(&["--state-dir", &runs_dir(root), "repair", "tool-batch"]);
    let completed = |_: &Path, before: &Snapshot, after: &Snapshot| {
        let (new, gone) = new_and_gone(before, after);
        let [backup] = new.as_slice() else {
            return Err(format!("new {new:?}"));
        };
        if !gone.is_empty() || !backup.starts_with("runs/tool-batch.torn-") {
            return Err(format!("new {new:?}, gone {gone:?}"));
        }
        if file(after, backup) != Some(torn.as_bytes()) {
            return Err("the backup does not hold the torn bytes".into());
        }
        let old = file(before, "runs/tool-batch.json").unwrap_or_default();
        match file(after, "runs/tool-batch.json") == old.strip_suffix(torn.as_bytes()) {
            true => Ok(()),
            false => Err("the journal is not cut at the torn line".into()),
        }
    };
    let case = Case {
        what: "repair",
        setup: &setup,
        op: &op,
        completed: &completed,
        lock_of: None,
    };
    let (blocks, inodes) = sweep_both(&case);
    assert!(blocks.needed >= 2, "needed {} pages", blocks.needed);
    assert!(inodes.needed >= 1);
}

/// `rm` keeps its backup as a second name of the journal: it needs no
/// page, but an inode for the name (tmpfs counts links), and one for a
/// lock file when the run has none.
#[test]
fn an_rm_on_a_full_disk_deletes_the_run_with_its_backup_or_changes_nothing() {
    for with_lock in [true, false] {
        let setup = |root: &Path| {
            put_run(root, "runs-v1", "tool-batch");
            if !with_lock {
                std::fs::remove_file(root.join("runs/tool-batch.lock")).expect("unlock");
            }
        };
        let op =
            |root: &Path| fisk_at(&["--state-dir", &runs_dir(root), "rm", "--yes", "tool-batch"]);
        let completed = |_: &Path, before: &Snapshot, after: &Snapshot| {
            let (new, mut gone) = new_and_gone(before, after);
            gone.sort();
            let want_gone = match with_lock {
                true => vec!["runs/tool-batch.json", "runs/tool-batch.lock"],
                false => vec!["runs/tool-batch.json"],
            };
            let [backup] = new.as_slice() else {
                return Err(format!("new {new:?}"));
            };
            if gone != want_gone || !backup.starts_with("runs/tool-batch.removed-") {
                return Err(format!("new {new:?}, gone {gone:?}"));
            }
            match file(after, backup) == file(before, "runs/tool-batch.json") {
                true => Ok(()),
                false => Err("the backup does not hold the journal".into()),
            }
        };
        let case = Case {
            what: "rm",
            setup: &setup,
            op: &op,
            completed: &completed,
            lock_of: Some("runs/tool-batch.lock"),
        };
        let (blocks, inodes) = sweep_both(&case);
        // The audit log (issue 38) takes a block, and an inode of its
        // own: an rm that cannot log itself is not made.
        assert_eq!(blocks.needed, 1);
        assert_eq!(inodes.needed, 2 + u64::from(!with_lock));
    }
}

/// `migrate` into a destination directory it creates on the full disk:
/// each run is copied whole or not at all, and a directory that received
/// nothing is not left behind.
#[test]
fn a_migrate_onto_a_full_disk_copies_each_run_whole_or_not_at_all() {
    let src = tempfile::tempdir().expect("source");
    let names = ["multi-iteration", "tool-batch", "deferral-waiting"];
    for n in names {
        std::fs::copy(
            testdata(&format!("runs-v1/{n}.json")),
            src.path().join(format!("{n}.json")),
        )
        .expect("copy");
    }
    let setup = |_: &Path| {};
    let op = |root: &Path| {
        let to = format!("file:{}", s(&root.join("dest/runs")));
        let from = format!("file:{}", s(src.path()));
        fisk_at(&[
            "migrate", "--from", &from, "--to", &to, "--all", "--jobs", "1",
        ])
    };
    let completed = |_: &Path, before: &Snapshot, after: &Snapshot| {
        let (mut new, gone) = new_and_gone(before, after);
        new.sort();
        let mut want = vec!["dest".to_owned(), "dest/runs".to_owned()];
        want.extend(names.iter().map(|n| format!("dest/runs/{n}.json")));
        want.sort();
        if new != want || !gone.is_empty() {
            return Err(format!("new {new:?}, gone {gone:?}"));
        }
        for n in names {
            let copy = file(after, &format!("dest/runs/{n}.json"));
            let original = std::fs::read(src.path().join(format!("{n}.json"))).expect("read");
            if copy != Some(original.as_slice()) {
                return Err(format!("{n} is not a byte-identical copy"));
            }
        }
        Ok(())
    };
    let case = Case {
        what: "migrate",
        setup: &setup,
        op: &op,
        completed: &completed,
        lock_of: None,
    };
    let disk = Tmpfs::mount(512 * 1024, 64);
    for limit in [Limit::Blocks, Limit::Inodes] {
        // Between nothing and everything, a try may copy some runs and
        // not others: each one it copied must be whole, and it must say
        // which it did not.
        let swept = sweep_partial(&disk, limit, &case, |root, r| {
            let after = snapshot(root);
            for n in names {
                let Some(copy) = file(&after, &format!("dest/runs/{n}.json")) else {
                    assert!(r.code != 0, "{n} not copied, yet migrate exited 0");
                    continue;
                };
                let original = std::fs::read(src.path().join(format!("{n}.json"))).expect("read");
                assert_eq!(copy, original.as_slice(), "{n} copied in part");
            }
            let left: Vec<_> = after
                .keys()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .filter(|k| !names.iter().any(|n| *k == format!("dest/runs/{n}.json")))
                .filter(|k| k != "dest" && k != "dest/runs")
                .collect();
            assert!(left.is_empty(), "{limit:?}: debris {left:?}");
        });
        assert!(swept.needed >= 1, "{limit:?}");
    }
}

/// [`sweep`] for a command over several runs: a try that fails may have
/// completed some of them, which `partly` checks (the store is not the
/// one before); a try that changed nothing must be the store before.
fn sweep_partial(disk: &Tmpfs, limit: Limit, case: &Case, partly: impl Fn(&Path, &Run)) -> Swept {
    let root = disk.path();
    for free in 0..64 {
        disk.clear();
        (case.setup)(root);
        let before = snapshot(root);
        fill(root, limit, free);
        let r = (case.op)(root);
        let after = snapshot(root);
        let at = format!("{} with {free} {limit:?} free", case.what);
        if r.code == 0 {
            if let Err(why) = (case.completed)(root, &before, &after) {
                panic!(
                    "{at}: exited 0 but: {why}\nstdout {}\nstderr {}",
                    r.stdout, r.stderr
                );
            }
            eprintln!("{at}: completed");
            return Swept { needed: free };
        }
        eprintln!("{at}: exit {}: {}", r.code, r.stdout.trim());
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains("No space left on device"),
            "{at}: failed without saying the disk is full: {}{}",
            r.stdout,
            r.stderr
        );
        partly(root, &r);
        if free == 0 {
            assert!(
                unchanged(case, &before, &after),
                "{at}: nothing could be copied, yet the store changed: {}",
                difference(&before, &after)
            );
        }
    }
    panic!(
        "{}: never completed, even with 64 {limit:?} free",
        case.what
    );
}

/// `upgrade` writes the whole upgraded journal before it renames it over
/// the old one: a journal of several pages.
#[test]
fn an_upgrade_that_fails_on_a_full_disk_leaves_the_version_3_journal_and_no_backup() {
    // The first 12 KiB (whole lines) of a long version-3 run.
    let setup = |root: &Path| {
        put_run(root, "runs", "perf-large");
        let path = root.join("runs/perf-large.json");
        let bytes = std::fs::read(&path).expect("read");
        let cut = bytes
            .iter()
            .enumerate()
            .filter(|(i, b)| **b == b'\n' && *i >= 3 * PAGE as usize)
            .map(|(i, _)| i + 1)
            .next()
            .expect("a long journal");
        std::fs::write(&path, &bytes[..cut]).expect("cut");
    };
    let op = |root: &Path| fisk_at(&["--state-dir", &runs_dir(root), "upgrade", "perf-large"]);
    let completed = |_: &Path, before: &Snapshot, after: &Snapshot| {
        let (new, gone) = new_and_gone(before, after);
        let [backup] = new.as_slice() else {
            return Err(format!("new {new:?}"));
        };
        if !gone.is_empty() || !backup.starts_with("runs/perf-large.v3-") {
            return Err(format!("new {new:?}, gone {gone:?}"));
        }
        let old = file(before, "runs/perf-large.json").unwrap_or_default();
        if file(after, backup) != Some(old) {
            return Err("the backup does not hold the original".into());
        }
        let now = file(after, "runs/perf-large.json").unwrap_or_default();
        let text = String::from_utf8_lossy(now);
        match text
            .lines()
            .next()
            .is_some_and(|l| l.contains("\"version\":1"))
        {
            true => Ok(()),
            false => Err("the journal is not version 1".into()),
        }
    };
    let case = Case {
        what: "upgrade",
        setup: &setup,
        op: &op,
        completed: &completed,
        lock_of: None,
    };
    let (blocks, inodes) = sweep_both(&case);
    assert!(blocks.needed >= 3, "needed {} pages", blocks.needed);
    assert!(inodes.needed >= 1);
}

/// Issue 36.2: `export --out` on a full disk left the part it had
/// written, which a re-run then refused to overwrite. Now the document is
/// written beside it first and named only once whole: a failure leaves
/// nothing (no partial file, no temporary one), and says the disk is full
/// and to run the same command again.
#[test]
fn an_export_to_a_full_disk_leaves_no_partial_file() {
    // A document of a few pages: tool-batch with a long prompt.
    let long = "the same words again and again ".repeat(600);
    let journal = std::fs::read_to_string(testdata("runs-v1/tool-batch.json"))
        .expect("journal")
        .replacen("\"prompt\":\"", &format!("\"prompt\":\"{long}"), 1);
    let setup = |root: &Path| {
        put_run(root, "runs-v1", "tool-batch");
        std::fs::write(root.join("runs/tool-batch.json"), &journal).expect("journal");
    };
    let want = {
        let scratch = tempfile::tempdir().expect("scratch");
        setup(scratch.path());
        let r = fisk_at(&[
            "--state-dir",
            &runs_dir(scratch.path()),
            "export",
            "tool-batch",
            "--as",
            "markdown",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    assert!(want.len() as u64 > 4 * PAGE, "{} bytes", want.len());
    let op = |root: &Path| {
        let out = root.join("out.md");
        fisk_at(&[
            "--state-dir",
            &runs_dir(root),
            "export",
            "tool-batch",
            "--as",
            "markdown",
            "--out",
            s(&out),
        ])
    };
    let completed = |_: &Path, before: &Snapshot, after: &Snapshot| {
        let (new, gone) = new_and_gone(before, after);
        if new != ["out.md"] || !gone.is_empty() {
            return Err(format!("new {new:?}, gone {gone:?}"));
        }
        match after.get("out.md".as_bytes()) {
            Some(e)
                if e.mode & 0o777 == 0o600 && e.what == What::File(want.clone().into_bytes()) =>
            {
                Ok(())
            }
            _ => Err("out.md is not the whole document, 0600".into()),
        }
    };
    let case = Case {
        what: "export --out",
        setup: &setup,
        op: &op,
        completed: &completed,
        lock_of: None,
    };
    let (blocks, inodes) = sweep_both(&case);
    assert!(blocks.needed >= 5, "needed {} pages", blocks.needed);
    assert!(inodes.needed >= 1);
}
