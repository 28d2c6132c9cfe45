//! `repair`, `rm` and the live-run refusals of the commands that change a
//! store.

use crate::support::*;
use std::os::unix::fs::PermissionsExt;

fn completed() -> Fixture {
    let f = Fixture::new(&[turn("done", &[])]);
    let r = f.run("c", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    f
}

#[test]
fn a_new_store_is_0700_and_a_new_journal_0600() {
    let f = completed();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&f.runs()), 0o700);
    assert_eq!(mode(&f.journal("c")), 0o600);
}

#[test]
fn repair_cuts_a_torn_tail_and_keeps_its_bytes_in_a_private_backup() {
    let f = completed();
    let good = f.bytes("c");
    let torn = b"{\"seq\":4,\"protocol\":\"io.choria.fis";
    let mut bytes = good.clone();
    bytes.extend_from_slice(torn);
    std::fs::write(f.journal("c"), &bytes).unwrap();

    let dry = f.store(&["repair", "c", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stdout.contains("would cut"), "{}", dry.stdout);
    assert_eq!(f.bytes("c"), bytes, "a dry run changes nothing");

    let r = f.store(&["repair", "c", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = r.json();
    assert_eq!(out["action"], "cut-torn-tail");
    assert_eq!(f.bytes("c"), good);
    let backup = std::path::PathBuf::from(out["backup"].as_str().unwrap());
    assert_eq!(std::fs::read(&backup).unwrap(), torn);
    let name = backup.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("c.torn-") && name.ends_with(".bak"),
        "{name}"
    );
    assert_eq!(
        std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // The backup is not taken for a journal, and the run verifies clean.
    let v = f.store(&["verify", "--format", "json"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    let runs: Vec<_> = v
        .json_lines()
        .into_iter()
        .filter(|l| l.get("summary").is_some())
        .collect();
    assert_eq!(runs[0]["summary"]["runs"], 1);
    assert_eq!(runs[0]["summary"]["warnings"], 0);
}

#[test]
fn repair_adds_a_missing_final_newline() {
    let f = completed();
    let good = f.bytes("c");
    std::fs::write(f.journal("c"), &good[..good.len() - 1]).unwrap();
    let r = f.store(&["repair", "c"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("newline"), "{}", r.stdout);
    assert_eq!(f.bytes("c"), good);
}

#[test]
fn repair_with_nothing_to_do_says_so() {
    let f = completed();
    let before = f.bytes("c");
    let r = f.store(&["repair", "c"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("nothing to repair"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("next:"),
        "a healthy run needs nothing: {}",
        r.stdout
    );
    assert_eq!(f.bytes("c"), before);
}

#[test]
fn repair_refuses_interior_corruption_and_explains_why() {
    let f = completed();
    let good = f.bytes("c");
    let text = String::from_utf8(good).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"seq\":2,\"protocol\": garbage";
    let bad = lines.join("\n") + "\n";
    std::fs::write(f.journal("c"), &bad).unwrap();
    let r = f.store(&["repair", "c"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("throw away"), "{}", r.stderr);
    assert_eq!(f.bytes("c"), bad.as_bytes());
}

#[test]
fn repair_and_rm_refuse_a_live_run() {
    let f = completed();
    let before = f.bytes("c");
    std::fs::write(f.journal("c"), &before[..before.len() - 1]).unwrap();
    let before = f.bytes("c");
    let _lock = f.hold_lock("c");
    let r = f.store(&["repair", "c"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is live"), "{}", r.stderr);
    let r = f.store(&["rm", "c", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is live"), "{}", r.stderr);
    assert_eq!(f.bytes("c"), before);
}

#[test]
fn rm_without_a_terminal_needs_yes() {
    let f = completed();
    let r = f.store(&["rm", "c"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    assert!(f.journal("c").exists());
}

#[test]
fn rm_removes_journal_and_lock_keeps_a_backup_and_says_so() {
    let f = completed();
    let before = f.bytes("c");
    let r = f.store(&["--format", "json", "rm", "c", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = &r.json()[0];
    let removed = done["removed"].to_string();
    assert!(
        removed.contains("c.json") && removed.contains("c.lock"),
        "{removed}"
    );
    assert!(!f.journal("c").exists());
    assert!(!f.runs().join("c.lock").exists());
    // Kept beside the others under a name no reader takes for a journal.
    let kept = std::path::PathBuf::from(done["kept"].as_str().unwrap());
    assert_eq!(kept.parent(), Some(f.runs().as_path()));
    let name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("c.removed-") && name.ends_with(".bak"),
        "{name}"
    );
    assert_eq!(std::fs::read(&kept).unwrap(), before);
    let ls = f.store(&["--format", "json", "ls"]);
    assert_eq!(ls.json(), serde_json::json!([]));
    // The text form says the same, and how to put it back.
    let f = completed();
    let before = f.bytes("c");
    let r = f.store(&["rm", "c", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("kept") && r.stdout.contains("restore with: ln "),
        "{}",
        r.stdout
    );
    let restore = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("restore with: "))
        .unwrap();
    let ran = std::process::Command::new("sh")
        .arg("-c")
        .arg(restore)
        .status()
        .unwrap();
    assert!(ran.success(), "{restore}");
    assert_eq!(f.bytes("c"), before);
    // Only the journal is back: the backup name is gone.
    let names: Vec<String> = std::fs::read_dir(f.runs())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".removed-")), "{names:?}");
    assert_eq!(f.store(&["verify", "c"]).code, 0);
}

#[test]
fn writers_refuse_a_symlinked_journal() {
    let f = completed();
    std::fs::rename(f.journal("c"), f.path("elsewhere.json")).unwrap();
    std::os::unix::fs::symlink(f.path("elsewhere.json"), f.journal("c")).unwrap();
    let before = std::fs::read(f.path("elsewhere.json")).unwrap();
    let r = f.resume("c", &["--prompt", "more"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert_eq!(std::fs::read(f.path("elsewhere.json")).unwrap(), before);
}

#[test]
fn rm_deletes_a_run_named_twice_once() {
    let f = completed();
    let r = f.store(&["rm", "c", "c", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("kept").count(), 1, "{}", r.stdout);
    assert!(!f.journal("c").exists());
}

/// Issue 18 item 6: a `repair` or `upgrade` that has nothing to do, or
/// refuses, creates nothing, not even the lock file of a run that had none
/// (one `migrate` created whole).
#[test]
fn a_repair_or_upgrade_that_does_nothing_or_refuses_creates_nothing() {
    let names = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let store = tempfile::tempdir().unwrap();
    for (from, name) in [
        ("runs-v1/tool-batch.json", "tool-batch"),
        ("damaged/interior-corruption.json", "interior-corruption"),
    ] {
        std::fs::copy(testdata(from), store.path().join(format!("{name}.json"))).unwrap();
    }
    let before = names(store.path());
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--state-dir", s(store.path())];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    for (args, code) in [
        (&["repair", "tool-batch"][..], 0),
        (&["repair", "interior-corruption"][..], 1),
        (&["upgrade", "tool-batch"][..], 0),
        (&["upgrade", "interior-corruption"][..], 1),
    ] {
        let r = run(args);
        assert_eq!(r.code, code, "{args:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(names(store.path()), before, "{args:?} created something");
    }
}

/// b-15: repair says what it leaves behind. A clean tail on a run with a
/// seq gap names the gap and the verify command; a cut that leaves no
/// record names `rm`; interior damage names the salvage command, complete.
#[test]
fn repair_names_what_it_does_not_fix_and_the_command_for_it() {
    let store = store_copy("damaged");
    let d = s(store.path()).to_owned();
    let r = fisk(&["--state-dir", &d, "repair", "seq-gap"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("nothing to repair")
            && r.stdout.contains("seq-gap at line")
            && r.stdout.contains(&format!(
                "next:\n  fisk-admin --state-dir {d} verify seq-gap\n"
            )),
        "{}",
        r.stdout
    );
    let r = fisk(&[
        "--state-dir",
        &d,
        "repair",
        "empty-journal-torn",
        "--dry-run",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("would hold no record")
            && r.stdout.contains(&format!(
                "next:\n  fisk-admin --state-dir {d} rm empty-journal-torn\n"
            )),
        "{}",
        r.stdout
    );
    let r = fisk(&["--state-dir", &d, "repair", "interior-corruption"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "`fisk-admin --state-dir {d} recover interior-corruption --dry-run` shows what recovering would keep"
        )),
        "{}",
        r.stderr
    );
    // A run that is not there: the close ids are offered.
    let r = fisk(&["--state-dir", &d, "repair", "seq-gapp"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean `seq-gap`?"), "{}", r.stderr);
}

/// One error shape (issue 23.7): a run of a batch that fails is said as a
/// command's own failure is, `fisk-admin: × ...`, and the others go on.
#[test]
fn a_run_that_fails_within_a_batch_is_said_in_the_one_error_shape() {
    let store = store_copy("runs");
    let dir = store.path();
    let lock = dir.join("tool-batch.lock");
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["sleep", "30"])
        .spawn()
        .expect("flock(1)");
    crate::approve::wait_until_locked(&lock);
    let r = fisk(&[
        "--state-dir",
        s(dir),
        "rm",
        "tool-batch",
        "simple-completed",
        "--yes",
    ]);
    let _ = holder.kill();
    let _ = holder.wait();
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("is live"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(
        line.starts_with("fisk-admin: × run tool-batch is live"),
        "{line}"
    );
    assert!(
        !dir.join("simple-completed.json").exists(),
        "the rest went on"
    );
}
