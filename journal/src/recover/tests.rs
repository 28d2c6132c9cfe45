//! The plan, per damage kind, on journals the agent wrote (both
//! generations): what is kept, written and lost, and that the agent's
//! fold takes the result (issue 35: recover keeps every record the agent
//! reads, whatever `verify`'s schemas say of it).

use super::*;
use crate::verify::{verify_bytes, Severity};

const MULTI_V1: &[u8] =
    include_bytes!("../../../testdata/agent-journals/v1/g-multi-iteration.json");
const MULTI_V3: &[u8] =
    include_bytes!("../../../testdata/agent-journals/v3/g-multi-iteration.json");
const BATCH_V1: &[u8] = include_bytes!("../../../testdata/agent-journals/v1/g-tool-batch.json");
const BATCH_V3: &[u8] = include_bytes!("../../../testdata/agent-journals/v3/g-tool-batch.json");

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

fn now() -> Time {
    Time::parse("2026-12-02T08:00:00Z").unwrap()
}

fn run_of(b: &[u8]) -> String {
    match Record::decode(&lines(b)[0]).unwrap().payload {
        Some(Payload::Meta(m)) => m.run_id,
        _ => unreachable!(),
    }
}

/// Plan `bytes`; the result folds, and verifies without an error but for
/// what the agent reads anyway (a key its schemas close, a schema's type).
fn recovered(bytes: &[u8]) -> Plan {
    let run = run_of(bytes);
    let p = plan(&run, bytes, now()).unwrap();
    let new = p.journal();
    let report = verify_bytes(&run, &new, None);
    let errors: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .filter(|f| {
            !matches!(
                f.code,
                crate::verify::Code::ExtraPayload | crate::verify::Code::Schema
            )
        })
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let records: Vec<Record> = lines(&new)
        .iter()
        .map(|l| Record::decode(l).unwrap())
        .collect();
    for (r, seq) in records.iter().zip(1u64..) {
        assert_eq!(r.seq, seq);
    }
    crate::fold(records.iter()).unwrap();
    p
}

fn damage(b: &[u8], at: usize, with: &[u8]) -> Vec<u8> {
    let mut l = lines(b);
    l[at] = with.to_vec();
    join(&l)
}

#[test]
fn a_whole_journal_has_nothing_to_recover() {
    for j in [MULTI_V1, MULTI_V3, BATCH_V1, BATCH_V3] {
        let p = recovered(j);
        assert!(!p.changes(), "{:#?}", p.findings);
        assert_eq!(p.journal(), j);
        assert_eq!(p.kept, p.records.len() as u64);
        assert_eq!(p.kept, p.intact);
    }
}

#[test]
fn a_garbage_line_in_place_of_a_result_is_answered_with_an_error_result() {
    for (j, v1) in [(MULTI_V1, true), (MULTI_V3, false)] {
        // Line 5 is seq 5, the result for tu_01.
        let p = recovered(&damage(j, 4, b"#### not a record ####"));
        assert_eq!((p.kept, p.intact), (26, 26));
        assert!(p.renumbered.is_empty(), "{:?}", p.renumbered);
        assert_eq!(p.made.len(), 1);
        assert_eq!((p.made[0].seq, p.made[0].call.as_str()), (5, "tu_01"));
        let made = Record::decode(&p.records[4]).unwrap();
        let Some(Payload::ToolResult(t)) = &made.payload else {
            panic!("{made:?}")
        };
        assert!(t.result.is_error);
        assert!(t.result.content.contains("lost to corruption"));
        assert_eq!(made.time.is_some(), v1);
        assert_eq!(t.kind.is_empty(), !v1);
        // Every other record is copied byte for byte.
        let old = lines(j);
        for i in (0..27).filter(|i| *i != 4) {
            assert_eq!(p.records[i], old[i]);
        }
        let f = &p.findings[0];
        assert_eq!((f.line, f.seq, f.damage), (5, Some(5), Damage::Garbage));
        assert!(
            f.loses.contains("tu_01 is answered with an error result"),
            "{}",
            f.loses
        );
        assert_eq!(p.unreadable, b"#### not a record ####\n");
    }
}

