//! `export`: a run as a document to hand on, a Markdown ticket, one
//! self-contained HTML file, or a journal (jsonl) for a reproduction. The
//! run is read once into [`Doc`] (its sections in record order); the two
//! renderers only lay it out, so both carry the same content. `--redact`
//! works on the decoded records before anything is built ([`redact`]).

pub mod redact;
mod render;

use crate::record::{Block, Payload, Record};
use crate::store::Journal;
use regex::Regex;
use std::collections::BTreeSet;

pub use render::{html, markdown};

/// One piece of the run: a record, or one block of a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The seq of the record it comes from.
    pub seq: u64,
    /// The iteration of the model response it belongs to (assistant records).
    pub iteration: Option<i64>,
    /// What it is (`prompt`, `thinking`, `tool_use exec call-1`, ...): journal text.
    pub label: String,
    /// Its text, verbatim (journal text); may be empty.
    pub body: String,
    /// Shown folded: thinking, tool input and output.
    pub folded: bool,
}

/// A run as a document: its id, figures and sections, every text as the
/// journal holds it (after `--redact`); the renderers escape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doc {
    /// The run's id.
    pub run: String,
    /// The run's figures: name and value.
    pub figures: Vec<(String, String)>,
    /// The sections, in record order.
    pub sections: Vec<Section>,
}

/// The records of `journal` with `patterns` redacted, and how many matches
/// were replaced.
pub fn redacted(journal: &Journal, patterns: &[Regex]) -> (Vec<Record>, u64) {
    let mut n = 0u64;
    let records = journal
        .records()
        .map(|r| {
            let mut r = r.clone();
            n = n.saturating_add(redact::record(&mut r, patterns));
            r
        })
        .collect();
    (records, n)
}

/// The journal's lines with `patterns` redacted, and how many matches were
/// replaced: a record with no match keeps its bytes; one with a match is
/// re-encoded as the agent encodes ([`Record::encode`]), so the export
/// still verifies. A torn final line is not exported.
pub fn jsonl(journal: &Journal, patterns: &[Regex]) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(journal.entries.iter().map(|e| e.raw.len() + 1).sum());
    let mut n = 0u64;
    for e in &journal.entries {
        let mut r = e.record.clone();
        let found = redact::record(&mut r, patterns);
        match r.encode() {
            Some(bytes) if found > 0 => {
                n = n.saturating_add(found);
                out.extend_from_slice(&bytes);
            }
            _ => out.extend_from_slice(&e.raw),
        }
        out.push(b'\n');
    }
    (out, n)
}

