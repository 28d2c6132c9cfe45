//! The tail walk of SPEC 9, written once: which of a run's last records
//! `ls` reads, and SPEC 8's at-rest rule over them. Both backends feed it
//! the records they fetch, from the run's last one backwards; it decides
//! what each record means and when to stop, and does no I/O, so the file
//! summary, JetStream's per-run summary and its batched listing cannot
//! drift apart (they used to be three copies, one "step for step").

use crate::lines::Verdict;
use crate::record::{Kind, Record};

/// A run's tail read backwards, from its last record to its last assistant
/// record (or as far back as the backend goes: to the meta record, which
/// is never fed).
///
/// Invariants: the records held are newest first; once an assistant
/// record is held the walk wants nothing more; only the first record fed
/// (the run's last) may fail to decode, and is then dropped as a torn tail.
#[derive(Debug, Default)]
pub(crate) struct TailWalk {
    newest_first: Vec<Record>,
    fed: usize,
    done: bool,
    torn: bool,
}

impl TailWalk {
    pub(crate) fn new() -> TailWalk {
        TailWalk::default()
    }

    /// Feed the record before the ones fed so far (the run's last record
    /// first), or why it does not decode. A last record that does not
    /// decode is a torn tail and is dropped (SPEC 7); any other is
    /// corruption, returned. `Ok(more)`: whether the walk wants the record
    /// before this one (false once an assistant record is read).
    pub(crate) fn feed<E>(&mut self, record: Result<Record, E>) -> Result<bool, E> {
        let first = self.fed == 0;
        self.fed += 1;
        match record {
            Ok(r) => {
                self.done = r.kind() == Some(Kind::Assistant);
                self.newest_first.push(r);
            }
            // A message body or a line: either way a bad last one is
            // dropped, whether it has its newline or not.
            Err(_) if Verdict::of(false, first, true).is_dropped() => self.torn = true,
            Err(e) => return Err(e),
        }
        Ok(self.wants_more())
    }

    /// Whether the run's last record did not decode and was dropped (a
    /// torn tail).
    pub(crate) fn torn(&self) -> bool {
        self.torn
    }

    /// Whether the walk wants the record before the last one fed.
    pub(crate) fn wants_more(&self) -> bool {
        !self.done
    }

    /// The tail read, in seq order: what [`Summary::from_tail`] folds.
    ///
    /// [`Summary::from_tail`]: super::Summary::from_tail
    pub(crate) fn into_tail(mut self) -> Vec<Record> {
        self.newest_first.reverse();
        self.newest_first
    }
}

/// SPEC 8's at-rest rule, the one place it lives: a run is at rest when
/// its last record is a terminal, or follows one with only the records
/// written to a suspended run (FORMAT.md "The hold"): tool results and
/// approvals given by hand (`tool_result`, `call_approval`, `decision`)
/// and the memory revisions the agent writes as a run ends. `kinds` are
/// the run's record kinds from its last backwards (`None`: a record that
/// does not decode, which no writer at rest leaves).
pub(crate) fn at_rest(kinds: impl IntoIterator<Item = Option<Kind>>) -> bool {
    kinds.into_iter().find_map(rest_step).unwrap_or(false)
}

/// One step of [`at_rest`], reading backwards: `Some(answer)` once a
/// record settles it, `None` for a record written while suspended (look
/// at the one before).
pub(crate) fn rest_step(kind: Option<Kind>) -> Option<bool> {
    match kind {
        Some(Kind::Terminal) => Some(true),
        Some(Kind::ToolResult | Kind::CallApproval | Kind::Decision | Kind::MemoryRevisions) => {
            None
        }
        _ => Some(false),
    }
}

#[cfg(test)]
mod tests {
    use super::{at_rest, TailWalk};
    use crate::fold::Status;
    use crate::record::Kind::{self, *};
    use crate::record::{Reason, Record};
    use crate::store::{Listed, Summary};

    const P: &str = "io.choria.fisk-ai.v1.session.";
    const META: &str = r#"{"version":1,"run_id":"r","created":"2026-09-22T09:14:03Z","fingerprint":{},"prompt":"go"}"#;
    const TURN: &str = r#"{"iteration":0,"message":{"role":"assistant","content":[{"tool_use":{"id":"d","name":"t","input":{}}}]},"stop_reason":"tool_use","in_tokens":1,"out_tokens":1,"cache_read_tokens":0,"cache_create_tokens":0}"#;
    const DEFERRED: &str = r#"{"tool_use_id":"d","tool_name":"t"}"#;
    const RESULT: &str = r#"{"tool_use_id":"d","result":{"tool_use_id":"d","content":"ok"}}"#;
    const USER: &str = r#"{"message":{"role":"user","content":[{"text":{"text":"hi"}}]}}"#;

