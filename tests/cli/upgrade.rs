//! `upgrade` and `migrate --upgrade` (issue 13, SPEC 12): a version-3 run
//! becomes version 1 by its meta record's version alone, the original is
//! kept first, damaged and live runs are refused unchanged, a second run
//! changes nothing, and a kill at any moment leaves the old journal or the
//! new one, never neither.

use crate::nats_support::NatsServer;
use crate::support::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// `upgrade --format json`, checked against its output schema.
fn rows_of(r: &Run) -> Value {
    let rows = r.json();
    crate::schema::assert_valid(
        &crate::schema::output_validator("upgrade.json"),
        &rows,
        "upgrade --format json",
    );
    rows
}

/// Every file of a directory, name -> bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap_or_default())
        })
        .collect()
}

/// What the upgraded journal must be: the meta record's `"version":3`
/// becomes `"version":1`, nothing else.
fn upgraded(old: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(old);
    let (meta, rest) = text.split_once('\n').expect("a meta line");
    let meta = meta.replacen("\"meta\":{\"version\":3,", "\"meta\":{\"version\":1,", 1);
    format!("{meta}\n{rest}").into_bytes()
}

/// The fold as JSON without the version.
fn fold_without_version(store: &Path, run: &str) -> Value {
    let r = fisk(&["--state-dir", s(store), "fold", run, "-o", "json"]);
    assert_eq!(r.code, 0, "fold {run}: {}", r.stderr);
    let mut v = r.json();
    if let Some(o) = v.as_object_mut() {
        o.remove("version");
    }
    v
}

