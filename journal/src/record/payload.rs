//! The ten payloads, one struct each with its fields in SPEC order (the
//! order [`Record::encode`](super::Record::encode) writes), and [`Payload`],
//! the one a record carries.

use super::content::{Message, ToolResultBlock};
use super::field::{claimed, created, is_false, is_zero, nullable, Unknown};
use super::Payload;
use crate::time::Time;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// What a run is configured with (SPEC 4): a resume compares the run's
/// fingerprint with its own and refuses or warns by the fields that differ.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Fingerprint {
    /// The LLM provider's name.
    #[serde(default, deserialize_with = "nullable")]
    pub provider: String,
    /// The model's name.
    #[serde(default, deserialize_with = "nullable")]
    pub model: String,
    /// SHA-256 (hex) of the JSON array of system prompt parts.
    #[serde(default, deserialize_with = "nullable")]
    pub system_hash: String,
    /// SHA-256 (hex) of the JSON array of tool definitions.
    #[serde(default, deserialize_with = "nullable")]
    pub tools_hash: String,
    /// `summarized` when thinking is on, `off` otherwise.
    #[serde(default, deserialize_with = "nullable")]
    pub thinking_mode: String,
    /// The reasoning effort asked of the model; empty when unset.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub reasoning_effort: String,
    /// The token budget of one model call.
    #[serde(default, deserialize_with = "nullable")]
    pub max_tokens: i64,
    /// The most iterations the run may take.
    #[serde(default, deserialize_with = "nullable")]
    pub max_iterations: i64,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

impl Fingerprint {
    /// The eight keys in SPEC order, `reasoning_effort` included when
    /// empty (the record leaves it out then): how `fold` and `fingerprint`
    /// print a fingerprint, so that `diff` compares like with like.
    pub fn every_key(&self) -> EveryKey<'_> {
        EveryKey(self)
    }
}

/// [`Fingerprint::every_key`].
pub struct EveryKey<'a>(&'a Fingerprint);

impl Serialize for EveryKey<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let f = self.0;
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("provider", &f.provider)?;
        m.serialize_entry("model", &f.model)?;
        m.serialize_entry("system_hash", &f.system_hash)?;
        m.serialize_entry("tools_hash", &f.tools_hash)?;
        m.serialize_entry("thinking_mode", &f.thinking_mode)?;
        m.serialize_entry("reasoning_effort", &f.reasoning_effort)?;
        m.serialize_entry("max_tokens", &f.max_tokens)?;
        m.serialize_entry("max_iterations", &f.max_iterations)?;
        m.end()
    }
}

