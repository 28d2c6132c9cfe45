//! One block as it is shown: a label and its body, every piece of journal
//! text in it neutralised (`output::sanitize`), tool JSON decoded and
//! indented. Line mode and the viewer both print these.

use super::index::{Item, Kind, Transcript};
use super::json;
use super::output;
use super::shown::{lines, Shown};
use crate::output::{cell, sanitize};
use journal::record::{Block, Payload, Record};

fn one(s: &str) -> String {
    sanitize(s, false).into_owned()
}

/// JSON from a journal (a tool input, a provider block) decoded and
/// indented; text that is not JSON as it is.
fn json_lines(raw: &str) -> Vec<String> {
    lines(&json::pretty(raw).unwrap_or_else(|| raw.to_owned()))
}

/// A tool's output block: `label` (its closing `]` still to come) with the
/// output's status words, and the output as text (`output::output`).
fn output_block(mut label: String, content: &str) -> Shown {
    let o = output::output(content);
    for word in &o.status {
        label.push(' ');
        label.push_str(word);
    }
    label.push(']');
    let mut s = Shown::new(label, o.body);
    s.preview = o.preview;
    s
}

/// The block `item` of transcript `t`, from its record when the caller
/// decoded it already, else decoded again from the journal's bytes.
pub fn shown(t: &Transcript, item: &Item, record: Option<&Record>) -> Shown {
    if item.kind == Kind::End {
        return t.end.get(item.line as usize).cloned().unwrap_or_default();
    }
    if item.kind == Kind::Gap {
        // The item holds how many in a u32: a larger gap reads "at least".
        let (first, n) = (item.seq, u64::from(item.part));
        let last = first.saturating_add(n.saturating_sub(1));
        let label = match n {
            1 => format!("[seq {first} missing: 1 record lost]"),
            n => format!("[seq {first} to {last} missing: {n} records lost]"),
        };
        return Shown::new(
            label,
            vec![format!("`{}` says what the run loses", t.verify_hint)],
        );
    }
    let line = item.line as usize;
    let decoded;
    let record = match record {
        Some(r) => Ok(r),
        None => match t.line(line).map(|(b, _, _)| Record::decode(b)) {
            Some(Ok(r)) => {
                decoded = r;
                Ok(&decoded)
            }
            Some(Err(e)) => Err(e.message),
            None => Err("the line is gone".to_owned()),
        },
    };
    let (number, offset) = t.line(line).map_or((0, 0), |(_, n, o)| (n, o));
    match record {
        Ok(r) => {
            let mut s = of_record(r, item);
            // Beside a record written by hand: who, when and why.
            if let Some(note) = t.by_hand.get(&r.seq).filter(|_| item.part == 0) {
                s.body.insert(0, note.clone());
            }
            s
        }
        Err(e) if item.kind == Kind::Torn => Shown::new(
            format!("[torn final line {number} (byte {offset}): readers drop it]"),
            vec![
                one(&e),
                if t.repair_hint.is_empty() {
                    "a journal file outside a store: cut it from the copy by hand".to_owned()
                } else {
                    format!("`{}` cuts it (keeping its bytes)", t.repair_hint)
                },
            ],
        ),
        Err(e) => Shown::new(
            format!("[unreadable line {number} (byte {offset})]"),
            vec![one(&e)],
        ),
    }
}

