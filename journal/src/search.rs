//! Matching inside a transcript (`search --in`, beyond the agent, which
//! matches the prompt only): the first record whose text in the chosen
//! scope matches, with a short excerpt around the match. Pure.
//!
//! Public API: `search --in` finds the first match in a run
//! ([`first_match`]); `search` counts every match of a run
//! ([`count_matches`]) in a scope or in the words of some roles
//! ([`Within`]).

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

/// Whose words a pattern is matched against (`search --role`): who wrote
/// the text, whatever record holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The operator: the run's prompt and every user turn's text.
    Prompt,
    /// The model's words: its text and thinking blocks.
    Model,
    /// What the model asked of a tool: each call's input, and the note of
    /// a deferred call.
    ToolInput,
    /// What a tool (or a person answering for it) gave back: every tool
    /// result.
    ToolOutput,
}

/// Which text of a run is searched: a [`Scope`], or the words of some
/// [`Role`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Within {
    meta_prompt: bool,
    user_text: bool,
    model_text: bool,
    tool_input: bool,
    notes: bool,
    tool_output: bool,
    terminal: bool,
}

impl From<Scope> for Within {
    fn from(scope: Scope) -> Within {
        let all = scope == Scope::All;
        let text = matches!(scope, Scope::Text | Scope::All);
        let tools = matches!(scope, Scope::Tools | Scope::All);
        Within {
            meta_prompt: matches!(scope, Scope::Prompt | Scope::All),
            user_text: text,
            model_text: text,
            tool_input: tools,
            notes: tools,
            tool_output: tools,
            terminal: all,
        }
    }
}

impl Within {
    /// The words of `roles`.
    pub fn roles(roles: &[Role]) -> Within {
        let has = |r: Role| roles.contains(&r);
        Within {
            meta_prompt: has(Role::Prompt),
            user_text: has(Role::Prompt),
            model_text: has(Role::Model),
            tool_input: has(Role::ToolInput),
            notes: has(Role::ToolInput),
            tool_output: has(Role::ToolOutput),
            terminal: false,
        }
    }
}

/// Every match in a run: how many, and the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matches {
    /// How many times the pattern matches (each non-overlapping match in
    /// each text searched).
    pub count: u64,
    /// The first.
    pub first: Hit,
}

/// The first record of `records` whose text in `scope` matches `re`.
pub fn first_match<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    scope: Scope,
    re: &regex::Regex,
) -> Option<Hit> {
    let within = Within::from(scope);
    let mut texts: Vec<&str> = Vec::new();
    for r in records {
        texts.clear();
        collect(r, within, &mut texts);
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

/// Every match of `re` in the text of `records` `within` chooses: how
/// many, and the first (`None` when there is none).
pub fn count_matches<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    within: Within,
    re: &regex::Regex,
) -> Option<Matches> {
    let mut texts: Vec<&str> = Vec::new();
    let mut found: Option<Matches> = None;
    for r in records {
        texts.clear();
        collect(r, within, &mut texts);
        for t in &texts {
            for m in re.find_iter(t) {
                match found.as_mut() {
                    Some(f) => f.count = f.count.saturating_add(1),
                    None => {
                        found = Some(Matches {
                            count: 1,
                            first: Hit {
                                seq: r.seq,
                                excerpt: excerpt(t, m.start(), m.end()),
                            },
                        })
                    }
                }
            }
        }
    }
    found
}

fn collect<'a>(r: &'a Record, w: Within, out: &mut Vec<&'a str>) {
    let blocks = |m: &'a crate::record::Message, user: bool, out: &mut Vec<&'a str>| {
        let text = if user { w.user_text } else { w.model_text };
        for b in m.blocks() {
            match b {
                Block::Text(t) if text => out.push(&t.text),
                Block::Thinking(t) if text => out.push(&t.text),
                Block::ToolUse(u) if w.tool_input => {
                    if let Some(i) = &u.input {
                        out.push(i.get());
                    }
                }
                Block::ToolResult(t) if w.tool_output => out.push(&t.content),
                _ => {}
            }
        }
    };
    match &r.payload {
        Some(Payload::Meta(m)) if w.meta_prompt => out.push(&m.prompt),
        Some(Payload::Assistant(a)) => blocks(&a.message, false, out),
        Some(Payload::User(u)) => blocks(&u.message, true, out),
        Some(Payload::ToolResult(t)) if w.tool_output => out.push(&t.result.content),
        Some(Payload::Deferred(d)) if w.notes => out.push(&d.note),
        Some(Payload::Terminal(t)) if w.terminal => out.push(&t.message),
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
    fn roles_choose_whose_words_are_searched_and_every_match_is_counted() {
        let recs = [
            rec(
                r#"{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":1,"run_id":"r","created":"2026-01-01T00:00:00Z","fingerprint":{},"prompt":"check ORDERS"}}"#,
            ),
            rec(
                r#"{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":{"role":"assistant","content":[{"text":{"text":"ORDERS first, then ORDERS-2"}},{"tool_use":{"id":"t1","name":"exec","input":{"cmd":"nats stream info ORDERS"}}}]}}}"#,
            ),
            rec(
                r#"{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"t1","result":{"tool_use_id":"t1","content":"ORDERS: 10 messages"}}}"#,
            ),
        ];
        let re = regex::Regex::new("ORDERS").unwrap();
        let count = |roles: &[Role]| {
            count_matches(&recs, Within::roles(roles), &re).map(|m| (m.count, m.first.seq))
        };
        assert_eq!(count(&[Role::Prompt]), Some((1, 1)));
        assert_eq!(count(&[Role::Model]), Some((2, 2)));
        assert_eq!(count(&[Role::ToolInput]), Some((1, 2)));
        assert_eq!(count(&[Role::ToolOutput]), Some((1, 3)));
        assert_eq!(count(&[Role::Model, Role::ToolOutput]), Some((3, 2)));
        let none = regex::Regex::new("STREAMS").unwrap();
        assert_eq!(count_matches(&recs, Within::from(Scope::All), &none), None);
        assert_eq!(
            count_matches(&recs, Within::from(Scope::All), &re).map(|m| m.count),
            Some(5)
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
