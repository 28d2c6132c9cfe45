//! Waiting on a person (issue 23 item 3): a run the minimal runner
//! suspended on a gated call waits on an approval, which `ls --waiting`,
//! `search --waiting`, the `ls` WAITING column and `needs_approval` say,
//! on the file backend and on a real nats-server; the agent's `waiting`
//! and `open_deferrals` still count deferrals only. And `approve` refuses
//! a run that is not suspended (issue 24 defect 10), writing nothing.

use crate::nats_support::NatsServer;
use crate::schema::{assert_valid, output_validator};
use crate::support::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn exec(id: &'static str) -> (&'static str, &'static str, Value) {
    (id, "exec", json!({"command": "true"}))
}

/// The fixture's agent with `gate: [exec]`.
fn gated() -> Fixture {
    let f = Fixture::new(&[]);
    f.gate_exec();
    f
}

/// Start run `id` whose first turn calls `calls` and whose second ends it.
fn start(f: &Fixture, server: Option<&str>, id: &str, calls: &[(&str, &str, Value)]) {
    f.write_turns(&[turn("", calls), turn("done", &[])]);
    let mut args = Vec::new();
    if let Some(url) = server {
        args.extend(["--server", url]);
    }
    args.extend(["run", "--agent", "agent.yaml", "--id", id, "go"]);
    let r = f.fisk(&args);
    assert_eq!(r.code, 0, "run {id}: {}{}", r.stdout, r.stderr);
}

fn ids(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["run_id"].as_str().unwrap().to_owned())
        .collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn by_id<'a>(v: &'a Value, run: &str) -> &'a Value {
    v.as_array()
        .unwrap()
        .iter()
        .find(|x| x["run_id"] == run)
        .unwrap_or_else(|| panic!("{run} not listed: {v}"))
}

/// The WAITING cell of `run`'s row in the `ls` table, and its STATUS.
fn row(table: &str, run: &str) -> (String, String) {
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    // ls into a pipe: tab-separated fields.
    if header.contains('\t') {
        let names: Vec<&str> = header.split('\t').collect();
        let l = lines
            .find(|l| l.split('\t').next() == Some(run))
            .unwrap_or_else(|| panic!("no row {run}:\n{table}"));
        let fields: Vec<&str> = l.split('\t').collect();
        let get = |n: &str| {
            let i = names.iter().position(|h| *h == n).unwrap();
            fields[i].to_owned()
        };
        return (get("STATUS"), get("WAITING"));
    }
    let at = |name: &str| header.find(name).unwrap_or_else(|| panic!("{header}"));
    let (status, waiting, live) = (at("STATUS"), at("WAITING"), at("LIVE"));
    let l = lines
        .find(|l| l.split_whitespace().next() == Some(run))
        .unwrap_or_else(|| panic!("no row {run}:\n{table}"));
    let cut = |a: usize, b: usize| l.get(a..b.min(l.len())).unwrap_or("").trim().to_owned();
    (cut(status, waiting), cut(waiting, live))
}

