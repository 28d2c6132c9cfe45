//! `recover` (SPEC 6.1, "Recovering"): the most a journal with interior
//! damage can give back, as a run the agent accepts.
//!
//! It exists because the readers stop at the first line that does not
//! decode (SPEC 7), so before it the one way past a bad sector, a NUL
//! block or a line split by a crash was `migrate --include-corrupt`, which
//! keeps what comes before the damage and nothing after it.
//!
//! This module is the plan only, pure and I/O-free: the journal's bytes
//! as read in, the new journal's records and a report out. The backends
//! (`ops::recover`) keep the original and write the plan. What it does:
//!
//! 1. every line is decoded; one that does not is searched for whole
//!    records inside it (two records glued by a lost newline, a torn write
//!    followed by its whole retry, a record behind a NUL block), and two
//!    neighbouring lines that only decode together are joined (a line
//!    split in two); what is left over is a *hole*: bytes that could not be
//!    read, kept aside for the backup;
//! 2. a record written twice (same seq, same record but for `time`) is
//!    kept once, and a hole that is an unfinished copy of an intact record
//!    loses nothing; a hole between two consecutive seqs held no record;
//!    a missing seq is a hole too, with no bytes;
//! 3. the records are fed to the agent's own fold ([`crate::fold::Folder`]),
//!    one at a time, and each is kept exactly when the fold takes it: a
//!    result or deferral with no open turn (its assistant record was
//!    lost), a second meta record, a record of a protocol no agent knows
//!    (not optional) are dropped, and nothing else is (a record `verify`'s
//!    closed schemas refuse but the agent reads, an extra key, a result
//!    for a call the open turn never made, is kept as the agent reads it);
//!    a call of a turn that closes with its result lost is answered by a
//!    `tool_result` fisk-admin writes, `is_error: true`, whose text says
//!    the original was lost (at the hole the result was in, so seqs stay
//!    where they were): that changes what a resume does, and the report
//!    says so; at the end of the journal a call with no result and no hole
//!    for it is left pending, as a crash leaves it (resume runs it again);
//! 4. the records are numbered 1, 2, ...: a record whose seq changes has
//!    its `"seq"` value rewritten in place, every other byte kept; records
//!    copied keep their bytes;
//! 5. the agent's fold must take the result whole; it does by
//!    construction, and a plan it would not take is refused, never
//!    written.
//!
//! Damaged bytes are never trusted for more than a report: what a hole
//! was is read from it (its seq, protocol and call id) only to say what
//! was lost and which call a written result answers.
//!
//! The meta record cannot be made up: a journal whose meta record is lost
//! is refused ([`Cannot::NoMeta`]).

use crate::record::{Block, Generation, Payload, Record, ToolResult, ToolResultBlock};
use crate::time::Time;
use std::collections::{HashMap, HashSet};

/// What a damaged line (or a missing seq) was, as far as its bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Damage {
    /// Bytes that are not a record (no NUL among them).
    Garbage,
    /// Bytes holding NULs (a block of a file zeroed by the disk or the
    /// file system after a crash).
    Nul,
    /// A record split over two lines; joined again, nothing lost.
    Split,
    /// Several records on one line (a newline lost); all read.
    Glued,
    /// A seq no line holds: a line lost entirely (or a message deleted).
    Missing,
    /// A record stored twice; the copy is dropped, nothing lost.
    Duplicate,
    /// A record whose own seq is damaged (a flipped digit): the records
    /// around it say which it is; renumbered, nothing lost.
    WrongSeq,
    /// A seq stored again with a different record, or one lower than a
    /// seq before it (two writers, a copy gone wrong): both kept in
    /// journal order, the later renumbered.
    Reused,
    /// A record that reads but that no open turn asks for (its turn was
    /// lost), or a second result for one call: dropped.
    Orphan,
    /// A record that reads but that the agent refuses (a second meta
    /// record, an unknown protocol not optional, a record the schema
    /// refuses): dropped.
    Refused,
    /// A call of a closed turn with no result and no hole for it: answered
    /// with an error result.
    Unanswered,
}

impl Damage {
    /// The word the report uses.
    pub fn word(self) -> &'static str {
        match self {
            Damage::Garbage => "garbage",
            Damage::Nul => "nul-block",
            Damage::Split => "split-line",
            Damage::Glued => "glued-lines",
            Damage::Missing => "missing-seq",
            Damage::Duplicate => "duplicate",
            Damage::WrongSeq => "wrong-seq",
            Damage::Reused => "seq-reused",
            Damage::Orphan => "orphan",
            Damage::Refused => "refused",
            Damage::Unanswered => "unanswered",
        }
    }
}

/// One thing the plan found, in the journal's order, in plain words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The journal line (file) or position (JetStream) it is on; for a
    /// missing seq, the line of the record after it.
    pub line: usize,
    /// The seq it had (read from its bytes, or where it sits between
    /// intact records), where known.
    pub seq: Option<u64>,
    /// Which damage.
    pub damage: Damage,
    /// What it was, where known ("a tool result for toolu_01").
    pub what: Option<String>,
    /// How many bytes could not be read (0 when none).
    pub bytes: u64,
    /// What the run loses, and what was done about it.
    pub loses: String,
    /// The run loses nothing by it.
    pub harmless: bool,
}

