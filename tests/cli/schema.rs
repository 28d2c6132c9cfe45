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
    // The record without a schema (optional telemetry) is skipped, as every
    // reader skips it: nothing is invalid.
    let violations: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("summary").is_none())
        .collect();
    assert!(violations.is_empty(), "{violations:?}");
    let summary = &lines.last().unwrap()["summary"];
    assert!(summary["records"].as_u64().unwrap() > 400);
    assert_eq!(summary["invalid"], 0);
    assert_eq!(r.code, 0);
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
pub(crate) fn output_validator(name: &str) -> jsonschema::Validator {
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

pub(crate) fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
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
    // migrate (last: it only reads the store): every run of it, then the
    // re-run that finds them complete.
    let dest = tempfile::tempdir().unwrap();
    let to = dest.path().join("runs");
    migrate_json(store, &to, &["--all"]);
    let (_, again) = migrate_json(store, &to, &["--all"]);
    assert_eq!(again["summary"]["appended"], 0);
}

#[test]
fn json_output_matches_the_output_schemas() {
    check_store_outputs(store_copy("runs").path());
    check_store_outputs(store_copy("damaged").path());
}

/// `fisk-admin --format json migrate --from FROM --to TO ARGS...`, its exit
/// code and document, checked against schemas/output/migrate.json and
/// against the totals the schema cannot express.
fn migrate_json(from: &Path, to: &Path, args: &[&str]) -> (i32, Value) {
    let from = format!("file:{}", s(from));
    let to = format!("file:{}", s(to));
    let mut all = vec!["--format", "json", "migrate", "--from", &from, "--to", &to];
    all.extend_from_slice(args);
    let r = fisk(&all);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    let doc = r.json();
    assert_valid(
        &output_validator("migrate.json"),
        &doc,
        &format!("migrate {args:?}"),
    );
    assert_eq!(doc["from"], from.as_str());
    assert_eq!(doc["to"], to.as_str());
    assert_eq!(doc["dry_run"], args.contains(&"--dry-run"));
    let runs = doc["runs"].as_array().unwrap();
    let sum = &doc["summary"];
    let ok = runs
        .iter()
        .filter(|x| ["copied", "complete", "would-copy"].contains(&x["result"].as_str().unwrap()))
        .count();
    assert_eq!(sum["runs"], runs.len());
    assert_eq!(sum["ok"], ok);
    assert_eq!(sum["failed"], runs.len() - ok);
    let appended: u64 = runs.iter().map(|x| x["appended"].as_u64().unwrap()).sum();
    assert_eq!(sum["appended"], appended);
    assert_eq!(r.code, i32::from(ok != runs.len()), "exit status");
    (r.code, doc)
}

/// The report for `run` in a migrate document.
fn report<'a>(doc: &'a Value, run: &str) -> &'a Value {
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["run"] == run)
        .unwrap_or_else(|| panic!("no report for {run}: {doc}"))
}

/// The files of a store dir, name -> bytes.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// The digest migrate reports for a clean journal file.
fn file_digest(path: &Path) -> String {
    let text = std::fs::read(path).unwrap();
    journal::migrate::digest(text.split(|b| *b == b'\n').filter(|l| !l.is_empty()))
}

