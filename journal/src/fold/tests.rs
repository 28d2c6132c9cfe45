use super::*;

#[test]
fn check_append_classifies_duplicate_next_and_gap() {
    assert_eq!(check_append(5, 3), Append::Duplicate);
    assert_eq!(check_append(5, 5), Append::Duplicate);
    assert_eq!(check_append(5, 6), Append::Next);
    assert_eq!(check_append(5, 7), Append::Gap);
    assert_eq!(check_append(0, 1), Append::Next);
}

#[test]
fn empty_input_is_an_error() {
    assert_eq!(fold(std::iter::empty::<Record>()), Err(FoldError::Empty));
}

const P: &str = "io.choria.fisk-ai.v1.session.";

/// Records from `(seq, kind, payload JSON)`, with an optional `time`.
fn recs(items: &[(u64, &str, &str)]) -> Vec<Record> {
    items
        .iter()
        .map(|(seq, kind, body)| {
            let (time, body) = match body.strip_prefix('@') {
                Some(rest) => {
                    let (t, b) = rest.split_once(' ').unwrap_or((rest, "{}"));
                    (format!(",\"time\":\"{t}\""), b)
                }
                None => (String::new(), *body),
            };
            let optional = if kind.starts_with("x-") {
                ",\"optional\":true"
            } else {
                ""
            };
            let line = format!(
                "{{\"seq\":{seq},\"protocol\":\"{P}{kind}\"{time}{optional},\"{kind}\":{body}}}"
            );
            Record::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
        })
        .collect()
}

fn meta(version: i64) -> String {
    format!(
        r#"{{"version":{version},"run_id":"r","created":"2026-09-22T09:14:03Z","fingerprint":{{}},"prompt":"go"}}"#
    )
}