/// A record fisk-admin wrote, listed so nobody takes it for the agent's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    /// Its seq in the new journal.
    pub seq: u64,
    /// The call it answers.
    pub call: String,
    /// The call's tool.
    pub tool: String,
    /// Why it was written.
    pub why: String,
}

/// What recovering a journal gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The new journal's records, seq 1, 2, ... (bytes, no newline).
    pub records: Vec<Vec<u8>>,
    /// What was found, in journal order.
    pub findings: Vec<Finding>,
    /// The records fisk-admin wrote.
    pub made: Vec<Made>,
    /// Old seq to new seq, for every kept record whose seq changed.
    pub renumbered: Vec<(u64, u64)>,
    /// Intact records of the damaged journal that the new one keeps.
    pub kept: u64,
    /// Intact records in the damaged journal (a record stored twice
    /// counted once).
    pub intact: u64,
    /// The bytes that could not be read, a line each.
    pub unreadable: Vec<u8>,
    /// The format version (of both journals).
    pub version: i64,
}

impl Plan {
    /// Whether there is anything to recover: the journal is not already
    /// whole and consistent.
    pub fn changes(&self) -> bool {
        !self.findings.is_empty() || !self.renumbered.is_empty() || !self.made.is_empty()
    }

    /// The new journal's bytes.
    pub fn journal(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.records.iter().map(|r| r.len() + 1).sum());
        for r in &self.records {
            out.extend_from_slice(r);
            out.push(b'\n');
        }
        out
    }
}

/// Why a journal cannot be recovered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cannot {
    /// The journal holds no record at all.
    Empty,
    /// Its meta record (the run's identity, fingerprint and prompt) is
    /// lost or is not the first record: nothing can stand in for it.
    NoMeta {
        /// The line the meta record should be on (the first).
        line: usize,
    },
    /// A format version no agent of either generation writes.
    Version {
        /// The version.
        version: i64,
    },
    /// The plan could not be made to verify.
    Unverifiable {
        /// What the verifier still finds.
        problems: Vec<String>,
    },
}

impl std::fmt::Display for Cannot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cannot::Empty => f.write_str("the journal holds no record"),
            Cannot::NoMeta { line } => write!(
                f,
                "its meta record (line {line}: the run's id, fingerprint and prompt) cannot be read, and nothing can stand in for it: the agent would not accept the run"
            ),
            Cannot::Version { version } => write!(
                f,
                "format version {version} is neither 1 nor 3, and no agent would accept it"
            ),
            Cannot::Unverifiable { problems } => write!(
                f,
                "the recovered journal would still not verify: {}",
                problems.join("; ")
            ),
        }
    }
}

/// Plan the recovery of the journal `bytes` as run `run` (the id it is
/// stored under afterwards: the meta record's `run_id` is made that).
/// Records fisk-admin writes on a version-1 journal are stamped `now`.
pub fn plan(run: &str, bytes: &[u8], now: Time) -> Result<Plan, Cannot> {
    let mut items = read_items(bytes);
    let mut findings = Vec::new();
    fix_seqs(&mut items, &mut findings);
    dedupe(&mut items, &mut findings);
    let intact = items.iter().filter(|i| matches!(i, Item::Rec(_))).count() as u64;
    let (version, meta_at) = check_meta(&items)?;
    let generation = Generation::of(version).ok_or(Cannot::Version { version })?;
    mark_gaps(&mut items);
    let meta_at = items
        .iter()
        .position(|i| matches!(i, Item::Rec(_)))
        .unwrap_or(meta_at);
    let mut made =
        replay(run, &items, meta_at, generation, now).map_err(|problem| Cannot::Unverifiable {
            problems: vec![problem],
        })?;
    // The agent's fold takes the new journal whole: each record was kept
    // only where the fold takes it, and what fisk-admin writes answers a
    // call of an open turn. Said, never assumed.
    let bytes = made.journal();
    let fold = crate::lines::decode_all(&bytes)
        .map_err(|e| format!("line {} does not decode: {}", e.line, e.error))
        .and_then(|(entries, _)| {
            crate::fold::fold_with(
                entries.iter().map(|e| &e.record),
                crate::fold::FoldOptions::default(),
            )
            .map_err(|e| e.to_string())
        });
    if let Err(problem) = fold {
        return Err(Cannot::Unverifiable {
            problems: vec![problem],
        });
    }
    let mut all = findings;
    all.append(&mut made.findings);
    all.sort_by_key(|f| f.line);
    made.findings = merge_missing(all);
    made.intact = intact;
    made.version = version;
    Ok(made)
}

/// A record read whole.
#[derive(Debug, Clone)]
struct Rec {
    line: usize,
    raw: Vec<u8>,
    /// The record, its seq the one it holds in the new order (see
    /// [`fix_seqs`]).
    record: Record,
    /// The seq its bytes say.
    stored: u64,
}

/// A hole: bytes that could not be read, or a seq no line holds.
#[derive(Debug, Clone)]
struct Hole {
    line: usize,
    damage: Damage,
    bytes: Vec<u8>,
    sniff: Sniff,
    /// The seq it held, once placed between intact records.
    seq: Option<u64>,
    /// A missing seq that stands for every seq up to this one too (a gap
    /// longer than [`MAX_MISSING`]).
    through: Option<u64>,
    /// It holds no record that is lost (an unfinished copy of a record
    /// intact elsewhere, or bytes between two consecutive seqs).
    harmless: bool,
}

