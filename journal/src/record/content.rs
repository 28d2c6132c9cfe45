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
    /// `user` or `assistant`.
    #[serde(default, deserialize_with = "nullable")]
    pub role: String,
    /// The content blocks, in the order written.
    #[serde(default)]
    pub content: Option<Vec<Block>>,
}

impl Message {
    /// The content blocks; none when `content` is `null`.
    pub fn blocks(&self) -> &[Block] {
        self.content.as_deref().unwrap_or(&[])
    }
    /// A user message of `blocks`.
    pub(crate) fn user(blocks: Vec<Block>) -> Message {
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

/// Text the model wrote or was given.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct TextBlock {
    /// The text, verbatim.
    #[serde(default, deserialize_with = "nullable")]
    pub text: String,
}

/// The model's thinking, as the provider returned it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ThinkingBlock {
    /// The (summarized) thinking; empty when the provider gave none.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub text: String,
    /// The provider's signature over the thinking (base64 on the wire).
    #[serde(default, with = "base64_bytes", skip_serializing_if = "Vec::is_empty")]
    pub signature: Vec<u8>,
}

/// A call of a tool the model asked for.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ToolUseBlock {
    /// The call's id; a `tool_result` or `deferred` of the same id answers it.
    #[serde(default, deserialize_with = "nullable")]
    pub id: String,
    /// The tool called.
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
    /// The `tool_use` block this answers.
    #[serde(default, deserialize_with = "nullable")]
    pub tool_use_id: String,
    /// The tool's output as the model sees it.
    #[serde(default, deserialize_with = "nullable")]
    pub content: String,
    /// The output is an error.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "is_false"
    )]
    pub is_error: bool,
    /// Keys this tool does not know (a newer agent's).
    #[serde(flatten, skip_serializing)]
    pub unknown: Unknown,
}

/// A block only one provider understands, kept verbatim.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct ProviderBlock {
    /// The provider's block type.
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    /// The block's JSON as written; `None` when `null`.
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
#[non_exhaustive]
pub enum Block {
    /// [`TextBlock`], key `text`.
    Text(TextBlock),
    /// [`ThinkingBlock`], key `thinking`.
    Thinking(ThinkingBlock),
    /// [`ToolUseBlock`], key `tool_use`.
    ToolUse(ToolUseBlock),
    /// [`ToolResultBlock`], key `tool_result`.
    ToolResult(ToolResultBlock),
    /// [`ProviderBlock`], key `provider`.
    Provider(ProviderBlock),
    /// Its members as written (raw values: nothing is parsed deeper, so a
    /// block nested as deep as Go allows is kept).
    Other(Members),
}

/// The members of a block of another shape, in the order written.
#[derive(Clone, Debug, Default)]
pub struct Members(pub Vec<(String, Box<RawValue>)>);

impl PartialEq for Members {
    fn eq(&self, other: &Members) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|((ka, va), (kb, vb))| ka == kb && va.get() == vb.get())
    }
}

impl Block {
    /// A text block of `s`.
    pub fn text(s: impl Into<String>) -> Block {
        Block::Text(TextBlock { text: s.into() })
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Block::Other(Members(m)) = self {
            let mut map = s.serialize_map(Some(m.len()))?;
            for (k, v) in m {
                map.serialize_entry(k, v)?;
            }
            return map.end();
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

/// A typed block's one member, as a raw value (for a block that turned out
/// to have more members than one).
fn typed_member(b: &Block) -> Option<(String, Box<RawValue>)> {
    let text = serde_json::to_string(b).ok()?;
    let mut m: Vec<(String, Box<RawValue>)> =
        serde_json::from_str::<std::collections::BTreeMap<String, Box<RawValue>>>(&text)
            .ok()?
            .into_iter()
            .collect();
    m.pop()
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
                let mut first_key = String::new();
                let mut other: Vec<(String, Box<RawValue>)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    // A key given twice is refused here and settled by the
                    // scanner (`Record::decode`).
                    if (first.is_some() && key == first_key) || other.iter().any(|(k, _)| *k == key)
                    {
                        return Err(serde::de::Error::custom("a key is given twice"));
                    }
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
                            first_key = key;
                            continue;
                        }
                    }
                    // A block of another shape: keep everything as JSON.
                    if let Some(b) = first.take() {
                        if let Some((k, v)) = typed_member(&b) {
                            other.push((k, v));
                        }
                    }
                    let v: Box<RawValue> = map.next_value()?;
                    other.push((key, v));
                }
                Ok(match first {
                    Some(b) => b,
                    None => Block::Other(Members(other)),
                })
            }
        }
        d.deserialize_map(V)
    }
}