#[test]
fn a_lost_assistant_turn_drops_the_results_after_it() {
    for j in [BATCH_V1, BATCH_V3] {
        let p = recovered(&damage(j, 1, b"\x00\x00\x00\x00"));
        // Meta, the second assistant turn and the terminal are kept; the
        // two results of the lost turn are orphans.
        assert_eq!((p.kept, p.intact), (3, 5));
        assert!(p.made.is_empty());
        assert_eq!(p.renumbered, [(5, 2), (6, 3)]);
        let hole = p.findings.iter().find(|f| f.damage == Damage::Nul).unwrap();
        assert_eq!(hole.seq, Some(2));
        assert!(
            hole.loses.contains("2 record(s) after it"),
            "{}",
            hole.loses
        );
        let orphans = p
            .findings
            .iter()
            .filter(|f| f.damage == Damage::Orphan)
            .count();
        assert_eq!(orphans, 2);
    }
}

#[test]
fn a_nul_block_across_lines_loses_what_it_covers() {
    // A zeroed block from the middle of line 4 to the middle of line 6:
    // seqs 4 (assistant), 5 (its result) and 6 (the next assistant) are
    // gone. Seq 7 (the result of 6) lands in the turn still open (seq
    // 2's), which the agent's fold takes (an unknown-tool-use warning):
    // kept, as the agent reads it.
    let mut b = MULTI_V1.to_vec();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            b.iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let (from, to) = (starts[3] + 40, starts[5] + 40);
    b[from..to].fill(0);
    let p = recovered(&b);
    assert_eq!((p.kept, p.intact), (24, 24));
    assert!(p.made.is_empty());
    assert_eq!(p.renumbered.first(), Some(&(7, 4)));
    assert_eq!(p.renumbered.len(), 21);
    assert!(p.findings.iter().any(|f| f.damage == Damage::Nul));
    assert_eq!(
        p.findings
            .iter()
            .filter(|f| f.damage == Damage::Missing)
            .count(),
        1,
        "seqs 5 and 6, said as one: {:#?}",
        p.findings
    );
}

#[test]
fn a_line_split_in_two_is_joined_and_nothing_is_lost() {
    let mut l = lines(MULTI_V1);
    let second = l[4].split_off(30);
    l.insert(5, second);
    let p = recovered(&join(&l));
    assert_eq!(p.journal(), MULTI_V1);
    assert_eq!((p.kept, p.intact), (27, 27));
    assert_eq!(p.findings.len(), 1);
    assert_eq!(p.findings[0].damage, Damage::Split);
    assert!(p.findings[0].harmless);
}

#[test]
fn records_glued_by_a_lost_newline_are_both_read() {
    let mut l = lines(MULTI_V3);
    let next = l.remove(5);
    l[4].extend_from_slice(&next);
    let p = recovered(&join(&l));
    assert_eq!(p.journal(), MULTI_V3);
    assert_eq!(p.findings[0].damage, Damage::Glued);
}

#[test]
fn a_torn_write_retried_whole_loses_nothing() {
    let mut l = lines(MULTI_V1);
    let torn = l[4][..50].to_vec();
    l[4] = [torn, l[4].clone()].concat();
    let p = recovered(&join(&l));
    assert_eq!(p.journal(), MULTI_V1);
    assert!(p.findings.iter().all(|f| f.harmless), "{:#?}", p.findings);
    assert!(p.made.is_empty());
}

#[test]
fn a_record_stored_twice_is_kept_once() {
    let mut l = lines(MULTI_V1);
    let again = l[4].clone();
    l.insert(5, again);
    let p = recovered(&join(&l));
    assert_eq!(p.journal(), MULTI_V1);
    assert_eq!((p.kept, p.intact), (27, 27));
    assert_eq!(p.findings[0].damage, Damage::Duplicate);
}

#[test]
fn a_garbage_line_between_consecutive_seqs_loses_nothing() {
    let mut l = lines(MULTI_V1);
    l.insert(5, b"garbage".to_vec());
    let p = recovered(&join(&l));
    assert_eq!(p.journal(), MULTI_V1);
    assert!(p.findings[0].harmless);
    assert_eq!(p.unreadable, b"garbage\n");
}

