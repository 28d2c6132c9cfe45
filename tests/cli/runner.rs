//! `run` and `resume`: the script provider, the tools, the write order, the
//! gates of SPEC 4, the claim of SPEC 5, signals and the run lock.

use crate::support::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn exec(id: &'static str, cmd: &str) -> (&'static str, &'static str, serde_json::Value) {
    (id, "exec", json!({"command": cmd}))
}

fn records(f: &Fixture, run: &str) -> Vec<serde_json::Value> {
    String::from_utf8(f.bytes(run))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kinds(f: &Fixture, run: &str) -> Vec<String> {
    records(f, run)
        .iter()
        .map(|r| {
            r["protocol"]
                .as_str()
                .unwrap()
                .rsplit('.')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn counter(f: &Fixture) -> Vec<String> {
    std::fs::read_to_string(f.path("counter.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_run_stores_each_step_in_order_and_completes() {
    let f = Fixture::new(&[
        turn(
            "looking",
            &[exec("a", "echo one"), exec("b", "echo two >&2; exit 3")],
        ),
        turn("", &[("c", "teleport", json!({}))]),
        turn("all done", &[]),
    ]);
    let r = f.fisk(&["run", "--agent", "agent.yaml", "hello"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r
        .stdout
        .lines()
        .next()
        .unwrap()
        .strip_prefix("run ")
        .unwrap()
        .to_owned();
    assert!(id.starts_with("r-") && id.len() == 18, "{id}");
    // Completed: nothing is next (a new turn is the operator's idea, and
    // no placeholder for it is printed).
    assert!(!r.stdout.contains("next:"), "{}", r.stdout);
    assert!(!r.stdout.contains("TEXT"), "{}", r.stdout);
    assert_eq!(
        kinds(&f, &id),
        [
            "meta",
            "assistant",
            "tool_result",
            "tool_result",
            "assistant",
            "tool_result",
            "assistant",
            "terminal"
        ]
    );
    let recs = records(&f, &id);
    let ok = &recs[2]["tool_result"]["result"];
    assert_eq!(
        ok["content"],
        r#"{"stdout":"one\n","stderr":"","exit_status":0}"#
    );
    assert!(ok.get("is_error").is_none());
    let bad = &recs[3]["tool_result"]["result"];
    assert_eq!(
        bad["content"],
        r#"{"stdout":"","stderr":"two\n","exit_status":3}"#
    );
    assert_eq!(bad["is_error"], true);
    let unknown = &recs[5]["tool_result"]["result"];
    assert_eq!(unknown["is_error"], true);
    assert!(unknown["content"]
        .as_str()
        .unwrap()
        .contains("unknown tool"));
    let st = f.fold(&id);
    assert_eq!(st["status"], "completed");
    assert_eq!(st["counters"]["llm_calls"], 3);
    assert_eq!(st["counters"]["tool_calls"], 3);
    assert_eq!(st["counters"]["in_tokens"], 300);
    assert!(f.findings(&id).iter().all(|x| x["severity"] == "info"));
}

#[test]
fn running_out_of_turns_ends_the_run_with_error() {
    let f = Fixture::new(&[turn("", &[exec("a", "true")])]);
    let r = f.run("x", "go");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let st = f.fold("x");
    assert_eq!(st["terminal"]["reason"], "error");
}

#[test]
fn max_iterations_and_max_tokens_end_the_run() {
    let turns = vec![
        turn("", &[exec("a", "true")]),
        turn("", &[exec("b", "true")]),
        turn("", &[exec("c", "true")]),
        turn("done", &[]),
    ];
    let f = Fixture::new(&turns);
    f.write_agent("demo-1", "script", "", 0, 2, "[exec, defer]");
    assert_eq!(f.run("i", "go").code, 1);
    assert_eq!(f.fold("i")["terminal"]["reason"], "max_iterations");
    assert_eq!(f.fold("i")["counters"]["llm_calls"], 2);
    // Each turn costs 120 tokens: after two turns 240 >= 200.
    f.write_agent("demo-1", "script", "", 200, 0, "[exec, defer]");
    assert_eq!(f.run("t", "go").code, 1);
    assert_eq!(f.fold("t")["terminal"]["reason"], "budget");
    assert_eq!(f.fold("t")["counters"]["llm_calls"], 2);
}

#[test]
fn a_deferred_call_is_never_run_again_and_the_run_waits_until_it_is_answered() {
    let f = Fixture::new(&[
        turn(
            "",
            &[
                exec("e1", "echo e1 >> counter.txt"),
                ("d1", "defer", json!({"note": "approve", "handle": "T-9"})),
            ],
        ),
        turn("done", &[]),
    ]);
    let r = f.run("d", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("waiting on d1"), "{}", r.stdout);
    assert_eq!(f.fold("d")["status"], "suspended");
    assert_eq!(f.fold("d")["waiting"], true);
    // Resuming before the answer is refused before anything is written
    // (SPEC 4), naming what it waits on and how to answer it; nothing runs.
    let before = f.bytes("d");
    for _ in 0..3 {
        let r = f.resume("d", &[]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("waits on 1 deferred call(s) nobody has answered: d1 (defer)")
                && r.stderr
                    .contains("fisk-admin --config agent.yaml answer d d1"),
            "{}",
            r.stderr
        );
    }
    assert_eq!(f.bytes("d"), before, "a refused resume writes nothing");
    assert_eq!(counter(&f), ["e1"]);
    // The one waiting call is answered without naming it.
    assert_eq!(f.store(&["answer", "d", "--content", "yes"]).code, 0);
    let r = f.resume("d", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(counter(&f), ["e1"]);
    let st = f.fold("d");
    assert_eq!(st["status"], "completed");
    assert_eq!(st["counters"]["tool_calls"], 2);
}

#[test]
fn a_resume_claims_the_run_before_anything_else() {
    let f = Fixture::new(&[turn("", &[("d1", "defer", json!({}))]), turn("done", &[])]);
    assert_eq!(f.run("c", "go").code, 0);
    assert_eq!(f.store(&["answer", "c", "d1", "--content", "ok"]).code, 0);
    let before = records(&f, "c").len();
    assert_eq!(f.resume("c", &[]).code, 0);
    let recs = records(&f, "c");
    let claim = &recs[before];
    assert_eq!(claim["seq"], before as u64 + 1);
    let by = claim["claim"]["by"].as_str().unwrap();
    assert!(
        by.starts_with("fisk-admin@") && by.contains(" pid "),
        "{by}"
    );
    // The next record follows the claim's seq: nothing was skipped as a duplicate.
    assert_eq!(recs[before + 1]["seq"], before as u64 + 2);
    assert_eq!(
        recs[before + 1]["protocol"],
        "io.choria.fisk-ai.v1.session.assistant"
    );
}

#[test]
fn a_completed_run_with_nothing_new_is_refused_and_a_prompt_continues_it() {
    let f = Fixture::new(&[turn("first", &[]), turn("second", &[])]);
    assert_eq!(f.run("p", "go").code, 0);
    let before = f.bytes("p");
    let r = f.resume("p", &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("nothing new") && r.stderr.contains("--prompt"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("p"), before);
    let r = f.resume("p", &["--prompt", "and then?"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let msgs = f.fold("p")["messages"].clone();
    assert_eq!(msgs.as_array().unwrap().len(), 4);
    assert_eq!(msgs[2]["content"][0]["text"]["text"], "and then?");
    assert_eq!(msgs[3]["content"][0]["text"]["text"], "second");
}

/// A run suspended mid-way by a deferral, ready for gate tests.
fn suspended() -> Fixture {
    let f = Fixture::new(&[turn("", &[("d1", "defer", json!({}))]), turn("done", &[])]);
    assert_eq!(f.run("g", "go").code, 0);
    assert_eq!(f.store(&["answer", "g", "d1", "--content", "ok"]).code, 0);
    f
}

#[test]
fn a_provider_change_is_refused_even_with_force() {
    let f = suspended();
    f.write_agent("demo-1", "script", "", 200000, 20, "[exec, defer]");
    // The runner only has `script`; rewrite the run's side instead.
    let text = String::from_utf8(f.bytes("g")).unwrap().replacen(
        "\"provider\":\"script\"",
        "\"provider\":\"anthropic\"",
        1,
    );
    std::fs::write(f.journal("g"), &text).unwrap();
    for extra in [&[][..], &["--force"][..]] {
        let r = f.resume("g", extra);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("provider"), "{}", r.stderr);
        assert_eq!(f.bytes("g"), text.as_bytes());
    }
}

#[test]
fn a_refusal_quoting_a_hostile_fingerprint_is_neutralised() {
    let f = suspended();
    f.write_agent("demo-1", "script", "", 200000, 20, "[exec, defer]");
    let hostile = "anth\\u001b[2J\\u001b]52;c;SGk=\\u0007\\u009b31m\\u202eropic";
    let text = String::from_utf8(f.bytes("g")).unwrap().replacen(
        "\"provider\":\"script\"",
        &format!("\"provider\":\"{hostile}\""),
        1,
    );
    std::fs::write(f.journal("g"), &text).unwrap();
    let r = f.resume("g", &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("anth\\u{1b}[2J"), "{}", r.stderr);
    assert_printable("resume's refusal", &r.stderr);
    assert_eq!(f.bytes("g"), text.as_bytes());
}

#[test]
fn blocking_drift_is_refused_unless_forced() {
    let f = suspended();
    f.write_agent(
        "demo-2",
        "script",
        "  reasoning_effort: high\n",
        200000,
        20,
        "[exec, defer]",
    );
    let before = f.bytes("g");
    let r = f.resume("g", &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("model demo-1 -> demo-2"), "{}", r.stderr);
    assert!(
        r.stderr.contains("reasoning_effort none -> high"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("g"), before);
    // Refused with a new turn, the forced resume offered keeps the turn.
    let r = f.resume("g", &["--prompt", "next"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        help_command(&r.stderr, "--force").ends_with("--prompt - --force"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("g"), before);
    // The help is the forced resume, whole: pasted, it reads the new turn
    // from standard input and continues the run; with none, it refuses.
    let forced = help_command(&r.stderr, "--force");
    let r = f.paste(&forced);
    assert_eq!(r.code, 1, "{forced}: {}", r.stderr);
    assert!(
        r.stderr.contains("is empty; nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("g"), before);
    let r = f.paste_stdin(&forced, b"next\n");
    assert_eq!(r.code, 0, "{forced}: {}", r.stderr);
    assert_eq!(f.fold("g")["status"], "completed");
    // Completed with nothing new: the help continues it with a new turn.
    let r = f.resume("g", &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("nothing new to do"), "{}", r.stderr);
    let more = help_command(&r.stderr, "--prompt -");
    let r = f.paste_stdin(&format!("{more} --force"), b"more\n");
    // Past the gate: the new turn is in the journal (the script has no
    // turn left to answer it, so the run then ends in error).
    assert!(
        !r.stderr.contains("nothing new to do"),
        "{more}: {}",
        r.stderr
    );
    let messages = f.fold("g")["messages"].to_string();
    assert!(
        messages.contains("more"),
        "{more}: {}{}",
        r.stdout,
        r.stderr
    );
}

/// The one backticked command of the `help:` text in `stderr` that holds
/// `needle`.
fn help_command(stderr: &str, needle: &str) -> String {
    let help = stderr.split("help:").nth(1).unwrap_or_default();
    let found = help
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|c| c.contains(needle));
    found
        .unwrap_or_else(|| panic!("no `...{needle}...` in the help: {stderr}"))
        .to_owned()
}

#[test]
fn tools_and_budget_drift_continue_with_warnings() {
    let f = suspended();
    f.write_agent("demo-1", "script", "", 999999, 50, "[exec, defer, extra]");
    let r = f.resume("g", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("standing approvals"), "{}", r.stderr);
    assert!(
        r.stderr.contains("max_tokens 200000 -> 999999"),
        "{}",
        r.stderr
    );
    assert_eq!(f.fold("g")["status"], "completed");
}

#[test]
fn resume_refuses_a_torn_tail_and_asks_for_repair() {
    let f = suspended();
    let mut bytes = f.bytes("g");
    bytes.extend_from_slice(b"{\"seq\":9,\"proto");
    std::fs::write(f.journal("g"), &bytes).unwrap();
    let r = f.resume("g", &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    // The help names the store the agent file chose, so it works pasted.
    assert!(
        r.stderr.contains("fisk-admin --config agent.yaml repair g"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("g"), bytes);
    assert_eq!(f.store(&["repair", "g"]).code, 0);
    assert_eq!(f.resume("g", &[]).code, 0);
}

#[test]
fn resume_adds_a_missing_final_newline_before_its_claim() {
    let f = suspended();
    let bytes = f.bytes("g");
    std::fs::write(f.journal("g"), &bytes[..bytes.len() - 1]).unwrap();
    let r = f.resume("g", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(f.bytes("g").starts_with(&bytes));
    assert!(f.findings("g").iter().all(|x| x["severity"] == "info"));
}

fn wait_for(f: &Fixture, run: &str, what: &str) {
    let start = Instant::now();
    while !String::from_utf8_lossy(&std::fs::read(f.journal(run)).unwrap_or_default())
        .contains(what)
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} never appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_first_sigint_finishes_the_step_and_suspends_and_resume_repeats_nothing() {
    let slow = |id: &'static str| {
        exec(
            id,
            Box::leak(format!("sleep 0.3; echo {id} >> counter.txt").into_boxed_str()),
        )
    };
    let f = Fixture::new(&[
        turn("", &[slow("s1"), slow("s2"), slow("s3")]),
        turn("done", &[]),
    ]);
    let child = f
        .command(&["run", "--agent", "agent.yaml", "--id", "sig", "go"])
        .spawn()
        .unwrap();
    wait_for(&f, "sig", "\"s1\",\"name\"");
    std::thread::sleep(Duration::from_millis(100));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("stopping: the current step finishes, then the run is suspended"),
        "{}",
        out.stderr
    );
    let st = f.fold("sig");
    assert_eq!(st["terminal"]["reason"], "suspended");
    // s1 was running when the signal came: it finished and was stored.
    assert_eq!(counter(&f), ["s1"]);
    assert_eq!(st["pending"]["answered"], json!(["s1"]));
    let r = f.resume("sig", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(counter(&f), ["s1", "s2", "s3"]);
    assert_eq!(f.fold("sig")["status"], "completed");
}

#[test]
fn of_two_resumes_on_one_run_exactly_one_proceeds() {
    let f = Fixture::new(&[
        turn("", &[exec("a", "echo a >> counter.txt")]),
        turn("", &[exec("b", "sleep 1; echo b >> counter.txt")]),
        turn("done", &[]),
    ]);
    f.write_agent("demo-1", "script", "", 200000, 1, "[exec, defer]");
    assert_eq!(
        f.run("two", "go").code,
        1,
        "max_iterations 1 stops it after one turn"
    );
    f.write_agent("demo-1", "script", "", 200000, 20, "[exec, defer]");
    let first = f
        .command(&["resume", "two", "--agent", "agent.yaml"])
        .spawn()
        .unwrap();
    wait_for(&f, "two", "\"id\":\"b\"");
    let second = f.resume("two", &[]);
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert!(
        second.stderr.contains("run two is live"),
        "{}",
        second.stderr
    );
    let first: Run = first.wait_with_output().unwrap().into();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(counter(&f), ["a", "b"]);
    assert_eq!(f.fold("two")["status"], "completed");
}

#[test]
fn a_malformed_turns_file_names_the_file_line_and_field() {
    let f = Fixture::new(&[
        turn("ok", &[]),
        r#"{"message": {"role": "assistant"}, "in_tokens": "many"}"#.to_owned(),
    ]);
    let r = f.run("m", "go");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("turns.jsonl")
            && r.stderr.contains("line 2")
            && r.stderr.contains("in_tokens"),
        "{}",
        r.stderr
    );
    assert!(!f.journal("m").exists());
}

#[test]
fn a_malformed_agent_file_names_the_file_line_and_field() {
    let f = Fixture::new(&[turn("ok", &[])]);
    f.write_agent("demo-1", "openai", "", 1, 1, "[exec]");
    let r = f.run("m", "go");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("agent.yaml")
            && r.stderr.contains("line 2")
            && r.stderr.contains("llm.provider"),
        "{}",
        r.stderr
    );
}

/// A command past its `timeout_s` is killed with its whole process group:
/// a grandchild holding the output pipe open would otherwise keep the
/// step waiting until it exits on its own.
#[test]
fn a_timed_out_command_is_killed_with_its_children() {
    let f = Fixture::new(&[
        turn(
            "",
            &[(
                "t1",
                "exec",
                json!({"command": "sleep 30 & sleep 30", "timeout_s": 0.5}),
            )],
        ),
        turn("done", &[]),
    ]);
    let started = std::time::Instant::now();
    let r = f.run("t", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the step waited for the grandchild: {:?}",
        started.elapsed()
    );
    let fold = f.fold("t");
    let content = fold["messages"][2]["content"][0]["tool_result"]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(content.contains("\"timed_out\":true"), "{content}");
}

/// SPEC 3: a completed run stays completed for the resume gate when a
/// record (here a claim left by a crashed resume) reopens it; with nothing
/// new to do, resume refuses and writes nothing.
#[test]
fn a_completed_run_reopened_by_a_claim_is_still_refused_with_nothing_new() {
    let f = Fixture::new(&[turn("done", &[])]);
    assert_eq!(f.run("c", "go").code, 0);
    let mut bytes = f.bytes("c");
    let n = bytes.iter().filter(|b| **b == b'\n').count() + 1;
    bytes.extend_from_slice(
        format!(
            "{{\"seq\":{n},\"protocol\":\"io.choria.fisk-ai.v1.session.claim\",\"time\":\"2026-12-01T10:00:00Z\",\"claim\":{{\"by\":\"crashed\",\"claimed\":\"2026-12-01T10:00:00Z\"}}}}\n"
        )
        .as_bytes(),
    );
    std::fs::write(f.journal("c"), &bytes).unwrap();
    assert_eq!(f.fold("c")["status"], "open");
    assert_eq!(f.fold("c")["completed"], true);
    let r = f.resume("c", &[]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("nothing new"), "{}", r.stderr);
    assert_eq!(f.bytes("c"), bytes, "a refused resume wrote");
}

#[test]
fn answer_without_an_id_takes_the_one_waiting_call_and_refuses_when_it_is_not_one() {
    let f = Fixture::new(&[
        turn(
            "",
            &[
                ("d1", "defer", json!({"note": "first"})),
                ("d2", "defer", json!({"note": "second"})),
            ],
        ),
        turn("done", &[]),
    ]);
    assert_eq!(f.run("two", "go").code, 0);
    let before = f.bytes("two");
    let r = f.store(&["answer", "two", "--content", "x"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("waits on 2 deferred calls (d1, d2)"),
        "{}",
        r.stderr
    );
    assert_eq!(f.bytes("two"), before);
    assert_eq!(f.store(&["answer", "two", "d2", "--content", "x"]).code, 0);
    // Now one waits: no id needed.
    let r = f.store(&["answer", "two", "--content", "y"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("answered d1"), "{}", r.stdout);
    // Both answered: the run is ready to resume, and says so.
    let r = f.store(&["answer", "two", "--content", "z"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("ready to resume") && r.stderr.contains("nothing waits on an answer"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("resume two"), "{}", r.stderr);
}

#[test]
fn a_second_interrupt_leaves_at_once_saying_how_to_continue() {
    let f = Fixture::new(&[
        turn("", &[exec("s1", "sleep 3; echo s1 >> counter.txt")]),
        turn("done", &[]),
    ]);
    let child = f
        .command(&["run", "--agent", "agent.yaml", "--id", "twice", "go"])
        .spawn()
        .unwrap();
    wait_for(&f, "twice", "\"s1\",\"name\"");
    let started = std::time::Instant::now();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(150));
        let kill = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
    }
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "it left before the tool finished"
    );
    assert!(out.stderr.contains("stopping:"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("left at once. The journal is consistent")
            && out.stderr.contains("resume twice --agent agent.yaml"),
        "{}",
        out.stderr
    );
    // The hint works when pasted: the run resumes and completes.
    let r = f.resume("twice", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(f.fold("twice")["status"], "completed");
}

/// fisk-admin's own NATS secrets never reach an `exec` child (issue 24
/// defect 5): a run whose command prints its environment journals no
/// password, token or creds path, and `NATS_URL` without its userinfo;
/// the rest of the environment still arrives.
#[test]
fn an_exec_child_gets_no_nats_secret_of_fisk_admin() {
    let f = Fixture::new(&[turn("", &[exec("a", "env")]), turn("done", &[])]);
    let out = f
        .command(&["run", "--agent", "agent.yaml", "--id", "envrun", "go"])
        .env("NATS_PASSWORD", "pw-s3cret-1")
        .env("NATS_TOKEN", "tok-s3cret-2")
        .env("NATS_CREDS", "/tmp/creds-s3cret-3.creds")
        .env("NATS_URL", "nats://alice:url-s3cret-4@127.0.0.1:4222")
        .env("KEPT_FOR_THE_CHILD", "still-here")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let journal = String::from_utf8(f.bytes("envrun")).unwrap();
    assert!(
        journal.contains("KEPT_FOR_THE_CHILD=still-here"),
        "{journal}"
    );
    assert!(
        journal.contains("NATS_URL=nats://127.0.0.1:4222"),
        "{journal}"
    );
    for secret in [
        "pw-s3cret-1",
        "tok-s3cret-2",
        "creds-s3cret-3",
        "url-s3cret-4",
    ] {
        assert!(
            !journal.contains(secret),
            "{secret} in the journal:\n{journal}"
        );
    }
}
