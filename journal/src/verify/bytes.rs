//! [`verify_bytes`], one journal's bytes verified in passes: the lines
//! (each decoded as the readers decode it, the final line classified by
//! the torn-tail rule), then each record in order (its counters, shape,
//! place, seq, generation, meta, turn, schema), then what is reported once
//! per run (unknown fields), then the fold. The per-record checks are run
//! record by record, all of them on one record before the next, because
//! the findings' order is part of the output: a record's findings come
//! together, in the order the checks are listed.

use super::{check_line, excerpt, Code, Finding, RecordCheck, Report, Severity};
use crate::fold::{fold_with, FoldOptions};
use crate::gojson::scan::Note;
use crate::lines::{self, RawLine, Verdict};
use crate::record::{Kind, Payload, Record, VERSION, VERSION_AUGUST};
use crate::schema::Violation;
use std::collections::HashSet;

/// Where findings go, in the order they are found.
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

/// A line that decodes, with what the schema check said of it.
struct Parsed<'a> {
    raw: RawLine<'a>,
    record: Record,
    violations: Vec<Violation>,
    /// The line follows one that does not decode: a seq gap here is that
    /// line's, already reported.
    after_corrupt: bool,
}

/// Verify one journal's bytes, stored under `run`: every finding of SPEC 11
/// that the bytes alone show, with the schema check `check` when given.
///
/// ```
/// use journal::verify::{verify_bytes, Code, Severity};
///
/// let good = include_bytes!("../../../testdata/agent-journals/v1/g-simple-completed.json");
/// let report = verify_bytes("g-simple-completed", good, None);
/// assert_eq!(report.records, 3);
/// assert!(report.findings.iter().all(|f| f.severity != Severity::Error));
///
/// // The same journal with a write torn off at its end.
/// let mut torn = good.to_vec();
/// torn.extend_from_slice(br#"{"seq":4,"protoc"#);
/// let report = verify_bytes("g-simple-completed", &torn, None);
/// assert!(report.findings.iter().any(|f| f.code == Code::TornTail));
/// ```
pub fn verify_bytes(run: &str, bytes: &[u8], check: Option<&dyn RecordCheck>) -> Report {
    let mut sink = Sink {
        run,
        out: Vec::new(),
    };
    let parsed = lines_pass(&mut sink, bytes, check);
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
    let mut records = Records::new(&parsed);
    for (k, p) in parsed.iter().enumerate() {
        records.check(&mut sink, k, p);
    }
    records.unknown_fields(&mut sink);
    fold_pass(&mut sink, parsed);
    report.findings = sink.out;
    report
}

/// Pass 1: every line decoded as the readers decode it; what the decoding
/// notes, and the lines that do not decode (the final one by the torn-tail
/// rule), are findings. The lines that decode, in order.
fn lines_pass<'a>(
    sink: &mut Sink,
    bytes: &'a [u8],
    check: Option<&dyn RecordCheck>,
) -> Vec<Parsed<'a>> {
    let all: Vec<RawLine> = lines::split(bytes).collect();
    let mut parsed = Vec::with_capacity(all.len());
    let mut after_corrupt = false;
    for (i, l) in all.iter().enumerate() {
        let last = i + 1 == all.len();
        let c = match check_line(l.bytes, check) {
            Ok(c) => c,
            Err(e) => {
                after_corrupt |= bad_line(sink, l, last, &e);
                continue;
            }
        };
        for n in &c.notes {
            let code = match n {
                Note::DuplicateKey { .. } => Code::DuplicateKey,
                Note::InvalidUtf8 { .. } | Note::LoneSurrogate { .. } => Code::InvalidUtf8,
            };
            sink.add(code, Some(l), Some(c.record.seq), n.to_string());
        }
        if Verdict::of(true, last, l.terminated) == Verdict::Unterminated {
            sink.add(
                Code::UnterminatedFinalRecord,
                Some(l),
                Some(c.record.seq),
                "the final record has no newline; the next append must add one first".into(),
            );
        }
        parsed.push(Parsed {
            raw: *l,
            // An unknown protocol is already a finding; its schema is
            // unknown.
            violations: match c.record.kind() {
                Some(_) => c.violations,
                None => Vec::new(),
            },
            record: c.record,
            after_corrupt: std::mem::take(&mut after_corrupt),
        });
    }
    parsed
}