#[test]
fn a_missing_result_is_answered_where_it_was_and_nothing_is_renumbered() {
    let mut l = lines(MULTI_V3);
    l.remove(4);
    let p = recovered(&join(&l));
    assert_eq!((p.kept, p.intact), (26, 26));
    assert!(p.renumbered.is_empty());
    assert_eq!(p.made.len(), 1);
    assert_eq!(p.made[0].seq, 5);
    let f = p
        .findings
        .iter()
        .find(|f| f.damage == Damage::Missing)
        .unwrap();
    assert_eq!(f.seq, Some(5));
}

#[test]
fn a_missing_assistant_turn_renumbers_what_follows() {
    let mut l = lines(MULTI_V1);
    l.remove(5);
    let p = recovered(&join(&l));
    // Seq 6 is gone; seq 7 (its result) lands in the turn still open
    // (seq 4's), which the agent's fold takes: kept; 7.. become 6..
    assert_eq!((p.kept, p.intact), (26, 26));
    assert_eq!(p.renumbered.first(), Some(&(7, 6)));
    assert_eq!(p.renumbered.last(), Some(&(27, 26)));
    assert!(p.made.is_empty());
}

#[test]
fn a_record_the_agent_reads_is_kept_whatever_its_schema_says() {
    // An extra top-level key: verify's closed schema refuses it, the
    // agent's decoder ignores it. Kept: nothing to recover.
    let mut l = lines(MULTI_V1);
    let bad = String::from_utf8(l[4].clone()).unwrap().replacen(
        "{\"seq\":5,",
        "{\"seq\":5,\"extra\":1,",
        1,
    );
    l[4] = bad.into_bytes();
    let p = recovered(&join(&l));
    assert!(!p.changes(), "{:#?}", p.findings);
    assert_eq!(p.journal(), join(&l));
    assert!(p.made.is_empty());
    assert_eq!((p.kept, p.intact), (27, 27));
}

#[test]
fn a_completed_run_whose_terminal_carries_a_second_payload_stays_completed() {
    // Issue 35.2: the agent's Fold reads this terminal (with a `claim`
    // beside it) as completed; recover used to drop it, leaving the run
    // open, to call the model again.
    const EXTRA: &[u8] = include_bytes!("../../../testdata/damaged/extra-payload.json");
    let v1 =
        String::from_utf8(EXTRA.to_vec())
            .unwrap()
            .replacen("\"version\":3,", "\"version\":1,", 1);
    let p = recovered(v1.as_bytes());
    assert!(!p.changes(), "{:#?}", p.findings);
    let records: Vec<Record> = lines(&p.journal())
        .iter()
        .map(|l| Record::decode(l).unwrap())
        .collect();
    let st = crate::fold(records.iter()).unwrap();
    assert!(st.completed);
    assert_eq!(
        st.status,
        crate::fold::Status::Terminal(crate::record::Reason::Completed)
    );
}

#[test]
fn a_record_the_agent_cannot_read_is_dropped_and_its_call_answered() {
    // A result whose protocol is one no agent knows, not optional: the
    // agent's fold refuses it. Dropped; its call answered with an error
    // result fisk-admin writes, since the turn closes after it.
    let mut l = lines(MULTI_V1);
    let bad = String::from_utf8(l[4].clone()).unwrap().replacen(
        "session.tool_result",
        "session.tool_outcome",
        1,
    );
    l[4] = bad.into_bytes();
    let p = recovered(&join(&l));
    assert!(p.findings.iter().any(|f| f.damage == Damage::Refused));
    assert_eq!(p.made.len(), 1);
    assert_eq!((p.kept, p.intact), (26, 27));
}

#[test]
fn a_lost_meta_record_cannot_be_recovered() {
    let bytes = damage(MULTI_V1, 0, b"\x00\x00\x00");
    assert_eq!(plan("r", &bytes, now()), Err(Cannot::NoMeta { line: 1 }));
    assert_eq!(plan("r", b"", now()), Err(Cannot::Empty));
}

