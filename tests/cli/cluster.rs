//! Issue 28: an R3 stream on a real three-server cluster, its leader
//! killed (SIGKILL, the real process) in the middle of a `migrate` (both
//! ways) and of a `run`. Whatever the command does (rides through the
//! election or ends with an error that says to re-run), nothing is lost
//! or doubled: after the killed server is back, a re-run (or `resume`)
//! completes and every run is byte-identical to its source.

use crate::jetstream::{assert_stream_holds, ls_statuses, synth_expected, synth_store};
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

/// `fisk-admin --server URLS migrate --from FROM --to TO --all` started
/// in the background.
fn spawn_migrate(urls: &str, home: &Path, from: &str, to: &str, jobs: &str) -> Child {
    Command::new(crate::support::bin())
        .args(["--server", urls, "migrate", "--from", from, "--to", to])
        .args(["--all", "--jobs", jobs])
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

    // Files -> JetStream through the two followers: kill the leader once
    // a fifth is stored. The migrate rides through the election, and the
    // stream holds every run whole, once.
    let leader = c.leader(STREAM);
    let child = spawn_migrate(&c.urls_but(leader), home.path(), &from, &js, "4");
    c.until(60, "the migrate to store 1200 messages", || {
        (c.messages(STREAM)? >= 1200).then_some(())
    });
    c.kill(leader);
    let (r, took) = finish(child, 90, "migrate into the stream");
    assert_eq!(
        r.code, 0,
        "the migrate did not ride through: {}{}",
        r.stdout, r.stderr
    );
    eprintln!("cluster: migrate to jetstream, leader n{leader} killed: rode through in {took:?}");
    assert_stream_holds(c.live(), STREAM, &want);
    c.restart(leader);
    c.settled(STREAM);
    // ls on the R3 stream says what it says of the files.
    let on = |store: &str| {
        fisk_c(
            &c,
            home.path(),
            &["--store", store, "--format", "json", "ls"],
        )
    };
    assert_eq!(ls_statuses(&on(&from)), ls_statuses(&on(&js)));
    // A re-run finds every run complete.
    let r = fisk_c(
        &c,
        home.path(),
        &["migrate", "--from", &from, "--to", &js, "--all"],
    );
    assert_eq!(r.code, 0, "the re-run: {}{}", r.stdout, r.stderr);
    assert_stream_holds(c.live(), STREAM, &want);
    assert_eq!(c.messages(STREAM), Some(total));

    // JetStream -> files through every server: kill the new leader once
    // the first runs are written. The migrate rides through or fails
    // saying to re-run, whichever server it reads from.
    let back = tempfile::tempdir().unwrap();
    let dest = back.path().join("runs");
    let to = format!("file:{}", s(&dest));
    // One run at a time, so that most are still to read at the kill.
    let written = || {
        let runs = std::fs::read_dir(&dest).map(|d| d.flatten().collect::<Vec<_>>());
        let json = |e: &std::fs::DirEntry| e.path().extension().is_some_and(|x| x == "json");
        runs.map_or(0, |r| r.iter().filter(|e| json(e)).count())
    };
    let child = spawn_migrate(&c.urls(), home.path(), &js, &to, "1");
    c.until(60, "the migrate to write its first run", || {
        (written() >= 1).then_some(())
    });
    let leader = c.leader(STREAM);
    c.kill(leader);
    let at_kill = written();
    let (r, took) = finish(child, 90, "migrate out of the stream");
    let outcome = rode_through_or_says_rerun(&r, "migrate out of the stream");
    eprintln!(
        "cluster: migrate from jetstream, leader n{leader} killed after {at_kill} of {} runs: {outcome} in {took:?}",
        want.len()
    );
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
    // Nothing stray beside them either: the runs, and the audit log
    // that records their copy (issue 38).
    let names: Vec<String> = std::fs::read_dir(&dest)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n == "fisk-admin-audit.jsonl"),
        "{names:?}"
    );
    assert_eq!(names.len(), want.len() + 1, "{names:?}");
    let r = fisk_c(&c, home.path(), &["--store", &to, "verify"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = fisk_c(&c, home.path(), &["--store", &js, "verify"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    // A run whose subjects hold a stray record and no meta record is a
    // conflict on R3 as on one server, never written to.
    let stray_src = synth_store(1, "tool-batch");
    let stray = journal::store::jetstream::subject("fisk.sessions", "tool-batch-0000", 2);
    c.live().with_js(async move |js| {
        js.publish(stray, "{\"stray\":true}".into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    let from = format!("file:{}", s(stray_src.path()));
    let r = fisk_c(
        &c,
        home.path(),
        &[
            "--format", "json", "migrate", "--from", &from, "--to", &js, "--all",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["runs"][0]["result"], "conflict", "{}", r.stdout);
    let msgs = c
        .live()
        .store(STREAM)
        .read_messages("tool-batch-0000")
        .unwrap();
    assert_eq!(msgs.len(), 1, "the stray run was written to: {msgs:?}");
}

/// `--server <every server> --store jetstream:SESSIONS ARGS` in the
/// fixture.
fn on_stream(c: &Cluster, f: &crate::support::Fixture, args: &[&str]) -> Run {
    let urls = c.urls();
    let store = format!("jetstream:{STREAM}");
    let mut all = vec!["--server", urls.as_str(), "--store", store.as_str()];
    all.extend_from_slice(args);
    f.fisk(&all)
}

/// The fixture's run `id` (`run --agent agent.yaml --id ID go`) through
/// the servers `urls`, in the background; returned once its first exec is
/// running (its call is stored, its result is not, for 3 seconds).
fn spawn_run(c: &Cluster, f: &crate::support::Fixture, urls: &str, id: &str) -> Child {
    let _ = std::fs::remove_file(f.path("started"));
    let child = f
        .command(&[
            "--server",
            urls,
            "run",
            "--agent",
            "agent.yaml",
            "--id",
            id,
            "go",
        ])
        .spawn()
        .expect("start run");
    c.until(20, "the run's first exec to start", || {
        f.path("started").exists().then_some(())
    });
    child
}

/// Run `id` holds records 1..N, each once, with nothing else in the
/// stream beside `others` messages; it ended (completed) and verify finds
/// it clean.
fn assert_whole(c: &Cluster, f: &crate::support::Fixture, id: &str, others: u64) -> u64 {
    let st = on_stream(c, f, &["fold", id, "-o", "json"]).json();
    assert_eq!(st["terminal"]["reason"], "completed", "{st}");
    let r = on_stream(c, f, &["verify", id]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let msgs = c.live().store(STREAM).read_messages(id).unwrap();
    let seqs: Vec<Option<u64>> = msgs.iter().map(|m| m.subject_seq).collect();
    let want: Vec<Option<u64>> = (1..=msgs.len() as u64).map(Some).collect();
    assert_eq!(seqs, want, "run {id}'s records are not seqs 1..N");
    for (m, n) in msgs.iter().zip(1u64..) {
        let v: serde_json::Value = serde_json::from_slice(&m.body).unwrap();
        assert_eq!(v["seq"].as_u64(), Some(n), "{}", m.subject);
    }
    assert_eq!(c.messages(STREAM), Some(others + msgs.len() as u64));
    msgs.len() as u64
}

/// A run whose stream leader is killed while its exec runs: through the
/// other two servers it rides through the election and completes;
/// connected to the killed leader alone it fails, saying what to do, and
/// `resume` completes it once the server is back. Either way each exec
/// ran once and the records are seqs 1..N, once each.
#[test]
fn the_stream_leader_killed_during_a_run_loses_and_doubles_nothing_and_resume_completes() {
    use crate::support::{turn, Fixture};
    let f = Fixture::new(&[
        turn(
            "",
            &[(
                "e1",
                "exec",
                serde_json::json!({"command": "touch started; sleep 3; echo e1 >> counter.txt"}),
            )],
        ),
        turn(
            "",
            &[(
                "e2",
                "exec",
                serde_json::json!({"command": "echo e2 >> counter.txt"}),
            )],
        ),
        turn("done", &[]),
    ]);
    crate::jetstream::on_jetstream(&f);
    let mut c = r3_cluster(f.dir.path());
    let counter = || std::fs::read_to_string(f.path("counter.txt")).unwrap_or_default();

    // Through the followers: rides through.
    let leader = c.leader(STREAM);
    let child = spawn_run(&c, &f, &c.urls_but(leader), "ride");
    c.kill(leader);
    // ls during the election waits for the new leader, then lists the run.
    let r = on_stream(&c, &f, &["ls", "-o", "json"]);
    assert_eq!(r.code, 0, "ls during the election: {}", r.stderr);
    assert!(r.stdout.contains("\"ride\""), "{}", r.stdout);
    let (r, took) = finish(child, 60, "the run");
    assert_eq!(
        r.code, 0,
        "the run did not ride through: {}{}",
        r.stdout, r.stderr
    );
    eprintln!("cluster: run, leader n{leader} killed: rode through in {took:?}");
    assert_eq!(counter(), "e1\ne2\n");
    c.restart(leader);
    c.settled(STREAM);
    let first = assert_whole(&c, &f, "ride", 0);

    // Through the leader alone: fails, and resume completes it.
    std::fs::remove_file(f.path("counter.txt")).unwrap();
    let leader = c.leader(STREAM);
    let child = spawn_run(&c, &f, &c.servers[leader].url, "cut");
    c.kill(leader);
    let (r, took) = finish(child, 60, "the run");
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_ne!(r.code, 0, "{all}");
    assert!(
        !all.contains("another writer") && !all.contains("panicked"),
        "{all}"
    );
    assert!(
        all.contains("resume cut"),
        "the run failed without saying what to do: {all}"
    );
    eprintln!(
        "cluster: run through the leader alone, n{leader} killed: exit {} in {took:?}: {all}",
        r.code
    );
    c.restart(leader);
    c.settled(STREAM);
    let resume = all
        .lines()
        .find_map(|l| l.split('`').nth(1).filter(|c| c.contains("resume cut")))
        .unwrap_or_else(|| panic!("no resume command printed: {all}"));
    assert!(resume.contains("--hold 0s"), "{resume}");
    let r = f.paste(resume);
    assert_eq!(r.code, 0, "resume: {}{}", r.stdout, r.stderr);
    // The exec whose result was never stored runs again (the tool call in
    // flight, as after any interruption); nothing else does.
    assert_eq!(counter(), "e1\ne1\ne2\n");
    assert_whole(&c, &f, "cut", first);
}
