//! The shipped corpus: healthy runs fold to their expected state (from the
//! independent Python oracle in testdata/gen/oracle.py), every journal gives
//! exactly its expected findings, and canonical lines re-encode byte for byte.

use crate::support::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn journals(dir: &str) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(testdata(dir))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    ids.sort();
    ids
}

type Key = (String, String, Option<u64>, Option<u64>);

fn key(f: &Value) -> Key {
    (
        f["code"].as_str().unwrap().to_owned(),
        f["severity"].as_str().unwrap().to_owned(),
        f["line"].as_u64(),
        f["seq"].as_u64(),
    )
}

/// verify --format json over a store copy, findings grouped by the file
/// stem they are about (run id, or the file name without .json/.lock).
fn findings_by_file(store: &Path, extra: &[&str]) -> BTreeMap<String, BTreeSet<Key>> {
    let mut args = vec!["--state-dir", s(store), "verify", "--format", "json"];
    args.extend_from_slice(extra);
    let r = fisk(&args);
    assert!(r.code == 0 || r.code == 1, "verify failed: {}", r.stderr);
    let mut by: BTreeMap<String, BTreeSet<Key>> = BTreeMap::new();
    let lines = r.json_lines();
    let (last, findings) = lines.split_last().expect("a summary line");
    assert!(
        last.get("summary").is_some(),
        "last line is the summary: {last}"
    );
    for f in findings {
        let run = f["run"].as_str().unwrap();
        let stem = run
            .strip_suffix(".json")
            .or_else(|| run.strip_suffix(".lock"))
            .unwrap_or(run)
            .to_owned();
        by.entry(stem).or_default().insert(key(f));
    }
    by
}

fn expected_findings(dir: &str) -> BTreeMap<String, BTreeSet<Key>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(testdata(&format!("expected/{dir}"))).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".findings.json") {
            let set: BTreeSet<Key> = read_json(&p).as_array().unwrap().iter().map(key).collect();
            if !set.is_empty() {
                out.insert(stem.to_owned(), set);
            }
        }
    }
    out
}

#[test]
fn healthy_runs_fold_to_the_oracles_state() {
    for dir in HEALTHY {
        healthy_runs_fold_in(dir);
    }
}

/// The healthy stores: version 3 (`runs`) and version 1 (`runs-v1`).
const HEALTHY: [&str; 2] = ["runs", "runs-v1"];
/// One journal per damage, in each generation.
const DAMAGED: [&str; 2] = ["damaged", "damaged-v1"];

fn healthy_runs_fold_in(dir: &str) {
    let store = store_copy(dir);
    let ids = journals(dir);
    assert!(ids.len() >= 20, "the healthy corpus is there");
    for id in ids {
        let r = fisk(&[
            "--state-dir",
            s(store.path()),
            "fold",
            &id,
            "--format",
            "json",
        ]);
        assert_eq!(r.code, 0, "fold {dir}/{id}: {}", r.stderr);
        let want = read_json(&testdata(&format!("expected/{dir}/{id}.fold.json")));
        assert_eq!(r.json(), want, "fold of {dir}/{id} differs from the oracle");
    }
}

#[test]
fn damaged_runs_the_fold_accepts_fold_to_the_oracles_state() {
    for dir in DAMAGED {
        damaged_runs_fold_in(dir);
    }
}

fn damaged_runs_fold_in(dir: &str) {
    let store = store_copy(dir);
    let mut checked = 0;
    for id in journals(dir) {
        let exp = testdata(&format!("expected/{dir}/{id}.fold.json"));
        if !exp.exists() {
            continue;
        }
        let r = fisk(&[
            "--state-dir",
            s(store.path()),
            "fold",
            &id,
            "--format",
            "json",
        ]);
        assert_eq!(r.code, 0, "fold {id}: {}", r.stderr);
        assert_eq!(
            r.json(),
            read_json(&exp),
            "fold of {dir}/{id} differs from the oracle"
        );
        checked += 1;
    }
    assert!(checked >= 5);
}

