//! The run model on the agent's own journals, whole and from the tail, and
//! the table's rules that a person's act is never undone by a filter.

use super::*;
use crate::fold::{fold_with, FoldOptions};
use crate::lines::decode_all;
use crate::record::Record;
use crate::store::file::FileStore;
use crate::store::Store;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// Every journal of `testdata/agent-journals/{generation}`, by name.
fn corpus(generation: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/agent-journals")
        .join(generation);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// What each of the agent's journals is, in both generations: read by
/// hand from their records (`g-deferral-answered-unresumed` is the one the
/// operator's review saw ended by a cleanup).
fn expected(name: &str) -> &'static str {
    match name {
        "g-call-approval-after-suspend" | "g-deferral-answered-unresumed" => "ready",
        "g-deferral-two-one-answered" | "g-deferral-waiting" | "g-deferred-after-terminal" => {
            "waiting-answer"
        }
        "g-call-approval-spent" | "g-pending-suspended" | "g-provider-blocks" => "suspended",
        "g-claim-after-terminal" | "g-meta-only" | "g-pending-crash" | "g-terminal-then-more" => {
            "open"
        }
        _ => "ended",
    }
}

fn store_with(run: &str, bytes: &[u8]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.path().join(format!("{run}.json"));
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store = Store::directory(dir.path());
    (dir, store)
}

#[test]
fn the_agents_journals_stand_as_read_by_hand_whole_and_from_their_tail() {
    for generation in ["v1", "v3"] {
        for (name, bytes) in corpus(generation) {
            let (records, _) = decode_all(&bytes).unwrap();
            let st = fold_with(records.iter().map(|e| &e.record), FoldOptions::inspect()).unwrap();
            let whole = State::of_fold(&st, false, None);
            assert_eq!(whole.word(), expected(&name), "{generation}/{name}");
            let (_d, store) = store_with(&name, &bytes);
            let listed = store.summary(&name);
            assert_eq!(
                listed.state, whole,
                "{generation}/{name}: ls and show differ"
            );
        }
    }
}

#[test]
fn a_torn_or_unterminated_tail_is_damaged_and_a_locked_run_live() {
    let (name, bytes) = corpus("v1")
        .into_iter()
        .find(|(n, _)| n == "g-deferral-waiting")
        .unwrap();
    let mut torn = bytes.clone();
    torn.extend_from_slice(b"{\"seq\":5,\"protoc");
    let (_d, store) = store_with(&name, &torn);
    assert_eq!(store.summary(&name).state, State::Damaged);
    let mut unterminated = bytes.clone();
    unterminated.pop();
    let (_d, store) = store_with(&name, &unterminated);
    assert_eq!(store.summary(&name).state, State::Damaged);
    let (d, store) = store_with(&name, &bytes);
    let _lock = FileStore::new(d.path()).lock(&name).unwrap();
    assert!(matches!(
        store.summary(&name).state,
        State::Live(Holder::Lock { .. })
    ));
}

#[test]
fn a_persons_act_is_skipped_by_a_filter_and_taken_only_named_with_force() {
    let acts = [State::WaitingAnswer, State::WaitingApproval, State::Ready];
    for op in [Op::End, Op::Remove, Op::Upgrade] {
        for s in &acts {
            assert!(protected(op, s), "{op:?} {s}");
            let filter = permit(op, "r", s, Ask::default()).unwrap_err();
            assert!(filter.by_filter && filter.forcible, "{op:?} {s}");
            let forced_filter = Ask {
                named: false,
                force: true,
            };
            assert!(permit(op, "r", s, forced_filter).is_err(), "{op:?} {s}");
            let named = permit(op, "r", s, Ask::NAMED).unwrap_err();
            // In the library's words: a front end names its own flag.
            assert!(
                named
                    .to_string()
                    .contains("only when it is named and forced"),
                "{named}"
            );
            assert!(!named.to_string().contains("--"), "{named}");
            let forced = Ask {
                named: true,
                force: true,
            };
            assert_eq!(permit(op, "r", s, forced), Ok(()), "{op:?} {s}");
        }
    }
    // Nothing else is protected, and no other write is asked to skip.
    for op in Op::ALL {
        for s in [
            State::Open,
            State::Suspended,
            State::Ended(Reason::Error),
            State::Corrupt,
            State::Damaged,
        ] {
            assert!(!protected(op, &s), "{op:?} {s}");
        }
    }
}

