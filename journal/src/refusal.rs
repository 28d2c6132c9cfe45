//! Why a write was refused, the library's one refusal type: the typed
//! refusals of [`crate::ops`] (answer, approve, end, fork, recover), one
//! variant each, the run model's, and a store's in words, with the way
//! past each ([`Remedy`]), so that a front end can say what to do next in
//! its own words. A leaf beside the error type that carries them: it names
//! the operations and the run model ([`crate::state`]) and nothing above
//! them.

use crate::shell::text as shown;
pub use crate::state::Op;
use std::fmt;

/// The way past a refusal, named as an action: the binary words it as one
/// of its commands, with this invocation's store flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Remedy {
    /// Read every finding of the run, with its line.
    Verify,
    /// Cut the torn tail (its bytes kept in a backup) or add the newline.
    Repair,
    /// Convert the run to the current format, or finish a conversion.
    Upgrade,
    /// The same command again finishes what was interrupted.
    Again,
    /// The same command, forced: a refusal an operator may overrule
    /// (an agent file that changes the conversation).
    Force,
    /// Continue a completed run with a new user turn.
    NewTurn,
    /// List the store to see what is there now.
    List,
    /// Create the stream the store names.
    CreateStream,
    /// List every problem of the stream's configuration.
    CheckStream,
    /// Answer the deferred calls the run waits on.
    Answer,
    /// Override the hold, once the run's writer is known to be gone.
    Unhold,
    /// Approve the gated calls the run waits on.
    Approve,
    /// Copy the readable prefix (the records before the first bad one) to
    /// another store: `migrate --include-corrupt` (a run with no meta
    /// record, which `recover` cannot rebuild).
    Salvage,
    /// Rebuild the run from every intact record (`recover`, SPEC 6.1),
    /// the damaged journal kept as a backup.
    Recover,
    /// Delete the run (it holds nothing to keep), keeping a backup.
    Remove,
    /// Make the run's journal readable by its owner only (0600).
    ChmodJournal,
    /// Make every journal of the store readable by its owner only (0600).
    ChmodJournals,
    /// Make the store directory its owner's only (0700).
    ChmodStore,
}

/// Why a write to run `run` was refused: the library's one refusal
/// ([`crate::Error::Refused`]). The operation by hand and the run model
/// say why in types ([`Why`]); a store's own refusal says it in words
/// ([`Why::Said`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The operation refused, when it was one of the run model's, for a
    /// front end's advice (an answer refused as already answered points at
    /// the answer; an approval does not).
    pub op: Option<Op>,
    /// The run's id.
    pub run: String,
    /// Why nothing was written.
    pub why: Why,
    /// What gets past it, for a front end to word as a command.
    pub remedy: Option<Remedy>,
    /// The pending calls the remedy is for (answer, approve), by tool_use
    /// id: the command is worded for each.
    pub calls: Vec<String>,
}

impl Refusal {
    /// The run model's refusal ([`crate::state::permit`]), when this is
    /// one.
    pub fn state(&self) -> Option<&crate::state::Refused> {
        match &self.why {
            Why::State(s) => Some(s),
            _ => None,
        }
    }
}

