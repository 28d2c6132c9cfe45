//! Validation of a journal's lines against the record schemas (`validate`):
//! every line decoded as the readers decode it first (Go's reading, through
//! [`crate::verify::check_line`]), so validate never passes a line the
//! readers refuse, then checked against the [`SchemaSet`].

use crate::schema::{SchemaSet, Violation};

/// `validate`'s verdict on one line that breaks a schema or the reader:
/// one per violation, with where the line is (a run's, or a file's).
/// Serialized as `validate`'s JSON Lines row (`schemas/output/validate.json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LineVerdict {
    /// The run's id, when the line is a run's.
    pub run: Option<String>,
    /// The file, when the line is a file's.
    pub file: Option<String>,
    /// The line's number, where known.
    pub line: Option<usize>,
    /// The record's seq, where known.
    pub seq: Option<u64>,
    /// The record's protocol, where known.
    pub protocol: Option<String>,
    /// JSON pointer into the record.
    pub instance_path: String,
    /// The schema file, when one applies.
    pub schema: Option<String>,
    /// The keyword's location in the schema.
    pub keyword_location: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The line, shortened for a diagnostic (not part of the row).
    #[serde(skip)]
    pub excerpt: Vec<u8>,
}

/// `validate`'s verdict on one journal (a run's bytes or a file's): how
/// many lines were checked, how many passed, and a [`LineVerdict`] per
/// violation of those that did not.
#[derive(Debug, Default)]
pub struct JournalVerdict {
    /// How many lines were checked.
    pub records: u64,
    /// How many passed.
    pub valid: u64,
    /// How many did not.
    pub invalid: u64,
    /// One row per violation.
    pub rows: Vec<LineVerdict>,
}

/// A line of JSON the agent's decoder refuses (a field of the wrong type,
/// `1.0` for an integer): said so, with what the schema says of it too.
fn refused(
    set: &SchemaSet,
    bytes: &[u8],
    e: &crate::record::DecodeError,
) -> (Vec<Violation>, Option<u64>) {
    let mut out = vec![Violation::plain(
        None,
        format!("the agent cannot read this record (the line does not parse for it): {e}"),
    )];
    let value = crate::gojson::scan::scan(bytes)
        .ok()
        .and_then(|s| crate::gojson::unique::value(&s.shallow()).ok());
    let seq = value.as_ref().and_then(|v| v.get("seq")?.as_u64());
    if let Some(v) = value {
        out.extend(set.validate(&v));
    }
    (out, seq)
}

/// Check every line of one journal's bytes against `set`, as every reader
/// decodes it first (Go's reading), so validate never passes a line the
/// readers refuse. `run` or `file` names it in each verdict.
pub fn check_lines(
    set: &SchemaSet,
    run: Option<&str>,
    file: Option<&str>,
    bytes: &[u8],
) -> JournalVerdict {
    let mut t = JournalVerdict::default();
    let all: Vec<_> = crate::lines::split(bytes).collect();
    for (i, l) in all.iter().enumerate() {
        let last = i + 1 == all.len();
        let (violations, seq) = match crate::verify::check_line(l.bytes, Some(set)) {
            Ok(c) => (c.violations, Some(c.record.seq)),
            Err(e) if e.json_ok => refused(set, l.bytes, &e),
            Err(e)
                if crate::lines::Verdict::of(false, last, l.terminated)
                    == crate::lines::Verdict::Torn =>
            {
                (
                    vec![Violation::plain(
                        None,
                        format!("torn final line (a write cut short; readers drop it): {e}"),
                    )],
                    None,
                )
            }
            Err(e) => (
                vec![Violation::plain(None, format!("the line is not JSON: {e}"))],
                None,
            ),
        };
        t.records += 1;
        if violations.is_empty() {
            t.valid += 1;
            continue;
        }
        t.invalid += 1;
        for v in violations {
            t.rows.push(LineVerdict {
                run: run.map(str::to_owned),
                file: file.map(str::to_owned),
                line: Some(l.line),
                seq,
                protocol: v.protocol,
                instance_path: v.instance_path,
                schema: v.schema,
                keyword_location: v.keyword_location,
                message: v.message,
                excerpt: crate::verify::excerpt(l.bytes),
            });
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_verdict_counts_lines_and_names_each_violation() {
        let set = SchemaSet::embedded().unwrap();
        let t = check_lines(&set, Some("r"), None, b"not json\n{\"seq\":");
        assert_eq!((t.records, t.valid, t.invalid), (2, 0, 2));
        assert!(
            t.rows[0].message.starts_with("the line is not JSON"),
            "{t:?}"
        );
        assert!(t.rows[1].message.starts_with("torn final line"), "{t:?}");
        assert_eq!(t.rows[1].line, Some(2));
        assert_eq!(t.rows[0].run.as_deref(), Some("r"));
    }
}