fn turn(ids: &[&str]) -> String {
    let blocks: Vec<String> = ids
        .iter()
        .map(|id| format!(r#"{{"tool_use":{{"id":"{id}","name":"t","input":{{}}}}}}"#))
        .collect();
    format!(
        r#"{{"iteration":0,"message":{{"role":"assistant","content":[{}]}},"stop_reason":"tool_use","in_tokens":10,"out_tokens":2,"cache_read_tokens":5,"cache_create_tokens":1}}"#,
        blocks.join(",")
    )
}

fn result(id: &str, extra: &str) -> String {
    format!(r#"{{"tool_use_id":"{id}","result":{{"tool_use_id":"{id}","content":"ok"}}{extra}}}"#)
}

fn st(items: &[(u64, &str, &str)]) -> RunState {
    fold(recs(items)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn rule_1_the_first_record_is_a_meta_of_version_1_or_3() {
    let m = meta(1);
    assert!(fold(recs(&[(1, "meta", &m)])).is_ok());
    let m3 = meta(3);
    assert_eq!(
        st(&[(1, "meta", &m3)]).generation,
        Some(crate::record::Generation::August)
    );
    let m2 = meta(2);
    assert_eq!(
        fold(recs(&[(1, "meta", &m2)])),
        Err(FoldError::Version { found: 2 })
    );
    assert!(fold_with(
        recs(&[(1, "meta", &m2)]),
        FoldOptions {
            any_version: true,
            until_seq: None
        }
    )
    .is_ok());
    assert_eq!(
        fold(recs(&[(1, "user", r#"{"message":{}}"#)])),
        Err(FoldError::FirstNotMeta { seq: 1 })
    );
    assert_eq!(
        fold(recs(&[(1, "meta", &m), (2, "meta", &m)])),
        Err(FoldError::SecondMeta { seq: 2 })
    );
    assert_eq!(
        fold(recs(&[(2, "meta", &m), (2, "claim", r#"{"by":"x"}"#)])),
        Err(FoldError::SeqNotIncreasing {
            seq: 2,
            previous: 2
        })
    );
}

#[test]
fn rules_2_3_and_12_prompt_turns_counters_and_context() {
    let m = meta(1);
    let t = turn(&[]);
    let s = st(&[(1, "meta", &m), (2, "assistant", &t)]);
    assert_eq!(s.messages.len(), 2, "the prompt, then the committed turn");
    assert_eq!(s.counters.llm_calls, 1);
    assert_eq!(
        (s.counters.in_tokens, s.counters.cache_read_tokens),
        (10, 5)
    );
    assert_eq!(
        s.context_tokens, 16,
        "in + cache read + cache create, last wins"
    );
    assert_eq!(
        (s.next_iteration, s.last_stop_reason.as_str()),
        (1, "tool_use")
    );
    assert_eq!(st(&[(1, "meta", &m)]).next_iteration, 0);
}

#[test]
fn rules_4_5_and_5b_results_deferrals_and_counting_by_kind() {
    let m = meta(1);
    let t = turn(&["a", "b", "c", "d", "e"]);
    let s = st(&[
        (1, "meta", &m),
        (2, "assistant", &t),
        (
            3,
            "tool_result",
            &result("a", r#","kind":"remote","dispatched":true,"remote":true"#),
        ),
        (
            4,
            "tool_result",
            &result("b", r#","kind":"mcp","dispatched":true"#),
        ),
        (5, "tool_result", &result("c", r#","kind":"mcp""#)),
        (6, "tool_result", &result("d", r#","remote":true"#)),
        (
            7,
            "deferred",
            r#"{"tool_use_id":"e","tool_name":"t","kind":"custom","dispatched":true}"#,
        ),
    ]);
    let c = &s.counters;
    assert_eq!(
        (c.tool_calls, c.remote_tool_calls, c.mcp_tool_calls),
        (4, 2, 1)
    );
    assert_eq!(
        c.tool_calls_by_kind.get("remote"),
        Some(&2),
        "a legacy remote result counts as remote"
    );
    assert_eq!(c.tool_calls_by_kind.get("mcp"), Some(&2));
    let p = s.pending.as_ref().expect("a pending turn");
    assert_eq!(p.open_deferrals.len(), 1);
    assert!(s.waiting);
    let orphan = fold(recs(&[
        (1, "meta", &m),
        (2, "tool_result", &result("a", "")),
    ]));
    assert_eq!(
        orphan,
        Err(FoldError::NoOpenTurn {
            seq: 2,
            kind: Kind::ToolResult
        })
    );
}

#[test]
fn rules_6_and_7_user_records_merge_and_commit_the_turn() {
    let m = meta(1);
    let t = turn(&["a"]);
    let u = r#"{"message":{"role":"user","content":[{"text":{"text":"more"}}]}}"#;
    let s = st(&[
        (1, "meta", &m),
        (2, "assistant", &t),
        (3, "tool_result", &result("a", "")),
        (4, "user", u),
        (5, "user", u),
    ]);
    // prompt, assistant, one user message of the result and both texts
    assert_eq!(s.messages.len(), 3);
    assert_eq!(s.messages.last().map(|m| m.blocks().len()), Some(3));
    assert_eq!(s.turns, 3, "1 + the user records");
}

#[test]
fn rules_8_and_9_approvals_revisions_claims_and_terminals() {
    let m = meta(1);
    let s = st(&[
        (1, "meta", &m),
        (2, "decision", r#"{"tool":"t"}"#),
        (3, "call_approval", r#"{"tool_use_id":"a","tool_name":"t"}"#),
        (
            4,
            "memory_revisions",
            r#"{"revisions":{"k":18446744073709551615}}"#,
        ),
        (5, "memory_revisions", r#"{"revisions":{"j":1}}"#),
        (6, "claim", r#"{"by":"w","claimed":"2026-09-22T09:14:03Z"}"#),
    ]);
    assert_eq!(s.approvals, ["t"]);
    assert_eq!(s.call_approvals.len(), 1);
    assert_eq!(
        s.memory_revisions.as_ref().map(|r| r.len()),
        Some(1),
        "newest wins, no merge"
    );
    let s = st(&[
        (1, "meta", &m),
        (2, "call_approval", r#"{"tool_use_id":"a","tool_name":"t"}"#),
        (3, "terminal", r#"{"reason":"suspended"}"#),
    ]);
    assert!(
        s.call_approvals.is_empty(),
        "a terminal spends one-shot approvals"
    );
}

#[test]
fn rule_10_unknown_records_are_skipped_only_when_optional() {
    let m = meta(1);
    let s = st(&[(1, "meta", &m), (2, "x-telemetry", "{}")]);
    assert_eq!(s.last_seq, 2);
    let line = format!("{{\"seq\":2,\"protocol\":\"{P}x-new\",\"x-new\":{{}}}}");
    let r = Record::decode(line.as_bytes()).ok();
    let refused = fold(recs(&[(1, "meta", &m)]).into_iter().chain(r));
    assert!(matches!(
        refused,
        Err(FoldError::UnknownProtocol { seq: 2, .. })
    ));
}

#[test]
fn rule_11_an_open_turn_is_committed_only_when_every_call_is_answered() {
    let m = meta(1);
    let t = turn(&["a", "b"]);
    let half = st(&[
        (1, "meta", &m),
        (2, "assistant", &t),
        (3, "tool_result", &result("b", "")),
    ]);
    let p = half.pending.as_ref().expect("pending");
    assert!(p.answered.contains("b") && !p.answered.contains("a"));
    let whole = st(&[
        (1, "meta", &m),
        (2, "assistant", &t),
        (3, "tool_result", &result("b", "")),
        (4, "tool_result", &result("a", "")),
    ]);
    assert!(whole.pending.is_none());
    assert_eq!(whole.messages.len(), 3);
}

#[test]
fn the_calls_a_suspension_names_need_an_approval_until_approved_or_answered() {
    let m = meta(1);
    let t = turn(&["a", "b, c", "d"]);
    let susp = r#"{"reason":"suspended","message":"needs approval: a (t), b, c (t); waiting on deferred call(s): d"}"#;
    let base = [
        (1, "meta", m.as_str()),
        (2, "assistant", t.as_str()),
        (3, "deferred", r#"{"tool_use_id":"d","tool_name":"t"}"#),
        (4, "terminal", susp),
    ];
    let ids = |s: &RunState| -> Vec<String> {
        s.needs_approval
            .iter()
            .map(|g| format!("{} {}", g.tool_use_id, g.tool))
            .collect()
    };
    let s = st(&base);
    assert_eq!(ids(&s), ["a t", "b, c t"], "an id with \", \" in it too");
    assert_eq!(
        (s.waiting, s.open_deferrals),
        (true, 1),
        "the agent's fields: deferrals only"
    );
    let with = |more: &[(u64, &str, &str)]| {
        let mut all = base.to_vec();
        all.extend_from_slice(more);
        ids(&st(&all))
    };
    let once = r#"{"tool_use_id":"a","tool_name":"t"}"#;
    assert_eq!(with(&[(5, "call_approval", once)]), ["b, c t"]);
    assert!(with(&[(5, "decision", r#"{"tool":"t"}"#)]).is_empty());
    assert!(with(&[(5, "decision", r#"{"tool":"other"}"#)]).len() == 2);
    let answered = result("a", "");
    assert_eq!(with(&[(5, "tool_result", &answered)]), ["b, c t"]);
    // Another tool, another reason, a terminal before the turn: none.
    for (kind, body) in [
        (
            "terminal",
            r#"{"reason":"suspended","message":"needs approval: a (exec)"}"#,
        ),
        (
            "terminal",
            r#"{"reason":"error","message":"needs approval: a (t)"}"#,
        ),
        (
            "terminal",
            r#"{"reason":"suspended","message":"interrupted by a signal"}"#,
        ),
    ] {
        assert!(with(&[(5, kind, body)]).is_empty(), "{body}");
    }
    let again = turn(&["a"]);
    assert!(
        with(&[(5, "claim", r#"{"by":"w"}"#), (6, "assistant", &again)]).is_empty(),
        "the suspension was about the turn before"
    );
}

#[test]
fn rule_13_any_record_after_the_last_terminal_reopens_the_run() {
    let m = meta(1);
    let done = st(&[
        (1, "meta", &m),
        (
            2,
            "terminal",
            "@2026-09-22T09:14:05+02:00 {\"reason\":\"completed\"}",
        ),
    ]);
    assert_eq!(
        done.status,
        Status::Terminal(crate::record::Reason::Completed)
    );
    assert_eq!(
        done.ended.map(|t| t.to_rfc3339()),
        Some("2026-09-22T09:14:05+02:00".into())
    );
    for (kind, body) in [
        ("claim", r#"{"by":"w"}"#),
        ("decision", r#"{"tool":"t"}"#),
        ("x-telemetry", "{}"),
    ] {
        let s = st(&[
            (1, "meta", &m),
            (2, "terminal", r#"{"reason":"completed"}"#),
            (3, kind, body),
        ]);
        assert_eq!(s.status, Status::Open, "{kind}");
        assert!(
            s.completed,
            "{kind}: the resume gate still sees a completed run"
        );
        assert_eq!(s.ended, None, "{kind}");
    }
    let undated = st(&[(1, "meta", &m), (2, "terminal", r#"{"reason":"budget"}"#)]);
    assert_eq!(
        (undated.status, undated.ended),
        (Status::Terminal(crate::record::Reason::Budget), None)
    );
}
