//! Verification: findings over a journal's raw bytes (SPEC 11). Unlike the
//! reader, verify never stops at the first problem: every line is looked at
//! and every problem becomes a finding with its line, byte offset and seq.

use crate::gojson::scan::{scan, within_depth, Note, SCHEMA_DEPTH};
use crate::record::{Payload, Record};
pub use crate::schema::RecordCheck;
use crate::schema::Violation;

mod bytes;
mod code;
#[cfg(test)]
mod tests;

pub use bytes::verify_bytes;
pub use code::{excerpt, Code, Finding, Severity};

/// The raw JSON values a record holds as written: tool inputs, provider
/// blocks' `raw`, blocks of another shape, a terminal's summary.
fn raw_values(r: &Record) -> impl Iterator<Item = &serde_json::value::RawValue> {
    use crate::record::Block;
    let blocks = match &r.payload {
        Some(Payload::Assistant(a)) => a.message.blocks(),
        Some(Payload::User(u)) => u.message.blocks(),
        _ => &[],
    };
    let summary = match &r.payload {
        Some(Payload::Terminal(t)) => t.summary.as_deref(),
        _ => None,
    };
    // Per block: its one raw value, or an other-shaped block's members
    // (no allocation per block).
    blocks
        .iter()
        .flat_map(|b| {
            let one = match b {
                Block::ToolUse(t) => t.input.as_deref(),
                Block::Provider(p) => p.raw.as_deref(),
                _ => None,
            };
            let members: &[(String, Box<serde_json::value::RawValue>)] = match b {
                Block::Other(m) => &m.0,
                _ => &[],
            };
            one.into_iter().chain(members.iter().map(|(_, v)| &**v))
        })
        .chain(summary)
}

/// One line as the agent reads it, with what verify and validate say of it.
#[derive(Debug)]
pub struct Checked {
    /// The record as the agent reads it.
    pub record: Record,
    /// What the agent reads differently from the bytes (a duplicate key,
    /// invalid UTF-8): warnings, the line is read.
    pub notes: Vec<Note>,
    /// How the record breaks the check; empty without one.
    pub violations: Vec<Violation>,
}

/// Decode one line as every reader does ([`Record::decode`]), and when there
/// is a check, run it on the same parse. The JSON value the check needs is
/// parsed once and then moved into the record, so the check costs the
/// validation, not a second parse. `verify` and `validate` both come here,
/// so they cannot disagree with the readers on whether a line parses.
pub fn check_line(
    bytes: &[u8],
    check: Option<&dyn RecordCheck>,
) -> Result<Checked, crate::record::DecodeError> {
    let Some(check) = check else {
        // The readers' fast path (`Record::decode`): what serde_json reads
        // is what Go reads. Of what Go reads other than as written, what the
        // record holds raw can still hold some (a repeated key, a lone
        // surrogate: in a decoded field they make serde_json refuse), so
        // those are scanned. Not scanned here: a repeated key in a map
        // (memory revisions: Go's map takes the last too) and anything
        // inside a field the agent ignores; `verify` with schemas scans
        // whole lines and warns of those as well (docs/OUTPUT.md).
        if let Ok(record) = Record::decode_scanned(bytes) {
            if within_depth(bytes) {
                let notes = raw_values(&record)
                    .filter_map(|raw| scan(raw.get().as_bytes()).ok())
                    .flat_map(|s| s.notes)
                    .collect();
                return Ok(Checked {
                    record,
                    notes,
                    violations: Vec::new(),
                });
            }
        }
        let scanned = scan(bytes)?;
        return Ok(Checked {
            record: Record::decode_scanned(&scanned.bytes)?,
            notes: scanned.notes,
            violations: Vec::new(),
        });
    };
    // The fast path: a value built in one pass, refused at a repeated key.
    // When it is built, the scan would note nothing and change no byte.
    if let Some((v, depth)) = crate::gojson::unique::parse(bytes) {
        if depth <= SCHEMA_DEPTH {
            let violations = check.check(&v);
            return Ok(Checked {
                record: Record::from_value_of(v, bytes)?,
                notes: Vec::new(),
                violations,
            });
        }
    }
    check_line_scanned(bytes, check)
}

/// [`check_line`] with a schema check, the whole line scanned first (what
/// the fast path leaves to it, and what a test compares it with).
#[doc(hidden)]
// For tests (journal/tests/go_decode.rs), not API: a front end calls `check_line`.
#[doc(hidden)]
pub fn check_line_scanned(
    bytes: &[u8],
    check: &dyn RecordCheck,
) -> Result<Checked, crate::record::DecodeError> {
    let scanned = scan(bytes)?;
    let notes = scanned.notes.clone();
    match crate::gojson::unique::value(&scanned.shallow()) {
        Ok(v) => {
            let violations = check.check(&v);
            // A value cut for the schema check is not the record.
            let record = if scanned.depth > SCHEMA_DEPTH {
                Record::decode_scanned(&scanned.bytes)?
            } else {
                Record::from_value_of(v, &scanned.bytes)?
            };
            Ok(Checked {
                record,
                notes,
                violations,
            })
        }
        // Valid for the reader but not representable as a value (a number
        // beyond f64, say): decode as the reader does, say it went unchecked.
        Err(e) => Ok(Checked {
            record: Record::decode_scanned(&scanned.bytes)?,
            notes,
            violations: vec![Violation::plain(
                None,
                format!("the record could not be checked against its schema: {e}"),
            )],
        }),
    }
}

/// The result of verifying one journal (or one store-level object).
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// What was found, in journal order.
    pub findings: Vec<Finding>,
    /// How many records were read.
    pub records: u64,
    /// How many bytes were read.
    pub bytes: u64,
}

/// The report of a run that could not be read at all.
pub fn unreadable(run: &str, e: &crate::Error) -> Report {
    Report {
        findings: vec![file_finding(
            run,
            Code::Unreadable,
            format!("cannot read the run: {e}"),
        )],
        ..Report::default()
    }
}

/// A finding about a run (or the store) as a whole: no line, no seq.
pub(crate) fn file_finding(run: &str, code: Code, message: String) -> Finding {
    Finding {
        run: run.to_owned(),
        code,
        severity: code.severity(),
        line: None,
        offset: None,
        seq: None,
        message,
        excerpt: None,
        remedy: code.remedy(),
    }
}