#[test]
fn migrate_json_output_matches_its_schema_and_says_what_happened() {
    use std::os::unix::fs::PermissionsExt;
    let src = tempfile::tempdir().unwrap();
    for rel in [
        "runs/deferral-waiting",
        "runs/simple-completed",
        "runs/tool-batch",
        "damaged/torn-tail",
        "damaged/interior-corruption",
    ] {
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        std::fs::copy(
            testdata(&format!("{rel}.json")),
            src.path().join(format!("{name}.json")),
        )
        .unwrap();
    }
    // The destination already holds the first two records of one run and a
    // different run under another id.
    let dest_tmp = tempfile::tempdir().unwrap();
    let dest = dest_tmp.path().join("runs");
    std::fs::create_dir(&dest).unwrap();
    std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o700)).unwrap();
    let simple = std::fs::read_to_string(testdata("runs/simple-completed.json")).unwrap();
    let head: String = simple.split_inclusive('\n').take(2).collect();
    std::fs::write(dest.join("simple-completed.json"), head).unwrap();
    let batch = std::fs::read_to_string(testdata("runs/tool-batch.json")).unwrap();
    let other = batch.replacen("\"prompt\":\"", "\"prompt\":\"X", 1);
    assert_ne!(other, batch);
    std::fs::write(dest.join("tool-batch.json"), &other).unwrap();
    for f in ["simple-completed.json", "tool-batch.json"] {
        std::fs::set_permissions(dest.join(f), std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // A dry run writes nothing and says what would happen.
    let before = snapshot(&dest);
    let (code, doc) = migrate_json(src.path(), &dest, &["--all", "--dry-run"]);
    assert_eq!(code, 1);
    assert_eq!(
        snapshot(&dest),
        before,
        "a dry run wrote to the destination"
    );
    let words: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["run"].as_str().unwrap())
        .collect();
    assert_eq!(
        words,
        [
            "deferral-waiting",
            "interior-corruption",
            "simple-completed",
            "tool-batch",
            "torn-tail"
        ]
    );
    let r = report(&doc, "deferral-waiting");
    assert_eq!(r["result"], "would-copy");
    assert_eq!(r["records"], 5);
    assert_eq!(r["already"], 0);
    let r = report(&doc, "simple-completed");
    assert_eq!(r["result"], "would-copy");
    assert_eq!((&r["records"], &r["already"]), (&3.into(), &2.into()));
    assert_eq!(r["notes"][0], "would continue after seq 2");
    assert_eq!(report(&doc, "tool-batch")["result"], "conflict");
    assert_eq!(
        report(&doc, "interior-corruption")["result"],
        "skipped-corrupt"
    );
    assert_eq!(report(&doc, "torn-tail")["result"], "would-copy");
    assert_eq!(doc["summary"]["ok"], 3);

    // The copy: new runs copied, a prefix continued, the conflict left as
    // it was, the corrupt run skipped, the torn tail dropped and said so.
    let (code, doc) = migrate_json(src.path(), &dest, &["--all"]);
    assert_eq!(code, 1);
    let r = report(&doc, "deferral-waiting");
    assert_eq!(r["result"], "copied");
    assert_eq!((&r["records"], &r["appended"]), (&5.into(), &5.into()));
    assert_eq!(
        r["bytes"],
        std::fs::metadata(dest.join("deferral-waiting.json"))
            .unwrap()
            .len()
    );
    assert_eq!(
        r["sha256"],
        file_digest(&src.path().join("deferral-waiting.json"))
    );
    assert_eq!(r["notes"], serde_json::json!([]));
    let r = report(&doc, "simple-completed");
    assert_eq!(r["result"], "copied");
    assert_eq!(
        (&r["records"], &r["already"], &r["appended"]),
        (&3.into(), &2.into(), &1.into())
    );
    assert_eq!(r["notes"][0], "continued after seq 2 already there");
    assert_eq!(
        std::fs::read_to_string(dest.join("simple-completed.json")).unwrap(),
        simple
    );
    let r = report(&doc, "tool-batch");
    assert_eq!(r["result"], "conflict");
    assert_eq!(r["appended"], 0);
    assert!(r["notes"][0].as_str().unwrap().contains("differs"), "{r}");
    assert_eq!(
        std::fs::read_to_string(dest.join("tool-batch.json")).unwrap(),
        other,
        "a conflicting run was written to"
    );
    let r = report(&doc, "interior-corruption");
    assert_eq!(r["result"], "skipped-corrupt");
    assert!(!dest.join("interior-corruption.json").exists());
    let r = report(&doc, "torn-tail");
    assert_eq!(r["result"], "copied");
    assert_eq!(r["records"], 3);
    assert!(r["notes"][0]
        .as_str()
        .unwrap()
        .contains("torn tail dropped: line 4"));
    assert_eq!(
        doc["summary"],
        serde_json::json!({"runs": 5, "ok": 3, "failed": 2, "appended": 9,
            "seconds": doc["summary"]["seconds"]})
    );
    let copied: Vec<(String, Value)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["result"] == "copied")
        .map(|x| (x["run"].as_str().unwrap().to_owned(), x["sha256"].clone()))
        .collect();

    // Again: a no-op, every copied run complete with the same digest.
    let before = snapshot(&dest);
    let (code, doc) = migrate_json(src.path(), &dest, &["--all"]);
    assert_eq!(code, 1);
    assert_eq!(snapshot(&dest), before, "a finished migrate wrote again");
    assert_eq!(doc["summary"]["appended"], 0);
    for (run, sha) in &copied {
        let r = report(&doc, run);
        assert_eq!(r["result"], "complete", "{r}");
        assert_eq!(r["already"], r["records"]);
        assert_eq!(&r["sha256"], sha);
    }
    // A dry run of a finished migrate: complete, but not verified.
    let (_, doc) = migrate_json(src.path(), &dest, &["deferral-waiting", "--dry-run"]);
    let r = report(&doc, "deferral-waiting");
    assert_eq!(
        (&r["result"], &r["sha256"]),
        (&"complete".into(), &Value::Null)
    );

    // The readable prefix of the corrupt run, on request.
    let (code, doc) = migrate_json(
        src.path(),
        &dest,
        &["interior-corruption", "--include-corrupt"],
    );
    assert_eq!(code, 0);
    let r = report(&doc, "interior-corruption");
    assert_eq!(r["result"], "copied");
    assert_eq!(r["records"], 2);
    assert!(r["notes"][0].as_str().unwrap().contains("readable prefix"));

    // A live source run is skipped; a run that is not there fails; a
    // verified copy may delete its source.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(src.path().join("tool-batch.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let (code, doc) = migrate_json(
        src.path(),
        fresh.path(),
        &[
            "tool-batch",
            "no-such-run",
            "deferral-waiting",
            "--delete-source",
        ],
    );
    drop(lock);
    assert_eq!(code, 1);
    let r = report(&doc, "tool-batch");
    assert_eq!(r["result"], "skipped-live");
    assert!(r["notes"][0].as_str().unwrap().contains("--allow-live"));
    assert!(src.path().join("tool-batch.json").exists());
    let r = report(&doc, "no-such-run");
    assert_eq!(r["result"], "failed");
    assert!(r["notes"][0].as_str().unwrap().contains("not found"), "{r}");
    let r = report(&doc, "deferral-waiting");
    assert_eq!(r["result"], "copied");
    assert_eq!(r["source_deleted"], true);
    assert!(!src.path().join("deferral-waiting.json").exists());
    assert!(fresh.path().join("deferral-waiting.json").exists());

    // Nothing selected: an empty list, exit 0.
    let empty = tempfile::tempdir().unwrap();
    let (code, doc) = migrate_json(empty.path(), fresh.path(), &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(doc["runs"], serde_json::json!([]));
}