#[derive(Debug, Clone)]
enum Item {
    Rec(Box<Rec>),
    Hole(Hole),
    /// A record dropped by an earlier round (its finding is made).
    Gone,
}

/// What the bytes of a hole say they were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Sniff {
    seq: Option<u64>,
    kind: Option<&'static str>,
    call: Option<String>,
}

/// Step 1 of the module doc.
fn read_items(bytes: &[u8]) -> Vec<Item> {
    let lines: Vec<_> = crate::lines::split(bytes)
        .filter(|l| !l.bytes.iter().all(u8::is_ascii_whitespace))
        .collect();
    let mut items = Vec::new();
    let mut i = 0;
    while let Some(l) = lines.get(i) {
        i += 1;
        if let Ok(record) = Record::decode(l.bytes) {
            items.push(Item::Rec(Box::new(Rec {
                line: l.line,
                raw: l.bytes.to_vec(),
                stored: record.seq,
                record,
            })));
            continue;
        }
        // Split in two: this line and the next only decode together.
        if let Some(next) = lines.get(i) {
            if Record::decode(next.bytes).is_err() {
                let joined = [l.bytes, next.bytes].concat();
                if let Ok(record) = Record::decode(&joined) {
                    i += 1;
                    items.push(Item::Hole(Hole {
                        line: l.line,
                        damage: Damage::Split,
                        bytes: Vec::new(),
                        sniff: Sniff {
                            seq: Some(record.seq),
                            ..Sniff::default()
                        },
                        seq: None,
                        through: None,
                        harmless: true,
                    }));
                    items.push(Item::Rec(Box::new(Rec {
                        line: l.line,
                        raw: joined,
                        stored: record.seq,
                        record,
                    })));
                    continue;
                }
            }
        }
        salvage(l.line, l.bytes, &mut items);
    }
    items
}

/// The records inside a line that does not decode, and holes for the
/// bytes around them.
fn salvage(line: usize, bytes: &[u8], items: &mut Vec<Item>) {
    let mut found: Vec<(usize, usize, Record)> = Vec::new();
    let mut from = 0;
    while from < bytes.len() {
        let Some(at) = memchr::memmem::find(bytes.get(from..).unwrap_or_default(), b"{\"seq\"")
        else {
            break;
        };
        let start = from + at;
        let rest = bytes.get(start..).unwrap_or_default();
        let mut values =
            serde_json::Deserializer::from_slice(rest).into_iter::<&serde_json::value::RawValue>();
        let whole = match values.next() {
            Some(Ok(v)) => {
                let end = start + v.get().len();
                bytes
                    .get(start..end)
                    .and_then(|b| Record::decode(b).ok())
                    .map(|r| (end, r))
            }
            _ => None,
        };
        match whole {
            Some((end, record)) => {
                found.push((start, end, record));
                from = end;
            }
            None => from = start + 1,
        }
    }
    let glued = found.len() > 1;
    let mut at = 0;
    let hole = |items: &mut Vec<Item>, piece: &[u8]| {
        if piece.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        items.push(Item::Hole(Hole {
            line,
            damage: match piece.contains(&0) {
                true => Damage::Nul,
                false => Damage::Garbage,
            },
            bytes: piece.to_vec(),
            sniff: sniff(piece),
            seq: None,
            through: None,
            harmless: false,
        }));
    };
    for (start, end, record) in found {
        hole(items, bytes.get(at..start).unwrap_or_default());
        if glued && at == 0 {
            items.push(Item::Hole(Hole {
                line,
                damage: Damage::Glued,
                bytes: Vec::new(),
                sniff: Sniff::default(),
                seq: None,
                through: None,
                harmless: true,
            }));
        }
        items.push(Item::Rec(Box::new(Rec {
            line,
            raw: bytes.get(start..end).unwrap_or_default().to_vec(),
            stored: record.seq,
            record,
        })));
        at = end;
    }
    hole(items, bytes.get(at..).unwrap_or_default());
}

/// What damaged bytes say they were: the first `"seq":N`, protocol and
/// `"tool_use_id":"..."` among them (an id only of the characters ids
/// are made of, so nothing odd reaches a report).
fn sniff(bytes: &[u8]) -> Sniff {
    let after =
        |key: &[u8]| memchr::memmem::find(bytes, key).and_then(|at| bytes.get(at + key.len()..));
    let seq = after(b"\"seq\":").and_then(|rest| {
        let digits: Vec<u8> = rest
            .iter()
            .copied()
            .take_while(u8::is_ascii_digit)
            .collect();
        std::str::from_utf8(&digits).ok()?.parse().ok()
    });
    let kind = after(crate::record::PROTOCOL_PREFIX.as_bytes()).and_then(|rest| {
        crate::record::Kind::ALL
            .into_iter()
            .find(|k| {
                rest.starts_with(k.key().as_bytes()) && rest.get(k.key().len()) == Some(&b'"')
            })
            .map(|k| k.key())
    });
    let call = after(b"\"tool_use_id\":\"").and_then(|rest| {
        let end = rest.iter().position(|c| *c == b'"')?;
        let id = std::str::from_utf8(rest.get(..end)?).ok()?;
        let ok = !id.is_empty()
            && id.len() <= 128
            && id
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        ok.then(|| id.to_owned())
    });
    Sniff { seq, kind, call }
}

