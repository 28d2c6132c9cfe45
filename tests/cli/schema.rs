//! JSON schemas (issue 3): the record schemas accept what the agent writes
//! and reject each broken rule; `validate` reports it; and what the tool
//! prints for scripts matches schemas/output/.

use crate::support::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn cases(name: &str) -> Vec<Value> {
    std::fs::read_to_string(testdata(&format!("schema-cases/{name}")))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn validate_stdin(input: &[u8], extra: &[&str]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["validate", "--file", "-", "--format", "json"];
    args.extend_from_slice(extra);
    fisk_in(home.path(), &args, Some(input))
}

#[test]
fn every_valid_case_and_every_healthy_record_validates() {
    let mut input = Vec::new();
    for c in cases("valid.jsonl") {
        input.extend(serde_json::to_vec(&c).unwrap());
        input.push(b'\n');
    }
    let r = validate_stdin(&input, &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let store = store_copy("runs");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "validate",
        "--all",
        "--format",
        "json",
    ]);
    let lines = r.json_lines();
    // The one record without a schema is the optional telemetry record.
    let violations: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("summary").is_none())
        .collect();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0]["message"]
        .as_str()
        .unwrap()
        .contains("no schema for protocol"));
    assert_eq!(violations[0]["run"], "optional-telemetry");
    let summary = &lines.last().unwrap()["summary"];
    assert!(summary["records"].as_u64().unwrap() > 400);
    assert_eq!(summary["invalid"], 1);
    assert_eq!(r.code, 1);
}

#[test]
fn every_invalid_case_is_rejected_by_the_schema_it_names() {
    let all = cases("invalid.jsonl");
    assert!(all.len() >= 100);
    let mut per_protocol: BTreeSet<String> = BTreeSet::new();
    for c in &all {
        let mut line = serde_json::to_vec(&c["record"]).unwrap();
        line.push(b'\n');
        let r = validate_stdin(&line, &[]);
        let why = c["why"].as_str().unwrap();
        assert_eq!(r.code, 1, "accepted: {why}: {}", c["record"]);
        let lines = r.json_lines();
        let v = &lines[0];
        let want = c["schema"].as_str().unwrap();
        // A record with no usable protocol has no schema to name, and one
        // with another record's protocol is checked against that one.
        let own = c["record"]["protocol"]
            .as_str()
            .and_then(|p| p.strip_prefix("io.choria.fisk-ai.v1.session."))
            .is_some_and(|suffix| format!("session.{suffix}.json") == want);
        if v["schema"].is_string() && own {
            assert_eq!(v["schema"], want, "{why}");
        }
        assert_eq!(v["line"], 1);
        per_protocol.insert(want.to_owned());
    }
    assert_eq!(per_protocol.len(), 10, "every protocol has rejected cases");
}

#[test]
fn a_broken_envelope_reads_as_one_problem() {
    let rec = br#"{"seq":0,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"paused"},"bogus":1}
"#;
    let r = validate_stdin(rec, &[]);
    let lines = r.json_lines();
    let paths: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["instance_path"].as_str())
        .collect();
    assert!(paths.contains(&"/seq"), "{paths:?}");
    assert!(paths.contains(&"/terminal/reason"), "{paths:?}");
    // No echo of the same problems as "unevaluated property" noise.
    let unevaluated = lines
        .iter()
        .filter(|l| {
            l["keyword_location"]
                .as_str()
                .is_some_and(|k| k.ends_with("unevaluatedProperties"))
        })
        .count();
    assert!(unevaluated <= 1, "{lines:?}");
}

#[test]
fn a_torn_tail_is_reported_once_and_complete_records_still_validate() {
    let store = store_copy("damaged");
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "validate",
        "torn-tail",
        "--format",
        "json",
    ]);
    let lines = r.json_lines();
    let violations: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("summary").is_none())
        .collect();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0]["message"].as_str().unwrap().contains("torn"));
    let sum = &lines.last().unwrap()["summary"];
    assert_eq!(sum["valid"], 3);
    assert_eq!(sum["invalid"], 1);
}