fn of_record(r: &Record, item: &Item) -> Shown {
    let part = item.part as usize;
    let Some(p) = &r.payload else {
        let what = if r.optional {
            "skipped optional"
        } else {
            "refused record"
        };
        return Shown::new(format!("[{what} {}]", cell(&r.protocol, 80)), Vec::new());
    };
    match p {
        Payload::Meta(m) => Shown::new("[prompt]".into(), lines(&m.prompt)),
        Payload::Assistant(a) => match a.message.blocks().get(part) {
            Some(b) => of_block(b),
            None => Shown::new("[text]".into(), vec!["(an empty message)".into()]),
        },
        Payload::User(u) => match u.message.blocks().get(part) {
            Some(Block::Text(t)) => Shown::new("[prompt]".into(), lines(&t.text)),
            Some(b) => of_block(b),
            None => Shown::new("[prompt]".into(), vec!["(an empty message)".into()]),
        },
        Payload::ToolResult(t) => {
            let word = if item.kind == Kind::Answer {
                "answer"
            } else {
                "tool_result"
            };
            let mut label = format!("[{word} {}", one(&t.tool_use_id));
            if t.result.is_error {
                label.push_str(" error");
            }
            if !t.kind.is_empty() {
                label.push_str(&format!(" {}", one(&t.kind)));
            }
            if t.kind.is_empty() && t.remote {
                label.push_str(" remote");
            }
            output_block(label, &t.result.content)
        }
        Payload::Deferred(d) => {
            let mut body = Vec::new();
            if !d.note.is_empty() {
                body.push(format!("note: {}", cell(&d.note, 2000)));
            }
            if !d.handle.is_empty() {
                body.push(format!("handle: {}", cell(&d.handle, 2000)));
            }
            Shown::new(
                format!("[deferred {} {}]", one(&d.tool_use_id), one(&d.tool_name)),
                body,
            )
        }
        Payload::Decision(d) => Shown::new(
            format!(
                "[approval {}: standing, for the rest of the run]",
                one(&d.tool)
            ),
            Vec::new(),
        ),
        Payload::CallApproval(c) => Shown::new(
            format!(
                "[approval {} {}: once]",
                one(&c.tool_use_id),
                one(&c.tool_name)
            ),
            Vec::new(),
        ),
        Payload::MemoryRevisions(m) => {
            let revs = m.revisions.as_ref();
            let body = revs
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("{} = {v}", one(k)))
                .collect();
            Shown::new("[memory_revisions]".into(), body)
        }
        Payload::Terminal(t) => {
            let label = if t.message.is_empty() {
                format!("[terminal {}]", one(&t.reason))
            } else {
                format!("[terminal {}: {}]", one(&t.reason), cell(&t.message, 200))
            };
            Shown::new(label, Vec::new())
        }
        Payload::Claim(c) => Shown::new(
            format!("[claim by {} at {}]", cell(&c.by, 200), c.claimed),
            Vec::new(),
        ),
        // A kind a newer library decodes: named by its protocol, no body.
        _ => Shown::new(format!("[record {}]", cell(&r.protocol, 80)), Vec::new()),
    }
}

fn of_block(b: &Block) -> Shown {
    match b {
        Block::Text(t) => Shown::new("[text]".into(), lines(&t.text)),
        Block::Thinking(t) if t.text.is_empty() => {
            Shown::new("[thinking] redacted (signature only)".into(), Vec::new())
        }
        Block::Thinking(t) => Shown::new("[thinking]".into(), lines(&t.text)),
        Block::ToolUse(u) => Shown::new(
            format!("[tool_use {} {}]", one(&u.name), one(&u.id)),
            json_lines(u.input.as_ref().map_or("null", |r| r.get())),
        ),
        Block::ToolResult(r) => output_block(
            format!(
                "[tool_result {}{}",
                one(&r.tool_use_id),
                if r.is_error { " error" } else { "" }
            ),
            &r.content,
        ),
        Block::Provider(p) => Shown::new(
            format!("[provider {}]", one(&p.kind)),
            json_lines(p.raw.as_ref().map_or("null", |r| r.get())),
        ),
        Block::Other(m) => Shown::new(
            "[unknown block]".into(),
            json_lines(&serde_json::to_string(&Block::Other(m.clone())).unwrap_or_default()),
        ),
        // A block a newer library decodes: shown as the block this build
        // cannot read.
        _ => Shown::new("[unknown block]".into(), Vec::new()),
    }
}