/// The schema's `result` words are exactly how the tool serializes every
/// `Outcome` (and what its text table prints).
#[test]
fn the_migrate_schema_lists_exactly_the_outcome_words() {
    use journal::migrate::Outcome;
    // No wildcard: a new Outcome does not compile until it is listed here.
    let listed = |o: Outcome| match o {
        Outcome::Copied
        | Outcome::Complete
        | Outcome::WouldCopy
        | Outcome::SkippedLive
        | Outcome::SkippedCorrupt
        | Outcome::Conflict
        | Outcome::Failed => o,
    };
    let all = [
        Outcome::Copied,
        Outcome::Complete,
        Outcome::WouldCopy,
        Outcome::SkippedLive,
        Outcome::SkippedCorrupt,
        Outcome::Conflict,
        Outcome::Failed,
    ];
    let mut printed = BTreeSet::new();
    for o in all.map(listed) {
        let v = serde_json::to_value(o).unwrap();
        assert_eq!(v, o.word(), "JSON and text disagree on {o:?}");
        printed.insert(v.as_str().unwrap().to_owned());
    }
    assert_eq!(printed.len(), 7);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/output/migrate.json")).unwrap(),
    )
    .unwrap();
    let words: BTreeSet<String> = schema["$defs"]["result"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(words, printed);
}