fn pretty(raw: Option<&serde_json::value::RawValue>) -> String {
    let text = raw.map_or("null", |r| r.get());
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// The document of run `run` from its records (redacted already).
pub fn doc(run: &str, records: &[Record]) -> Doc {
    let mut sections = Vec::new();
    // A tool_result whose call was deferred is the answer to it.
    let mut deferred = BTreeSet::new();
    let mut push = |seq, iteration, label: String, body: String, folded| {
        sections.push(Section {
            seq,
            iteration,
            label,
            body,
            folded,
        })
    };
    for r in records {
        let seq = r.seq;
        let Some(p) = &r.payload else {
            push(
                seq,
                None,
                format!("record {}", r.protocol),
                String::new(),
                false,
            );
            continue;
        };
        match p {
            Payload::Meta(m) => push(seq, None, "prompt".into(), m.prompt.clone(), false),
            Payload::Assistant(a) => {
                for b in a.message.blocks() {
                    let (label, body, folded) = block(b);
                    push(seq, Some(a.iteration), label, body, folded);
                }
            }
            Payload::User(u) => {
                for b in u.message.blocks() {
                    let (label, body, folded) = match b {
                        Block::Text(t) => ("user".into(), t.text.clone(), false),
                        b => block(b),
                    };
                    push(seq, None, label, body, folded);
                }
            }
            Payload::ToolResult(t) => {
                let answer = deferred.contains(&t.tool_use_id);
                let mut label = format!(
                    "{} {}",
                    if answer { "answer" } else { "tool_result" },
                    t.tool_use_id
                );
                if t.result.is_error {
                    label.push_str(" error");
                }
                if !t.kind.is_empty() {
                    label.push_str(&format!(" {}", t.kind));
                }
                push(seq, None, label, t.result.content.clone(), !answer);
            }
            Payload::Deferred(d) => {
                deferred.insert(d.tool_use_id.clone());
                let mut body = String::new();
                if !d.note.is_empty() {
                    body.push_str(&format!("note: {}\n", d.note));
                }
                if !d.handle.is_empty() {
                    body.push_str(&format!("handle: {}\n", d.handle));
                }
                let label = format!("deferred {} {}", d.tool_use_id, d.tool_name);
                push(seq, None, label, body, false);
            }
            Payload::Decision(d) => push(
                seq,
                None,
                format!("approval {}: standing, for the rest of the run", d.tool),
                String::new(),
                false,
            ),
            Payload::CallApproval(c) => push(
                seq,
                None,
                format!("approval {} {}: once", c.tool_use_id, c.tool_name),
                String::new(),
                false,
            ),
            Payload::Terminal(t) => push(
                seq,
                None,
                format!("terminal {}", t.reason),
                t.message.clone(),
                false,
            ),
            Payload::Claim(c) => push(
                seq,
                None,
                format!("claim by {}", c.by),
                String::new(),
                false,
            ),
            Payload::MemoryRevisions(_) => {
                push(seq, None, "memory_revisions".into(), String::new(), false)
            }
        }
    }
    Doc {
        run: run.to_owned(),
        figures: figures(records),
        sections,
    }
}

/// A block of a message: its label, body and whether it is folded.
fn block(b: &Block) -> (String, String, bool) {
    match b {
        Block::Text(t) => ("assistant".into(), t.text.clone(), false),
        Block::Thinking(t) if t.text.is_empty() => (
            "thinking (redacted by the provider: signature only)".into(),
            String::new(),
            false,
        ),
        Block::Thinking(t) => ("thinking".into(), t.text.clone(), true),
        Block::ToolUse(u) => (
            format!("tool_use {} {}", u.name, u.id),
            pretty(u.input.as_deref()),
            true,
        ),
        Block::ToolResult(r) => (
            format!(
                "tool_result {}{}",
                r.tool_use_id,
                if r.is_error { " error" } else { "" }
            ),
            r.content.clone(),
            true,
        ),
        Block::Provider(p) => (
            format!("provider {}", p.kind),
            pretty(p.raw.as_deref()),
            true,
        ),
        _ => ("unknown block".into(), String::new(), false),
    }
}

/// The run's figures: records, status, model calls, tool calls, tokens.
fn figures(records: &[Record]) -> Vec<(String, String)> {
    let mut f = vec![
        ("records".to_owned(), records.len().to_string()),
        (
            "last seq".to_owned(),
            records.last().map_or(0, |r| r.seq).to_string(),
        ),
    ];
    match crate::fold(records.iter()) {
        Ok(st) => {
            let c = &st.counters;
            f.push(("status".into(), st.status.to_string()));
            f.push(("turns".into(), st.turns.to_string()));
            f.push(("model calls".into(), c.llm_calls.to_string()));
            f.push(("tool calls".into(), c.tool_calls.to_string()));
            f.push(("input tokens".into(), c.in_tokens.to_string()));
            f.push(("output tokens".into(), c.out_tokens.to_string()));
            f.push(("cache read tokens".into(), c.cache_read_tokens.to_string()));
            f.push(("thinking tokens".into(), c.thinking_tokens.to_string()));
        }
        Err(e) => f.push(("status".into(), format!("does not fold: {e}"))),
    }
    f
}
