//! The fold (SPEC 3): records in, resumable state out. Pure: no IO, no clock.
//!
//! The conversation, the counters and the resume position are recomputed
//! from the records every time, so they cannot drift from what happened.

use crate::record::{
    Block, CallApproval, Deferred, Fingerprint, Kind, Message, Payload, Record, Terminal,
    ToolResult, ToolResultBlock, VERSION, VERSION_AUGUST,
};
use crate::time::Time;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

mod folder;
mod serial;
#[cfg(test)]
mod tests;

pub use folder::{Folder, OpenTurn};
use serial::*;

/// Why the fold refuses a journal. Carries the seq of the offending record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FoldError {
    /// No records at all.
    Empty,
    /// The first record is not the meta record.
    FirstNotMeta {
        /// Its seq.
        seq: u64,
    },
    /// A format version this fold does not read.
    Version {
        /// The version the meta record names.
        found: i64,
    },
    /// A seq not greater than the one before it.
    SeqNotIncreasing {
        /// The record's seq.
        seq: u64,
        /// The seq of the record before it.
        previous: u64,
    },
    /// A meta record after the first record.
    SecondMeta {
        /// Its seq.
        seq: u64,
    },
    /// A record that belongs to an assistant turn, with none open.
    NoOpenTurn {
        /// Its seq.
        seq: u64,
        /// Its kind.
        kind: Kind,
    },
    /// A record of a protocol the fold does not know, not marked optional.
    UnknownProtocol {
        /// Its seq.
        seq: u64,
        /// The protocol it names.
        protocol: String,
    },
    /// A record with no payload where its kind needs one.
    MissingPayload {
        /// Its seq.
        seq: u64,
        /// The protocol it names.
        protocol: String,
    },
}

impl FoldError {
    /// The seq of the refused record, where one is refused.
    pub fn seq(&self) -> Option<u64> {
        match self {
            FoldError::Empty | FoldError::Version { .. } => None,
            FoldError::FirstNotMeta { seq }
            | FoldError::SeqNotIncreasing { seq, .. }
            | FoldError::SecondMeta { seq }
            | FoldError::NoOpenTurn { seq, .. }
            | FoldError::UnknownProtocol { seq, .. }
            | FoldError::MissingPayload { seq, .. } => Some(*seq),
        }
    }
}

impl fmt::Display for FoldError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FoldError::Empty => write!(f, "the journal holds no records"),
            FoldError::FirstNotMeta { seq } => {
                write!(f, "the first record (seq {seq}) is not a meta record")
            }
            FoldError::Version { found } => write!(
                f,
                "format version {found} cannot be folded: this tool folds version {VERSION} (the agent as it ships) and {VERSION_AUGUST} (the August 2026 agent)"
            ),
            FoldError::SeqNotIncreasing { seq, previous } => {
                write!(
                    f,
                    "seq {seq} does not increase (previous record was seq {previous})"
                )
            }
            FoldError::SecondMeta { seq } => write!(f, "a second meta record at seq {seq}"),
            FoldError::NoOpenTurn { seq, kind } => write!(
                f,
                "a {} record at seq {seq} has no open assistant turn to belong to",
                kind.key()
            ),
            FoldError::UnknownProtocol { seq, protocol } => write!(
                f,
                "unknown protocol {protocol:?} at seq {seq} is not marked optional"
            ),
            FoldError::MissingPayload { seq, protocol } => {
                write!(f, "record seq {seq} ({protocol}) has no payload")
            }
        }
    }
}

impl std::error::Error for FoldError {}

impl Counters {
    /// Count one tool result (SPEC 3 rule 5b). A legacy result (no `kind`)
    /// counts as `remote` when it says `remote`, else as `unknown`.
    fn count_result(&mut self, r: &ToolResult) {
        self.tool_calls = self.tool_calls.saturating_add(1);
        // A token the agent does not know counts as `unknown`, as the
        // agent's own fold reads it (its kinds are an enum).
        let (kind, _) = crate::calls::result_kind(r);
        let n = self.tool_calls_by_kind.entry(kind.to_owned()).or_default();
        *n = n.saturating_add(1);
        let legacy = r.kind.is_empty();
        if (legacy && r.remote) || (r.kind == "remote" && r.dispatched) {
            self.remote_tool_calls = self.remote_tool_calls.saturating_add(1);
        }
        if r.kind == "mcp" && r.dispatched {
            self.mcp_tool_calls = self.mcp_tool_calls.saturating_add(1);
        }
    }
}

