//! The reference corpus: journals of both generations written by the
//! agent's own append path, with what the agent's own code says about each
//! (`testdata/agent-journals/`, a copy of `../shared/agent-journals/`).
//! Issue 13: every journal folds to the agent's state, lists with its
//! status, verifies and validates clean, re-encodes byte for byte, and an
//! answer written here is the record the agent's answer path writes.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const GENERATIONS: [&str; 2] = ["v1", "v3"];

fn corpus(rel: &str) -> PathBuf {
    testdata("agent-journals").join(rel)
}

fn runs(generation: &str) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(corpus(generation))
        .expect("the reference corpus")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    ids.sort();
    assert_eq!(ids.len(), 40, "{generation}: 40 journals");
    ids
}

fn expected(generation: &str, run: &str) -> Value {
    let p = corpus(&format!("expected/{generation}/{run}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// An RFC 3339 time as (unix seconds, nanoseconds), so times compare as
/// instants; `None` for anything else.
fn instant(s: &str) -> Option<(i64, u32)> {
    let v: Value = serde_json::json!({
        "seq": 1, "protocol": "io.choria.fisk-ai.v1.session.claim",
        "claim": {"by": "", "claimed": s}
    });
    let r = journal::record::Record::decode(v.to_string().as_bytes()).ok()?;
    match r.payload? {
        journal::record::Payload::Claim(c) => Some(c.claimed.unix()),
        _ => None,
    }
}

/// The comparison rules of the corpus README: an absent optional string
/// equals `""` and `null`, a `null` content equals `[]`, `{}` memory
/// revisions equal `null`, numbers compare as values, times as instants.
fn normalise(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, x) in m {
                let x = normalise(x);
                let empty = match &x {
                    Value::Null => true,
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty() && k == "content",
                    Value::Object(o) => o.is_empty() && k == "memory_revisions",
                    _ => false,
                };
                if !empty {
                    out.insert(k.clone(), x);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::String(s) => match instant(s) {
            Some((secs, nanos)) => Value::String(format!("instant {secs}.{nanos:09}")),
            None => v.clone(),
        },
        // 1.50 == 1.5, 2e3 == 2000, -0 == 0: numbers as values.
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                serde_json::json!(f as i64)
            }
            Some(f) if n.is_f64() => serde_json::json!(f),
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

/// Every path at which two values differ, one line each.
fn differences(path: &str, got: &Value, want: &Value, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(&p, x, y, out),
                    (x, y) => out.push(format!("{p}: got {x:?}, want {y:?}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: got {a}, want {b}")),
        _ => {}
    }
}

fn assert_same(what: &str, got: &Value, want: &Value) -> Vec<String> {
    let mut out = Vec::new();
    differences(what, &normalise(got), &normalise(want), &mut out);
    out
}

#[test]
fn every_reference_journal_folds_to_the_agents_state() {
    let mut failures = Vec::new();
    for g in GENERATIONS {
        let store = store_copy(&format!("agent-journals/{g}"));
        for run in runs(g) {
            let want = expected(g, &run);
            let r = fisk(&["--state-dir", s(store.path()), "fold", &run, "-o", "json"]);
            if want["fold"].is_null() {
                if r.code == 0 {
                    failures.push(format!(
                        "{g}/{run}: the agent refuses it, fold printed a state"
                    ));
                }
                continue;
            }
            if r.code != 0 {
                failures.push(format!("{g}/{run}: fold exit {}: {}", r.code, r.stderr));
                continue;
            }
            failures.extend(assert_same(&format!("{g}/{run}"), &r.json(), &want["fold"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `stats RUN` and `query RUN` print the agent's own documents (SPEC 13)
/// for every reference journal of both generations, on both backends' file
/// store here (JetStream reads the same records: the test below).
#[test]
fn every_reference_journal_gives_the_agents_stats_and_query() {
    let mut failures = Vec::new();
    for g in GENERATIONS {
        let store = store_copy(&format!("agent-journals/{g}"));
        for run in runs(g) {
            let want = expected(g, &run);
            for cmd in ["stats", "query"] {
                let r = fisk(&["--state-dir", s(store.path()), cmd, &run, "-o", "json"]);
                if r.code != 0 {
                    failures.push(format!("{g}/{run}: {cmd} exit {}: {}", r.code, r.stderr));
                    continue;
                }
                failures.extend(assert_same(
                    &format!("{g}/{run} {cmd}"),
                    &r.json(),
                    &want[cmd],
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ls_gives_each_reference_run_the_agents_status_waiting_and_updated() {
    let mut failures = Vec::new();
    for g in GENERATIONS {
        let store = store_copy(&format!("agent-journals/{g}"));
        let r = fisk(&["--state-dir", s(store.path()), "ls", "-o", "json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let listed = r.json();
        let listed = listed.as_array().expect("an array");
        assert_eq!(listed.len(), 40);
        for run in runs(g) {
            let want = expected(g, &run);
            let Some(got) = listed.iter().find(|e| e["run_id"] == run.as_str()) else {
                failures.push(format!("{g}/{run}: not listed"));
                continue;
            };
            let pick = |v: &Value, updated: &Value| {
                serde_json::json!({
                    "status": v["status"], "waiting": v["waiting"],
                    "open_deferrals": v["open_deferrals"], "updated": updated,
                    "version": v.get("version").cloned().unwrap_or(Value::Null),
                })
            };
            let mut want_obj = pick(&want, &want["list"]["updated"]);
            want_obj["version"] = want["format_version"].clone();
            // An undated last record: the file's mtime counts (not pinned).
            let got_updated = if want["list"]["updated"].is_null() {
                Value::Null
            } else {
                got["updated"].clone()
            };
            failures.extend(assert_same(
                &format!("{g}/{run}"),
                &pick(got, &got_updated),
                &want_obj,
            ));
            failures.extend(assert_same(
                &format!("{g}/{run}.created"),
                &got["created"],
                &want["list"]["created"],
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn reference_journals_verify_and_validate_clean_saying_which_generation() {
    for g in GENERATIONS {
        let store = store_copy(&format!("agent-journals/{g}"));
        let r = fisk(&["--state-dir", s(store.path()), "verify", "-o", "json"]);
        assert_eq!(r.code, 0, "{g}: {}", r.stdout);
        let lines = r.json_lines();
        let (summary, findings) = lines.split_last().expect("a summary");
        assert_eq!(summary["summary"]["errors"], 0, "{g}");
        for f in findings {
            let ok = match f["code"].as_str().unwrap_or("") {
                "version-3" => g == "v3" && f["line"] == 1,
                _ => f["severity"] == "info",
            };
            assert!(ok, "{g}: unexpected finding {f}");
        }
        let v3 = findings.iter().filter(|f| f["code"] == "version-3").count();
        assert_eq!(v3, if g == "v3" { 40 } else { 0 }, "{g}");
        let r = fisk(&["--state-dir", s(store.path()), "validate", "--all"]);
        assert_eq!(r.code, 0, "{g}: validate: {}{}", r.stdout, r.stderr);
    }
}

#[test]
fn an_answer_is_the_record_the_agents_answer_path_writes() {
    let mut n = 0;
    for g in GENERATIONS {
        for run in runs(g) {
            let want = expected(g, &run);
            for answer in want["answers"].as_array().into_iter().flatten() {
                let store = store_copy(&format!("agent-journals/{g}"));
                let id = answer["tool_use_id"].as_str().expect("tool_use_id");
                let content = answer["content"].as_str().expect("content");
                let mut args = vec![
                    "--state-dir",
                    s(store.path()),
                    "answer",
                    &run,
                    id,
                    "--content",
                    content,
                ];
                if answer["is_error"] == true {
                    args.push("--is-error");
                }
                let r = fisk(&args);
                assert_eq!(r.code, 0, "{g}/{run} {id}: {}", r.stderr);
                let bytes = std::fs::read(store.path().join(format!("{run}.json"))).expect("read");
                let last = bytes
                    .strip_suffix(b"\n")
                    .and_then(|b| b.split(|c| *c == b'\n').next_back())
                    .expect("a last line");
                let mut got: Value = serde_json::from_slice(last).expect("the answer parses");
                let mut record: Value = match &answer["record"] {
                    Value::String(s) => serde_json::from_str(s).expect("record parses"),
                    v => v.clone(),
                };
                // Only the append time may differ (v1); v3 carries none.
                assert_eq!(got.get("time").is_some(), g == "v1", "{g}/{run}: {got}");
                assert_eq!(record.get("time").is_some(), g == "v1");
                if let (Some(a), Some(b)) = (got.as_object_mut(), record.as_object_mut()) {
                    a.remove("time");
                    b.remove("time");
                }
                assert_eq!(got, record, "{g}/{run} {id}");
                // And the key order is the agent's: same bytes but the time.
                let strip = |v: &[u8]| -> String {
                    let t = String::from_utf8_lossy(v).into_owned();
                    match (t.find(",\"time\":\""), t.find("\",\"tool_result\"")) {
                        (Some(a), Some(b)) if a < b => format!("{}{}", &t[..a], &t[b + 1..]),
                        _ => t,
                    }
                };
                let want_line = match &answer["record"] {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                assert_eq!(
                    strip(last),
                    strip(want_line.trim_end().as_bytes()),
                    "{g}/{run}"
                );
                n += 1;
            }
        }
    }
    assert!(n >= 8, "answers checked: {n}");
}

#[test]
fn every_reference_line_reencodes_byte_for_byte() {
    let mut n = 0;
    for g in GENERATIONS {
        for run in runs(g) {
            let bytes = std::fs::read(corpus(&format!("{g}/{run}.json"))).expect("read");
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let r = journal::record::Record::decode(line)
                    .unwrap_or_else(|e| panic!("{g}/{run}: {e}"));
                // An unknown optional record is copied, never re-encoded.
                let Some(again) = r.encode() else {
                    assert!(r.kind().is_none() && r.optional, "{g}/{run}: no payload");
                    continue;
                };
                assert_eq!(
                    String::from_utf8_lossy(&again),
                    String::from_utf8_lossy(line),
                    "{g}/{run}"
                );
                n += 1;
            }
        }
    }
    assert!(n > 400, "lines: {n}");
}

#[test]
fn on_jetstream_every_reference_run_folds_and_lists_as_the_agent_says() {
    let srv = crate::nats_support::NatsServer::start();
    srv.spec_stream("REF", "ref.>");
    let home = tempfile::tempdir().expect("home");
    let js = |args: &[&str]| {
        let mut all = vec!["--server", srv.url.as_str()];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    let mut failures = Vec::new();
    for g in GENERATIONS {
        let src = store_copy(&format!("agent-journals/{g}"));
        let r = js(&[
            "migrate",
            "--from",
            &format!("file:{}", s(src.path())),
            "--to",
            "jetstream:REF",
            "--all",
        ]);
        assert_eq!(r.code, 0, "{g}: {}{}", r.stdout, r.stderr);
        let r = js(&["--store", "jetstream:REF", "ls", "-o", "json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let listed = r.json();
        for run in runs(g) {
            let want = expected(g, &run);
            let r = js(&["--store", "jetstream:REF", "fold", &run, "-o", "json"]);
            assert_eq!(r.code, 0, "{g}/{run}: {}", r.stderr);
            failures.extend(assert_same(&format!("{g}/{run}"), &r.json(), &want["fold"]));
            for cmd in ["stats", "query"] {
                let r = js(&["--store", "jetstream:REF", cmd, &run, "-o", "json"]);
                assert_eq!(r.code, 0, "{g}/{run} {cmd}: {}", r.stderr);
                failures.extend(assert_same(
                    &format!("{g}/{run} {cmd}"),
                    &r.json(),
                    &want[cmd],
                ));
            }
            let row = listed
                .as_array()
                .and_then(|a| a.iter().find(|x| x["run_id"] == run.as_str()))
                .cloned()
                .unwrap_or_default();
            for k in ["status", "waiting", "open_deferrals"] {
                if row[k] != want[k] {
                    failures.push(format!("{g}/{run} ls {k}: {} != {}", row[k], want[k]));
                }
            }
            if !want["list"]["updated"].is_null() {
                failures.extend(assert_same(
                    &format!("{g}/{run} updated"),
                    &row["updated"],
                    &want["list"]["updated"],
                ));
            }
        }
        // The two generations use the same run ids: empty the stream for
        // the next one.
        srv.with_js(async |j| {
            let st = j.get_stream("REF").await.expect("stream");
            st.purge().await.expect("purge");
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn repair_and_rm_work_on_version_1_journals() {
    let store = store_copy("damaged-v1");
    let d = s(store.path());
    let before = std::fs::read(store.path().join("torn-tail.json")).expect("read");
    let r = fisk(&["--state-dir", d, "repair", "torn-tail"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = std::fs::read(store.path().join("torn-tail.json")).expect("read");
    assert!(before.starts_with(&after) && after.len() < before.len());
    let r = fisk(&["--state-dir", d, "verify", "torn-tail", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let store = store_copy("runs-v1");
    let d = s(store.path());
    let r = fisk(&["--state-dir", d, "rm", "tool-batch", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!store.path().join("tool-batch.json").exists());
    let kept = files_named(store.path(), "tool-batch.removed-");
    assert_eq!(
        kept.as_deref().map(std::fs::read).and_then(Result::ok),
        std::fs::read(testdata("runs-v1/tool-batch.json")).ok()
    );
}

fn files_named(dir: &Path, prefix: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
}