/// The checks shared by both backends, on a store holding `gate` (two
/// gated calls), `mixed` (a deferral and a gated call), `deferral` and
/// `done`; `fisk` runs fisk-admin against the store.
fn check_listing(fisk: &dyn Fn(&[&str]) -> Run) {
    let ls = output_validator("ls.json");
    let search = output_validator("search.json");
    let r = fisk(&["ls", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = r.json();
    assert_valid(&ls, &all, "ls");
    let gate = by_id(&all, "gate");
    assert_eq!(
        gate["needs_approval"],
        json!([{"tool_use_id": "g1", "tool": "exec"}, {"tool_use_id": "g2", "tool": "exec"}])
    );
    assert_eq!(
        (&gate["waiting"], &gate["open_deferrals"]),
        (&json!(false), &json!(0)),
        "the agent's fields count deferrals only"
    );
    let mixed = by_id(&all, "mixed");
    assert_eq!(
        mixed["needs_approval"],
        json!([{"tool_use_id": "g3", "tool": "exec"}])
    );
    assert_eq!(
        (&mixed["waiting"], &mixed["open_deferrals"]),
        (&json!(true), &json!(1))
    );
    let deferral = by_id(&all, "deferral");
    assert_eq!(deferral["needs_approval"], json!([]));
    assert_eq!(deferral["waiting"], true);
    assert_eq!(by_id(&all, "done")["needs_approval"], json!([]));

    let waiting = set(&["gate", "mixed", "deferral"]);
    for args in [&["--waiting"][..], &["--status", "waiting"]] {
        let mut a = vec!["ls", "-o", "json"];
        a.extend_from_slice(args);
        assert_eq!(ids(&fisk(&a).json()), waiting, "ls {args:?}");
    }
    let r = fisk(&["search", "--waiting", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = r.json();
    assert_valid(&search, &doc, "search --waiting");
    assert_eq!(ids(&doc["runs"]), waiting);
    assert_eq!(
        by_id(&doc["runs"], "gate")["needs_approval"],
        gate["needs_approval"]
    );
    assert!(
        by_id(&doc["runs"], "deferral")
            .get("needs_approval")
            .is_none(),
        "left out when empty, as the agent's document has it: {doc}"
    );

    let r = fisk(&["ls"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (run, status, cell) in [
        ("gate", "suspended", "2 approvals"),
        ("mixed", "suspended", "1 approval, 1 deferred"),
        ("deferral", "suspended", "1 deferred"),
        ("done", "completed", "-"),
    ] {
        assert_eq!(
            row(&r.stdout, run),
            (status.to_owned(), cell.to_owned()),
            "{run}:\n{}",
            r.stdout
        );
    }

    // Answering a call that waits on an approval is refused, naming the
    // approve that acts on it (issue 35.4; it used to say "resume runs it
    // again", which a resume refuses).
    let r = fisk(&["answer", "mixed", "g3", "--content", "x"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("waits on an approval, not an answer"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("approve mixed g3"), "{}", r.stderr);
    assert!(!r.stderr.contains("runs it again"), "{}", r.stderr);
    // Where a run stands, beside the agent's status.
    let states = fisk(&["ls", "-o", "json"]).json();
    for (run, state) in [
        ("gate", "waiting-approval"),
        ("mixed", "waiting-answer"),
        ("deferral", "waiting-answer"),
        ("done", "ended"),
    ] {
        assert_eq!(by_id(&states, run)["state"], state, "{run}");
    }
    assert_eq!(
        ids(&fisk(&["ls", "--state", "waiting-approval", "-o", "json"]).json()),
        set(&["gate"])
    );
    assert_eq!(
        ids(&fisk(&["ls", "--state", "waiting", "-o", "json"]).json()),
        waiting
    );

    // One call approved: the other still waits.
    let r = fisk(&["approve", "gate", "g1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = fisk(&["ls", "-o", "json"]).json();
    assert_eq!(
        by_id(&all, "gate")["needs_approval"],
        json!([{"tool_use_id": "g2", "tool": "exec"}])
    );
    assert!(ids(&fisk(&["ls", "--waiting", "-o", "json"]).json()).contains("gate"));
    assert_eq!(row(&fisk(&["ls"]).stdout, "gate").1, "1 approval");
    let show = fisk(&["show", "gate"]);
    assert!(
        show.stdout.contains("g2 (exec): approve with:")
            && !show.stdout.contains("g1 (exec): approve with:"),
        "{}",
        show.stdout
    );
    // The second approved, and the mixed run's tool for good: the gate
    // run waits on nobody; the mixed one still on its deferral.
    assert_eq!(fisk(&["approve", "gate", "g2"]).code, 0);
    let r = fisk(&["approve", "mixed", "--tool", "exec"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = fisk(&["ls", "-o", "json"]).json();
    assert_valid(&ls, &all, "ls after the approvals");
    assert_eq!(by_id(&all, "gate")["needs_approval"], json!([]));
    assert_eq!(by_id(&all, "mixed")["needs_approval"], json!([]));
    assert_eq!(by_id(&all, "mixed")["waiting"], true);
    let still = set(&["mixed", "deferral"]);
    assert_eq!(ids(&fisk(&["ls", "--waiting", "-o", "json"]).json()), still);
    assert_eq!(
        ids(&fisk(&["search", "--waiting", "-o", "json"]).json()["runs"]),
        still
    );
    let table = fisk(&["ls"]).stdout;
    // Approved and not resumed yet: ready, the WAITING column says what
    // goes on (issue 35).
    assert_eq!(
        row(&table, "gate"),
        ("open".to_owned(), "resume".to_owned())
    );
    assert_eq!(row(&table, "mixed").1, "1 deferred");
    let show = fisk(&["show", "gate"]);
    assert!(
        !show.stdout.contains("Waiting on approval"),
        "{}",
        show.stdout
    );
    // Ready to resume: `show` says so and gives the resume on a line of
    // its own; `ls --ready` and `inbox` find it.
    assert!(
        show.stdout.contains("  state:       ready ("),
        "{}",
        show.stdout
    );
    assert!(
        steps(&show.stdout, &["go on with"])
            .iter()
            .any(|l| l.ends_with(" resume gate")),
        "{}",
        show.stdout
    );
    assert_eq!(
        fisk(&["show", "gate", "-o", "json"]).json()["state"],
        "ready"
    );
    assert_eq!(
        ids(&fisk(&["ls", "--ready", "-o", "json"]).json()),
        set(&["gate"])
    );
    let inbox = fisk(&["inbox", "-o", "json"]).json();
    assert_eq!(inbox["ready"][0]["run"], "gate", "{inbox}");
}

/// The four runs `check_listing` reads.
fn four_runs(f: &Fixture, server: Option<&str>) {
    start(f, server, "gate", &[exec("g1"), exec("g2")]);
    start(
        f,
        server,
        "mixed",
        &[("d1", "defer", json!({"note": "n"})), exec("g3")],
    );
    start(f, server, "deferral", &[("d2", "defer", json!({}))]);
    f.write_turns(&[turn("done", &[])]);
    let mut args = Vec::new();
    if let Some(url) = server {
        args.extend(["--server", url]);
    }
    args.extend(["run", "--agent", "agent.yaml", "--id", "done", "go"]);
    assert_eq!(f.fisk(&args).code, 0);
}

#[test]
fn a_run_suspended_on_a_gated_call_waits_on_a_person_until_approved() {
    let f = gated();
    four_runs(&f, None);
    check_listing(&|args| f.store(args));
    // Once resumed the approved calls have results: still nothing waits.
    f.write_turns(&[turn("", &[exec("g1"), exec("g2")]), turn("done", &[])]);
    let r = f.resume("gate", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = f.store(&["ls", "-o", "json"]).json();
    assert_eq!(by_id(&all, "gate")["status"], "completed");
    assert_eq!(by_id(&all, "gate")["needs_approval"], json!([]));
}

#[test]
fn a_run_suspended_on_a_gated_call_waits_on_a_person_on_jetstream() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let f = gated();
    let agent = f.path("agent.yaml");
    let text = std::fs::read_to_string(&agent).unwrap().replace(
        "{backend: file, options: {directory: ./runs}}",
        "{backend: jetstream, options: {stream: SESSIONS}}",
    );
    std::fs::write(&agent, text).unwrap();
    four_runs(&f, Some(&srv.url));
    // --hold 0: an approval follows the terminal, and the second approval
    // of a run would be held otherwise (the hold is another item's).
    check_listing(&|args| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:SESSIONS",
            "--hold",
            "0",
        ];
        all.extend_from_slice(args);
        f.fisk(&all)
    });
}

/// A suspension names only the calls of the turn it ended: a later turn
/// (a resume whose model called again with the same id, then a crash) is
/// not waiting on an approval because of it.
#[test]
fn an_earlier_suspension_does_not_name_a_later_turns_calls() {
    let f = gated();
    f.write_turns(&[turn("", &[exec("g1")])]);
    assert_eq!(f.run("again", "go").code, 0);
    let listed = f.store(&["ls", "-o", "json"]).json();
    assert_eq!(
        by_id(&listed, "again")["needs_approval"],
        json!([{"tool_use_id": "g1", "tool": "exec"}])
    );
    let p = "io.choria.fisk-ai.v1.session";
    let more = [
        format!(
            r#"{{"seq":4,"protocol":"{p}.claim","claim":{{"by":"w","claimed":"2026-12-01T08:00:00Z"}}}}"#
        ),
        format!(
            r#"{{"seq":5,"protocol":"{p}.tool_result","tool_result":{{"tool_use_id":"g1","result":{{"tool_use_id":"g1","content":"ok"}}}}}}"#
        ),
        format!(
            r#"{{"seq":6,"protocol":"{p}.assistant","assistant":{{"iteration":1,"message":{{"role":"assistant","content":[{{"tool_use":{{"id":"g1","name":"exec","input":{{}}}}}}]}},"stop_reason":"tool_use"}}}}"#
        ),
    ];
    let mut text = String::from_utf8(f.bytes("again")).unwrap();
    assert_eq!(
        text.lines().count(),
        3,
        "meta, assistant, terminal:\n{text}"
    );
    for l in &more {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(f.journal("again"), text).unwrap();
    let listed = f.store(&["ls", "-o", "json"]).json();
    let again = by_id(&listed, "again");
    assert_eq!(again["status"], "open", "{again}");
    assert_eq!(again["needs_approval"], json!([]), "{again}");
    assert!(ids(&f.store(&["ls", "--waiting", "-o", "json"]).json()).is_empty());
    let show = f.store(&["show", "again"]);
    assert!(
        !show.stdout.contains("Waiting on approval"),
        "{}",
        show.stdout
    );
}

/// Issue 24 defect 10: `approve` on a completed, errored or open run is
/// refused and writes nothing. An open run taken is one stopped in the
/// middle of a batch with a call still to run (the runner's resume refuses
/// it until its gated calls are approved).
#[test]
fn approve_refuses_a_run_that_is_not_suspended() {
    let store = store_copy("runs");
    let agents = store_copy("agent-journals/v1");
    let (d, a) = (s(store.path()), s(agents.path()));
    let approve = |dir: &str, run: &str, args: &[&str]| {
        let mut all = vec!["--state-dir", dir, "approve", run];
        all.extend_from_slice(args);
        fisk(&all)
    };
    let refused = |dir: &str, run: &str, args: &[&str], says: &str| {
        let path = std::path::Path::new(dir).join(format!("{run}.json"));
        let before = std::fs::read(&path).unwrap();
        let r = approve(dir, run, args);
        assert_eq!(r.code, 1, "{run} {args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(says) && r.stderr.contains("nothing was written"),
            "{run} {args:?}: {}",
            r.stderr
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "{run} {args:?}");
    };
    let not = |run: &str, why: &str| format!("run {run} is not suspended: {why}");
    // The run model's words for an ended run (issue 35), and for a tool
    // the run never called.
    let ended = |run: &str, reason: &str| {
        format!("run {run} is ended {reason}; approve has nothing to do to it")
    };
    let unknown = |run: &str, tool: &str| format!("run {run} has no call of tool {tool}");
    for (dir, run, tool, says) in [
        (
            d,
            "simple-completed",
            "exec",
            unknown("simple-completed", "exec"),
        ),
        (
            d,
            "error-terminal",
            "exec",
            ended("error-terminal", "error"),
        ),
        (
            d,
            "budget-terminal",
            "exec",
            ended("budget-terminal", "budget"),
        ),
        (
            d,
            "max-iterations",
            "exec",
            ended("max-iterations", "max_iterations"),
        ),
        // Ended, then only the agent's memory revisions; it called no tool.
        (
            a,
            "g-memory-after-terminal",
            "shell",
            unknown("g-memory-after-terminal", "shell"),
        ),
        (
            d,
            "open-no-terminal",
            "exec",
            not(
                "open-no-terminal",
                "it has no terminal record, and no call of tool exec waits unanswered",
            ),
        ),
        (
            d,
            "claimed-after-terminal",
            "exec",
            not(
                "claimed-after-terminal",
                "records follow its last terminal (seq 5, claim), and no call of tool exec waits",
            ),
        ),
        (
            a,
            "g-claim-after-terminal",
            "shell",
            unknown("g-claim-after-terminal", "shell"),
        ),
        // Stopped mid-batch, but not on a call of this tool.
        (
            a,
            "g-pending-crash",
            "exec",
            unknown("g-pending-crash", "exec"),
        ),
    ] {
        refused(dir, run, &["--tool", tool], &says);
    }
    // Stopped mid-batch: its unanswered call can be approved.
    let r = approve(a, "g-pending-crash", &["tu_2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A batch the run ended in error over is not reopened by an approval.
    let path = agents.path().join("g-pending-suspended.json");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text = text.replace(
        r#""terminal":{"reason":"suspended","message":"interrupted"}"#,
        r#""terminal":{"reason":"error","message":"boom"}"#,
    );
    assert!(text.contains("boom"));
    let errored = agents.path().join("g-errored.json");
    std::fs::write(
        &errored,
        text.replace(
            r#""run_id":"g-pending-suspended""#,
            r#""run_id":"g-errored""#,
        ),
    )
    .unwrap();
    refused(a, "g-errored", &["tu_2"], &ended("g-errored", "error"));
    refused(
        a,
        "g-errored",
        &["--tool", "shell"],
        &ended("g-errored", "error"),
    );
    // A suspended run the agent wrote is taken, with a standing approval;
    // then its call is approved already.
    let r = approve(a, "g-pending-suspended", &["--tool", "shell"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    refused(
        a,
        "g-pending-suspended",
        &["tu_2"],
        "approved for the whole run already",
    );
    // An id that is no unanswered call of the pending batch is refused.
    refused(
        a,
        "g-pending-suspended",
        &["nope"],
        "is not a call of the pending batch (tu_1, tu_2)",
    );
    refused(a, "g-pending-suspended", &["tu_1"], "already answered");
}
