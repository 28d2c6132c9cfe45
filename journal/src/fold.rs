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

fn ser_opt_str<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
    if v.is_empty() {
        s.serialize_none()
    } else {
        s.serialize_str(v)
    }
}

/// A message with `content` always an array (Go's `null` reads as empty).
fn ser_message<S: serde::Serializer>(m: &Message, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct M<'a> {
        role: &'a str,
        content: &'a [Block],
    }
    M {
        role: &m.role,
        content: m.blocks(),
    }
    .serialize(s)
}

fn ser_messages<S: serde::Serializer>(ms: &[Message], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(ms.len()))?;
    for m in ms {
        seq.serialize_element(&MessageOut(m))?;
    }
    seq.end()
}
struct MessageOut<'a>(&'a Message);
impl Serialize for MessageOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ser_message(self.0, s)
    }
}

/// Deferred records with every key present (SPEC 11): `null` for an empty
/// note, handle or kind.
fn ser_deferred<S: serde::Serializer>(ds: &[Deferred], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct D<'a> {
        tool_use_id: &'a str,
        tool_name: &'a str,
        note: Option<&'a str>,
        handle: Option<&'a str>,
        kind: Option<&'a str>,
        dispatched: bool,
    }
    fn some(v: &str) -> Option<&str> {
        Some(v).filter(|v| !v.is_empty())
    }
    s.collect_seq(ds.iter().map(|d| D {
        tool_use_id: &d.tool_use_id,
        tool_name: &d.tool_name,
        note: some(&d.note),
        handle: some(&d.handle),
        kind: some(&d.kind),
        dispatched: d.dispatched,
    }))
}

fn ser_fingerprint<S: serde::Serializer>(f: &Fingerprint, s: S) -> Result<S::Ok, S::Error> {
    f.every_key().serialize(s)
}

fn ser_terminal<S: serde::Serializer>(t: &Option<Terminal>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct T<'a> {
        reason: &'a str,
        message: Option<&'a str>,
    }
    match t {
        None => s.serialize_none(),
        Some(t) => T {
            reason: &t.reason,
            message: Some(t.message.as_str()).filter(|m| !m.is_empty()),
        }
        .serialize(s),
    }
}

/// The open assistant turn while folding.
struct Turn {
    message: Message,
    iteration: i64,
    stop_reason: String,
    results: Vec<ToolResultBlock>,
    answered: BTreeSet<String>,
    deferred: Vec<Deferred>,
}

impl Turn {
    fn all_answered(&self) -> bool {
        self.message
            .tool_use_ids()
            .all(|id| self.answered.contains(id))
    }

    fn commit(self, messages: &mut Vec<Message>) {
        messages.push(self.message);
        if !self.results.is_empty() {
            messages.push(Message::user(
                self.results.into_iter().map(Block::ToolResult).collect(),
            ));
        }
    }

