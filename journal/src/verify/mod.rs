//! Verification: findings over a journal's raw bytes (SPEC 11). Unlike the
//! reader, verify never stops at the first problem: every line is looked at
//! and every problem becomes a finding with its line, byte offset and seq.

use crate::fold::{fold_with, FoldOptions};
use crate::gojson::scan::{scan, within_depth, Note, SCHEMA_DEPTH};
use crate::lines::{self, RawLine};
use crate::record::{Kind, Payload, Record, VERSION, VERSION_AUGUST};
pub use crate::schema::RecordCheck;
use crate::schema::Violation;
use std::collections::HashSet;

mod code;

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
    pub findings: Vec<Finding>,
    pub records: u64,
    pub bytes: u64,
}

struct Sink<'a> {
    run: &'a str,
    out: Vec<Finding>,
}

impl Sink<'_> {
    fn add(&mut self, code: Code, at: Option<&RawLine>, seq: Option<u64>, msg: String) {
        self.out.push(Finding {
            run: self.run.to_owned(),
            code,
            severity: code.severity(),
            line: at.map(|l| l.line),
            offset: at.map(|l| l.offset),
            seq,
            message: msg,
            excerpt: at.map(|l| excerpt(l.bytes)),
            remedy: code.remedy(),
        });
    }
    fn has_error(&self) -> bool {
        self.out.iter().any(|f| f.severity == Severity::Error)
    }
}

