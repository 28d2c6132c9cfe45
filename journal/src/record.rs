//! Records: the ten protocols of SPEC 1, decoded from journal bytes and
//! encoded back into the Go agent's canonical bytes.
//!
//! Decoding follows Go's `encoding/json` where the agent depends on it: a
//! field that is absent or `null` reads as its zero value, unknown fields are
//! ignored (new `?` fields fold as zero), and a wrong JSON type fails the whole
//! record — for the agent such a line "does not parse". Encoding writes the
//! keys in SPEC order, omits zero `?` fields and escapes as Go does
//! ([`crate::gojson`]). Copying a record never re-encodes it: [`Entry::raw`]
//! keeps the bytes it was read from.

use crate::gojson;
use crate::time::Time;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;

/// The format version the agent as it ships now writes, and this tool
/// creates new runs in (SPEC 1.1).
pub const VERSION: i64 = 1;

/// The format version the August 2026 agent wrote (SPEC 1.1).
pub const VERSION_AUGUST: i64 = 3;

/// The two generations of the agent whose journals this tool reads and
/// writes (SPEC 1.1). `meta.version` names one; any other version is read
/// for inspection only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    /// Version 1: the agent as it ships now. Appends carry `time`.
    Current,
    /// Version 3: the August 2026 agent. Appends carry no `time`.
    August,
}

impl Generation {
    pub fn of(version: i64) -> Option<Generation> {
        match version {
            VERSION => Some(Generation::Current),
            VERSION_AUGUST => Some(Generation::August),
            _ => None,
        }
    }

    pub fn version(self) -> i64 {
        match self {
            Generation::Current => VERSION,
            Generation::August => VERSION_AUGUST,
        }
    }

    /// Whether a record appended to a journal of this generation is
    /// stamped with `time` (SPEC 2).
    pub fn stamps_time(self) -> bool {
        self == Generation::Current
    }
}

/// Every protocol id starts with this.
pub const PROTOCOL_PREFIX: &str = "io.choria.fisk-ai.v1.session.";

/// The ten record kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Kind {
    Meta,
    Assistant,
    User,
    ToolResult,
    Deferred,
    Decision,
    CallApproval,
    MemoryRevisions,
    Terminal,
    Claim,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Meta,
        Kind::Assistant,
        Kind::User,
        Kind::ToolResult,
        Kind::Deferred,
        Kind::Decision,
        Kind::CallApproval,
        Kind::MemoryRevisions,
        Kind::Terminal,
        Kind::Claim,
    ];

    /// The protocol id's last segment, which is also the payload key.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Assistant => "assistant",
            Kind::User => "user",
            Kind::ToolResult => "tool_result",
            Kind::Deferred => "deferred",
            Kind::Decision => "decision",
            Kind::CallApproval => "call_approval",
            Kind::MemoryRevisions => "memory_revisions",
            Kind::Terminal => "terminal",
            Kind::Claim => "claim",
        }
    }

    /// The full protocol id.
    pub fn protocol(self) -> &'static str {
        match self {
            Kind::Meta => "io.choria.fisk-ai.v1.session.meta",
            Kind::Assistant => "io.choria.fisk-ai.v1.session.assistant",
            Kind::User => "io.choria.fisk-ai.v1.session.user",
            Kind::ToolResult => "io.choria.fisk-ai.v1.session.tool_result",
            Kind::Deferred => "io.choria.fisk-ai.v1.session.deferred",
            Kind::Decision => "io.choria.fisk-ai.v1.session.decision",
            Kind::CallApproval => "io.choria.fisk-ai.v1.session.call_approval",
            Kind::MemoryRevisions => "io.choria.fisk-ai.v1.session.memory_revisions",
            Kind::Terminal => "io.choria.fisk-ai.v1.session.terminal",
            Kind::Claim => "io.choria.fisk-ai.v1.session.claim",
        }
    }

    pub fn from_protocol(protocol: &str) -> Option<Kind> {
        let suffix = protocol.strip_prefix(PROTOCOL_PREFIX)?;
        Kind::ALL.into_iter().find(|k| k.key() == suffix)
    }

    /// Records that never change what the run is doing (SPEC 9).
    pub fn is_inert(self) -> bool {
        matches!(
            self,
            Kind::Claim | Kind::Decision | Kind::CallApproval | Kind::MemoryRevisions
        )
    }
}

