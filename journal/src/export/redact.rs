//! `--redact`: every match of the operator's patterns taken out of a run,
//! in every string of every record, keys included (issue 36.2: the keys of
//! a tool's input, tool_use ids, tool names, approvals, `claim.by`, the
//! meta record's caller, agent, conversation token and fingerprint, and
//! memory keys used to leak). Each line of the journal is walked as raw
//! JSON, every string decoded and judged by where it is:
//!
//! - text (prompt, messages, thinking, tool output, notes, handles, the
//!   terminal's message and summary, a claim's worker, the meta record's
//!   caller, agent, token, model and provider, kinds, stop reasons, any
//!   field a newer agent adds): each match replaced by `[redacted]`;
//! - names that must stay consistent for the run to fold (tool_use ids in
//!   the call, its result, deferral and approval; tool names; the keys of
//!   a tool's input, of provider data and of memory revisions): the same
//!   original gets the same replacement everywhere and two originals
//!   never share one (`-2`, `-3` appended), so calls still meet their
//!   results and approvals their tools;
//! - the run id: its matches replaced by `redacted` (a valid id), so the
//!   export reads as that run;
//! - a thinking signature (provider bytes, base64) with a match: emptied;
//! - what is the journal's structure (field names, protocols, times,
//!   roles, terminal reasons, the fingerprint's hashes and thinking mode,
//!   numbers): never changed; a match there refuses the export, naming
//!   the field, because no replacement keeps the journal readable.
//!
//! A changed string is written as the agent writes strings (`gojson`); the
//! rest of each line keeps its bytes. The result must still verify as the
//! original did (checked, with the schemas, by [`super::redact_run`]), and
//! the count is the number of matches replaced, each occurrence counted.

use crate::gojson;
use regex::{NoExpand, Regex};
use std::collections::{BTreeMap, BTreeSet};

/// What a match in text is replaced by.
pub const REDACTED: &str = "[redacted]";
/// What a match in the run id is replaced by (a valid id).
pub const REDACTED_ID: &str = "redacted";

/// How a string is redacted, by where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Free text: matches replaced.
    Text,
    /// A name other records refer to: one replacement per original.
    Name,
    /// The run id: matches replaced by `redacted`.
    RunId,
    /// Provider bytes: emptied when they hold a match.
    Signature,
    /// The journal's structure: a match refuses the export.
    Fixed,
}

/// One step down a JSON value: an object's key, or an array's element.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index,
}

/// Whether `path` is inside data the journal carries as it was given (a
/// tool's input, a provider's raw block, the memory revisions map): its
/// keys are names, its strings text.
fn in_data(path: &[Seg]) -> bool {
    path.windows(2).any(|w| match w {
        [Seg::Key(a), Seg::Key(b)] => {
            (a == "tool_use" && b == "input")
                || (a == "provider" && b == "raw")
                || (a == "memory_revisions" && b == "revisions")
        }
        _ => false,
    })
}

fn key_at(path: &[Seg], back: usize) -> Option<&str> {
    match path.len().checked_sub(back + 1).and_then(|i| path.get(i)) {
        Some(Seg::Key(k)) => Some(k),
        _ => None,
    }
}

/// How the string value at `path` is redacted.
fn value_kind(path: &[Seg]) -> Kind {
    if in_data(path) {
        return Kind::Text;
    }
    let (last, parent) = (key_at(path, 0), key_at(path, 1));
    match (parent, last) {
        (_, Some("protocol" | "time" | "created" | "claimed" | "role")) => Kind::Fixed,
        (Some("terminal"), Some("reason")) => Kind::Fixed,
        (Some("fingerprint"), Some("system_hash" | "tools_hash" | "thinking_mode")) => Kind::Fixed,
        (Some("meta"), Some("run_id")) => Kind::RunId,
        (_, Some("tool_use_id" | "tool_name")) => Kind::Name,
        (Some("tool_use"), Some("id" | "name")) => Kind::Name,
        (Some("decision"), Some("tool")) => Kind::Name,
        (Some("thinking"), Some("signature")) => Kind::Signature,
        _ => Kind::Text,
    }
}