#[test]
fn the_meta_record_takes_the_new_id() {
    let p = plan("other", &damage(MULTI_V1, 4, b"x"), now()).unwrap();
    let meta = Record::decode(&p.records[0]).unwrap();
    assert!(matches!(meta.payload, Some(Payload::Meta(m)) if m.run_id == "other"));
}

#[test]
fn a_seq_reused_by_another_record_is_kept_and_renumbered() {
    // A second writer appended its own seq 27 (a user turn) after the
    // terminal: both kept, the later one renumbered 28.
    let mut l = lines(MULTI_V1);
    let user = br#"{"seq":27,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[{"text":{"text":"again"}}]}}}"#;
    l.push(user.to_vec());
    let p = recovered(&join(&l));
    assert_eq!((p.kept, p.intact), (28, 28));
    assert_eq!(p.renumbered, [(27, 28)]);
    let f = p
        .findings
        .iter()
        .find(|f| f.damage == Damage::Reused)
        .unwrap();
    assert_eq!((f.line, f.seq), (28, Some(27)));
}

#[test]
fn a_refused_record_after_a_gap_is_the_one_dropped() {
    // A missing seq before a record the agent cannot read: the finding
    // names the right record.
    let mut l = lines(MULTI_V1);
    l.remove(8);
    let bad = String::from_utf8(l[11].clone()).unwrap().replacen(
        "session.tool_result",
        "session.tool_outcome",
        1,
    );
    l[11] = bad.into_bytes();
    let p = recovered(&join(&l));
    let refused = p
        .findings
        .iter()
        .find(|f| f.damage == Damage::Refused)
        .unwrap();
    assert_eq!(refused.seq, Some(13));
}

#[test]
fn a_lost_deferral_at_the_end_leaves_its_call_pending() {
    const WAITING: &[u8] =
        include_bytes!("../../../testdata/agent-journals/v1/g-deferral-waiting.json");
    // meta, assistant (tu_d), deferred (tu_d), terminal (suspended).
    let mut l = lines(WAITING);
    let deferral = String::from_utf8_lossy(&l[2]).into_owned();
    assert!(deferral.contains("session.deferred"), "{deferral}");
    // Torn: its seq, protocol and call still readable.
    l[2].truncate(deferral.find("\"tool_name\"").unwrap());
    let p = recovered(&join(&l));
    assert!(p.made.is_empty(), "{:?}", p.made);
    let f = p
        .findings
        .iter()
        .find(|f| f.damage == Damage::Garbage)
        .unwrap();
    assert!(
        f.loses.contains("no longer waits on a person"),
        "{}",
        f.loses
    );
    let st = crate::fold(
        p.records
            .iter()
            .map(|r| Record::decode(r).unwrap())
            .collect::<Vec<_>>()
            .iter(),
    )
    .unwrap();
    assert!(st.pending.is_some() && !st.waiting);
}

/// A change to a journal's lines at one line.
type Damaging = fn(&mut Vec<Vec<u8>>, usize);

/// Every journal the agent wrote (both generations), each interior line in
/// turn garbage, NULs, deleted, stored twice or split in two: the plan
/// always gives a journal that verifies without an error and folds, says
/// every intact record it drops, and loses nothing to a duplicate or a
/// split.
#[test]
fn every_line_of_every_agent_journal_damaged_in_every_way_still_recovers() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/agent-journals");
    let mut plans = 0;
    for generation in ["v1", "v3"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(generation))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        for path in names {
            let whole = std::fs::read(&path).unwrap();
            let n = lines(&whole).len();
            for at in 1..n {
                let cases: [(&str, Damaging); 5] = [
                    ("garbage", |l, at| l[at] = b"garbage".to_vec()),
                    ("nul", |l, at| l[at].fill(0)),
                    ("deleted", |l, at| {
                        l.remove(at);
                    }),
                    ("twice", |l, at| {
                        let again = l[at].clone();
                        l.insert(at, again);
                    }),
                    ("split", |l, at| {
                        let half = l[at].len() / 2;
                        let tail = l[at].split_off(half);
                        l.insert(at + 1, tail);
                    }),
                ];
                for (how, damage) in cases {
                    let mut l = lines(&whole);
                    damage(&mut l, at);
                    let what = format!("{} line {} {how}", path.display(), at + 1);
                    let p = std::panic::catch_unwind(|| recovered(&join(&l)))
                        .unwrap_or_else(|_| panic!("{what}"));
                    plans += 1;
                    // Every intact record not kept is said.
                    let dropped = p
                        .findings
                        .iter()
                        .filter(|f| matches!(f.damage, Damage::Orphan | Damage::Refused))
                        .count() as u64;
                    assert_eq!(p.intact - p.kept, dropped, "{what}: {:#?}", p.findings);
                    if matches!(how, "twice" | "split") {
                        assert_eq!(p.journal(), whole, "{what}: nothing is lost");
                    } else if how != "deleted" || at + 1 < n {
                        // (A last line deleted leaves a journal that ended
                        // one record earlier: nothing to see, nor recover.)
                        assert!(p.changes(), "{what}");
                    }
                }
            }
        }
    }
    assert!(plans > 1000, "{plans}");
}

