//! `--redact`: each match of the operator's patterns in every text of a run
//! replaced by `[redacted]`, in the decoded records. Only texts are touched
//! (prompt, messages, thinking, tool input and output, notes, handles,
//! terminal message): ids, protocols and times stay as written, so a
//! redacted journal still folds and verifies.

use crate::gojson;
use crate::record::{Block, Message, Payload, Record};
use regex::{NoExpand, Regex};
use serde_json::value::RawValue;

/// What a match is replaced by.
pub const REDACTED: &str = "[redacted]";

/// Replace every match of `patterns` in `s`; how many were replaced.
fn text(s: &mut String, patterns: &[Regex]) -> u64 {
    let mut n = 0u64;
    for re in patterns {
        let found = re.find_iter(s).count() as u64;
        if found > 0 {
            n = n.saturating_add(found);
            *s = re.replace_all(s, NoExpand(REDACTED)).into_owned();
        }
    }
    n
}

/// The end of the JSON string token starting at `start` (its closing quote).
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start.checked_add(1)?;
    loop {
        match b.get(i)? {
            b'\\' => i = i.checked_add(2)?,
            b'"' => return Some(i),
            _ => i = i.checked_add(1)?,
        }
    }
}

/// The string values (not the keys) of a raw JSON value redacted, the rest
/// of its bytes kept as written; a changed string is re-encoded as the
/// agent encodes strings (`gojson`). `None` when nothing matched.
fn raw(value: &RawValue, patterns: &[Regex]) -> Option<(Box<RawValue>, u64)> {
    let b = value.get().as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut n = 0u64;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c != b'"' {
            out.push(c);
            i += 1;
            continue;
        }
        let end = string_end(b, i)?;
        let token = b.get(i..=end)?;
        let after = b.get(end + 1..).unwrap_or_default();
        let is_key = after
            .iter()
            .find(|x| !x.is_ascii_whitespace())
            .is_some_and(|x| *x == b':');
        let mut s: String = match serde_json::from_slice(token) {
            Ok(s) if !is_key => s,
            // A key, or a string serde_json cannot hold (a lone
            // surrogate): kept as written.
            _ => {
                out.extend_from_slice(token);
                i = end + 1;
                continue;
            }
        };
        let found = text(&mut s, patterns);
        if found > 0 {
            n = n.saturating_add(found);
            out.extend_from_slice(&gojson::to_vec(&s));
        } else {
            out.extend_from_slice(token);
        }
        i = end + 1;
    }
    if n == 0 {
        return None;
    }
    let s = String::from_utf8(out).ok()?;
    RawValue::from_string(s).ok().map(|r| (r, n))
}

fn raw_opt(v: &mut Option<Box<RawValue>>, patterns: &[Regex]) -> u64 {
    match v.as_deref().and_then(|r| raw(r, patterns)) {
        Some((new, n)) => {
            *v = Some(new);
            n
        }
        None => 0,
    }
}

fn message(m: &mut Message, patterns: &[Regex]) -> u64 {
    let mut n = 0u64;
    for b in m.content.iter_mut().flatten() {
        n = n.saturating_add(match b {
            Block::Text(t) => text(&mut t.text, patterns),
            Block::Thinking(t) => text(&mut t.text, patterns),
            Block::ToolUse(u) => raw_opt(&mut u.input, patterns),
            Block::ToolResult(r) => text(&mut r.content, patterns),
            Block::Provider(p) => raw_opt(&mut p.raw, patterns),
            Block::Other(m) => {
                m.0.iter_mut()
                    .map(|(_, v)| match raw(v, patterns) {
                        Some((new, n)) => {
                            *v = new;
                            n
                        }
                        None => 0,
                    })
                    .fold(0u64, u64::saturating_add)
            }
        });
    }
    n
}

/// Redact every text of `r` in place; how many matches were replaced.
pub fn record(r: &mut Record, patterns: &[Regex]) -> u64 {
    let Some(p) = r.payload.as_mut() else {
        return 0;
    };
    match p {
        Payload::Meta(m) => text(&mut m.prompt, patterns),
        Payload::Assistant(a) => message(&mut a.message, patterns),
        Payload::User(u) => message(&mut u.message, patterns),
        Payload::ToolResult(t) => text(&mut t.result.content, patterns),
        Payload::Deferred(d) => {
            text(&mut d.note, patterns).saturating_add(text(&mut d.handle, patterns))
        }
        Payload::Terminal(t) => {
            text(&mut t.message, patterns).saturating_add(raw_opt(&mut t.summary, patterns))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_are_redacted_and_keys_kept() {
        let re = [Regex::new("secret").unwrap()];
        let v = RawValue::from_string(r#"{"secret": "a secret <b>", "n": [1, "secret"]}"#.into())
            .unwrap();
        let (out, n) = raw(&v, &re).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            out.get(),
            r#"{"secret": "a [redacted] \u003cb\u003e", "n": [1, "[redacted]"]}"#
        );
        let none = RawValue::from_string(r#"{"a":"b\"c"}"#.into()).unwrap();
        assert!(raw(&none, &re).is_none());
    }
}