    fn rec(seq: u64, kind: &str, body: &str) -> Record {
        let line = format!(r#"{{"seq":{seq},"protocol":"{P}{kind}","{kind}":{body}}}"#);
        Record::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn terminal(seq: u64, reason: &str) -> Record {
        rec(seq, "terminal", &format!(r#"{{"reason":"{reason}"}}"#))
    }

    /// Walk `run` (seq order, meta first) as a backend does: from its last
    /// record back, never feeding the meta record; `torn` feeds an
    /// undecodable record as the run's last first. The seqs fed, newest
    /// first, and the summary folded from the tail.
    fn walk(run: &[Record], torn: bool) -> (Vec<u64>, Summary) {
        let mut w = TailWalk::new();
        if torn {
            assert_eq!(w.feed::<()>(Err(())), Ok(true));
        }
        let mut fed = Vec::new();
        for r in run.iter().skip(1).rev() {
            fed.push(r.seq);
            if !w.feed::<()>(Ok(r.clone())).unwrap_or(false) {
                break;
            }
        }
        let meta = run.first().unwrap_or_else(|| panic!("no meta"));
        (fed, Summary::from_tail("r", meta, &w.into_tail()))
    }

    #[test]
    fn the_walk_stops_at_the_last_assistant_record() {
        let run = [
            rec(1, "meta", META),
            rec(2, "assistant", TURN),
            rec(3, "tool_result", RESULT),
            rec(4, "assistant", TURN),
            rec(5, "tool_result", RESULT),
        ];
        let (fed, s) = walk(&run, false);
        assert_eq!(fed, [5, 4], "nothing before the last assistant is read");
        assert_eq!(s.records, Some(5), "records: the last seq");
        assert_eq!(s.status, Listed::Run(Status::Open));
    }

    #[test]
    fn without_an_assistant_record_the_walk_goes_back_to_the_meta_record() {
        let run = [rec(1, "meta", META), rec(2, "user", USER)];
        assert_eq!(walk(&run, false).0, [2], "fed back to the meta record");
        let (_, s) = walk(&run[..1], false);
        assert_eq!(s.records, Some(1), "a run of its meta record alone");
        assert_eq!(s.status, Listed::Run(Status::Open));
    }

    #[test]
    fn status_is_the_last_terminal_reason_when_nothing_follows_it() {
        let run = [
            rec(1, "meta", META),
            rec(2, "assistant", TURN),
            rec(3, "tool_result", RESULT),
            terminal(4, "completed"),
        ];
        let (_, s) = walk(&run, false);
        assert_eq!(
            s.status,
            Listed::Run(Status::Terminal(Reason::parse("completed")))
        );
        assert!(!s.waiting);
    }

    #[test]
    fn any_record_after_the_last_terminal_reopens_the_run() {
        let run = [
            rec(1, "meta", META),
            rec(2, "assistant", TURN),
            rec(3, "tool_result", RESULT),
            terminal(4, "completed"),
            rec(5, "user", USER),
        ];
        assert_eq!(walk(&run, false).1.status, Listed::Run(Status::Open));
    }

    #[test]
    fn a_pending_turn_with_unanswered_deferrals_is_waiting() {
        let run = [
            rec(1, "meta", META),
            rec(2, "assistant", TURN),
            rec(3, "deferred", DEFERRED),
            terminal(4, "suspended"),
        ];
        let (fed, s) = walk(&run, false);
        assert_eq!(fed, [4, 3, 2]);
        assert!(s.waiting);
        assert_eq!(s.open_deferrals, 1);
        let mut answered = run.to_vec();
        answered.push(rec(5, "tool_result", RESULT));
        let (_, s) = walk(&answered, false);
        assert!(!s.waiting, "the deferral answered by hand");
        assert_eq!(s.open_deferrals, 0);
    }

    #[test]
    fn a_last_record_that_does_not_decode_is_dropped_as_a_torn_tail() {
        let run = [rec(1, "meta", META), rec(2, "assistant", TURN)];
        let (fed, s) = walk(&run, true);
        assert_eq!(fed, [2], "the walk goes on past the torn record");
        assert_eq!(s.records, Some(2), "the last record that decodes");
    }

    #[test]
    fn a_record_before_the_last_that_does_not_decode_is_corruption() {
        let mut w = TailWalk::new();
        assert_eq!(w.feed::<&str>(Ok(rec(3, "user", USER))), Ok(true));
        assert_eq!(w.feed(Err("bad")), Err("bad"));
    }

    #[test]
    fn updated_is_the_last_record_time_when_it_has_one() {
        let dated = Record::decode(
            format!(
                r#"{{"seq":2,"protocol":"{P}user","time":"2026-09-22T10:00:00Z","user":{USER}}}"#
            )
            .as_bytes(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (_, s) = walk(&[rec(1, "meta", META), dated], false);
        assert_eq!(
            s.updated.map(|t| t.to_string()).as_deref(),
            Some("2026-09-22T10:00:00Z")
        );
        assert!(s.created.is_some(), "created: meta.created");
        let (_, s) = walk(&[rec(1, "meta", META), rec(2, "user", USER)], false);
        assert!(s.updated.is_none(), "undated: the backend sets it");
    }

    #[test]
    fn the_terminal_says_why_and_its_counters_what_the_run_cost() {
        let ended = rec(
            4,
            "terminal",
            r#"{"reason":"error","message":"provider: 529 overloaded","summary":{"turns":1,"counters":{"llm_calls":2,"in_tokens":10,"out_tokens":4,"cache_read_tokens":3,"cache_create_tokens":2,"thinking_tokens":1}}}"#,
        );
        let run = [
            rec(1, "meta", META),
            rec(2, "assistant", TURN),
            rec(3, "tool_result", RESULT),
            ended.clone(),
        ];
        let (_, s) = walk(&run, false);
        assert_eq!(s.message.as_deref(), Some("provider: 529 overloaded"));
        assert_eq!(s.total_tokens, Some(19), "in + out + both cache tiers");
        // A user record after it: open, no reason; the cost still stands
        // (no response since).
        let mut reopened = run.to_vec();
        reopened.push(rec(5, "user", USER));
        let (_, s) = walk(&reopened, false);
        assert_eq!((s.message, s.total_tokens), (None, Some(19)));
        // A response after it: what that cost is not in the counters.
        reopened.push(rec(6, "assistant", TURN));
        let (_, s) = walk(&reopened, false);
        assert_eq!((s.message, s.total_tokens), (None, None));
        // No summary (version 3), or counters below the responses read:
        // unknown, unless the tail holds every response of the run (it
        // starts right after the meta record), whose sum the agent's fold
        // counts (issue 39: the corpus's g-huge-integers).
        let (_, s) = walk(
            &[
                rec(1, "meta", META),
                rec(2, "assistant", TURN),
                terminal(3, "completed"),
            ],
            false,
        );
        assert_eq!((s.message, s.total_tokens), (None, Some(2)));
        let (_, s) = walk(
            &[
                rec(1, "meta", META),
                rec(2, "assistant", TURN),
                rec(3, "tool_result", RESULT),
                rec(4, "assistant", TURN),
                terminal(5, "completed"),
            ],
            false,
        );
        assert_eq!(
            s.total_tokens, None,
            "the response at seq 2 is not in the tail"
        );
        let stale = rec(
            3,
            "terminal",
            r#"{"reason":"completed","summary":{"counters":{"in_tokens":1}}}"#,
        );
        let (_, s) = walk(
            &[rec(1, "meta", META), rec(2, "assistant", TURN), stale],
            false,
        );
        assert_eq!(
            s.total_tokens,
            Some(2),
            "2 tokens read, 1 counted: the fold's 2"
        );
        let stale = rec(
            5,
            "terminal",
            r#"{"reason":"completed","summary":{"counters":{"in_tokens":1}}}"#,
        );
        let (_, s) = walk(
            &[
                rec(1, "meta", META),
                rec(2, "assistant", TURN),
                rec(3, "tool_result", RESULT),
                rec(4, "assistant", TURN),
                stale,
            ],
            false,
        );
        assert_eq!(
            s.total_tokens, None,
            "2 tokens read, 1 counted, 1 response unread"
        );
        let none = rec(
            3,
            "terminal",
            r#"{"reason":"completed","summary":{"turns":1}}"#,
        );
        let (_, s) = walk(&[rec(1, "meta", META), none], false);
        assert_eq!(s.total_tokens, Some(0), "zero counters are omitted");
    }

    fn rest(kinds: &[Kind]) -> bool {
        at_rest(kinds.iter().rev().map(|k| Some(*k)))
    }

    #[test]
    fn what_follows_a_terminal_by_hand_leaves_a_run_at_rest() {
        assert!(rest(&[Meta, Assistant, Terminal]));
        for after in [ToolResult, CallApproval, Decision, MemoryRevisions] {
            assert!(rest(&[Meta, Assistant, Terminal, after]), "{after:?}");
        }
        assert!(rest(&[
            Assistant,
            Terminal,
            ToolResult,
            Decision,
            CallApproval
        ]));
        for busy in [Claim, User, Assistant, Deferred] {
            assert!(!rest(&[Meta, Assistant, Terminal, busy]), "{busy:?}");
            assert!(!rest(&[Terminal, busy, Decision]), "{busy:?}");
        }
        assert!(!rest(&[Meta]));
        assert!(!rest(&[Meta, Decision, ToolResult]));
        assert!(!at_rest([None, Some(Terminal)]));
    }
}