/// Findings of consecutive missing seqs that cost nothing more than
/// themselves (no call answered, nothing dropped) said as one.
fn merge_missing(findings: Vec<Finding>) -> Vec<Finding> {
    let plain = |f: &Finding| f.damage == Damage::Missing && f.loses.starts_with("lost; if it was");
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    // The plain missing seqs the last finding kept stands for.
    let mut run: Option<(u64, u64)> = None;
    for f in findings {
        if let (Some((from, to)), Some(seq)) = (run, f.seq) {
            if plain(&f) && Some(seq) == to.checked_add(1) {
                run = Some((from, seq));
                if let Some(last) = out.last_mut() {
                    last.loses = format!(
                        "seqs {from} to {seq}: no line holds them: lost; the run goes on from the records kept"
                    );
                }
                continue;
            }
        }
        run = match (plain(&f), f.seq) {
            (true, Some(s)) => Some((s, s)),
            _ => None,
        };
        out.push(f);
    }
    out
}

/// The most holes one gap of seqs becomes (see [`mark_gaps`]).
const MAX_MISSING: usize = 1024;

/// A record whose own seq is damaged (a flipped digit, a NUL in it): a
/// record whose seq is not the next one, while the record after it holds
/// the seq after that next one, is the next one. (A real gap does not
/// close again; a record stored twice is followed by the next seq.)
fn fix_seqs(items: &mut [Item], findings: &mut Vec<Finding>) {
    let recs: Vec<usize> = (0..items.len())
        .filter(|i| matches!(items.get(*i), Some(Item::Rec(_))))
        .collect();
    let seq_at = |items: &[Item], i: Option<&usize>| match i.and_then(|i| items.get(*i)) {
        Some(Item::Rec(r)) => Some(r.record.seq),
        _ => None,
    };
    let mut last = 0u64;
    for (k, i) in recs.iter().enumerate() {
        let after = seq_at(items, recs.get(k + 1));
        let Some(Item::Rec(r)) = items.get_mut(*i) else {
            continue;
        };
        let want = last.saturating_add(1);
        if r.record.seq != want && after.is_some() && after == want.checked_add(1) {
            findings.push(Finding {
                line: r.line,
                seq: Some(r.stored),
                damage: Damage::WrongSeq,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: format!(
                    "its seq reads {} where the records around it make it {want} (the seq itself is damaged): renumbered, nothing lost",
                    r.stored
                ),
                harmless: true,
            });
            r.record.seq = want;
        }
        last = last.max(r.record.seq);
    }
}

/// A record without its `time`: two stores of one record differ by it at
/// most (a retried write).
fn same(a: &Record, b: &Record) -> bool {
    a.seq == b.seq
        && a.protocol == b.protocol
        && a.optional == b.optional
        && a.payload == b.payload
        && a.extra_keys == b.extra_keys
}

/// Step 2: a record stored twice is kept once; an unfinished copy of a
/// record intact elsewhere loses nothing.
fn dedupe(items: &mut [Item], findings: &mut Vec<Finding>) {
    // Per seq, the items holding a record of it (indices: no copies).
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
    for i in 0..items.len() {
        let Some(Item::Rec(r)) = items.get(i) else {
            continue;
        };
        let copies = seen.entry(r.record.seq).or_default();
        let again = copies.iter().any(|c| match items.get(*c) {
            Some(Item::Rec(c)) => same(&c.record, &r.record),
            _ => false,
        });
        if again {
            findings.push(Finding {
                line: r.line,
                seq: Some(r.record.seq),
                damage: Damage::Duplicate,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: "stored twice: the copy is dropped; nothing lost".into(),
                harmless: true,
            });
            if let Some(slot) = items.get_mut(i) {
                *slot = Item::Gone;
            }
        } else {
            copies.push(i);
        }
    }
    // A seq not above the one before it, and not a copy: kept, said.
    let mut last = 0u64;
    for item in items.iter() {
        let Item::Rec(r) = item else { continue };
        let seq = r.record.seq;
        if seq <= last {
            findings.push(Finding {
                line: r.line,
                seq: Some(seq),
                damage: Damage::Reused,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: format!(
                    "seq {seq} comes after seq {last} and is not a copy of what holds it (two writers?): kept in journal order, renumbered"
                ),
                harmless: false,
            });
        }
        last = last.max(seq);
    }
    let kinds: HashMap<u64, Vec<&'static str>> = seen
        .iter()
        .map(|(seq, at)| {
            let keys = at
                .iter()
                .filter_map(|i| match items.get(*i) {
                    Some(Item::Rec(r)) => r.record.kind().map(|k| k.key()),
                    _ => None,
                })
                .collect();
            (*seq, keys)
        })
        .collect();
    for item in items.iter_mut() {
        let Item::Hole(h) = item else { continue };
        let (Some(seq), Some(kind)) = (h.sniff.seq, h.sniff.kind) else {
            continue;
        };
        let whole = kinds.get(&seq).is_some_and(|k| k.contains(&kind));
        if whole && !h.bytes.is_empty() {
            h.harmless = true;
            h.seq = Some(seq);
        }
    }
}