#[test]
fn schema_dir_replaces_the_builtin_set() {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(repo().join("schemas/v1")).unwrap() {
        let p = e.unwrap().path();
        let mut text = std::fs::read_to_string(&p).unwrap();
        if p.file_name().unwrap() == "session.terminal.json" {
            // A newer agent's set that knows a sixth reason.
            assert!(text.contains("\"max_iterations\""));
            text = text.replacen("\"max_iterations\"", "\"max_iterations\", \"paused\"", 1);
        }
        std::fs::write(dir.path().join(p.file_name().unwrap()), text).unwrap();
    }
    let rec = br#"{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"paused"}}
"#;
    assert_eq!(validate_stdin(rec, &[]).code, 1);
    let r = validate_stdin(rec, &["--schema-dir", s(dir.path())]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = validate_stdin(rec, &["--schema-dir", "/nonexistent/schemas"]);
    assert_eq!(r.code, 2);
}

#[test]
fn verify_reports_schema_findings_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(testdata("runs/simple-completed.json")).unwrap();
    let text = String::from_utf8(good).unwrap();
    // A terminal reason outside the five: the fold accepts it, the schema does not.
    let bad = text.replace("\"reason\":\"completed\"", "\"reason\":\"finished\"");
    assert_ne!(bad, text);
    std::fs::write(dir.path().join("simple-completed.json"), bad).unwrap();
    let r = fisk(&["--state-dir", s(dir.path()), "verify", "--format", "json"]);
    let f: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|l| l["code"] == "schema")
        .collect();
    assert_eq!(f.len(), 1, "{}", r.stdout);
    assert_eq!(f[0]["line"], 3);
    assert!(f[0]["message"]
        .as_str()
        .unwrap()
        .contains("/terminal/reason"));
    assert_eq!(r.code, 1);
    let r = fisk(&[
        "--state-dir",
        s(dir.path()),
        "verify",
        "--no-schema",
        "--format",
        "json",
    ]);
    assert!(r.json_lines().iter().all(|l| l["code"] != "schema"));
}

/// Validators for schemas/output/*.json (which refer to the v1 defs).
fn output_validator(name: &str) -> jsonschema::Validator {
    let mut resources = Vec::new();
    for dir in ["schemas/v1", "schemas/output"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
            let id = v["$id"].as_str().unwrap().to_owned();
            resources.push((id, jsonschema::Resource::from_contents(v)));
        }
    }
    let registry = jsonschema::Registry::new()
        .extend(resources)
        .unwrap()
        .prepare()
        .unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/output").join(name)).unwrap(),
    )
    .unwrap();
    jsonschema::options()
        .with_registry(&registry)
        .offline()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path().as_str()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

fn check_store_outputs(store: &Path) {
    let d = s(store);
    let fold = output_validator("fold.json");
    let ls = output_validator("ls.json");
    let verify = output_validator("verify.json");
    let validate = output_validator("validate.json");
    let r = fisk(&["--state-dir", d, "ls", "--format", "json"]);
    assert_valid(&ls, &r.json(), "ls");
    for x in r.json().as_array().unwrap() {
        let id = x["run_id"].as_str().unwrap();
        let f = fisk(&["--state-dir", d, "fold", id, "--format", "json"]);
        if f.code == 0 {
            assert_valid(&fold, &f.json(), &format!("fold {id}"));
        }
    }
    for l in fisk(&["--state-dir", d, "verify", "--format", "json"]).json_lines() {
        assert_valid(&verify, &l, "verify line");
    }
    for l in fisk(&["--state-dir", d, "validate", "--format", "json"]).json_lines() {
        assert_valid(&validate, &l, "validate line");
    }
}

#[test]
fn json_output_matches_the_output_schemas() {
    check_store_outputs(store_copy("runs").path());
    check_store_outputs(store_copy("damaged").path());
}