/// The first record of every run: who the run is and what it runs with.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Meta {
    /// The format version the journal is written in (1 or 3 are read and written).
    #[serde(default, deserialize_with = "nullable")]
    pub version: i64,
    /// The run's id (SPEC 1.2), as its file name and subject token.
    #[serde(default, deserialize_with = "nullable")]
    pub run_id: String,
    /// Never omitted: a zero time is written `0001-01-01T00:00:00Z`.
    #[serde(default, deserialize_with = "created")]
    pub created: Time,
    /// What the run runs with; a resume compares against it.
    #[serde(default, deserialize_with = "nullable")]
    pub fingerprint: Fingerprint,
    /// The prompt the run started from.
    #[serde(default, deserialize_with = "nullable")]
    pub prompt: String,
    /// The run talks with a person, turn by turn.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub interactive: bool,
    /// An opaque token of the conversation the run continues; empty when none.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub conversation_token: String,
    /// Who started the run (an unverified label); empty when not given.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub caller: String,
    /// The agent that produced the run (version 1; an unverified label).
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub agent: String,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// One model response: its message and what it cost.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Assistant {
    /// The 1-based iteration of the run this response belongs to.
    #[serde(default, deserialize_with = "nullable")]
    pub iteration: i64,
    /// The assistant message (its content blocks).
    #[serde(default, deserialize_with = "nullable")]
    pub message: Message,
    /// Why the model stopped (`end_turn`, `tool_use`, ...); empty when not given.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub stop_reason: String,
    /// Input tokens billed for the call.
    #[serde(default, deserialize_with = "nullable")]
    pub in_tokens: i64,
    /// Output tokens billed for the call.
    #[serde(default, deserialize_with = "nullable")]
    pub out_tokens: i64,
    /// Input tokens read from the prompt cache.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_zero"
    )]
    pub cache_read_tokens: i64,
    /// Input tokens written to the prompt cache.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_zero"
    )]
    pub cache_create_tokens: i64,
    /// Tokens spent thinking.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_zero"
    )]
    pub thinking_tokens: i64,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// A message the user (or the tool loop) gave the model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct User {
    /// The user message (its content blocks).
    #[serde(default, deserialize_with = "nullable")]
    pub message: Message,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// The result of one tool call, answering the `tool_use` of the same id.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ToolResult {
    /// The `tool_use` block this result answers.
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    /// The result block sent to the model.
    #[serde(default, deserialize_with = "nullable")]
    pub result: ToolResultBlock,
    /// The call ran on a remote provider and was dispatched (kept for older
    /// readers; derived from `kind` and `dispatched` in version 1).
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub remote: bool,
    /// The kind of provider that served the call (version 1); empty on a
    /// legacy result.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// The call was handed to its provider (version 1).
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub dispatched: bool,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// A call handed to a person: the run suspends until it is answered.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Deferred {
    /// The `tool_use` block this deferral holds back.
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    /// The tool the call was for.
    #[serde(default, deserialize_with = "nullable")]
    pub tool_name: String,
    /// What the person should do or decide; empty when not given.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub note: String,
    /// A reference the person can use (a ticket id); empty when not given.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub handle: String,
    /// The kind of provider the call was for (version 1); empty when not given.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// The call was handed to its provider (version 1), as opposed to held
    /// back unrun.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub dispatched: bool,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// A standing approval: calls of `tool` run without asking again.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Decision {
    /// The tool approved.
    #[serde(default, deserialize_with = "nullable")]
    pub tool: String,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// An approval of one call, by its `tool_use` id.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct CallApproval {
    /// The `tool_use` block approved.
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    /// The tool the call is for.
    #[serde(default, deserialize_with = "nullable")]
    pub tool_name: String,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// The revision (at least 1) of each memory key the run has seen.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct MemoryRevisions {
    /// `None` is Go's nil map, written `null`. Revisions are unsigned
    /// 64-bit: a negative one does not parse, as for the agent.
    #[serde(default)]
    pub revisions: Option<BTreeMap<String, u64>>,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// The last record of a finished (or suspended) turn: why the run stopped.
/// Read the reason with [`Terminal::reason`].
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Terminal {
    /// The reason as written; [`Terminal::reason`] reads it as a [`super::Reason`].
    #[serde(default, deserialize_with = "nullable")]
    pub reason: String,
    /// What went wrong or why it stopped, for a person; empty when nothing.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
    /// What the conversation had cost when the turn ended (version 1),
    /// kept verbatim: its counters are opaque and the fold never trusts
    /// them. Checked on decode for the types the agent's own decoder
    /// demands.
    #[serde(
        default,
        deserialize_with = "summary",
        skip_serializing_if = "Option::is_none"
    )]
    pub summary: Option<Box<RawValue>>,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

impl PartialEq for Terminal {
    fn eq(&self, o: &Self) -> bool {
        self.reason == o.reason
            && self.message == o.message
            && self.summary.as_ref().map(|r| r.get()) == o.summary.as_ref().map(|r| r.get())
    }
}
impl Eq for Terminal {}