/// `stats`, `query`, `search` and `stats --all` print what their schemas
/// say, on the agent's journals of both generations and on damaged stores
/// (whose unreadable runs are named).
#[test]
fn inspection_json_matches_its_schemas() {
    let stats = output_validator("stats.json");
    let query = output_validator("query.json");
    let search = output_validator("search.json");
    let all = output_validator("stats-all.json");
    for rel in [
        "agent-journals/v1",
        "agent-journals/v3",
        "runs",
        "damaged",
        "damaged-v1",
    ] {
        let store = store_copy(rel);
        let d = s(store.path());
        let listed = fisk(&["--state-dir", d, "ls", "-o", "json"]).json();
        for x in listed.as_array().unwrap() {
            let id = x["run_id"].as_str().unwrap();
            for (cmd, v) in [("stats", &stats), ("query", &query)] {
                let r = fisk(&["--state-dir", d, cmd, id, "-o", "json"]);
                // A damaged run that does not read is an error (exit 2),
                // never a document.
                if r.code != 0 && rel.starts_with("damaged") {
                    assert_eq!(r.code, 2, "{rel} {cmd} {id}: {}", r.stderr);
                    assert!(r.stdout.is_empty(), "{rel} {cmd} {id}: {}", r.stdout);
                    continue;
                }
                assert_eq!(r.code, 0, "{rel} {cmd} {id}: {}", r.stderr);
                assert_valid(v, &r.json(), &format!("{rel} {cmd} {id}"));
            }
        }
        for args in [
            vec!["search"],
            vec!["search", "--agent", "nats-ops"],
            vec!["search", "--match", "(?i)stream", "--in", "all"],
        ] {
            let mut a = vec!["--state-dir", d];
            a.extend(&args);
            a.extend(["-o", "json"]);
            let r = fisk(&a);
            // grep's convention: 1 when no run matched.
            let none = r.json()["runs"].as_array().is_some_and(Vec::is_empty);
            assert_eq!(r.code, i32::from(none), "{rel} {args:?}: {}", r.stderr);
            assert_valid(&search, &r.json(), &format!("{rel} {args:?}"));
        }
        for by in ["model", "agent,day", "tool,model"] {
            let r = fisk(&["--state-dir", d, "stats", "--all", "--by", by, "-o", "json"]);
            assert_eq!(r.code, 0, "{rel} --by {by}: {}", r.stderr);
            assert_valid(&all, &r.json(), &format!("{rel} stats --all --by {by}"));
        }
    }
}

/// Each schema in schemas/output/ is one the tests here check real output
/// against.
#[test]
fn every_output_schema_is_checked() {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("schemas/output"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "backups-prune.json",
            "backups-restore.json",
            "backups.json",
            "end.json",
            "fold.json",
            "inbox.json",
            "log.json",
            "ls.json",
            "migrate.json",
            "query.json",
            "recover.json",
            "seal.json",
            "search.json",
            "stats-all.json",
            "stats.json",
            "upgrade.json",
            "validate.json",
            "verify-against.json",
            "verify.json"
        ],
        "a new output schema needs a test that validates real output against it (upgrade.json: tests/cli/upgrade.rs; end.json: tests/cli/end.rs; log, seal and verify-against: tests/cli/custody.rs)"
    );
}