/// Verify one journal's bytes, stored under `run`.
pub fn verify_bytes(run: &str, bytes: &[u8], check: Option<&dyn RecordCheck>) -> Report {
    let mut sink = Sink {
        run,
        out: Vec::new(),
    };
    let all: Vec<RawLine> = lines::split(bytes).collect();
    let mut parsed: Vec<(RawLine, Record)> = Vec::with_capacity(all.len());
    let mut checked: Vec<Vec<Violation>> = Vec::with_capacity(all.len());
    let mut after_corrupt = vec![];
    let mut skip_gap = false;
    for (i, l) in all.iter().enumerate() {
        let last = i + 1 == all.len();
        match check_line(l.bytes, check) {
            Ok(c) => {
                // An unknown protocol is already a finding; its schema is
                // unknown.
                checked.push(match c.record.kind() {
                    Some(_) => c.violations,
                    None => Vec::new(),
                });
                for n in &c.notes {
                    let code = match n {
                        Note::DuplicateKey { .. } => Code::DuplicateKey,
                        Note::InvalidUtf8 { .. } | Note::LoneSurrogate { .. } => Code::InvalidUtf8,
                    };
                    sink.add(code, Some(l), Some(c.record.seq), n.to_string());
                }
                let r = c.record;
                if last && !l.terminated {
                    sink.add(
                        Code::UnterminatedFinalRecord,
                        Some(l),
                        Some(r.seq),
                        "the final record has no newline; the next append must add one first"
                            .into(),
                    );
                }
                after_corrupt.push(skip_gap);
                skip_gap = false;
                parsed.push((*l, r));
            }
            Err(e) if last => {
                let (code, what) = if l.terminated {
                    (
                        Code::GarbageFinalLine,
                        "the final line is terminated but does not parse",
                    )
                } else {
                    (
                        Code::TornTail,
                        "the final line is incomplete (a write cut short)",
                    )
                };
                sink.add(
                    code,
                    Some(l),
                    None,
                    format!(
                        "{what}: {e}; readers drop it, and a repair cuts it and keeps the bytes"
                    ),
                );
            }
            Err(e) => {
                sink.add(
                    Code::InteriorCorruption,
                    Some(l),
                    None,
                    format!("line does not parse: {e}; the run cannot be read past this point, and repair will not cut interior lines"),
                );
                skip_gap = true;
            }
        }
    }
    let mut report = Report {
        records: parsed.len() as u64,
        bytes: bytes.len() as u64,
        findings: Vec::new(),
    };
    if parsed.is_empty() {
        sink.add(
            Code::EmptyJournal,
            None,
            None,
            "the journal holds no records".into(),
        );
        report.findings = sink.out;
        return report;
    }

    let mut prev: u64 = 0;
    let mut turn: Option<(HashSet<String>, HashSet<String>)> = None;
    let august = parsed.first().is_some_and(
        |(_, r)| matches!(&r.payload, Some(Payload::Meta(m)) if m.version == VERSION_AUGUST),
    );
    // SPEC 11: each of these is reported once per run, at its first record.
    let mut mixed_reported = false;
    let mut unknown: Vec<String> = Vec::new();
    let mut unknown_at: Option<(RawLine, u64)> = None;
    // The run's token totals as Go's int64 adds them: one that passes the
    // largest there is wraps negative in the agent (and stops at the
    // maximum here), reported once, at the record it happens.
    let mut totals = [0i64; 5];
    let mut overflowed = false;
    for (k, (l, r)) in parsed.iter().enumerate() {
        let seq = Some(r.seq);
        let kind = r.kind();
        if let (Some(Payload::Assistant(a)), false) = (&r.payload, overflowed) {
            let names = [
                "in_tokens",
                "out_tokens",
                "cache_read_tokens",
                "cache_create_tokens",
                "thinking_tokens",
            ];
            let add = [
                a.in_tokens,
                a.out_tokens,
                a.cache_read_tokens,
                a.cache_create_tokens,
                a.thinking_tokens,
            ];
            for ((total, n), name) in totals.iter_mut().zip(add).zip(names) {
                match total.checked_add(n) {
                    Some(t) => *total = t,
                    None => {
                        overflowed = true;
                        sink.add(
                            Code::CounterOverflow,
                            Some(l),
                            seq,
                            format!("the run's {name} total passes the largest 64-bit integer at this record: the agent's counter wraps to a negative number here (fisk-admin's stops at the maximum), so its budget check and stats read nonsense from here on"),
                        );
                        break;
                    }
                }
            }
        }
        // The top-level keys a structural finding below is about: a schema
        // violation there is the same finding again (b-13).
        let mut covered: Vec<&str> = Vec::new();
        match kind {
            None if r.optional => sink.add(
                Code::SkippedOptional,
                Some(l),
                seq,
                format!("unknown protocol {:?} is optional and is skipped", r.protocol),
            ),
            None => sink.add(
                Code::UnknownProtocol,
                Some(l),
                seq,
                format!(
                    "unknown protocol {:?} is not marked optional: readers refuse the journal (a newer agent wrote it?)",
                    r.protocol
                ),
            ),
            Some(kind) if r.payload.is_none() => {
                covered.push(kind.key());
                sink.add(
                    Code::MissingPayload,
                    Some(l),
                    seq,
                    format!("the `{}` payload is absent or null", kind.key()),
                )
            }
            Some(_) => {}
        }
        if kind.is_some() && !r.extra_keys.is_empty() {
            covered.extend(r.extra_keys.iter().map(String::as_str));
            sink.add(
                Code::ExtraPayload,
                Some(l),
                seq,
                format!("unexpected top-level keys: {}", r.extra_keys.join(", ")),
            );
        }
        if k == 0 && kind != Some(Kind::Meta) {
            sink.add(
                Code::NoMeta,
                Some(l),
                seq,
                format!("the first record is {:?}, not a meta record", r.protocol),
            );
        }
        if kind == Some(Kind::Meta) {
            if k > 0 {
                sink.add(
                    Code::DuplicateMeta,
                    Some(l),
                    seq,
                    "a second meta record".into(),
                );
            } else if r.seq != 1 {
                covered.push("seq");
                sink.add(
                    Code::MetaSeq,
                    Some(l),
                    seq,
                    format!("the meta record has seq {}, not 1", r.seq),
                );
            }
        }
        if k > 0 {
            if r.seq <= prev {
                sink.add(
                    Code::SeqNotIncreasing,
                    Some(l),
                    seq,
                    format!("seq {} after seq {prev}", r.seq),
                );
            } else if r.seq > prev + 1 && !after_corrupt.get(k).copied().unwrap_or(false) {
                sink.add(
                    Code::SeqGap,
                    Some(l),
                    seq,
                    format!(
                        "seq {} follows seq {prev}: {} record(s) lost",
                        r.seq,
                        r.seq - prev - 1
                    ),
                );
            }
        }
        prev = prev.max(r.seq);

        if let Some(p) = &r.payload {
            let fields = p.unknown_fields();
            if !fields.is_empty() {
                unknown_at.get_or_insert((*l, r.seq));
                for f in fields {
                    if !unknown.contains(&f) {
                        unknown.push(f);
                    }
                }
            }
            if august && !mixed_reported {
                let field = if r.time.is_some() {
                    Some("time")
                } else {
                    p.current_generation_field()
                };
                if let Some(field) = field {
                    mixed_reported = true;
                    sink.add(
                        Code::MixedGeneration,
                        Some(l),
                        seq,
                        format!("a version-{VERSION_AUGUST} journal holding `{field}`, a field only version {VERSION} writes: written by both generations of the agent? The current agent will not read it until it is upgraded"),
                    );
                }
            }
        }
        match &r.payload {
            Some(Payload::Meta(m)) if k == 0 => {
                if m.version == VERSION_AUGUST {
                    sink.add(Code::VersionThree, Some(l), seq, format!("format version {VERSION_AUGUST} (the August 2026 agent): the current agent will not list or resume it until it is upgraded to version {VERSION}"));
                } else if m.version > VERSION_AUGUST {
                    sink.add(Code::VersionNewer, Some(l), seq, format!("format version {} is newer than {VERSION_AUGUST}: a newer agent wrote this run; inspect it with that agent's tools", m.version));
                } else if m.version != VERSION {
                    sink.add(Code::VersionOlder, Some(l), seq, format!("format version {} is older than the agent's formats ({VERSION} and {VERSION_AUGUST}): readable here, but no agent resumes it", m.version));
                }
                if m.run_id != run {
                    sink.add(
                        Code::RunIdMismatch,
                        Some(l),
                        seq,
                        format!(
                            "meta.run_id is {:?} but the run is stored as {run:?}",
                            m.run_id
                        ),
                    );
                }
            }
            Some(Payload::Assistant(a)) => {
                turn = Some((
                    a.message.tool_use_ids().map(str::to_owned).collect(),
                    HashSet::new(),
                ));
            }
            Some(Payload::User(_)) => turn = None,
            Some(p @ (Payload::ToolResult(_) | Payload::Deferred(_))) => {
                let (id, is_result) = match p {
                    Payload::ToolResult(t) => (&t.tool_use_id, true),
                    Payload::Deferred(d) => (&d.tool_use_id, false),
                    _ => continue,
                };
                match turn.as_mut() {
                    None => sink.add(
                        Code::OrphanResult,
                        Some(l),
                        seq,
                        format!(
                            "a {} for {id:?} with no open assistant turn",
                            r.protocol.rsplit('.').next().unwrap_or("record")
                        ),
                    ),
                    Some((asked, answered)) => {
                        if !asked.contains(id.as_str()) {
                            sink.add(
                                Code::UnknownToolUse,
                                Some(l),
                                seq,
                                format!("tool_use id {id:?} was not asked for by the open turn"),
                            );
                        }
                        if is_result && !answered.insert(id.clone()) {
                            sink.add(
                                Code::DuplicateResult,
                                Some(l),
                                seq,
                                format!("a second tool_result for {id:?}"),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        for v in checked.get_mut(k).map(std::mem::take).unwrap_or_default() {
            if !covered.iter().any(|key| v.is_about_key(key)) {
                sink.add(Code::Schema, Some(l), seq, v.describe());
            }
        }
    }

    if let Some((l, seq)) = unknown_at {
        unknown.sort();
        sink.add(
            Code::UnknownField,
            Some(&l),
            Some(seq),
            format!(
                "fields this tool does not know (a newer agent wrote them; readers pass over them): {}",
                unknown.join(", ")
            ),
        );
    }
    let opts = FoldOptions::inspect();
    let (lines_of, records): (Vec<RawLine>, Vec<Record>) = parsed.into_iter().unzip();
    match fold_with(records, opts) {
        Err(e) if !sink.has_error() => {
            let at = e
                .seq()
                .and_then(|s| {
                    // The record is gone (moved into the fold); find its line.
                    lines_of
                        .iter()
                        .find(|l| Record::decode(l.bytes).is_ok_and(|r| r.seq == s))
                })
                .copied();
            sink.add(
                Code::Fold,
                at.as_ref(),
                e.seq(),
                format!("the fold refuses the journal: {e}"),
            );
        }
        Err(_) => {}
        Ok(st) => {
            if let Some(p) = st.pending.as_ref().filter(|p| !p.open_deferrals.is_empty()) {
                let names: Vec<String> = p
                    .open_deferrals
                    .iter()
                    .map(|d| format!("{} ({})", d.tool_use_id, d.tool_name))
                    .collect();
                sink.add(
                    Code::OpenDeferrals,
                    None,
                    None,
                    format!("waiting on {}", names.join(", ")),
                );
            }
        }
    }
    report.findings = sink.out;
    report
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