/// The finding for a line that does not decode; whether it is interior
/// corruption (the next line's seq gap is then this line's).
fn bad_line(sink: &mut Sink, l: &RawLine, last: bool, e: &crate::record::DecodeError) -> bool {
    let (code, what) = match Verdict::of(false, last, l.terminated) {
        Verdict::Garbage => (
            Code::GarbageFinalLine,
            "the final line is terminated but does not parse",
        ),
        Verdict::Torn => (
            Code::TornTail,
            "the final line is incomplete (a write cut short)",
        ),
        _ => {
            sink.add(
                Code::InteriorCorruption,
                Some(l),
                None,
                format!("line does not parse: {e}; the run cannot be read past this point, and repair will not cut interior lines"),
            );
            return true;
        }
    };
    sink.add(
        code,
        Some(l),
        None,
        format!("{what}: {e}; readers drop it, and a repair cuts it and keeps the bytes"),
    );
    false
}

/// Pass 2's state: what the records before the one checked left behind.
struct Records<'a> {
    /// The highest seq so far.
    prev: u64,
    /// The open assistant turn: the tool_use ids it asked for, and those
    /// answered.
    turn: Option<(HashSet<String>, HashSet<String>)>,
    /// The run is a version-3 journal (its meta record says so).
    august: bool,
    /// SPEC 11: reported once per run, at its first record.
    mixed_reported: bool,
    unknown: Vec<String>,
    unknown_at: Option<(RawLine<'a>, u64)>,
    /// The run's token totals as Go's int64 adds them: one that passes the
    /// largest there is wraps negative in the agent (and stops at the
    /// maximum here), reported once, at the record it happens.
    totals: [i64; 5],
    overflowed: bool,
}

impl<'a> Records<'a> {
    fn new(parsed: &[Parsed]) -> Records<'a> {
        let august = parsed.first().is_some_and(
            |p| matches!(&p.record.payload, Some(Payload::Meta(m)) if m.version == VERSION_AUGUST),
        );
        Records {
            prev: 0,
            turn: None,
            august,
            mixed_reported: false,
            unknown: Vec::new(),
            unknown_at: None,
            totals: [0; 5],
            overflowed: false,
        }
    }

    /// Every check of the `k`th record (0-based), in the findings' order.
    fn check(&mut self, sink: &mut Sink, k: usize, p: &Parsed<'a>) {
        let (l, r) = (&p.raw, &p.record);
        self.counters(sink, l, r);
        // The top-level keys a structural finding is about: a schema
        // violation there is the same finding again (b-13).
        let mut covered = shape(sink, l, r);
        placement(sink, k, l, r, &mut covered);
        self.sequence(sink, k, p);
        self.generation(sink, l, r);
        match &r.payload {
            Some(Payload::Meta(m)) if k == 0 => meta(sink, l, r.seq, m),
            _ => self.turn(sink, l, r),
        }
        for v in &p.violations {
            if !covered.iter().any(|key| v.is_about_key(key)) {
                sink.add(Code::Schema, Some(l), Some(r.seq), v.describe());
            }
        }
    }

    /// The token totals, and the first that passes the largest int64.
    fn counters(&mut self, sink: &mut Sink, l: &RawLine, r: &Record) {
        let (Some(Payload::Assistant(a)), false) = (&r.payload, self.overflowed) else {
            return;
        };
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
        for ((total, n), name) in self.totals.iter_mut().zip(add).zip(names) {
            match total.checked_add(n) {
                Some(t) => *total = t,
                None => {
                    self.overflowed = true;
                    sink.add(
                        Code::CounterOverflow,
                        Some(l),
                        Some(r.seq),
                        format!("the run's {name} total passes the largest 64-bit integer at this record: the agent's counter wraps to a negative number here (fisk-admin's stops at the maximum), so its budget check and stats read nonsense from here on"),
                    );
                    return;
                }
            }
        }
    }

    /// Seqs increase by one; a gap right after a line that does not
    /// decode is that line's.
    fn sequence(&mut self, sink: &mut Sink, k: usize, p: &Parsed) {
        let (l, seq, prev) = (&p.raw, p.record.seq, self.prev);
        if k > 0 {
            if seq <= prev {
                sink.add(
                    Code::SeqNotIncreasing,
                    Some(l),
                    Some(seq),
                    format!("seq {seq} after seq {prev}"),
                );
            } else if seq > prev + 1 && !p.after_corrupt {
                sink.add(
                    Code::SeqGap,
                    Some(l),
                    Some(seq),
                    format!(
                        "seq {seq} follows seq {prev}: {} record(s) lost",
                        seq - prev - 1
                    ),
                );
            }
        }
        self.prev = prev.max(seq);
    }

    /// Fields this tool does not know (gathered for pass 3), and a
    /// version-3 journal holding a field only version 1 writes.
    fn generation(&mut self, sink: &mut Sink, l: &RawLine<'a>, r: &Record) {
        let Some(p) = &r.payload else { return };
        let fields = p.unknown_fields();
        if !fields.is_empty() {
            self.unknown_at.get_or_insert((*l, r.seq));
            for f in fields {
                if !self.unknown.contains(&f) {
                    self.unknown.push(f);
                }
            }
        }
        if !self.august || self.mixed_reported {
            return;
        }
        let field = if r.time.is_some() {
            Some("time")
        } else {
            p.current_generation_field()
        };
        if let Some(field) = field {
            self.mixed_reported = true;
            sink.add(
                Code::MixedGeneration,
                Some(l),
                Some(r.seq),
                format!("a version-{VERSION_AUGUST} journal holding `{field}`, a field only version {VERSION} writes: written by both generations of the agent? The current agent will not read it until it is upgraded"),
            );
        }
    }

    /// Results and deferrals answer the open assistant turn's calls, once.
    fn turn(&mut self, sink: &mut Sink, l: &RawLine, r: &Record) {
        let seq = Some(r.seq);
        let (id, is_result) = match &r.payload {
            Some(Payload::Assistant(a)) => {
                let asked = a.message.tool_use_ids().map(str::to_owned).collect();
                self.turn = Some((asked, HashSet::new()));
                return;
            }
            Some(Payload::User(_)) => {
                self.turn = None;
                return;
            }
            Some(Payload::ToolResult(t)) => (&t.tool_use_id, true),
            Some(Payload::Deferred(d)) => (&d.tool_use_id, false),
            _ => return,
        };
        let Some((asked, answered)) = self.turn.as_mut() else {
            sink.add(
                Code::OrphanResult,
                Some(l),
                seq,
                format!(
                    "a {} for {id:?} with no open assistant turn",
                    r.protocol.rsplit('.').next().unwrap_or("record")
                ),
            );
            return;
        };
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
                format!("a second tool_result for {id:?}: the agent's fold keeps both results, so a resume sends both to the model; `show --transcript` shows the two"),
            );
        }
    }

    /// Pass 3: the fields this tool does not know, once, at the first
    /// record holding one.
    fn unknown_fields(mut self, sink: &mut Sink) {
        let Some((l, seq)) = self.unknown_at else {
            return;
        };
        self.unknown.sort();
        sink.add(
            Code::UnknownField,
            Some(&l),
            Some(seq),
            format!(
                "fields this tool does not know (a newer agent wrote them; readers pass over them): {}",
                self.unknown.join(", ")
            ),
        );
    }
}