/// Why a write was refused: the refusals of the hand-written operations
/// (SPEC 6), one variant each; the run model's ([`Why::State`]); and what
/// a store or a check says in its own words ([`Why::Said`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Why {
    /// The run model's table refuses the operation in the run's state
    /// ([`crate::state::rule`]).
    State(Box<crate::state::Refused>),
    /// A refusal said in words: a store's (a stream full or sealed, a run
    /// half written by another command) or a check's.
    Said(String),
    /// The journal is of a format version no writer here appends to.
    NotWritable {
        /// The journal's version.
        version: i64,
    },
    /// The journal changed between the checks and the lock: the checks
    /// no longer hold. Doing the same again looks afresh.
    Changed(Change),
    /// The call has its result already.
    AlreadyAnswered {
        /// The call's tool_use id.
        call: String,
    },
    /// answer: no batch is pending, so nothing is deferred.
    NoPendingBatch {
        /// The call's tool_use id.
        call: String,
    },
    /// answer: the call is not deferred (`in_batch`: it is a call of the
    /// pending batch); `waiting` are the deferred calls the run waits on.
    NotDeferred {
        /// The call's tool_use id.
        call: String,
        /// It is a call of the pending batch.
        in_batch: bool,
        /// The deferred calls the run waits on.
        waiting: Vec<String>,
    },
    /// answer: the call waits on an approval (the run was suspended for
    /// it), not an answer.
    Gated {
        /// The call's tool_use id.
        call: String,
        /// Its tool.
        tool: String,
    },
    /// approve --tool: the tool is neither a pending call's nor one the
    /// run has called; `tools` are the ones it has.
    UnknownTool {
        /// The tool named.
        tool: String,
        /// The tools the run's pending calls and its conversation name.
        tools: Vec<String>,
    },
    /// answer with no call named: the run waits on no deferred call.
    WaitsOnNone,
    /// answer with no call named: the run waits on several.
    WaitsOnSeveral {
        /// The deferred calls it waits on.
        calls: Vec<String>,
    },
    /// answer: the content is larger than [`MAX_CONTENT`].
    TooBig,
    /// approve: no batch is pending (`answered`: a result carries the id).
    WaitsOnNothing {
        /// The call's tool_use id.
        call: String,
        /// A result carries the id.
        answered: bool,
    },
    /// approve: the id is none of the pending batch's `batch` calls.
    NotInBatch {
        /// The call's tool_use id.
        call: String,
        /// The calls of the pending batch.
        batch: Vec<String>,
    },
    /// approve: the call was deferred, it waits on an answer.
    Deferred {
        /// The call's tool_use id.
        call: String,
    },
    /// approve: the call has its one-shot approval already.
    AlreadyApproved {
        /// The call's tool_use id.
        call: String,
    },
    /// approve: the tool is approved for the rest of the run already.
    ToolApproved {
        /// The tool's name.
        tool: String,
    },
    /// approve: not a tool name (empty, too long, control characters).
    NotAToolName {
        /// The name given.
        tool: String,
    },
    /// approve: the run ended with `reason`; an approval would reopen it.
    Ended {
        /// The last terminal's reason.
        reason: String,
    },
    /// approve: the run is open and no call (of `tool`) waits in a
    /// pending batch.
    NotWaiting {
        /// Why the run counts as open.
        open: Open,
        /// The tool named, when one was.
        tool: Option<String>,
    },
    /// end: not one of the agent's five reasons.
    NotAReason {
        /// The reason as given.
        reason: String,
    },
    /// approve --all-pending: no call of the run waits on an approval.
    NothingPending,
    /// fork: the seq to cut at is not one of the run's (1 to `last`).
    OutOfRange {
        /// The seq asked for.
        seq: u64,
        /// The run's last seq.
        last: u64,
    },
    /// fork: the records up to `seq` are not seqs 1 to `seq` in order,
    /// starting with a meta record.
    NotWhole {
        /// The seq asked for.
        seq: u64,
    },
    /// recover: the journal cannot be made into a run the agent accepts
    /// (its meta record is lost, or it is of no agent's version).
    Unrecoverable {
        /// Why, in words.
        why: String,
    },
}

/// What changed under an operation between its checks and its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Records were appended.
    Seq {
        /// The last seq at the checks.
        then: u64,
        /// The last seq under the lock.
        now: u64,
    },
    /// The journal was rewritten to another format version (`upgrade`
    /// keeps the seqs); `now` is `None` when it could not be read.
    Version {
        /// The version at the checks.
        then: i64,
        /// The version under the lock.
        now: Option<i64>,
    },
}

/// Why a run counts as open (not suspended) for an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Records other than those written while a run rests follow its last
    /// terminal: the first such, its seq and kind.
    After {
        /// The first such record's seq.
        seq: u64,
        /// Its kind, where known.
        kind: Option<&'static str>,
    },
    /// Such records follow it, none named.
    Followed,
    /// It has no terminal record.
    NoTerminal,
}

/// The largest tool name an approval takes.
pub const MAX_TOOL: usize = 256;

/// The largest answer `answer` writes (SPEC 6: 256 KiB).
pub const MAX_CONTENT: usize = 256 * 1024;

