//! One claim per finding code [`verify_bytes`] reports: the smallest
//! journal that produces it, and the code's severity, line and byte offset.

use super::{verify_bytes, Code, Finding, RecordCheck, Severity};
use crate::schema::Violation;

const P: &str = "io.choria.fisk-ai.v1.session.";

/// A record line (with its newline) of `kind` with payload `body`; `more`
/// goes between the protocol and the payload (`,"time":..`).
fn rec(seq: u64, kind: &str, more: &str, body: &str) -> String {
    format!("{{\"seq\":{seq},\"protocol\":\"{P}{kind}\"{more},\"{kind}\":{body}}}\n")
}

fn meta_of(seq: u64, version: i64, run_id: &str, extra: &str) -> String {
    rec(
        seq,
        "meta",
        "",
        &format!(
            r#"{{"version":{version},"run_id":"{run_id}","created":"2026-09-22T09:14:03Z","fingerprint":{{}},"prompt":"go"{extra}}}"#
        ),
    )
}

fn meta() -> String {
    meta_of(1, 1, "r", "")
}

/// An assistant turn asking for tool `id`, with `input` and `in_tokens`.
fn turn(seq: u64, id: &str, input: &str, in_tokens: i64) -> String {
    rec(
        seq,
        "assistant",
        "",
        &format!(
            r#"{{"iteration":0,"message":{{"role":"assistant","content":[{{"tool_use":{{"id":"{id}","name":"t","input":{input}}}}}]}},"stop_reason":"tool_use","in_tokens":{in_tokens},"out_tokens":1,"cache_read_tokens":0,"cache_create_tokens":0}}"#
        ),
    )
}