    fn into_pending(self) -> Pending {
        let mut deferred = self.deferred;
        deferred.sort_by(|a, b| a.tool_use_id.cmp(&b.tool_use_id));
        let open_deferrals = deferred
            .iter()
            .filter(|d| !self.answered.contains(&d.tool_use_id))
            .cloned()
            .collect();
        Pending {
            assistant: self.message,
            iteration: self.iteration,
            stop_reason: self.stop_reason,
            results: self.results,
            answered: self.answered,
            deferred,
            open_deferrals,
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

/// The fold, one record at a time: what [`fold_with`] does, for a reader
/// that needs to know, before it takes a record, whether the agent's fold
/// would ([`check`](Folder::check)), and what the open turn holds
/// ([`open_turn`](Folder::open_turn)): `recover` decides from it which
/// records it keeps, so that it keeps exactly what the agent reads.
pub struct Folder {
    st: RunState,
    turn: Option<Turn>,
    tail: StatusTracker,
    /// The last terminal was written while the turn open now was open:
    /// its message may name that turn's gated calls.
    terminal_of_turn: bool,
}

/// The turn open in a [`Folder`]: its calls, and which have a result or a
/// deferral.
#[derive(Debug, Clone, Copy)]
pub struct OpenTurn<'a> {
    /// The assistant message that opened it.
    pub message: &'a Message,
    /// The ids with a result.
    pub answered: &'a BTreeSet<String>,
    /// The deferrals recorded.
    pub deferred: &'a [Deferred],
}

impl Folder {
    /// Start the fold with the run's first record, which must be its meta
    /// record (of a version the fold reads, unless `opts.any_version`).
    pub fn new<R: FoldInput>(first: R, opts: FoldOptions) -> Result<Folder, FoldError> {
        let (first_seq, first_is_meta, first_protocol, first_time) = {
            let r = first.record();
            (
                r.seq,
                r.kind() == Some(Kind::Meta),
                r.protocol.clone(),
                r.time,
            )
        };
        let meta = match first.into_payload() {
            Some(Payload::Meta(m)) => m,
            _ if first_is_meta => {
                return Err(FoldError::MissingPayload {
                    seq: first_seq,
                    protocol: first_protocol,
                })
            }
            _ => return Err(FoldError::FirstNotMeta { seq: first_seq }),
        };
        let generation = crate::record::Generation::of(meta.version);
        if generation.is_none() && !opts.any_version {
            return Err(FoldError::Version {
                found: meta.version,
            });
        }
        let st = RunState {
            version: meta.version,
            run_id: meta.run_id,
            agent: meta.agent,
            fingerprint: meta.fingerprint,
            messages: vec![Message::user(vec![Block::text(meta.prompt.clone())])],
            prompt: meta.prompt,
            interactive: meta.interactive,
            conversation_token: meta.conversation_token,
            caller: meta.caller,
            counters: Counters::default(),
            turns: 1,
            context_tokens: 0,
            next_iteration: 0,
            last_stop_reason: String::new(),
            pending: None,
            approvals: Vec::new(),
            call_approvals: Vec::new(),
            memory_revisions: None,
            terminal: None,
            ended: None,
            completed: false,
            status: Status::Open,
            waiting: false,
            open_deferrals: 0,
            needs_approval: Vec::new(),
            last_seq: first_seq,
            last_time: first_time,
            generation,
            rest: Rest::default(),
        };
        Ok(Folder {
            st,
            turn: None,
            tail: StatusTracker::default(),
            terminal_of_turn: false,
        })
    }

    /// Whether the agent's fold takes `r` as the next record: `Err` with
    /// what it refuses, and the fold left as it was.
    pub fn check(&self, r: &Record) -> Result<(), FoldError> {
        let seq = r.seq;
        if seq <= self.st.last_seq {
            return Err(FoldError::SeqNotIncreasing {
                seq,
                previous: self.st.last_seq,
            });
        }
        let Some(payload) = &r.payload else {
            let protocol = r.protocol.clone();
            if r.kind().is_some() {
                return Err(FoldError::MissingPayload { seq, protocol });
            }
            if r.optional {
                return Ok(());
            }
            return Err(FoldError::UnknownProtocol { seq, protocol });
        };
        match payload {
            Payload::Meta(_) => Err(FoldError::SecondMeta { seq }),
            Payload::ToolResult(_) if self.turn.is_none() => Err(FoldError::NoOpenTurn {
                seq,
                kind: Kind::ToolResult,
            }),
            Payload::Deferred(_) if self.turn.is_none() => Err(FoldError::NoOpenTurn {
                seq,
                kind: Kind::Deferred,
            }),
            _ => Ok(()),
        }
    }

    /// The turn open now, if one is.
    pub fn open_turn(&self) -> Option<OpenTurn<'_>> {
        self.turn.as_ref().map(|t| OpenTurn {
            message: &t.message,
            answered: &t.answered,
            deferred: &t.deferred,
        })
    }

    /// Fold the next record: refused as [`check`](Self::check) refuses it
    /// (the fold left as it was), else taken.
    pub fn push<R: FoldInput>(&mut self, r: R) -> Result<(), FoldError> {
        self.check(r.record())?;
        let st = &mut self.st;
        let (seq, time) = (r.record().seq, r.record().time);
        st.last_seq = seq;
        st.last_time = time;
        // Any record after the last terminal reopens the run, a skipped
        // optional one included (SPEC 3 rule 13).
        self.tail.observe(time);
        let Some(payload) = r.into_payload() else {
            // An optional record of a protocol this fold does not know.
            return Ok(());
        };
        let turn = &mut self.turn;
        st.rest = match &payload {
            Payload::ToolResult(tr) => Rest {
                acted: st.rest.acted
                    || turn.as_ref().is_some_and(|t| {
                        t.deferred.iter().any(|d| d.tool_use_id == tr.tool_use_id)
                    }),
                ..st.rest
            },
            Payload::CallApproval(_) | Payload::Decision(_) => Rest {
                acted: true,
                ..st.rest
            },
            Payload::MemoryRevisions(_) => st.rest,
            Payload::Terminal(_) => Rest {
                at_terminal: true,
                acted: false,
            },
            _ => Rest::default(),
        };
        match payload {
            // Refused by `check`.
            Payload::Meta(_) => {}
            Payload::Assistant(a) => {
                if let Some(t) = turn.take() {
                    t.commit(&mut st.messages);
                }
                let c = &mut st.counters;
                c.llm_calls = c.llm_calls.saturating_add(1);
                c.in_tokens = c.in_tokens.saturating_add(a.in_tokens);
                c.out_tokens = c.out_tokens.saturating_add(a.out_tokens);
                c.cache_read_tokens = c.cache_read_tokens.saturating_add(a.cache_read_tokens);
                c.cache_create_tokens = c.cache_create_tokens.saturating_add(a.cache_create_tokens);
                c.thinking_tokens = c.thinking_tokens.saturating_add(a.thinking_tokens);
                st.context_tokens = a
                    .in_tokens
                    .saturating_add(a.cache_read_tokens)
                    .saturating_add(a.cache_create_tokens);
                st.next_iteration = a.iteration.saturating_add(1);
                st.last_stop_reason = a.stop_reason.clone();
                self.terminal_of_turn = false;
                *turn = Some(Turn {
                    message: a.message,
                    iteration: a.iteration,
                    stop_reason: a.stop_reason,
                    results: Vec::new(),
                    answered: BTreeSet::new(),
                    deferred: Vec::new(),
                });
            }
            Payload::ToolResult(tr) => {
                // `check` made sure a turn is open.
                if let Some(t) = turn.as_mut() {
                    st.counters.count_result(&tr);
                    t.answered.insert(tr.tool_use_id);
                    t.results.push(tr.result);
                }
            }
            Payload::Deferred(d) => {
                // The agent keeps deferrals by id: a second one for the
                // same call replaces the first.
                if let Some(t) = turn.as_mut() {
                    match t
                        .deferred
                        .iter_mut()
                        .find(|x| x.tool_use_id == d.tool_use_id)
                    {
                        Some(x) => *x = d,
                        None => t.deferred.push(d),
                    }
                }
            }
            Payload::User(u) => {
                st.turns = st.turns.saturating_add(1);
                if let Some(t) = turn.take() {
                    t.commit(&mut st.messages);
                }
                match st.messages.last_mut() {
                    Some(last) if last.role == "user" => {
                        last.content
                            .get_or_insert_with(Vec::new)
                            .extend(u.message.content.unwrap_or_default());
                    }
                    _ => st.messages.push(u.message),
                }
            }
            Payload::Decision(d) => st.approvals.push(d.tool),
            Payload::CallApproval(c) => st.call_approvals.push(c),
            Payload::MemoryRevisions(m) => {
                st.memory_revisions = m.revisions;
            }
            Payload::Terminal(t) => {
                self.terminal_of_turn = turn.is_some();
                self.tail.terminal(&t.reason, time);
                st.terminal = Some(t);
                st.call_approvals.clear();
            }
            Payload::Claim(_) => {}
        }
        Ok(())
    }

    /// The run state the records folded so far give (SPEC 3 rule 11 on).
    pub fn finish(self) -> RunState {
        let Folder {
            mut st,
            turn,
            tail,
            terminal_of_turn,
        } = self;
        if let Some(t) = turn {
            if t.all_answered() {
                t.commit(&mut st.messages);
            } else {
                st.pending = Some(t.into_pending());
            }
        }
        st.completed = st
            .terminal
            .as_ref()
            .is_some_and(|t| t.reason() == crate::record::Reason::Completed);
        st.open_deferrals = st.pending.as_ref().map_or(0, |p| p.open_deferrals.len());
        st.waiting = st.open_deferrals > 0;
        if terminal_of_turn {
            st.needs_approval = needs_approval(&st);
        }
        st.status = tail.status();
        st.ended = tail.ended();
        st
    }
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

/// What the minimal runner's suspension names before its gated calls.
pub(crate) const NEEDS_APPROVAL: &str = "needs approval: ";
/// What it names its open deferrals after, when there are any.
const WAITING_ON_DEFERRED: &str = "; waiting on deferred call(s): ";

/// The calls of the pending turn that wait on an operator's approval.
///
/// Neither generation of the agent records this: an approval nobody gave
/// ends its run `suspended` with the prompt's error as the message, and
/// the call is left with no result, like any call a suspend cut off. The
/// record of it is fisk-admin's runner's suspension message,
/// `needs approval: ID (TOOL)[, ID (TOOL)...][; waiting on deferred
/// call(s): ...]`. A call of the pending turn counts when that message,
/// the last terminal and written while the turn was open, names it with
/// its own tool, and it has no result, no deferral, no `call_approval`
/// and no standing `decision` for its tool. Called by [`fold_with`],
/// which knows whether the terminal belongs to the pending turn.
fn needs_approval(st: &RunState) -> Vec<Gated> {
    let (Some(p), Some(t)) = (&st.pending, &st.terminal) else {
        return Vec::new();
    };
    if t.reason() != crate::record::Reason::Suspended {
        return Vec::new();
    }
    let Some(list) = t.message.strip_prefix(NEEDS_APPROVAL) else {
        return Vec::new();
    };
    let list = list
        .split_once(WAITING_ON_DEFERRED)
        .map_or(list, |(gated, _)| gated);
    // `ID (TOOL)` as one item of the `, `-joined list, whatever the id.
    let named = |item: &str| {
        list == item
            || list.starts_with(&format!("{item}, "))
            || list.ends_with(&format!(", {item}"))
            || list.contains(&format!(", {item}, "))
    };
    let mut out: Vec<Gated> = Vec::new();
    for b in p.assistant.blocks() {
        let Block::ToolUse(u) = b else { continue };
        // Not yet computed here, so an unapproved call reads `ToRun`.
        let settled = !matches!(st.call(&u.id), CallState::ToRun { .. })
            || out.iter().any(|g| g.tool_use_id == u.id);
        if !settled && named(&format!("{} ({})", u.id, u.name)) {
            out.push(Gated {
                tool_use_id: u.id.clone(),
                tool: u.name.clone(),
            });
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_append_classifies_duplicate_next_and_gap() {
        assert_eq!(check_append(5, 3), Append::Duplicate);
        assert_eq!(check_append(5, 5), Append::Duplicate);
        assert_eq!(check_append(5, 6), Append::Next);
        assert_eq!(check_append(5, 7), Append::Gap);
        assert_eq!(check_append(0, 1), Append::Next);
    }

    #[test]
    fn empty_input_is_an_error() {
        assert_eq!(fold(std::iter::empty::<Record>()), Err(FoldError::Empty));
    }

    const P: &str = "io.choria.fisk-ai.v1.session.";

    /// Records from `(seq, kind, payload JSON)`, with an optional `time`.
    fn recs(items: &[(u64, &str, &str)]) -> Vec<Record> {
        items
            .iter()
            .map(|(seq, kind, body)| {
                let (time, body) = match body.strip_prefix('@') {
                    Some(rest) => {
                        let (t, b) = rest.split_once(' ').unwrap_or((rest, "{}"));
                        (format!(",\"time\":\"{t}\""), b)
                    }
                    None => (String::new(), *body),
                };
                let optional = if kind.starts_with("x-") {
                    ",\"optional\":true"
                } else {
                    ""
                };
                let line = format!(
                    "{{\"seq\":{seq},\"protocol\":\"{P}{kind}\"{time}{optional},\"{kind}\":{body}}}"
                );
                Record::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
            })
            .collect()
    }

    fn meta(version: i64) -> String {
        format!(
            r#"{{"version":{version},"run_id":"r","created":"2026-09-22T09:14:03Z","fingerprint":{{}},"prompt":"go"}}"#
        )
    }

    fn turn(ids: &[&str]) -> String {
        let blocks: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"tool_use":{{"id":"{id}","name":"t","input":{{}}}}}}"#))
            .collect();
        format!(
            r#"{{"iteration":0,"message":{{"role":"assistant","content":[{}]}},"stop_reason":"tool_use","in_tokens":10,"out_tokens":2,"cache_read_tokens":5,"cache_create_tokens":1}}"#,
            blocks.join(",")
        )
    }

    fn result(id: &str, extra: &str) -> String {
        format!(
            r#"{{"tool_use_id":"{id}","result":{{"tool_use_id":"{id}","content":"ok"}}{extra}}}"#
        )
    }

    fn st(items: &[(u64, &str, &str)]) -> RunState {
        fold(recs(items)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn rule_1_the_first_record_is_a_meta_of_version_1_or_3() {
        let m = meta(1);
        assert!(fold(recs(&[(1, "meta", &m)])).is_ok());
        let m3 = meta(3);
        assert_eq!(
            st(&[(1, "meta", &m3)]).generation,
            Some(crate::record::Generation::August)
        );
        let m2 = meta(2);
        assert_eq!(
            fold(recs(&[(1, "meta", &m2)])),
            Err(FoldError::Version { found: 2 })
        );
        assert!(fold_with(
            recs(&[(1, "meta", &m2)]),
            FoldOptions {
                any_version: true,
                until_seq: None
            }
        )
        .is_ok());
        assert_eq!(
            fold(recs(&[(1, "user", r#"{"message":{}}"#)])),
            Err(FoldError::FirstNotMeta { seq: 1 })
        );
        assert_eq!(
            fold(recs(&[(1, "meta", &m), (2, "meta", &m)])),
            Err(FoldError::SecondMeta { seq: 2 })
        );
        assert_eq!(
            fold(recs(&[(2, "meta", &m), (2, "claim", r#"{"by":"x"}"#)])),
            Err(FoldError::SeqNotIncreasing {
                seq: 2,
                previous: 2
            })
        );
    }

    #[test]
    fn rules_2_3_and_12_prompt_turns_counters_and_context() {
        let m = meta(1);
        let t = turn(&[]);
        let s = st(&[(1, "meta", &m), (2, "assistant", &t)]);
        assert_eq!(s.messages.len(), 2, "the prompt, then the committed turn");
        assert_eq!(s.counters.llm_calls, 1);
        assert_eq!(
            (s.counters.in_tokens, s.counters.cache_read_tokens),
            (10, 5)
        );
        assert_eq!(
            s.context_tokens, 16,
            "in + cache read + cache create, last wins"
        );
        assert_eq!(
            (s.next_iteration, s.last_stop_reason.as_str()),
            (1, "tool_use")
        );
        assert_eq!(st(&[(1, "meta", &m)]).next_iteration, 0);
    }

    #[test]
    fn rules_4_5_and_5b_results_deferrals_and_counting_by_kind() {
        let m = meta(1);
        let t = turn(&["a", "b", "c", "d", "e"]);
        let s = st(&[
            (1, "meta", &m),
            (2, "assistant", &t),
            (
                3,
                "tool_result",
                &result("a", r#","kind":"remote","dispatched":true,"remote":true"#),
            ),
            (
                4,
                "tool_result",
                &result("b", r#","kind":"mcp","dispatched":true"#),
            ),
            (5, "tool_result", &result("c", r#","kind":"mcp""#)),
            (6, "tool_result", &result("d", r#","remote":true"#)),
            (
                7,
                "deferred",
                r#"{"tool_use_id":"e","tool_name":"t","kind":"custom","dispatched":true}"#,
            ),
        ]);
        let c = &s.counters;
        assert_eq!(
            (c.tool_calls, c.remote_tool_calls, c.mcp_tool_calls),
            (4, 2, 1)
        );
        assert_eq!(
            c.tool_calls_by_kind.get("remote"),
            Some(&2),
            "a legacy remote result counts as remote"
        );
        assert_eq!(c.tool_calls_by_kind.get("mcp"), Some(&2));
        let p = s.pending.as_ref().expect("a pending turn");
        assert_eq!(p.open_deferrals.len(), 1);
        assert!(s.waiting);
        let orphan = fold(recs(&[
            (1, "meta", &m),
            (2, "tool_result", &result("a", "")),
        ]));
        assert_eq!(
            orphan,
            Err(FoldError::NoOpenTurn {
                seq: 2,
                kind: Kind::ToolResult
            })
        );
    }

    #[test]
    fn rules_6_and_7_user_records_merge_and_commit_the_turn() {
        let m = meta(1);
        let t = turn(&["a"]);
        let u = r#"{"message":{"role":"user","content":[{"text":{"text":"more"}}]}}"#;
        let s = st(&[
            (1, "meta", &m),
            (2, "assistant", &t),
            (3, "tool_result", &result("a", "")),
            (4, "user", u),
            (5, "user", u),
        ]);
        // prompt, assistant, one user message of the result and both texts
        assert_eq!(s.messages.len(), 3);
        assert_eq!(s.messages.last().map(|m| m.blocks().len()), Some(3));
        assert_eq!(s.turns, 3, "1 + the user records");
    }

    #[test]
    fn rules_8_and_9_approvals_revisions_claims_and_terminals() {
        let m = meta(1);
        let s = st(&[
            (1, "meta", &m),
            (2, "decision", r#"{"tool":"t"}"#),
            (3, "call_approval", r#"{"tool_use_id":"a","tool_name":"t"}"#),
            (
                4,
                "memory_revisions",
                r#"{"revisions":{"k":18446744073709551615}}"#,
            ),
            (5, "memory_revisions", r#"{"revisions":{"j":1}}"#),
            (6, "claim", r#"{"by":"w","claimed":"2026-09-22T09:14:03Z"}"#),
        ]);
        assert_eq!(s.approvals, ["t"]);
        assert_eq!(s.call_approvals.len(), 1);
        assert_eq!(
            s.memory_revisions.as_ref().map(|r| r.len()),
            Some(1),
            "newest wins, no merge"
        );
        let s = st(&[
            (1, "meta", &m),
            (2, "call_approval", r#"{"tool_use_id":"a","tool_name":"t"}"#),
            (3, "terminal", r#"{"reason":"suspended"}"#),
        ]);
        assert!(
            s.call_approvals.is_empty(),
            "a terminal spends one-shot approvals"
        );
    }

    #[test]
    fn rule_10_unknown_records_are_skipped_only_when_optional() {
        let m = meta(1);
        let s = st(&[(1, "meta", &m), (2, "x-telemetry", "{}")]);
        assert_eq!(s.last_seq, 2);
        let line = format!("{{\"seq\":2,\"protocol\":\"{P}x-new\",\"x-new\":{{}}}}");
        let r = Record::decode(line.as_bytes()).ok();
        let refused = fold(recs(&[(1, "meta", &m)]).into_iter().chain(r));
        assert!(matches!(
            refused,
            Err(FoldError::UnknownProtocol { seq: 2, .. })
        ));
    }

    #[test]
    fn rule_11_an_open_turn_is_committed_only_when_every_call_is_answered() {
        let m = meta(1);
        let t = turn(&["a", "b"]);
        let half = st(&[
            (1, "meta", &m),
            (2, "assistant", &t),
            (3, "tool_result", &result("b", "")),
        ]);
        let p = half.pending.as_ref().expect("pending");
        assert!(p.answered.contains("b") && !p.answered.contains("a"));
        let whole = st(&[
            (1, "meta", &m),
            (2, "assistant", &t),
            (3, "tool_result", &result("b", "")),
            (4, "tool_result", &result("a", "")),
        ]);
        assert!(whole.pending.is_none());
        assert_eq!(whole.messages.len(), 3);
    }

    #[test]
    fn the_calls_a_suspension_names_need_an_approval_until_approved_or_answered() {
        let m = meta(1);
        let t = turn(&["a", "b, c", "d"]);
        let susp = r#"{"reason":"suspended","message":"needs approval: a (t), b, c (t); waiting on deferred call(s): d"}"#;
        let base = [
            (1, "meta", m.as_str()),
            (2, "assistant", t.as_str()),
            (3, "deferred", r#"{"tool_use_id":"d","tool_name":"t"}"#),
            (4, "terminal", susp),
        ];
        let ids = |s: &RunState| -> Vec<String> {
            s.needs_approval
                .iter()
                .map(|g| format!("{} {}", g.tool_use_id, g.tool))
                .collect()
        };
        let s = st(&base);
        assert_eq!(ids(&s), ["a t", "b, c t"], "an id with \", \" in it too");
        assert_eq!(
            (s.waiting, s.open_deferrals),
            (true, 1),
            "the agent's fields: deferrals only"
        );
        let with = |more: &[(u64, &str, &str)]| {
            let mut all = base.to_vec();
            all.extend_from_slice(more);
            ids(&st(&all))
        };
        let once = r#"{"tool_use_id":"a","tool_name":"t"}"#;
        assert_eq!(with(&[(5, "call_approval", once)]), ["b, c t"]);
        assert!(with(&[(5, "decision", r#"{"tool":"t"}"#)]).is_empty());
        assert!(with(&[(5, "decision", r#"{"tool":"other"}"#)]).len() == 2);
        let answered = result("a", "");
        assert_eq!(with(&[(5, "tool_result", &answered)]), ["b, c t"]);
        // Another tool, another reason, a terminal before the turn: none.
        for (kind, body) in [
            (
                "terminal",
                r#"{"reason":"suspended","message":"needs approval: a (exec)"}"#,
            ),
            (
                "terminal",
                r#"{"reason":"error","message":"needs approval: a (t)"}"#,
            ),
            (
                "terminal",
                r#"{"reason":"suspended","message":"interrupted by a signal"}"#,
            ),
        ] {
            assert!(with(&[(5, kind, body)]).is_empty(), "{body}");
        }
        let again = turn(&["a"]);
        assert!(
            with(&[(5, "claim", r#"{"by":"w"}"#), (6, "assistant", &again)]).is_empty(),
            "the suspension was about the turn before"
        );
    }

    #[test]
    fn rule_13_any_record_after_the_last_terminal_reopens_the_run() {
        let m = meta(1);
        let done = st(&[
            (1, "meta", &m),
            (
                2,
                "terminal",
                "@2026-09-22T09:14:05+02:00 {\"reason\":\"completed\"}",
            ),
        ]);
        assert_eq!(
            done.status,
            Status::Terminal(crate::record::Reason::Completed)
        );
        assert_eq!(
            done.ended.map(|t| t.to_rfc3339()),
            Some("2026-09-22T09:14:05+02:00".into())
        );
        for (kind, body) in [
            ("claim", r#"{"by":"w"}"#),
            ("decision", r#"{"tool":"t"}"#),
            ("x-telemetry", "{}"),
        ] {
            let s = st(&[
                (1, "meta", &m),
                (2, "terminal", r#"{"reason":"completed"}"#),
                (3, kind, body),
            ]);
            assert_eq!(s.status, Status::Open, "{kind}");
            assert!(
                s.completed,
                "{kind}: the resume gate still sees a completed run"
            );
            assert_eq!(s.ended, None, "{kind}");
        }
        let undated = st(&[(1, "meta", &m), (2, "terminal", r#"{"reason":"budget"}"#)]);
        assert_eq!(
            (undated.status, undated.ended),
            (Status::Terminal(crate::record::Reason::Budget), None)
        );
    }
}