#[test]
fn a_damaged_seq_is_put_right_by_its_neighbours() {
    // Seq 17 reads 97 (a flipped digit): renumbered, nothing lost, no
    // 80 seqs said missing.
    let mut l = lines(MULTI_V1);
    let flipped =
        String::from_utf8(l[16].clone())
            .unwrap()
            .replacen("{\"seq\":17,", "{\"seq\":97,", 1);
    l[16] = flipped.into_bytes();
    let p = recovered(&join(&l));
    assert_eq!(p.journal(), MULTI_V1);
    assert_eq!(p.renumbered, [(97, 17)]);
    assert_eq!(p.findings.len(), 1, "{:#?}", p.findings);
    assert_eq!(p.findings[0].damage, Damage::WrongSeq);
    // The meta record's own seq.
    let mut l = lines(MULTI_V3);
    l[0] = String::from_utf8(l[0].clone())
        .unwrap()
        .replacen("{\"seq\":1,", "{\"seq\":7,", 1)
        .into_bytes();
    assert_eq!(recovered(&join(&l)).journal(), MULTI_V3);
}

#[test]
fn a_huge_gap_is_said_once_and_does_not_exhaust_memory() {
    let mut l = lines(MULTI_V1);
    let last = l.len() - 1;
    l[last] = String::from_utf8(l[last].clone())
        .unwrap()
        .replacen("{\"seq\":27,", "{\"seq\":18446744073709551615,", 1)
        .into_bytes();
    let p = recovered(&join(&l));
    assert_eq!(p.renumbered, [(u64::MAX, 27)]);
    // Said once: the first MAX_MISSING seqs, then the rest.
    let missing: Vec<_> = p
        .findings
        .iter()
        .filter(|f| f.damage == Damage::Missing)
        .collect();
    assert_eq!(missing.len(), 2, "{missing:#?}");
    assert!(
        missing[0]
            .loses
            .starts_with("seqs 27 to 1049: no line holds them"),
        "{}",
        missing[0].loses
    );
    assert!(
        missing[1]
            .loses
            .contains("seqs 1050 to 18446744073709551614"),
        "{}",
        missing[1].loses
    );
}

#[test]
fn a_stray_nul_in_garbage_is_garbage_and_a_zeroed_block_is_a_nul_block() {
    assert!(!read::is_nul_block(b"{\"seq\":4,\x00 broken"));
    assert!(!read::is_nul_block(b"\x00\x00 garbage here"));
    assert!(read::is_nul_block(b"\x00\x00\x00\x00"));
    assert!(read::is_nul_block(
        b"{\"seq\":4,\"protocol\":\"io.ch\x00\x00\x00\x00\x00\x00\x00\x00"
    ));
    assert!(!read::is_nul_block(b"plain garbage"));
    for j in [BATCH_V1, BATCH_V3] {
        let p = recovered(&damage(j, 1, b"{\"seq\":2,\x00not a record"));
        let hole = p.findings.iter().find(|f| f.seq == Some(2)).unwrap();
        assert_eq!(hole.damage, Damage::Garbage, "{hole:?}");
    }
}
