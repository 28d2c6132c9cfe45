//! Verification: findings over a journal's raw bytes (SPEC 11). Unlike the
//! reader, verify never stops at the first problem: every line is looked at
//! and every problem becomes a finding with its line, byte offset and seq.

use crate::fold::{fold_with, FoldOptions};
use crate::gojson::scan::{scan, within_depth, Note, SCHEMA_DEPTH};
use crate::lines::{self, RawLine};
use crate::record::{Kind, Payload, Record, VERSION, VERSION_AUGUST};
use crate::schema::Violation;
use serde::Serialize;
use std::collections::HashSet;

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub run: String,
    pub code: &'static str,
    pub severity: Severity,
    pub line: Option<usize>,
    pub offset: Option<u64>,
    pub seq: Option<u64>,
    pub message: String,
    /// The offending line's bytes (for display; never printed unsanitised).
    #[serde(skip)]
    pub excerpt: Option<Vec<u8>>,
    /// What clears it: the code's [`Code::remedy`], or one particular to
    /// the finding (which permissions to fix).
    #[serde(skip)]
    pub remedy: Option<crate::Remedy>,
}

/// Every finding code of SPEC 11 (and the two of JetStream), with its
/// severity in the same place: a new code cannot forget its severity, and
/// a test ties the list to `schemas/output/verify.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    TornTail,
    UnterminatedFinalRecord,
    GarbageFinalLine,
    InteriorCorruption,
    EmptyJournal,
    NoMeta,
    MetaSeq,
    DuplicateMeta,
    SeqNotIncreasing,
    SeqGap,
    VersionThree,
    MixedGeneration,
    VersionNewer,
    VersionOlder,
    UnknownProtocol,
    SkippedOptional,
    UnknownField,
    MissingPayload,
    ExtraPayload,
    OrphanResult,
    UnknownToolUse,
    DuplicateResult,
    Schema,
    RunIdMismatch,
    InvalidId,
    Permissions,
    Symlink,
    OrphanLock,
    Live,
    OpenDeferrals,
    Fold,
    Unreadable,
    StreamConfig,
    SubjectMismatch,
    DuplicateKey,
    InvalidUtf8,
    CounterOverflow,
    OrphanMessages,
}

impl Code {
    pub const ALL: [Code; 38] = [
        Code::TornTail,
        Code::UnterminatedFinalRecord,
        Code::GarbageFinalLine,
        Code::InteriorCorruption,
        Code::EmptyJournal,
        Code::NoMeta,
        Code::MetaSeq,
        Code::DuplicateMeta,
        Code::SeqNotIncreasing,
        Code::SeqGap,
        Code::VersionThree,
        Code::MixedGeneration,
        Code::VersionNewer,
        Code::VersionOlder,
        Code::UnknownProtocol,
        Code::SkippedOptional,
        Code::UnknownField,
        Code::MissingPayload,
        Code::ExtraPayload,
        Code::OrphanResult,
        Code::UnknownToolUse,
        Code::DuplicateResult,
        Code::Schema,
        Code::RunIdMismatch,
        Code::InvalidId,
        Code::Permissions,
        Code::Symlink,
        Code::OrphanLock,
        Code::Live,
        Code::OpenDeferrals,
        Code::Fold,
        Code::Unreadable,
        Code::StreamConfig,
        Code::SubjectMismatch,
        Code::DuplicateKey,
        Code::InvalidUtf8,
        Code::CounterOverflow,
        Code::OrphanMessages,
    ];