#[test]
fn upgrade_changes_only_the_meta_version_and_keeps_the_original() {
    let store = store_copy("runs");
    let before = files(store.path());
    let folds: BTreeMap<String, Value> = journals_in(store.path())
        .into_iter()
        .map(|r| {
            let f = fold_without_version(store.path(), &r);
            (r, f)
        })
        .collect();

    // A dry run says what it would do and changes nothing.
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "upgrade",
        "--all",
        "--dry-run",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("would upgrade tool-batch"),
        "{}",
        r.stdout
    );
    assert_eq!(files(store.path()), before, "a dry run changed the store");

    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "upgrade",
        "--all",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = rows_of(&r);
    let mut rows = rows.as_array().expect("an array").clone();
    assert_eq!(rows.len(), folds.len());
    // `--all` leaves to a person the runs that wait on one or are ready
    // to resume (issue 35); named with --force, they are upgraded too.
    let left: Vec<String> = rows
        .iter()
        .filter(|x| x["outcome"] == "left")
        .map(|x| x["run"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        left,
        [
            "approvals",
            "deferral-answered-unresumed",
            "deferral-partly-answered",
            "deferral-waiting"
        ]
    );
    let mut named = vec!["--state-dir", s(store.path()), "upgrade", "-o", "json"];
    named.extend(left.iter().map(String::as_str));
    let refused = fisk(&named);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    named.push("--force");
    let r = fisk(&named);
    assert_eq!(r.code, 0, "{}", r.stderr);
    rows.retain(|x| x["outcome"] != "left");
    rows.extend(rows_of(&r).as_array().expect("an array").iter().cloned());
    assert_eq!(rows.len(), folds.len());
    for row in &rows {
        let run = row["run"].as_str().expect("run");
        assert_eq!(row["outcome"], "upgraded", "{row}");
        let old = before.get(&format!("{run}.json")).expect("old bytes");
        let now = std::fs::read(store.path().join(format!("{run}.json"))).expect("read");
        assert_eq!(now, upgraded(old), "{run}: only the version may change");
        // The original, kept beside the journal, byte for byte.
        let kept = row["kept"].as_str().expect("kept");
        assert!(kept.ends_with(".bak") && kept.contains(".v3-"), "{kept}");
        assert_eq!(&std::fs::read(kept).expect("backup"), old, "{run}");
        assert_eq!(fold_without_version(store.path(), run), folds[run], "{run}");
    }
    // verify shows no version-3 any more, and nothing else new.
    let r = fisk(&["--state-dir", s(store.path()), "verify", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    for f in r.json_lines() {
        assert!(f["code"] != "version-3", "{f}");
    }
    // Idempotent: a second run finds every run current and writes nothing.
    let after = files(store.path());
    let r = fisk(&["--state-dir", s(store.path()), "upgrade", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains(&format!("0 upgraded, {} already version 1", folds.len())),
        "{}",
        r.stdout
    );
    assert_eq!(files(store.path()), after);
    let r = fisk(&["--state-dir", s(store.path()), "upgrade", "tool-batch"]);
    assert!(
        r.stdout.contains("tool-batch is version 1 already"),
        "{}",
        r.stdout
    );
}

fn journals_in(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = files(dir)
        .into_keys()
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

#[test]
fn upgrade_refuses_damaged_journals_and_changes_nothing_it_refuses() {
    let store = store_copy("damaged");
    let before = files(store.path());
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "upgrade",
        "--all",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let rows = rows_of(&r);
    let outcome = |run: &str| -> String {
        rows.as_array()
            .and_then(|a| a.iter().find(|x| x["run"] == run))
            .map(|x| x["outcome"].as_str().unwrap_or("").to_owned())
            .unwrap_or_default()
    };
    for run in [
        "torn-tail",
        "interior-corruption",
        "seq-gap",
        "unterminated-final-record",
        "garbage-final-line",
        "run-id-mismatch",
        "version-newer",
        "version-older",
    ] {
        assert_eq!(outcome(run), "refused", "{run}");
        let name = format!("{run}.json");
        assert_eq!(
            std::fs::read(store.path().join(&name)).ok().as_ref(),
            before.get(&name),
            "{run} changed"
        );
    }
    let refused = rows
        .as_array()
        .into_iter()
        .flatten()
        .find(|x| x["run"] == "torn-tail")
        .and_then(|x| x["error"].as_str().map(str::to_owned))
        .unwrap_or_default();
    assert!(
        refused.contains("torn-tail") && refused.contains("nothing was changed"),
        "{refused}"
    );
    // No backup of a refused run.
    assert!(!files(store.path())
        .keys()
        .any(|n| n.starts_with("torn-tail.v3-")));
}

#[test]
fn upgrade_refuses_a_live_run() {
    let store = store_copy("runs");
    let lock = std::fs::File::create(store.path().join("tool-batch.lock")).expect("lock");
    lock.try_lock().expect("take the lock");
    let before = std::fs::read(store.path().join("tool-batch.json")).expect("read");
    let r = fisk(&["--state-dir", s(store.path()), "upgrade", "tool-batch"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is live"), "{}", r.stderr);
    assert_eq!(
        std::fs::read(store.path().join("tool-batch.json")).expect("read"),
        before
    );
}

/// Kill times, reproducible from the seed printed on failure.
use crate::mutations::mutate::Rng;

#[test]
fn an_upgrade_killed_at_any_moment_leaves_the_old_journal_or_the_new_one() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 | 1);
    let mut rng = Rng(seed);
    let old = std::fs::read(testdata("runs/perf-large.json")).expect("read");
    let new = upgraded(&old);
    // How long one upgrade takes here: kills are spread over that span.
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("perf-large.json"), &old).expect("write");
    let started = Instant::now();
    let r = fisk(&["--state-dir", s(dir.path()), "upgrade", "perf-large"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let span = started.elapsed().as_micros() as u64;
    let (mut before_rename, mut after_rename) = (0, 0);
    for kill in 0..60 {
        let dir = tempfile::tempdir().expect("tmp");
        let journal = dir.path().join("perf-large.json");
        std::fs::write(&journal, &old).expect("write");
        let home = tempfile::tempdir().expect("home");
        let mut child = std::process::Command::new(bin())
            .args(["--state-dir", s(dir.path()), "upgrade", "perf-large"])
            .env("HOME", home.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_micros(rng.next() % (span + span / 4).max(1)));
        let _ = child.kill();
        let _ = child.wait();
        let now = std::fs::read(&journal).expect("the journal is always there");
        let ctx = format!("seed {seed}, kill {kill}");
        if now == old {
            before_rename += 1;
        } else {
            assert_eq!(now, new, "{ctx}: neither the old journal nor the new one");
            after_rename += 1;
        }
        // Whatever was left behind, the next upgrade finishes the job and
        // a backup holds the original.
        let r = fisk(&["--state-dir", s(dir.path()), "upgrade", "perf-large"]);
        assert_eq!(r.code, 0, "{ctx}: {}", r.stderr);
        assert_eq!(std::fs::read(&journal).expect("read"), new, "{ctx}");
        let all = files(dir.path());
        if now == old {
            assert!(
                all.iter()
                    .any(|(n, b)| n.starts_with("perf-large.v3-") && *b == old),
                "{ctx}: no backup holds the original"
            );
        }
        assert!(
            !all.keys().any(|n| n.ends_with(".tmp")),
            "{ctx}: a temporary file was left: {:?}",
            all.keys()
        );
        let journals = all.keys().filter(|n| n.ends_with(".json")).count();
        assert_eq!(journals, 1, "{ctx}: {:?}", all.keys());
    }
    // The kills landed on both sides of the rename (not a test of one side).
    assert!(
        before_rename > 0 && after_rename > 0,
        "{before_rename} / {after_rename}"
    );
}

/// A version-3 journal made from a version-1 one, as the August agent
/// would have written it: no `time`, `agent`, `kind`, `dispatched` or
/// `summary`, version 3.
fn as_august(v1: &[u8]) -> Vec<u8> {
    use journal::record::{Payload, Record};
    let mut out = Vec::new();
    for line in v1.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let mut r = Record::decode(line).expect("decode");
        r.time = None;
        match r.payload.as_mut() {
            Some(Payload::Meta(m)) => {
                m.version = 3;
                m.agent.clear();
            }
            Some(Payload::ToolResult(t)) => {
                t.kind.clear();
                t.dispatched = false;
            }
            Some(Payload::Deferred(d)) => {
                d.kind.clear();
                d.dispatched = false;
            }
            Some(Payload::Terminal(t)) => t.summary = None,
            _ => {}
        }
        out.extend(r.encode().expect("encode"));
        out.push(b'\n');
    }
    out
}

fn records(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a record"))
        .collect()
}

#[test]
fn a_version_3_run_is_answered_and_resumed_as_version_3_then_upgraded_and_resumed_as_version_1() {
    let f = Fixture::new(&[
        turn(
            "checking",
            &[(
                "d1",
                "defer",
                serde_json::json!({"note": "sign-off", "handle": "SEC-1"}),
            )],
        ),
        turn("done", &[]),
        turn("done again", &[]),
    ]);
    let r = f.run("w", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    // What `run` wrote is version 1, as the current agent writes it.
    let v1 = f.bytes("w");
    for rec in records(&v1) {
        assert!(rec.get("time").is_some(), "{rec}");
    }
    std::fs::write(f.journal("w"), as_august(&v1)).expect("write");
    let before = f.bytes("w");

    // Answering and resuming a version-3 run appends version-3 records.
    let r = f.store(&["answer", "w", "d1", "--content", "ok"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = f.store(&["resume", "w", "--agent", s(&f.path("agent.yaml"))]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let after = f.bytes("w");
    assert!(after.starts_with(&before));
    for rec in records(after.get(before.len()..).unwrap_or_default()) {
        assert!(
            rec.get("time").is_none(),
            "a version-3 append carries no time: {rec}"
        );
        let tr = &rec["tool_result"];
        assert!(tr.get("kind").is_none(), "{rec}");
    }
    let findings = f.findings("w");
    let codes: Vec<&str> = findings.iter().filter_map(|x| x["code"].as_str()).collect();
    assert_eq!(codes, ["version-3"], "{findings:?}");

    // Upgraded, it continues as version 1.
    let r = f.store(&["upgrade", "w"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let upgraded_bytes = f.bytes("w");
    let r = f.store(&[
        "resume",
        "w",
        "--agent",
        s(&f.path("agent.yaml")),
        "--prompt",
        "again",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let now = f.bytes("w");
    for rec in records(now.get(upgraded_bytes.len()..).unwrap_or_default()) {
        assert!(
            rec.get("time").is_some(),
            "a version-1 append carries time: {rec}"
        );
    }
    assert!(f.findings("w").iter().all(|x| x["severity"] == "info"));
}

#[test]
fn what_run_answer_and_resume_write_is_what_the_current_agent_writes() {
    let f = Fixture::new(&[
        turn(
            "checking",
            &[
                ("e1", "exec", serde_json::json!({"command": "echo ok"})),
                ("u1", "nosuch", serde_json::json!({})),
                ("d1", "defer", serde_json::json!({"note": "n"})),
            ],
        ),
        turn("done", &[]),
    ]);
    assert_eq!(f.run("w", "go").code, 0);
    assert_eq!(f.store(&["answer", "w", "d1", "--content", "yes"]).code, 0);
    let r = f.store(&["resume", "w", "--agent", s(&f.path("agent.yaml"))]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let all = records(&f.bytes("w"));
    assert_eq!(all[0]["meta"]["version"], 1);
    for rec in &all {
        assert!(
            rec["time"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{rec}"
        );
        if let Some(tr) = rec.get("tool_result") {
            let kind = tr["kind"].as_str().expect("every result says its kind");
            match tr["tool_use_id"].as_str() {
                Some("e1") => {
                    assert_eq!((kind, &tr["dispatched"]), ("builtin", &Value::Bool(true)))
                }
                Some("u1") => assert!(kind == "unknown" && tr.get("dispatched").is_none()),
                Some("d1") => {
                    assert_eq!((kind, &tr["dispatched"]), ("builtin", &Value::Bool(true)))
                }
                other => panic!("{other:?}"),
            }
        }
        if let Some(d) = rec.get("deferred") {
            assert_eq!(d["kind"], "builtin");
        }
    }
    // The agent's own schemas accept every record, and verify says nothing
    // beyond information.
    let r = f.store(&["validate", "w"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(f.findings("w").iter().all(|x| x["severity"] == "info"));
    let fold = f.fold("w");
    assert_eq!(fold["counters"]["tool_calls_by_kind"]["builtin"], 2);
    assert_eq!(fold["counters"]["tool_calls_by_kind"]["unknown"], 1);
}

#[test]
fn migrate_upgrade_copies_version_3_runs_as_version_1() {
    let from = store_copy("runs");
    let to = tempfile::tempdir().expect("tmp");
    let dest = to.path().join("runs");
    let r = fisk(&[
        "migrate",
        "--from",
        &format!("file:{}", s(from.path())),
        "--to",
        &format!("file:{}", s(&dest)),
        "--all",
        "--upgrade",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for run in journals_in(from.path()) {
        let old = std::fs::read(from.path().join(format!("{run}.json"))).expect("source");
        let copy = std::fs::read(dest.join(format!("{run}.json"))).expect("copy");
        assert_eq!(copy, upgraded(&old), "{run}");
    }
    // The sources are untouched, and a re-run finds everything complete.
    let r = fisk(&[
        "migrate",
        "--from",
        &format!("file:{}", s(from.path())),
        "--to",
        &format!("file:{}", s(&dest)),
        "--all",
        "--upgrade",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for run in r.json()["runs"].as_array().into_iter().flatten() {
        assert_eq!(run["result"], "complete", "{run}");
    }
}

// ---- JetStream

const STREAM: &str = "UPGRADE";
const SUBJECT: &str = "up.>";

fn js(srv: &NatsServer, home: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--server", srv.url.as_str(), "--store", "jetstream:UPGRADE"];
    all.extend_from_slice(args);
    fisk_in(home, &all, None)
}

fn stream_with_rollups(srv: &NatsServer, allow: bool) {
    srv.raw_stream(async_nats::jetstream::stream::Config {
        allow_rollup: allow,
        ..journal::store::jetstream::spec_config(STREAM, SUBJECT)
    });
}

fn put_runs(srv: &NatsServer, home: &Path) {
    let src = store_copy("runs");
    let r = fisk_in(
        home,
        &[
            "--server",
            srv.url.as_str(),
            "migrate",
            "--from",
            &format!("file:{}", s(src.path())),
            "--to",
            "jetstream:UPGRADE",
            "--all",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// Each run's records by subject, and whether its tail (the message stored
/// last, which the agent takes for the run's last seq and fences on) is
/// its last record. Read with a consumer, as the agent reads a run.
fn stream_runs(srv: &NatsServer) -> BTreeMap<String, (Vec<Vec<u8>>, bool)> {
    let mut out = BTreeMap::new();
    srv.with_js(async |js| {
        use futures_util::StreamExt;
        let mut stream = js.get_stream(STREAM).await.expect("stream");
        let consumer = stream
            .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig {
                filter_subject: SUBJECT.to_owned(),
                ..Default::default()
            })
            .await
            .expect("consumer");
        let total = stream.info().await.expect("info").state.messages as usize;
        let mut msgs = consumer.messages().await.expect("messages");
        let mut by_run: BTreeMap<String, Vec<(u64, u64, Vec<u8>)>> = BTreeMap::new();
        for _ in 0..total {
            let m = msgs.next().await.expect("a message").expect("ok");
            let info = m.info().expect("info");
            let subject = m.subject.to_string();
            let mut parts = subject.splitn(3, '.').skip(1);
            let run = parts.next().expect("run").to_owned();
            let seq = match parts.next().expect("token") {
                "_meta" => 1,
                n => n.parse().expect("a seq"),
            };
            // The audit log (issue 38) is no run.
            if run == "_audit" {
                continue;
            }
            by_run
                .entry(run)
                .or_default()
                .push((seq, info.stream_sequence, m.payload.to_vec()));
        }
        for (run, mut recs) in by_run {
            let tail = recs.iter().max_by_key(|r| r.1).map(|r| r.0);
            recs.sort_by_key(|r| r.0);
            let last = recs.last().map(|r| r.0);
            out.insert(run, (recs.into_iter().map(|r| r.2).collect(), tail == last));
        }
    });
    out
}

fn join(v: &[Vec<u8>]) -> Vec<u8> {
    v.iter()
        .flat_map(|b| b.iter().copied().chain([b'\n']))
        .collect()
}

/// The runs of testdata/runs that wait on a person or are ready to
/// resume: `upgrade --all` leaves them (issue 35); named with --force,
/// they are upgraded.
const LEFT_TO_A_PERSON: [&str; 4] = [
    "approvals",
    "deferral-answered-unresumed",
    "deferral-partly-answered",
    "deferral-waiting",
];

/// Upgrade the runs `--all` leaves to a person, by name, with --force.
fn upgrade_left(srv: &NatsServer, home: &Path) {
    let mut args = vec!["upgrade", "--force"];
    args.extend(LEFT_TO_A_PERSON);
    let r = js(srv, home, &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// Every run upgraded (only its meta version changed) and in stream order.
fn assert_all_upgraded(
    before: &BTreeMap<String, (Vec<Vec<u8>>, bool)>,
    after: &BTreeMap<String, (Vec<Vec<u8>>, bool)>,
    ctx: &str,
) {
    assert_eq!(after.len(), before.len(), "{ctx}");
    for (run, (old, _)) in before {
        let (new, in_order) = &after[run];
        assert!(
            in_order,
            "{ctx}: {run}: the run's tail is not its last record"
        );
        assert_eq!(join(new), upgraded(&join(old)), "{ctx}: {run}");
    }
}

#[test]
fn upgrade_on_jetstream_replaces_the_meta_record_in_place_and_keeps_the_order() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    stream_with_rollups(&srv, true);
    put_runs(&srv, home.path());
    let before = stream_runs(&srv);
    // SPEC 8's hold: a run with a turn in flight, written a moment ago, is
    // live; the runs at rest are upgraded.
    let r = js(&srv, home.path(), &["upgrade", "--all", "-o", "json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let rows = rows_of(&r);
    let row = |run: &str| {
        rows.as_array()
            .and_then(|a| a.iter().find(|x| x["run"] == run).cloned())
            .unwrap_or_default()
    };
    assert_eq!(row("pending-batch")["outcome"], "refused");
    assert!(
        row("pending-batch")["error"]
            .as_str()
            .is_some_and(|e| e.contains("within the 600s hold") && e.contains("--hold 0")),
        "{}",
        row("pending-batch")
    );
    assert_eq!(stream_runs(&srv)["pending-batch"], before["pending-batch"]);
    let done = row("tool-batch");
    assert_eq!(done["outcome"], "upgraded", "{done}");
    // The original is kept as a file journal that migrate copies back.
    let kept = done["kept"].as_str().expect("kept");
    assert!(kept.contains("/fisk-admin/upgraded/UPGRADE/"), "{kept}");
    assert_eq!(
        std::fs::read(kept).expect("backup"),
        join(&before["tool-batch"].0)
    );

    let r = js(&srv, home.path(), &["upgrade", "--all", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("left 4 run(s) to a person"),
        "{}",
        r.stdout
    );
    upgrade_left(&srv, home.path());
    let after = stream_runs(&srv);
    assert_all_upgraded(&before, &after, "after --force");
    // Listing and verifying agree: version 1 everywhere, no version-3.
    let r = js(&srv, home.path(), &["verify", "-o", "json"]);
    assert!(
        r.json_lines().iter().all(|f| f["code"] != "version-3"),
        "{}",
        r.stdout
    );
    let r = js(&srv, home.path(), &["ls", "-o", "json"]);
    for x in r.json().as_array().into_iter().flatten() {
        assert_eq!(x["version"], 1, "{x}");
        let run = x["run_id"].as_str().unwrap_or("");
        assert_eq!(x["records"], before[run].0.len(), "{x}");
    }
    // Idempotent.
    let r = js(&srv, home.path(), &["upgrade", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(stream_runs(&srv), after);
}

/// A command a hint printed, run by `sh` as an operator pastes it, with
/// this build first on `PATH` as `fisk-admin` and `home` as its home.
pub fn paste_in(home: &Path, line: &str) -> Run {
    let dir = bin().parent().expect("bin dir").to_owned();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run sh")
        .into()
}

/// The commands between backticks in `text`, in order.
pub fn quoted_commands(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn allows_rollups(srv: &NatsServer) -> bool {
    srv.with_js(async |js| {
        let mut s = js.get_stream(STREAM).await.expect("stream");
        s.info().await.expect("info").config.allow_rollup
    })
}

/// Issue 23.5: a batch on a stream without rollups is refused once,
/// before any run is touched, with a `stream edit` command that works
/// pasted (it carries this invocation's `--server`); `--dry-run` says the
/// same; the stream is then upgraded, and rollups forbidden again.
#[test]
fn upgrade_on_a_stream_without_rollups_is_refused_once_with_a_fix_that_works() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    stream_with_rollups(&srv, false);
    put_runs(&srv, home.path());
    let before = stream_runs(&srv);
    let total = before.len();
    let once = |r: &Run| {
        assert_eq!(
            r.stderr.matches("does not allow rollups").count(),
            1,
            "{}",
            r.stderr
        );
    };
    // A dry run lists what would be upgraded and says the refusal once.
    let r = js(&srv, home.path(), &["upgrade", "--all", "--dry-run"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    once(&r);
    assert!(
        r.stdout.contains("would upgrade tool-batch"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("would be refused"), "{}", r.stderr);
    let r = js(
        &srv,
        home.path(),
        &["upgrade", "--all", "--dry-run", "-o", "json"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(rows_of(&r).as_array().map(Vec::len), Some(total));
    once(&r);
    // The real one: one refusal, nothing changed.
    let r = js(&srv, home.path(), &["upgrade", "--all"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    once(&r);
    assert!(
        r.stderr
            .contains(&format!("of {total} run(s) need upgrading")),
        "{}",
        r.stderr
    );
    assert_eq!(stream_runs(&srv), before);
    let r = js(&srv, home.path(), &["upgrade", "tool-batch"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    once(&r);
    assert_eq!(stream_runs(&srv), before);
    let fixes = quoted_commands(&r.stderr.replace('\n', " "));
    let [allow, forbid] = fixes.as_slice() else {
        panic!("two commands in the help: {}", r.stderr);
    };
    assert!(
        allow.contains(&format!("--server {}", srv.url))
            && allow.ends_with("stream edit UPGRADE --allow-rollup"),
        "{allow}"
    );
    assert!(
        forbid.ends_with("stream edit UPGRADE --no-allow-rollup"),
        "{forbid}"
    );
    // Pasted, they work.
    let r = paste_in(home.path(), allow);
    assert_eq!(r.code, 0, "{allow}: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("now allows rollups"), "{}", r.stdout);
    assert!(allows_rollups(&srv));
    let r = paste_in(home.path(), allow);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("nothing changed"), "{}", r.stdout);
    let r = js(&srv, home.path(), &["upgrade", "--all", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    upgrade_left(&srv, home.path());
    assert_all_upgraded(&before, &stream_runs(&srv), "after allowing rollups");
    let r = paste_in(home.path(), forbid);
    assert_eq!(r.code, 0, "{forbid}: {}{}", r.stdout, r.stderr);
    assert!(!allows_rollups(&srv));
    // Nothing left to upgrade: no rollup needed, no refusal.
    let r = js(&srv, home.path(), &["upgrade", "--all"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // stream edit wants one of its two flags.
    let r = js(&srv, home.path(), &["stream", "edit", "UPGRADE"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn a_jetstream_upgrade_killed_at_any_moment_is_finished_by_the_next() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    stream_with_rollups(&srv, true);
    put_runs(&srv, home.path());
    let before = stream_runs(&srv);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 | 1);
    let mut rng = Rng(seed);
    let started = Instant::now();
    let r = js(
        &srv,
        home.path(),
        &["upgrade", "--all", "--force", "--dry-run"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let span = started.elapsed().as_micros() as u64 * 4;
    let mut interrupted = 0;
    for kill in 0..10 {
        let ctx = format!("seed {seed}, kill {kill}");
        let mut child = std::process::Command::new(bin())
            .args([
                "--server",
                srv.url.as_str(),
                "--store",
                "jetstream:UPGRADE",
                "upgrade",
                "--all",
                "--force",
            ])
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path().join("state"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_micros(rng.next() % span.max(1)));
        let _ = child.kill();
        let _ = child.wait();
        srv.settled_messages(STREAM);
        // Every record subject holds its record; only the meta record may
        // differ, and only by its version.
        let now = stream_runs(&srv);
        for (run, (old, _)) in &before {
            let (new, in_order) = &now[run];
            assert_eq!(new.len(), old.len(), "{ctx}, {run}");
            assert_eq!(new.get(1..), old.get(1..), "{ctx}, {run}");
            let meta = String::from_utf8_lossy(&new[0]);
            let was = String::from_utf8_lossy(&old[0]);
            let up = was.replacen("\"version\":3", "\"version\":1", 1);
            assert!(meta == was || meta == up, "{ctx}, {run}: {meta}");
            if !in_order {
                interrupted += 1;
                // Readers here do not take the tail for the run's length:
                // a full read sees every record, and the listing (which
                // reads only the tail) says what happened and what to run.
                let r = js(&srv, home.path(), &["show", run, "-o", "json"]);
                assert_eq!(r.code, 0, "{ctx}, {run}: {}", r.stderr);
                assert_eq!(r.json()["records"], old.len(), "{ctx}, {run}");
                let r = js(&srv, home.path(), &["ls", "-o", "json"]);
                let listed = r.json();
                let row = listed
                    .as_array()
                    .and_then(|a| a.iter().find(|x| x["run_id"] == run.as_str()))
                    .cloned()
                    .unwrap_or_default();
                assert_eq!(row["status"], "corrupt", "{ctx}, {run}: {row}");
                let r = js(&srv, home.path(), &["verify", run, "-o", "json"]);
                assert_eq!(r.code, 1, "{ctx}, {run}: {}", r.stdout);
                assert!(
                    r.json_lines()
                        .iter()
                        .any(|f| f["code"] == "upgrade-interrupted"),
                    "{ctx}, {run}: {}",
                    r.stdout
                );
                assert!(
                    row["problem"].as_str().is_some_and(|p| p
                        .contains("fisk-admin --store jetstream:UPGRADE --server ")
                        && p.contains(&format!(" upgrade {run}`"))),
                    "{ctx}, {run}: {row}"
                );
            }
        }
        // The next upgrade finishes whatever the kill left (and the runs
        // --all leaves to a person, named).
        let r = js(&srv, home.path(), &["upgrade", "--all", "--force"]);
        assert_eq!(r.code, 0, "{ctx}: {}{}", r.stdout, r.stderr);
        upgrade_left(&srv, home.path());
        assert_all_upgraded(&before, &stream_runs(&srv), &ctx);
        // Start the next kill from the version-3 runs again.
        srv.with_js(async |j| j.delete_stream(STREAM).await.map(|_| ()))
            .expect("delete the stream");
        stream_with_rollups(&srv, true);
        put_runs(&srv, home.path());
    }
    eprintln!("kills that left a run's tail behind: {interrupted}");
}

#[test]
fn an_upgrade_interrupted_between_its_two_publishes_is_seen_and_finished() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    stream_with_rollups(&srv, true);
    put_runs(&srv, home.path());
    let before = stream_runs(&srv);
    let (old, _) = &before["tool-batch"];
    // What a kill right after the first publish leaves: the new meta
    // record in place, stored last.
    let meta = String::from_utf8_lossy(&old[0]).replacen("\"version\":3", "\"version\":1", 1);
    srv.with_js(async |js| {
        let msg = async_nats::jetstream::message::PublishMessage::build()
            .payload(meta.clone().into_bytes().into())
            .header("Nats-Rollup", "sub");
        js.send_publish("up.tool-batch._meta", msg)
            .await
            .expect("publish")
            .await
            .expect("ack");
    });
    assert!(
        !stream_runs(&srv)["tool-batch"].1,
        "the tail is the meta record"
    );
    // A full read still sees every record; the listing says what to run;
    // no writer may append (its next seq would be taken).
    let r = js(&srv, home.path(), &["show", "tool-batch", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["records"], old.len());
    let r = js(&srv, home.path(), &["ls", "-o", "json"]);
    let row = r
        .json()
        .as_array()
        .and_then(|a| a.iter().find(|x| x["run_id"] == "tool-batch").cloned())
        .unwrap_or_default();
    assert_eq!(row["status"], "corrupt", "{row}");
    assert!(
        row["problem"]
            .as_str()
            .is_some_and(|p| p.contains("--store jetstream:UPGRADE --server")
                && p.contains(" upgrade tool-batch`")),
        "{row}"
    );
    // verify says it too (issue 24.7: it said clean and exited 0): an
    // error naming the run, with the command that finishes it.
    let interrupted = |r: &Run| -> Vec<Value> {
        r.json_lines()
            .into_iter()
            .filter(|f| f["code"] == "upgrade-interrupted")
            .collect()
    };
    for args in [
        &["verify", "tool-batch", "-o", "json"][..],
        &["verify", "-o", "json"],
    ] {
        let r = js(&srv, home.path(), args);
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
        let found = interrupted(&r);
        assert_eq!(found.len(), 1, "{args:?}: {}", r.stdout);
        let f = &found[0];
        assert_eq!(f["run"], "tool-batch", "{f}");
        assert_eq!(f["severity"], "error", "{f}");
        assert_eq!(f["seq"], 1, "{f}");
        assert!(
            f["message"]
                .as_str()
                .is_some_and(|m| m.contains("an upgrade was interrupted")),
            "{f}"
        );
    }
    let r = js(&srv, home.path(), &["verify", "tool-batch"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("upgrade-interrupted") && r.stdout.contains(" upgrade tool-batch"),
        "{}",
        r.stdout
    );
    // The next upgrade finishes it, and says so.
    let r = js(&srv, home.path(), &["upgrade", "tool-batch", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()[0]["resumed"], true, "{}", r.stdout);
    let (new, tail_ok) = &stream_runs(&srv)["tool-batch"];
    assert!(tail_ok);
    assert_eq!(join(new), upgraded(&join(old)));
    let r = js(&srv, home.path(), &["ls", "-o", "json"]);
    let row = r
        .json()
        .as_array()
        .and_then(|a| a.iter().find(|x| x["run_id"] == "tool-batch").cloned())
        .unwrap_or_default();
    assert_eq!(row["status"], "completed", "{row}");
    assert_eq!(row["records"], old.len(), "{row}");
    let r = js(&srv, home.path(), &["verify", "tool-batch", "-o", "json"]);
    assert!(interrupted(&r).is_empty(), "{}", r.stdout);
}

#[test]
fn migrate_upgrade_to_jetstream_copies_version_3_runs_as_version_1() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    // A plain SPEC 8 stream: copying never rolls anything up.
    srv.spec_stream(STREAM, SUBJECT);
    let src = store_copy("runs");
    let r = fisk_in(
        home.path(),
        &[
            "--server",
            srv.url.as_str(),
            "migrate",
            "--from",
            &format!("file:{}", s(src.path())),
            "--to",
            "jetstream:UPGRADE",
            "--all",
            "--upgrade",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let on_stream = stream_runs(&srv);
    assert_eq!(on_stream.len(), journals_in(src.path()).len());
    for (run, (records, tail_ok)) in &on_stream {
        let old = std::fs::read(src.path().join(format!("{run}.json"))).expect("source");
        assert!(tail_ok, "{run}");
        assert_eq!(join(records), upgraded(&old), "{run}");
    }
    let r = js(&srv, home.path(), &["verify", "-o", "json"]);
    assert!(
        r.json_lines().iter().all(|f| f["code"] != "version-3"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_journal_that_is_a_symbolic_link_is_refused_unchanged() {
    let store = store_copy("damaged");
    let dir = store.path();
    let before: Vec<_> = {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let target = std::fs::read(dir.join("link-target.json")).unwrap();
    let r = fisk(&["--state-dir", s(dir), "upgrade", "linked"]);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    // Nothing was written: no backup of the link, no lock, no temporary.
    let mut after: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    after.sort();
    assert_eq!(after, before);
    assert!(std::fs::symlink_metadata(dir.join("linked.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(dir.join("link-target.json")).unwrap(), target);
}

/// Issue 24.4: `upgrade --all` on JetStream gives up when the server dies
/// mid-batch, as migrate does: the run that met the failure fails, the
/// rest are reported as not attempted (said once), exit 2, in about one
/// request timeout rather than one per run.
#[test]
fn a_jetstream_upgrade_batch_stops_when_the_server_dies() {
    let mut srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    stream_with_rollups(&srv, true);
    // Many small version-3 runs, so that the batch is under way when the
    // server goes.
    let runs = 2000;
    v3_runs_on_stream(&srv, home.path(), "b", runs);
    let child = spawn_upgrade_all(&srv, home.path());
    // Under way: some originals kept.
    let kept = home.path().join("state/fisk-admin/upgraded/UPGRADE");
    let start = Instant::now();
    while std::fs::read_dir(&kept).map_or(0, |d| d.count()) < 20 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the upgrade never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    srv.stop();
    let stopped = Instant::now();
    let r: Run = child.wait_with_output().expect("wait").into();
    let took = stopped.elapsed();
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let upgraded = std::fs::read_dir(&kept).map_or(0, |d| d.count());
    assert!(upgraded < runs, "the batch ended before the server did");
    // One request timeout is 5 s; one per run would be hours.
    assert!(
        took < Duration::from_secs(30),
        "took {took:?} after the server died"
    );
    assert_eq!(r.stderr.matches("not attempted").count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("run(s) not attempted: an earlier run failed on the store"),
        "{}",
        r.stderr
    );
}

/// Issue 24 doubt: a killed upgrade's `<id>.upgrading.tmp` is named by
/// verify (nothing reads it) and goes with the run when it is removed.
#[test]
fn a_killed_upgrades_temporary_file_is_named_by_verify_and_goes_with_rm() {
    let store = store_copy("runs");
    let dir = store.path();
    let tmp = dir.join("tool-batch.upgrading.tmp");
    std::fs::write(&tmp, b"{\"seq\":1").unwrap();
    let r = fisk(&["--state-dir", s(dir), "verify", "-o", "json"]);
    let found: Vec<serde_json::Value> = r
        .json_lines()
        .into_iter()
        .filter(|f| f["code"] == "leftover-temp")
        .collect();
    assert_eq!(found.len(), 1, "{}", r.stdout);
    assert_eq!(found[0]["severity"], "info");
    assert!(found[0]["message"]
        .as_str()
        .unwrap()
        .contains("tool-batch.upgrading.tmp"));
    let r = fisk(&["--state-dir", s(dir), "rm", "tool-batch", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!tmp.exists(), "rm left the run's temporary file");
    let r = fisk(&["--state-dir", s(dir), "verify", "-o", "json"]);
    assert!(!r.stdout.contains("leftover-temp"), "{}", r.stdout);
}

/// Issue 24 doubt: two upgrades of one stream at once. Each run is
/// upgraded once; the loser of a fence race keeps no copy of its own (585
/// backups were left for 300 runs), so the kept copies are about one per
/// run, and every run has one.
#[test]
fn two_concurrent_jetstream_upgrades_keep_about_one_copy_per_run() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().expect("home");
    stream_with_rollups(&srv, true);
    let runs = 200;
    v3_runs_on_stream(&srv, home.path(), "c", runs);
    let upgrade = || spawn_upgrade_all(&srv, home.path());
    let (a, b) = (upgrade(), upgrade());
    let _ = a.wait_with_output().expect("wait");
    let _ = b.wait_with_output().expect("wait");
    // Every run is version 1 now (a run the loser left is finished by one
    // more upgrade, as a refusal says).
    let r = fisk_in(
        home.path(),
        &[
            "--server",
            srv.url.as_str(),
            "--store",
            &format!("jetstream:{STREAM}"),
            "upgrade",
            "--all",
            "--force",
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kept = home
        .path()
        .join(format!("state/fisk-admin/upgraded/{STREAM}"));
    let dirs: Vec<String> = std::fs::read_dir(&kept)
        .expect("kept copies")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for i in 0..runs {
        let id = format!("c-{i:05}-");
        assert!(dirs.iter().any(|d| d.starts_with(&id)), "no copy of {id}");
    }
    assert!(
        dirs.len() <= runs + runs / 10,
        "{} copies kept for {runs} runs",
        dirs.len()
    );
}

/// `runs` copies of the version-3 run `simple-completed`, `PREFIX-00000`
/// on, migrated onto the stream.
fn v3_runs_on_stream(srv: &NatsServer, home: &Path, prefix: &str, runs: usize) {
    let src = tempfile::tempdir().expect("src");
    let text = std::fs::read_to_string(testdata("runs/simple-completed.json")).expect("template");
    for i in 0..runs {
        let id = format!("{prefix}-{i:05}");
        let body = text.replacen(
            "\"run_id\":\"simple-completed\"",
            &format!("\"run_id\":\"{id}\""),
            1,
        );
        std::fs::write(src.path().join(format!("{id}.json")), body).expect("write");
    }
    let r = fisk_in(
        home,
        &[
            "--server",
            srv.url.as_str(),
            "migrate",
            "--from",
            &format!("file:{}", s(src.path())),
            "--to",
            &format!("jetstream:{STREAM}"),
            "--all",
            "-q",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// `upgrade --all --force` of the stream, started in the background.
fn spawn_upgrade_all(srv: &NatsServer, home: &Path) -> std::process::Child {
    std::process::Command::new(bin())
        .args([
            "--server",
            srv.url.as_str(),
            "--store",
            &format!("jetstream:{STREAM}"),
            "upgrade",
            "--all",
            "--force",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn upgrade")
}