#[test]
fn every_damage_gives_exactly_its_expected_findings() {
    let mut got_all = Vec::new();
    for dir in DAMAGED {
        let store = store_copy(dir);
        let got = findings_by_file(store.path(), &["--no-schema"]);
        let want = expected_findings(dir);
        for (file, set) in &want {
            assert_eq!(got.get(file), Some(set), "findings for {dir}/{file}");
        }
        for (file, set) in &got {
            assert!(
                want.contains_key(file),
                "unexpected findings for {dir}/{file}: {set:?}"
            );
        }
        got_all.extend(got.into_values().flatten());
    }
    // Every content-level code of SPEC 11 except schema/live/permissions is
    // exercised by the corpus.
    let codes: BTreeSet<&str> = got_all.iter().map(|k| k.0.as_str()).collect();
    for code in [
        "torn-tail",
        "unterminated-final-record",
        "garbage-final-line",
        "interior-corruption",
        "empty-journal",
        "no-meta",
        "meta-seq",
        "duplicate-meta",
        "seq-not-increasing",
        "seq-gap",
        "version-newer",
        "version-older",
        "version-3",
        "mixed-generation",
        "unknown-protocol",
        "skipped-optional",
        "missing-payload",
        "extra-payload",
        "orphan-result",
        "unknown-tool-use",
        "duplicate-result",
        "run-id-mismatch",
        "invalid-id",
        "symlink",
        "orphan-lock",
        "open-deferrals",
    ] {
        assert!(codes.contains(code), "no journal exercises {code}");
    }
}

#[test]
fn healthy_runs_give_only_their_expected_findings_even_with_schemas() {
    let mut codes = BTreeSet::new();
    for dir in HEALTHY {
        let store = store_copy(dir);
        let got = findings_by_file(store.path(), &[]);
        let want = expected_findings(dir);
        assert_eq!(got, want, "{dir}");
        codes.extend(got.into_values().flatten().map(|k| k.0));
    }
    assert!(codes.contains("unknown-field"), "{codes:?}");
}

#[test]
fn verify_exit_codes_follow_the_findings() {
    let healthy = store_copy("runs");
    let r = fisk(&["--state-dir", s(healthy.path()), "verify"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let damaged = store_copy("damaged");
    let r = fisk(&["--state-dir", s(damaged.path()), "verify"]);
    assert_eq!(r.code, 1);
    // Only warnings: 0, or 1 with --strict.
    let r = fisk(&["--state-dir", s(damaged.path()), "verify", "torn-tail"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = fisk(&[
        "--state-dir",
        s(damaged.path()),
        "verify",
        "--strict",
        "torn-tail",
    ]);
    assert_eq!(r.code, 1);
    // The tool could not do its job: 2.
    let r = fisk(&["--state-dir", "/nonexistent/fisk", "verify"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("/nonexistent/fisk"), "{}", r.stderr);
}

#[test]
fn verify_text_shows_the_offending_line_with_its_number() {
    let store = store_copy("damaged");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "verify",
        "interior-corruption",
    ]);
    assert_eq!(r.code, 1);
    // One line per finding (b-13): run, line and byte, severity and code.
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("interior-corruption:3:757: error[interior-corruption]: ")),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(" 3 | "), "no line without --details");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "verify",
        "--details",
        "interior-corruption",
    ]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("interior-corruption:3:757: error"))
        .expect("the finding");
    // Under it, the offending line with its number, cut.
    let shown = lines[at + 1];
    assert!(shown.starts_with("    3 | {\"seq\":3,"), "{shown}");
    assert!(
        shown.ends_with('…') && shown.chars().count() <= 160,
        "{shown}"
    );
    // The totals follow the table: on standard error into a pipe.
    assert!(r.stderr.contains("records"), "totals: {}", r.stderr);
}

#[test]
fn verify_names_offsets_that_point_at_the_line() {
    let store = store_copy("damaged");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "verify",
        "--format",
        "json",
        "seq-gap",
    ]);
    let bytes = std::fs::read(store.path().join("seq-gap.json")).unwrap();
    let f = r
        .json_lines()
        .into_iter()
        .find(|f| f["code"] == "seq-gap")
        .unwrap();
    let off = f["offset"].as_u64().unwrap() as usize;
    assert!(off == 0 || bytes[off - 1] == b'\n');
    assert!(bytes[off..].starts_with(b"{\"seq\":5,"));
}