fn listed(ids: &[String]) -> String {
    ids.iter()
        .map(|d| shown(d).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let run = &self.run;
        let nothing = "nothing was written";
        match &self.why {
            Why::State(s) => write!(f, "{s}"),
            Why::Said(m) => write!(f, "run {run}: {m}"),
            Why::NotWritable { version } => write!(
                f,
                "run {run}: format version {version} is not one this tool writes to; {nothing}"
            ),
            Why::Changed(Change::Seq { then, now }) => write!(
                f,
                "run {run}: the journal changed while it was being checked (seq {then} then {now}); {nothing}"
            ),
            Why::Changed(Change::Version { then, now }) => write!(
                f,
                "run {run}: the journal changed while it was being checked (format version {then} then {}); {nothing}",
                now.map_or_else(|| "unreadable".to_owned(), |v| v.to_string())
            ),
            Why::AlreadyAnswered { call } => write!(
                f,
                "run {run}: tool call {} is already answered; {nothing}",
                shown(call)
            ),
            Why::NoPendingBatch { call } => write!(
                f,
                "run {run} has no pending batch: no tool call waits for an answer, so {} is not deferred",
                shown(call)
            ),
            Why::NotDeferred { call, in_batch, .. } => write!(
                f,
                "run {run}: tool call {} is not deferred: it {}; only deferred calls are answered by hand",
                shown(call),
                match in_batch {
                    true => "is in the pending batch but was not deferred (the resume runs it, asking for an approval if its tool is gated)",
                    false => "is not a call of the pending batch",
                }
            ),
            Why::Gated { call, tool } => write!(
                f,
                "run {run}: tool call {} ({}) waits on an approval, not an answer; {nothing}",
                shown(call),
                shown(tool)
            ),
            Why::UnknownTool { tool, tools } => write!(
                f,
                "run {run} has no call of tool {} (pending or in its conversation: {}); a standing approval of it would approve nothing the run has asked for; {nothing}",
                shown(tool),
                match tools.is_empty() {
                    true => "none".to_owned(),
                    false => listed(tools),
                }
            ),
            Why::WaitsOnNone => write!(f, "run {run} waits on no deferred call; {nothing}"),
            Why::WaitsOnSeveral { calls } => write!(
                f,
                "run {run} waits on {} deferred calls ({}); name the one to answer",
                calls.len(),
                listed(calls)
            ),
            Why::TooBig => write!(
                f,
                "the answer is larger than {} bytes (256 KiB); {nothing}",
                MAX_CONTENT
            ),
            Why::WaitsOnNothing { call, answered } => write!(
                f,
                "run {run}: tool call {} waits on nothing: {}; {nothing}",
                shown(call),
                match answered {
                    true => "it is already answered",
                    false => "the run has no pending batch",
                }
            ),
            Why::NotInBatch { call, batch } => write!(
                f,
                "run {run}: {} is not a call of the pending batch ({}); {nothing}",
                shown(call),
                listed(batch)
            ),
            Why::Deferred { call } => write!(
                f,
                "run {run}: tool call {} was deferred: it waits on an answer, not an approval; {nothing}",
                shown(call)
            ),
            Why::AlreadyApproved { call } => write!(
                f,
                "run {run}: tool call {} is already approved; {nothing}",
                shown(call)
            ),
            Why::ToolApproved { tool } => write!(
                f,
                "run {run}: tool {} is approved for the whole run already; {nothing}",
                shown(tool)
            ),
            // The front end says which of its arguments this was.
            Why::NotAToolName { tool } => write!(
                f,
                "{:?} is not a tool name (1 to {MAX_TOOL} bytes, no control characters); {nothing}",
                shown(tool)
            ),
            Why::Ended { reason } => write!(
                f,
                "run {run} is not suspended: it ended {}; an approval is for a run suspended on a gated call, and would reopen this one; {nothing}",
                shown(reason)
            ),
            Why::NothingPending => write!(
                f,
                "run {run} has no call waiting on an approval; {nothing}"
            ),
            Why::NotWaiting { open, tool } => {
                let open = match open {
                    Open::After {
                        seq,
                        kind,
                    } => format!(
                        "records follow its last terminal (seq {seq}, {})",
                        kind.unwrap_or("a record")
                    ),
                    Open::Followed => "records follow its last terminal".to_owned(),
                    Open::NoTerminal => "it has no terminal record".to_owned(),
                };
                let of = match tool {
                    Some(t) => format!(" of tool {}", shown(t)),
                    None => String::new(),
                };
                write!(
                    f,
                    "run {run} is not suspended: {open}, and no call{of} waits unanswered in a pending batch (it is running, or it stopped with nothing to approve); {nothing}"
                )
            }
            Why::OutOfRange { seq, last } => write!(
                f,
                "run {run}: seq {seq} is not one of its records (1 to {last}); {nothing}"
            ),
            Why::NotWhole { seq } => write!(
                f,
                "run {run}: its records 1 to {seq} are not whole (a record missing or out of order); {nothing}"
            ),
            Why::Unrecoverable { why } => write!(
                f,
                "run {run} cannot be recovered: {why}; {nothing}, the journal is as it was"
            ),
            Why::NotAReason { reason } => write!(
                f,
                "{:?} is not a reason the agent reads (completed, suspended, error, budget, max_iterations); {nothing}",
                shown(reason)
            ),
        }
    }
}