/// The first record must be the meta record: its version and position.
fn check_meta(items: &[Item]) -> Result<(i64, usize), Cannot> {
    let first = items
        .iter()
        .position(|i| matches!(i, Item::Rec(_)))
        .ok_or(Cannot::Empty)?;
    let line = |i: &Item| match i {
        Item::Rec(r) => r.line,
        Item::Hole(h) => h.line,
        Item::Gone => 1,
    };
    match items.get(first) {
        Some(Item::Rec(r)) if r.record.seq == 1 => match &r.record.payload {
            Some(Payload::Meta(m)) => Ok((m.version, first)),
            _ => Err(Cannot::NoMeta {
                line: items.first().map_or(1, line),
            }),
        },
        _ => Err(Cannot::NoMeta {
            line: items.first().map_or(1, line),
        }),
    }
}

/// Place the holes between intact records, and add one for each seq that
/// no line holds.
fn mark_gaps(items: &mut Vec<Item>) {
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    let mut last = 0u64;
    let mut pending: Vec<Hole> = Vec::new();
    let place =
        |out: &mut Vec<Item>, pending: &mut Vec<Hole>, last: u64, next: Option<(u64, usize)>| {
            let first = last.saturating_add(1);
            let lost: Vec<u64> = match next {
                // At most MAX_MISSING holes for one gap: each stands for a
                // record that may have been a result; a longer gap is
                // said whole by its last hole.
                Some((n, _)) if n > first => (first..n).take(MAX_MISSING).collect(),
                Some(_) => Vec::new(),
                // After the last record: a hole holds the next seq (a torn tail).
                None => vec![first],
            };
            let through = match next {
                Some((n, _)) if n.saturating_sub(first) > MAX_MISSING as u64 => Some(n - 1),
                _ => None,
            };
            let mut free: Vec<u64> = lost.clone();
            for h in pending.iter_mut().filter(|h| !h.harmless) {
                let seq = h
                    .sniff
                    .seq
                    .filter(|s| free.contains(s))
                    .or_else(|| free.first().copied());
                match seq {
                    Some(s) => {
                        free.retain(|x| *x != s);
                        h.seq = Some(s);
                    }
                    // No seq is missing here: it held no record.
                    None => h.harmless = true,
                }
            }
            let line = next.map_or_else(|| pending.last().map_or(0, |h| h.line), |(_, l)| l);
            for h in pending.drain(..) {
                out.push(Item::Hole(h));
            }
            if next.is_some() {
                let count = free.len();
                for (k, seq) in free.into_iter().enumerate() {
                    out.push(Item::Hole(Hole {
                        line,
                        damage: Damage::Missing,
                        bytes: Vec::new(),
                        sniff: Sniff::default(),
                        seq: Some(seq),
                        through: through.filter(|_| k + 1 == count),
                        harmless: false,
                    }));
                }
            }
        };
    for item in items.drain(..) {
        match item {
            Item::Hole(h) if h.damage == Damage::Split || h.damage == Damage::Glued => {
                out.push(Item::Hole(h))
            }
            Item::Hole(h) => pending.push(h),
            Item::Rec(r) => {
                let seq = r.record.seq;
                if seq > last {
                    place(&mut out, &mut pending, last, Some((seq, r.line)));
                    last = seq;
                } else {
                    let next = last.saturating_add(1);
                    place(&mut out, &mut pending, last, Some((next, r.line)));
                }
                out.push(Item::Rec(r));
            }
            Item::Gone => out.push(Item::Gone),
        }
    }
    if !pending.is_empty() {
        place(&mut out, &mut pending, last, None);
    }
    *items = out;
}

/// What one item of the new journal is.
enum Out {
    /// A record copied from item `from`.
    Copy { from: usize },
    /// A place a lost result may be answered (hole `hole`).
    Slot { hole: usize },
    /// A result fisk-admin writes.
    Made {
        call: String,
        tool: String,
        kind: String,
        dispatched: bool,
        why: String,
    },
}

/// What the replay knows of the turn open in the fold: its calls, which
/// have a result, which were deferred (with the deferral's kind and
/// dispatched), and the holes inside it.
#[derive(Default)]
struct Turn {
    calls: Vec<(String, String)>,
    answered: HashSet<String>,
    deferred: HashMap<String, (String, bool)>,
    /// Holes inside the turn, by item index.
    holes: Vec<usize>,
}

impl Turn {
    /// The fold's open turn, with the holes the replay saw in it.
    fn of(open: Option<crate::fold::OpenTurn<'_>>, holes: Vec<usize>) -> Option<Turn> {
        let open = open?;
        Some(Turn {
            calls: open
                .message
                .blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse(t) => Some((t.id.clone(), t.name.clone())),
                    _ => None,
                })
                .collect(),
            answered: open.answered.iter().cloned().collect(),
            deferred: open
                .deferred
                .iter()
                .map(|d| (d.tool_use_id.clone(), (d.kind.clone(), d.dispatched)))
                .collect(),
            holes,
        })
    }
}