#[test]
fn the_table_refuses_what_the_state_cannot_take_and_names_the_way() {
    let no = |op, s: &State| match rule(op, s) {
        Rule::No(w) => Some(w),
        _ => None,
    };
    assert_eq!(no(Op::Answer, &State::Ready), Some(Way::Resume));
    assert_eq!(no(Op::Answer, &State::WaitingApproval), Some(Way::Approve));
    assert_eq!(
        no(Op::Approve, &State::Ended(Reason::Completed)),
        Some(Way::Nothing)
    );
    assert_eq!(no(Op::End, &State::Suspended), Some(Way::Nothing));
    assert_eq!(no(Op::End, &State::Damaged), Some(Way::Repair));
    assert_eq!(no(Op::End, &State::Corrupt), Some(Way::Recover));
    assert_eq!(no(Op::Resume, &State::WaitingAnswer), Some(Way::Answer));
    assert_eq!(
        rule(Op::Recover, &State::Damaged),
        Rule::Forced(Way::Repair)
    );
    assert_eq!(rule(Op::Recover, &State::Open), Rule::Forced(Way::Nothing));
    assert_eq!(rule(Op::Recover, &State::Corrupt), Rule::Yes);
    assert_eq!(rule(Op::Repair, &State::Open), Rule::Idle);
    assert_eq!(rule(Op::Fork, &State::Corrupt), Rule::Yes);
    for op in Op::ALL {
        if op == Op::Fork {
            continue;
        }
        let live = State::Live(Holder::Lock { holder: None });
        assert_eq!(
            rule(op, &live),
            Rule::No(if op == Op::Restore {
                Way::Nothing
            } else {
                Way::Wait
            }),
            "{op:?}"
        );
    }
    // A refusal of a live run is the store's own error.
    let held = State::Live(Holder::Lock { holder: None });
    let e: crate::Error = permit(Op::End, "r", &held, Ask::NAMED).unwrap_err().into();
    assert!(matches!(e, crate::Error::Live { .. }), "{e}");
}

#[test]
fn a_decision_after_a_completed_run_leaves_it_ended_not_ready() {
    let (_, bytes) = corpus("v1")
        .into_iter()
        .find(|(n, _)| n == "g-decision-after-terminal")
        .unwrap();
    let (records, _) = decode_all(&bytes).unwrap();
    let st = fold_with(records.iter().map(|e| &e.record), FoldOptions::inspect()).unwrap();
    assert_eq!(st.status, crate::fold::Status::Open, "the agent's word");
    assert_eq!(
        State::of_fold(&st, false, None),
        State::Ended(Reason::Completed)
    );
    // The same decision after an error: the person acted on a run that can
    // go on.
    let text = String::from_utf8(bytes)
        .unwrap()
        .replace(r#""reason":"completed""#, r#""reason":"error""#);
    let records: Vec<Record> = text
        .lines()
        .map(|l| Record::decode(l.as_bytes()).unwrap())
        .collect();
    let st = fold_with(records.iter(), FoldOptions::inspect()).unwrap();
    assert_eq!(State::of_fold(&st, false, None), State::Ready);
}

/// `end` writes the summary the agent's runner copies onto a terminal:
/// on every terminal of the agent's own journals that carries one, the
/// fold of the records before it gives the same bytes.
#[test]
fn a_terminal_summary_is_the_agents_byte_for_byte() {
    let mut seen = 0;
    for (name, bytes) in corpus("v1") {
        let (entries, _) = decode_all(&bytes).unwrap();
        for (i, e) in entries.iter().enumerate() {
            let Some(crate::record::Payload::Terminal(t)) = &e.record.payload else {
                continue;
            };
            let Some(summary) = &t.summary else { continue };
            let before = entries[..i].iter().map(|e| &e.record);
            let st = fold_with(before, FoldOptions::inspect()).unwrap();
            assert_eq!(
                st.conversation_summary().get(),
                summary.get(),
                "{name} seq {}",
                e.record.seq
            );
            seen += 1;
        }
    }
    assert!(seen >= 5, "{seen} summaries compared");
}

/// The table as journal/FORMAT.md writes it, from [`rule`] itself.
fn table_in_markdown() -> String {
    let states = [
        State::Corrupt,
        State::Live(Holder::Lock { holder: None }),
        State::Damaged,
        State::WaitingAnswer,
        State::WaitingApproval,
        State::Ready,
        State::Suspended,
        State::Ended(Reason::Completed),
        State::Open,
    ];
    let way = |w: Way| match w {
        Way::Answer => "answer",
        Way::Approve => "approve",
        Way::Resume => "resume",
        Way::Repair => "repair",
        Way::Recover => "recover",
        Way::Wait => "wait",
        Way::Nothing => "-",
    };
    let mut out = String::from("| write |");
    for s in &states {
        out.push_str(&format!(" {} |", s.word()));
    }
    out.push_str(" absent |\n|---|");
    for _ in 0..=states.len() {
        out.push_str("---|");
    }
    out.push('\n');
    for op in Op::ALL {
        out.push_str(&format!("| `{}` |", op.word()));
        for s in &states {
            let cell = match rule(op, s) {
                Rule::Yes => "yes".to_owned(),
                Rule::Idle => "nothing to do".to_owned(),
                Rule::Forced(w) => format!("named, `--force` ({})", way(w)),
                Rule::No(w) => format!("no ({})", way(w)),
            };
            out.push_str(&format!(" {cell} |"));
        }
        // No run of the id: only a restore makes one (a fork's new id
        // must be absent too, its source not).
        out.push_str(match op {
            Op::Restore => " yes |",
            _ => " no (-) |",
        });
        out.push('\n');
    }
    out
}

#[test]
fn format_md_writes_the_table_the_code_enforces() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("FORMAT.md"))
        .unwrap();
    let table = table_in_markdown();
    assert!(
        doc.contains(&table),
        "journal/FORMAT.md's table of run states is not the code's; it is:\n{table}"
    );
}
