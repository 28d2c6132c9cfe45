//! A bulk write against a server that freezes (SIGSTOP) or dies (SIGKILL)
//! mid-batch gives up after one failure of the store, in about one
//! request timeout, says once how many runs it did not attempt and that the
//! same command again finishes them, and it does (issue 36.4: `end` over
//! 60 runs took 150 s frozen and 105 s killed, one timeout per run). One
//! mechanism (`journal::store::Breaker`) for `end`, `rm`, `upgrade`,
//! `repair --all` and `migrate`; `upgrade` and `migrate` have tests of
//! their own.

use crate::nats_support::NatsServer;
use crate::support::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

const STREAM: &str = "BULK";

/// A stream holding `n` copies of the testdata run `template`, ids
/// `<template>-0000`...
fn stream_of(srv: &NatsServer, home: &std::path::Path, n: usize, template: &str) {
    srv.spec_stream(STREAM, "bulk.>");
    let src = crate::jetstream::synth_store(n, template);
    let from = format!("file:{}", s(src.path()));
    migrate_via(home, &srv.url, &from, &format!("jetstream:{STREAM}"), &[]);
}

/// `args` against the stream, started in the background.
fn spawn(srv: &NatsServer, home: &std::path::Path, args: &[&str]) -> std::process::Child {
    let store = format!("jetstream:{STREAM}");
    let mut all = vec!["--server", srv.url.as_str(), "--store", store.as_str()];
    all.extend_from_slice(args);
    command_in(home, &all, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(srv: &NatsServer, home: &std::path::Path, args: &[&str]) -> Run {
    spawn(srv, home, args).wait_with_output().unwrap().into()
}

/// Wait until the stream's message count has moved `by` from `from`
/// (up or down): the batch is under way.
fn under_way(srv: &NatsServer, from: u64, by: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while srv.messages(STREAM).abs_diff(from) < by {
        assert!(Instant::now() < deadline, "the batch never began");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What a stopped batch must have said: exit 2, the runs not attempted
/// said once with the failure and how to finish, within `limit` of the
/// server going.
fn stopped(r: &Run, took: Duration, command: &str) {
    eprintln!("{command}: gave up {took:?} after the server went");
    assert_eq!(r.code, 2, "{command}: {}{}", r.stdout, r.stderr);
    // One request timeout is 5 s; one per run would be minutes.
    assert!(
        took < Duration::from_secs(25),
        "{command}: took {took:?} after the server went"
    );
    assert_eq!(
        r.stderr.matches("not attempted").count(),
        1,
        "{command}: {}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("run(s) not attempted: an earlier run failed on the store")
            && r.stderr
                .contains(&format!("the same {command} finishes the rest")),
        "{command}: {}",
        r.stderr
    );
}

#[test]
fn end_over_many_runs_gives_up_on_a_frozen_server_and_again_finishes() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let n = 300;
    stream_of(&srv, home.path(), n, "open-no-terminal");
    let before = srv.messages(STREAM);
    let args = ["end", "--prefix", "open-no", "--yes", "--force"];
    let child = spawn(&srv, home.path(), &args);
    under_way(&srv, before, 1);
    let frozen = srv.freeze();
    let at = Instant::now();
    let r: Run = child.wait_with_output().unwrap().into();
    let took = at.elapsed();
    stopped(&r, took, "end");
    drop(frozen); // SIGCONT
    let ended = srv.messages(STREAM) - before;
    assert!(ended < n as u64, "the batch finished before the freeze");
    let again = run(&srv, home.path(), &args);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(srv.messages(STREAM) - before, n as u64, "{}", again.stdout);
}

#[test]
fn end_and_rm_over_many_runs_give_up_on_a_dead_server_and_again_finish() {
    let mut srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let n = 300;
    stream_of(&srv, home.path(), n, "open-no-terminal");
    let before = srv.messages(STREAM);
    let end = ["end", "--prefix", "open-no", "--yes", "--force"];
    let child = spawn(&srv, home.path(), &end);
    under_way(&srv, before, 1);
    srv.stop(); // SIGKILL
    let at = Instant::now();
    let r: Run = child.wait_with_output().unwrap().into();
    stopped(&r, at.elapsed(), "end");
    srv.restart();
    let again = run(&srv, home.path(), &end);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(srv.messages(STREAM) - before, n as u64);
    // rm over the same runs, the server killed under it.
    let all = srv.messages(STREAM);
    let rm = ["rm", "--prefix", "open-no", "--yes", "--force"];
    let child = spawn(&srv, home.path(), &rm);
    under_way(&srv, all, 6);
    srv.stop();
    let at = Instant::now();
    let r: Run = child.wait_with_output().unwrap().into();
    stopped(&r, at.elapsed(), "rm");
    srv.restart();
    assert!(
        srv.messages(STREAM) > 0,
        "the batch finished before the kill"
    );
    let again = run(&srv, home.path(), &rm);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(srv.messages(STREAM), 0);
}