/// A run's usage counters, summed by the fold (SPEC 3 rule 5).
#[derive(Serialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Model calls made (assistant records).
    pub llm_calls: i64,
    /// Tool calls with a result.
    pub tool_calls: i64,
    /// Tool calls run on a remote worker and dispatched.
    pub remote_tool_calls: i64,
    /// MCP tool calls dispatched.
    pub mcp_tool_calls: i64,
    /// Kind token -> calls; a kind with no calls is absent.
    pub tool_calls_by_kind: BTreeMap<String, i64>,
    /// Input tokens, summed over the model calls.
    pub in_tokens: i64,
    /// Output tokens, summed.
    pub out_tokens: i64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: i64,
    /// Input tokens written to the prompt cache.
    pub cache_create_tokens: i64,
    /// Thinking tokens, summed.
    pub thinking_tokens: i64,
}

/// The turn in flight at the end of the journal.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Pending {
    #[serde(serialize_with = "ser_message")]
    /// The assistant message whose tool calls are in flight.
    pub assistant: Message,
    /// The iteration the turn is at.
    pub iteration: i64,
    #[serde(serialize_with = "ser_opt_str")]
    /// Why the model stopped ("" when not said).
    pub stop_reason: String,
    /// The tool results recorded so far.
    pub results: Vec<ToolResultBlock>,
    /// The tool_use ids that have a result.
    pub answered: BTreeSet<String>,
    #[serde(serialize_with = "ser_deferred")]
    /// The calls deferred to an answer by hand.
    pub deferred: Vec<Deferred>,
    #[serde(serialize_with = "ser_deferred")]
    /// The deferred calls with no answer yet.
    pub open_deferrals: Vec<Deferred>,
}

/// The folded run (SPEC 3, printed as SPEC 11 / docs/OUTPUT.md).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct RunState {
    /// The journal's format version (the meta record's).
    pub version: i64,
    /// The run's id.
    pub run_id: String,
    #[serde(serialize_with = "ser_opt_str")]
    /// The agent's name ("" when not recorded).
    pub agent: String,
    #[serde(serialize_with = "ser_fingerprint")]
    /// The agent's fingerprint when the run started.
    pub fingerprint: Fingerprint,
    /// The run's first prompt.
    pub prompt: String,
    /// Whether the run takes turns from a person.
    pub interactive: bool,
    #[serde(serialize_with = "ser_opt_str")]
    /// The conversation token ("" when none).
    pub conversation_token: String,
    #[serde(serialize_with = "ser_opt_str")]
    /// Who started the run ("" when not recorded).
    pub caller: String,
    #[serde(serialize_with = "ser_messages")]
    /// The conversation, in order.
    pub messages: Vec<Message>,
    /// The usage counters (SPEC 3 rule 5).
    pub counters: Counters,
    /// 1 + the number of user records.
    pub turns: i64,
    /// The last assistant record's input with both cache tiers.
    pub context_tokens: i64,
    /// The iteration a resume starts at.
    pub next_iteration: i64,
    #[serde(serialize_with = "ser_opt_str")]
    /// The last model stop reason ("" when none).
    pub last_stop_reason: String,
    /// The turn in flight, when the run stopped in one.
    pub pending: Option<Pending>,
    /// Tools approved for the rest of the run.
    pub approvals: Vec<String>,
    /// Calls approved once, by tool_use id.
    pub call_approvals: Vec<CallApproval>,
    /// `None` until a record sets it (and after one that sets Go's nil
    /// map): printed `null`, as the agent does.
    pub memory_revisions: Option<BTreeMap<String, u64>>,
    #[serde(serialize_with = "ser_terminal")]
    /// The last terminal record, unless a record follows it.
    pub terminal: Option<Terminal>,
    /// The last terminal record's time; `None` when the run was reopened
    /// after it, or the terminal is undated.
    pub ended: Option<Time>,
    /// Whether the run ended by completing.
    pub completed: bool,
    /// The run's status (SPEC 9).
    pub status: Status,
    /// The pending turn has deferred calls nobody has answered.
    pub waiting: bool,
    /// The deferred calls with no answer yet.
    pub open_deferrals: usize,
    /// The calls of the pending turn the run was suspended for that still
    /// need an approval (`needs_approval` below says when). Not in the fold's document:
    /// the agent's fold has no such field (`ls` prints it).
    #[serde(skip)]
    pub needs_approval: Vec<Gated>,
    /// The last seq folded.
    #[serde(skip)]
    pub last_seq: u64,
    /// The last folded record's time, when it has one.
    #[serde(skip)]
    pub last_time: Option<Time>,
    /// The generation this journal was written by, when it is one of the two.
    #[serde(skip)]
    pub generation: Option<crate::record::Generation>,
    /// What follows the agent's last step: whether that step is a
    /// terminal record and whether a person acted since ([`Rest`]).
    #[serde(skip)]
    pub rest: Rest,
}