/// Step 3 and 4 of the module doc.
fn replay(
    run: &str,
    items: &[Item],
    meta_at: usize,
    generation: Generation,
    now: Time,
) -> Result<Plan, String> {
    let mut out: Vec<Out> = Vec::new();
    let mut findings: Vec<Finding> = Vec::new();
    // What each hole turned out to cost: results written for it, records
    // dropped after it.
    let mut answered_at: HashMap<usize, Vec<String>> = HashMap::new();
    let mut orphans_after: HashMap<usize, Vec<u64>> = HashMap::new();
    let mut last_hole: Option<usize> = None;
    // What the agent's fold makes of the records kept so far: a record it
    // would refuse here is dropped (and said), every other one is kept.
    // Each is fed under a seq one above the last, as the new journal
    // numbers them.
    let Some(Item::Rec(meta)) = items.get(meta_at) else {
        return Err("the meta record is not where it was found".into());
    };
    let mut folder = crate::fold::Folder::new(&meta.record, crate::fold::FoldOptions::inspect())
        .map_err(|e| e.to_string())?;
    let mut fed: u64 = 1;
    // The holes inside the turn open in the fold.
    let mut holes: Vec<usize> = Vec::new();
    let mut assigned: HashMap<usize, (String, String, String, bool)> = HashMap::new();

    let close = |turn: Option<Turn>,
                 out: &mut Vec<Out>,
                 at_end: bool,
                 assigned: &mut HashMap<usize, (String, String, String, bool)>,
                 answered_at: &mut HashMap<usize, Vec<String>>,
                 findings: &mut Vec<Finding>,
                 line: usize| {
        let Some(t) = turn else { return };
        let mut open: Vec<&(String, String)> = t
            .calls
            .iter()
            .filter(|(id, _)| !t.answered.contains(id))
            .collect();
        let lost_kind = |h: usize| match items.get(h) {
            Some(Item::Hole(h)) if !h.harmless => Some(h.sniff.clone()),
            _ => None,
        };
        // A hole that was (or may have been) a result answers its call:
        // the call it names, else the next open one. A lost deferral
        // answers nothing: its call was waiting, not done.
        let mut free_holes = Vec::new();
        for h in &t.holes {
            let Some(s) = lost_kind(*h) else { continue };
            if !matches!(s.kind, None | Some("tool_result")) {
                continue;
            }
            if let Some(pos) = s
                .call
                .as_ref()
                .and_then(|c| open.iter().position(|(id, _)| id == c))
            {
                let (id, tool) = open.remove(pos);
                let (kind, dispatched) = t.deferred.get(id).cloned().unwrap_or_default();
                assigned.insert(*h, (id.clone(), tool.clone(), kind, dispatched));
            } else if s.call.is_none() {
                free_holes.push(*h);
            }
        }
        for h in free_holes {
            if open.is_empty() {
                break;
            }
            let (id, tool) = open.remove(0);
            let (kind, dispatched) = t.deferred.get(id).cloned().unwrap_or_default();
            assigned.insert(h, (id.clone(), tool.clone(), kind, dispatched));
        }
        for h in &t.holes {
            if let Some((id, _, _, _)) = assigned.get(h) {
                answered_at.entry(*h).or_default().push(id.clone());
            }
        }
        if at_end {
            // The run ends in this turn: a call with no hole for it is
            // pending, as a crash leaves it.
            return;
        }
        for (id, tool) in open {
            let (kind, dispatched) = t.deferred.get(id).cloned().unwrap_or_default();
            let why = "its turn is closed and no result for it was found".to_owned();
            findings.push(Finding {
                line,
                seq: None,
                damage: Damage::Unanswered,
                what: Some(format!("a call of {} ({})", shown(tool), shown(id))),
                bytes: 0,
                loses: "no result for it was found: it is answered with an error result saying so, and the run goes on".into(),
                harmless: false,
            });
            out.push(Out::Made {
                call: id.clone(),
                tool: tool.clone(),
                kind,
                dispatched,
                why,
            });
        }
    };

    for (i, item) in items.iter().enumerate() {
        let r = match item {
            Item::Gone => continue,
            Item::Hole(h) => {
                if matches!(h.damage, Damage::Split | Damage::Glued) {
                    continue;
                }
                last_hole = Some(i);
                if folder.open_turn().is_some() {
                    holes.push(i);
                    out.push(Out::Slot { hole: i });
                }
                continue;
            }
            Item::Rec(r) => r,
        };
        if i == meta_at {
            out.push(Out::Copy { from: i });
            continue;
        }
        let mut record = r.record.clone();
        record.seq = fed + 1;
        if let Err(e) = folder.check(&record) {
            let (why, damage) = match e {
                crate::fold::FoldError::NoOpenTurn { .. } => (
                    "no turn in the run asks for it (the assistant turn that did was lost); the agent refuses it there: dropped",
                    Damage::Orphan,
                ),
                crate::fold::FoldError::SecondMeta { .. } => {
                    ("a second meta record: dropped", Damage::Refused)
                }
                _ => (
                    "a record the agent cannot read (unknown protocol, not optional, or no payload): dropped",
                    Damage::Refused,
                ),
            };
            if let Some(h) = last_hole.filter(|_| damage == Damage::Orphan) {
                orphans_after.entry(h).or_default().push(r.record.seq);
            }
            findings.push(Finding {
                line: r.line,
                seq: Some(r.record.seq),
                damage,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: why.to_owned(),
                harmless: false,
            });
            continue;
        }
        // An assistant record opens the next turn and a user record ends
        // the conversation's turn: either closes the open one first.
        if matches!(
            r.record.payload,
            Some(Payload::Assistant(_) | Payload::User(_))
        ) {
            close(
                Turn::of(folder.open_turn(), std::mem::take(&mut holes)),
                &mut out,
                false,
                &mut assigned,
                &mut answered_at,
                &mut findings,
                r.line,
            );
        }
        folder.push(record).map_err(|e| e.to_string())?;
        fed += 1;
        out.push(Out::Copy { from: i });
    }
    let last_line = items
        .iter()
        .rev()
        .find_map(|i| match i {
            Item::Rec(r) => Some(r.line),
            Item::Hole(h) => Some(h.line),
            Item::Gone => None,
        })
        .unwrap_or(1);
    close(
        Turn::of(folder.open_turn(), holes),
        &mut out,
        true,
        &mut assigned,
        &mut answered_at,
        &mut findings,
        last_line,
    );

    // Number the new journal.
    let mut records = Vec::with_capacity(out.len());
    let mut renumbered = Vec::new();
    let mut made = Vec::new();
    let mut made_seq: HashMap<String, u64> = HashMap::new();
    let mut kept = 0u64;
    for o in out {
        let seq = records.len() as u64 + 1;
        let (call, tool, kind, dispatched, why) = match o {
            Out::Copy { from } => {
                let Some(Item::Rec(r)) = items.get(from) else {
                    continue;
                };
                let mut raw = r.raw.clone();
                if from == meta_at {
                    raw = with_run_id(&raw, &r.record, run)?;
                }
                if r.stored != seq {
                    raw = renumber(&raw, r, seq)?;
                    renumbered.push((r.stored, seq));
                }
                kept += 1;
                records.push(raw);
                continue;
            }
            Out::Slot { hole } => {
                let Some((call, tool, kind, dispatched)) = assigned.get(&hole).cloned() else {
                    continue;
                };
                let why = match items.get(hole) {
                    Some(Item::Hole(h)) => format!("its result was lost ({})", lost_where(h)),
                    _ => "its result was lost".to_owned(),
                };
                (call, tool, kind, dispatched, why)
            }
            Out::Made {
                call,
                tool,
                kind,
                dispatched,
                why,
            } => (call, tool, kind, dispatched, why),
        };
        records.push(lost_result(seq, &call, kind, dispatched, generation, now)?);
        made_seq.insert(call.clone(), seq);
        made.push(Made {
            seq,
            call,
            tool,
            why,
        });
    }

    // Now every hole's cost is known: say it.
    for (i, item) in items.iter().enumerate() {
        let Item::Hole(h) = item else { continue };
        let answered: Vec<(String, Option<u64>)> = answered_at
            .get(&i)
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| (shown(c).into_owned(), made_seq.get(c).copied()))
                    .collect()
            })
            .unwrap_or_default();
        let orphans = orphans_after.get(&i).cloned().unwrap_or_default();
        findings.push(hole_finding(h, &answered, &orphans));
    }
    Ok(Plan {
        records,
        findings,
        made,
        renumbered,
        kept,
        intact: 0,
        unreadable: items
            .iter()
            .filter_map(|i| match i {
                Item::Hole(h) if !h.bytes.is_empty() => Some([&h.bytes[..], b"\n"].concat()),
                _ => None,
            })
            .flatten()
            .collect(),
        version: 0,
    })
}

