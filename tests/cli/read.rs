//! The reading commands: ls, show, fold, info, and how they treat a store
//! that is live, badly permissioned, or full of hostile text.

use crate::support::*;
use serde_json::Value;
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

#[test]
fn a_held_lock_shows_as_live_without_ls_creating_or_taking_locks() {
    let store = store_copy("runs");
    let lock_path = store.path().join("tool-batch.lock");
    let lock = File::create(&lock_path).unwrap();
    lock.try_lock().unwrap();
    let r = fisk(&["--state-dir", s(store.path()), "ls", "--format", "json"]);
    let runs = r.json();
    let live: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["live"] == Value::Bool(true))
        .map(|x| x["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(live, ["tool-batch"]);
    let v = fisk(&[
        "--state-dir",
        s(store.path()),
        "verify",
        "--format",
        "json",
        "tool-batch",
    ]);
    assert!(
        v.json_lines().iter().any(|f| f["code"] == "live"),
        "{}",
        v.stdout
    );
    let show = fisk(&["--state-dir", s(store.path()), "show", "tool-batch"]);
    assert!(show.stdout.contains("live"), "{}", show.stdout);
    // ls created no lock file for any other run.
    let locks: Vec<String> = std::fs::read_dir(store.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert_eq!(locks.len(), 2, "{locks:?}"); // tool-batch.lock and the shipped simple-completed.lock
    drop(lock);
    let r = fisk(&["--state-dir", s(store.path()), "ls", "--format", "json"]);
    assert!(r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["live"] == Value::Bool(false)));
}

#[test]
fn loose_permissions_and_symlinks_are_reported() {
    let store = store_copy("runs");
    std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let j = store.path().join("tool-batch.json");
    std::fs::set_permissions(&j, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = fisk(&["--state-dir", s(store.path()), "verify", "--format", "json"]);
    let perms: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|f| f["code"] == "permissions")
        .collect();
    assert_eq!(perms.len(), 2, "{perms:?}");
    assert!(perms.iter().any(|f| f["run"] == "tool-batch"));
    assert_eq!(r.code, 0, "warnings only");
}

#[test]
fn hostile_text_never_reaches_the_terminal_raw() {
    let store = store_copy("runs");
    let d = s(store.path());
    for args in [
        vec!["--state-dir", d, "ls"],
        vec!["--state-dir", d, "show", "go-escapes", "--transcript"],
        vec!["--state-dir", d, "fold", "go-escapes"],
        vec!["--state-dir", d, "verify"],
    ] {
        let r = fisk(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        for c in r.stdout.chars() {
            assert!(
                !c.is_control() || c == '\n' || c == '\t',
                "{args:?} printed control character {:?}",
                c
            );
            assert!(!('\u{202a}'..='\u{202e}').contains(&c));
        }
        assert!(!r.stdout.contains('\u{2028}'), "{args:?} printed U+2028");
    }
    let show = fisk(&["--state-dir", d, "show", "go-escapes", "--transcript"]);
    assert!(
        show.stdout.contains("\\u{1b}[31m"),
        "escape made visible: {}",
        show.stdout
    );
}

/// Text no sanitiser may let through: a screen clear, an OSC 52 clipboard
/// write, a C1 CSI, DEL, a right-to-left override, a zero-width space, an
/// Arabic letter mark and a tag character.
const HOSTILE: &str =
    "done\u{1b}[2J\u{1b}]52;c;SGk=\u{7}\u{9b}31m\u{7f}\u{202e}X\u{200b}\u{61c}\u{e0041}";

#[test]
fn a_hostile_terminal_reason_is_neutralised_as_a_status_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let meta = r#"{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"ht","created":"2026-01-01T00:00:00Z","fingerprint":{"provider":"p","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":1,"max_iterations":1},"prompt":"x"}}"#;
    let terminal = serde_json::json!({
        "seq": 2,
        "protocol": "io.choria.fisk-ai.v1.session.terminal",
        "terminal": {"reason": HOSTILE},
    });
    let path = dir.path().join("ht.json");
    std::fs::write(&path, format!("{meta}\n{terminal}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let d = s(dir.path());
    for args in [
        vec!["--state-dir", d, "ls"],
        vec!["--state-dir", d, "show", "ht"],
    ] {
        let r = fisk(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("done\\u{1b}[2J"),
            "{args:?}: {}",
            r.stdout
        );
        assert_printable(&format!("{args:?}"), &r.stdout);
    }
    for args in [
        vec!["--state-dir", d, "ls", "--format", "json"],
        vec!["--state-dir", d, "show", "ht", "--format", "json"],
        vec!["--state-dir", d, "fold", "ht", "--format", "json"],
    ] {
        let r = fisk(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_printable(&format!("{args:?}"), &r.stdout);
        // Escaped, not altered: the JSON still holds the reason as stored.
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let status = if v.is_array() {
            &v[0]["status"]
        } else {
            &v["status"]
        };
        assert_eq!(status, HOSTILE, "{args:?}");
    }
}

#[test]
fn show_names_what_a_waiting_run_waits_on() {
    let store = store_copy("runs");
    let r = fisk(&["--state-dir", s(store.path()), "show", "deferral-waiting"]);
    assert_eq!(r.code, 0);
    // The agent's status rule: suspended, and waiting on a person.
    assert!(r.stdout.contains("status:      suspended"), "{}", r.stdout);
    assert!(
        r.stdout.contains("waiting:     on 1 deferred call"),
        "{}",
        r.stdout
    );
    let waiting = r
        .stdout
        .split("Waiting on")
        .nth(1)
        .expect("a Waiting on section");
    let fold = fisk(&[
        "--state-dir",
        s(store.path()),
        "fold",
        "deferral-waiting",
        "--format",
        "json",
    ])
    .json();
    for d in fold["pending"]["open_deferrals"].as_array().unwrap() {
        assert!(waiting.contains(d["tool_use_id"].as_str().unwrap()));
        assert!(waiting.contains(d["tool_name"].as_str().unwrap()));
    }
    // The exact command, with the store flag and the call's id (b-1).
    let id = fold["pending"]["open_deferrals"][0]["tool_use_id"]
        .as_str()
        .unwrap();
    // Alone on its line, what it reads under it (issue 39, d-22).
    let want = format!(
        "  answer with:\n    fisk-admin --state-dir {} answer deferral-waiting {id}\n    # it reads the answer from standard input",
        s(store.path())
    );
    assert!(waiting.contains(&want), "{waiting}");
}

#[test]
fn show_transcript_prints_prompt_tool_calls_and_output() {
    let store = store_copy("runs");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "show",
        "tool-batch",
        "--transcript",
    ]);
    assert_eq!(r.code, 0);
    // Issue 15: labelled blocks replace `-> tool call` / `<- tool output`.
    assert!(r.stdout.starts_with("Transcript of tool-batch"));
    assert!(r.stdout.contains("[tool_use exec toolu_"));
    assert!(r.stdout.contains("[tool_result toolu_"));
    assert!(r
        .stdout
        .contains("Which of the three JetStream servers is furthest behind?"));
}

#[test]
fn fold_until_seq_stops_at_that_record() {
    let store = store_copy("runs");
    let full = fisk(&[
        "--state-dir",
        s(store.path()),
        "fold",
        "tool-batch",
        "--format",
        "json",
    ])
    .json();
    let early = fisk(&[
        "--state-dir",
        s(store.path()),
        "fold",
        "tool-batch",
        "--until-seq",
        "2",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(early["counters"]["llm_calls"], 1);
    assert!(
        early["pending"].is_object(),
        "the first turn is still open at seq 2"
    );
    assert_eq!(early["status"], "open");
    assert_ne!(early, full);
}

#[test]
fn ids_that_could_escape_the_store_are_refused_before_any_path_is_built() {
    let store = store_copy("runs");
    for bad in ["../runs/tool-batch", "/etc/passwd", ".hidden", "a b"] {
        let r = fisk(&["--state-dir", s(store.path()), "show", bad]);
        assert_eq!(r.code, 2, "{bad}");
        assert!(r.stderr.contains("invalid run id"), "{bad}: {}", r.stderr);
    }
    let r = fisk(&["--state-dir", s(store.path()), "show", "no-such-run"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("no-such-run") && r.stderr.contains("not found"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_relative_xdg_state_home_is_ignored_and_info_says_so() {
    // The XDG spec: a relative $XDG_STATE_HOME is invalid, and ignored.
    let home = tempfile::tempdir().unwrap();
    for xdg in ["", "relative/state"] {
        let out = Command::new(bin())
            .args(["info", "--format", "json"])
            .env_clear()
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", xdg)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["location"],
            s(&home.path().join(".local/state/fisk-ai/runs")),
            "{xdg:?}"
        );
        // The rule, not the path again (c-28).
        assert_eq!(
            v["why"],
            "default, under ~/.local/state (XDG_STATE_HOME is not set to an absolute path)",
            "{xdg:?}"
        );
        assert_eq!(v["chosen_by"], "default", "{xdg:?}");
        assert!(v["setting"].is_null(), "{xdg:?}");
    }
}

#[test]
fn file_store_uris_take_a_local_path_in_either_form() {
    let store = store_copy("runs");
    let url = format!("file://{}", s(store.path()));
    let r = fisk(&["--store", &url, "--format", "json", "ls"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.json().as_array().unwrap().len() > 10);
    let r = fisk(&[
        "--state-dir",
        s(&store.path().join("tool-batch.json")),
        "ls",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is not a directory"), "{}", r.stderr);
    for bad in ["file://", "file://host/runs"] {
        let r = fisk(&["--store", bad, "ls"]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stdout);
        assert!(r.stderr.contains("local directory"), "{bad}: {}", r.stderr);
    }
}

#[test]
fn info_says_which_store_and_why() {
    let home = tempfile::tempdir().unwrap();
    let r = fisk_in(home.path(), &["info", "--format", "json"], None);
    let v = r.json();
    assert_eq!(v["backend"], "file");
    assert_eq!(v["location"], s(&home.path().join("state/fisk-ai/runs")));
    assert!(v["why"].as_str().unwrap().contains("XDG_STATE_HOME"));

    let r = fisk_in(
        home.path(),
        &["--state-dir", "/srv/runs", "info", "--format", "json"],
        None,
    );
    assert_eq!(r.json()["location"], "/srv/runs");
    assert_eq!(r.json()["why"], "--state-dir");

    let agent = home.path().join("agents/agent.yaml");
    std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
    std::fs::write(
        &agent,
        "harness:\n  sessions: {backend: file, options: {directory: ./runs}}\n",
    )
    .unwrap();
    let r = fisk_in(
        home.path(),
        &["--config", s(&agent), "info", "--format", "json"],
        None,
    );
    // Absolute and resolved: `./runs` beside the agent file (b-21).
    let home_real = std::fs::canonicalize(home.path()).unwrap();
    assert_eq!(r.json()["location"], s(&home_real.join("agents/runs")));
    assert!(r.json()["why"]
        .as_str()
        .unwrap()
        .contains("harness.sessions"));

    // The flag wins over the agent file.
    let r = fisk_in(
        home.path(),
        &[
            "--config",
            s(&agent),
            "--state-dir",
            "/x",
            "info",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(r.json()["location"], "/x");
}

#[test]
fn state_dir_with_a_jetstream_store_is_an_error_not_ignored() {
    let home = tempfile::tempdir().unwrap();
    let r = fisk_in(
        home.path(),
        &["--state-dir", "/x", "--store", "jetstream:S", "info"],
        None,
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--state-dir"), "{}", r.stderr);
    let agent = home.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "nats_context: prod\nharness:\n  sessions: {backend: jetstream, options: {stream: S}}\n",
    )
    .unwrap();
    let r = fisk_in(
        home.path(),
        &["--config", s(&agent), "--state-dir", "/x", "info"],
        None,
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--state-dir"), "{}", r.stderr);
}

#[test]
fn a_malformed_agent_file_names_the_file_and_line() {
    let home = tempfile::tempdir().unwrap();
    let agent = home.path().join("agent.yaml");
    std::fs::write(&agent, "harness:\n  sessions: [unclosed\n").unwrap();
    let r = fisk_in(home.path(), &["--config", s(&agent), "info"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("agent.yaml") && r.stderr.contains("line"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let store = store_copy("runs");
    let mut child = Command::new(bin())
        .args([
            "--state-dir",
            s(store.path()),
            "show",
            "perf-large",
            "--transcript",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn ls_filters_and_sorts() {
    let store = store_copy("runs");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "ls",
        "--waiting",
        "--format",
        "json",
    ]);
    let v = r.json();
    let mut ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["run_id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["deferral-partly-answered", "deferral-waiting"]);
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "ls",
        "--sort",
        "size",
        "--format",
        "json",
    ]);
    let sizes: Vec<u64> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bytes"].as_u64().unwrap())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    let text = fisk(&["--state-dir", s(store.path()), "ls"]);
    // Into a pipe: tab-separated fields under a header.
    assert!(text.stdout.starts_with("RUN\t"), "{}", text.stdout);
}

#[test]
fn ls_status_selects_by_status_and_refuses_an_unknown_one() {
    // Issue 14: --status took any string, so a typo listed nothing.
    let store = store_copy("runs");
    let d = s(store.path());
    let ids = |statuses: &[&str]| -> Vec<String> {
        let mut args = vec!["--state-dir", d, "ls", "--format", "json"];
        for st in statuses {
            args.extend(["--status", st]);
        }
        let r = fisk(&args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut ids: Vec<String> = r
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["run_id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&["suspended"]), ["deferral-waiting"]);
    assert_eq!(ids(&["max_iterations"]), ["max-iterations"]);
    assert_eq!(
        ids(&["budget", "error"]),
        ["budget-terminal", "error-terminal"]
    );
    assert_eq!(
        ids(&["waiting"]),
        ["deferral-partly-answered", "deferral-waiting"],
        "waiting is --waiting"
    );

    let r = fisk(&["--state-dir", d, "ls", "--status", "complete"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains("'complete'"), "{}", r.stderr);
    for v in [
        "open",
        "completed",
        "suspended",
        "error",
        "budget",
        "max_iterations",
        "corrupt",
        "live",
        "waiting",
    ] {
        assert!(r.stderr.contains(v), "{v} is not listed: {}", r.stderr);
    }
}

#[test]
fn an_unreadable_journal_is_a_finding_and_verify_goes_on() {
    let store = store_copy("runs");
    std::os::unix::fs::symlink("nowhere.json", store.path().join("dangling.json")).unwrap();
    let r = fisk(&["--state-dir", s(store.path()), "verify", "--format", "json"]);
    assert_eq!(r.code, 1);
    let lines = r.json_lines();
    let about: Vec<&str> = lines
        .iter()
        .filter(|f| f["run"] == "dangling")
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(about, ["symlink", "unreadable"]);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["runs"], 28, "every other run was still verified");
}

/// Run `fisk-admin` and fail the test, instead of hanging it, when it does
/// not end within 20 s.
fn fisk_or_hang(args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let shown = format!("{args:?}");
    std::thread::spawn(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let _ = tx.send(fisk(&args));
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{shown} hung"))
}

#[test]
fn entries_that_are_not_regular_files_are_named_and_never_read() {
    // A FIFO would block an open or a read forever; /dev/zero never ends;
    // a directory is not a journal whatever its name.
    let store = store_copy("runs");
    let d = store.path();
    let made = Command::new("mkfifo")
        .arg(d.join("pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.json")).unwrap();
    std::fs::create_dir(d.join("dir.json")).unwrap();
    let before = tree(d);
    let d = s(d);

    let ls = fisk_or_hang(&["--state-dir", d, "ls", "--format", "json"]);
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    let rows = ls.json();
    let status = |run: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["run_id"] == run)
            .map(|r| r["status"].clone())
    };
    for (run, what) in [
        ("pipe", "a FIFO (named pipe)"),
        ("zero", "a device"),
        ("dir", "a directory"),
    ] {
        assert_eq!(status(run), Some("corrupt".into()), "{run}: {}", ls.stdout);
        let row = rows.as_array().unwrap().iter().find(|r| r["run_id"] == run);
        let problem = row.and_then(|r| r["problem"].as_str()).unwrap_or_default();
        assert!(problem.contains(what), "{run}: {problem}");
    }
    assert_eq!(status("tool-batch"), Some("completed".into()));

    let verify = fisk_or_hang(&["--state-dir", d, "verify", "--format", "json"]);
    assert_eq!(verify.code, 1, "{}", verify.stderr);
    let text = verify.stdout;
    for (run, what) in [
        ("pipe", "a FIFO (named pipe)"),
        ("zero", "a device"),
        ("dir", "a directory"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("\"run\":\"{run}\"")) && l.contains(what)),
            "verify names {run} as {what}:\n{text}"
        );
    }

    for (args, what) in [
        (vec!["show", "pipe"], "FIFO"),
        (vec!["fold", "zero"], "device"),
        (vec!["validate", "pipe"], "FIFO"),
        // The whole store: the others are still validated.
        (vec!["validate"], "FIFO"),
        (vec!["repair", "pipe"], "FIFO"),
        // The commands that write never go through a link at all.
        (vec!["repair", "--dry-run", "zero"], "is a symbolic link"),
        (vec!["rm", "--yes", "dir"], "directory"),
        (vec!["answer", "pipe", "t1", "--content", "x"], "FIFO"),
    ] {
        let mut full = vec!["--state-dir", d];
        full.extend(&args);
        let r = fisk_or_hang(&full);
        assert!(
            r.code != 0 && r.code != 101,
            "{args:?}: {} {}",
            r.code,
            r.stderr
        );
        assert!(r.stderr.contains(what), "{args:?}: {}", r.stderr);
        let fix = match what {
            "is a symbolic link" => "replace it with the file it points to",
            _ => "move it out of the store",
        };
        assert!(r.stderr.contains(fix), "{args:?}: {}", r.stderr);
    }
    assert_eq!(
        tree(store.path()),
        before,
        "nothing created, changed or removed"
    );
}

#[test]
fn repair_dry_run_takes_no_lock_and_creates_nothing() {
    let store = store_copy("damaged");
    let before = tree(store.path());
    assert!(!store.path().join("torn-tail.lock").exists());
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "repair",
        "--dry-run",
        "torn-tail",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("would"), "{}", r.stdout);
    assert_eq!(tree(store.path()), before);
    // A live run: the dry run says a repair would be refused.
    let lock = File::create(store.path().join("torn-tail.lock")).unwrap();
    lock.lock().unwrap();
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "repair",
        "--dry-run",
        "torn-tail",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("torn-tail"), "{}", r.stderr);
}

/// Every entry of a directory (not followed into links) with its type and
/// bytes, to show that nothing changed.
fn tree(dir: &std::path::Path) -> Vec<(String, String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let ft = e.file_type().unwrap();
            let bytes = if ft.is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (
                e.file_name().to_string_lossy().into_owned(),
                format!("{ft:?}"),
                bytes,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn ls_says_why_a_run_is_corrupt_and_only_then() {
    let store = store_copy("damaged");
    let r = fisk(&["--state-dir", s(store.path()), "ls", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = r.json();
    let rows = rows.as_array().unwrap();
    assert!(rows.iter().any(|x| x["status"] == "corrupt"));
    for row in rows {
        let problem = &row["problem"];
        if row["status"] == "corrupt" {
            let p = problem.as_str().unwrap_or_default();
            assert!(p.contains(".json"), "names the file: {row}");
            assert!(!p.contains("line 0"), "no made-up line: {row}");
        } else {
            assert!(problem.is_null(), "{row}");
        }
    }
}

#[test]
fn a_fold_refusal_names_the_file_line_and_byte_of_the_record() {
    let store = store_copy("damaged");
    let d = s(store.path());
    // The second record with seq 5 is line 6, at byte 1222.
    let text = std::fs::read_to_string(store.path().join("seq-not-increasing.json")).unwrap();
    let offset: usize = text.lines().take(5).map(|l| l.len() + 1).sum();
    let want = format!("seq-not-increasing.json line 6 (byte {offset})");
    for args in [
        vec!["--state-dir", d, "fold", "seq-not-increasing"],
        vec!["--state-dir", d, "show", "seq-not-increasing"],
    ] {
        let r = fisk(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(&want), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("seq 5 does not increase"), "{}", r.stderr);
    }
    let r = fisk(&["--state-dir", d, "fold", "tool-batch", "--until-seq", "0"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--until-seq 0"), "{}", r.stderr);
}

#[test]
fn show_prints_a_deeply_nested_tool_input_as_fold_does() {
    let store = store_copy("runs");
    let path = store.path().join("error-terminal.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find("\"input\":").unwrap() + "\"input\":".len();
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let text = format!("{}{{\"was\":{deep},{}", &text[..at], &text[at + 1..]);
    std::fs::write(&path, text).unwrap();
    let d = s(store.path());
    let fold = fisk(&[
        "--state-dir",
        d,
        "fold",
        "error-terminal",
        "--format",
        "json",
    ]);
    assert_eq!(fold.code, 0, "{}", fold.stderr);
    let show = fisk(&[
        "--state-dir",
        d,
        "show",
        "error-terminal",
        "--format",
        "json",
    ]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(show.stdout.contains(&deep) && show.stdout.contains("\"records\": "));
}

#[test]
fn validate_file_refuses_a_store_flag_or_all_beside_it() {
    let store = store_copy("runs");
    let file = store.path().join("tool-batch.json");
    let file = s(&file);
    let d = s(store.path());
    for args in [
        vec!["validate", "--file", file, "--all"],
        vec!["--state-dir", d, "validate", "--file", file],
    ] {
        let r = fisk(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
    }
    let r = fisk(&["validate", "--file", file]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_missing_agent_file_is_named_as_the_config_flag() {
    let r = fisk(&["--config", "/nonexistent/agent.yaml", "ls"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("/nonexistent/agent.yaml") && r.stderr.contains("--config"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_store_directory_its_owner_cannot_write_is_named_as_such() {
    let store = store_copy("runs");
    std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o500)).unwrap();
    let r = fisk(&["--state-dir", s(store.path()), "verify", "--format", "json"]);
    std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let dir = r
        .json_lines()
        .into_iter()
        .find(|f| f["code"] == "permissions" && f["run"] == s(store.path()))
        .unwrap_or_else(|| panic!("no finding on the directory: {}", r.stdout));
    let message = dir["message"].as_str().unwrap();
    assert!(message.contains("mode 0500"), "{message}");
    assert!(
        message.contains("cannot create or delete runs"),
        "{message}"
    );
    assert!(!message.contains("other users"), "{message}");
}

/// Issue 13: times are compared as instants, whatever their offsets: a
/// run created at 10:00+05:00 (05:00Z) is older than one created at 06:00Z,
/// though its text sorts after it.
#[test]
fn ls_sorts_times_as_instants_across_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("runs-v1/simple-completed.json")).unwrap();
    for (id, created, last) in [
        (
            "east",
            "2026-09-22T10:00:00+05:00",
            "2026-09-22T23:00:00+05:00",
        ),
        ("west", "2026-09-22T06:00:00Z", "2026-09-22T17:30:00-01:00"),
    ] {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines[0] = lines[0]
            .replace(
                "\"run_id\":\"simple-completed\"",
                &format!("\"run_id\":\"{id}\""),
            )
            .replace(
                "\"created\":\"2026-11-02T09:14:03.5121Z\"",
                &format!("\"created\":\"{created}\""),
            );
        let n = lines.len() - 1;
        let t = lines[n]
            .split("\"time\":\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_owned();
        lines[n] = lines[n].replace(&t, last);
        std::fs::write(
            dir.path().join(format!("{id}.json")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    let order = |key: &str| -> Vec<String> {
        let r = fisk(&[
            "--state-dir",
            s(dir.path()),
            "ls",
            "--sort",
            key,
            "-o",
            "json",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["run_id"].as_str().unwrap().to_owned())
            .collect()
    };
    // Newest first. Created: west (06:00Z) after east (05:00Z). Updated:
    // east ended 18:00Z, west 18:30Z.
    assert_eq!(order("created"), ["west", "east"]);
    assert_eq!(order("updated"), ["west", "east"]);
    let r = fisk(&["--state-dir", s(dir.path()), "ls", "-o", "json"]);
    let v = r.json();
    let east = v
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["run_id"] == "east")
        .unwrap();
    // Written as the journal has it, offset kept.
    assert_eq!(east["created"], "2026-09-22T10:00:00+05:00");
    assert_eq!(east["updated"], "2026-09-22T23:00:00+05:00");
}

/// Issue 14: the binary keeps the library's error, so a refusal about a
/// line of a journal shows that line, labelled, as verify does.
#[test]
fn a_fold_refusal_shows_the_offending_line() {
    let store = store_copy("damaged");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "fold",
        "interior-corruption",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("interior-corruption.json:3:207"),
        "{}",
        r.stderr
    );
    // The part of the line around where it stops parsing (issue 23.7).
    assert!(r.stderr.contains(" 3 │ …\""), "{}", r.stderr);
    assert!(r.stderr.contains("}}}{\"seq\":4,"), "{}", r.stderr);
    assert_printable("fold refusal", &r.stderr);
}

/// A journal that is a symbolic link to a file outside the store is never
/// read: verify, validate, show, fold and ls name the link and print none
/// of the target's bytes (issue 18: `x.json -> /etc/shadow`).
#[test]
fn a_journal_linked_to_a_file_outside_the_store_is_never_read() {
    let store = store_copy("runs");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.json");
    std::fs::write(&secret, "root:SECRET-HASH-1234:19000:0:99999:7:::\n").unwrap();
    std::os::unix::fs::symlink(&secret, store.path().join("evil.json")).unwrap();
    let d = s(store.path());
    for args in [
        vec!["verify"],
        vec!["verify", "--format", "json"],
        vec!["verify", "evil", "--details"],
        vec!["validate", "--all"],
        vec!["show", "evil"],
        vec!["fold", "evil"],
        vec!["ls"],
        vec!["ls", "--format", "json"],
        vec!["search", "--match", "SECRET", "--in", "all", "-o", "json"],
    ] {
        let mut all = vec!["--state-dir", d];
        all.extend(&args);
        let r = fisk(&all);
        assert!(
            !r.stdout.contains("SECRET-HASH") && !r.stderr.contains("SECRET-HASH"),
            "{args:?} printed the link target's bytes:\n{}{}",
            r.stdout,
            r.stderr
        );
    }
    let r = fisk(&["--state-dir", d, "fold", "evil"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("outside the store directory: it is not read"),
        "{}",
        r.stderr
    );
    let r = fisk(&["--state-dir", d, "verify", "evil", "--format", "json"]);
    let codes: Vec<String> = r
        .json_lines()
        .iter()
        .filter_map(|f| f["code"].as_str().map(str::to_owned))
        .collect();
    assert!(
        codes.iter().any(|c| c == "symlink") && codes.iter().any(|c| c == "unreadable"),
        "{codes:?}"
    );
}

/// b-27, small but misleading: `show` lists a standing approval once (with
/// how many decisions named it), `validate` of runs counts RUNS, and `rm`
/// reports only names the run had (not a lock file it made to take the
/// lock).
#[test]
fn show_validate_and_rm_say_exactly_what_is_there() {
    let store = store_copy("runs");
    let d = s(store.path()).to_owned();
    let r = fisk(&["--state-dir", &d, "show", "approvals"]);
    assert!(
        r.stdout
            .contains("standing: exec (2 decisions), read_file\n"),
        "{}",
        r.stdout
    );
    let r = fisk(&["--state-dir", &d, "validate", "approvals"]);
    assert!(
        r.stdout.contains("RUNS") && !r.stdout.contains("FILES"),
        "{}",
        r.stdout
    );
    // b-26: a run named that is not there is refused before any output.
    let r = fisk(&["--state-dir", &d, "validate", "approvalz"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "no summary table first: {}", r.stdout);
    assert!(
        r.stderr.contains("did you mean `approvals`?"),
        "{}",
        r.stderr
    );
    assert!(!store.path().join("approvals.lock").exists());
    // A person approved its tools since it was suspended: ready to
    // resume, which rm takes only with --force (issue 35).
    let r = fisk(&["--state-dir", &d, "rm", "approvals", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("ready to resume"), "{}", r.stderr);
    assert!(store.path().join("approvals.json").exists());
    let r = fisk(&["--state-dir", &d, "rm", "approvals", "--yes", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("approvals.json"), "{}", r.stdout);
    assert!(!r.stdout.contains("approvals.lock"), "{}", r.stdout);
    assert!(
        !store.path().join("approvals.lock").exists(),
        "and it is gone"
    );
}

/// `show` of a run damaged inside (issue 23.7) says where: the snippet's
/// header is `file:line:column` of the byte Go's scanner stops at, the
/// caret under it (not at column 1), and the help gives the complete
/// command that reads the run up to the damage, which works as printed.
#[test]
fn interior_corruption_points_at_its_byte_and_says_how_to_read_up_to_it() {
    for (dir, col, seq) in [("damaged", 207, 2), ("damaged-v1", 0, 0)] {
        let d = testdata(dir).display().to_string();
        let path = testdata(dir).join("interior-corruption.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let bad = text.lines().nth(2).unwrap();
        // Where Go stops on the third line, and the seq before it.
        let (col, seq) = if col == 0 {
            let stop = bad
                .char_indices()
                .skip(1)
                .find(|(i, _)| serde_json::from_str::<Value>(&bad[..*i]).is_ok())
                .map_or(1, |(i, _)| i + 1);
            let prev: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
            (stop, prev["seq"].as_u64().unwrap())
        } else {
            (col, seq)
        };
        for cmd in ["show", "fold"] {
            let r = fisk(&["--state-dir", &d, cmd, "interior-corruption"]);
            assert_eq!(r.code, 2, "{}", r.stderr);
            assert!(
                r.stderr
                    .contains(&format!("interior-corruption.json:3:{col}]")),
                "{dir} {cmd}: {}",
                r.stderr
            );
            // The caret is under the byte the snippet shows at that column.
            let lines: Vec<&str> = r.stderr.lines().collect();
            let snippet = lines.iter().find(|l| l.starts_with(" 3 │ ")).unwrap();
            let caret = lines.iter().find(|l| l.contains('▲')).unwrap();
            let at = caret.chars().position(|c| c == '▲').unwrap();
            let shown: String = snippet.chars().skip(at).take(8).collect();
            let want: String = bad.chars().skip(col - 1).take(8).collect();
            assert_eq!(shown, want, "{dir} {cmd}:\n{}", r.stderr);
            let want =
                format!("`fisk-admin --state-dir {d} show interior-corruption --until-seq {seq}`");
            let help: String = r.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(help.contains(&want), "{dir} {cmd}: {}", r.stderr);
        }
        let r = fisk(&[
            "--state-dir",
            &d,
            "show",
            "interior-corruption",
            "--until-seq",
            &seq.to_string(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains(&format!("as of seq {seq}")),
            "{}",
            r.stdout
        );
    }
}
