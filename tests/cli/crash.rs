//! Crash safety with real processes (issue 4): `run` and `resume` are killed
//! with SIGKILL at random moments, hundreds of times, and resumed each time
//! until the run completes. After every kill the journal verifies (at most a
//! torn tail, which `repair` cuts before the next resume: resume refuses a
//! torn tail by design); at the end the conversation equals an uninterrupted
//! run's, every tool ran, and no tool ran more than once per crash.

use crate::support::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

const TOOL_TURNS: usize = 5;
const CALLS: usize = 3;

fn script() -> Vec<String> {
    let mut turns = Vec::new();
    for t in 0..TOOL_TURNS {
        let calls: Vec<(&str, &str, serde_json::Value)> = (0..CALLS)
            .map(|c| {
                let id: &'static str = Box::leak(format!("t{t}c{c}").into_boxed_str());
                (
                    id,
                    "exec",
                    json!({"command": format!("echo {id} >> counter.txt")}),
                )
            })
            .collect();
        turns.push(turn(&format!("turn {t}"), &calls));
    }
    turns.push(turn("all done", &[]));
    turns
}

/// xorshift64*: enough randomness for kill times, reproducible from the seed.
use crate::mutations::mutate::Rng;

fn seed() -> u64 {
    std::env::var("FISK_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        })
}

/// The journal after a kill: no errors; a torn tail is the only warning
/// allowed, and is repaired.
fn check_after_kill(f: &Fixture, run: &str, ctx: &str) {
    if !f.journal(run).exists() {
        return; // killed before the first record was durable: no run yet
    }
    for x in f.findings(run) {
        match (x["severity"].as_str(), x["code"].as_str()) {
            (Some("info"), _) => {}
            (Some("warning"), Some("torn-tail")) => {
                let r = f.store(&["repair", run]);
                assert_eq!(r.code, 0, "{ctx}: repair: {}", r.stderr);
            }
            _ => panic!("{ctx}: finding after a kill: {x}"),
        }
    }
}

/// Kill-and-resume until completed; returns (kills, per-tool run counts).
fn crash_until_done(rng: &mut Rng, max_delay_us: u64, ctx: &str) -> (Fixture, usize) {
    let f = Fixture::new(&script());
    let run = "crash";
    let mut kills = 0;
    let started = Instant::now();
    // On a loaded machine a process may need longer than the longest delay
    // just to start: after five kills in a row that stored nothing new, each
    // further one lengthens the next delay a little, so every trial makes
    // progress while most kills still land at random early moments.
    let mut stuck: u64 = 0;
    let mut last_len: Option<usize> = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{ctx}: no progress after {kills} kills"
        );
        let args: Vec<&str> = if f.journal(run).exists() {
            vec!["resume", run, "--agent", "agent.yaml"]
        } else {
            vec!["run", "--agent", "agent.yaml", "--id", run, "crash me"]
        };
        let mut child = f.command(&args).spawn().unwrap();
        let delay = rng.next() % max_delay_us.max(1) + stuck.saturating_sub(5) * (max_delay_us / 8);
        std::thread::sleep(Duration::from_micros(delay));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        if out.status.signal() == Some(9) {
            kills += 1;
            check_after_kill(&f, run, &format!("{ctx} kill {kills}"));
            // Progress is a record other than a claim (every resume adds one).
            let len = std::fs::read_to_string(f.journal(run)).ok().map(|j| {
                j.lines()
                    .filter(|l| !l.contains("\"io.choria.fisk-ai.v1.session.claim\""))
                    .count()
            });
            stuck = if len == last_len { stuck + 1 } else { 0 };
            last_len = len;
            // Killed after its completed terminal was stored: done.
            if f.journal(run).exists() && f.fold(run)["status"] == "completed" {
                return (f, kills);
            }
            continue;
        }
        let r: Run = out.into();
        assert_eq!(r.code, 0, "{ctx}: {} {}", r.stdout, r.stderr);
        assert!(r.stdout.contains("ended: completed"), "{ctx}: {}", r.stdout);
        return (f, kills);
    }
}

fn counts(f: &Fixture) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for l in std::fs::read_to_string(f.path("counter.txt"))
        .unwrap_or_default()
        .lines()
    {
        *m.entry(l.to_owned()).or_insert(0) += 1;
    }
    m
}

fn reference() -> serde_json::Value {
    let f = Fixture::new(&script());
    let r = f.run("crash", "crash me");
    assert_eq!(r.code, 0, "{}", r.stderr);
    f.fold("crash")["messages"].clone()
}

/// Crash trials until at least `min_kills` kills over at least `min_trials`
/// runs (how many kills a trial takes depends on the machine's speed, so
/// the suite counts kills, not trials).
fn crash_suite(min_trials: usize, min_kills: usize, max_delay_us: u64) -> usize {
    let expected = reference();
    let seed = seed();
    let mut rng = Rng(seed);
    let mut total = 0;
    let started = Instant::now();
    let mut trial = 0;
    while trial < min_trials || total < min_kills {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "seed {seed}: only {total} kills in {trial} trials after 240 s"
        );
        trial += 1;
        let ctx = format!("seed {seed} trial {trial} (rerun with FISK_CRASH_SEED={seed})");
        let (f, kills) = crash_until_done(&mut rng, max_delay_us, &ctx);
        total += kills;
        let findings = f.findings("crash");
        assert!(
            findings.iter().all(|x| x["severity"] == "info"),
            "{ctx}: {findings:?}"
        );
        assert_eq!(
            f.fold("crash")["messages"],
            expected,
            "{ctx}: the conversation differs"
        );
        let c = counts(&f);
        let mut extra = 0;
        for t in 0..TOOL_TURNS {
            for k in 0..CALLS {
                let n = c.get(&format!("t{t}c{k}")).copied().unwrap_or(0);
                assert!(n >= 1, "{ctx}: t{t}c{k} never ran");
                extra += n - 1;
            }
        }
        assert!(
            extra <= kills,
            "{ctx}: {extra} repeated tool runs for {kills} kills: {c:?}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(f.runs())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{ctx}: {leftovers:?}");
    }
    eprintln!("crash suite: seed {seed}, {trial} runs, {total} kills");
    total
}

#[test]
fn runs_killed_early_and_often_resume_to_the_uninterrupted_conversation() {
    // Short delays: most kills land in process start, the claim and the
    // first records; many resumes make little progress each.
    let kills = crash_suite(8, 200, 25_000);
    assert!(kills >= 200, "only {kills} kills");
}

#[test]
fn runs_killed_mid_batch_resume_to_the_uninterrupted_conversation() {
    // Longer delays: kills land between and inside tool runs.
    let kills = crash_suite(20, 100, 60_000);
    assert!(kills >= 100, "only {kills} kills");
}
