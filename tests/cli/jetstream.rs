//! The JetStream backend against a real nats-server (SPEC 8, CLI.md
//! `migrate` and `stream`). Each test starts its own server.

use crate::nats_support::{publish_interleaved, testdata_runs, NatsServer};
use crate::schema::{assert_valid, output_validator};
use crate::support::{assert_printable, fisk_in, s, steps, store_copy, testdata, Run};
use crate::upgrade::{paste_in, quoted_commands};
use async_nats::jetstream::stream::{Config, DiscardPolicy};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STREAM: &str = "SESSIONS";
const SUBJECT: &str = "fisk.sessions.>";

fn fisk_js(srv: &NatsServer, home: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--server", srv.url.as_str()];
    all.extend_from_slice(args);
    fisk_in(home, &all, None)
}

/// A file store of `n` runs built from the testdata run `template` with the
/// meta record's run_id changed to each new id.
pub(crate) fn synth_store(n: usize, template: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(testdata(&format!("runs/{template}.json"))).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let from = format!("\"run_id\":\"{template}\"");
    assert!(text.contains(&from));
    for i in 0..n {
        let id = format!("{template}-{i:04}");
        let body = text.replacen(&from, &format!("\"run_id\":\"{id}\""), 1);
        std::fs::write(dir.path().join(format!("{id}.json")), body).unwrap();
    }
    dir
}

/// Whether `needle` is in `hay` once the terminal wrapping is undone.
fn says(hay: &str, needle: &str) -> bool {
    let flat = |t: &str| -> String {
        t.chars()
            .filter(|c| !c.is_whitespace() && *c != '│')
            .collect()
    };
    flat(hay).contains(&flat(needle))
}

