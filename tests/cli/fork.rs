//! `fork` (issue 27.4, SPEC 6.1): a new run of a run's first N records, on
//! both generations and both backends; its refusals write nothing; a fork
//! cut inside a batch is completed by `resume`.

use crate::nats_support::NatsServer;
use crate::support::*;
use std::path::Path;

fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).collect()
}

/// The fork `made` of `source` at `n`: records 2..N byte-identical, the
/// meta record the source's but for its run_id.
fn assert_forked(source: &[u8], made: &[u8], n: usize, old: &str, new: &str) {
    let (src, new_lines) = (lines(source), lines(made));
    assert_eq!(new_lines.len(), n);
    assert_eq!(new_lines[1..], src[1..n]);
    let want = String::from_utf8_lossy(src[0]).replace(
        &format!("\"run_id\":\"{old}\""),
        &format!("\"run_id\":\"{new}\""),
    );
    assert_eq!(String::from_utf8_lossy(new_lines[0]), want);
}

fn faults(store: &Path, run: &str) -> Vec<serde_json::Value> {
    let r = fisk(&["--state-dir", s(store), "verify", run, "-o", "json"]);
    r.json_lines()
        .into_iter()
        .filter(|f| f.get("summary").is_none())
        .filter(|f| f["code"] != "version-3" && f["severity"] != "info")
        .collect()
}