/// Where a hole was, for a written record's reason.
fn lost_where(h: &Hole) -> String {
    match h.damage {
        Damage::Missing => "no line holds its record".to_owned(),
        Damage::Nul => format!("line {} is a block of NUL bytes", h.line),
        _ => format!("line {} cannot be read", h.line),
    }
}

/// The finding for one hole, with what it cost.
fn hole_finding(h: &Hole, answered: &[(String, Option<u64>)], orphans: &[u64]) -> Finding {
    let what = match (h.sniff.kind, &h.sniff.call) {
        (Some(k), Some(c)) => Some(format!("{} for {}", kind_words(k), shown(c))),
        (Some(k), None) => Some(kind_words(k).to_owned()),
        (None, Some(c)) => Some(format!("a record about call {}", shown(c))),
        (None, None) => None,
    };
    let mut loses = if h.damage == Damage::Split {
        "a record split over two lines: joined again, nothing lost".to_owned()
    } else if h.damage == Damage::Glued {
        "several records on one line (a newline lost): each read, nothing lost".to_owned()
    } else if h.harmless {
        match h.seq {
            Some(s) => {
                format!("an unfinished copy of seq {s}, which is intact after it: nothing lost")
            }
            None => {
                "bytes between two consecutive records: no record is missing there, nothing lost"
                    .to_owned()
            }
        }
    } else if let (Some(from), Some(to)) = (h.seq, h.through) {
        format!("seqs {from} to {to}: no line holds them: lost")
    } else {
        let mut s = String::from("lost");
        match h.sniff.kind {
            _ if !answered.is_empty() => {}
            Some("user") => s.push_str("; the model never sees that message"),
            Some("terminal") => {
                s.push_str("; the run reads as ended by an earlier terminal, or as open")
            }
            Some("decision") | Some("call_approval") => {
                s.push_str("; the agent asks for that approval again")
            }
            Some("memory_revisions") => {
                s.push_str("; the memory revisions seen fall back to the earlier ones")
            }
            Some("claim") => s.push_str("; nothing in the run depends on it"),
            Some("deferred") => s.push_str(
                "; its call no longer waits on a person: answered with an error result if its turn closed, else pending (resume runs it again)",
            ),
            Some("tool_result") | None if orphans.is_empty() => s.push_str(
                "; if it was a result, its call has none: the run goes on from the records kept",
            ),
            _ => {}
        }
        s
    };
    for (call, seq) in answered {
        let at = seq.map_or_else(String::new, |s| format!(" (seq {s})"));
        loses.push_str(&format!(
            "; its call {call} is answered with an error result saying so{at}, and the run goes on"
        ));
    }
    if !orphans.is_empty() {
        let seqs: Vec<String> = orphans.iter().map(u64::to_string).collect();
        loses.push_str(&format!(
            "; {} record(s) after it belong to no turn and are dropped (seq {})",
            orphans.len(),
            seqs.join(", ")
        ));
        if h.sniff.kind.is_none() {
            loses.push_str(": it was most likely an assistant turn");
        }
    }
    Finding {
        line: h.line,
        seq: h.seq.or(h.sniff.seq),
        damage: h.damage,
        what,
        bytes: h.bytes.len() as u64,
        loses,
        harmless: h.harmless || matches!(h.damage, Damage::Split | Damage::Glued),
    }
}