/// The record's protocol and top-level keys; the keys its findings cover.
fn shape<'r>(sink: &mut Sink, l: &RawLine, r: &'r Record) -> Vec<&'r str> {
    let (seq, kind) = (Some(r.seq), r.kind());
    let mut covered = Vec::new();
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
    covered
}

/// The meta record first, once, with seq 1.
fn placement(sink: &mut Sink, k: usize, l: &RawLine, r: &Record, covered: &mut Vec<&str>) {
    let (seq, kind) = (Some(r.seq), r.kind());
    if k == 0 && kind != Some(Kind::Meta) {
        sink.add(
            Code::NoMeta,
            Some(l),
            seq,
            format!("the first record is {:?}, not a meta record", r.protocol),
        );
    }
    if kind != Some(Kind::Meta) {
        return;
    }
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

/// The first meta record: its format version and the run it names.
fn meta(sink: &mut Sink, l: &RawLine, seq: u64, m: &crate::record::Meta) {
    let seq = Some(seq);
    if m.version == VERSION_AUGUST {
        sink.add(Code::VersionThree, Some(l), seq, format!("format version {VERSION_AUGUST} (the August 2026 agent): the current agent will not list or resume it until it is upgraded to version {VERSION}"));
    } else if m.version > VERSION_AUGUST {
        sink.add(Code::VersionNewer, Some(l), seq, format!("format version {} is newer than {VERSION_AUGUST}: a newer agent wrote this run; inspect it with that agent's tools", m.version));
    } else if m.version != VERSION {
        sink.add(Code::VersionOlder, Some(l), seq, format!("format version {} is older than the agent's formats ({VERSION} and {VERSION_AUGUST}): readable here, but no agent resumes it", m.version));
    }
    let run = sink.run;
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

/// Pass 4: the fold over every record that decodes. Its refusal is a
/// finding only when nothing above is an error (which would explain it);
/// a run waiting on deferred calls is worth saying.
fn fold_pass(sink: &mut Sink, parsed: Vec<Parsed>) {
    let (lines_of, records): (Vec<RawLine>, Vec<Record>) =
        parsed.into_iter().map(|p| (p.raw, p.record)).unzip();
    match fold_with(records, FoldOptions::inspect()) {
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
}
