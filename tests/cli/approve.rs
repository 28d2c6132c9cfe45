//! `approve` and the runner's gates (CLI.md "The minimal runner", SPEC 6):
//! a gated call runs only with an approval, a one-shot approval is spent by
//! the next terminal, a standing one lasts the run; every refusal leaves
//! the journal as it was; hints work when pasted.

use crate::support::*;
use serde_json::json;

fn exec(id: &'static str, cmd: &str) -> (&'static str, &'static str, serde_json::Value) {
    (id, "exec", json!({"command": cmd}))
}

fn counter(f: &Fixture) -> Vec<String> {
    std::fs::read_to_string(f.path("counter.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The fixture's agent with `gate: [exec]`.
fn gated(turns: &[String]) -> Fixture {
    let f = Fixture::new(turns);
    let path = f.path("agent.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("gate: [exec]\n");
    std::fs::write(path, text).unwrap();
    f
}

/// Run a hint line (`next: ...`) the way an operator pastes it, in the
/// fixture directory.
/// The steps a run report prints (`next:`, then each `then:`), each
/// without the note on what it still needs.
fn steps(r: &Run) -> Vec<String> {
    crate::support::steps(&r.stdout, &["next", "then"])
}

/// Every step joined, for asserting what they name.
fn next_line(r: &Run) -> String {
    steps(r).join(" && ")
}

#[test]
fn a_gated_call_waits_for_its_approval_and_then_runs_exactly_once() {
    let f = gated(&[
        turn("", &[exec("g1", "echo g1 >> counter.txt")]),
        turn("done", &[]),
    ]);
    let r = f.run("gate", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("needs approval: g1 (exec)"),
        "{}",
        r.stdout
    );
    let next = next_line(&r);
    assert!(
        counter(&f).is_empty(),
        "a gated call without approval never runs"
    );
    let st = f.fold("gate");
    assert_eq!(st["terminal"]["reason"], "suspended");
    assert_eq!(st["terminal"]["message"], "needs approval: g1 (exec)");
    // A resume before the approval is refused, writing nothing.
    let before = f.bytes("gate");
    let r = f.resume("gate", &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("needs approval: g1 (exec); nothing was written")
            && r.stderr.contains("approve gate g1`"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("gate"), before);
    // show lists the call under Waiting on approval, with the command.
    let show = f.store(&["show", "gate"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(
        show.stdout.contains("needs approval (runs once approved)")
            && show.stdout.contains("Waiting on approval")
            && show.stdout.contains(&format!(
                "g1 (exec): approve with: fisk-admin --state-dir {} approve gate g1",
                s(&f.runs())
            )),
        "{}",
        show.stdout
    );
    // Refusals that make no sense, each leaving the journal as it was.
    for (args, says) in [
        (
            vec!["approve", "gate", "nope"],
            "is not a call of the pending batch",
        ),
        (vec!["approve", "gate"], "required"),
        (
            vec!["approve", "gate", "g1", "--tool", "exec"],
            "cannot be used with",
        ),
    ] {
        let r = f.store(&args);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert_eq!(f.bytes("gate"), before, "{args:?}");
    }
    // The run's own hint, pasted: approve, then resume.
    assert!(next.contains("approve gate g1"), "{next}");
    let r = f.paste(&next);
    assert_eq!(r.code, 0, "{next}: {}{}", r.stdout, r.stderr);
    assert_eq!(counter(&f), ["g1"], "dispatched exactly once");
    let recs: Vec<serde_json::Value> = String::from_utf8(f.bytes("gate"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let approval = recs
        .iter()
        .find(|r| r.get("call_approval").is_some())
        .cloned()
        .unwrap_or_default();
    assert_eq!(approval["optional"], true);
    assert_eq!(
        approval["call_approval"],
        json!({"tool_use_id": "g1", "tool_name": "exec"})
    );
    assert!(
        approval["time"].is_string(),
        "version 1 records carry a time"
    );
    let st = f.fold("gate");
    assert_eq!(st["status"], "completed");
    assert_eq!(
        st["call_approvals"],
        json!([]),
        "spent by the next terminal"
    );
    // Answered now: approving it again makes no sense.
    let r = f.store(&["approve", "gate", "g1"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("waits on nothing"), "{}", r.stderr);
    // The journal verifies clean.
    assert_eq!(f.store(&["verify", "gate"]).code, 0);
}

#[test]
fn a_standing_approval_lets_every_call_of_the_tool_run_for_the_rest_of_the_run() {
    let f = gated(&[
        turn("", &[exec("a", "echo a >> counter.txt")]),
        turn("", &[exec("b", "echo b >> counter.txt")]),
        turn("done", &[]),
    ]);
    let r = f.run("standing", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("needs approval: a (exec)"),
        "{}",
        r.stdout
    );
    let r = f.store(&["approve", "standing", "--tool", "exec"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("approved tool exec for the rest of run standing"),
        "{}",
        r.stdout
    );
    let r = f.store(&["approve", "standing", "--tool", "exec"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("approved for the whole run already"),
        "{}",
        r.stderr
    );
    let r = f.resume("standing", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(counter(&f), ["a", "b"]);
    assert_eq!(f.fold("standing")["status"], "completed");
    assert_eq!(f.fold("standing")["approvals"], json!(["exec"]));
}

#[test]
fn a_deferred_call_is_answered_not_approved_and_a_live_run_is_refused() {
    let f = gated(&[
        turn(
            "",
            &[("d1", "defer", json!({"note": "n"})), exec("g1", "true")],
        ),
        turn("done", &[]),
    ]);
    let r = f.run("mixed", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("needs approval: g1 (exec); waiting on deferred call(s): d1 (n)"),
        "{}",
        r.stdout
    );
    let next = next_line(&r);
    assert!(
        next.contains("approve mixed g1") && next.contains("answer mixed d1"),
        "{next}"
    );
    let r = f.store(&["approve", "mixed", "d1"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("was deferred: it waits on an answer, not an approval")
            && r.stderr.contains("answer mixed d1`"),
        "{}",
        r.stderr
    );
    // A writer holds the run: refused, nothing written.
    let before = f.bytes("mixed");
    let lock = f.runs().join("mixed.lock");
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["sleep", "30"])
        .spawn()
        .expect("flock(1)");
    // Approve only once the lock is held: an approve that ran first would
    // write its record, and the next one find g1 approved, not live.
    wait_until_locked(&lock);
    let r = f.store(&["approve", "mixed", "g1"]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is live"), "{}", r.stderr);
    assert_eq!(f.bytes("mixed"), before);
}

#[test]
fn approving_a_version_3_run_writes_an_untimed_optional_record_that_verifies_clean() {
    let store = store_copy("agent-journals/v3");
    let d = s(store.path());
    let r = fisk(&["--state-dir", d, "approve", "g-pending-suspended", "tu_2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(store.path().join("g-pending-suspended.json")).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["optional"], true);
    assert!(last.get("time").is_none(), "version 3 writes no time");
    assert_eq!(last["call_approval"]["tool_name"], "shell");
    let st = fisk(&[
        "--state-dir",
        d,
        "fold",
        "g-pending-suspended",
        "-o",
        "json",
    ])
    .json();
    assert_eq!(st["call_approvals"][0]["tool_use_id"], "tu_2");
    let v = fisk(&[
        "--state-dir",
        d,
        "verify",
        "g-pending-suspended",
        "-o",
        "json",
    ]);
    assert!(
        v.json_lines()
            .iter()
            .all(|f| f.get("severity").is_none_or(|s| s != "error")),
        "{}",
        v.stdout
    );
    // tu_1 is answered already.
    let r = fisk(&["--state-dir", d, "approve", "g-pending-suspended", "tu_1"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("already answered"), "{}", r.stderr);
}

/// SIGKILL at random moments around the approval and the dispatch: a gated
/// call never runs without an approval, and one approval dispatches it
/// once, or twice when a kill lands between the tool finishing and its
/// result being stored (the crash rule every call has: at most one repeat).
#[test]
fn kills_around_an_approval_never_run_a_gated_call_without_one() {
    for trial in 0..10u64 {
        let f = gated(&[
            turn("", &[exec("g1", "sleep 0.1; echo g1 >> counter.txt")]),
            turn("done", &[]),
        ]);
        // Killed while it starts: whatever it stored, the call did not run.
        let mut child = f
            .command(&["run", "--agent", "agent.yaml", "--id", "k", "go"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(trial * 7));
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            counter(&f).is_empty(),
            "trial {trial}: ran without approval"
        );
        // Finish the start if the kill came first, until it waits.
        for _ in 0..5 {
            if f.journal("k").exists() && f.fold("k")["status"] == "suspended" {
                break;
            }
            let r = if f.journal("k").exists() {
                f.resume("k", &[])
            } else {
                f.run("k", "go")
            };
            assert_ne!(r.code, 2, "trial {trial}: {}", r.stderr);
        }
        assert!(
            counter(&f).is_empty(),
            "trial {trial}: ran without approval"
        );
        assert_eq!(f.store(&["approve", "k", "g1"]).code, 0, "trial {trial}");
        // A resume killed at a random moment, then resumed to the end.
        let mut child = f
            .command(&["resume", "k", "--agent", "agent.yaml"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20 + trial * 25));
        let _ = child.kill();
        let _ = child.wait();
        for _ in 0..5 {
            if f.fold("k")["status"] == "completed" {
                break;
            }
            let r = f.resume("k", &[]);
            assert_ne!(r.code, 2, "trial {trial}: {}", r.stderr);
        }
        assert_eq!(f.fold("k")["status"], "completed", "trial {trial}");
        let ran = counter(&f).len();
        assert!((1..=2).contains(&ran), "trial {trial}: ran {ran} times");
        assert_eq!(f.store(&["verify", "k"]).code, 0, "trial {trial}");
    }
}

/// Wait (at most 10 s) until another process holds `lock` (flock -n fails).
pub fn wait_until_locked(lock: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let free = std::process::Command::new("flock")
            .args(["-n"])
            .arg(lock)
            .arg("true")
            .status()
            .expect("flock(1)")
            .success();
        if !free {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lock was never taken"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