/// How the keys of the object at `path` are redacted: names inside data
/// (memory keys are names: the agent refers to them), field names of the
/// journal elsewhere.
fn key_kind(object: &[Seg]) -> Kind {
    match in_data(object)
        || matches!(
            (key_at(object, 1), key_at(object, 0)),
            (Some("memory_revisions"), Some("revisions"))
        ) {
        true => Kind::Name,
        false => Kind::Fixed,
    }
}

/// The field at `path`, for a refusal: `meta.created`, `tool_use.input[]`.
fn field(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index => out.push_str("[]"),
        }
    }
    out
}

/// Redacts the lines of one run; holds what must stay consistent across
/// them.
pub struct Redactor<'a> {
    patterns: &'a [Regex],
    /// Name replacements given: original -> replacement.
    names: BTreeMap<String, String>,
    /// Every replacement given to a name.
    given: BTreeSet<String>,
    /// Matches replaced so far.
    pub count: u64,
}

impl<'a> Redactor<'a> {
    /// A redactor of `patterns`.
    pub fn new(patterns: &'a [Regex]) -> Redactor<'a> {
        Redactor {
            patterns,
            names: BTreeMap::new(),
            given: BTreeSet::new(),
            count: 0,
        }
    }

    /// The run id `run` as the redacted meta record holds it.
    pub fn run_id(&mut self, run: &str) -> String {
        match self.string(run, Kind::RunId, &[]) {
            Ok(Some(id)) => id,
            _ => run.to_owned(),
        }
    }

    /// The first pattern that matches `s`.
    fn matching(&self, s: &str) -> Option<&Regex> {
        self.patterns.iter().find(|re| re.is_match(s))
    }

    /// `s` with every match replaced by `with`, and how many there were.
    fn replace(&self, s: &str, with: &str) -> (String, u64) {
        let mut s = s.to_owned();
        let mut n = 0u64;
        for re in self.patterns {
            let found = re.find_iter(&s).count() as u64;
            if found > 0 {
                n = n.saturating_add(found);
                s = re.replace_all(&s, NoExpand(with)).into_owned();
            }
        }
        (s, n)
    }

    /// The string `s` at `path` (a key when `key`) redacted: `Ok(None)`
    /// when it stays as it is; a refusal when it cannot be redacted.
    fn string(&mut self, s: &str, kind: Kind, path: &[Seg]) -> Result<Option<String>, String> {
        let Some(re) = self.matching(s) else {
            return Ok(None);
        };
        let (out, n) = match kind {
            Kind::Text => self.replace(s, REDACTED),
            Kind::RunId => {
                let (out, n) = self.replace(s, REDACTED_ID);
                match crate::id::is_valid(&out) {
                    true => (out, n),
                    false => (REDACTED_ID.to_owned(), n),
                }
            }
            Kind::Signature => (String::new(), self.replace(s, REDACTED).1),
            Kind::Name => {
                let n = self.replace(s, REDACTED).1;
                (self.name(s), n)
            }
            Kind::Fixed => {
                return Err(format!(
                    "the pattern {} matches {} `{}`, which is the journal's structure (field names, protocols, times, roles, reasons, the fingerprint's hashes and thinking mode, numbers): no replacement keeps the journal readable",
                    re.as_str(),
                    match path.last() {
                        Some(Seg::Key(k)) if k == s => "the field name",
                        _ => "the field",
                    },
                    field(path)
                ))
            }
        };
        self.count = self.count.saturating_add(n);
        Ok(Some(out))
    }

    /// The one replacement of name `s`: its matches replaced, then made
    /// unique among the replacements given.
    fn name(&mut self, s: &str) -> String {
        if let Some(r) = self.names.get(s) {
            return r.clone();
        }
        let base = self.replace(s, REDACTED).0;
        let mut out = base.clone();
        let mut k = 2u64;
        while self.given.contains(&out) {
            out = format!("{base}-{k}");
            k = k.saturating_add(1);
        }
        self.given.insert(out.clone());
        self.names.insert(s.to_owned(), out.clone());
        out
    }

    /// One line (one record, as raw JSON) redacted: `Ok(None)` when
    /// nothing in it matched, a refusal (its words) when a match is where
    /// nothing can replace it.
    pub fn line(&mut self, raw: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let mut w = Walk {
            b: raw,
            i: 0,
            out: Vec::with_capacity(raw.len()),
            path: Vec::new(),
            changed: false,
        };
        w.value(self)?;
        // What follows the value (whitespace), as it is.
        w.out.extend_from_slice(raw.get(w.i..).unwrap_or_default());
        Ok(w.changed.then_some(w.out))
    }
}

/// A walk over one line's raw JSON, copying it, redacted, into `out`.
struct Walk<'b> {
    b: &'b [u8],
    i: usize,
    out: Vec<u8>,
    path: Vec<Seg>,
    changed: bool,
}

