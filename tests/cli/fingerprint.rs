//! `fingerprint` and `diff` (SPEC 4): the hashes match independently
//! computed vectors, each field has its class, hashed fields never show
//! values, and the exit status says whether a resume would proceed.

use crate::support::*;
use serde_json::json;

// From journal/tests/fingerprint_vectors.py (Python hashlib over Go-style JSON).
const SYSTEM_HASH: &str = "86084baa5f2d2ed45dc5f5ba9b9dcbfa881297463698772fa4b06f51f17397ec";
const TOOLS_HASH: &str = "0726a6ec3880dcf84ddaff54bd9ed90eede9a620a97632360706b38784e5c1a7";

#[test]
fn fingerprint_of_an_agent_file_matches_the_independent_vectors() {
    let f = Fixture::new(&[]);
    let r = f.fisk(&["fingerprint", "--agent", "agent.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json(),
        json!({
            "provider": "script", "model": "demo-1", "system_hash": SYSTEM_HASH,
            "tools_hash": TOOLS_HASH, "thinking_mode": "off", "reasoning_effort": "",
            "max_tokens": 200000, "max_iterations": 20,
        })
    );
}

#[test]
fn a_run_started_from_an_agent_file_carries_its_fingerprint() {
    let f = Fixture::new(&[turn("ok", &[])]);
    assert_eq!(f.run("r", "go").code, 0);
    let fp = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).stdout;
    std::fs::write(f.path("fp.json"), fp).unwrap();
    let r = f.store(&["diff", "r", "fp.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("verdict: identical"), "{}", r.stdout);
}

/// b-20: `diff` takes an agent file as it is (CLI.md), no detour through
/// `fingerprint --agent`.
#[test]
fn diff_takes_an_agent_file_as_one_side() {
    let f = Fixture::new(&[turn("ok", &[])]);
    assert_eq!(f.run("r", "go").code, 0);
    let r = f.store(&["diff", "r", "agent.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("verdict: identical"), "{}", r.stdout);
    let text = std::fs::read_to_string(f.path("agent.yaml")).unwrap();
    std::fs::write(f.path("other.yaml"), text.replace("demo-1", "demo-2")).unwrap();
    let r = f.store(&["diff", "r", "other.yaml"]);
    assert!(
        r.stdout.contains("demo-1 -> demo-2") || r.stdout.contains("model"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("verdict: identical"), "{}", r.stdout);
}

fn diff_with(f: &Fixture, b: serde_json::Value) -> Run {
    let a = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).json();
    std::fs::write(f.path("a.json"), a.to_string()).unwrap();
    f.fisk_stdin(
        &["diff", "a.json", "-", "--format", "json"],
        b.to_string().as_bytes(),
    )
}

#[test]
fn diff_gives_each_class_its_verdict_and_exit_status() {
    let f = Fixture::new(&[]);
    let base = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).json();
    let with = |k: &str, v: serde_json::Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    let cases = [
        (
            with("max_iterations", json!(50)),
            "budget",
            "continues with warnings",
            0,
        ),
        (
            with("tools_hash", json!("x")),
            "tools",
            "continues with warnings",
            0,
        ),
        (
            with("model", json!("demo-2")),
            "blocking",
            "refused unless --force",
            1,
        ),
        (with("provider", json!("anthropic")), "hard", "refused", 1),
    ];
    for (b, class, verdict, code) in cases {
        let r = diff_with(&f, b);
        assert_eq!(r.code, code, "{}", r.stdout);
        let out = r.json();
        assert_eq!(out["verdict"], verdict);
        assert_eq!(out["changes"][0]["class"], class);
    }
}

#[test]
fn diff_prints_hashes_as_changed_and_empty_values_as_none() {
    let f = Fixture::new(&[]);
    let mut b = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).json();
    b["system_hash"] = json!("0000");
    b["reasoning_effort"] = json!("high");
    std::fs::write(f.path("b.json"), b.to_string()).unwrap();
    let a = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).stdout;
    std::fs::write(f.path("a.json"), a).unwrap();
    let r = f.fisk(&["diff", "a.json", "b.json"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("system_hash") && r.stdout.contains("changed"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("0000") && !r.stdout.contains(SYSTEM_HASH),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("none -> high"), "{}", r.stdout);
    assert!(
        r.stdout.contains("verdict: refused unless --force"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_missing_reasoning_effort_equals_an_empty_one() {
    let f = Fixture::new(&[]);
    let mut b = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).json();
    b.as_object_mut().unwrap().remove("reasoning_effort");
    let r = diff_with(&f, b);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["verdict"], "identical");
}

#[test]
fn diff_refuses_an_argument_that_is_neither_a_file_nor_a_run_id() {
    let f = Fixture::new(&[]);
    let r = f.fisk(&["diff", "no/such.json", "-"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("neither an existing file nor a run id"),
        "{}",
        r.stderr
    );
}

#[test]
fn diff_refuses_json_that_is_not_a_fingerprint() {
    let f = Fixture::new(&[]);
    for (b, says) in [
        (serde_json::json!({}), "no provider or model"),
        (serde_json::json!({"foo": 1}), "no provider or model"),
        (serde_json::json!({"provider": "script"}), "no model"),
    ] {
        let r = diff_with(&f, b.clone());
        assert_eq!(r.code, 2, "{b}: {}", r.stdout);
        assert!(r.stderr.contains(says), "{b}: {}", r.stderr);
    }
    // A key this tool does not know (a newer agent's) is not a refusal.
    let mut newer = f.fisk(&["fingerprint", "--agent", "agent.yaml"]).json();
    newer["temperature_hash"] = "abc".into();
    let r = diff_with(&f, newer);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["verdict"], "identical");
}
