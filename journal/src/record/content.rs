//! Message content: [`Message`] and its blocks. A block is an object with
//! exactly one key; one of another shape is kept whole as [`Block::Other`].
//! Raw JSON (`tool_use.input`, `provider.raw`) is kept verbatim and a nil
//! one written `null`, as Go does.

use super::field::{base64_bytes, is_false, nullable, Nullable, Unknown};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;

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
