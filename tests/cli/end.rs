//! `end` (issue 26, SPEC 6.1): an open run that crashed closed with one
//! terminal record the agent reads, on both generations and both
//! backends; its refusals; the selection by filter and age; the
//! confirmation on a real terminal (tmux) and on a pipe.

use crate::nats_support::NatsServer;
use crate::schema::{assert_valid, output_validator};
use crate::support::*;
use crate::viewer::Tmux;
use serde_json::Value;
use std::path::Path;

fn end_in(store: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let home = tempfile::tempdir().unwrap();
    let mut all = vec!["--state-dir", s(store), "end"];
    all.extend_from_slice(args);
    fisk_in(home.path(), &all, stdin)
}

fn end_json(store: &Path, args: &[&str]) -> (Run, Value) {
    let home = tempfile::tempdir().unwrap();
    let mut all = vec!["--state-dir", s(store), "-o", "json", "end"];
    all.extend_from_slice(args);
    let r = fisk_in(home.path(), &all, None);
    let doc = r.json();
    assert_valid(&output_validator("end.json"), &doc, "end");
    (r, doc)
}

/// `ls -o json`'s status of `run`.
fn status(store: &Path, run: &str) -> String {
    let r = fisk(&["--state-dir", s(store), "ls", "-o", "json"]);
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["run_id"] == run)
        .unwrap_or_else(|| panic!("{run} not listed"))["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `verify`'s findings of `run` other than version-3 (a generation, not a
/// fault) and info.
fn faults(store: &Path, run: &str) -> Vec<Value> {
    let r = fisk(&["--state-dir", s(store), "verify", run, "-o", "json"]);
    r.json_lines()
        .into_iter()
        .filter(|f| f.get("summary").is_none())
        .filter(|f| f["code"] != "version-3" && f["severity"] != "info")
        .collect()
}

fn bytes(store: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap_or_default(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn an_open_run_is_ended_in_its_own_generation_and_ls_and_verify_agree() {
    for (dir, timed) in [("runs-v1", true), ("runs", false)] {
        let store = store_copy(dir);
        let run = "open-no-terminal";
        assert_eq!(status(store.path(), run), "open");
        let before = std::fs::read(store.path().join(format!("{run}.json"))).unwrap();
        let msg = "worker lost in the <reboot>; \"ended\" by ops";
        let (r, doc) = end_json(store.path(), &[run, "--yes", "--message", msg]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let row = &doc[0];
        assert_eq!(row["outcome"], "ended");
        assert_eq!(row["reason"], "error");
        assert_eq!(row["seq"], 5);
        let rec = &row["record"];
        assert_eq!(rec["terminal"]["message"], msg, "stored exactly");
        assert_eq!(rec["terminal"]["reason"], "error");
        // Version 1 carries the summary the agent's runner writes on a
        // terminal (its List shows it); version 3 none.
        assert_eq!(
            rec["terminal"].get("summary").is_some(),
            timed,
            "{dir}: {rec}"
        );
        assert_eq!(rec.get("time").is_some(), timed, "{dir}: {rec}");
        // One line appended, nothing else touched.
        let after = std::fs::read(store.path().join(format!("{run}.json"))).unwrap();
        assert!(after.starts_with(&before));
        assert_eq!(
            after[before.len()..]
                .iter()
                .filter(|b| **b == b'\n')
                .count(),
            1
        );
        assert_eq!(status(store.path(), run), "error");
        assert_eq!(faults(store.path(), run), Vec::<Value>::new(), "{dir}");
        // Once ended, there is nothing to end.
        let r = end_in(store.path(), &[run, "--yes"], None);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("end has nothing to do"), "{}", r.stderr);
        // Suspended leaves it resumable; --message '' writes none.
        let (r, doc) = end_json(
            store.path(),
            &[
                "pending-batch",
                "--yes",
                "--reason",
                "suspended",
                "--message",
                "",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let terminal = &doc[0]["record"]["terminal"];
        assert_eq!(terminal["reason"], "suspended");
        assert!(terminal.get("message").is_none(), "{terminal}");
        assert_eq!(status(store.path(), "pending-batch"), "suspended");
    }
}

/// Issue 39, d-28: without --message the terminal says fisk-admin's end
/// closed the run, so `ls --status error` tells the night's cleanup from
/// a provider's failure (at b926494 the record carried no message and
/// the MESSAGE column read `-`); d-25: its wall clock counts to the run's
/// last activity, not to the `end` written long after.
#[test]
fn a_run_end_closes_says_so_and_its_wall_clock_stops_at_its_last_activity() {
    let store = store_copy("runs-v1");
    let d = store.path();
    let (r, _) = end_json(d, &["open-no-terminal", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ls = fisk(&[
        "--state-dir",
        s(d),
        "ls",
        "--status",
        "error",
        "--columns",
        "run,message",
    ]);
    let row = ls
        .stdout
        .lines()
        .find(|l| l.starts_with("open-no-terminal\t"))
        .unwrap_or_else(|| panic!("{}", ls.stdout));
    assert_eq!(
        row,
        "open-no-terminal\tended by fisk-admin end: no writer finished the run"
    );
    let provider = ls
        .stdout
        .lines()
        .find(|l| l.starts_with("error-terminal\t"))
        .unwrap();
    assert!(provider.contains("anthropic: 529"), "{provider}");
    // The wall clock of stats --all is what it was before the end.
    let wall = |args: &[&str]| {
        let mut all = vec![
            "--state-dir",
            s(d),
            "stats",
            "--all",
            "--prefix",
            "open-no-terminal",
        ];
        all.extend_from_slice(args);
        all.extend(["-o", "json"]);
        fisk(&all).json()["totals"]["wall_clock_ns"].clone()
    };
    let after = wall(&[]);
    let r = fisk(&["--state-dir", s(d), "stats", "open-no-terminal"]);
    assert!(r.stdout.contains("wall clock"), "{}", r.stdout);
    let secs = after.as_i64().unwrap() / 1_000_000_000;
    assert!(
        secs < 86_400,
        "the end, written today, is not counted: {secs}s"
    );
}

#[test]
fn live_waiting_and_ended_runs_are_refused_and_left_alone() {
    let store = store_copy("runs-v1");
    let was = bytes(store.path());
    // Ended.
    let r = end_in(store.path(), &["simple-completed", "--yes"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("is ended completed; end has nothing to do"),
        "{}",
        r.stderr
    );
    // Waiting on a person.
    let r = end_in(store.path(), &["deferral-partly-answered", "--yes"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("waiting on a person's answer"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    // Live: a writer holds the lock.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(store.path().join("open-no-terminal.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let r = end_in(store.path(), &["open-no-terminal", "--yes"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("live"), "{}", r.stderr);
    drop(lock);
    let _ = std::fs::remove_file(store.path().join("open-no-terminal.lock"));
    assert_eq!(bytes(store.path()), was, "a refusal wrote something");
    // An unknown run: nothing written either.
    let r = end_in(store.path(), &["no-such-run", "--yes"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // Named and forced, the waiting run is ended, and says what it
    // dropped (`--even-if-waiting` is the old word for it).
    let (r, doc) = end_json(
        store.path(),
        &["deferral-partly-answered", "--yes", "--even-if-waiting"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(doc[0]["waiting_on"].as_array().unwrap().len(), 1);
    assert_eq!(status(store.path(), "deferral-partly-answered"), "error");
}

#[test]
fn a_filter_selects_open_runs_by_age_and_a_dry_run_writes_nothing() {
    let store = store_copy("runs");
    // Version 3 has no times: the last activity is the file's mtime.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 24 * 3600);
    for run in ["open-no-terminal", "pending-batch", "simple-completed"] {
        let f = std::fs::File::options()
            .write(true)
            .open(store.path().join(format!("{run}.json")))
            .unwrap();
        f.set_modified(old).unwrap();
    }
    let was = bytes(store.path());
    // No selection at all is refused: it would be the whole store.
    let r = end_in(store.path(), &["--yes"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("no run named and no filter"),
        "{}",
        r.stderr
    );
    let args = ["--status", "open", "--older-than", "2d", "--dry-run"];
    let (r, doc) = end_json(store.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut runs: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            assert_eq!(x["outcome"], "would-end");
            x["run"].as_str().unwrap()
        })
        .collect();
    runs.sort_unstable();
    // simple-completed is old but not open.
    assert_eq!(runs, ["open-no-terminal", "pending-batch"]);
    let text = end_in(store.path(), &args, None);
    assert!(
        text.stdout
            .contains("would end open-no-terminal (version 3, seq 5)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("dry run, nothing was written"),
        "{}",
        text.stdout
    );
    assert_eq!(bytes(store.path()), was, "a dry run wrote something");
    // On a pipe without --yes: refused, nothing written.
    let r = end_in(
        store.path(),
        &["--status", "open", "--older-than", "2d"],
        Some(b"y\n"),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no terminal to ask on"), "{}", r.stderr);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    assert_eq!(bytes(store.path()), was);
    // With --yes, exactly those two.
    let (r, doc) = end_json(
        store.path(),
        &["--status", "open", "--older-than", "2d", "--yes"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(doc.as_array().unwrap().len(), 2);
    assert_eq!(status(store.path(), "open-no-terminal"), "error");
    assert_eq!(status(store.path(), "optional-telemetry"), "open");
}

/// Issue 35.1 (the operator's d-1): a run a person answered or approved,
/// and nobody resumed yet, is ready to resume; the cleanup README
/// recommends (`end --status open --older-than ...`) leaves it, and every
/// run waiting on a person, and says how many and why; named, it needs
/// --force; the runs that crashed are ended. The agent's own journals.
#[test]
fn the_cleanup_leaves_a_run_a_person_acted_on_and_says_so() {
    for g in ["v1", "v3"] {
        let store = tempfile::tempdir().unwrap();
        let corpus = repo().join("testdata/agent-journals").join(g);
        for run in [
            "g-deferral-answered-unresumed",
            "g-call-approval-after-suspend",
            "g-deferral-waiting",
            "g-deferral-two-one-answered",
            "g-pending-crash",
            "g-memory-after-terminal",
        ] {
            let to = store.path().join(format!("{run}.json"));
            std::fs::copy(corpus.join(format!("{run}.json")), &to).unwrap();
        }
        private(store.path());
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for e in std::fs::read_dir(store.path()).unwrap() {
            let f = std::fs::File::options()
                .write(true)
                .open(e.unwrap().path())
                .unwrap();
            f.set_modified(old).unwrap();
        }
        let ls = fisk(&["--state-dir", s(store.path()), "ls", "-o", "json"]).json();
        let state = |run: &str| {
            ls.as_array()
                .unwrap()
                .iter()
                .find(|x| x["run_id"] == run)
                .unwrap()["state"]
                .clone()
        };
        assert_eq!(state("g-deferral-answered-unresumed"), "ready", "{g}");
        assert_eq!(state("g-call-approval-after-suspend"), "ready", "{g}");
        assert_eq!(state("g-memory-after-terminal"), "ended", "{g}");
        let was = bytes(store.path());
        // Version 1 records carry their own times; version 3 the mtime.
        let age = if g == "v1" { "1s" } else { "30m" };
        let args = ["--status", "open", "--older-than", age, "--yes"];
        let dry: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| *a != "--yes")
            .chain(["--dry-run"])
            .collect();
        let (r, dry_doc) = end_json(store.path(), &dry);
        assert_eq!(r.code, 0, "{g}: {}", r.stderr);
        assert_eq!(bytes(store.path()), was, "{g}: a dry run wrote");
        let (r, doc) = end_json(store.path(), &args);
        assert_eq!(r.code, 0, "{g}: {}", r.stderr);
        let outcome = |doc: &Value, run: &str| {
            doc.as_array()
                .unwrap()
                .iter()
                .find(|x| x["run"] == run)
                .map(|x| x["outcome"].as_str().unwrap().to_owned())
        };
        // Suspended, waiting on an answer: not open, never selected.
        assert_eq!(outcome(&doc, "g-deferral-waiting"), None, "{g}");
        for run in [
            "g-deferral-answered-unresumed",
            "g-call-approval-after-suspend",
            "g-deferral-two-one-answered",
        ] {
            assert_eq!(outcome(&doc, run).as_deref(), Some("left"), "{g} {run}");
            assert_eq!(outcome(&dry_doc, run).as_deref(), Some("left"), "{g} {run}");
            let path = store.path().join(format!("{run}.json"));
            let before = &was
                .iter()
                .find(|(n, _)| n == &format!("{run}.json"))
                .unwrap()
                .1;
            assert_eq!(&std::fs::read(path).unwrap(), before, "{g} {run}");
        }
        assert_eq!(outcome(&doc, "g-pending-crash").as_deref(), Some("ended"));
        assert_eq!(
            outcome(&dry_doc, "g-pending-crash").as_deref(),
            Some("would-end")
        );
        // At rest by its terminal (a memory revision after it): not open.
        assert_eq!(outcome(&doc, "g-memory-after-terminal"), None);
        // The text says what it left, and why.
        let store2 = tempfile::tempdir().unwrap();
        let to = store2.path().join("g-deferral-answered-unresumed.json");
        std::fs::copy(corpus.join("g-deferral-answered-unresumed.json"), &to).unwrap();
        private(store2.path());
        let r = end_in(store2.path(), &["--status", "open", "--yes"], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains("left 1 run(s) to a person (1 ready)"),
            "{}",
            r.stdout
        );
        // Named, without --force: refused, naming resume and --force.
        let r = end_in(
            store2.path(),
            &["g-deferral-answered-unresumed", "--yes"],
            None,
        );
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("ready to resume"), "{}", r.stderr);
        assert!(
            r.stderr.contains("resume g-deferral-answered-unresumed"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("--force"), "{}", r.stderr);
    }
}

#[test]
fn the_question_is_asked_on_a_real_terminal() {
    let store = store_copy("runs-v1");
    let t = Tmux::start(160, 40);
    let cmd = |run: &str| {
        format!(
            "{} --state-dir {} end {run} --message 'gone for good'",
            s(&bin()),
            s(store.path())
        )
    };
    // A dry run on a terminal lists and asks nothing.
    t.type_line(&format!("{} --dry-run", cmd("open-no-terminal")));
    t.wait_for("the dry run", |sc| {
        sc.contains("would end open-no-terminal (version 1, seq 5)")
            && sc.contains("dry run, nothing was written")
            && !sc.contains("[y/N]")
    });
    assert_eq!(status(store.path(), "open-no-terminal"), "open");
    t.type_line("clear");
    // No: nothing written.
    t.type_line(&cmd("open-no-terminal"));
    t.wait_for("the question", |sc| {
        sc.contains("end 1 run(s) with reason error, message \"gone for good\"? [y/N]")
    });
    t.type_line("n");
    t.wait_for("the refusal", |sc| {
        sc.contains("not confirmed; nothing was written")
    });
    assert_eq!(status(store.path(), "open-no-terminal"), "open");
    // Yes: ended.
    t.type_line("clear");
    t.type_line(&cmd("open-no-terminal"));
    t.wait_for("the question", |sc| {
        sc.contains("[y/N]") && sc.contains("open-no-terminal (version 1, seq 5)")
    });
    t.type_line("y");
    t.wait_for("the outcome", |sc| {
        sc.contains("ended open-no-terminal (version 1, seq 5)")
    });
    assert_eq!(status(store.path(), "open-no-terminal"), "error");
}

#[test]
fn an_open_run_on_jetstream_is_held_then_ended_with_force() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    // A stream per generation: the two share run ids.
    for (dir, stream, subject) in [("runs", "V3", "v3.>"), ("runs-v1", "V1", "v1.>")] {
        srv.spec_stream(stream, subject);
        let to = format!("jetstream:{stream}");
        let src = store_copy(dir);
        let js = |args: &[&str]| {
            let mut all = vec!["--server", srv.url.as_str(), "--store", to.as_str()];
            all.extend_from_slice(args);
            fisk_in(home.path(), &all, None)
        };
        let from = format!("file:{}", s(src.path()));
        let r = fisk_in(
            home.path(),
            &[
                "--server", &srv.url, "migrate", "--from", &from, "--to", &to, "--all",
            ],
            None,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        // Just copied: its last record is younger than the hold.
        let r = js(&["end", "pending-batch", "--yes"]);
        assert_eq!(r.code, 1, "{dir}: {}", r.stderr);
        let r = js(&[
            "-o",
            "json",
            "end",
            "pending-batch",
            "--yes",
            "--force",
            "--message",
            "m",
        ]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let doc = r.json();
        assert_valid(&output_validator("end.json"), &doc, "end on JetStream");
        assert_eq!(doc[0]["record"]["terminal"]["message"], "m");
        let ls = js(&["-o", "json", "ls"]);
        let row = ls
            .json()
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["run_id"] == "pending-batch")
            .cloned()
            .unwrap();
        assert_eq!(row["status"], "error", "{dir}");
        assert_eq!(row["version"], if dir == "runs" { 3 } else { 1 });
        let v = js(&["-o", "json", "verify", "pending-batch"]);
        let bad: Vec<Value> = v
            .json_lines()
            .into_iter()
            .filter(|f| f.get("summary").is_none())
            .filter(|f| f["code"] != "version-3" && f["severity"] != "info")
            .collect();
        assert!(bad.is_empty(), "{dir}: {bad:?}");
    }
}
