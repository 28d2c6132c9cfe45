//! The refusals of the hand-written operations, each leaving the journal
//! as it was, and [`RunState::call`](crate::fold::RunState::call).

use super::answer::{self, Request as AnswerRequest};
use super::approve::{approve, Request as ApproveRequest, Target};
use super::{become_writer, Change, Op, Open, Seen, Why};
use crate::fold::{CallState, FoldOptions, RunState};
use crate::store::Store;
use crate::Error;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// A fixture journal of `testdata/agent-journals/v3`.
fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/agent-journals/v3")
        .join(format!("{name}.json"));
    std::fs::read_to_string(path).unwrap()
}

/// A store holding run `run` as `text` (0700 directory, 0600 journal).
pub(super) fn store_with(run: &str, text: &str) -> (tempfile::TempDir, Store, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.path().join(format!("{run}.json"));
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store = Store::directory(dir.path());
    (dir, store, path)
}

fn fixture_store(run: &str) -> (tempfile::TempDir, Store, PathBuf) {
    store_with(run, &fixture(run))
}

/// `run`'s fixture with `lines` appended.
fn with_lines(run: &str, lines: &[&str]) -> String {
    let mut text = fixture(run);
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    text
}

/// `run`'s fixture without its lines numbered (1-based) in `drop`.
fn without_lines(run: &str, drop: &[usize]) -> String {
    fixture(run)
        .lines()
        .enumerate()
        .filter(|(i, _)| !drop.contains(&(i + 1)))
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

fn state(store: &Store, run: &str) -> RunState {
    let journal = store.read(run).unwrap();
    store.fold(run, &journal, FoldOptions::default()).unwrap()
}

/// The refusal, checked to be `op`'s, and that the journal was left alone.
fn refusal(op: Op, path: &PathBuf, before: &[u8], e: Error) -> Why {
    assert_eq!(std::fs::read(path).unwrap(), before, "{e}");
    match e {
        Error::Refused(r) => {
            assert_eq!(r.op, Some(op));
            r.why
        }
        other => panic!("not a refusal: {other}"),
    }
}

fn answer_refused(run: &str, text: &str, call: Option<&str>) -> Why {
    let (_dir, store, path) = store_with(run, text);
    let before = std::fs::read(&path).unwrap();
    let req = AnswerRequest {
        run,
        call,
        is_error: false,
    };
    let e = answer::prepare(&store, &req).map(|_| ()).unwrap_err();
    refusal(Op::Answer, &path, &before, e)
}

fn approve_refused(run: &str, text: &str, target: Target) -> Why {
    let (_dir, store, path) = store_with(run, text);
    let before = std::fs::read(&path).unwrap();
    let e = approve(&store, &ApproveRequest { run, target }).unwrap_err();
    refusal(Op::Approve, &path, &before, e)
}

const PENDING: &str = "g-pending-suspended";
const SUSPENDED_FOR_TU_2: &str = r#"{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"suspended","message":"needs approval: tu_2 (shell)"}}"#;
const SHELL_DECISION: &str = r#"{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.decision","optional":true,"decision":{"tool":"shell"}}"#;
const CLAIM: &str = r#"{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.claim","claim":{"by":"w","claimed":"2026-09-22T09:14:33Z"}}"#;

#[test]
fn a_call_waits_on_one_thing() {
    let (_d, store, _) = fixture_store("g-deferral-two-one-answered");
    let st = state(&store, "g-deferral-two-one-answered");
    assert_eq!(
        st.call("tu_x"),
        CallState::Answered {
            tool: "change_request"
        }
    );
    let CallState::AwaitsAnswer { deferral, in_batch } = st.call("tu_y") else {
        panic!("{:?}", st.call("tu_y"));
    };
    assert!(in_batch);
    assert_eq!(deferral.handle, "CHG-2");
    assert_eq!(st.call("zz"), CallState::NotInBatch { answered: false });

    let (_d, store, _) = fixture_store("g-deferral-answered-resumed");
    let st = state(&store, "g-deferral-answered-resumed");
    assert_eq!(st.call("tu_d"), CallState::NoBatch { answered: true });
    assert_eq!(st.call("zz"), CallState::NoBatch { answered: false });

    let (_d, store, _) = fixture_store("g-call-approval-after-suspend");
    let st = state(&store, "g-call-approval-after-suspend");
    assert_eq!(
        st.call("tu_1"),
        CallState::Approved {
            tool: "stream_rm",
            standing: false
        }
    );

    let (_d, store, _) = fixture_store(PENDING);
    let st = state(&store, PENDING);
    assert_eq!(st.call("tu_1"), CallState::Answered { tool: "shell" });
    assert_eq!(st.call("tu_2"), CallState::ToRun { tool: "shell" });
    assert_eq!(st.call("tu_2").to_run(), Some("shell"));
    assert_eq!(st.call("tu_1").to_run(), None);

    let (_d, store, _) = store_with(PENDING, &with_lines(PENDING, &[SHELL_DECISION]));
    let st = state(&store, PENDING);
    assert_eq!(
        st.call("tu_2"),
        CallState::Approved {
            tool: "shell",
            standing: true
        }
    );

    let (_d, store, _) = store_with(PENDING, &with_lines(PENDING, &[SUSPENDED_FOR_TU_2]));
    let st = state(&store, PENDING);
    assert_eq!(st.call("tu_2"), CallState::AwaitsApproval { tool: "shell" });
}

#[test]
fn an_answer_is_refused_for_a_call_that_does_not_wait_on_one() {
    let two = "g-deferral-two-one-answered";
    let call = |c: &str| c.to_owned();
    assert_eq!(
        answer_refused(two, &fixture(two), Some("tu_x")),
        Why::AlreadyAnswered { call: call("tu_x") }
    );
    assert_eq!(
        answer_refused(two, &fixture(two), Some("zz")),
        Why::NotDeferred {
            call: call("zz"),
            in_batch: false,
            waiting: vec![call("tu_y")]
        }
    );
    assert_eq!(
        answer_refused(PENDING, &fixture(PENDING), Some("tu_2")),
        Why::NotDeferred {
            call: call("tu_2"),
            in_batch: true,
            waiting: vec![]
        }
    );
    let resumed = "g-deferral-answered-resumed";
    assert_eq!(
        answer_refused(resumed, &fixture(resumed), Some("tu_d")),
        Why::AlreadyAnswered { call: call("tu_d") }
    );
    assert_eq!(
        answer_refused(resumed, &fixture(resumed), Some("zz")),
        Why::NoPendingBatch { call: call("zz") }
    );
    // With no call named, the run's state says why none is answered.
    let (_dir, store, path) = store_with(PENDING, &fixture(PENDING));
    let before = std::fs::read(&path).unwrap();
    let req = AnswerRequest {
        run: PENDING,
        call: None,
        is_error: false,
    };
    let e = answer::prepare(&store, &req).map(|_| ()).unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let Some(r) = e.refusal().and_then(|r| r.state()) else {
        panic!("{e}")
    };
    assert_eq!(r.state, crate::state::State::Suspended);
    assert_eq!(
        answer_refused(two, &without_lines(two, &[6]), None),
        Why::WaitsOnSeveral {
            calls: vec![call("tu_x"), call("tu_y")]
        }
    );
}

#[test]
fn an_answer_is_written_once_and_only_as_checked() {
    let run = "g-deferral-waiting";
    let (_d, store, path) = fixture_store(run);
    let req = AnswerRequest {
        run,
        call: None,
        is_error: false,
    };
    // Too large: nothing written.
    let before = std::fs::read(&path).unwrap();
    let p = answer::prepare(&store, &req).unwrap();
    assert_eq!(p.call().handle, "CHG-1234");
    let e = p.commit("x".repeat(answer::MAX_CONTENT + 1)).unwrap_err();
    assert_eq!(refusal(Op::Answer, &path, &before, e), Why::TooBig);
    assert!(answer::check_size(run, answer::MAX_CONTENT).is_ok());
    // Two answers checked against the same journal: the second sees the
    // first was appended since, and writes nothing.
    let first = answer::prepare(&store, &req).unwrap();
    let second = answer::prepare(&store, &req).unwrap();
    let written = first.commit("done".into()).unwrap();
    assert_eq!(written.seq, 5);
    let line = String::from_utf8(written.line).unwrap();
    assert!(line.contains(r#""content":"done""#), "{line}");
    let after = std::fs::read(&path).unwrap();
    assert!(after.ends_with(format!("{line}\n").as_bytes()));
    let e = second.commit("again".into()).unwrap_err();
    assert_eq!(
        refusal(Op::Answer, &path, &after, e),
        Why::Changed(Change::Seq { then: 4, now: 5 })
    );
}

/// The interleaving of issue 24.6, made deterministic: the run is read
/// and checked as version 3, `upgrade` then makes it version 1 keeping
/// its seqs, and only then does the writer take the lock. It must see
/// the generation changed and refuse, not append a version-3 record.
#[test]
fn a_writer_refuses_a_journal_upgraded_since_it_was_checked() {
    let run = "g-deferral-waiting";
    let (_d, store, path) = fixture_store(run);
    let journal = store.read(run).unwrap();
    let st = store.fold(run, &journal, FoldOptions::default()).unwrap();
    assert_eq!(st.version, 3);
    store
        .upgrade(
            run,
            false,
            std::time::Duration::ZERO,
            false,
            crate::state::Ask {
                named: true,
                force: true,
            },
        )
        .unwrap();
    let upgraded = std::fs::read(&path).unwrap();
    let seen = Seen::of(Op::Answer, run, &journal, &st).unwrap();
    let Err(e) = become_writer(Op::Answer, &store, &seen) else {
        panic!("a writer of version 3 was given the upgraded journal");
    };
    assert!(e.to_string().contains("format version 3 then 1"), "{e}");
    assert_eq!(
        refusal(Op::Answer, &path, &upgraded, e),
        Why::Changed(Change::Version {
            then: 3,
            now: Some(1)
        })
    );
    // Read again, it writes as version 1.
    let journal = store.read(run).unwrap();
    let st = store.fold(run, &journal, FoldOptions::default()).unwrap();
    let seen = Seen::of(Op::Answer, run, &journal, &st).unwrap();
    assert_eq!(seen.generation.version(), 1);
    become_writer(Op::Answer, &store, &seen).unwrap();
}

#[test]
fn an_approval_is_refused_for_a_call_that_does_not_wait_on_one() {
    let call = |c: &str| c.to_owned();
    let resumed = "g-deferral-answered-resumed";
    assert_eq!(
        approve_refused(resumed, &fixture(resumed), Target::Call("tu_d")),
        Why::WaitsOnNothing {
            call: call("tu_d"),
            answered: true
        }
    );
    assert_eq!(
        approve_refused(resumed, &fixture(resumed), Target::Call("zz")),
        Why::WaitsOnNothing {
            call: call("zz"),
            answered: false
        }
    );
    assert_eq!(
        approve_refused(PENDING, &fixture(PENDING), Target::Call("zz")),
        Why::NotInBatch {
            call: call("zz"),
            batch: vec![call("tu_1"), call("tu_2")]
        }
    );
    assert_eq!(
        approve_refused(PENDING, &fixture(PENDING), Target::Call("tu_1")),
        Why::AlreadyAnswered { call: call("tu_1") }
    );
    let waiting = "g-deferral-waiting";
    assert_eq!(
        approve_refused(waiting, &fixture(waiting), Target::Call("tu_d")),
        Why::Deferred { call: call("tu_d") }
    );
    let once = "g-call-approval-after-suspend";
    assert_eq!(
        approve_refused(once, &fixture(once), Target::Call("tu_1")),
        Why::AlreadyApproved { call: call("tu_1") }
    );
    let decided = with_lines(PENDING, &[SHELL_DECISION]);
    assert_eq!(
        approve_refused(PENDING, &decided, Target::Call("tu_2")),
        Why::ToolApproved {
            tool: call("shell")
        }
    );
    assert_eq!(
        approve_refused(PENDING, &decided, Target::Tool("shell")),
        Why::ToolApproved {
            tool: call("shell")
        }
    );
    assert_eq!(
        approve_refused(PENDING, &fixture(PENDING), Target::Tool("a\u{7}")),
        Why::NotAToolName {
            tool: call("a\u{7}")
        }
    );
}

#[test]
fn an_approval_is_refused_for_a_run_not_suspended_on_one() {
    // A call still to run in a run that ended in an error: an approval
    // would reopen it.
    let crashed = "g-pending-crash";
    const ERROR: &str = r#"{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"error"}}"#;
    let (_dir, store, path) = store_with(crashed, &with_lines(crashed, &[ERROR]));
    let before = std::fs::read(&path).unwrap();
    let e = approve(
        &store,
        &ApproveRequest {
            run: crashed,
            target: Target::Call("tu_2"),
        },
    )
    .unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let Some(r) = e.refusal().and_then(|r| r.state()) else {
        panic!("{e}")
    };
    assert_eq!(
        r.state,
        crate::state::State::Ended(crate::record::Reason::Error)
    );
    // A tool the run never called: a standing approval of it approves
    // nothing the run asked for.
    assert_eq!(
        approve_refused(crashed, &fixture(crashed), Target::Tool("other")),
        Why::UnknownTool {
            tool: "other".into(),
            tools: vec!["shell".into()]
        }
    );
    // Open, with no call of the tool left to run: nothing to approve.
    const ANSWERED: &str = r#"{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"tu_2","result":{"tool_use_id":"tu_2","content":"ok"}}}"#;
    assert_eq!(
        approve_refused(
            crashed,
            &with_lines(crashed, &[ANSWERED]),
            Target::Tool("shell")
        ),
        Why::NotWaiting {
            open: Open::NoTerminal,
            tool: Some("shell".into())
        }
    );
    let claimed = with_lines(PENDING, &[CLAIM]);
    const RESULT_5: &str = r#"{"seq":6,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"tu_2","result":{"tool_use_id":"tu_2","content":"ok"}}}"#;
    let claimed = format!("{claimed}{RESULT_5}\n");
    assert_eq!(
        approve_refused(PENDING, &claimed, Target::Tool("shell")),
        Why::NotWaiting {
            open: Open::After {
                seq: 5,
                kind: Some("claim")
            },
            tool: Some("shell".into())
        }
    );
}

#[test]
fn an_approval_is_written_for_a_call_that_waits() {
    // Stopped mid-batch with no terminal: the call still waits.
    let run = "g-pending-crash";
    let (_d, store, _) = fixture_store(run);
    let done = approve(
        &store,
        &ApproveRequest {
            run,
            target: Target::Call("tu_2"),
        },
    )
    .unwrap();
    assert_eq!(
        (done.tool.as_str(), done.call.as_deref()),
        ("shell", Some("tu_2"))
    );
    assert_eq!(done.written.seq, 4);
    assert_eq!(
        state(&store, run).call("tu_2"),
        CallState::Approved {
            tool: "shell",
            standing: false
        }
    );
    let (_d, store, _) = fixture_store(PENDING);
    let done = approve(
        &store,
        &ApproveRequest {
            run: PENDING,
            target: Target::Tool("shell"),
        },
    )
    .unwrap();
    assert_eq!((done.tool.as_str(), done.call), ("shell", None));
    assert_eq!(
        state(&store, PENDING).call("tu_2"),
        CallState::Approved {
            tool: "shell",
            standing: true
        }
    );
}

/// The words an operator reads, as the binary printed them before the
/// rules moved here; ids and names from the journal escaped.
#[test]
fn a_refusal_reads_as_before() {
    let says = |why: Why| {
        super::Refusal {
            op: Some(Op::Answer),
            run: "r".into(),
            why,
            remedy: None,
            calls: Vec::new(),
        }
        .to_string()
    };
    assert_eq!(
        says(Why::AlreadyAnswered {
            call: "tu\n1".into()
        }),
        "run r: tool call tu\\n1 is already answered; nothing was written"
    );
    assert_eq!(
        says(Why::Changed(Change::Version {
            then: 3,
            now: None
        })),
        "run r: the journal changed while it was being checked (format version 3 then unreadable); nothing was written"
    );
    assert_eq!(
        says(Why::WaitsOnSeveral {
            calls: vec!["a".into(), "b\u{1b}".into()]
        }),
        "run r waits on 2 deferred calls (a, b\\u{1b}); name the one to answer"
    );
    assert_eq!(
        says(Why::NotAToolName { tool: "\t".into() }),
        "\"\\\\t\" is not a tool name (1 to 256 bytes, no control characters); nothing was written"
    );
    assert_eq!(
        says(Why::NotWaiting {
            open: Open::After {
                seq: 7,
                kind: Some("claim")
            },
            tool: None
        }),
        "run r is not suspended: records follow its last terminal (seq 7, claim), and no call waits unanswered in a pending batch (it is running, or it stopped with nothing to approve); nothing was written"
    );
}