#[test]
fn ls_matches_the_oracle() {
    for (dir, expected) in [("runs", "ls-runs.json"), ("runs-v1", "ls-runs-v1.json")] {
        let store = store_copy(dir);
        let r = fisk(&["--state-dir", s(store.path()), "ls", "--format", "json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let want = read_json(&testdata(&format!("expected/{expected}")));
        let keys: Vec<String> = want[0]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        let mut got: Vec<Value> = r
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                assert_eq!(x["live"], json!(false));
                let mut o = serde_json::Map::new();
                for k in &keys {
                    // An undated last record: the mtime, which is not pinned.
                    o.insert(k.clone(), x[k.as_str()].clone());
                }
                Value::Object(o)
            })
            .collect();
        got.sort_by(|a, b| a["run_id"].as_str().cmp(&b["run_id"].as_str()));
        let mut want = want;
        if let (Some(w), Some(g)) = (want.as_array_mut(), Some(&mut got)) {
            for (w, g) in w.iter_mut().zip(g.iter_mut()) {
                if w.get("updated").is_some_and(Value::is_null) {
                    g["updated"] = Value::Null;
                }
            }
        }
        assert_eq!(Value::Array(got), want, "{dir}");
    }
}

#[test]
fn ls_status_agrees_with_the_full_fold_for_every_run() {
    for dir in ["runs", "damaged", "runs-v1", "damaged-v1"] {
        let store = store_copy(dir);
        let r = fisk(&["--state-dir", s(store.path()), "ls", "--format", "json"]);
        for x in r.json().as_array().unwrap() {
            let id = x["run_id"].as_str().unwrap();
            let f = fisk(&[
                "--state-dir",
                s(store.path()),
                "fold",
                id,
                "--format",
                "json",
            ]);
            if f.code == 0 {
                let st = f.json();
                for k in ["status", "waiting", "open_deferrals"] {
                    assert_eq!(x[k], st[k], "{k} of {dir}/{id}");
                }
            }
        }
    }
}

#[test]
fn canonical_lines_reencode_byte_for_byte() {
    let mut n = 0;
    for (dir, id) in HEALTHY
        .iter()
        .flat_map(|d| journals(d).into_iter().map(move |id| (*d, id)))
    {
        // `"time":null` on purpose (read as undated), and fields a newer
        // agent wrote (read past, kept when copied): not canonical.
        if (dir, id.as_str()) == ("runs-v1", "time-null") || id.starts_with("unknown-field") {
            continue;
        }
        let bytes = std::fs::read(testdata(&format!("{dir}/{id}.json"))).unwrap();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let rec = journal::record::Record::decode(line).unwrap();
            if rec.kind().is_none() {
                continue; // unknown optional records are only ever copied
            }
            let again = rec.encode().unwrap();
            assert_eq!(
                String::from_utf8_lossy(&again),
                String::from_utf8_lossy(line),
                "{id}: re-encoding changed the bytes"
            );
            n += 1;
        }
    }
    assert!(n > 800);
}

#[test]
fn reading_commands_never_modify_the_store() {
    let store = store_copy("damaged");
    let snapshot = |p: &Path| -> BTreeMap<String, (Vec<u8>, u32)> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let md = std::fs::symlink_metadata(e.path()).unwrap();
                let bytes = if md.file_type().is_symlink() {
                    vec![]
                } else {
                    std::fs::read(e.path()).unwrap()
                };
                (
                    e.file_name().to_string_lossy().into_owned(),
                    (bytes, md.permissions().mode()),
                )
            })
            .collect()
    };
    let before = snapshot(store.path());
    let d = s(store.path());
    for args in [
        vec!["--state-dir", d, "verify"],
        vec!["--state-dir", d, "ls"],
        vec!["--state-dir", d, "ls", "--format", "json"],
        vec!["--state-dir", d, "show", "torn-tail", "--transcript"],
        vec!["--state-dir", d, "fold", "unterminated-final-record"],
        vec!["--state-dir", d, "validate"],
    ] {
        let r = fisk(&args);
        assert!(r.code <= 2, "{args:?}");
    }
    assert_eq!(
        snapshot(store.path()),
        before,
        "a reading command changed the store"
    );
}