fn result(seq: u64, id: &str) -> String {
    rec(
        seq,
        "tool_result",
        "",
        &format!(r#"{{"tool_use_id":"{id}","result":{{"tool_use_id":"{id}","content":"ok"}}}}"#),
    )
}

fn user(seq: u64, more: &str) -> String {
    rec(
        seq,
        "user",
        more,
        r#"{"message":{"role":"user","content":[{"text":{"text":"hi"}}]}}"#,
    )
}

fn findings(journal: &str, check: Option<&dyn RecordCheck>) -> Vec<Finding> {
    verify_bytes("r", journal.as_bytes(), check).findings
}

/// The one finding of `code` in `journal`'s report: its severity, line
/// and byte offset.
fn claim(journal: &str, code: Code) -> (Severity, Option<usize>, Option<u64>) {
    claim_with(journal, None, code)
}

fn claim_with(
    journal: &str,
    check: Option<&dyn RecordCheck>,
    code: Code,
) -> (Severity, Option<usize>, Option<u64>) {
    let all = findings(journal, check);
    let of: Vec<&Finding> = all.iter().filter(|f| f.code == code).collect();
    assert_eq!(of.len(), 1, "one {code} in {all:#?}");
    let f = of.first().unwrap_or_else(|| panic!("no {code}"));
    assert_eq!(f.severity, code.severity());
    (f.severity, f.line, f.offset)
}

use Severity::{Error, Info, Warning};

/// Where line `n` (1-based) of `journal` starts.
fn at(journal: &str, n: usize) -> Option<u64> {
    let starts = std::iter::once(0).chain(journal.match_indices('\n').map(|(i, _)| i + 1));
    starts.map(|i| i as u64).nth(n - 1)
}

#[test]
fn a_clean_journal_has_no_findings() {
    let j = meta() + &turn(2, "a", "{}", 1) + &result(3, "a");
    assert_eq!(findings(&j, None), []);
}

#[test]
fn torn_tail_a_final_line_cut_short() {
    let j = meta() + "{\"seq\":2";
    assert_eq!(claim(&j, Code::TornTail), (Warning, Some(2), at(&j, 2)));
}

#[test]
fn unterminated_final_record_a_final_record_without_its_newline() {
    let j = meta();
    let j = j.trim_end();
    assert_eq!(
        claim(j, Code::UnterminatedFinalRecord),
        (Warning, Some(1), Some(0))
    );
}

#[test]
fn garbage_final_line_a_terminated_final_line_that_does_not_parse() {
    let j = meta() + "garbage\n";
    assert_eq!(
        claim(&j, Code::GarbageFinalLine),
        (Warning, Some(2), at(&j, 2))
    );
}

#[test]
fn interior_corruption_a_line_before_the_last_that_does_not_parse() {
    let j = meta() + "garbage\n" + &user(3, "");
    assert_eq!(
        claim(&j, Code::InteriorCorruption),
        (Error, Some(2), at(&j, 2))
    );
    assert!(
        findings(&j, None).iter().all(|f| f.code != Code::SeqGap),
        "the gap it leaves is its own"
    );
}

#[test]
fn empty_journal_no_records() {
    assert_eq!(claim("", Code::EmptyJournal), (Error, None, None));
    assert_eq!(claim("garbage\n", Code::EmptyJournal), (Error, None, None));
}

#[test]
fn no_meta_the_first_record_is_not_a_meta_record() {
    let j = user(1, "");
    assert_eq!(claim(&j, Code::NoMeta), (Error, Some(1), Some(0)));
}

#[test]
fn meta_seq_the_meta_record_is_not_seq_1() {
    let j = meta_of(2, 1, "r", "");
    assert_eq!(claim(&j, Code::MetaSeq), (Error, Some(1), Some(0)));
}

#[test]
fn duplicate_meta_a_second_meta_record() {
    let j = meta() + &meta_of(2, 1, "r", "");
    assert_eq!(claim(&j, Code::DuplicateMeta), (Error, Some(2), at(&j, 2)));
}

#[test]
fn seq_not_increasing_a_seq_at_or_below_the_one_before() {
    let j = meta() + &user(1, "");
    assert_eq!(
        claim(&j, Code::SeqNotIncreasing),
        (Error, Some(2), at(&j, 2))
    );
}

#[test]
fn seq_gap_records_lost_between_two() {
    let j = meta() + &user(3, "");
    assert_eq!(claim(&j, Code::SeqGap), (Error, Some(2), at(&j, 2)));
}

#[test]
fn version_3_an_august_journal() {
    let j = meta_of(1, 3, "r", "");
    assert_eq!(claim(&j, Code::VersionThree), (Warning, Some(1), Some(0)));
}

#[test]
fn mixed_generation_an_august_journal_holding_a_version_1_field_once() {
    let time = r#","time":"2026-09-22T09:15:00Z""#;
    let j = meta_of(1, 3, "r", "") + &user(2, time) + &user(3, time);
    assert_eq!(
        claim(&j, Code::MixedGeneration),
        (Warning, Some(2), at(&j, 2))
    );
}

#[test]
fn version_newer_a_format_after_the_agents() {
    let j = meta_of(1, 4, "r", "");
    assert_eq!(claim(&j, Code::VersionNewer), (Error, Some(1), Some(0)));
}

#[test]
fn version_older_a_format_no_agent_resumes() {
    let j = meta_of(1, 2, "r", "");
    assert_eq!(claim(&j, Code::VersionOlder), (Warning, Some(1), Some(0)));
}

#[test]
fn unknown_protocol_one_not_marked_optional() {
    let j = meta() + "{\"seq\":2,\"protocol\":\"io.example.x\",\"x\":{}}\n";
    assert_eq!(
        claim(&j, Code::UnknownProtocol),
        (Error, Some(2), at(&j, 2))
    );
}

#[test]
fn skipped_optional_an_unknown_protocol_marked_optional() {
    let j = meta() + "{\"seq\":2,\"protocol\":\"io.example.x\",\"optional\":true,\"x\":{}}\n";
    assert_eq!(claim(&j, Code::SkippedOptional), (Info, Some(2), at(&j, 2)));
}

#[test]
fn unknown_field_once_at_the_first_record_holding_one() {
    let j = meta_of(1, 1, "r", r#","zz":1"#) + &meta_of(2, 1, "r", r#","aa":1"#);
    assert_eq!(claim(&j, Code::UnknownField), (Info, Some(1), Some(0)));
    let f = findings(&j, None);
    let said = f.iter().find(|f| f.code == Code::UnknownField);
    assert!(
        said.is_some_and(|f| f.message.ends_with("meta.aa, meta.zz")),
        "sorted, all of them: {said:?}"
    );
}

#[test]
fn missing_payload_a_known_protocol_without_its_payload() {
    let j = meta() + &format!("{{\"seq\":2,\"protocol\":\"{P}user\"}}\n");
    assert_eq!(claim(&j, Code::MissingPayload), (Error, Some(2), at(&j, 2)));
}

#[test]
fn extra_payload_a_top_level_key_no_record_has() {
    let j = meta() + &user(2, r#","bogus":1"#);
    assert_eq!(claim(&j, Code::ExtraPayload), (Error, Some(2), at(&j, 2)));
}

#[test]
fn orphan_result_a_result_with_no_open_turn() {
    let j = meta() + &result(2, "a");
    assert_eq!(claim(&j, Code::OrphanResult), (Error, Some(2), at(&j, 2)));
    let closed = meta() + &turn(2, "a", "{}", 1) + &user(3, "") + &result(4, "a");
    assert_eq!(
        claim(&closed, Code::OrphanResult),
        (Error, Some(4), at(&closed, 4)),
        "a user record closes the turn"
    );
}

#[test]
fn unknown_tool_use_a_result_for_a_call_the_turn_did_not_make() {
    let j = meta() + &turn(2, "a", "{}", 1) + &result(3, "b");
    assert_eq!(
        claim(&j, Code::UnknownToolUse),
        (Warning, Some(3), at(&j, 3))
    );
}

#[test]
fn duplicate_result_a_second_result_for_one_call() {
    let j = meta() + &turn(2, "a", "{}", 1) + &result(3, "a") + &result(4, "a");
    assert_eq!(
        claim(&j, Code::DuplicateResult),
        (Warning, Some(4), at(&j, 4))
    );
}

/// A check that finds every record breaks its schema, once at the root
/// and once at `seq`.
struct Refuse;

impl RecordCheck for Refuse {
    fn check(&self, _: &serde_json::Value) -> Vec<Violation> {
        let mut at_seq = Violation::plain(None, "wrong".into());
        at_seq.instance_path = "/seq".into();
        vec![Violation::plain(None, "refused".into()), at_seq]
    }
}

#[test]
fn schema_a_violation_not_covered_by_a_structural_finding() {
    let j = meta();
    let all = findings(&j, Some(&Refuse));
    let schema: Vec<_> = all.iter().filter(|f| f.code == Code::Schema).collect();
    assert_eq!(schema.len(), 2, "{all:#?}");
    assert!(schema
        .iter()
        .all(|f| (f.severity, f.line, f.offset) == (Error, Some(1), Some(0))));
    let j = meta_of(2, 1, "r", "");
    assert_eq!(
        claim_with(&j, Some(&Refuse), Code::Schema),
        (Error, Some(1), Some(0)),
        "the meta-seq finding covers the violation at /seq"
    );
}

#[test]
fn run_id_mismatch_the_meta_record_names_another_run() {
    let j = meta_of(1, 1, "other", "");
    assert_eq!(claim(&j, Code::RunIdMismatch), (Error, Some(1), Some(0)));
}

#[test]
fn open_deferrals_a_run_waiting_on_deferred_calls() {
    let j = meta()
        + &turn(2, "d", "{}", 1)
        + &rec(3, "deferred", "", r#"{"tool_use_id":"d","tool_name":"t"}"#);
    assert_eq!(claim(&j, Code::OpenDeferrals), (Info, None, None));
}

#[test]
fn fold_refusals_are_explained_by_an_error_finding_first() {
    // The fold finding is a backstop: each way the fold refuses a journal
    // is an error finding above, and then the fold's is not repeated.
    let refused = [
        user(1, ""),
        meta() + &user(1, ""),
        meta() + &meta_of(2, 1, "r", ""),
        meta() + &result(2, "a"),
        meta() + "{\"seq\":2,\"protocol\":\"io.example.x\",\"x\":{}}\n",
        meta() + &format!("{{\"seq\":2,\"protocol\":\"{P}user\"}}\n"),
    ];
    for j in refused {
        let all = findings(&j, None);
        assert!(all.iter().any(|f| f.severity == Error), "{j}");
        assert!(all.iter().all(|f| f.code != Code::Fold), "{all:#?}");
    }
}

#[test]
fn duplicate_key_a_repeated_key_in_a_raw_value() {
    let j = meta() + &turn(2, "a", r#"{"k":1,"k":2}"#, 1);
    assert_eq!(claim(&j, Code::DuplicateKey), (Warning, Some(2), at(&j, 2)));
}

#[test]
fn invalid_utf8_a_lone_surrogate_in_a_raw_value() {
    let j = meta() + &turn(2, "a", r#"{"k":"\ud800"}"#, 1);
    assert_eq!(claim(&j, Code::InvalidUtf8), (Warning, Some(2), at(&j, 2)));
}

#[test]
fn counter_overflow_once_at_the_record_whose_tokens_pass_i64_max() {
    let j =
        meta() + &turn(2, "a", "{}", i64::MAX) + &turn(3, "b", "{}", 1) + &turn(4, "c", "{}", 1);
    assert_eq!(
        claim(&j, Code::CounterOverflow),
        (Warning, Some(3), at(&j, 3))
    );
}

#[test]
fn a_records_findings_come_together_in_the_checks_order() {
    // Line 3: seq 2 again, then a call the turn did not make; line 4: an
    // extra key, then the gap the repeated seq left.
    let j = meta() + &turn(2, "a", "{}", 1) + &result(2, "b") + &user(4, r#","bogus":1"#);
    let codes: Vec<(Code, Option<usize>)> = findings(&j, None)
        .iter()
        .map(|f| (f.code, f.line))
        .collect();
    assert_eq!(
        codes,
        [
            (Code::SeqNotIncreasing, Some(3)),
            (Code::UnknownToolUse, Some(3)),
            (Code::ExtraPayload, Some(4)),
            (Code::SeqGap, Some(4)),
        ]
    );
}
