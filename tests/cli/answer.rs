//! `answer` (SPEC 6): every refusal has its own message, exits 1 and leaves
//! the journal byte for byte as it was; a success appends exactly one
//! ordinary tool_result record.

use crate::support::*;
use serde_json::json;

/// A run suspended waiting on `d1`, with `e1` answered in the same batch.
fn waiting() -> Fixture {
    let f = Fixture::new(&[
        turn(
            "checking",
            &[
                ("e1", "exec", json!({"command": "echo ok"})),
                (
                    "d1",
                    "defer",
                    json!({"note": "sign-off", "handle": "SEC-1"}),
                ),
            ],
        ),
        turn("done", &[]),
    ]);
    let r = f.run("w", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    f
}

fn refused_unchanged(f: &Fixture, run: &str, args: &[&str], needle: &str) {
    let before = f.bytes(run);
    let r = f.store(args);
    assert_eq!(r.code, 1, "stdout {} stderr {}", r.stdout, r.stderr);
    assert!(r.stderr.contains(needle), "{needle:?} not in {}", r.stderr);
    assert_eq!(f.bytes(run), before, "a refusal changed the journal");
}

#[test]
fn answering_a_call_that_was_never_deferred_is_refused() {
    let f = waiting();
    refused_unchanged(
        &f,
        "w",
        &["answer", "w", "nope", "--content", "x"],
        "not deferred",
    );
}

#[test]
fn answering_a_pending_call_that_was_not_deferred_is_refused() {
    let f = Fixture::new(&[]);
    let runs = f.runs();
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::copy(
        testdata("runs/pending-batch.json"),
        f.journal("pending-batch"),
    )
    .unwrap();
    refused_unchanged(
        &f,
        "pending-batch",
        &[
            "answer",
            "pending-batch",
            "toolu_01p9or5uCSRq159isq8kgHtp",
            "--content",
            "x",
        ],
        "not deferred",
    );
}

#[test]
fn answering_an_answered_call_is_refused() {
    let f = waiting();
    refused_unchanged(
        &f,
        "w",
        &["answer", "w", "e1", "--content", "x"],
        "already answered",
    );
}

#[test]
fn answering_twice_is_refused_even_once_the_turn_has_closed() {
    let f = waiting();
    let r = f.store(&["answer", "w", "d1", "--content", "yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The batch is now fully answered: the fold commits the turn and the
    // answer sits in the conversation, not in a pending batch.
    assert!(f.fold("w")["pending"].is_null());
    refused_unchanged(
        &f,
        "w",
        &["answer", "w", "d1", "--content", "again"],
        "already answered",
    );
}

#[test]
fn answering_a_run_without_a_pending_batch_is_refused() {
    let f = Fixture::new(&[turn("all done", &[])]);
    assert_eq!(f.run("c", "go").code, 0);
    refused_unchanged(
        &f,
        "c",
        &["answer", "c", "x", "--content", "x"],
        "no pending batch",
    );
}

#[test]
fn answering_with_more_than_256_kib_is_refused() {
    let f = waiting();
    let big = vec![b'a'; 256 * 1024 + 1];
    std::fs::write(f.path("big.txt"), &big).unwrap();
    let big_path = f.path("big.txt");
    refused_unchanged(
        &f,
        "w",
        &["answer", "w", "d1", "--content-file", s(&big_path)],
        "256 KiB",
    );
    let before = f.bytes("w");
    let runs = f.runs();
    let r = f.fisk_stdin(&["--state-dir", s(&runs), "answer", "w", "d1"], &big);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(f.bytes("w"), before);
}

#[test]
fn an_empty_answer_is_refused_unless_given_on_purpose() {
    let f = waiting();
    // No --content and nothing on standard input (a script or cron job).
    refused_unchanged(&f, "w", &["answer", "w", "d1"], "is empty");
    std::fs::write(f.path("empty.txt"), b"").unwrap();
    let empty = f.path("empty.txt");
    refused_unchanged(
        &f,
        "w",
        &["answer", "w", "d1", "--content-file", s(&empty)],
        "is empty",
    );
    let r = f.store(&["answer", "w", "d1", "--content", ""]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let last = String::from_utf8(f.bytes("w")).unwrap();
    let last: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    assert_eq!(last["tool_result"]["tool_use_id"], "d1", "{last}");
}

#[test]
fn answering_a_live_run_is_refused() {
    let f = waiting();
    let _lock = f.hold_lock("w");
    refused_unchanged(&f, "w", &["answer", "w", "d1", "--content", "x"], "is live");
}

#[test]
fn an_answer_appends_exactly_one_tool_result_and_says_how_to_resume() {
    let f = waiting();
    let before = f.bytes("w");
    let runs = f.runs();
    let r = f.fisk_stdin(
        &[
            "--state-dir",
            s(&runs),
            "answer",
            "w",
            "d1",
            "--is-error",
            "--format",
            "json",
        ],
        b"denied <by> security & co",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = r.json();
    // Complete but for the agent file, which the journal does not name:
    // resume asks for it, and JSON says so.
    assert_eq!(
        out["resume"],
        serde_json::json!({
            "argv": ["fisk-admin", "--state-dir", s(&f.runs()), "resume", "w"],
            "supply": ["agent"],
        })
    );
    let after = f.bytes("w");
    assert!(after.starts_with(&before), "the answer must only append");
    let added = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert_eq!(added.lines().count(), 1);
    // `run` made a version-1 run: the answer is stamped with its append
    // time (SPEC 2) and counted under the provider that took the call,
    // whose kind and dispatched it copies from the deferral (SPEC 6).
    let (head, rest) = added
        .split_once(",\"time\":\"")
        .expect("a version-1 append carries time");
    let (time, tail) = rest.split_once('"').expect("the time ends");
    assert!(time.ends_with('Z') && time.len() >= 20, "{time}");
    assert_eq!(
        format!("{head}{tail}"),
        "{\"seq\":6,\"protocol\":\"io.choria.fisk-ai.v1.session.tool_result\",\"tool_result\":{\"tool_use_id\":\"d1\",\"result\":{\"tool_use_id\":\"d1\",\"content\":\"denied \\u003cby\\u003e security \\u0026 co\",\"is_error\":true},\"kind\":\"builtin\",\"dispatched\":true}}\n"
    );
    assert_eq!(
        out["record"],
        serde_json::from_str::<serde_json::Value>(added).unwrap()
    );
    // The line as written, byte for byte (b-27: `record` sorts the keys).
    assert_eq!(
        out["line"].as_str().map(|l| format!("{l}\n")).as_deref(),
        Some(added)
    );
    // And the run finishes on resume.
    let r = f.resume("w", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(f.fold("w")["status"], "completed");
}

/// Issue 18: with the last seq at the top of the range, the next seq would
/// wrap to 0 and be skipped as a duplicate; `answer` said "answered (seq
/// 0)" and wrote nothing. It is refused, exit 1, the journal untouched.
#[test]
fn an_answer_past_the_largest_seq_is_refused_not_lost() {
    let store = store_copy("runs-v1");
    let path = store.path().join("deferral-waiting.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    let seq = v["seq"].as_u64().unwrap();
    let bumped = text.replacen(
        &format!("{{\"seq\":{seq},"),
        &format!("{{\"seq\":{},", u64::MAX),
        1,
    );
    assert_ne!(bumped, text);
    std::fs::write(&path, &bumped).unwrap();
    let r = fisk_in(
        store.path(),
        &[
            "--state-dir",
            s(store.path()),
            "answer",
            "deferral-waiting",
            "--content",
            "ok",
        ],
        None,
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("largest there is") && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("answered"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), bumped);
}

/// The content of the answer record for `id` in `run`'s journal.
fn answer_content(f: &Fixture, run: &str, id: &str) -> Option<serde_json::Value> {
    String::from_utf8(f.bytes(run))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["tool_result"]["tool_use_id"] == id)
        .map(|r| r["tool_result"]["result"]["content"].clone())
}

#[test]
fn standard_input_loses_one_trailing_newline_and_content_is_stored_exactly() {
    // `echo ok | answer` stores `ok`, as command substitution reads it.
    let f = waiting();
    let r = f.fisk_stdin(
        &["--state-dir", "runs", "answer", "w", "d1"],
        b"approved by security\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        answer_content(&f, "w", "d1"),
        Some(json!("approved by security"))
    );
    // Only one: the second newline is the operator's.
    let f = waiting();
    let r = f.fisk_stdin(&["--state-dir", "runs", "answer", "w"], b"two\n\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(answer_content(&f, "w", "d1"), Some(json!("two\n")));
    // --content is stored as given, newline and all.
    let f = waiting();
    let r = f.store(&["answer", "w", "d1", "--content", "exact\n"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(answer_content(&f, "w", "d1"), Some(json!("exact\n")));
    // A file loses one trailing newline, as an editor ends it with one.
    let f = waiting();
    std::fs::write(f.path("a.txt"), "from a file\n").unwrap();
    let r = f.store(&["answer", "w", "d1", "--content-file", "a.txt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(answer_content(&f, "w", "d1"), Some(json!("from a file")));
}

#[test]
fn edit_writes_the_answer_in_the_editor_without_its_comment_lines() {
    let f = waiting();
    // The editor is run through sh with the file as its argument, as git
    // runs it: this one writes an answer over the first (empty) line.
    let run = |editor: &str| -> Run {
        f.command(&["--state-dir", "runs", "answer", "w", "d1", "--edit"])
            .env("EDITOR", editor)
            .output()
            .unwrap()
            .into()
    };
    // An editor that leaves the text empty, or fails, writes nothing.
    let before = f.bytes("w");
    let r = run("true");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("is empty; nothing was written"),
        "{}",
        r.stderr
    );
    let r = run("false");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("exited with"), "{}", r.stderr);
    assert_eq!(f.bytes("w"), before);
    // The template names the call; its comment lines are dropped.
    let r = run("sed -i -e '1s/^/signed off/' -e '$a\\\nsecond line'");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        answer_content(&f, "w", "d1"),
        Some(json!("signed off\nsecond line"))
    );
}

#[test]
fn on_a_terminal_answer_asks_for_the_answer_and_resume_for_the_agent_file() {
    let f = waiting();
    let t = crate::viewer::Tmux::start(120, 30);
    let dir = s(f.dir.path());
    t.type_line(&format!(
        "cd {dir} && {} --state-dir runs answer w d1",
        s(&bin())
    ));
    // It says which call it answers (the note) and how to finish.
    t.wait_for("the answer's prompt", |sc| {
        sc.contains("note: sign-off") && sc.contains("Type the answer, then Ctrl-D")
    });
    t.type_line("approved by alice");
    t.keys(&["C-d"]);
    t.wait_for("the answer written", |sc| {
        sc.contains("answered d1 in run w")
    });
    assert_eq!(
        answer_content(&f, "w", "d1"),
        Some(json!("approved by alice"))
    );
    // The resume it prints asks for the agent file; given, it runs.
    t.type_line(&format!("{} --state-dir runs resume w", s(&bin())));
    t.wait_for("the agent file's prompt", |sc| {
        sc.contains("The agent file run w was started with")
    });
    t.type_line("agent.yaml");
    t.wait_for("the run completed", |sc| sc.contains("ended: completed"));
}

/// SPEC 1, SPEC 6: the answer to a deferral the agent marked remote and
/// dispatched carries the derived `"remote": true` the agent writes
/// (before `kind`, in the agent's key order); one remote but not
/// dispatched, or of another kind, does not.
#[test]
fn an_answer_to_a_dispatched_remote_deferral_says_remote_as_the_agent_does() {
    let custom = r#""kind":"custom","dispatched":true}}"#;
    for (deferred, tail) in [
        (
            r#""kind":"remote","dispatched":true}}"#,
            r#"},"remote":true,"kind":"remote","dispatched":true}}"#,
        ),
        (r#""kind":"remote"}}"#, r#"},"kind":"remote"}}"#),
        (custom, r#"},"kind":"custom","dispatched":true}}"#),
    ] {
        let store = store_copy("agent-journals/v1");
        let path = store.path().join("g-deferral-waiting.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(custom));
        std::fs::write(&path, text.replace(custom, deferred)).unwrap();
        let r = fisk(&[
            "--state-dir",
            s(store.path()),
            "answer",
            "g-deferral-waiting",
            "tu_d",
            "--content",
            "ok",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let after = std::fs::read_to_string(&path).unwrap();
        let last = after.lines().last().unwrap();
        assert!(
            last.ends_with(&format!(r#""content":"ok"{tail}"#)),
            "{deferred}: {last}"
        );
    }
}

/// `answer` racing `upgrade` (issue 24 defect 6): the writer checks under
/// the lock the generation it writes, not only the last seq, which an
/// upgrade keeps. Raced 60 times on a version-3 run: whenever the answer
/// landed after the upgrade (the upgrade's backup does not hold it), it is
/// a version-1 record (stamped with `time`); an answer refused for the
/// change leaves the journal as the upgrade made it.
#[test]
fn an_answer_racing_an_upgrade_writes_the_generation_it_finds() {
    use std::os::unix::fs::PermissionsExt;
    use std::process::{Command, Stdio};
    let original = std::fs::read(testdata("agent-journals/v3/g-deferral-waiting.json")).unwrap();
    let mut after = 0;
    for trial in 0..60 {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.path().join("g-deferral-waiting.json");
        std::fs::write(&path, &original).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let state = dir.path().display().to_string();
        let spawn = |args: &[&str]| {
            Command::new(bin())
                .args(["--state-dir", &state])
                .args(args)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let answer = ["answer", "g-deferral-waiting", "tu_d", "--content", "ok"];
        let upgrade = ["upgrade", "g-deferral-waiting"];
        let (a, u) = if trial % 2 == 0 {
            let u = spawn(&upgrade);
            (spawn(&answer), u)
        } else {
            let a = spawn(&answer);
            (a, spawn(&upgrade))
        };
        let (a, u) = (a.wait_with_output().unwrap(), u.wait_with_output().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let version = lines[0]["meta"]["version"].as_i64();
        let answered = lines
            .iter()
            .find(|r| r["tool_result"]["tool_use_id"] == "tu_d" && r["seq"] == 5);
        let backup_has_it = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".bak"))
            .any(|p| {
                std::fs::read_to_string(p)
                    .unwrap()
                    .contains("\"content\":\"ok\"")
            });
        let said = format!(
            "trial {trial}: answer {:?} {}; upgrade {:?} {}\n{text}",
            a.status.code(),
            String::from_utf8_lossy(&a.stderr),
            u.status.code(),
            String::from_utf8_lossy(&u.stderr)
        );
        if let Some(r) = answered {
            if version == Some(1) && !backup_has_it {
                after += 1;
                assert!(
                    r.get("time").is_some(),
                    "a version-3 record in a version-1 journal: {said}"
                );
            }
        } else {
            assert_ne!(a.status.code(), Some(0), "{said}");
        }
        assert_eq!(lines.len(), 4 + usize::from(answered.is_some()), "{said}");
    }
    eprintln!("answers that followed the upgrade: {after} of 60");
}
