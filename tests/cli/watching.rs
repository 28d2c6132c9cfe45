//! Watching and alerting (issue 39, what users of similar tools ask for):
//! `ls --watch` and `inbox --watch` as kubectl's `get -w`, `--newest` to
//! follow the run that started last, and the gauges `ls` and `inbox`
//! print for node_exporter's textfile collector.

use crate::support::*;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn deferring() -> Fixture {
    Fixture::new(&[
        turn(
            "",
            &[(
                "toolu_1",
                "defer",
                json!({"note": "sign-off", "handle": "SEC-7"}),
            )],
        ),
        turn("done", &[]),
    ])
}

/// Lines of a process's standard output as they come.
fn lines_of(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Every line that comes within `d`.
fn drain(rx: &mpsc::Receiver<String>, d: Duration) -> Vec<String> {
    let until = Instant::now() + d;
    let mut got = Vec::new();
    while let Ok(l) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        got.push(l);
    }
    got
}

#[test]
fn ls_watch_prints_the_listing_then_the_rows_that_change_until_ctrl_c() {
    let f = deferring();
    f.run("first", "go");
    let runs = f.runs();
    let mut child = f
        .command(&[
            "--state-dir",
            s(&runs),
            "ls",
            "--watch",
            "200ms",
            "--columns",
            "run,state",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(&mut child);
    let first = drain(&rx, Duration::from_millis(700));
    assert_eq!(
        first,
        ["RUN\tSTATE", "first\twaiting-answer"],
        "nothing unchanged again"
    );
    // A new run, and a change of state: only those rows come.
    f.run("second", "go");
    let r = f.paste_stdin(
        &format!("fisk-admin --state-dir {} answer first toolu_1", s(&runs)),
        b"ok",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let later = drain(&rx, Duration::from_millis(900));
    let mut later_sorted = later.clone();
    later_sorted.sort();
    assert_eq!(
        later_sorted,
        ["first\tready", "second\twaiting-answer"],
        "{later:?}"
    );
    // Ctrl-C ends it: 130, as a follow.
    assert!(std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
}

#[test]
fn inbox_watch_does_not_repeat_a_row_whose_wait_only_grew() {
    let f = deferring();
    f.run("r1", "go");
    let runs = f.runs();
    let mut child = f
        .command(&["--state-dir", s(&runs), "inbox", "-w", "1100ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rx = lines_of(&mut child);
    let got = drain(&rx, Duration::from_millis(3000));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(got.len(), 2, "the header and the one call, once: {got:?}");
}

fn gauges(text: &str) -> std::collections::BTreeMap<String, f64> {
    assert_eq!(text.lines().last(), Some("# EOF"), "{text}");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_owned(), v.parse::<f64>().unwrap())
        })
        .collect()
}

#[test]
fn ls_and_inbox_print_gauges_for_a_textfile_collector() {
    let f = deferring();
    f.run("r1", "go");
    let runs = f.runs();
    let store = format!("file:{}", s(&runs));
    for cmd in ["ls", "inbox"] {
        let r = f.store(&[cmd, "-o", "openmetrics"]);
        assert_eq!(r.code, 0, "{cmd}: {}", r.stderr);
        let g = gauges(&r.stdout);
        let key = |name: &str, label: &str| format!("{name}{{store=\"{store}\",{label}}}");
        assert_eq!(
            g[&key("fisk_runs", "state=\"waiting-answer\"")],
            1.0,
            "{cmd}"
        );
        // Every state is written, 0 when no run is in it.
        for word in [
            "corrupt",
            "live",
            "damaged",
            "ready",
            "suspended",
            "ended",
            "open",
        ] {
            assert_eq!(
                g[&key("fisk_runs", &format!("state=\"{word}\""))],
                0.0,
                "{cmd} {word}"
            );
        }
        assert_eq!(
            g[&key("fisk_calls_waiting", "waits=\"answer\"")],
            1.0,
            "{cmd}"
        );
        let oldest = g[&format!("fisk_wait_oldest_seconds{{store=\"{store}\"}}")];
        let inbox = f.store(&["inbox", "-o", "json"]).json();
        let waited = inbox["items"][0]["waited_s"].as_f64().unwrap();
        assert!(
            (oldest - waited).abs() <= 2.0,
            "{cmd}: {oldest} vs {waited}"
        );
    }
    // The filters choose what is counted and read (one pass: issue 40).
    f.run("r2", "go");
    for cmd in ["ls", "inbox"] {
        let key = |name: &str, label: &str| format!("{name}{{store=\"{store}\",{label}}}");
        let all = gauges(&f.store(&[cmd, "-o", "openmetrics"]).stdout);
        assert_eq!(
            all[&key("fisk_runs", "state=\"waiting-answer\"")],
            2.0,
            "{cmd}"
        );
        assert_eq!(
            all[&key("fisk_calls_waiting", "waits=\"answer\"")],
            2.0,
            "{cmd}"
        );
        let none = gauges(
            &f.store(&[cmd, "-o", "openmetrics", "--state", "ended"])
                .stdout,
        );
        assert_eq!(
            none[&key("fisk_runs", "state=\"waiting-answer\"")],
            0.0,
            "{cmd}"
        );
        assert_eq!(
            none[&key("fisk_calls_waiting", "waits=\"answer\"")],
            0.0,
            "{cmd}"
        );
        assert_eq!(
            none[&format!("fisk_wait_oldest_seconds{{store=\"{store}\"}}")],
            0.0,
            "{cmd}"
        );
    }
    // Any other command refuses the format.
    let r = f.store(&["verify", "-o", "openmetrics"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn newest_names_the_run_that_started_last() {
    let f = deferring();
    f.run("older", "go");
    std::thread::sleep(Duration::from_millis(20));
    f.run("newer", "go");
    let r = f.store(&["show", "--newest", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["run_id"], "newer");
    assert!(r.stderr.contains("the newest run is newer"), "{}", r.stderr);
    let r = f.store(&["fold", "--newest", "-o", "json"]);
    assert_eq!(r.json()["run_id"], "newer");
    let r = f.store(&["show", "older", "--newest"]);
    assert_eq!(r.code, 2, "a run and --newest: {}", r.stderr);
}
