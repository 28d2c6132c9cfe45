//! The async example front end (`journal/examples/answer_async.rs`), run
//! as a user runs it, against a real nats-server: it lists the call that
//! waits on a person, answers it inside the runtime it owns, and what it
//! wrote is what the blocking store reads; a second answer is refused.

use crate::nats_support::NatsServer;
use journal::store::Appender;
use std::path::PathBuf;
use std::process::Command;

/// The example's binary, built beside this test binary by `cargo test`
/// (target/<profile>/examples/).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().unwrap().parent().unwrap();
    let bin = profile.join("examples").join(name);
    assert!(
        bin.exists(),
        "{} is not built: cargo test builds the examples before the tests",
        bin.display()
    );
    bin
}

#[test]
fn the_async_example_answers_a_deferral_inside_its_own_runtime() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let store = srv.store("SESSIONS");
    let run = "g-deferral-waiting";
    let text = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/agent-journals/v1/g-deferral-waiting.json"),
    )
    .unwrap();
    let mut app = store.create(run).unwrap();
    for (i, l) in text
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        assert!(app.append_raw(i as u64 + 1, l).unwrap());
    }
    drop(app);
    let store = journal::Store::from(store.with_hold(std::time::Duration::ZERO));
    let before = store.read(run).unwrap().last_seq();
    let call = match store.state(run).unwrap() {
        journal::state::State::WaitingAnswer => {
            let st = journal::fold_with(
                store.read(run).unwrap().records(),
                journal::FoldOptions::inspect(),
            )
            .unwrap();
            st.pending.unwrap().open_deferrals[0].tool_use_id.clone()
        }
        s => panic!("the run waits on an answer, not {s:?}"),
    };
    let bin = example("answer_async");
    let url = srv.settings().servers[0].clone();

    let listed = Command::new(&bin)
        .args([&url, "SESSIONS"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let out = String::from_utf8(listed.stdout).unwrap();
    assert!(out.contains(&format!("{run} {call} ")), "{out}");

    let answered = Command::new(&bin)
        .args([&url, "SESSIONS", run, &call, "approved by hand"])
        .output()
        .unwrap();
    assert!(answered.status.success(), "{answered:?}");
    let out = String::from_utf8(answered.stdout).unwrap();
    assert_eq!(
        out,
        format!("answered {call} in run {run} (seq {})\n", before + 1)
    );
    // What the blocking store reads: one record more, the answer, and the
    // run ready to resume.
    let journal = store.read(run).unwrap();
    assert_eq!(journal.last_seq(), before + 1);
    let last = journal.entries.last().unwrap();
    let raw = String::from_utf8_lossy(&last.raw);
    assert!(
        raw.contains("approved by hand") && raw.contains(&call),
        "{raw}"
    );
    assert_eq!(store.state(run).unwrap(), journal::state::State::Ready);

    // The same answer again: refused by the same check, nothing written.
    let again = Command::new(&bin)
        .args([&url, "SESSIONS", run, &call, "twice"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    let err = String::from_utf8(again.stderr).unwrap();
    assert!(
        err.starts_with("answer_async: run g-deferral-waiting"),
        "{err}"
    );
    assert_eq!(store.read(run).unwrap().last_seq(), before + 1);
}