pub(crate) fn ls_statuses(r: &Run) -> BTreeMap<String, (String, u64)> {
    assert_eq!(r.code, 0, "ls failed: {}", r.stderr);
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["run_id"].as_str().unwrap().to_owned(),
                (
                    x["status"].as_str().unwrap().to_owned(),
                    x["records"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// Every run in the stream, read back, equals the file bytes exactly.
pub(crate) fn assert_stream_holds(
    srv: &NatsServer,
    stream: &str,
    want: &BTreeMap<String, Vec<u8>>,
) {
    let store = srv.store(stream);
    assert_eq!(
        store.runs().unwrap(),
        want.keys().cloned().collect::<Vec<_>>()
    );
    let mut total = 0;
    for (id, bytes) in want {
        let j = store.read(id).unwrap();
        let mut back = Vec::new();
        for e in &j.entries {
            back.extend_from_slice(&e.raw);
            back.push(b'\n');
        }
        assert_eq!(back, *bytes, "run {id} differs after the round trip");
        total += j.entries.len() as u64;
    }
    // No duplicate and no stray message anywhere in the stream.
    assert_eq!(srv.messages(stream), total);
}

#[test]
fn file_to_jetstream_copy_is_byte_identical_for_every_testdata_run() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let to = format!("jetstream:{STREAM}");
    let from = format!("file:{}", s(src.path()));
    let r = migrate_all(&srv, home.path(), &from, &to);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_stream_holds(&srv, STREAM, &testdata_runs());

    // Re-running a finished migrate is a clean no-op.
    let r = fisk_js(
        &srv,
        home.path(),
        &[
            "--format", "json", "migrate", "--from", &from, "--to", &to, "--all",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = r.json();
    assert_valid(&output_validator("migrate.json"), &doc, "migrate re-run");
    assert_eq!(doc["summary"]["appended"], 0);
    for run in doc["runs"].as_array().unwrap() {
        assert_eq!(run["result"], "complete", "{run}");
        assert!(run["sha256"].is_string());
    }
    assert_stream_holds(&srv, STREAM, &testdata_runs());
}

#[test]
fn jetstream_to_jetstream_copy_is_byte_identical() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    srv.spec_stream("OTHER", "other.prefix.>");
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let from = format!("file:{}", s(src.path()));
    let a = format!("jetstream:{STREAM}");
    let r = migrate_all(&srv, home.path(), &from, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = fisk_js(
        &srv,
        home.path(),
        &[
            "migrate",
            "--from",
            &a,
            "--to",
            "jetstream:OTHER",
            "--all",
            "--jobs",
            "3",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_stream_holds(&srv, "OTHER", &testdata_runs());
}

#[test]
fn file_to_jetstream_to_file_round_trip_is_byte_identical() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let back = tempfile::tempdir().unwrap();
    let back_dir = back.path().join("runs");
    let js = format!("jetstream:{STREAM}");
    let r = migrate_all(&srv, home.path(), &format!("file:{}", s(src.path())), &js);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = migrate_all(&srv, home.path(), &js, &format!("file:{}", s(&back_dir)));
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for (id, bytes) in testdata_runs() {
        let got = std::fs::read(back_dir.join(format!("{id}.json"))).unwrap();
        assert_eq!(
            got, bytes,
            "run {id} differs after file -> JetStream -> file"
        );
    }
}

#[test]
fn a_replicated_stream_in_a_cluster_is_copied_read_and_verified() {
    // R3 across three servers: a new consumer there answers only once its
    // leader has started, and appends cannot be pipelined.
    let servers = NatsServer::cluster(Config {
        num_replicas: 3,
        ..journal::store::jetstream::spec_config(STREAM, SUBJECT)
    });
    let urls: Vec<&str> = servers.iter().map(|x| x.url.as_str()).collect();
    let urls = urls.join(",");
    let home = tempfile::tempdir().unwrap();
    let fisk_r3 = |args: &[&str]| {
        let mut all = vec!["--server", urls.as_str()];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    // The testdata runs and 200 more: each run verify reads is a consumer
    // of its own, and some of them are asked before they can answer.
    let src = store_copy("runs");
    let many = synth_store(200, "tool-batch");
    for e in std::fs::read_dir(many.path()).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, src.path().join(p.file_name().unwrap())).unwrap();
    }
    let from = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");
    let r = fisk_r3(&["migrate", "--from", &from, "--to", &js, "--all"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // Every run reads back as it does from the files: verify finds the
    // same, and nothing unreadable.
    let on_files = fisk_r3(&["--store", &from, "verify", "--format", "json"]);
    let on_js = fisk_r3(&["--store", &js, "verify", "--format", "json"]);
    assert!(!on_js.stdout.contains("cannot read"), "{}", on_js.stdout);
    assert_eq!(
        on_js.code, on_files.code,
        "{}\n{}",
        on_js.stdout, on_js.stderr
    );
    let summary = |r: &Run| {
        let last = r.json_lines().last().cloned().unwrap_or_default();
        last["summary"].clone()
    };
    let (f, j) = (summary(&on_files), summary(&on_js));
    assert!(
        f["records"].as_u64().is_some_and(|n| n > 0),
        "{}",
        on_files.stdout
    );
    assert_eq!(f["records"], j["records"], "{}", on_js.stdout);
    assert_eq!(f["errors"], j["errors"], "{}", on_js.stdout);
    // A re-run finds every run complete; the way back is byte-identical.
    let r = fisk_r3(&["migrate", "--from", &from, "--to", &js, "--all"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let back = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(&back.path().join("runs")));
    let r = fisk_r3(&["migrate", "--from", &js, "--to", &to, "--all"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for (id, bytes) in testdata_runs() {
        let got = std::fs::read(back.path().join("runs").join(format!("{id}.json"))).unwrap();
        assert_eq!(got, bytes, "run {id} differs after the round trip");
    }
}

#[test]
fn file_to_file_migrate_copies_and_resumes() {
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let dest = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(&dest.path().join("runs")));
    let from = format!("file:{}", s(src.path()));
    let r = fisk_in(
        home.path(),
        &["migrate", "--from", &from, "--to", &to, "--all"],
        None,
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // Each copy is created whole: its journal and nothing else (no lock
    // file where the file system has unnamed files, no temporary name).
    let dest_dir = dest.path().join("runs");
    let want = testdata_runs();
    for e in std::fs::read_dir(&dest_dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        // The destination's audit log records the copy (issue 38).
        if name == "fisk-admin-audit.jsonl" {
            continue;
        }
        let (id, ext) = name.rsplit_once('.').unwrap();
        assert!(want.contains_key(id), "stray file {name}");
        assert!(ext == "json" || ext == "lock", "stray file {name}");
    }
    // The copies are ordinary runs: clean for verify, removable by rm.
    let r = fisk_in(home.path(), &["--state-dir", s(&dest_dir), "verify"], None);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let first = want.keys().next().unwrap().clone();
    let r = fisk_in(
        home.path(),
        &["--state-dir", s(&dest_dir), "rm", &first, "--yes"],
        None,
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!dest_dir.join(format!("{first}.json")).exists());
    assert!(!dest_dir.join(format!("{first}.lock")).exists());
    // A re-run copies it again and leaves the others as they are.
    let r = fisk_in(
        home.path(),
        &["migrate", "--from", &from, "--to", &to, "--all"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (id, bytes) in want {
        assert_eq!(
            std::fs::read(dest_dir.join(format!("{id}.json"))).unwrap(),
            bytes
        );
    }
}

#[test]
fn a_dry_run_into_a_missing_directory_previews_every_run_and_creates_nothing() {
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let dest = tempfile::tempdir().unwrap();
    // Neither the directory nor its parent exists yet: a first migration.
    let missing = dest.path().join("new").join("runs");
    let from = format!("file:{}", s(src.path()));
    let to = format!("file:{}", s(&missing));
    let want = testdata_runs();
    let results = |r: &Run| -> BTreeMap<String, String> {
        let doc = r.json();
        assert_valid(&output_validator("migrate.json"), &doc, "migrate --dry-run");
        assert_eq!(doc["dry_run"], true);
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let run = x["run"].as_str().unwrap().to_owned();
                (run, x["result"].as_str().unwrap().to_owned())
            })
            .collect()
    };
    let dry = [
        "--format",
        "json",
        "migrate",
        "--from",
        &from,
        "--to",
        &to,
        "--all",
        "--dry-run",
    ];

    let r = fisk_in(home.path(), &dry, None);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let got = results(&r);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(
        got.values().all(|v| v == "would-copy"),
        "every run would be copied: {got:?}"
    );
    for x in r.json()["runs"].as_array().unwrap() {
        assert_eq!(x["already"], 0, "{x}");
        assert_eq!(x["appended"], 0, "{x}");
    }
    assert!(
        !dest.path().join("new").exists(),
        "a dry run created the destination"
    );
    // The same dry run as a table.
    let r = fisk_in(home.path(), &dry[2..], None);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("would-copy"), "{}", r.stdout);
    assert!(!dest.path().join("new").exists());

    // The preview was right: the real migrate copies them all, after which
    // a dry run finds each one complete.
    let r = fisk_in(
        home.path(),
        &["migrate", "--from", &from, "--to", &to, "--all"],
        None,
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = fisk_in(home.path(), &dry, None);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(results(&r).values().all(|v| v == "complete"));
}

#[test]
fn a_dry_run_into_a_path_below_a_file_fails_as_the_real_run_would() {
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let dest = tempfile::tempdir().unwrap();
    std::fs::write(dest.path().join("plain"), b"not a directory").unwrap();
    let from = format!("file:{}", s(src.path()));
    for to in [
        format!("file:{}", s(&dest.path().join("plain"))),
        format!("file:{}", s(&dest.path().join("plain").join("runs"))),
    ] {
        for dry in [true, false] {
            let mut args = vec!["--format", "json", "migrate", "--from", &from, "--to", &to];
            args.extend(["--all"]);
            if dry {
                args.push("--dry-run");
            }
            let r = fisk_in(home.path(), &args, None);
            assert_eq!(r.code, 2, "{to} dry_run={dry}\n{}\n{}", r.stdout, r.stderr);
            assert!(r.stdout.is_empty(), "{}", r.stdout);
            assert!(r.stderr.contains("plain"), "{}", r.stderr);
        }
    }
    assert_eq!(
        std::fs::read(dest.path().join("plain")).unwrap(),
        b"not a directory"
    );
}

#[test]
fn migrate_refuses_one_directory_spelt_two_ways() {
    use crate::support::Fixture;
    let fx = Fixture::new(&[]);
    std::fs::create_dir(fx.path("dst")).unwrap();
    std::fs::create_dir(fx.path("sub")).unwrap();
    for (id, bytes) in testdata_runs() {
        std::fs::write(fx.path("dst").join(format!("{id}.json")), bytes).unwrap();
    }
    std::os::unix::fs::symlink("dst", fx.path("link")).unwrap();
    let abs = format!("file:{}", s(&fx.path("dst")));
    let before = testdata_runs();
    let pairs = [
        ("file:dst", "file:dst"),
        ("file:dst", "file:./dst"),
        ("file:dst/", "file:dst"),
        ("file:dst", abs.as_str()),
        ("file:link", "file:dst"),
        ("file:dst", "file:sub/../dst"),
    ];
    for (from, to) in pairs {
        for extra in [
            &["--all"][..],
            &["--all", "--delete-source"],
            &["--all", "--dry-run"],
        ] {
            let mut args = vec!["--format", "json", "migrate", "--from", from, "--to", to];
            args.extend_from_slice(extra);
            let r = fx.fisk(&args);
            assert_eq!(
                r.code, 2,
                "{from} -> {to} {extra:?}: {}\n{}",
                r.stdout, r.stderr
            );
            assert!(r.stdout.is_empty(), "{}", r.stdout);
            assert!(
                r.stderr.contains(&format!("--from {from} and --to {to}"))
                    && r.stderr.contains("same directory"),
                "{from} -> {to}: {}",
                r.stderr
            );
            for (id, bytes) in &before {
                let now = std::fs::read(fx.path("dst").join(format!("{id}.json")));
                assert_eq!(
                    now.ok().as_ref(),
                    Some(bytes),
                    "{from} -> {to} {extra:?} changed run {id}"
                );
            }
        }
    }
    // Different directories are still told apart.
    let r = fx.fisk(&["migrate", "--from", "file:dst", "--to", "file:sub", "--all"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn ls_gives_the_same_statuses_on_both_backends() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let from = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");
    let r = migrate_all(&srv, home.path(), &from, &js);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file_ls = ls_statuses(&fisk_in(
        home.path(),
        &["--state-dir", s(src.path()), "--format", "json", "ls"],
        None,
    ));
    let js_run = fisk_js(
        &srv,
        home.path(),
        &["--store", &js, "--format", "json", "ls"],
    );
    let js_ls = ls_statuses(&js_run);
    assert_eq!(file_ls, js_ls);
    // The stream keeps no per-run size: unknown, not a misleading 0.
    for x in js_run.json().as_array().unwrap() {
        assert!(x["bytes"].is_null(), "{x}");
    }
    let table = fisk_js(&srv, home.path(), &["--store", &js, "ls"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(!table.stdout.contains(" 0 B"), "{}", table.stdout);
    // And they are the statuses the corpus expects.
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(testdata("expected/ls-runs.json")).unwrap()).unwrap();
    for e in expected.as_array().unwrap() {
        let id = e["run_id"].as_str().unwrap();
        assert_eq!(js_ls[id].0, e["status"].as_str().unwrap(), "run {id}");
    }
}

/// A server with the SPEC 8 stream holding every testdata run (copied by
/// `migrate`): the server, a home, the source store, `jetstream:STREAM`.
fn testdata_on_jetstream() -> (NatsServer, tempfile::TempDir, tempfile::TempDir, String) {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let js = format!("jetstream:{STREAM}");
    let r = migrate_all(&srv, home.path(), &format!("file:{}", s(src.path())), &js);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (srv, home, src, js)
}

#[test]
fn rm_on_jetstream_keeps_the_run_in_a_file_store_that_migrate_puts_back() {
    let (srv, home, src, js) = testdata_on_jetstream();
    let want = std::fs::read(src.path().join("tool-batch.json")).unwrap();
    let ls = |home: &Path| {
        let r = fisk_js(&srv, home, &["--store", &js, "--format", "json", "ls"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["run_id"].as_str().unwrap().to_owned())
            .collect::<std::collections::BTreeSet<_>>()
    };
    let before = ls(home.path());
    assert!(before.contains("tool-batch"));
    // A message on no record subject of the run (damage, a foreign
    // writer): kept beside the journal, not inside it.
    srv.with_js(async move |js| {
        js.publish("fisk.sessions.tool-batch.junk", "{\"stray\":1}".into())
            .await
            .unwrap()
            .await
            .unwrap();
    });

    let r = fisk_js(
        &srv,
        home.path(),
        &[
            "--store",
            &js,
            "--format",
            "json",
            "rm",
            "--yes",
            "tool-batch",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = &r.json()[0];
    let kept = std::path::PathBuf::from(done["kept"].as_str().unwrap());
    assert!(
        kept.starts_with(home.path().join("state/fisk-admin/removed").join(STREAM)),
        "{kept:?}"
    );
    assert_eq!(std::fs::read(&kept).unwrap(), want, "kept byte for byte");
    let other = std::fs::read_to_string(kept.with_file_name("tool-batch.other.jsonl")).unwrap();
    let other: serde_json::Value = serde_json::from_str(other.trim_end()).unwrap();
    assert_eq!(other["subject"], "fisk.sessions.tool-batch.junk");
    assert_eq!(other["body"], "{\"stray\":1}");
    let after = ls(home.path());
    assert!(!after.contains("tool-batch"), "{after:?}");
    assert_eq!(after.len() + 1, before.len(), "only that run went");

    // The command it prints, pasted as printed, puts the run back as it
    // was: it carries this rm's connection flags (issue 23.5: without
    // them it went to 127.0.0.1:4222).
    let restore = done["restore"].as_str().unwrap();
    assert!(
        restore.starts_with(&format!("fisk-admin --server {} migrate ", srv.url)),
        "{restore}"
    );
    let r = crate::upgrade::paste_in(home.path(), restore);
    assert_eq!(r.code, 0, "{restore}: {}{}", r.stdout, r.stderr);
    assert_eq!(ls(home.path()), before);
    // The same in text.
    let r = fisk_js(
        &srv,
        home.path(),
        &["--store", &js, "rm", "--yes", "tool-batch"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let restore = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("restore with: "))
        .unwrap_or_else(|| panic!("no restore line: {}", r.stdout));
    let r = crate::upgrade::paste_in(home.path(), restore);
    assert_eq!(r.code, 0, "{restore}: {}{}", r.stdout, r.stderr);
    assert_eq!(ls(home.path()), before);
    let dest = tempfile::tempdir().unwrap();
    let r = migrate_all(&srv, home.path(), &js, &format!("file:{}", s(dest.path())));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read(dest.path().join("tool-batch.json")).unwrap(),
        want
    );
}

#[test]
fn show_fold_and_verify_work_on_jetstream() {
    let (srv, home, src, js) = testdata_on_jetstream();
    let fold = fisk_js(
        &srv,
        home.path(),
        &["--store", &js, "--format", "json", "fold", "tool-batch"],
    );
    assert_eq!(fold.code, 0, "{}", fold.stderr);
    let want: serde_json::Value = serde_json::from_slice(
        &std::fs::read(testdata("expected/runs/tool-batch.fold.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(fold.json(), want);
    let show = fisk_js(
        &srv,
        home.path(),
        &["--store", &js, "show", "deferral-waiting"],
    );
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(show.stdout.contains("waiting"), "{}", show.stdout);
    // verify gives the same content findings as on the files.
    let findings = |r: &Run| {
        let mut v: Vec<(String, String, Option<u64>)> = r
            .json_lines()
            .iter()
            .filter(|f| f.get("code").is_some() && f["code"] != "permissions")
            .map(|f| {
                (
                    f["run"].as_str().unwrap().to_owned(),
                    f["code"].as_str().unwrap().to_owned(),
                    f["line"].as_u64(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let on_js = fisk_js(
        &srv,
        home.path(),
        &["--store", &js, "--format", "json", "verify"],
    );
    let on_file = fisk_in(
        home.path(),
        &["--state-dir", s(src.path()), "--format", "json", "verify"],
        None,
    );
    assert_eq!(findings(&on_js), findings(&on_file));
    // In text: the record's position, no byte, no file (b-13).
    let text = fisk_js(&srv, home.path(), &["--store", &js, "verify", "--details"]);
    crate::output::assert_verify_text_names_no_file(&text.stdout, "tool-batch");
    // The fix carries the store and connection flags.
    let row = text
        .stdout
        .lines()
        .find(|l| l.starts_with("tool-batch\t"))
        .unwrap_or_else(|| panic!("no row for tool-batch:\n{}", text.stdout));
    assert!(
        row.contains(&format!("fisk-admin --store {js} --server {}", srv.url))
            && row.ends_with(" upgrade tool-batch"),
        "{row}"
    );
    // fold and show as of a seq, on JetStream too.
    let r = fisk_js(
        &srv,
        home.path(),
        &["--store", &js, "show", "tool-batch", "--until-seq", "2"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("Run tool-batch as of seq 2\n"),
        "{}",
        r.stdout
    );
    let info = fisk_js(&srv, home.path(), &["--store", &js, "info"]);
    assert_eq!(info.code, 0);
    assert!(
        info.stdout.contains(&srv.url) && info.stdout.contains("fisk.sessions"),
        "{}",
        info.stdout
    );
}

#[test]
fn each_misconfigured_stream_is_refused_with_its_own_message() {
    let srv = NatsServer::start();
    let good = |name: &str, subject: &str| journal::store::jetstream::spec_config(name, subject);
    let cases: Vec<(Config, &str, &str)> = vec![
        (
            Config {
                subjects: vec!["a1.>".into(), "a2.>".into()],
                ..good("TWO", "x")
            },
            "subjects",
            "--subjects",
        ),
        (
            Config {
                subjects: vec!["plain.subject".into()],
                ..good("NOWILD", "x")
            },
            "subjects",
            "PREFIX.>",
        ),
        (
            Config {
                max_messages_per_subject: 5,
                ..good("PERSUBJ", "b.>")
            },
            "max_msgs_per_subject",
            "--max-msgs-per-subject 1",
        ),
        (
            Config {
                discard: DiscardPolicy::Old,
                discard_new_per_subject: false,
                ..good("DISCOLD", "c.>")
            },
            "discard",
            "--discard new",
        ),
        (
            Config {
                discard_new_per_subject: false,
                ..good("NOPERSUBJ", "d.>")
            },
            "discard_new_per_subject",
            "--discard-per-subject",
        ),
        (
            Config {
                max_age: Duration::from_secs(3600),
                ..good("AGED", "e.>")
            },
            "max_age",
            "max_age to 0",
        ),
        (
            Config {
                max_message_size: 1024,
                ..good("SMALL", "f.>")
            },
            "max_msg_size",
            "--max-msg-size",
        ),
    ];
    let home = tempfile::tempdir().unwrap();
    for (config, setting, fix) in cases {
        let name = config.name.clone();
        srv.raw_stream(config);
        let store = format!("jetstream:{name}");
        let r = fisk_js(&srv, home.path(), &["--store", &store, "ls"]);
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(
            says(&r.stderr, setting) && says(&r.stderr, fix) && says(&r.stderr, &name),
            "{name}: {}",
            r.stderr
        );
        let r = fisk_js(&srv, home.path(), &["stream", "check", &name]);
        assert_eq!(r.code, 1, "{name}: {}", r.stdout);
        assert!(r.stdout.contains(setting), "{name}: {}", r.stdout);
        // create refuses to touch it.
        let r = fisk_js(
            &srv,
            home.path(),
            &["stream", "create", &name, "--subject", "z.>"],
        );
        assert_ne!(
            r.code, 0,
            "{name}: stream create touched an existing stream"
        );
    }
    // verify reads a misconfigured stream and reports it as a finding.
    let r = fisk_js(
        &srv,
        home.path(),
        &["--store", "jetstream:AGED", "--format", "json", "verify"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r
        .json_lines()
        .iter()
        .any(|f| f["code"] == "stream-config" && f["severity"] == "error"));
    // A missing stream says how to create it.
    let r = fisk_js(&srv, home.path(), &["--store", "jetstream:NOPE", "ls"]);
    assert_eq!(r.code, 2);
    assert!(
        says(&r.stderr, "NOPE") && says(&r.stderr, "stream create") && says(&r.stderr, &srv.url),
        "{}",
        r.stderr
    );
}

/// `stream check` and `info` name the server's version (issue 40), as the
/// server states it; `stream check` says how many subjects the stream
/// holds and what their index costs the server's memory, and warns of no
/// defect on a server without one.
#[test]
fn stream_check_and_info_name_the_server_and_its_subject_index() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let r = fisk_js(&srv, h, &["stream", "create", STREAM, "--subject", SUBJECT]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let runs: Vec<(String, Vec<Vec<u8>>)> = testdata_runs()
        .into_iter()
        .map(|(id, bytes)| {
            let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
            (id, lines.map(<[u8]>::to_vec).collect())
        })
        .collect();
    publish_interleaved(&srv, &runs);
    let stored = srv.messages(STREAM);
    assert!(stored > 0);
    // The version the server says it is, to a client of its own.
    let version = srv.with_js(async |js| js.client().server_info().version);
    assert!(version.starts_with("2."), "{version}");
    let r = fisk_js(&srv, h, &["--format", "json", "stream", "check", STREAM]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["server_version"], version.as_str(), "{}", r.stdout);
    // One message a subject (SPEC 8): as many subjects as messages.
    assert_eq!(j["subject_count"], stored, "{}", r.stdout);
    assert_eq!(j["subject_index_bytes"], stored * 120, "{}", r.stdout);
    assert_eq!(j["warnings"], serde_json::json!([]), "{}", r.stdout);
    let r = fisk_js(&srv, h, &["stream", "check", STREAM]);
    assert!(
        r.stdout.contains(&format!("  server:   nats-server {version}\n"))
            && r.stdout.contains(&format!("  index:    {stored} subjects, about {} of the server's memory on each replica (120 bytes a subject", human(stored * 120))),
        "{}",
        r.stdout
    );
    let store = format!("jetstream:{STREAM}");
    let r = fisk_js(&srv, h, &["--store", &store, "info"]);
    assert!(
        r.stdout
            .contains(&format!("  version:   nats-server {version}\n")),
        "{}",
        r.stdout
    );
    let r = fisk_js(&srv, h, &["--store", &store, "info", "--format", "json"]);
    assert_eq!(r.json()["server_version"], version.as_str(), "{}", r.stdout);
    // A file store has no server.
    let r = fisk_js(&srv, h, &["--state-dir", s(h), "info", "--format", "json"]);
    assert_eq!(
        r.json()["server_version"],
        serde_json::Value::Null,
        "{}",
        r.stdout
    );
}

#[test]
fn stream_create_makes_exactly_the_spec_config_and_is_idempotent() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let r = fisk_js(
        &srv,
        home.path(),
        &["stream", "create", STREAM, "--subject", SUBJECT],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = fisk_js(
        &srv,
        home.path(),
        &["--format", "json", "stream", "check", STREAM],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["ok"], true);
    assert_eq!(r.json()["prefix"], "fisk.sessions");
    let cfg = srv.store(STREAM).config().clone();
    assert_eq!(cfg.max_messages_per_subject, 1);
    assert_eq!(cfg.discard, DiscardPolicy::New);
    assert!(cfg.discard_new_per_subject && cfg.allow_direct);
    assert!(cfg.max_age.is_zero());
    assert_eq!(cfg.max_message_size, -1);
    let r = fisk_js(
        &srv,
        home.path(),
        &["stream", "create", STREAM, "--subject", SUBJECT],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("nothing changed"));
    let r = fisk_js(
        &srv,
        home.path(),
        &["stream", "create", STREAM, "--subject", "else.>"],
    );
    assert_eq!(r.code, 2);
    let r = fisk_js(
        &srv,
        home.path(),
        &["stream", "create", "X", "--subject", "no-wildcard"],
    );
    assert_eq!(r.code, 2);
}

#[test]
fn a_stream_whose_subject_holds_escapes_is_shown_neutralised() {
    // Whoever may edit a shared stream chooses its subject; the server
    // refuses only whitespace and NUL in it.
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let subject = "ev\u{1b}[2J\u{1b}]52;c;SGk=\u{7}\u{9b}31m\u{202e}X.>";
    let r = fisk_js(
        &srv,
        home.path(),
        &["stream", "create", "EVIL", "--subject", subject],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for args in [
        &["stream", "check", "EVIL"][..],
        &["--store", "jetstream:EVIL", "info"][..],
        &["--format", "json", "stream", "check", "EVIL"][..],
    ] {
        let r = fisk_js(&srv, home.path(), args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_printable(&format!("{args:?}"), &r.stdout);
        assert_printable(&format!("{args:?}"), &r.stderr);
        assert!(r.stdout.contains("ev\\u"), "{args:?}: {}", r.stdout);
    }
}

#[test]
fn an_unreachable_server_fails_fast_and_names_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["--store", "jetstream:S", "ls"][..],
        &["--store", "jetstream:S", "verify"][..],
        &["stream", "check", "S"][..],
        &["stream", "create", "S", "--subject", "s.>"][..],
    ] {
        let started = Instant::now();
        let mut all = vec!["--server", url.as_str()];
        all.extend_from_slice(args);
        let r = fisk_in(home.path(), &all, None);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{args:?} took {:?}",
            started.elapsed()
        );
        assert!(
            says(&r.stderr, &url) && says(&r.stderr, "\"S\""),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn credentials_come_from_flags_urls_and_contexts_and_bad_ones_are_named() {
    let srv = NatsServer::start_with(&["--user", "ops", "--pass", "s3cret"]);
    let home = tempfile::tempdir().unwrap();
    let port = srv.port;
    let create = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["stream", "create", STREAM, "--subject", SUBJECT]);
        fisk_in(home.path(), &all, None)
    };
    // Wrong password: a clear refusal, quickly.
    let started = Instant::now();
    let r = create(&["--server", &srv.url, "--user", "ops", "--password", "wrong"]);
    assert_eq!(r.code, 2);
    assert!(
        says(&r.stderr, "credentials") && says(&r.stderr, &srv.url),
        "{}",
        r.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    // Flags.
    let r = create(&[
        "--server",
        &srv.url,
        "--user",
        "ops",
        "--password",
        "s3cret",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Credentials in the URL (async-nats would ignore them).
    let r = create(&["--server", &format!("nats://ops:s3cret@127.0.0.1:{port}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A context file, selected in context.txt, then by --context, then NATS_CONTEXT.
    let ctx_dir = home.path().join("config/nats/context");
    std::fs::create_dir_all(&ctx_dir).unwrap();
    let ctx = serde_json::json!({"url": format!("nats://127.0.0.1:{port}"), "user": "ops", "password": "s3cret"});
    std::fs::write(ctx_dir.join("dev.json"), ctx.to_string()).unwrap();
    std::fs::write(home.path().join("config/nats/context.txt"), "dev\n").unwrap();
    let r = fisk_in(
        home.path(),
        &["--store", &format!("jetstream:{STREAM}"), "info"],
        None,
    );
    assert!(
        r.stdout.contains("dev (selected in context.txt)"),
        "{}",
        r.stdout
    );
    let r = create(&[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::remove_file(home.path().join("config/nats/context.txt")).unwrap();
    let r = create(&["--context", "dev"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // --password overrides the context.
    let r = create(&["--context", "dev", "--password", "nope"]);
    assert_eq!(r.code, 2);
    let r = create(&["--context", "missing"]);
    assert_eq!(r.code, 2);
    assert!(
        says(&r.stderr, "missing") && says(&r.stderr, "nats context save"),
        "{}",
        r.stderr
    );
    // The agent file's nats_context with a jetstream backend.
    let agent = home.path().join("agent.yaml");
    std::fs::write(
        &agent,
        format!("harness:\n  sessions: {{backend: jetstream, options: {{stream: {STREAM}}}}}\nnats_context: dev\n"),
    )
    .unwrap();
    let r = fisk_in(
        home.path(),
        &["--config", s(&agent), "--format", "json", "ls"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json(), serde_json::json!([]));
    // --state-dir with a JetStream store is an error, not ignored.
    let r = fisk_in(
        home.path(),
        &["--config", s(&agent), "--state-dir", "/tmp", "ls"],
        None,
    );
    assert_eq!(r.code, 2);
    assert!(says(&r.stderr, "--state-dir"), "{}", r.stderr);
    let r = fisk_in(
        home.path(),
        &["--store", "jetstream:S", "--state-dir", "/tmp", "ls"],
        None,
    );
    assert_eq!(r.code, 2);
}

#[test]
fn migrate_reports_conflicts_torn_tails_and_corrupt_runs() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let js = format!("jetstream:{STREAM}");
    let dir = tempfile::tempdir().unwrap();
    for name in ["torn-tail", "interior-corruption"] {
        std::fs::copy(
            testdata(&format!("damaged/{name}.json")),
            dir.path().join(format!("{name}.json")),
        )
        .unwrap();
    }
    std::fs::copy(
        testdata("runs/tool-batch.json"),
        dir.path().join("tool-batch.json"),
    )
    .unwrap();
    let from = format!("file:{}", s(dir.path()));
    let schema = output_validator("migrate.json");
    let migrate = |extra: &[&str]| {
        let mut a = vec![
            "--format", "json", "migrate", "--from", &from, "--to", &js, "--all",
        ];
        a.extend_from_slice(extra);
        let r = fisk_js(&srv, home.path(), &a);
        let doc = r.json();
        assert_valid(&schema, &doc, &format!("migrate to JetStream {extra:?}"));
        let by_run: BTreeMap<String, serde_json::Value> = doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["run"].as_str().unwrap().to_owned(), x.clone()))
            .collect();
        (r.code, by_run)
    };

    // Dry run: nothing written.
    let (code, runs) = migrate(&["--dry-run"]);
    assert_eq!(code, 1);
    assert_eq!(runs["tool-batch"]["result"], "would-copy");
    assert_eq!(srv.messages(STREAM), 0);

    let (code, runs) = migrate(&[]);
    assert_eq!(code, 1, "an interior-corrupt run makes the migrate fail");
    assert_eq!(runs["tool-batch"]["result"], "copied");
    assert_eq!(runs["torn-tail"]["result"], "copied");
    assert!(runs["torn-tail"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("torn tail dropped"));
    assert_eq!(runs["tool-batch"]["partial"], false);
    assert_eq!(runs["torn-tail"]["partial"], true);
    assert_eq!(runs["interior-corruption"]["result"], "skipped-corrupt");
    assert!(runs["interior-corruption"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("--include-corrupt"));

    let (code, runs) = migrate(&["--include-corrupt"]);
    assert_eq!(code, 0);
    assert_eq!(runs["interior-corruption"]["result"], "copied");
    assert!(runs["interior-corruption"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("readable prefix"));
    assert_eq!(runs["interior-corruption"]["partial"], true);

    // --delete-source never deletes a source whose records after the
    // copied prefix exist nowhere else; a dropped torn tail does not keep it.
    let (code, runs) = migrate(&["--include-corrupt", "--delete-source"]);
    assert_eq!(code, 0);
    assert_eq!(runs["interior-corruption"]["result"], "complete");
    assert_eq!(runs["interior-corruption"]["source_deleted"], false);
    assert!(
        runs["interior-corruption"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("source kept")),
        "{:?}",
        runs["interior-corruption"]
    );
    assert!(dir.path().join("interior-corruption.json").exists());
    assert_eq!(runs["torn-tail"]["source_deleted"], true);
    assert!(!dir.path().join("torn-tail.json").exists());
    assert_eq!(runs["tool-batch"]["source_deleted"], true);
    std::fs::copy(
        testdata("runs/tool-batch.json"),
        dir.path().join("tool-batch.json"),
    )
    .unwrap();

    // A different run under the same id is a conflict, never overwritten.
    let before = srv.store(STREAM).read("tool-batch").unwrap().entries.len();
    let text = std::fs::read_to_string(testdata("runs/tool-batch.json")).unwrap();
    let other = text.replacen("\"prompt\":\"", "\"prompt\":\"X", 1);
    assert_ne!(other, text);
    std::fs::write(dir.path().join("tool-batch.json"), other).unwrap();
    let (code, runs) = migrate(&[]);
    assert_eq!(code, 1);
    assert_eq!(runs["tool-batch"]["result"], "conflict");
    assert!(runs["tool-batch"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("differs"));
    assert_eq!(
        srv.store(STREAM).read("tool-batch").unwrap().entries.len(),
        before
    );
}

#[test]
fn migrate_delete_source_removes_only_verified_runs() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    srv.spec_stream("DEST", "dest.>");
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let js = format!("jetstream:{STREAM}");
    let r = migrate_all(&srv, home.path(), &format!("file:{}", s(src.path())), &js);
    assert_eq!(r.code, 0);
    let r = fisk_js(
        &srv,
        home.path(),
        &[
            "migrate",
            "--from",
            &js,
            "--to",
            "jetstream:DEST",
            "tool-batch",
            "go-escapes",
            "--delete-source",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let store = srv.store(STREAM);
    assert!(!store.exists("tool-batch").unwrap() && !store.exists("go-escapes").unwrap());
    assert!(store.exists("approvals").unwrap());
    assert_eq!(
        srv.store("DEST").runs().unwrap(),
        ["go-escapes", "tool-batch"]
    );
}

/// Start a migrate in the background; wait until the stream holds at least
/// `at` messages.
fn migrate_until(
    srv: &NatsServer,
    home: &Path,
    from: &str,
    to: &str,
    stream: &str,
    at: u64,
) -> std::process::Child {
    let child = Command::new(crate::support::bin())
        .args([
            "--server", &srv.url, "migrate", "--from", from, "--to", to, "--all", "--jobs", "4",
        ])
        .env_clear()
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while srv.messages(stream) < at {
        assert!(
            Instant::now() < deadline,
            "the migrate never reached {at} messages"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

pub(crate) fn synth_expected(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_stem().unwrap().to_str().unwrap().to_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_migrate_killed_half_way_resumes_with_no_duplicate_and_no_loss() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = synth_store(40, "perf-large"); // 40 x 303 records
    let from = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");
    let mut child = migrate_until(&srv, home.path(), &from, &js, STREAM, 3000);
    child.kill().unwrap(); // SIGKILL, mid-copy
    let _ = child.wait();
    // The server still stores what the killed process had sent before it
    // died: count once that is done.
    let partial = srv.settled_messages(STREAM);
    assert!(
        partial < 40 * 303,
        "the migrate finished before it was killed"
    );
    let r = fisk_js(
        &srv,
        home.path(),
        &[
            "--format", "json", "migrate", "--from", &from, "--to", &js, "--all",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.json()["summary"]["appended"].as_u64().unwrap(),
        40 * 303 - partial
    );
    assert_stream_holds(&srv, STREAM, &synth_expected(src.path()));
}

#[test]
fn a_server_restart_during_a_migrate_gives_a_clear_error_and_a_rerun_completes() {
    let mut srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = synth_store(40, "perf-large");
    let from = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");
    let child = migrate_until(&srv, home.path(), &from, &js, STREAM, 3000);
    srv.stop();
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the migrate hung for {:?}",
        started.elapsed()
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("failed") && stdout.contains(&srv.url),
        "{stdout}"
    );
    srv.restart();
    let r = migrate_all(&srv, home.path(), &from, &js);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_stream_holds(&srv, STREAM, &synth_expected(src.path()));
}

#[test]
fn migrate_never_writes_into_a_destination_run_without_a_meta_record() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = synth_store(2, "tool-batch");
    // Run 0000 exists in the destination, but only as a stray record 2:
    // the create's seq 1 fence (the whole run must be empty) refuses it.
    let stray = journal::store::jetstream::subject("fisk.sessions", "tool-batch-0000", 2);
    srv.with_js(async move |js| {
        js.publish(stray, "{\"stray\":true}".into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    let (code, results) = migrate_all_results(
        &srv,
        home.path(),
        &format!("file:{}", s(src.path())),
        &format!("jetstream:{STREAM}"),
        &[],
    );
    assert_eq!(code, 1, "{results:?}");
    let result = |id: &str| results[id].clone();
    assert_eq!(result("tool-batch-0000"), "conflict");
    assert_eq!(result("tool-batch-0001"), "copied");
    let store = srv.store(STREAM);
    let msgs = store.read_messages("tool-batch-0000").unwrap();
    assert_eq!(msgs.len(), 1, "the stray run was written to: {msgs:?}");
}

/// `fisk-admin migrate --from FROM --to TO --all` against `srv`.
fn migrate_all(srv: &NatsServer, home: &Path, from: &str, to: &str) -> Run {
    fisk_js(srv, home, &["migrate", "--from", from, "--to", to, "--all"])
}

/// `migrate --all --format json`: the exit code and each run's result.
fn migrate_all_results(
    srv: &NatsServer,
    home: &Path,
    from: &str,
    to: &str,
    extra: &[&str],
) -> (i32, BTreeMap<String, String>) {
    let args = [
        "--format", "json", "migrate", "--from", from, "--to", to, "--all",
    ];
    let r = fisk_js(srv, home, &[&args[..], extra].concat());
    let doc = r.json();
    let runs = doc["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("no runs: {}\n{}", r.stdout, r.stderr));
    let results = runs
        .iter()
        .map(|x| {
            let word = x["result"].as_str().unwrap_or("?").to_owned();
            (x["run"].as_str().unwrap_or("?").to_owned(), word)
        })
        .collect();
    (r.code, results)
}

/// `migrate --all` from the stream into a new file store: the store's
/// temporary home, its directory, the exit code and each run's result.
fn migrate_stream_to_files(
    srv: &NatsServer,
    home: &Path,
    extra: &[&str],
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    i32,
    BTreeMap<String, String>,
) {
    let back = tempfile::tempdir().unwrap();
    let dest = back.path().join("runs");
    let from = format!("jetstream:{STREAM}");
    let (code, results) =
        migrate_all_results(srv, home, &from, &format!("file:{}", s(&dest)), extra);
    (back, dest, code, results)
}

#[test]
fn a_jetstream_source_with_interleaved_and_broken_runs_is_copied_run_by_run_rules() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let template = testdata_runs()["tool-batch"].clone();
    let text = String::from_utf8(template).unwrap();
    let bodies = |id: &str| -> Vec<Vec<u8>> {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                let l = if i == 0 {
                    l.replacen(
                        "\"run_id\":\"tool-batch\"",
                        &format!("\"run_id\":\"{id}\""),
                        1,
                    )
                } else {
                    l.to_owned()
                };
                l.into_bytes()
            })
            .collect()
    };
    let mut runs: Vec<(String, Vec<Vec<u8>>)> = (0..6)
        .map(|i| {
            let id = format!("good-{i}");
            let b = bodies(&id);
            (id, b)
        })
        .collect();
    let n = runs[0].1.len();
    assert!(n >= 4, "tool-batch is too short for this test");
    // A gap: record 3 missing.
    let mut gap = bodies("gap");
    gap.remove(2);
    // An interior body that does not decode.
    let mut bad = bodies("bad-body");
    bad[1] = b"{\"seq\":2,\"kind\":".to_vec();
    runs.push(("bad-body".into(), bad));
    let stray = bodies("stray");
    runs.push(("stray".into(), stray.clone()));
    // A message on a subject that is no record subject, among the run's
    // records: the bulk read cannot vouch for the run, which is then read
    // on its own (by its record subjects) and copied.
    srv.with_js(async move |js| {
        js.publish("fisk.sessions.stray.notes", "x".into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    publish_interleaved(&srv, &runs);
    // The gap run's records keep their own subjects (4 on .4, ...).
    srv.with_js(async move |js| {
        for (k, b) in gap.into_iter().enumerate() {
            let seq = if k < 2 { k as u64 + 1 } else { k as u64 + 2 };
            let subject = journal::store::jetstream::subject("fisk.sessions", "gap", seq);
            js.publish(subject, b.into()).await.unwrap().await.unwrap();
        }
    });

    let (_back, dest, code, results) = migrate_stream_to_files(&srv, home.path(), &[]);
    assert_eq!(code, 1, "{results:?}");
    let result = |id: &str| results[id].clone();
    for (id, b) in runs.iter().filter(|(id, _)| id != "bad-body") {
        assert_eq!(result(id), "copied", "{id}");
        let mut want = Vec::new();
        for x in b {
            want.extend_from_slice(x);
            want.push(b'\n');
        }
        let got = std::fs::read(dest.join(format!("{id}.json"))).unwrap();
        assert_eq!(got, want, "{id} is not a byte-identical copy");
    }
    assert_eq!(result("gap"), "skipped-corrupt");
    assert_eq!(result("bad-body"), "skipped-corrupt");
    assert!(!dest.join("gap.json").exists());
    assert!(!dest.join("bad-body.json").exists());
}

#[test]
fn a_record_one_destination_cannot_hold_fails_its_run_only() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    // Valid JSON with a raw newline inside: a JetStream message can carry
    // it, a journal line cannot.
    let mut runs: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
    for id in ["a-first", "b-newline", "c-after", "d-after"] {
        let meta = testdata_runs()["tool-batch"].clone();
        let text = String::from_utf8(meta).unwrap();
        let mut bodies: Vec<Vec<u8>> = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.replacen(
                        "\"run_id\":\"tool-batch\"",
                        &format!("\"run_id\":\"{id}\""),
                        1,
                    )
                } else {
                    l.to_owned()
                }
                .into_bytes()
            })
            .collect();
        if id == "b-newline" {
            let second = String::from_utf8(bodies[1].clone()).unwrap();
            bodies[1] = second.replacen('{', "{\n", 1).into_bytes();
        }
        runs.push((id.into(), bodies));
    }
    publish_interleaved(&srv, &runs);
    // One at a time, in stream order: the runs after the bad one are
    // copied after its failure.
    let (_back, _dest, code, results) =
        migrate_stream_to_files(&srv, home.path(), &["--jobs", "1"]);
    assert_eq!(code, 1, "{results:?}");
    assert_eq!(results["b-newline"], "failed", "{results:?}");
    for id in ["a-first", "c-after", "d-after"] {
        assert_eq!(results[id], "copied", "{id}: {results:?}");
    }
}

#[test]
fn a_destination_whose_last_record_lacks_its_newline_is_complete() {
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let dest = tempfile::tempdir().unwrap();
    let from = format!("file:{}", s(src.path()));
    let to = format!("file:{}", s(dest.path()));
    let args = ["migrate", "--from", &from, "--to", &to, "tool-batch"];
    let r = fisk_in(home.path(), &args, None);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // A final record without its newline is legal (SPEC 7).
    let path = dest.path().join("tool-batch.json");
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(&path, &bytes).unwrap();
    let r = fisk_in(
        home.path(),
        &[&["--format", "json"][..], &args].concat(),
        None,
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["runs"][0]["result"], "complete", "{}", r.stdout);
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the copy was touched");
}

#[test]
fn a_rerun_finds_every_run_complete_and_may_then_delete_the_sources() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs");
    let from = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");
    assert_eq!(migrate_all(&srv, home.path(), &from, &js).code, 0);
    let before = srv.messages(STREAM);
    // One destination run loses its last record: the re-run continues it.
    let store = srv.store(STREAM);
    let n = store.read("tool-batch").unwrap().entries.len() as u64;
    let last = journal::store::jetstream::subject("fisk.sessions", "tool-batch", n);
    srv.with_js(async move |js| {
        let stream = js.get_stream(STREAM).await.unwrap();
        stream.purge().filter(last).await.unwrap();
    });
    let (code, results) = migrate_all_results(&srv, home.path(), &from, &js, &["--delete-source"]);
    assert_eq!(code, 0, "{results:?}");
    for (id, word) in &results {
        let want = if id == "tool-batch" {
            "copied"
        } else {
            "complete"
        };
        assert_eq!(word, want, "{id}");
    }
    assert_eq!(srv.messages(STREAM), before, "nothing was written twice");
    for (id, bytes) in testdata_runs() {
        assert!(
            !src.path().join(format!("{id}.json")).exists(),
            "{id} not deleted"
        );
        let copy = store.read(&id).unwrap();
        let mut have = Vec::new();
        for e in &copy.entries {
            have.extend_from_slice(&e.raw);
            have.push(b'\n');
        }
        assert_eq!(have, bytes, "{id}");
    }
}

/// The `nats` CLI's environment (NATS_URL, NATS_USER, NATS_PASSWORD,
/// NATS_TOKEN, NATS_CREDS) and FISK_ADMIN_STORE, flags winning; a password
/// from a file or standard input instead of argv; no secret in any message.
#[test]
fn connection_settings_come_from_the_environment_and_files_and_flags_win() {
    let srv = NatsServer::start_with(&["--user", "ops", "--pass", "s3cret"]);
    let home = tempfile::tempdir().unwrap();
    let create = ["stream", "create", STREAM, "--subject", SUBJECT];
    let env = [
        ("NATS_URL", srv.url.as_str()),
        ("NATS_USER", "ops"),
        ("NATS_PASSWORD", "s3cret"),
    ];
    let r = crate::support::fisk_env(home.path(), &create, &env, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // FISK_ADMIN_STORE chooses the store.
    let mut env_store = env.to_vec();
    let store = format!("jetstream:{STREAM}");
    env_store.push(("FISK_ADMIN_STORE", store.as_str()));
    let r = crate::support::fisk_env(home.path(), &["info", "-o", "json"], &env_store, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["backend"], "jetstream");
    assert_eq!(r.json()["why"], "FISK_ADMIN_STORE");
    // A flag wins over the environment.
    let bad = [
        ("NATS_URL", "nats://127.0.0.1:1"),
        ("NATS_USER", "ops"),
        ("NATS_PASSWORD", "s3cret"),
    ];
    let mut args = vec!["--server", srv.url.as_str()];
    args.extend_from_slice(&["stream", "check", STREAM]);
    let r = crate::support::fisk_env(home.path(), &args, &bad, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The password from a file, and from standard input.
    let pw = home.path().join("pw");
    std::fs::write(&pw, "s3cret\n").unwrap();
    let base = ["--server", srv.url.as_str(), "--user", "ops"];
    let mut a = base.to_vec();
    a.extend_from_slice(&["--password-file", s(&pw), "stream", "check", STREAM]);
    let r = fisk_in(home.path(), &a, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut a = base.to_vec();
    a.extend_from_slice(&["--password-file", "-", "stream", "check", STREAM]);
    let r = fisk_in(home.path(), &a, Some(b"s3cret\n"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A wrong secret from the environment is refused and never echoed.
    let wrong = [
        ("NATS_URL", srv.url.as_str()),
        ("NATS_USER", "ops"),
        ("NATS_PASSWORD", "hunter2-wrong"),
    ];
    let r = crate::support::fisk_env(home.path(), &["stream", "check", STREAM], &wrong, None);
    assert_eq!(r.code, 2);
    assert!(
        !r.stderr.contains("hunter2") && !r.stdout.contains("hunter2"),
        "{}",
        r.stderr
    );
    // --help does not show the environment's secret values.
    let r = crate::support::fisk_env(home.path(), &["--help"], &wrong, None);
    assert!(!r.stdout.contains("hunter2"), "{}", r.stdout);
}

#[test]
fn info_exits_2_when_the_server_does_not_answer_and_an_unknown_context_lists_the_others() {
    let home = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let r = fisk_in(
        home.path(),
        &[
            "--server",
            "nats://127.0.0.1:1",
            "--store",
            "jetstream:S",
            "info",
        ],
        None,
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("unreachable:"), "{}", r.stdout);
    assert!(started.elapsed() < Duration::from_secs(8));
    let ctx = home.path().join("config/nats/context");
    std::fs::create_dir_all(&ctx).unwrap();
    for name in ["dev", "prod"] {
        std::fs::write(
            ctx.join(format!("{name}.json")),
            r#"{"url":"nats://127.0.0.1:1"}"#,
        )
        .unwrap();
    }
    let r = fisk_in(
        home.path(),
        &["--context", "staging", "--store", "jetstream:S", "ls"],
        None,
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("\"staging\" does not exist") && r.stderr.contains("dev, prod"),
        "{}",
        r.stderr
    );
}

/// SPEC 8's hold: while a `run` on JetStream is inside a slow tool, `rm`,
/// `answer`, `approve` and `migrate --delete-source` are refused (exit 1,
/// the age and the hold named) and `ls` says live; the run completes
/// untouched; once it rests they proceed.
#[test]
fn the_hold_refuses_writes_to_a_run_in_flight_on_jetstream() {
    use crate::support::{turn, Fixture};
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let f = Fixture::new(&[
        turn(
            "",
            &[
                ("d1", "defer", serde_json::json!({"note": "later"})),
                (
                    "e1",
                    "exec",
                    serde_json::json!({"command": "sleep 3; echo done >> counter.txt"}),
                ),
            ],
        ),
        turn("done", &[]),
    ]);
    on_jetstream(&f);
    let js = |args: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
        ];
        all.extend_from_slice(args);
        f.fisk(&all)
    };
    // Wait until the deferral is stored: the exec is running.
    let child = run_until_deferred(&f, &srv, "busy");
    let listed = js(&["ls", "--live", "-o", "json"]);
    assert!(
        listed.stdout.contains("\"busy\""),
        "ls --live: {}",
        listed.stdout
    );
    let dest = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(dest.path()));
    for args in [
        vec!["rm", "busy", "--yes"],
        vec!["answer", "busy", "d1", "--content", "x"],
        vec!["approve", "busy", "--tool", "exec"],
        vec![
            "migrate",
            "--from",
            "jetstream:SESSIONS",
            "--to",
            &to,
            "busy",
            "--delete-source",
        ],
    ] {
        let r = match args[0] {
            "migrate" => {
                let mut all = vec!["--server", srv.url.as_str()];
                all.extend_from_slice(&args);
                f.fisk(&all)
            }
            _ => js(&args),
        };
        let refused = r.code == 1
            && r.stderr.contains("run busy is live: a turn is in flight")
            && r.stderr.contains("hold")
            && r.stderr.contains("the same command with --force")
            && r.stderr.contains("--hold 0");
        // migrate leaves a live source alone: nothing copied, nothing deleted.
        let migrate_kept = args[0] == "migrate" && r.stdout.contains("skipped-live") && r.code == 1;
        assert!(
            refused || migrate_kept,
            "{args:?}: {} {}{}",
            r.code,
            r.stdout,
            r.stderr
        );
    }
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "the run completes untouched: {}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(f.path("counter.txt")).unwrap_or_default(),
        "done\n"
    );
    let st = js(&["fold", "busy", "-o", "json"]).json();
    assert_eq!(st["terminal"]["reason"], "suspended");
    // At rest now: they proceed.
    let r = js(&["answer", "busy", "d1", "--content", "x"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Answered and not resumed: ready, which rm takes named with --force
    // (issue 35).
    let r = js(&["rm", "busy", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("ready to resume"), "{}", r.stderr);
    let r = js(&["rm", "busy", "--yes", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// `stream create --replicas 3` in a real three-server cluster makes an R3
/// stream; `stream check` reports replicas, storage and placement, and
/// notes an R1 stream (one server holds every session) and a memory one.
#[test]
fn stream_create_places_replicas_and_check_reports_them_in_a_cluster() {
    let servers = NatsServer::cluster(journal::store::jetstream::spec_config("WARMUP", "warmup.>"));
    let urls: Vec<&str> = servers.iter().map(|x| x.url.as_str()).collect();
    let urls = urls.join(",");
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--server", urls.as_str()];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    let r = run(&[
        "stream",
        "create",
        "R3",
        "--subject",
        "r3.>",
        "--replicas",
        "3",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let start = Instant::now();
    let check = loop {
        let c = run(&["stream", "check", "R3", "-o", "json"]);
        let v = c.json();
        let peers = v["placement"]["peers"].as_array().map_or(0, Vec::len);
        if peers == 2 || start.elapsed() > Duration::from_secs(15) {
            break v;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["replicas"], 3);
    assert_eq!(check["storage"], "file");
    assert_eq!(check["placement"]["cluster"], "fisk");
    assert!(
        check["placement"]["leader"]
            .as_str()
            .is_some_and(|l| l.starts_with('n')),
        "{check}"
    );
    assert_eq!(
        check["placement"]["peers"].as_array().map(Vec::len),
        Some(2),
        "{check}"
    );
    let text = run(&["stream", "check", "R3"]);
    assert!(
        text.stdout
            .contains("replicas: 3 in cluster fisk, leader n"),
        "{}",
        text.stdout
    );
    // R1 in a cluster, in memory: usable, with a note and a warning
    // saying what each risks.
    let r = run(&[
        "stream",
        "create",
        "R1",
        "--subject",
        "r1.>",
        "--storage",
        "memory",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = run(&["stream", "check", "R1", "-o", "json"]).json();
    assert_eq!(
        (c["replicas"].as_u64(), c["storage"].as_str()),
        (Some(1), Some("memory"))
    );
    let notes = c["notes"].to_string();
    assert!(notes.contains("one replica in cluster fisk"), "{notes}");
    let warnings = c["warnings"].to_string();
    assert!(warnings.contains("storage is memory"), "{warnings}");
    // Out of range is refused by the flag.
    let r = run(&[
        "stream",
        "create",
        "R9",
        "--subject",
        "r9.>",
        "--replicas",
        "9",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--replicas"), "{}", r.stderr);
}

/// A stream at its max_bytes (discard new) refuses every append with
/// 10077 "maximum bytes exceeded": that is the stream's limit, named with
/// the fix, never "another writer holds the run" (issue 18).
#[test]
fn a_full_stream_is_named_as_full_not_as_a_live_writer() {
    use crate::support::{turn, Fixture};
    let srv = NatsServer::start();
    srv.raw_stream(Config {
        max_bytes: 4096,
        ..journal::store::jetstream::spec_config(STREAM, SUBJECT)
    });
    let f = Fixture::new(&[
        turn(
            "",
            &[(
                "e1",
                "exec",
                serde_json::json!({"command": "head -c 6000 /dev/zero | tr '\\\\0' a"}),
            )],
        ),
        turn("done", &[]),
    ]);
    on_jetstream(&f);
    let r = f.fisk(&[
        "--server",
        &srv.url,
        "run",
        "--agent",
        "agent.yaml",
        "--id",
        "full",
        "go",
    ]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("the stream is full and refuses every append")
            && r.stderr.contains("maximum bytes exceeded")
            && r.stderr.contains("--max-bytes -1"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("another writer") && !r.stderr.contains("is live"),
        "{}",
        r.stderr
    );
    // stream check says why appends are refused.
    let c = f.fisk(&["--server", &srv.url, "stream", "check", STREAM]);
    assert!(c.stdout.contains("max_bytes is 4096"), "{}", c.stdout);
}

/// Point a runner fixture's agent file at the JetStream stream STREAM.
pub(crate) fn on_jetstream(f: &crate::support::Fixture) {
    let agent = f.path("agent.yaml");
    let text = std::fs::read_to_string(&agent).unwrap().replace(
        "{backend: file, options: {directory: ./runs}}",
        &format!("{{backend: jetstream, options: {{stream: {STREAM}}}}}"),
    );
    std::fs::write(&agent, text).unwrap();
}

/// A stream at its `max_msgs`: `answer` and `migrate` say the stream is
/// full, with the fix, never that another writer holds the run (issue 18:
/// both read the server's 10077 as the fence).
#[test]
fn an_answer_and_a_migrate_into_a_full_stream_are_told_it_is_full() {
    use crate::support::{turn, Fixture};
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let f = Fixture::new(&[turn(
        "",
        &[("d1", "defer", serde_json::json!({"note": "by hand"}))],
    )]);
    on_jetstream(&f);
    let js = |args: &[&str]| {
        let mut all = vec!["--server", srv.url.as_str()];
        if !matches!(args.first(), Some(&"run" | &"migrate")) {
            all.extend(["--store", "jetstream:SESSIONS"]);
        }
        all.extend_from_slice(args);
        f.fisk(&all)
    };
    let r = js(&["run", "--agent", "agent.yaml", "--id", "waits", "go"]);
    assert!(
        r.stdout.contains("d1") || r.stderr.contains("d1"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let held = srv.messages(STREAM);
    assert!(held >= 3, "{held}");
    srv.with_js(async |j| {
        j.update_stream(async_nats::jetstream::stream::Config {
            max_messages: held as i64,
            ..journal::store::jetstream::spec_config(STREAM, SUBJECT)
        })
        .await
        .unwrap();
    });
    let full = |r: &Run, what: &str, code: i32| {
        assert_eq!(r.code, code, "{what}: {}{}", r.stdout, r.stderr);
        let said = format!("{}{}", r.stdout, r.stderr);
        assert!(
            said.contains("the stream is full") && said.contains("maximum messages exceeded"),
            "{what}: {said}"
        );
        assert!(
            !said.contains("another writer") && !said.contains("is live"),
            "{what}: {said}"
        );
    };
    let r = js(&["answer", "waits", "d1", "--content", "done"]);
    full(&r, "answer", 2);
    assert_eq!(srv.messages(STREAM), held, "nothing was stored");
    let src = store_copy("runs");
    let from = format!("file:{}", s(src.path()));
    let r = js(&[
        "migrate",
        "--from",
        &from,
        "--to",
        &format!("jetstream:{STREAM}"),
        "--all",
    ]);
    // Runs failed (exit 1), each saying why; none is taken for live.
    full(&r, "migrate", 1);
    let r = js(&["stream", "check", STREAM]);
    assert!(r.stdout.contains("max_msgs"), "{}", r.stdout);
}

/// Issue 18: `stream create` printed the stream's name and subject (a
/// flag's text) raw; an escape sequence in them reached the terminal.
#[test]
fn stream_create_neutralises_the_names_it_echoes() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let r = fisk_js(
        &srv,
        home.path(),
        &["stream", "create", "ESC", "--subject", "esc\u{1b}[2J.>"],
    );
    for text in [&r.stdout, &r.stderr] {
        assert!(!text.contains('\u{1b}'), "a raw escape: {text:?}");
    }
    assert_printable("stream create", &r.stdout);
    if r.code == 0 {
        assert!(r.stdout.contains("created stream ESC"), "{}", r.stdout);
    }
}

#[test]
fn a_password_or_token_in_the_server_url_is_never_printed() {
    let srv = NatsServer::start_with(&["--user", "ops", "--pass", "s3cret"]);
    let home = tempfile::tempdir().unwrap();
    let url = format!("nats://ops:s3cret@127.0.0.1:{}", srv.port);
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let r = crate::support::fisk_env(home.path(), args, env, None);
        assert_ne!(r.code, 101, "{args:?}: {}", r.stderr);
        r
    };
    let r = run(
        &[
            "--server",
            &url,
            "stream",
            "create",
            STREAM,
            "--subject",
            SUBJECT,
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let src = store_copy("runs");
    let from = format!("file:{}", s(src.path()));
    let to = format!("jetstream:{STREAM}");
    let r = run(
        &[
            "--server", &url, "migrate", "--from", &from, "--to", &to, "--all",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Every command that prints a hint, given the secret in the URL by a
    // flag or by NATS_URL.
    let js = ["--store", to.as_str()];
    let with_flag = |more: &[&str]| -> Vec<String> {
        let mut a = vec!["--server", url.as_str()];
        a.extend_from_slice(&js);
        a.extend_from_slice(more);
        a.into_iter().map(str::to_owned).collect()
    };
    let cases: Vec<Vec<&str>> = vec![
        vec!["show", "deferral-waiting"],
        vec!["show", "deferral-waiting", "--transcript", "--no-tui"],
        vec!["answer", "deferral-waiting"],
        vec!["answer", "deferral-waiting", "nope", "--content", "x"],
        vec![
            "-o",
            "json",
            "answer",
            "deferral-waiting",
            "--content",
            "ok",
        ],
        vec!["show", "no-such-run"],
        vec!["verify", "deferral-waiting"],
    ];
    let mut saw_supply = false;
    for case in &cases {
        for by_env in [false, true] {
            let (args, env): (Vec<String>, Vec<(&str, &str)>) = match by_env {
                false => (with_flag(case), vec![]),
                true => (
                    js.iter()
                        .chain(case.iter())
                        .map(|a| (*a).to_owned())
                        .collect(),
                    vec![("NATS_URL", url.as_str())],
                ),
            };
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = run(&args, &env);
            assert!(
                !r.stdout.contains("s3cret") && !r.stderr.contains("s3cret"),
                "{args:?} printed the password:\n{}\n{}",
                r.stdout,
                r.stderr
            );
            if r.stdout.contains("\"supply\"") {
                let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
                let supply = v["resume"]["supply"].to_string();
                assert!(supply.contains("password"), "{supply}");
                saw_supply = true;
            }
        }
    }
    assert!(
        saw_supply,
        "the answer's JSON says the password is to be supplied"
    );
}

/// The runner fixture `turns` on JetStream with `gate: [exec]`.
fn gated_on_jetstream(turns: &[String]) -> crate::support::Fixture {
    let f = crate::support::Fixture::new(turns);
    on_jetstream(&f);
    let path = f.path("agent.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("gate: [exec]\n");
    std::fs::write(path, text).unwrap();
    f
}

/// Issue 24.2: a run suspended on an approval, approved by hand and
/// resumed at once, within the hold: the approval record follows the
/// terminal, and a run whose last records are a terminal and what was
/// written to it while suspended is at rest (SPEC 8), so the resume
/// that `run` prints after the approve goes ahead.
#[test]
fn approve_then_resume_goes_ahead_within_the_hold_on_jetstream() {
    use crate::support::turn;
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let exec = |id: &'static str| {
        let command = format!("echo {id} >> counter.txt");
        (id, "exec", serde_json::json!({ "command": command }))
    };
    let f = gated_on_jetstream(&[
        turn("", &[exec("g1")]),
        turn("", &[exec("g2")]),
        turn("done", &[]),
    ]);
    let js = |args: &[&str]| {
        let mut all = vec!["--server", srv.url.as_str()];
        all.extend_from_slice(args);
        f.fisk(&all)
    };
    let r = js(&["run", "--agent", "agent.yaml", "--id", "gate", "go"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Each step on its line (`next:`, then `then:`), run in order.
    let next = steps(&r.stdout, &["next", "then"]).join(" && ");
    assert!(
        next.contains("approve gate g1") && next.contains("resume gate"),
        "{next}"
    );
    // The one-shot approval, then the resume, as printed.
    let r = f.paste(&next);
    assert_eq!(r.code, 0, "{next}: {}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("needs approval: g2 (exec)"),
        "{}",
        r.stdout
    );
    // A standing approval, then the resume: the same within the hold.
    let store = [
        "--server",
        srv.url.as_str(),
        "--store",
        "jetstream:SESSIONS",
    ];
    let mut approve = store.to_vec();
    approve.extend_from_slice(&["approve", "gate", "--tool", "exec"]);
    let r = f.fisk(&approve);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Open by SPEC 9 (a record follows the terminal), but not live.
    let ls = f.fisk(&[&store[..], &["ls", "-o", "json"]].concat());
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    assert_eq!(ls.json()[0]["live"], false, "{}", ls.stdout);
    let r = js(&["resume", "gate", "--agent", "agent.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(f.path("counter.txt")).unwrap_or_default(),
        "g1\ng2\n"
    );
}

/// Issue 23.5: a refusal within the hold offers `--force` for the one
/// command, and each writer takes it: a run whose writer was killed in
/// the middle of a turn (not at rest, its last record a moment old) is
/// answered, moved off with `migrate --delete-source` and deleted with
/// `--force`, each refused without it.
#[test]
fn every_writer_takes_force_past_the_hold_of_a_run_whose_writer_is_gone() {
    use crate::support::{turn, Fixture};
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let f = Fixture::new(&[
        turn(
            "",
            &[
                ("d1", "defer", serde_json::json!({"note": "later"})),
                ("e1", "exec", serde_json::json!({"command": "sleep 5"})),
            ],
        ),
        turn("done", &[]),
    ]);
    on_jetstream(&f);
    let js = |args: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
        ];
        all.extend_from_slice(args);
        f.fisk(&all)
    };
    let mut child = run_until_deferred(&f, &srv, "gone");
    // The writer dies in the middle of its turn.
    child.kill().unwrap();
    child.wait().unwrap();
    let refused = |r: &Run, what: &str| {
        assert_eq!(r.code, 1, "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("is live: a turn is in flight")
                && r.stderr.contains("run the same command with --force"),
            "{what}: {}",
            r.stderr
        );
    };
    let r = js(&["answer", "gone", "d1", "--content", "x"]);
    refused(&r, "answer");
    let r = js(&["answer", "gone", "d1", "--content", "x", "--force"]);
    assert_eq!(r.code, 0, "answer --force: {}", r.stderr);
    // Still not at rest (an answer within a turn): migrate leaves it...
    let dest = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(dest.path()));
    let migrate = |extra: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "migrate",
            "--from",
            "jetstream:SESSIONS",
            "--to",
            &to,
            "gone",
            "--delete-source",
        ];
        all.extend_from_slice(extra);
        f.fisk(&all)
    };
    let r = migrate(&[]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("skipped-live"), "{}", r.stdout);
    // ...and with --force copies it and deletes the source.
    let r = migrate(&["--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(js(&["ls", "-o", "json"]).json(), serde_json::json!([]));
    // Copied back, it is a moment old again: rm refuses, then --force.
    let r = f.fisk(&[
        "--server",
        srv.url.as_str(),
        "migrate",
        "--from",
        &to,
        "--to",
        "jetstream:SESSIONS",
        "gone",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = js(&["rm", "gone", "--yes"]);
    refused(&r, "rm");
    let r = js(&["rm", "gone", "--yes", "--force"]);
    assert_eq!(r.code, 0, "rm --force: {}", r.stderr);
}

/// Issue 23.5: what costs sessions or appends (memory storage, a byte or
/// message limit, rollups left allowed) is a warning, never under an
/// `ok`: the last line says what was found, `--strict` exits 1. A
/// `no_ack` stream (24 doubt: a migrate into it never completed) is an
/// error, and every writer refuses it before writing.
#[test]
fn stream_check_warns_of_what_costs_sessions_and_refuses_no_ack() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let good = |name: &str, subject: &str| journal::store::jetstream::spec_config(name, subject);
    let check = |name: &str, strict: bool| {
        let mut args = vec!["stream", "check", name];
        if strict {
            args.push("--strict");
        }
        fisk_js(&srv, home.path(), &args)
    };
    srv.raw_stream(good("GOOD", "g.>"));
    let r = check("GOOD", true);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        r.stdout.lines().last(),
        Some("ok: the stream can hold fisk sessions")
    );
    for (config, warning) in [
        (
            Config {
                storage: async_nats::jetstream::stream::StorageType::Memory,
                ..good("MEM", "m.>")
            },
            "warning: storage is memory: every session is lost",
        ),
        (
            Config {
                max_bytes: 1 << 20,
                ..good("BYTES", "b.>")
            },
            "warning: max_bytes is 1048576: once the stream is that full, every append is refused",
        ),
        (
            Config {
                max_messages: 1000,
                ..good("MSGS", "n.>")
            },
            "warning: max_msgs is 1000",
        ),
        (
            Config {
                allow_rollup: true,
                ..good("ROLLUP", "r.>")
            },
            "warning: allow_rollup is true",
        ),
    ] {
        let name = config.name.clone();
        srv.raw_stream(config);
        let r = check(&name, false);
        assert_eq!(r.code, 0, "{name}: {}", r.stdout);
        assert!(says(&r.stdout, warning), "{name}: {}", r.stdout);
        assert!(!r.stdout.contains("ok:"), "{name}: {}", r.stdout);
        assert_eq!(
            r.stdout.lines().last(),
            Some("usable, with 1 warning(s): fisk can hold sessions here, at the cost each warning above names"),
            "{name}"
        );
        assert_eq!(check(&name, true).code, 1, "{name}: --strict");
        let j = fisk_js(&srv, home.path(), &["stream", "check", &name, "-o", "json"]);
        assert_eq!(j.code, 0);
        let j = j.json();
        assert_eq!(j["ok"], true, "{j}");
        assert_eq!(j["warnings"].as_array().map(Vec::len), Some(1), "{j}");
    }
    // The fix the rollup warning names works as printed (issue 39, d-7:
    // at b926494 it lacked --server and could not connect when pasted).
    let r = check("ROLLUP", false);
    let fix = crate::support::steps(&r.stdout, &["clear it with"]);
    assert_eq!(fix.len(), 1, "{}", r.stdout);
    assert!(
        fix[0].contains(&format!("--server {}", srv.url))
            && fix[0].ends_with("stream edit ROLLUP --no-allow-rollup"),
        "{}",
        fix[0]
    );
    let j = fisk_js(
        &srv,
        home.path(),
        &["stream", "check", "ROLLUP", "-o", "json"],
    )
    .json();
    assert_eq!(
        j["next"][0]["argv"].as_array().map(Vec::len),
        Some(fix[0].split(' ').count())
    );
    let pasted = crate::support::Fixture::new(&[]).paste(&fix[0]);
    assert_eq!(pasted.code, 0, "{}{}", pasted.stdout, pasted.stderr);
    assert_eq!(check("ROLLUP", true).code, 0);

    srv.raw_stream(Config {
        no_ack: true,
        ..good("NOACK", "k.>")
    });
    let r = check("NOACK", false);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(says(&r.stdout, "error: no_ack is true"), "{}", r.stdout);
    assert!(
        says(&r.stdout, "nats stream edit NOACK --ack"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .lines()
        .last()
        .is_some_and(|l| l.starts_with("refused:")));
    // A migrate into it is refused before it writes, and quickly.
    let src = store_copy("runs");
    let start = Instant::now();
    let r = fisk_js(
        &srv,
        home.path(),
        &[
            "migrate",
            "--from",
            &format!("file:{}", s(src.path())),
            "--to",
            "jetstream:NOACK",
            "--all",
        ],
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(says(&r.stderr, "no_ack is true"), "{}", r.stderr);
    assert_eq!(srv.messages("NOACK"), 0);
}

/// Issue 24.11: the hold is measured from the store time of the run's
/// last message, as the agent measures it, not from the writer's clock
/// (the record's `time`): a record stamped 26 years ago but stored now is
/// within the hold; one stamped 74 years ahead is out of it once the hold
/// has passed since it was stored.
#[test]
fn the_hold_is_measured_from_the_store_time_not_the_writers_clock() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("runs-v1/open-no-terminal.json")).unwrap();
    let stamped = |id: &str, time: &str| -> (String, Vec<Vec<u8>>) {
        let bodies = text
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["time"] = serde_json::json!(time);
                if let Some(m) = v.get_mut("meta") {
                    m["run_id"] = serde_json::json!(id);
                }
                serde_json::to_vec(&v).unwrap()
            })
            .collect();
        (id.to_owned(), bodies)
    };
    publish_interleaved(
        &srv,
        &[
            stamped("behind", "2000-01-01T00:00:00Z"),
            stamped("ahead", "2100-01-01T00:00:00Z"),
        ],
    );
    let js = |args: &[&str]| {
        let mut all = vec!["--store", "jetstream:SESSIONS"];
        all.extend_from_slice(args);
        fisk_js(&srv, home.path(), &all)
    };
    let live = |hold: &str| -> BTreeMap<String, bool> {
        let r = js(&["--hold", hold, "ls", "-o", "json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["run_id"].as_str().unwrap().to_owned(),
                    x["live"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    // Stored a moment ago, not at rest: both live, whatever they say.
    let now = live("10m");
    assert!(now["behind"], "a writer behind is protected");
    assert!(now["ahead"]);
    let r = js(&["rm", "behind", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is live"), "{}", r.stderr);
    // Once a (short) hold has passed since they were stored, neither is.
    std::thread::sleep(Duration::from_millis(2500));
    let later = live("2s");
    assert!(!later["ahead"], "a writer ahead does not lock the run");
    assert!(!later["behind"]);
    let r = js(&["--hold", "2s", "rm", "ahead", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Issue 24.9: a sealed stream is the one to read and move off: `ls`,
/// `show` and `migrate --from` read it (they exited 2 with "use another
/// stream"); every writer refuses it, saying it is sealed, and a migrate
/// into it stops at once.
#[test]
fn a_sealed_stream_is_read_and_moved_off_and_writers_refuse_it() {
    let (srv, home, src, js) = testdata_on_jetstream();
    srv.with_js(async |j| {
        let mut s = j.get_stream(STREAM).await.unwrap();
        let config = Config {
            sealed: true,
            ..s.info().await.unwrap().config.clone()
        };
        j.update_stream(config).await.unwrap();
    });
    let store = |args: &[&str]| {
        let mut all = vec!["--store", js.as_str()];
        all.extend_from_slice(args);
        fisk_js(&srv, home.path(), &all)
    };
    let r = store(&["ls", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listed = r.json().as_array().map(Vec::len).unwrap_or(0);
    assert!(listed >= 20, "{}", r.stdout);
    let r = store(&["show", "tool-batch"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Moved off, byte for byte.
    let dest = tempfile::tempdir().unwrap();
    let r = migrate_all(&srv, home.path(), &js, &format!("file:{}", s(dest.path())));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read(dest.path().join("tool-batch.json")).unwrap(),
        std::fs::read(src.path().join("tool-batch.json")).unwrap()
    );
    // verify still says the stream cannot be used by the agent.
    let r = store(&["verify", "-o", "json"]);
    assert!(
        r.json_lines().iter().any(|f| f["code"] == "stream-config"
            && f["message"].as_str().is_some_and(|m| m.contains("sealed"))),
        "{}",
        r.stdout
    );
    // Writers refuse it, saying why.
    let sealed = |r: &Run, what: &str| {
        assert_eq!(r.code, 2, "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            says(&r.stderr, "the stream is sealed"),
            "{what}: {}",
            r.stderr
        );
    };
    sealed(&store(&["rm", "tool-batch", "--yes", "--force"]), "rm");
    // The way on is migrate from the stream, which refuses to run until
    // the operator adds where to (--to): the library says sealed, the
    // binary names its command.
    let r = store(&["rm", "tool-batch", "--yes", "--force"]);
    let moves = quoted_commands(&r.stderr.replace('\n', " "));
    let [off] = moves.as_slice() else {
        panic!("one command in the help: {}", r.stderr);
    };
    assert!(
        off.contains(&format!("migrate --from jetstream:{STREAM} --all")),
        "{off}"
    );
    let pasted = paste_in(home.path(), off);
    assert_eq!(pasted.code, 2, "{off}: {}{}", pasted.stdout, pasted.stderr);
    assert!(pasted.stderr.contains("--to"), "{}", pasted.stderr);

    sealed(
        &store(&["answer", "deferral-waiting", "--content", "x", "--force"]),
        "answer",
    );
    let before = srv.messages(STREAM);
    let more = tempfile::tempdir().unwrap();
    std::fs::copy(
        testdata("runs/tool-batch.json"),
        more.path().join("other-1.json"),
    )
    .unwrap();
    let text = std::fs::read_to_string(more.path().join("other-1.json"))
        .unwrap()
        .replacen("\"run_id\":\"tool-batch\"", "\"run_id\":\"other-1\"", 1);
    std::fs::write(more.path().join("other-1.json"), text).unwrap();
    let r = migrate_all(&srv, home.path(), &format!("file:{}", s(more.path())), &js);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(says(&r.stdout, "the stream is sealed"), "{}", r.stdout);
    assert_eq!(srv.messages(STREAM), before);
}

/// Issue 24 doubt: a run on the stream under an id that is not a valid
/// run id is invisible to the agent; verify names it, as the file backend
/// names such a file (`invalid-id`), and reads the valid runs as ever.
#[test]
fn verify_names_a_run_on_the_stream_whose_id_is_not_valid() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let home = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("runs-v1/simple-completed.json")).unwrap();
    let bodies = |id: &str| -> Vec<Vec<u8>> {
        text.replacen(
            "\"run_id\":\"simple-completed\"",
            &format!("\"run_id\":\"{id}\""),
            1,
        )
        .lines()
        .map(|l| l.as_bytes().to_vec())
        .collect()
    };
    publish_interleaved(
        &srv,
        &[
            ("good-1".to_owned(), bodies("good-1")),
            ("-bad".to_owned(), bodies("-bad")),
        ],
    );
    let r = fisk_js(
        &srv,
        home.path(),
        &["--store", "jetstream:SESSIONS", "verify", "-o", "json"],
    );
    let lines = r.json_lines();
    let invalid: Vec<&serde_json::Value> =
        lines.iter().filter(|f| f["code"] == "invalid-id").collect();
    assert_eq!(invalid.len(), 1, "{}", r.stdout);
    assert_eq!(invalid[0]["run"], "-bad");
    assert_eq!(invalid[0]["severity"], "warning");
    let summary = lines.last().unwrap();
    assert_eq!(summary["summary"]["errors"], 0, "{}", r.stdout);
}

/// Start the fixture's run `id` on JetStream in the background and wait
/// until its deferral is stored (the exec after it is running).
fn run_until_deferred(
    f: &crate::support::Fixture,
    srv: &NatsServer,
    id: &str,
) -> std::process::Child {
    let child = f
        .command(&[
            "--server",
            &srv.url,
            "run",
            "--agent",
            "agent.yaml",
            "--id",
            id,
            "go",
        ])
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let r = f.fisk(&[
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
            "query",
            id,
            "-o",
            "json",
        ]);
        if r.code == 0 && r.stdout.contains("\"deferred\"") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{}", r.stderr);
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// Bytes as text output says them (KiB, MiB: one style everywhere).
fn human(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0)),
    }
}