const NOT_JSON: &str = "a record that is not JSON";

impl Walk<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Copy whitespace.
    fn ws(&mut self) {
        while let Some(c) = self.peek().filter(u8::is_ascii_whitespace) {
            self.out.push(c);
            self.i += 1;
        }
    }

    fn copy(&mut self, c: u8) -> Result<(), String> {
        match self.peek() {
            Some(x) if x == c => {
                self.out.push(c);
                self.i += 1;
                Ok(())
            }
            _ => Err(NOT_JSON.into()),
        }
    }

    /// The string token at `i`: its bytes and its value (`None` when
    /// serde_json cannot hold it: a lone surrogate, kept as written).
    fn token(&mut self) -> Result<(&[u8], Option<String>), String> {
        let start = self.i;
        let mut j = start.checked_add(1).ok_or(NOT_JSON)?;
        loop {
            match self.b.get(j) {
                Some(b'\\') => j = j.checked_add(2).ok_or(NOT_JSON)?,
                Some(b'"') => break,
                Some(_) => j += 1,
                None => return Err(NOT_JSON.into()),
            }
        }
        self.i = j + 1;
        let token = self.b.get(start..=j).ok_or(NOT_JSON)?;
        Ok((token, serde_json::from_slice(token).ok()))
    }

    /// A string (a key when `key`), judged as `kind`.
    fn string(&mut self, r: &mut Redactor, kind: Kind) -> Result<Option<String>, String> {
        let (token, value) = self.token()?;
        let token = token.to_vec();
        let Some(value) = value else {
            self.out.extend_from_slice(&token);
            return Ok(None);
        };
        match r.string(&value, kind, &self.path)? {
            Some(new) => {
                self.out.extend_from_slice(&gojson::to_vec(&new));
                self.changed = true;
                Ok(Some(value))
            }
            None => {
                self.out.extend_from_slice(&token);
                Ok(Some(value))
            }
        }
    }

    fn value(&mut self, r: &mut Redactor) -> Result<(), String> {
        self.ws();
        match self.peek().ok_or(NOT_JSON)? {
            b'{' => {
                self.copy(b'{')?;
                let keys = key_kind(&self.path);
                self.ws();
                if self.peek() == Some(b'}') {
                    return self.copy(b'}');
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(NOT_JSON.into());
                    }
                    // The key is judged where it stands: its own name is
                    // the last step of the path.
                    let save = self.i;
                    let key = self.token()?.1.unwrap_or_default();
                    self.i = save;
                    self.path.push(Seg::Key(key));
                    self.string(r, keys)?;
                    self.ws();
                    self.copy(b':')?;
                    self.value(r)?;
                    self.path.pop();
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.copy(b',')?,
                        Some(b'}') => return self.copy(b'}'),
                        _ => return Err(NOT_JSON.into()),
                    }
                }
            }
            b'[' => {
                self.copy(b'[')?;
                self.ws();
                if self.peek() == Some(b']') {
                    return self.copy(b']');
                }
                loop {
                    self.path.push(Seg::Index);
                    self.value(r)?;
                    self.path.pop();
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.copy(b',')?,
                        Some(b']') => return self.copy(b']'),
                        _ => return Err(NOT_JSON.into()),
                    }
                }
            }
            b'"' => {
                let kind = value_kind(&self.path);
                self.string(r, kind).map(|_| ())
            }
            _ => {
                // A number, true, false or null: the journal's structure,
                // but inside data (a tool's input) a value like any other,
                // which a string can replace.
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|c| !matches!(c, b',' | b']' | b'}') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                let bytes = self.b.get(start..self.i).unwrap_or_default();
                let scalar = String::from_utf8_lossy(bytes).into_owned();
                let kind = match in_data(&self.path) {
                    true => Kind::Text,
                    false => Kind::Fixed,
                };
                match r.string(&scalar, kind, &self.path)? {
                    Some(new) => {
                        self.out.extend_from_slice(&gojson::to_vec(&new));
                        self.changed = true;
                    }
                    None => self.out.extend_from_slice(bytes),
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(patterns: &[&str], lines: &[&str]) -> (Vec<String>, u64) {
        let re: Vec<Regex> = patterns.iter().map(|p| Regex::new(p).unwrap()).collect();
        let mut r = Redactor::new(&re);
        let out = lines
            .iter()
            .map(|l| match r.line(l.as_bytes()).unwrap() {
                Some(b) => String::from_utf8(b).unwrap(),
                None => (*l).to_owned(),
            })
            .collect();
        (out, r.count)
    }

    #[test]
    fn input_keys_and_values_are_redacted_and_field_names_kept() {
        let (out, n) = redact(
            &["secret"],
            &[
                r#"{"seq":2,"assistant":{"message":{"content":[{"tool_use":{"id":"tu_secret","name":"secret_tool","input":{"secret": "a secret <b>", "n": [1, "secret"]}}}]}}}"#,
            ],
        );
        assert_eq!(n, 5);
        assert_eq!(
            out[0],
            r#"{"seq":2,"assistant":{"message":{"content":[{"tool_use":{"id":"tu_[redacted]","name":"[redacted]_tool","input":{"[redacted]": "a [redacted] \u003cb\u003e", "n": [1, "[redacted]"]}}}]}}}"#
        );
    }

    #[test]
    fn a_name_keeps_one_replacement_and_two_names_never_share_one() {
        let (out, n) = redact(
            &[r"k\d"],
            &[
                r#"{"tool_result":{"tool_use_id":"k1"}}"#,
                r#"{"tool_result":{"tool_use_id":"k2"}}"#,
                r#"{"call_approval":{"tool_use_id":"k1","tool_name":"x"}}"#,
            ],
        );
        assert_eq!(n, 3);
        assert_eq!(out[0], r#"{"tool_result":{"tool_use_id":"[redacted]"}}"#);
        assert_eq!(out[1], r#"{"tool_result":{"tool_use_id":"[redacted]-2"}}"#);
        assert_eq!(
            out[2],
            r#"{"call_approval":{"tool_use_id":"[redacted]","tool_name":"x"}}"#
        );
    }

    #[test]
    fn structure_is_refused_naming_the_field_and_the_run_id_stays_an_id() {
        let re = [Regex::new("2026").unwrap()];
        let mut r = Redactor::new(&re);
        let e = r
            .line(br#"{"seq":1,"meta":{"created":"2026-01-01T00:00:00Z"}}"#)
            .unwrap_err();
        assert!(e.contains("`meta.created`"), "{e}");
        let re = [Regex::new("seq").unwrap()];
        let e = Redactor::new(&re).line(br#"{"seq":1}"#).unwrap_err();
        assert!(e.contains("the field name `seq`"), "{e}");
        let re = [Regex::new("12").unwrap()];
        let e = Redactor::new(&re).line(br#"{"seq":12}"#).unwrap_err();
        assert!(e.contains("`seq`"), "{e}");
        let (out, n) = redact(&["acme"], &[r#"{"meta":{"run_id":"acme-run"}}"#]);
        assert_eq!(
            (out[0].as_str(), n),
            (r#"{"meta":{"run_id":"redacted-run"}}"#, 1)
        );
    }
}