/// A protocol key in words.
fn kind_words(key: &str) -> &'static str {
    match key {
        "meta" => "the meta record",
        "assistant" => "an assistant turn",
        "user" => "a user message",
        "tool_result" => "a tool result",
        "deferred" => "a deferral",
        "decision" => "a standing approval",
        "call_approval" => "an approval of one call",
        "memory_revisions" => "memory revisions",
        "terminal" => "a terminal record",
        "claim" => "a claim",
        _ => "a record",
    }
}

/// A record in words ("a tool result for toolu_01").
fn describe(r: &Record) -> String {
    let key = r.kind().map_or("", |k| k.key());
    match &r.payload {
        Some(Payload::ToolResult(t)) => format!("a tool result for {}", shown(&t.tool_use_id)),
        Some(Payload::Deferred(d)) => format!("a deferral of {}", shown(&d.tool_use_id)),
        _ if key.is_empty() => format!("a record of protocol {}", shown(&r.protocol)),
        _ => kind_words(key).to_owned(),
    }
}

/// Untrusted text made safe for a report (the ops module's rule).
fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    crate::shell::text(s)
}

/// `raw` with its seq made `seq`, every other byte kept; re-encoded only
/// when the seq cannot be found by position.
fn renumber(raw: &[u8], rec: &Rec, seq: u64) -> Result<Vec<u8>, String> {
    let (old, new) = (rec.stored.to_string(), seq.to_string());
    // As every writer writes it, `seq` first: `{"seq":OLD` then `,` or `}`
    // is that key's value and nothing else (no JSON needs parsing, so a
    // record the decoder takes and serde_json does not, a lone surrogate
    // escape, is renumbered too).
    let head = [&b"{\"seq\":"[..], old.as_bytes()].concat();
    if let Some(rest) = raw.strip_prefix(head.as_slice()) {
        if matches!(rest.first(), Some(b',' | b'}')) {
            return Ok([&b"{\"seq\":"[..], new.as_bytes(), rest].concat());
        }
    }
    let record = &rec.record;
    let mut want: serde_json::Value =
        serde_json::from_slice(raw).map_err(|e| format!("seq {}: {e}", rec.stored))?;
    if let Some(v) = want.get_mut("seq") {
        *v = serde_json::Value::from(seq);
    }
    if let Some(b) =
        crate::upgrade::replace_value(raw, b"\"seq\"", old.as_bytes(), new.as_bytes(), &want)
    {
        return Ok(b);
    }
    let mut r = record.clone();
    r.seq = seq;
    r.encode()
        .ok_or_else(|| format!("seq {} cannot be renumbered", rec.stored))
}

/// The meta record with its `run_id` made `run` (unchanged when it is).
fn with_run_id(raw: &[u8], record: &Record, run: &str) -> Result<Vec<u8>, String> {
    match &record.payload {
        Some(Payload::Meta(m)) if m.run_id != run => {
            crate::ops::fork::meta_with_run_id(raw, &m.run_id, run)
        }
        _ => Ok(raw.to_vec()),
    }
}

/// The text of a result fisk-admin writes for a call whose result was lost.
pub const LOST_RESULT: &str = "[fisk-admin recover] The result of this tool call was lost to corruption in the run's journal and could not be recovered; the tool may or may not have run. This text was written by fisk-admin, not by the tool or the agent.";

/// The error result standing in for call `call`'s lost one.
fn lost_result(
    seq: u64,
    call: &str,
    kind: String,
    dispatched: bool,
    generation: Generation,
    now: Time,
) -> Result<Vec<u8>, String> {
    let current = generation.stamps_time();
    // Version 1 writes `kind` on every result; a call never deferred was
    // not seen by any provider this journal names.
    let kind = match (current, kind.is_empty()) {
        (false, _) => String::new(),
        (true, true) => "unknown".to_owned(),
        (true, false) => kind,
    };
    let dispatched = current && dispatched;
    let mut r = Record::new(
        seq,
        Payload::ToolResult(ToolResult {
            tool_use_id: call.to_owned(),
            result: ToolResultBlock {
                tool_use_id: call.to_owned(),
                content: LOST_RESULT.to_owned(),
                is_error: true,
                ..ToolResultBlock::default()
            },
            remote: kind == "remote" && dispatched,
            kind,
            dispatched,
            ..ToolResult::default()
        }),
    );
    r.time = current.then_some(now);
    r.encode()
        .ok_or_else(|| format!("the result for {call} cannot be encoded"))
}

#[cfg(test)]
mod tests;