    /// The code as SPEC 11 spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::TornTail => "torn-tail",
            Code::UnterminatedFinalRecord => "unterminated-final-record",
            Code::GarbageFinalLine => "garbage-final-line",
            Code::InteriorCorruption => "interior-corruption",
            Code::EmptyJournal => "empty-journal",
            Code::NoMeta => "no-meta",
            Code::MetaSeq => "meta-seq",
            Code::DuplicateMeta => "duplicate-meta",
            Code::SeqNotIncreasing => "seq-not-increasing",
            Code::SeqGap => "seq-gap",
            Code::VersionThree => "version-3",
            Code::MixedGeneration => "mixed-generation",
            Code::VersionNewer => "version-newer",
            Code::VersionOlder => "version-older",
            Code::UnknownProtocol => "unknown-protocol",
            Code::SkippedOptional => "skipped-optional",
            Code::UnknownField => "unknown-field",
            Code::MissingPayload => "missing-payload",
            Code::ExtraPayload => "extra-payload",
            Code::OrphanResult => "orphan-result",
            Code::UnknownToolUse => "unknown-tool-use",
            Code::DuplicateResult => "duplicate-result",
            Code::Schema => "schema",
            Code::RunIdMismatch => "run-id-mismatch",
            Code::InvalidId => "invalid-id",
            Code::Permissions => "permissions",
            Code::Symlink => "symlink",
            Code::OrphanLock => "orphan-lock",
            Code::Live => "live",
            Code::OpenDeferrals => "open-deferrals",
            Code::Fold => "fold",
            Code::Unreadable => "unreadable",
            Code::StreamConfig => "stream-config",
            Code::SubjectMismatch => "subject-mismatch",
            Code::DuplicateKey => "duplicate-key",
            Code::InvalidUtf8 => "invalid-utf8",
            Code::CounterOverflow => "counter-overflow",
            Code::OrphanMessages => "orphan-messages",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Code::TornTail
            | Code::UnterminatedFinalRecord
            | Code::GarbageFinalLine
            | Code::VersionThree
            | Code::MixedGeneration
            | Code::VersionOlder
            | Code::UnknownToolUse
            | Code::DuplicateResult
            | Code::InvalidId
            | Code::Permissions
            | Code::Symlink
            | Code::DuplicateKey
            | Code::InvalidUtf8
            | Code::CounterOverflow => Severity::Warning,
            Code::InteriorCorruption
            | Code::EmptyJournal
            | Code::NoMeta
            | Code::MetaSeq
            | Code::DuplicateMeta
            | Code::SeqNotIncreasing
            | Code::SeqGap
            | Code::VersionNewer
            | Code::UnknownProtocol
            | Code::MissingPayload
            | Code::ExtraPayload
            | Code::OrphanResult
            | Code::Schema
            | Code::RunIdMismatch
            | Code::Fold
            | Code::Unreadable
            | Code::StreamConfig
            | Code::SubjectMismatch
            | Code::OrphanMessages => Severity::Error,
            Code::SkippedOptional
            | Code::UnknownField
            | Code::OrphanLock
            | Code::Live
            | Code::OpenDeferrals => Severity::Info,
        }
    }

    /// The action that clears a finding of this code, where one does.
    pub fn remedy(self) -> Option<crate::Remedy> {
        use crate::Remedy as R;
        match self {
            Code::TornTail | Code::UnterminatedFinalRecord | Code::GarbageFinalLine => {
                Some(R::Repair)
            }
            Code::VersionThree | Code::MixedGeneration => Some(R::Upgrade),
            Code::OpenDeferrals => Some(R::Answer),
            // The reader stops at the first bad record; migrate copies
            // the records before it.
            Code::InteriorCorruption
            | Code::SeqGap
            | Code::SeqNotIncreasing
            | Code::DuplicateMeta
            | Code::SubjectMismatch
            | Code::OrphanMessages => Some(R::Salvage),
            Code::EmptyJournal => Some(R::Remove),
            Code::Permissions => Some(R::ChmodJournal),
            Code::StreamConfig => Some(R::CheckStream),
            _ => None,
        }
    }

    pub fn parse(code: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

/// The severity of a code given as text (an unknown one is an error).
pub fn severity_of(code: &str) -> Severity {
    Code::parse(code).map_or(Severity::Error, Code::severity)
}

/// A per-record check run by verify beside its own (the schema check).
pub trait RecordCheck: Sync {
    /// How the record breaks the check; empty when it passes.
    fn check(&self, record: &serde_json::Value) -> Vec<Violation>;
}

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
    let scanned = scan(bytes)?;
    let notes = scanned.notes.clone();
    match serde_json::from_slice::<serde_json::Value>(&scanned.shallow()) {
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
            code: code.as_str(),
            severity: code.severity(),
            line: at.map(|l| l.line),
            offset: at.map(|l| l.offset),
            seq,
            message: msg,
            excerpt: at.map(|l| l.bytes.iter().take(4096).copied().collect()),
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
    let opts = FoldOptions {
        any_version: true,
        until_seq: None,
    };
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
        findings: vec![Finding {
            severity: Severity::Error,
            ..file_finding(run, Code::Unreadable, format!("cannot read the run: {e}"))
        }],
        ..Report::default()
    }
}

/// A finding about a run (or the store) as a whole: no line, no seq.
pub(crate) fn file_finding(run: &str, code: Code, message: String) -> Finding {
    Finding {
        run: run.to_owned(),
        code: code.as_str(),
        severity: code.severity(),
        line: None,
        offset: None,
        seq: None,
        message,
        excerpt: None,
        remedy: code.remedy(),
    }
}

#[cfg(test)]
mod code_tests {
    use super::*;

    /// The output contract lists exactly the codes verify can emit.
    #[test]
    fn every_code_is_in_the_output_schema_and_no_other() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/output/verify.json"))
                .unwrap_or_default();
        let mut listed: Vec<&str> = schema
            .pointer("/$defs/code/enum")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        listed.sort_unstable();
        let mut ours: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        ours.sort_unstable();
        assert_eq!(ours, listed);
        for c in Code::ALL {
            assert_eq!(Code::parse(c.as_str()), Some(c));
        }
    }
}