/// What follows the agent's last step in a run: the records a resting run
/// receives (answers, approvals, memory revisions, skipped optional
/// records) after the last record of any other kind. The run model
/// ([`crate::state`]) reads it to tell a run a person acted on from one
/// that crashed, both of which the agent's status calls `open`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rest {
    /// The agent's last step is a terminal record.
    pub at_terminal: bool,
    /// Among the records after it is a person's: an answer to a deferred
    /// call, a `call_approval` or a `decision`.
    pub acted: bool,
}

/// A call of the pending turn the run was suspended for that waits on an
/// operator's approval ([`RunState::needs_approval`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gated {
    /// The tool_use id of the call.
    pub tool_use_id: String,
    /// The tool it calls.
    pub tool: String,
}

/// SPEC 9 status, the agent's rule: the last terminal's reason when no
/// record follows it, else open. (`waiting` and `live` are separate facts.)
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(into = "String")]
#[non_exhaustive]
pub enum Status {
    /// Ended: the last terminal's reason (a newer agent's reason kept as
    /// written, `Reason::Other`).
    Terminal(crate::record::Reason),
    /// Not ended: no terminal, or a record after the last one.
    Open,
}

impl From<Status> for String {
    fn from(s: Status) -> String {
        s.to_string()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Status::Terminal(r) => f.write_str(r.as_str()),
            Status::Open => f.write_str("open"),
        }
    }
}

/// Options that relax the fold for inspection. The resume path uses
/// [`fold`], which enforces everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldOptions {
    /// Fold a journal of another format version (inspection only: such a
    /// run is readable but never resumable, SPEC 1.1).
    pub any_version: bool,
    /// Fold only records with seq <= this.
    pub until_seq: Option<u64>,
}

impl FoldOptions {
    /// For reading a run as it is: any format version, every record.
    pub fn inspect() -> FoldOptions {
        FoldOptions {
            any_version: true,
            until_seq: None,
        }
    }
}

/// What the fold accepts: records by reference (cloned as needed) or by
/// value (moved: no copy of the conversation is made).
pub trait FoldInput {
    /// The record the fold reads.
    fn record(&self) -> &Record;
    /// The record's payload, cloned or moved.
    fn into_payload(self) -> Option<Payload>;
}

impl FoldInput for &Record {
    fn record(&self) -> &Record {
        self
    }
    fn into_payload(self) -> Option<Payload> {
        self.payload.clone()
    }
}

impl FoldInput for Record {
    fn record(&self) -> &Record {
        self
    }
    fn into_payload(self) -> Option<Payload> {
        self.payload
    }
}

/// Fold records into the run state, enforcing every rule of SPEC 3.
pub fn fold<R: FoldInput>(records: impl IntoIterator<Item = R>) -> Result<RunState, FoldError> {
    fold_with(records, FoldOptions::default())
}

/// [`fold`] with options: which versions it accepts, where it stops.
pub fn fold_with<R: FoldInput>(
    records: impl IntoIterator<Item = R>,
    opts: FoldOptions,
) -> Result<RunState, FoldError> {
    let mut it = records
        .into_iter()
        .take_while(|r| opts.until_seq.is_none_or(|n| r.record().seq <= n));
    let first = it.next().ok_or(FoldError::Empty)?;
    let mut folder = Folder::new(first, opts)?;
    for r in it {
        folder.push(r)?;
    }
    Ok(folder.finish())
}

