//! Issue 28: an R3 stream on a real three-server cluster, its leader
//! killed (SIGKILL, the real process) in the middle of a `migrate` (both
//! ways) and of a `run`. Whatever the command does (rides through the
//! election or ends with an error that says to re-run), nothing is lost
//! or doubled: after the killed server is back, a re-run (or `resume`)
//! completes and every run is byte-identical to its source.

use crate::jetstream::{assert_stream_holds, synth_expected, synth_store};
use crate::nats_support::Cluster;
use crate::support::{fisk_in, s, Run};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const STREAM: &str = "SESSIONS";

/// `fisk-admin --server <every server> ARGS` in `home`.
fn fisk_c(c: &Cluster, home: &Path, args: &[&str]) -> Run {
    let urls = c.urls();
    let mut all = vec!["--server", urls.as_str()];
    all.extend_from_slice(args);
    fisk_in(home, &all, None)
}

/// A cluster with the R3 session stream that `stream create --replicas 3`
/// makes, every replica current.
fn r3_cluster(home: &Path) -> Cluster {
    let c = Cluster::start();
    let r = fisk_c(
        &c,
        home,
        &[
            "stream",
            "create",
            STREAM,
            "--subject",
            "fisk.sessions.>",
            "--replicas",
            "3",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    c.settled(STREAM);
    c
}

/// `fisk-admin --server <every server> migrate --from FROM --to TO --all`
/// started in the background.
fn spawn_migrate(c: &Cluster, home: &Path, from: &str, to: &str) -> Child {
    Command::new(crate::support::bin())
        .args(["--server", &c.urls(), "migrate", "--from", from, "--to", to])
        .args(["--all", "--jobs", "4"])
        .env_clear()
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start migrate")
}

/// Wait for `child`, failing the test after `secs` seconds (and killing it).
fn finish(mut child: Child, secs: u64, what: &str) -> (Run, Duration) {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out: Run = child.wait_with_output().expect("wait").into();
            panic!("{what} hung for {secs}s:\n{}{}", out.stdout, out.stderr);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (
        child.wait_with_output().expect("wait").into(),
        start.elapsed(),
    )
}

/// The killed command either rode through the election (exit 0) or failed
/// the runs it could not finish, each saying to re-run (exit 1), and
/// never called the killed leader another writer.
fn rode_through_or_says_rerun(r: &Run, what: &str) -> &'static str {
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        !all.contains("another writer") && !all.contains("panicked"),
        "{what}: {all}"
    );
    match r.code {
        0 => "rode through",
        1 => {
            assert!(
                all.contains("re-run"),
                "{what} failed without saying what to do: {all}"
            );
            "failed, says re-run"
        }
        code => panic!("{what} exited {code}: {all}"),
    }
}

#[test]
fn the_stream_leader_killed_during_a_migrate_either_way_loses_and_doubles_nothing() {
    let home = tempfile::tempdir().unwrap();
    let mut c = r3_cluster(home.path());
    let src = synth_store(20, "perf-large"); // 20 x 303 records
    let want = synth_expected(src.path());
    let total: u64 = 20 * 303;
    let from = format!("file:{}", s(src.path()));
    let js = format!("jetstream:{STREAM}");

    // Files -> JetStream: kill the leader once a fifth is stored.
    let child = spawn_migrate(&c, home.path(), &from, &js);
    c.until(60, "the migrate to store 1200 messages", || {
        (c.messages(STREAM)? >= 1200).then_some(())
    });
    let leader = c.leader(STREAM);
    c.kill(leader);
    let (r, took) = finish(child, 90, "migrate into the stream");
    let outcome = rode_through_or_says_rerun(&r, "migrate into the stream");
    eprintln!("cluster: migrate to jetstream, leader n{leader} killed: {outcome} in {took:?}");
    c.restart(leader);
    c.settled(STREAM);
    let r = fisk_c(
        &c,
        home.path(),
        &["migrate", "--from", &from, "--to", &js, "--all"],
    );
    assert_eq!(r.code, 0, "the re-run: {}{}", r.stdout, r.stderr);
    assert_stream_holds(c.live(), STREAM, &want);
    assert_eq!(c.messages(STREAM), Some(total));

    // JetStream -> files: kill the new leader once the first runs are
    // written.
    let back = tempfile::tempdir().unwrap();
    let dest = back.path().join("runs");
    let to = format!("file:{}", s(&dest));
    let child = spawn_migrate(&c, home.path(), &js, &to);
    c.until(60, "the migrate to write its first run", || {
        let n = std::fs::read_dir(&dest).map_or(0, |d| d.count());
        (n >= 1).then_some(())
    });
    let leader = c.leader(STREAM);
    c.kill(leader);
    let (r, took) = finish(child, 90, "migrate out of the stream");
    let outcome = rode_through_or_says_rerun(&r, "migrate out of the stream");
    eprintln!("cluster: migrate from jetstream, leader n{leader} killed: {outcome} in {took:?}");
    c.restart(leader);
    c.settled(STREAM);
    let r = fisk_c(
        &c,
        home.path(),
        &["migrate", "--from", &js, "--to", &to, "--all"],
    );
    assert_eq!(r.code, 0, "the re-run: {}{}", r.stdout, r.stderr);
    for (id, bytes) in &want {
        let got = std::fs::read(dest.join(format!("{id}.json"))).unwrap();
        assert!(got == *bytes, "run {id} differs after the way back");
    }
    // Nothing stray beside them either.
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), want.len());
    let r = fisk_c(&c, home.path(), &["--store", &to, "verify"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = fisk_c(&c, home.path(), &["--store", &js, "verify"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
