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

/// A run as it is exported: its id, its journal's lines and its records,
/// all with `--redact`'s patterns taken out.
#[derive(Debug, Clone)]
pub struct Redacted {
    /// The run's id (a match in it replaced by `redacted`).
    pub run: String,
    /// The journal's lines, each followed by `\n`: a line with no match
    /// keeps its bytes. A torn final line is not exported.
    pub lines: Vec<u8>,
    /// The records, decoded from those lines.
    pub records: Vec<Record>,
    /// How many matches were replaced in the records (each occurrence
    /// counted).
    pub count: u64,
}

/// `--redact`'s patterns, each refused when it could match the empty
/// string anywhere (`\b`, `^`, `x*`: it would report matches and replace
/// nothing, or put `[redacted]` between every two characters) or when the
/// replacement itself holds a match (it would never be gone).
pub fn patterns(given: &[String]) -> Result<Vec<Regex>, String> {
    given
        .iter()
        .map(|p| {
            let re = Regex::new(p).map_err(|e| format!("not a regular expression: {e}"));
            let hir = regex_syntax::ParserBuilder::new()
                .build()
                .parse(p)
                .map_err(|e| format!("not a regular expression: {e}"));
            let (re, hir) = (re?, hir?);
            let Some(shortest) = hir.properties().minimum_len() else {
                return Err("can never match anything".to_owned());
            };
            if shortest == 0 {
                return Err(
                    "can match the empty string (a zero-width assertion such as \\b, ^ or $ alone, or a repetition that may be empty): it would find matches and replace nothing; give a pattern that matches at least one character"
                        .to_owned(),
                );
            }
            for own in [redact::REDACTED, redact::REDACTED_ID, "-2"] {
                if re.is_match(own) {
                    return Err(format!(
                        "matches `{own}`, which a redaction writes: it could never be taken out; give a pattern that matches only the secret"
                    ));
                }
            }
            Ok(re)
        })
        .collect()
}

/// `journal` with `patterns` taken out of every string of every record
/// (`redact`: text, names kept consistent, the run id kept an id). Refused,
/// saying why and naming the field, when a match is in the journal's
/// structure (which no replacement keeps readable), and when the redacted
/// journal would not verify as the original does (with the schemas):
/// nothing is exported then.
pub fn redact_run(journal: &Journal, patterns: &[Regex]) -> Result<Redacted, String> {
    let mut lines = Vec::with_capacity(journal.entries.iter().map(|e| e.raw.len() + 1).sum());
    if patterns.is_empty() {
        for e in &journal.entries {
            lines.extend_from_slice(&e.raw);
            lines.push(b'\n');
        }
        return Ok(Redacted {
            run: journal.run.clone(),
            lines,
            records: journal.records().cloned().collect(),
            count: 0,
        });
    }
    let mut r = redact::Redactor::new(patterns);
    let mut records = Vec::with_capacity(journal.entries.len());
    for e in &journal.entries {
        let at = |why: String| format!("record seq {} (line {}): {why}", e.record.seq, e.line);
        match r.line(&e.raw).map_err(at)? {
            Some(bytes) => {
                let record = Record::decode(&bytes)
                    .map_err(|d| at(format!("the redacted record does not read: {d}")))?;
                lines.extend_from_slice(&bytes);
                records.push(record);
            }
            None => {
                lines.extend_from_slice(&e.raw);
                records.push(e.record.clone());
            }
        }
        lines.push(b'\n');
    }
    let run = redact::Redactor::new(patterns).run_id(&journal.run);
    // What verify says of the redacted journal, beyond what it says of
    // the original: what the redaction broke.
    if let Ok(schemas) = crate::schema::SchemaSet::embedded() {
        let check = Some(&schemas as &dyn crate::verify::RecordCheck);
        let mut original = Vec::with_capacity(lines.len());
        for e in &journal.entries {
            original.extend_from_slice(&e.raw);
            original.push(b'\n');
        }
        let key = |f: &crate::verify::Finding| (f.code, f.line);
        let before: BTreeSet<_> = crate::verify::verify_bytes(&journal.run, &original, check)
            .findings
            .iter()
            .map(key)
            .collect();
        let after = crate::verify::verify_bytes(&run, &lines, check);
        let broke = after
            .findings
            .iter()
            .find(|f| f.severity != crate::verify::Severity::Info && !before.contains(&key(f)));
        if let Some(f) = broke {
            return Err(format!(
                "the redacted journal would not verify as the original does: line {}: {}[{}]: {}",
                f.line.unwrap_or(0),
                match f.severity {
                    crate::verify::Severity::Error => "error",
                    _ => "warning",
                },
                f.code,
                f.message
            ));
        }
    }
    Ok(Redacted {
        run,
        lines,
        records,
        count: r.count,
    })
}

/// Where `out`, a document made of a redacted run, still holds a match:
/// the document's own words (a label, a figure, markup) or something no
/// redaction reached. `None`: it holds none. A document that still holds
/// a match is not written.
pub fn leftover(out: &[u8], patterns: &[Regex]) -> Option<String> {
    let text = String::from_utf8_lossy(out);
    patterns.iter().find_map(|re| {
        let m = re.find(&text)?;
        let line = text.get(..m.start()).map_or(0, |t| t.matches('\n').count()) + 1;
        Some(format!(
            "the pattern {} still matches line {line} of the document (`{}`): the document's own text (a label, a figure, its markup) or a field no redaction reaches; nothing was written. Give a pattern that matches only the secret",
            re.as_str(),
            crate::shell::word(std::ffi::OsStr::new(m.as_str()))
        ))
    })
}

/// `lines` (a journal's) with every character a terminal acts on written
/// as a JSON escape (`\u009b`, `\u202e`, surrogate pairs beyond U+FFFF),
/// and bytes that are not UTF-8 as `\ufffd` (what the agent's decoder
/// reads them as): the same records, decoded, and nothing that moves the
/// cursor, recolours or reorders the screen. Such characters are valid
/// only inside a JSON string, where the escape means the same.
pub fn terminal_safe(lines: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.len());
    let escape = |out: &mut Vec<u8>, c: char| {
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            out.extend_from_slice(format!("\\u{u:04x}").as_bytes());
        }
    };
    for chunk in lines.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push(b'\n'),
                c if crate::shell::is_dangerous(c) => escape(&mut out, c),
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        if !chunk.invalid().is_empty() {
            out.extend_from_slice(b"\\ufffd");
        }
    }
    out
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