/// What one call of a run waits on: the one answer to that question, for
/// `answer`, `approve` and the runner alike (each then says what it makes
/// of it). See [`RunState::call`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallState<'a> {
    /// No batch is pending. `answered`: a committed result carries the id.
    NoBatch {
        /// A committed result carries the id.
        answered: bool,
    },
    /// A batch is pending and the id is none of its calls. `answered`: a
    /// result carries the id (a committed one, or one of the batch).
    NotInBatch {
        /// A result carries the id.
        answered: bool,
    },
    /// A call of the pending batch that has its result.
    Answered {
        /// The call's tool.
        tool: &'a str,
    },
    /// A deferred call whose answer is not in yet. `in_batch`: the id is a
    /// call of the pending batch (the fold keeps a deferral of any id, and
    /// the run waits on it all the same).
    AwaitsAnswer {
        /// The deferral.
        deferral: &'a Deferred,
        /// The id is a call of the pending batch.
        in_batch: bool,
    },
    /// To run on the resume, approved: once (`call_approval`) or for the
    /// rest of the run (`standing`, a `decision` for its tool).
    Approved {
        /// The call's tool.
        tool: &'a str,
        /// Approved for the rest of the run, not once.
        standing: bool,
    },
    /// To run, but the run was suspended for its approval
    /// ([`RunState::needs_approval`]) and none was given since.
    AwaitsApproval {
        /// The call's tool.
        tool: &'a str,
    },
    /// To run on the resume, no deferral, no result, no approval asked.
    ToRun {
        /// The call's tool.
        tool: &'a str,
    },
}

impl<'a> CallState<'a> {
    /// The call's tool when it is one the resume still has to run
    /// (approved, waiting for an approval, or simply to run).
    pub fn to_run(&self) -> Option<&'a str> {
        match *self {
            CallState::Approved { tool, .. }
            | CallState::AwaitsApproval { tool }
            | CallState::ToRun { tool } => Some(tool),
            _ => None,
        }
    }

    /// Whether a result carries the id, in the pending batch or committed.
    pub fn answered(&self) -> bool {
        matches!(
            self,
            CallState::Answered { .. }
                | CallState::NoBatch { answered: true }
                | CallState::NotInBatch { answered: true }
        )
    }
}

impl RunState {
    /// The tools the run has called: every `tool_use` of its conversation
    /// and of its pending turn, sorted, each once.
    pub fn tools_called(&self) -> Vec<String> {
        let pending = self.pending.iter().map(|p| &p.assistant);
        let mut tools: Vec<String> = self
            .messages
            .iter()
            .chain(pending)
            .flat_map(|m| m.blocks())
            .filter_map(|b| match b {
                Block::ToolUse(u) => Some(u.name.clone()),
                _ => None,
            })
            .collect();
        tools.sort();
        tools.dedup();
        tools
    }

