//! Matching inside a transcript (`search --in`, beyond the agent, which
//! matches the prompt only): the first record whose text in the chosen
//! scope matches, with a short excerpt around the match. Pure.
//!
//! Public API: `search --in` finds the first match in a run
//! ([`first_match`]).

use crate::record::{Block, Payload, Record};

/// Which text of a run a pattern is matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The meta record's prompt.
    Prompt,
    /// What the model and the user said: text and thinking blocks.
    Text,
    /// Tool inputs (as journaled JSON), tool results, deferral notes.
    Tools,
    /// All of these, and terminal messages.
    All,
}

/// Where a pattern first matched.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    /// The matching record's seq.
    pub seq: u64,
    /// Up to about 40 characters either side of the match, on one line.
    pub excerpt: String,
}

/// The first record of `records` whose text in `scope` matches `re`.
pub fn first_match<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    scope: Scope,
    re: &regex::Regex,
) -> Option<Hit> {
    let mut texts: Vec<&str> = Vec::new();
    for r in records {
        texts.clear();
        collect(r, scope, &mut texts);
        for t in &texts {
            if let Some(m) = re.find(t) {
                return Some(Hit {
                    seq: r.seq,
                    excerpt: excerpt(t, m.start(), m.end()),
                });
            }
        }
    }
    None
}

fn collect<'a>(r: &'a Record, scope: Scope, out: &mut Vec<&'a str>) {
    let prompt = matches!(scope, Scope::Prompt | Scope::All);
    let text = matches!(scope, Scope::Text | Scope::All);
    let tools = matches!(scope, Scope::Tools | Scope::All);
    let blocks = |m: &'a crate::record::Message, out: &mut Vec<&'a str>| {
        for b in m.blocks() {
            match b {
                Block::Text(t) if text => out.push(&t.text),
                Block::Thinking(t) if text => out.push(&t.text),
                Block::ToolUse(u) if tools => {
                    if let Some(i) = &u.input {
                        out.push(i.get());
                    }
                }
                Block::ToolResult(t) if tools => out.push(&t.content),
                _ => {}
            }
        }
    };
    match &r.payload {
        Some(Payload::Meta(m)) if prompt => out.push(&m.prompt),
        Some(Payload::Assistant(a)) => blocks(&a.message, out),
        Some(Payload::User(u)) => blocks(&u.message, out),
        Some(Payload::ToolResult(t)) if tools => out.push(&t.result.content),
        Some(Payload::Deferred(d)) if tools => out.push(&d.note),
        Some(Payload::Terminal(t)) if scope == Scope::All => out.push(&t.message),
        _ => {}
    }
}

/// About 40 characters either side of `text[start..end]`, whitespace runs
/// folded to one space, `…` where it was cut.
fn excerpt(text: &str, start: usize, end: usize) -> String {
    const SIDE: usize = 40;
    let before: String = {
        let head = text.get(..start).unwrap_or("");
        let n = head.chars().count();
        let cut = n.saturating_sub(SIDE);
        let kept: String = head.chars().skip(cut).collect();
        if cut > 0 {
            format!("…{kept}")
        } else {
            kept
        }
    };
    let hit = text.get(start..end).unwrap_or("");
    let after: String = {
        let tail = text.get(end..).unwrap_or("");
        let kept: String = tail.chars().take(SIDE).collect();
        if tail.chars().count() > SIDE {
            format!("{kept}…")
        } else {
            kept
        }
    };
    format!("{before}{hit}{after}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(line: &str) -> Record {
        Record::decode(line.as_bytes()).unwrap()
    }

    #[test]
    fn the_scope_decides_which_text_is_searched_and_the_first_record_wins() {
        let recs = [
            rec(
                r#"{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":1,"run_id":"r","created":"2026-01-01T00:00:00Z","fingerprint":{},"prompt":"check ORDERS"}}"#,
            ),
            rec(
                r#"{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":{"role":"assistant","content":[{"text":{"text":"looking at orders now"}},{"tool_use":{"id":"t1","name":"exec","input":{"cmd":"nats stream info ORDERS"}}}]}}}"#,
            ),
            rec(
                r#"{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"t1","result":{"tool_use_id":"t1","content":"ORDERS: 10 messages"}}}"#,
            ),
        ];
        let re = regex::Regex::new("ORDERS").unwrap();
        let seq = |scope| first_match(&recs, scope, &re).map(|h| h.seq);
        assert_eq!(seq(Scope::Prompt), Some(1));
        assert_eq!(
            seq(Scope::Text),
            None,
            "case matters unless the pattern says (?i)"
        );
        assert_eq!(seq(Scope::Tools), Some(2));
        assert_eq!(seq(Scope::All), Some(1));
        let ci = regex::Regex::new("(?i)orders now").unwrap();
        let hit = first_match(&recs, Scope::Text, &ci).unwrap();
        assert_eq!(
            (hit.seq, hit.excerpt.as_str()),
            (2, "looking at orders now")
        );
    }

    #[test]
    fn an_excerpt_is_cut_around_the_match_on_one_line() {
        let long = format!("{}\nNEEDLE\n{}", "a".repeat(100), "b".repeat(100));
        let start = long.find("NEEDLE").unwrap();
        let e = excerpt(&long, start, start + 6);
        assert!(
            e.starts_with('…') && e.ends_with('…') && e.contains(" NEEDLE "),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
