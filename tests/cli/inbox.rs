//! `inbox` and `approve --all-pending` (issue 26 section 1): every call
//! waiting on a person across the store, on both backends and both
//! generations, oldest first, filtered as `ls`, each printed command run
//! as pasted; the batch approval asked on a real terminal (tmux), refused
//! on a pipe without `--yes`, and `--dry-run` writes nothing.

use crate::nats_support::NatsServer;
use crate::schema::{assert_valid, output_validator};
use crate::support::*;
use crate::viewer::Tmux;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn exec(id: &'static str) -> (&'static str, &'static str, Value) {
    (id, "exec", json!({"command": "true"}))
}

/// The fixture's agent with `gate: [exec]`, its store on `jetstream`
/// (stream SESSIONS) when asked.
fn gated(jetstream: bool) -> Fixture {
    let f = Fixture::new(&[]);
    let path = f.path("agent.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("gate: [exec]\n");
    if jetstream {
        text = text.replace(
            "{backend: file, options: {directory: ./runs}}",
            "{backend: jetstream, options: {stream: SESSIONS}}",
        );
    }
    std::fs::write(path, text).unwrap();
    f
}

/// Start run `id` whose first turn calls `calls` and whose second ends it.
fn start(f: &Fixture, server: Option<&str>, id: &str, calls: &[(&str, &str, Value)]) {
    f.write_turns(&[turn("", calls), turn("done", &[])]);
    let mut args = Vec::new();
    if let Some(url) = server {
        args.extend(["--server", url]);
    }
    args.extend(["run", "--agent", "agent.yaml", "--id", id, "go"]);
    let r = f.fisk(&args);
    assert_eq!(r.code, 0, "run {id}: {}{}", r.stdout, r.stderr);
}

/// The agent's own journal `name` of `generation` stored as `run`.
fn agent_journal(generation: &str, name: &str, run: &str) -> String {
    let text = std::fs::read_to_string(testdata(&format!(
        "agent-journals/{generation}/{name}.json"
    )))
    .unwrap();
    text.replace(
        &format!("\"run_id\":\"{name}\""),
        &format!("\"run_id\":\"{run}\""),
    )
}

/// A version-3 run suspended for an approval of `tu_1` (the agent's
/// journal before its approval, suspended as fisk-admin's runner says it).
fn v3_gated() -> String {
    let text = agent_journal("v3", "g-call-approval-after-suspend", "v3-gate");
    let lines: Vec<&str> = text.lines().take(3).collect();
    format!("{}\n", lines.join("\n"))
        .replace("awaiting approval", "needs approval: tu_1 (stream_rm)")
}

/// Runs in a file store of their own (0700, 0600): the other generation's
/// and a dated old deferral, added to the runner's.
fn extra_runs() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    for (run, text) in [
        (
            "v3-deferral",
            agent_journal("v3", "g-deferral-waiting", "v3-deferral"),
        ),
        ("v3-gate", v3_gated()),
        // Its records dated 2026-12-01: the oldest wait.
        (
            "old-deferral",
            agent_journal("v1", "g-deferral-waiting", "old-deferral"),
        ),
        (
            "v3-done",
            agent_journal("v3", "g-simple-completed", "v3-done"),
        ),
    ] {
        let path = dir.path().join(format!("{run}.json"));
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    dir
}

/// The store: the runner's `gate` (two gated calls), `mixed` (a deferral
/// and a gated call), `deferral`, `done`, and [`extra_runs`] copied in
/// with `migrate` (`to`: the store's URI).
fn fill(f: &Fixture, server: Option<&str>, to: &str) {
    start(f, server, "gate", &[exec("g1"), exec("g2")]);
    start(
        f,
        server,
        "mixed",
        &[
            ("d1", "defer", json!({"note": "ask ops", "handle": "H-1"})),
            exec("g3"),
        ],
    );
    start(f, server, "deferral", &[("d2", "defer", json!({}))]);
    f.write_turns(&[turn("done", &[])]);
    let mut args = Vec::new();
    if let Some(url) = server {
        args.extend(["--server", url]);
    }
    args.extend(["run", "--agent", "agent.yaml", "--id", "done", "go"]);
    assert_eq!(f.fisk(&args).code, 0);
    let extra = extra_runs();
    let from = format!("file:{}", s(extra.path()));
    let mut args = Vec::new();
    if let Some(url) = server {
        args.extend(["--server", url]);
    }
    args.extend(["migrate", "--from", &from, "--to", to, "--all"]);
    let r = f.fisk(&args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

fn items(doc: &Value) -> Vec<(String, String, String)> {
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["run"].as_str().unwrap().to_owned(),
                i["tool_use_id"].as_str().unwrap().to_owned(),
                i["waits"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The checks both backends share; `fisk` runs fisk-admin against the
/// store, `f` pastes.
fn check_inbox(f: &Fixture, fisk: &dyn Fn(&[&str]) -> Run) {
    let schema = output_validator("inbox.json");
    let r = fisk(&["inbox", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = r.json();
    assert_valid(&schema, &doc, "inbox");
    let got = items(&doc);
    let want: BTreeSet<(String, String, String)> = [
        ("gate", "g1", "approval"),
        ("gate", "g2", "approval"),
        ("mixed", "d1", "answer"),
        ("mixed", "g3", "approval"),
        ("deferral", "d2", "answer"),
        ("v3-deferral", "tu_d", "answer"),
        ("v3-gate", "tu_1", "approval"),
        ("old-deferral", "tu_d", "answer"),
    ]
    .iter()
    .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
    .collect();
    assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), want, "{doc}");
    // Oldest first: the dated 2026-12-01 deferral, then by the time waited.
    assert_eq!(got[0].0, "old-deferral", "{doc}");
    let waited: Vec<u64> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["waited_s"].as_u64().unwrap())
        .collect();
    assert!(waited.windows(2).all(|w| w[0] >= w[1]), "{waited:?}");
    let mixed = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["tool_use_id"] == "d1")
        .unwrap();
    assert_eq!(
        (&mixed["note"], &mixed["handle"]),
        (&json!("ask ops"), &json!("H-1"))
    );
    assert_eq!(mixed["command"]["supply"], json!(["answer"]));

    // The filters of ls, and --older-than.
    let only = |args: &[&str]| {
        let mut a = vec!["inbox", "-o", "json"];
        a.extend_from_slice(args);
        let r = fisk(&a);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        items(&r.json())
            .into_iter()
            .map(|(run, call, _)| format!("{run}/{call}"))
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        only(&["--prefix", "mix"]),
        ["mixed/d1", "mixed/g3"].map(String::from).into()
    );
    assert_eq!(
        only(&["--older-than", "1h"]),
        ["old-deferral/tu_d"].map(String::from).into()
    );
    assert_eq!(only(&["--older-than", "0s"]).len(), 8);
    assert!(only(&["--status", "completed"]).is_empty());
    let r = fisk(&["inbox", "--older-than", "10"]);
    assert_eq!(r.code, 2, "a bare number is no duration: {}", r.stderr);

    // The table: one row per call, each command pasted as printed runs.
    let r = fisk(&["inbox"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_printable("inbox", &r.stdout);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].contains("COMMAND") && lines[0].contains("WAITED"),
        "{}",
        r.stdout
    );
    // Into a pipe, tab-separated fields: COMMAND is the last; the note on
    // answers under the table goes to standard error (issue 39, d-24).
    assert!(lines[0].split('\t').count() > 5, "{}", r.stdout);
    let commands: Vec<String> = lines
        .iter()
        .skip(1)
        .map(|l| l.rsplit('\t').next().unwrap().to_owned())
        .collect();
    assert_eq!(commands.len(), 8, "{}", r.stdout);
    assert!(commands.iter().all(|c| c.starts_with("fisk-admin ")));
    assert!(r
        .stderr
        .contains("answer: it reads the answer from standard input"));
    for c in &commands {
        let done = match c.contains(" answer ") {
            true => f.paste_stdin(c, b"ok from the inbox"),
            false => f.paste(c),
        };
        assert_eq!(done.code, 0, "{c}: {}{}", done.stdout, done.stderr);
    }
    let r = fisk(&["inbox"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("nothing waits on a person in "),
        "{}",
        r.stdout
    );
    assert_eq!(items(&fisk(&["inbox", "-o", "json"]).json()), vec![]);
    // What was answered and approved is ready to resume (issue 35): each
    // run once, with the resume that goes on.
    let doc = fisk(&["inbox", "-o", "json"]).json();
    let ready: Vec<&str> = doc["ready"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["run"].as_str().unwrap())
        .collect();
    assert!(!ready.is_empty(), "{doc}");
    for run in &ready {
        let line = format!("resume {run}");
        assert!(r.stdout.contains(&line), "{line}: {}", r.stdout);
    }
    assert!(r.stdout.contains("ready to resume"), "{}", r.stdout);
    // What a printed resume still needs is said apart from it (d-22).
    assert!(
        r.stdout.contains("resume: it asks for the agent file"),
        "{}",
        r.stdout
    );
}

#[test]
fn inbox_lists_every_waiting_call_oldest_first_and_each_command_runs() {
    let f = gated(false);
    fill(&f, None, &format!("file:{}", s(&f.runs())));
    check_inbox(&f, &|args| f.store(args));
}

#[test]
fn inbox_lists_every_waiting_call_on_jetstream() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let f = gated(true);
    fill(&f, Some(&srv.url), "jetstream:SESSIONS");
    // --hold 0: an approval follows the terminal, and a second approval
    // of a run would be held otherwise.
    check_inbox(&f, &|args| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
            "--hold",
            "0",
        ];
        all.extend_from_slice(args);
        f.fisk(&all)
    });
}

/// Every journal's bytes, to see that nothing was written.
fn snapshot(f: &Fixture) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(f.runs())
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.display().to_string(),
                std::fs::read(&p).unwrap_or_default(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn approve_all_pending_lists_asks_and_approves_each_gated_call_once() {
    let f = gated(false);
    fill(&f, None, &format!("file:{}", s(&f.runs())));
    let before = snapshot(&f);
    // On a pipe without --yes: refused, nothing written.
    let r = f.store(&["approve", "gate", "mixed", "v3-gate", "--all-pending"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no terminal to ask on; nothing was written")
            && r.stderr.contains("--yes"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&f), before);
    // --dry-run lists them, writes nothing.
    let r = f.store(&["approve", "gate", "mixed", "--all-pending", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "would approve g1 (exec) in run gate once\nwould approve g2 (exec) in run gate once\nwould approve g3 (exec) in run mixed once\n"
    );
    let r = f.store(&[
        "approve",
        "gate",
        "--all-pending",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(
        r.json(),
        json!([{"run": "gate", "tool": "exec", "tool_use_id": "g1"}, {"run": "gate", "tool": "exec", "tool_use_id": "g2"}])
    );
    assert_eq!(snapshot(&f), before);
    // A run with nothing to approve is said and skipped; none at all is refused.
    let r = f.store(&["approve", "done", "deferral", "--all-pending", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("run done has no call waiting on an approval"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&f), before);

    // On a terminal: listed and asked; "n" writes nothing, "y" approves.
    let t = Tmux::start(160, 30);
    let line = format!(
        "cd {} && {} --state-dir runs approve gate mixed v3-gate --all-pending",
        s(f.path("").as_path()),
        s(&bin())
    );
    t.type_line(&line);
    let screen = t.wait_for("the question", |sc| sc.contains("approve 4 call(s)? [y/N]"));
    for want in [
        "g1 (exec) in run gate",
        "g3 (exec) in run mixed",
        "tu_1 (stream_rm) in run v3-gate",
    ] {
        assert!(screen.contains(want), "{screen}");
    }
    t.type_line("n");
    t.wait_for("the refusal", |sc| {
        sc.contains("not confirmed; nothing was written")
    });
    assert_eq!(snapshot(&f), before);
    t.type_line("clear");
    t.type_line(&line);
    t.wait_for("the question", |sc| sc.contains("approve 4 call(s)? [y/N]"));
    t.type_line("y");
    let screen = t.wait_for("the approvals", |sc| {
        sc.contains("next:") && sc.contains("v3-gate (seq")
    });
    assert!(
        screen.contains("approved g2 (exec) once in run gate"),
        "{screen}"
    );
    let doc = f.store(&["inbox", "-o", "json"]).json();
    let left: BTreeSet<(String, String, String)> = items(&doc).into_iter().collect();
    assert!(
        left.iter().all(|(_, _, w)| w == "answer"),
        "only answers wait: {doc}"
    );
    assert_eq!(left.len(), 4, "{doc}");
    for run in ["gate", "mixed"] {
        let st = f.fold(run);
        assert_eq!(
            st["call_approvals"].as_array().unwrap().len(),
            if run == "gate" { 2 } else { 1 }
        );
    }
}