    /// What a version-1 terminal written now carries as its `summary`, as
    /// the agent computes it (its `ConversationSummary`: "folding the
    /// journal up to this record gives the same Turns, ContextTokens and
    /// Counters"): `turns`, `context_tokens` and the counters, each zero
    /// counter left out as Go's `omitempty` leaves it, and
    /// `tool_calls_by_kind` keyed by the agent's number for each kind
    /// (`unknown` 0, `application` 1, `builtin` 2, `remote` 3, `custom` 4,
    /// `mcp` 5; SPEC 1 calls them opaque, and the agent keys them so).
    pub fn conversation_summary(&self) -> Box<serde_json::value::RawValue> {
        let c = &self.counters;
        let mut by_kind: Vec<(u8, i64)> = c
            .tool_calls_by_kind
            .iter()
            .map(|(k, n)| (crate::calls::kind_number(k), *n))
            .collect();
        by_kind.sort();
        // Two tokens of one number (an unknown token beside `unknown`)
        // are one bucket to the agent.
        by_kind.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 = a.1.saturating_add(b.1);
            }
            same
        });
        let kinds: Vec<String> = by_kind
            .iter()
            .map(|(k, n)| format!("\"{k}\":{n}"))
            .collect();
        let int = |n: i64| (n != 0).then(|| n.to_string());
        // The agent's field order; a zero counter, an empty map left out.
        let fields = [
            ("llm_calls", int(c.llm_calls)),
            ("tool_calls", int(c.tool_calls)),
            ("remote_tool_calls", int(c.remote_tool_calls)),
            ("mcp_tool_calls", int(c.mcp_tool_calls)),
            (
                "tool_calls_by_kind",
                (!kinds.is_empty()).then(|| format!("{{{}}}", kinds.join(","))),
            ),
            ("in_tokens", int(c.in_tokens)),
            ("out_tokens", int(c.out_tokens)),
            ("cache_read_tokens", int(c.cache_read_tokens)),
            ("cache_create_tokens", int(c.cache_create_tokens)),
            ("thinking_tokens", int(c.thinking_tokens)),
        ];
        let counters: Vec<String> = fields
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("\"{k}\":{v}")))
            .collect();
        let text = format!(
            "{{\"turns\":{},\"context_tokens\":{},\"counters\":{{{}}}}}",
            self.turns,
            self.context_tokens,
            counters.join(",")
        );
        // Integers and fixed keys only: it is JSON.
        serde_json::value::RawValue::from_string(text)
            .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned())
    }

    /// What the call `id` waits on. A result, in the pending batch or
    /// committed, settles a call before anything else: an answered
    /// deferral is answered, not deferred.
    pub fn call(&self, id: &str) -> CallState<'_> {
        let committed = || {
            self.messages.iter().any(|m| {
                m.blocks()
                    .iter()
                    .any(|b| matches!(b, Block::ToolResult(r) if r.tool_use_id == id))
            })
        };
        let Some(p) = &self.pending else {
            return CallState::NoBatch {
                answered: committed(),
            };
        };
        let tool = p.assistant.blocks().iter().find_map(|b| match b {
            Block::ToolUse(c) if c.id == id => Some(c.name.as_str()),
            _ => None,
        });
        let answered = p.answered.contains(id) || committed();
        if let (Some(d), false) = (p.deferred.iter().find(|d| d.tool_use_id == id), answered) {
            return CallState::AwaitsAnswer {
                deferral: d,
                in_batch: tool.is_some(),
            };
        }
        let Some(tool) = tool else {
            return CallState::NotInBatch { answered };
        };
        if answered {
            return CallState::Answered { tool };
        }
        if self.call_approvals.iter().any(|c| c.tool_use_id == id) {
            return CallState::Approved {
                tool,
                standing: false,
            };
        }
        if self.approvals.iter().any(|t| t == tool) {
            return CallState::Approved {
                tool,
                standing: true,
            };
        }
        if self.needs_approval.iter().any(|g| g.tool_use_id == id) {
            return CallState::AwaitsApproval { tool };
        }
        CallState::ToRun { tool }
    }
}

/// SPEC 9's status rule, fed records in journal order. Shared by the fold
/// and the tail summary so the two can never disagree.
#[derive(Default, Debug, Clone)]
pub(crate) struct StatusTracker {
    /// The reason and time of the last record when it is a terminal.
    last_terminal: Option<(String, Option<Time>)>,
}

impl StatusTracker {
    /// A record was seen (any record, a skipped optional one included).
    pub fn observe(&mut self, _time: Option<Time>) {
        self.last_terminal = None;
    }
    /// The record just observed is a terminal.
    pub fn terminal(&mut self, reason: &str, time: Option<Time>) {
        self.last_terminal = Some((reason.to_owned(), time));
    }
    /// The status the records observed so far give.
    pub fn status(&self) -> Status {
        match &self.last_terminal {
            Some((r, _)) => Status::Terminal(crate::record::Reason::parse(r)),
            None => Status::Open,
        }
    }
    /// When the run ended: the last record is a dated terminal.
    pub fn ended(&self) -> Option<Time> {
        self.last_terminal.as_ref().and_then(|(_, t)| *t)
    }
}

/// The SPEC 2 append rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Append {
    /// `seq <= last`: already stored; skip without error.
    Duplicate,
    /// `seq == last + 1`.
    Next,
    /// `seq > last + 1`: records would be lost.
    Gap,
}

/// Decide what appending `seq` after `last` means. The caller advances its
/// `last` only after the record is durably stored, so a failed or torn write
/// re-appends the same seq instead of losing it; that is why this function
/// does not advance anything itself.
pub(crate) fn check_append(last: u64, seq: u64) -> Append {
    if seq <= last {
        Append::Duplicate
    } else if seq == last + 1 {
        Append::Next
    } else {
        Append::Gap
    }
}