/// Go reads `null` into a non-pointer field as "leave it zero".
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A time field that names itself when it does not parse.
fn named_time<'de, D: Deserializer<'de>>(d: D, name: &str) -> Result<Time, D::Error> {
    Time::deserialize(d).map_err(|e| de::Error::custom(format!("field `{name}`: {e}")))
}
fn created<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
    named_time(d, "created")
}
fn claimed<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
    named_time(d, "claimed")
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Payload fields this tool does not know: what a newer agent wrote (SPEC
/// 1.3). Collected while decoding, never written back (a record is copied
/// by its bytes, not re-encoded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unknown(pub Vec<String>);

impl<'de> Deserialize<'de> for Unknown {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unknown, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Unknown;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("fields")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unknown, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, de::IgnoredAny)) = map.next_entry::<String, de::IgnoredAny>()? {
                    keys.push(k);
                }
                Ok(Unknown(keys))
            }
        }
        d.deserialize_map(V)
    }
}
fn is_zero(n: &i64) -> bool {
    *n == 0
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Fingerprint {
    #[serde(default, deserialize_with = "nullable")]
    pub provider: String,
    #[serde(default, deserialize_with = "nullable")]
    pub model: String,
    #[serde(default, deserialize_with = "nullable")]
    pub system_hash: String,
    #[serde(default, deserialize_with = "nullable")]
    pub tools_hash: String,
    #[serde(default, deserialize_with = "nullable")]
    pub thinking_mode: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub reasoning_effort: String,
    #[serde(default, deserialize_with = "nullable")]
    pub max_tokens: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub max_iterations: i64,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Meta {
    #[serde(default, deserialize_with = "nullable")]
    pub version: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub run_id: String,
    /// Never omitted: a zero time is written `0001-01-01T00:00:00Z`.
    #[serde(default, deserialize_with = "created")]
    pub created: Time,
    #[serde(default, deserialize_with = "nullable")]
    pub fingerprint: Fingerprint,
    #[serde(default, deserialize_with = "nullable")]
    pub prompt: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub interactive: bool,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub conversation_token: String,
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
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// `{role, content}`. `content: None` is Go's nil slice, written `null`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Message {
    #[serde(default, deserialize_with = "nullable")]
    pub role: String,
    #[serde(default)]
    pub content: Option<Vec<Block>>,
}

impl Message {
    pub fn blocks(&self) -> &[Block] {
        self.content.as_deref().unwrap_or(&[])
    }
    pub fn user(blocks: Vec<Block>) -> Message {
        Message {
            role: "user".into(),
            content: Some(blocks),
        }
    }
    /// The ids of the `tool_use` blocks, in message order.
    pub fn tool_use_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks().iter().filter_map(|b| match b {
            Block::ToolUse(t) => Some(t.id.as_str()),
            _ => None,
        })
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct TextBlock {
    #[serde(default, deserialize_with = "nullable")]
    pub text: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ThinkingBlock {
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub text: String,
    #[serde(default, with = "base64_bytes", skip_serializing_if = "Vec::is_empty")]
    pub signature: Vec<u8>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ToolUseBlock {
    #[serde(default, deserialize_with = "nullable")]
    pub id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// Any JSON, verbatim. `None` is Go's nil RawMessage, written `null`.
    #[serde(default)]
    pub input: Option<Box<RawValue>>,
}

impl PartialEq for ToolUseBlock {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id && self.name == o.name && raw_eq(&self.input, &o.input)
    }
}

/// A tool's answer: the block form and the `result` of a tool_result record.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ToolResultBlock {
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub content: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub is_error: bool,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ProviderBlock {
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default)]
    pub raw: Option<Box<RawValue>>,
}

impl PartialEq for ProviderBlock {
    fn eq(&self, o: &Self) -> bool {
        self.kind == o.kind && raw_eq(&self.raw, &o.raw)
    }
}

fn raw_eq(a: &Option<Box<RawValue>>, b: &Option<Box<RawValue>>) -> bool {
    let text = |r: &Option<Box<RawValue>>| r.as_ref().map(|r| r.get().to_owned());
    text(a).unwrap_or_else(|| "null".into()) == text(b).unwrap_or_else(|| "null".into())
}

/// A content block: an object with exactly one key. A block with another
/// shape is kept as [`Block::Other`] so nothing the agent wrote is lost.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Text(TextBlock),
    Thinking(ThinkingBlock),
    ToolUse(ToolUseBlock),
    ToolResult(ToolResultBlock),
    Provider(ProviderBlock),
    Other(serde_json::Map<String, serde_json::Value>),
}

impl Block {
    pub fn text(s: impl Into<String>) -> Block {
        Block::Text(TextBlock { text: s.into() })
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Block::Other(m) = self {
            return m.serialize(s);
        }
        let mut map = s.serialize_map(Some(1))?;
        match self {
            Block::Text(b) => map.serialize_entry("text", b)?,
            Block::Thinking(b) => map.serialize_entry("thinking", b)?,
            Block::ToolUse(b) => map.serialize_entry("tool_use", &ToolUseOut(b))?,
            Block::ToolResult(b) => map.serialize_entry("tool_result", b)?,
            Block::Provider(b) => map.serialize_entry("provider", &ProviderOut(b))?,
            Block::Other(_) => {}
        }
        map.end()
    }
}

/// Serialises a nil RawMessage as `null`, as Go does.
struct RawOrNull<'a>(&'a Option<Box<RawValue>>);
impl Serialize for RawOrNull<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(r) => r.serialize(s),
            None => s.serialize_unit(),
        }
    }
}
struct ToolUseOut<'a>(&'a ToolUseBlock);
impl Serialize for ToolUseOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("id", &self.0.id)?;
        m.serialize_entry("name", &self.0.name)?;
        m.serialize_entry("input", &RawOrNull(&self.0.input))?;
        m.end()
    }
}
struct ProviderOut<'a>(&'a ProviderBlock);
impl Serialize for ProviderOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("kind", &self.0.kind)?;
        m.serialize_entry("raw", &RawOrNull(&self.0.raw))?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Block, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Block;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a content block object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
                let mut first: Option<Block> = None;
                let mut other = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if first.is_none() && other.is_empty() {
                        let typed = match key.as_str() {
                            "text" => Some(Block::Text(map.next_value::<Nullable<_>>()?.0)),
                            "thinking" => Some(Block::Thinking(map.next_value::<Nullable<_>>()?.0)),
                            "tool_use" => Some(Block::ToolUse(map.next_value::<Nullable<_>>()?.0)),
                            "tool_result" => {
                                Some(Block::ToolResult(map.next_value::<Nullable<_>>()?.0))
                            }
                            "provider" => Some(Block::Provider(map.next_value::<Nullable<_>>()?.0)),
                            _ => None,
                        };
                        if let Some(b) = typed {
                            first = Some(b);
                            continue;
                        }
                    }
                    // A block of another shape: keep everything as JSON.
                    if let Some(b) = first.take() {
                        if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&b) {
                            other.extend(m);
                        }
                    }
                    let v: serde_json::Value = map.next_value()?;
                    other.insert(key, v);
                }
                Ok(match first {
                    Some(b) => b,
                    None => Block::Other(other),
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// `null` reads as the zero value (Go semantics) for a whole struct.
struct Nullable<T>(T);
impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Nullable(Option::<T>::deserialize(d)?.unwrap_or_default()))
    }
}

mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s: Option<std::borrow::Cow<'de, str>> = Option::deserialize(d)?;
        match s {
            None => Ok(Vec::new()),
            Some(s) => base64::engine::general_purpose::STANDARD
                .decode(s.as_bytes())
                .map_err(|e| serde::de::Error::custom(format!("signature is not base64: {e}"))),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Assistant {
    #[serde(default, deserialize_with = "nullable")]
    pub iteration: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub message: Message,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub stop_reason: String,
    #[serde(default, deserialize_with = "nullable")]
    pub in_tokens: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub out_tokens: i64,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_zero"
    )]
    pub cache_read_tokens: i64,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_zero"
    )]
    pub cache_create_tokens: i64,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_zero"
    )]
    pub thinking_tokens: i64,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct User {
    #[serde(default, deserialize_with = "nullable")]
    pub message: Message,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ToolResult {
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub result: ToolResultBlock,
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
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Deferred {
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub tool_name: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub note: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub handle: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub dispatched: bool,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Decision {
    #[serde(default, deserialize_with = "nullable")]
    pub tool: String,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct CallApproval {
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub tool_name: String,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct MemoryRevisions {
    /// `None` is Go's nil map, written `null`. Revisions are unsigned
    /// 64-bit: a negative one does not parse, as for the agent.
    #[serde(default)]
    pub revisions: Option<BTreeMap<String, u64>>,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Terminal {
    #[serde(default, deserialize_with = "nullable")]
    pub reason: String,
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

/// Why a run stopped (SPEC 1 `terminal.reason`). A reason a newer agent
/// writes is kept as it is (`Other`): the journal's text is the truth, and
/// the status shows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    Completed,
    Suspended,
    Error,
    Budget,
    MaxIterations,
    Other(String),
}

impl Reason {
    pub fn parse(s: &str) -> Reason {
        match s {
            "completed" => Reason::Completed,
            "suspended" => Reason::Suspended,
            "error" => Reason::Error,
            "budget" => Reason::Budget,
            "max_iterations" => Reason::MaxIterations,
            other => Reason::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Reason::Completed => "completed",
            Reason::Suspended => "suspended",
            Reason::Error => "error",
            Reason::Budget => "budget",
            Reason::MaxIterations => "max_iterations",
            Reason::Other(s) => s,
        }
    }
}

impl Terminal {
    /// A terminal record of `reason`.
    pub fn new(reason: Reason, message: String) -> Terminal {
        Terminal {
            reason: reason.as_str().to_owned(),
            message,
            ..Terminal::default()
        }
    }

    pub fn reason(&self) -> Reason {
        Reason::parse(&self.reason)
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct Claim {
    #[serde(default, deserialize_with = "nullable")]
    pub by: String,
    /// Never omitted: a zero time is written `0001-01-01T00:00:00Z`.
    #[serde(default, deserialize_with = "claimed")]
    pub claimed: Time,
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// A decoded payload.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    Meta(Meta),
    Assistant(Assistant),
    User(User),
    ToolResult(ToolResult),
    Deferred(Deferred),
    Decision(Decision),
    CallApproval(CallApproval),
    MemoryRevisions(MemoryRevisions),
    Terminal(Terminal),
    Claim(Claim),
}

impl Payload {
    pub fn kind(&self) -> Kind {
        match self {
            Payload::Meta(_) => Kind::Meta,
            Payload::Assistant(_) => Kind::Assistant,
            Payload::User(_) => Kind::User,
            Payload::ToolResult(_) => Kind::ToolResult,
            Payload::Deferred(_) => Kind::Deferred,
            Payload::Decision(_) => Kind::Decision,
            Payload::CallApproval(_) => Kind::CallApproval,
            Payload::MemoryRevisions(_) => Kind::MemoryRevisions,
            Payload::Terminal(_) => Kind::Terminal,
            Payload::Claim(_) => Kind::Claim,
        }
    }

    /// The fields of this payload (and of the fingerprint or the result it
    /// holds) that this tool does not know, dotted (`fingerprint.x`).
    pub fn unknown_fields(&self) -> Vec<String> {
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
    pub fn current_generation_field(&self) -> Option<&'static str> {
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

    fn from_value(kind: Kind, v: serde_json::Value) -> serde_json::Result<Payload> {
        use serde_json::from_value as p;
        Ok(match kind {
            Kind::Meta => Payload::Meta(p(v)?),
            Kind::Assistant => Payload::Assistant(p(v)?),
            Kind::User => Payload::User(p(v)?),
            Kind::ToolResult => Payload::ToolResult(p(v)?),
            Kind::Deferred => Payload::Deferred(p(v)?),
            Kind::Decision => Payload::Decision(p(v)?),
            Kind::CallApproval => Payload::CallApproval(p(v)?),
            Kind::MemoryRevisions => Payload::MemoryRevisions(p(v)?),
            Kind::Terminal => Payload::Terminal(p(v)?),
            Kind::Claim => Payload::Claim(p(v)?),
        })
    }

    fn decode(kind: Kind, raw: &str) -> serde_json::Result<Payload> {
        use serde_json::from_str as p;
        Ok(match kind {
            Kind::Meta => Payload::Meta(p(raw)?),
            Kind::Assistant => Payload::Assistant(p(raw)?),
            Kind::User => Payload::User(p(raw)?),
            Kind::ToolResult => Payload::ToolResult(p(raw)?),
            Kind::Deferred => Payload::Deferred(p(raw)?),
            Kind::Decision => Payload::Decision(p(raw)?),
            Kind::CallApproval => Payload::CallApproval(p(raw)?),
            Kind::MemoryRevisions => Payload::MemoryRevisions(p(raw)?),
            Kind::Terminal => Payload::Terminal(p(raw)?),
            Kind::Claim => Payload::Claim(p(raw)?),
        })
    }
}

/// One record, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub seq: u64,
    pub protocol: String,
    /// When the record was appended (version 1); `None` when absent, `null`
    /// or zero (Go omits a zero time).
    pub time: Option<Time>,
    pub optional: bool,
    /// `None` when the protocol is unknown, or known but its payload key is
    /// absent or `null`.
    pub payload: Option<Payload>,
    /// Top-level keys other than the envelope and the payload key.
    pub extra_keys: Vec<String>,
}

/// Why a line is not a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// false: not JSON at all; true: JSON, but a field has the wrong type.
    pub json_ok: bool,
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

struct Envelope<'a> {
    seq: u64,
    protocol: String,
    time: Option<Time>,
    optional: bool,
    /// The payload when it was decoded in the same pass (the protocol came
    /// before it, as in every canonical record). `Some(None)`: it was null.
    payload: Option<Option<Payload>>,
    others: Vec<(String, &'a RawValue)>,
}

/// Decodes a payload of a known kind straight from the map value.
struct PayloadSeed(Kind);

impl<'de> de::DeserializeSeed<'de> for PayloadSeed {
    type Value = Option<Payload>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        fn p<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
            Option::<T>::deserialize(d)
        }
        Ok(match self.0 {
            Kind::Meta => p(d)?.map(Payload::Meta),
            Kind::Assistant => p(d)?.map(Payload::Assistant),
            Kind::User => p(d)?.map(Payload::User),
            Kind::ToolResult => p(d)?.map(Payload::ToolResult),
            Kind::Deferred => p(d)?.map(Payload::Deferred),
            Kind::Decision => p(d)?.map(Payload::Decision),
            Kind::CallApproval => p(d)?.map(Payload::CallApproval),
            Kind::MemoryRevisions => p(d)?.map(Payload::MemoryRevisions),
            Kind::Terminal => p(d)?.map(Payload::Terminal),
            Kind::Claim => p(d)?.map(Payload::Claim),
        })
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Envelope<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a record object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'a>, A::Error> {
                let mut env = Envelope {
                    seq: 0,
                    protocol: String::new(),
                    time: None,
                    optional: false,
                    payload: None,
                    others: Vec::new(),
                };
                let mut kind: Option<Kind> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "seq" => {
                            env.seq = map
                                .next_value::<Nullable<u64>>()
                                .map_err(|e| de::Error::custom(format!("field `seq`: {e}")))?
                                .0
                        }
                        "protocol" => {
                            env.protocol = map
                                .next_value::<Nullable<String>>()
                                .map_err(|e| de::Error::custom(format!("field `protocol`: {e}")))?
                                .0;
                            kind = Kind::from_protocol(&env.protocol);
                        }
                        "time" => {
                            let t: Time = map
                                .next_value()
                                .map_err(|e| de::Error::custom(format!("field `time`: {e}")))?;
                            env.time = Some(t).filter(|t| !t.is_zero());
                        }
                        "optional" => {
                            env.optional = map
                                .next_value::<Nullable<bool>>()
                                .map_err(|e| de::Error::custom(format!("field `optional`: {e}")))?
                                .0
                        }
                        k if env.payload.is_none() && kind.is_some_and(|kd| kd.key() == k) => {
                            let kd = kind.unwrap_or(Kind::Meta);
                            env.payload =
                                Some(map.next_value_seed(PayloadSeed(kd)).map_err(|e| {
                                    de::Error::custom(format!("`{}` payload: {e}", kd.key()))
                                })?);
                        }
                        _ => {
                            let v: &'de RawValue = map.next_value()?;
                            env.others.push((key.into_owned(), v));
                        }
                    }
                }
                Ok(env)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl Record {
    /// Decode one journal line (without its newline).
    pub fn decode(line: &[u8]) -> Result<Record, DecodeError> {
        let env: Envelope = match serde_json::from_slice(line) {
            Ok(e) => e,
            Err(e) => {
                // Tell "not JSON" from "JSON of the wrong shape".
                let json_ok =
                    e.is_data() && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok();
                return Err(DecodeError {
                    json_ok,
                    message: e.to_string(),
                });
            }
        };
        let kind = Kind::from_protocol(&env.protocol);
        let decoded_inline = env.payload.is_some();
        let mut payload = env.payload.flatten();
        let mut extra_keys = Vec::new();
        for (key, raw) in env.others {
            // The payload key seen before the protocol (never in canonical
            // records): decode it now. A second copy of it is an extra key.
            if let Some(kind) = kind.filter(|k| k.key() == key && !decoded_inline) {
                if raw.get() == "null" {
                    continue;
                }
                payload = Some(Payload::decode(kind, raw.get()).map_err(|e| DecodeError {
                    json_ok: true,
                    message: format!("`{}` payload: {e}", kind.key()),
                })?);
            } else {
                extra_keys.push(key);
            }
        }
        Ok(Record {
            seq: env.seq,
            protocol: env.protocol,
            time: env.time,
            optional: env.optional,
            payload,
            extra_keys,
        })
    }

    /// Decode a record from an already parsed JSON value, with the same
    /// rules as [`Record::decode`]. Used where the value is needed anyway
    /// (the schema check), so a line is parsed once. The value's strings are
    /// moved, not copied. Raw JSON fields (`tool_use.input`, `provider.raw`)
    /// come out re-serialised (keys sorted): a record decoded this way is
    /// for checking, never for copying or re-encoding.
    pub fn from_value(v: serde_json::Value) -> Result<Record, DecodeError> {
        let wrong = |message: String| DecodeError {
            json_ok: true,
            message,
        };
        let serde_json::Value::Object(mut map) = v else {
            return Err(wrong("invalid type: expected a record object".into()));
        };
        fn field<T: serde::de::DeserializeOwned + Default>(
            map: &mut serde_json::Map<String, serde_json::Value>,
            key: &str,
        ) -> Result<T, DecodeError> {
            match map.remove(key) {
                None | Some(serde_json::Value::Null) => Ok(T::default()),
                Some(v) => serde_json::from_value(v).map_err(|e| DecodeError {
                    json_ok: true,
                    message: format!("field `{key}`: {e}"),
                }),
            }
        }
        let seq: u64 = field(&mut map, "seq")?;
        let protocol: String = field(&mut map, "protocol")?;
        let time: Time = field(&mut map, "time")?;
        let optional: bool = field(&mut map, "optional")?;
        let kind = Kind::from_protocol(&protocol);
        let payload = match kind {
            Some(k) => match map.remove(k.key()) {
                None | Some(serde_json::Value::Null) => None,
                Some(v) => Some(
                    Payload::from_value(k, v)
                        .map_err(|e| wrong(format!("`{}` payload: {e}", k.key())))?,
                ),
            },
            None => None,
        };
        Ok(Record {
            seq,
            protocol,
            time: Some(time).filter(|t| !t.is_zero()),
            optional,
            payload,
            extra_keys: map.into_iter().map(|(k, _)| k).collect(),
        })
    }

    /// [`Record::from_value`] of the value parsed from `line`, judged as
    /// [`Record::decode`] judges the bytes: a time written with an escape
    /// (`\u0054`) is refused by Go, which parses a time's raw bytes, but a
    /// parsed value has lost the escape, so such a line is decoded from its
    /// bytes instead (and fails there).
    pub fn from_value_of(v: serde_json::Value, line: &[u8]) -> Result<Record, DecodeError> {
        let literal = ["/time", "/meta/created", "/claim/claimed"]
            .iter()
            .filter_map(|p| v.pointer(p).and_then(serde_json::Value::as_str))
            .all(|t| {
                // `"<t>"` in the bytes, found without building it.
                memchr::memmem::find_iter(line, t.as_bytes()).any(|at| {
                    at.checked_sub(1).and_then(|b| line.get(b)) == Some(&b'"')
                        && line.get(at + t.len()) == Some(&b'"')
                })
            });
        if literal {
            Record::from_value(v)
        } else {
            Record::decode(line)
        }
    }

    pub fn kind(&self) -> Option<Kind> {
        Kind::from_protocol(&self.protocol)
    }

    /// A new record of this payload at `seq`.
    pub fn new(seq: u64, payload: Payload) -> Record {
        Record {
            seq,
            protocol: payload.kind().protocol().to_owned(),
            time: None,
            optional: false,
            payload: Some(payload),
            extra_keys: Vec::new(),
        }
    }

    /// The canonical bytes (no newline), as the Go agent writes them.
    /// `None` for a record without a decodable payload: such a record can
    /// only be copied, never re-encoded.
    pub fn encode(&self) -> Option<Vec<u8>> {
        let payload = self.payload.as_ref()?;
        Some(gojson::to_vec(&CanonicalRecord(self, payload)))
    }
}

struct CanonicalRecord<'a>(&'a Record, &'a Payload);
impl Serialize for CanonicalRecord<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("seq", &r.seq)?;
        m.serialize_entry("protocol", &r.protocol)?;
        if let Some(t) = r.time.filter(|t| !t.is_zero()) {
            m.serialize_entry("time", &t)?;
        }
        if r.optional {
            m.serialize_entry("optional", &true)?;
        }
        let key = self.1.kind().key();
        match self.1 {
            Payload::Meta(p) => m.serialize_entry(key, p)?,
            Payload::Assistant(p) => m.serialize_entry(key, p)?,
            Payload::User(p) => m.serialize_entry(key, p)?,
            Payload::ToolResult(p) => m.serialize_entry(key, p)?,
            Payload::Deferred(p) => m.serialize_entry(key, p)?,
            Payload::Decision(p) => m.serialize_entry(key, p)?,
            Payload::CallApproval(p) => m.serialize_entry(key, p)?,
            Payload::MemoryRevisions(p) => m.serialize_entry(key, p)?,
            Payload::Terminal(p) => m.serialize_entry(key, p)?,
            Payload::Claim(p) => m.serialize_entry(key, p)?,
        }
        m.end()
    }
}

/// A record together with where it was read from and its exact bytes.
#[derive(Clone, Debug)]
pub struct Entry {
    /// 1-based line number (file backend) or position in the run.
    pub line: usize,
    /// Byte offset of the line's start (file backend; 0 elsewhere).
    pub offset: u64,
    /// The record's bytes exactly as stored, without the newline.
    pub raw: Vec<u8>,
    pub record: Record,
}
