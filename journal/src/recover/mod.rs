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

mod read;
mod replay;

use read::*;
pub use replay::LOST_RESULT;
use replay::*;

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
        crate::lines::join(&self.records)
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

#[cfg(test)]
mod tests;
