//! `backups` (list, restore, prune), `rm` by filter and `repair --all`
//! (issue 26): on both backends and both generations; the confirmations
//! on a real terminal (tmux) and refused on a pipe without `--yes`; dry
//! runs change nothing; after `rm` and a prune nothing of the run is left.

use crate::nats_support::NatsServer;
use crate::schema::{assert_valid, output_validator};
use crate::support::migrate_via;
use crate::support::{fisk_in, s, store_copy, testdata, Run};
use std::collections::BTreeMap;
use std::path::Path;

/// Every name in `dir` with its bytes (a directory: `None`).
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let p = e.path();
            let bytes = p.is_file().then(|| std::fs::read(&p).unwrap());
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// The names in `dir` that belong to `run` (its journal, lock, backups).
fn names_of(dir: &Path, run: &str) -> Vec<String> {
    snapshot(dir)
        .into_keys()
        .filter(|n| n.starts_with(&format!("{run}.")))
        .collect()
}

fn at(home: &Path, store: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--state-dir", s(store)];
    all.extend_from_slice(args);
    fisk_in(home, &all, None)
}

#[test]
fn rm_then_prune_leaves_nothing_of_the_run_on_either_generation() {
    let list = output_validator("backups.json");
    let pruned = output_validator("backups-prune.json");
    for (gen, run) in [("runs", "tool-batch"), ("runs-v1", "tool-batch")] {
        let home = tempfile::tempdir().unwrap();
        let store = store_copy(gen);
        let dir = store.path();
        assert!(dir.join(format!("{run}.json")).exists(), "{gen}");
        let r = at(home.path(), dir, &["rm", run, "--yes"]);
        assert_eq!(r.code, 0, "{gen}: {}", r.stderr);
        // The text says that no disk was freed, and the prune that frees it.
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with("no disk was freed"))
            .unwrap_or_else(|| panic!("{gen}: {}", r.stdout));
        assert!(line.contains("backups prune"), "{line}");
        let r = at(home.path(), dir, &["-o", "json", "backups"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_valid(&list, &r.json(), "backups");
        let rows = r.json();
        let row = &rows.as_array().unwrap()[0];
        assert_eq!(row["kind"], "rm");
        assert_eq!(row["run"], run);
        // The backup is now the only name of the journal: it holds it all.
        assert!(row["held"].as_u64().unwrap() > 0, "{row}");
        let id = row["id"].as_str().unwrap().to_owned();
        // A dry run changes nothing.
        let before = snapshot(dir);
        let r = at(
            home.path(),
            dir,
            &[
                "-o",
                "json",
                "backups",
                "prune",
                "--older-than",
                "0",
                "--dry-run",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_valid(&pruned, &r.json(), "prune --dry-run");
        assert_eq!(snapshot(dir), before, "{gen}: a dry run changed the store");
        // On a pipe without --yes: refused, nothing removed.
        let r = at(home.path(), dir, &["backups", "prune", &id]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("--yes"), "{}", r.stderr);
        assert_eq!(snapshot(dir), before);
        let r = at(
            home.path(),
            dir,
            &["-o", "json", "backups", "prune", &id, "--yes"],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_valid(&pruned, &r.json(), "prune");
        assert_eq!(r.json()["pruned"][0]["id"], id.as_str());
        assert!(
            names_of(dir, run).is_empty(),
            "{gen}: {:?}",
            names_of(dir, run)
        );
        let r = at(home.path(), dir, &["backups"]);
        assert!(r.stdout.starts_with("no backups"), "{}", r.stdout);
    }
}

#[test]
fn an_rm_backup_restores_byte_for_byte_and_others_are_refused() {
    let restored = output_validator("backups-restore.json");
    let home = tempfile::tempdir().unwrap();
    let store = store_copy("runs");
    let dir = store.path();
    let want = std::fs::read(dir.join("tool-batch.json")).unwrap();
    let r = at(home.path(), dir, &["rm", "tool-batch", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = at(home.path(), dir, &["-o", "json", "backups"]).json()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = at(home.path(), dir, &["-o", "json", "backups", "restore", &id]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_valid(&restored, &r.json(), "restore");
    assert_eq!(std::fs::read(dir.join("tool-batch.json")).unwrap(), want);
    assert_eq!(names_of(dir, "tool-batch"), ["tool-batch.json"]);
    // A repair backup (a torn line) is not put back.
    let damaged = store_copy("damaged");
    let r = at(home.path(), damaged.path(), &["repair", "torn-tail"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = at(home.path(), damaged.path(), &["-o", "json", "backups"]).json();
    let row = &rows.as_array().unwrap()[0];
    assert_eq!(row["kind"], "repair");
    let before = snapshot(damaged.path());
    let r = at(
        home.path(),
        damaged.path(),
        &["backups", "restore", row["id"].as_str().unwrap()],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("tear the journal again"), "{}", r.stderr);
    assert_eq!(snapshot(damaged.path()), before);
    // An upgrade backup (the version-3 original) is listed and not put
    // back; while the journal is a second name of the same file (never:
    // upgrade renames a new file over it) it would hold nothing.
    let r = at(home.path(), dir, &["upgrade", "simple-completed"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = at(home.path(), dir, &["-o", "json", "backups"]).json();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "upgrade")
        .unwrap_or_else(|| panic!("{rows}"))
        .clone();
    assert_eq!(row["run"], "simple-completed");
    assert!(row["held"].as_u64().unwrap() > 0, "{row}");
    let before = snapshot(dir);
    let r = at(
        home.path(),
        dir,
        &["backups", "restore", row["id"].as_str().unwrap()],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(snapshot(dir), before);
}

/// The runs `ls` lists with `filters`, sorted.
fn ls_ids(home: &Path, dir: &Path, filters: &[&str]) -> Vec<String> {
    let mut args = vec!["-o", "json", "ls"];
    args.extend_from_slice(filters);
    sorted_ids(&at(home, dir, &args), "run_id")
}

/// The `key` of every object of a JSON array printed by `r`, sorted.
fn sorted_ids(r: &Run, key: &str) -> Vec<String> {
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut ids: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[key].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn rm_by_filter_deletes_what_ls_selects_after_a_dry_run_that_changes_nothing() {
    for gen in ["runs", "runs-v1"] {
        let home = tempfile::tempdir().unwrap();
        let store = store_copy(gen);
        let dir = store.path();
        let filter = ["--status", "completed,error", "--older-than", "0s"];
        // --older-than leaves out runs with no time on their last record,
        // as ls's --active-until does.
        let same = ["--status", "completed,error", "--active-until", "0s"];
        let want = ls_ids(home.path(), dir, &same);
        assert!(!want.is_empty(), "{gen}");
        let before = snapshot(dir);
        let mut args = vec!["-o", "json", "rm"];
        args.extend_from_slice(&filter);
        args.push("--dry-run");
        let would = sorted_ids(&at(home.path(), dir, &args), "run");
        assert_eq!(would, want, "{gen}");
        assert_eq!(snapshot(dir), before, "{gen}: a dry run changed the store");
        // On a pipe without --yes: refused, nothing deleted.
        let mut args = vec!["rm"];
        args.extend_from_slice(&filter);
        let r = at(home.path(), dir, &args);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("--yes"), "{}", r.stderr);
        assert_eq!(snapshot(dir), before);
        args.push("--yes");
        let r = at(home.path(), dir, &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(ls_ids(home.path(), dir, &same).is_empty());
        // The others are still there.
        assert!(!ls_ids(home.path(), dir, &[]).is_empty());
        // A span older than any run selects none.
        let r = at(
            home.path(),
            dir,
            &["rm", "--older-than", "100000d", "--yes"],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains("no run selected"), "{}", r.stdout);
    }
}

#[test]
fn repair_all_repairs_every_damaged_tail_and_leaves_healthy_journals_byte_identical() {
    for gen in ["damaged", "damaged-v1"] {
        let home = tempfile::tempdir().unwrap();
        let store = store_copy(gen);
        let dir = store.path();
        let before = snapshot(dir);
        let r = at(home.path(), dir, &["repair", "--all", "--dry-run"]);
        assert_eq!(snapshot(dir), before, "{gen}: a dry run changed the store");
        assert!(r.stdout.contains("would"), "{}", r.stdout);
        let r = at(home.path(), dir, &["repair", "--all"]);
        // Interior damage is refused per run without stopping the others.
        assert_ne!(r.code, 0, "{}", r.stdout);
        assert!(r.stderr.contains("was not repaired"), "{}", r.stderr);
        let after = snapshot(dir);
        // The runs it says it repaired are the only ones changed.
        let repaired: Vec<String> = r
            .stdout
            .lines()
            .filter(|l| {
                l.contains(": cut the torn final line") || l.contains(": added the missing newline")
            })
            .filter_map(|l| l.strip_prefix("run ")?.split(':').next().map(str::to_owned))
            .collect();
        assert!(repaired.len() >= 3, "{gen}: {}", r.stdout);
        for (name, bytes) in &before {
            let run = name.split('.').next().unwrap_or(name);
            if repaired.iter().any(|x| x == run) {
                continue;
            }
            assert_eq!(after.get(name), Some(bytes), "{gen}: {name} changed");
        }
        for run in &repaired {
            let v = at(home.path(), dir, &["repair", run]);
            assert!(
                v.stdout.contains("nothing to repair"),
                "{gen}: {}",
                v.stdout
            );
        }
        // A second pass finds nothing more to do.
        let again = at(home.path(), dir, &["repair", "--all"]);
        assert!(again.stdout.contains(" 0 repaired"), "{}", again.stdout);
        assert_eq!(
            snapshot(dir),
            after,
            "{gen}: a second pass changed the store"
        );
    }
}

#[test]
fn rm_by_filter_and_prune_ask_on_a_terminal() {
    let store = store_copy("runs");
    let dir = store.path();
    let want = {
        let home = tempfile::tempdir().unwrap();
        ls_ids(home.path(), dir, &["--status", "completed"])
    };
    let t = crate::viewer::Tmux::start(200, 50);
    let bin = s(&crate::support::bin()).to_owned();
    // No: nothing deleted.
    t.type_line(&format!(
        "{bin} --state-dir {} rm --status completed",
        s(dir)
    ));
    t.wait_for("the question", |sc| sc.contains("run(s)? [y/N]"));
    let before = snapshot(dir);
    t.type_line("n");
    t.wait_for("the refusal", |sc| sc.contains("not confirmed"));
    assert_eq!(snapshot(dir), before);
    // Yes: exactly the selection deleted.
    t.type_line(&format!(
        "clear; {bin} --state-dir {} rm --status completed",
        s(dir)
    ));
    let screen = t.wait_for("the question", |sc| sc.contains("run(s)? [y/N]"));
    for run in &want {
        assert!(screen.contains(run.as_str()), "{run} not listed: {screen}");
    }
    t.type_line("y");
    t.wait_for("the prune hint", |sc| sc.contains("no disk was freed"));
    for run in &want {
        assert!(!dir.join(format!("{run}.json")).exists(), "{run}");
    }
    // The prune asks too.
    t.type_line(&format!(
        "clear; {bin} --state-dir {} backups prune --older-than 0",
        s(dir)
    ));
    t.wait_for("the question", |sc| sc.contains("backup(s), freeing"));
    t.type_line("y");
    t.wait_for("the prune", |sc| sc.contains("disk freed"));
    for run in &want {
        assert!(
            names_of(dir, run).is_empty(),
            "{run}: {:?}",
            names_of(dir, run)
        );
    }
}

#[test]
fn on_jetstream_rm_backups_are_listed_restored_and_pruned() {
    for gen in ["runs", "runs-v1"] {
        on_jetstream(gen);
    }
}

fn on_jetstream(gen: &str) {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let home = tempfile::tempdir().unwrap();
    let src = store_copy(gen);
    let js = |args: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
        ];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    let from = format!("file:{}", s(src.path()));
    migrate_via(home.path(), &srv.url, &from, "jetstream:SESSIONS", &[]);
    let want = std::fs::read(testdata(gen).join("tool-batch.json")).unwrap();
    // rm by filter, dry run: nothing purged.
    let r = js(&["rm", "--match", "JetStream servers", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("tool-batch"), "{}", r.stdout);
    assert_eq!(
        js(&["fold", "tool-batch"]).code,
        0,
        "a dry run purged the run"
    );
    let r = js(&["rm", "--match", "JetStream servers", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = js(&["-o", "json", "backups"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_valid(&output_validator("backups.json"), &r.json(), "backups");
    let rows = r.json();
    let row = &rows.as_array().unwrap()[0];
    assert_eq!(row["kind"], "rm");
    assert_eq!(row["run"], "tool-batch");
    let id = row["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("removed/tool-batch-"), "{id}");
    let r = js(&["backups", "restore", &id]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let dest = tempfile::tempdir().unwrap();
    let into = format!("file:{}", s(dest.path()));
    migrate_via(
        home.path(),
        &srv.url,
        "jetstream:SESSIONS",
        &into,
        &["tool-batch"],
    );
    assert_eq!(
        std::fs::read(dest.path().join("tool-batch.json")).unwrap(),
        want
    );
    // rm again, then a prune leaves nothing of it under the state home.
    assert_eq!(js(&["rm", "tool-batch", "--yes"]).code, 0);
    let r = js(&["backups", "prune", "--older-than", "0", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kept = home.path().join("state/fisk-admin/removed/SESSIONS");
    let left: Vec<_> = std::fs::read_dir(&kept)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// Issue 36 doubt: a JetStream prune (the backup directory renamed to
/// `<name>.pruning`, then removed) killed after the rename, or half way
/// through the removal, leaves nothing `backups` lists as a backup (no
/// empty one), says a prune is unfinished, and the next prune finishes it;
/// a prune of named ids of which one is already gone prunes the rest and
/// names the one gone.
#[test]
fn a_jetstream_prune_killed_between_its_steps_lists_no_empty_backup_and_the_next_finishes_it() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs-v1");
    let js = |args: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
        ];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    let from = format!("file:{}", s(src.path()));
    let kept = home.path().join("state/fisk-admin/removed/SESSIONS");
    let ids = |r: &Run| -> Vec<String> {
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["id"].as_str().unwrap().to_owned())
            .collect()
    };
    for (step, cut) in [
        ("after the rename", false),
        ("half way through the removal", true),
    ] {
        migrate_via(home.path(), &srv.url, &from, "jetstream:SESSIONS", &[]);
        for run in ["tool-batch", "simple-completed"] {
            let r = js(&["rm", run, "--yes"]);
            assert_eq!(r.code, 0, "{step}: {}", r.stderr);
        }
        let listed = js(&["-o", "json", "backups"]);
        let before = ids(&listed);
        assert_eq!(before.len(), 2, "{step}: {}", listed.stdout);
        // The kill: one backup's directory renamed, and with `cut` one of
        // its files already gone.
        let dir = std::fs::read_dir(&kept)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("tool-batch-")
            })
            .unwrap();
        let mut doomed = dir.clone().into_os_string();
        doomed.push(".pruning");
        std::fs::rename(&dir, &doomed).unwrap();
        if cut {
            let file = std::fs::read_dir(&doomed).unwrap().next().unwrap().unwrap();
            std::fs::remove_file(file.path()).unwrap();
        }
        let r = js(&["-o", "json", "backups"]);
        assert_eq!(r.code, 0, "{step}: {}", r.stderr);
        let now = ids(&r);
        assert_eq!(
            now.len(),
            1,
            "{step}: a half-pruned backup is listed: {}",
            r.stdout
        );
        assert!(now[0].contains("simple-completed"), "{step}: {}", r.stdout);
        // It says a prune is unfinished, with a command carrying this
        // invocation's flags (the named prune below is the one run).
        let [finish] = crate::upgrade::quoted_commands(&r.stderr)
            .try_into()
            .unwrap_or_else(|c: Vec<String>| panic!("{step}: one command: {c:?} {}", r.stderr));
        assert!(
            r.stderr.contains("a prune was interrupted"),
            "{step}: {}",
            r.stderr
        );
        assert!(finish.contains("--server"), "{step}: {finish}");
        for b in r.json().as_array().unwrap() {
            assert_ne!(
                b["bytes"], 0,
                "{step}: an empty backup listed: {}",
                r.stdout
            );
        }
        // Named ids, one of them gone with the killed prune: the rest is
        // pruned, the gone one named, and the unfinished prune finished.
        let mut args = vec!["backups", "prune", "--yes"];
        args.extend(before.iter().map(String::as_str));
        let r = js(&args);
        assert!(
            r.stdout.contains("tool-batch") || r.stderr.contains("tool-batch"),
            "{step}: the id gone is not named: {}{}",
            r.stdout,
            r.stderr
        );
        let left: Vec<_> = std::fs::read_dir(&kept)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            left.is_empty(),
            "{step}: left {left:?}: {}{}",
            r.stdout,
            r.stderr
        );
        let r = js(&["-o", "json", "backups"]);
        assert!(ids(&r).is_empty(), "{step}: {}", r.stdout);
    }
}