#[test]
fn a_fork_inside_a_batch_on_both_generations_keeps_the_original() {
    for dir in ["runs-v1", "runs"] {
        let store = store_copy(dir);
        let src = store.path().join("tool-batch.json");
        let before = std::fs::read(&src).unwrap();
        let st = s(store.path());
        let r = fisk(&[
            "--state-dir",
            st,
            "fork",
            "tool-batch",
            "--at-seq",
            "3",
            "--as",
            "retry",
        ]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        assert!(
            r.stdout.contains("forked run tool-batch at seq 3"),
            "{}",
            r.stdout
        );
        assert!(r.stdout.contains("the batch is pending"), "{}", r.stdout);
        assert!(r.stdout.contains("show retry"), "{}", r.stdout);
        assert!(r.stdout.contains("resume retry"), "{}", r.stdout);
        let again = fisk(&[
            "--state-dir",
            st,
            "-o",
            "json",
            "fork",
            "retry",
            "--at-seq",
            "2",
            "--as",
            "retry2",
        ]);
        assert_eq!(again.code, 0, "{dir}: {}", again.stderr);
        let doc = again.json();
        assert_eq!(doc["written"], true);
        assert_eq!(doc["resume"]["argv"][3], "resume");
        assert_eq!(doc["resume"]["supply"][0], "agent");
        let made = std::fs::read(store.path().join("retry.json")).unwrap();
        assert_forked(&before, &made, 3, "tool-batch", "retry");
        assert_eq!(std::fs::read(&src).unwrap(), before, "the original changed");
        assert!(faults(store.path(), "retry").is_empty(), "{dir}");
        let fold = fisk(&["--state-dir", st, "fold", "retry", "-o", "json"]).json();
        assert!(!fold["pending"].is_null(), "{dir}: {fold}");
    }
}

#[test]
fn refusals_and_a_dry_run_write_nothing() {
    let store = store_copy("runs-v1");
    let st = s(store.path());
    let before = std::fs::read_dir(store.path()).unwrap().count();
    // An invalid id is a usage error (exit 2), the others refusals.
    for (args, says, code) in [
        (
            vec!["--at-seq", "0", "--as", "x"],
            "not one of its records",
            1,
        ),
        (vec!["--at-seq", "8", "--as", "x"], "(1 to 7)", 1),
        (
            vec!["--at-seq", "2", "--as", "approvals"],
            "already exists",
            1,
        ),
        (vec!["--at-seq", "2", "--as", "bad id"], "invalid run id", 2),
    ] {
        let mut all = vec!["--state-dir", st, "fork", "tool-batch"];
        all.extend_from_slice(&args);
        let r = fisk(&all);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
    let r = fisk(&[
        "--state-dir",
        st,
        "fork",
        "tool-batch",
        "--at-seq",
        "7",
        "--as",
        "x",
        "--dry-run",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("would fork"), "{}", r.stdout);
    let r = fisk(&[
        "--state-dir",
        st,
        "-o",
        "json",
        "fork",
        "tool-batch",
        "--at-seq",
        "3",
        "--as",
        "x",
        "--dry-run",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = r.json();
    assert_eq!(doc["run"], "x");
    assert_eq!(doc["from"], "tool-batch");
    assert_eq!(doc["records"], 3);
    assert_eq!(doc["source_last"], 7);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["pending"], true);
    assert_eq!(doc["written"], false);
    assert!(doc["resume"].is_null());
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), before);
}

#[test]
fn a_fork_on_jetstream_on_both_generations() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    for (dir, stream, subject) in [("runs", "V3", "v3.>"), ("runs-v1", "V1", "v1.>")] {
        srv.spec_stream(stream, subject);
        let to = format!("jetstream:{stream}");
        let src = store_copy(dir);
        let from = format!("file:{}", s(src.path()));
        migrate_via(home.path(), &srv.url, &from, &to, &["tool-batch"]);
        let r = fisk_in(
            home.path(),
            &[
                "--server",
                &srv.url,
                "--store",
                &to,
                "fork",
                "tool-batch",
                "--at-seq",
                "5",
                "--as",
                "retry",
            ],
            None,
        );
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        // Copied back to a file store, byte for byte.
        let back = tempfile::tempdir().unwrap();
        let into = format!("file:{}", s(back.path()));
        migrate_via(home.path(), &srv.url, &to, &into, &["retry", "tool-batch"]);
        let before = std::fs::read(src.path().join("tool-batch.json")).unwrap();
        let made = std::fs::read(back.path().join("retry.json")).unwrap();
        assert_forked(&before, &made, 5, "tool-batch", "retry");
        let kept = std::fs::read(back.path().join("tool-batch.json")).unwrap();
        assert_eq!(kept, before, "{dir}: the original changed");
    }
}

#[test]
fn resume_completes_a_fork_cut_inside_a_batch() {
    let f = two_calls_then_done();
    let id = "batch";
    let r = f.run(id, "hello");
    assert_eq!(r.code, 0, "{}", r.stderr);
    // meta, assistant, result a | result b, assistant, terminal.
    let r = f.store(&["fork", id, "--at-seq", "3", "--as", "again"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = f.resume("again", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(f.fold("again")["status"], "completed");
    let made = f.bytes("again");
    let first = f.bytes(id);
    assert_eq!(lines(&made)[1..3], lines(&first)[1..3]);
}

/// Issue 36.1 (the doubt on `fork`): a fork on JetStream interrupted half
/// way, by SIGTERM, SIGHUP or SIGKILL, used to leave a shorter run that
/// `verify` called clean, which the same fork then refused ("id in use").
/// Now the run is marked until it is whole: `verify` names it with the
/// command, `show` refuses it, and the same fork again finishes it.
#[test]
fn a_fork_on_jetstream_interrupted_by_a_signal_is_named_and_finished_by_the_same_fork() {
    use std::time::{Duration, Instant};
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    let src = std::fs::read(testdata("runs/perf-large.json")).unwrap();
    let n = lines(&src).len() as u64;
    for (i, signal) in ["TERM", "HUP", "KILL"].into_iter().enumerate() {
        let stream = format!("F{i}");
        let prefix = format!("f{i}");
        srv.spec_stream(&stream, &format!("{prefix}.>"));
        let bodies: Vec<Vec<u8>> = lines(&src).iter().map(|l| l.to_vec()).collect();
        let p = prefix.clone();
        srv.with_js(async move |js| {
            for (seq, body) in (1u64..).zip(bodies) {
                let subject = journal::store::jetstream::subject(&p, "src", seq);
                js.publish(subject, body.into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        });
        let store = format!("jetstream:{stream}");
        let at = n.to_string();
        let args = |extra: &[&str]| -> Vec<String> {
            let mut a = vec!["--server", &srv.url, "--store", &store];
            a.extend_from_slice(extra);
            a.into_iter().map(str::to_owned).collect()
        };
        let run = |extra: &[&str]| {
            let a = args(extra);
            fisk_in(
                home.path(),
                &a.iter().map(String::as_str).collect::<Vec<_>>(),
                None,
            )
        };
        let fork = args(&["fork", "src", "--at-seq", &at, "--as", "copy"]);
        let mut child = command_in(
            home.path(),
            &fork.iter().map(String::as_str).collect::<Vec<_>>(),
            &[],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while srv.messages(&stream) < n + 40 {
            assert!(
                child.try_wait().unwrap().is_none(),
                "{signal}: the fork finished first"
            );
            assert!(Instant::now() < deadline, "{signal}: the fork never began");
            std::thread::sleep(Duration::from_millis(2));
        }
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let _ = child.wait();
        let left = srv.settled_messages(&stream);
        assert!(left < 2 * n + 1, "{signal}: the fork finished first");
        let v = run(&["verify", "copy", "-o", "json"]);
        assert_eq!(v.code, 1, "{signal}: {}", v.stdout);
        assert!(
            v.json_lines()
                .iter()
                .any(|f| f["code"] == "write-interrupted"
                    && f["message"].as_str().is_some_and(
                        |m| m.contains(&format!("fisk-admin fork src --at-seq {n} --as copy"))
                    )),
            "{signal}: {}",
            v.stdout
        );
        let shown = run(&["show", "copy"]);
        assert_eq!(shown.code, 1, "{signal}: {}", shown.stdout);
        assert!(
            shown.stderr.contains("half written"),
            "{signal}: {}",
            shown.stderr
        );
        let again = run(&["fork", "src", "--at-seq", &at, "--as", "copy", "-o", "json"]);
        assert_eq!(again.code, 0, "{signal}: {}", again.stderr);
        assert_eq!(again.json()["resumed"], true);
        let v = run(&["verify", "copy", "-o", "json"]);
        assert_eq!(v.code, 0, "{signal}: {}", v.stdout);
        let copy = run(&["export", "copy", "--format", "jsonl"]);
        assert_forked(
            &src,
            copy.stdout.as_bytes(),
            n as usize,
            "perf-large",
            "copy",
        );
    }
}

/// Issue 39, d-20: `show` of a fork says what it was forked from, kept
/// beside it (the meta record the agent reads stays the source's but for
/// the id); `show -o json` has it with created, updated and health (d-23);
/// a run that merely took a removed fork's id is not called a fork.
#[test]
fn show_of_a_fork_says_what_it_came_from_and_the_meta_record_is_unchanged() {
    let store = crate::support::store_copy("runs-v1");
    let d = crate::support::s(store.path());
    let r = crate::support::fisk(&[
        "--state-dir",
        d,
        "fork",
        "tool-batch",
        "--at-seq",
        "3",
        "--as",
        "tb-retry",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("forked run tool-batch at seq 3"),
        "{}",
        r.stdout
    );
    let show = crate::support::fisk(&["--state-dir", d, "show", "tb-retry"]);
    assert!(
        show.stdout
            .contains("  forked from: tool-batch at seq 3, on 20"),
        "{}",
        show.stdout
    );
    let j = crate::support::fisk(&["--state-dir", d, "show", "tb-retry", "-o", "json"]).json();
    assert_eq!(j["forked_from"]["from"], "tool-batch");
    assert_eq!(j["forked_from"]["at_seq"], 3);
    assert!(j["created"].is_string() && j["updated"].is_string(), "{j}");
    assert!(j["health"].is_null(), "{j}");
    // The meta record is the source's but for the id.
    let line = |run: &str| {
        std::fs::read_to_string(store.path().join(format!("{run}.json")))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        line("tb-retry").replace("tb-retry", "tool-batch"),
        line("tool-batch")
    );
    // The source is no fork.
    let src = crate::support::fisk(&["--state-dir", d, "show", "tool-batch", "-o", "json"]).json();
    assert!(src["forked_from"].is_null());
    // Removed, and its id given to another run: the note is not that run's.
    let r = crate::support::fisk(&["--state-dir", d, "rm", "tb-retry", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let other = std::fs::read_to_string(store.path().join("simple-completed.json"))
        .unwrap()
        .replace("\"run_id\":\"simple-completed\"", "\"run_id\":\"tb-retry\"");
    std::fs::write(store.path().join("tb-retry.json"), other).unwrap();
    let show = crate::support::fisk(&["--state-dir", d, "show", "tb-retry"]);
    assert!(!show.stdout.contains("forked from"), "{}", show.stdout);
    // A damaged run's health is in the JSON too.
    let dmg = crate::support::store_copy("damaged");
    let j = crate::support::fisk(&[
        "--state-dir",
        crate::support::s(dmg.path()),
        "show",
        "seq-gap",
        "-o",
        "json",
    ])
    .json();
    assert_eq!(j["health"]["code"], "seq-gap");
    assert!(
        j["health"]["fix"]
            .as_str()
            .unwrap()
            .ends_with(" recover seq-gap"),
        "{j}"
    );
}