/// `terminal.summary` as the agent's decoder types it: integers for
/// `turns` and `context_tokens`, integer counters, `tool_calls_by_kind`
/// keyed by integers. The bytes are kept; the shape is only checked.
fn summary<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        #[serde(default, deserialize_with = "nullable")]
        turns: i64,
        #[serde(default, deserialize_with = "nullable")]
        context_tokens: i64,
        #[serde(default, deserialize_with = "nullable")]
        counters: CounterShape,
    }
    #[derive(Deserialize, Default)]
    #[allow(dead_code)]
    struct CounterShape {
        #[serde(default, deserialize_with = "nullable")]
        llm_calls: i64,
        #[serde(default, deserialize_with = "nullable")]
        tool_calls: i64,
        #[serde(default, deserialize_with = "nullable")]
        remote_tool_calls: i64,
        #[serde(default, deserialize_with = "nullable")]
        mcp_tool_calls: i64,
        #[serde(default)]
        tool_calls_by_kind: Option<BTreeMap<IntKey, i64>>,
        #[serde(default, deserialize_with = "nullable")]
        in_tokens: i64,
        #[serde(default, deserialize_with = "nullable")]
        out_tokens: i64,
        #[serde(default, deserialize_with = "nullable")]
        cache_read_tokens: i64,
        #[serde(default, deserialize_with = "nullable")]
        cache_create_tokens: i64,
        #[serde(default, deserialize_with = "nullable")]
        thinking_tokens: i64,
    }
    /// A Go map key of an integer type: the key string must be an integer.
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    struct IntKey;
    impl<'de> Deserialize<'de> for IntKey {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IntKey, D::Error> {
            let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
            s.parse::<i64>().map(|_| IntKey).map_err(|_| {
                de::Error::custom(format!("tool_calls_by_kind key {s:?} is not an integer"))
            })
        }
    }
    let raw: Option<Box<RawValue>> = Option::deserialize(d)?;
    match raw {
        Some(r) if r.get() != "null" => {
            serde_json::from_str::<Shape>(r.get())
                .map_err(|e| de::Error::custom(format!("summary: {e}")))?;
            Ok(Some(r))
        }
        _ => Ok(None),
    }
}

/// A worker took the run: the one that appends to it from now on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Claim {
    /// The worker (free text): host and process for this tool.
    #[serde(default, deserialize_with = "nullable")]
    pub by: String,
    /// Never omitted: a zero time is written `0001-01-01T00:00:00Z`.
    #[serde(default, deserialize_with = "claimed")]
    pub claimed: Time,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// Where a payload is decoded from: a map value in place, a string, or a
/// `serde_json::Value`. [`Payload::decode_from`] holds the one match from
/// kind to type; a source says only how one type is read from it.
pub(crate) trait Source<'de> {
    type Error;
    fn take<T: Deserialize<'de>>(self) -> Result<Option<T>, Self::Error>;
}

impl Payload {
    /// The fields of this payload (and of the fingerprint or the result it
    /// holds) that this tool does not know, dotted (`fingerprint.x`).
    pub(crate) fn unknown_fields(&self) -> Vec<String> {
        let nested = |prefix: &str, u: &Unknown| -> Vec<String> {
            u.0.iter().map(|k| format!("{prefix}.{k}")).collect()
        };
        let key = self.kind().key();
        let (top, inner): (&Unknown, Vec<String>) = match self {
            Payload::Meta(p) => (
                &p.unknown,
                nested("meta.fingerprint", &p.fingerprint.unknown),
            ),
            Payload::Assistant(p) => (&p.unknown, Vec::new()),
            Payload::User(p) => (&p.unknown, Vec::new()),
            Payload::ToolResult(p) => (&p.unknown, nested("tool_result.result", &p.result.unknown)),
            Payload::Deferred(p) => (&p.unknown, Vec::new()),
            Payload::Decision(p) => (&p.unknown, Vec::new()),
            Payload::CallApproval(p) => (&p.unknown, Vec::new()),
            Payload::MemoryRevisions(p) => (&p.unknown, Vec::new()),
            Payload::Terminal(p) => (&p.unknown, Vec::new()),
            Payload::Claim(p) => (&p.unknown, Vec::new()),
        };
        let mut out = nested(key, top);
        out.extend(inner);
        out
    }

    /// The first version-1 field this payload carries (`meta.agent`,
    /// `kind`, `dispatched`, `terminal.summary`), for telling a version-3
    /// journal that holds them (SPEC 11 `mixed-generation`).
    pub(crate) fn current_generation_field(&self) -> Option<&'static str> {
        match self {
            Payload::Meta(m) if !m.agent.is_empty() => Some("meta.agent"),
            Payload::ToolResult(t) if !t.kind.is_empty() => Some("tool_result.kind"),
            Payload::ToolResult(t) if t.dispatched => Some("tool_result.dispatched"),
            Payload::Deferred(d) if !d.kind.is_empty() => Some("deferred.kind"),
            Payload::Deferred(d) if d.dispatched => Some("deferred.dispatched"),
            Payload::Terminal(t) if t.summary.is_some() => Some("terminal.summary"),
            _ => None,
        }
    }
}
