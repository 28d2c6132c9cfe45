//! How a folded run is written as JSON (SPEC 11, docs/OUTPUT.md): every
//! key present, Go's empty values as it prints them.

use crate::record::{Block, Deferred, Fingerprint, Message, Terminal};
use serde::Serialize;

pub(super) fn ser_opt_str<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
    if v.is_empty() {
        s.serialize_none()
    } else {
        s.serialize_str(v)
    }
}

/// A message with `content` always an array (Go's `null` reads as empty).
pub(super) fn ser_message<S: serde::Serializer>(m: &Message, s: S) -> Result<S::Ok, S::Error> {
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

pub(super) fn ser_messages<S: serde::Serializer>(ms: &[Message], s: S) -> Result<S::Ok, S::Error> {
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
pub(super) fn ser_deferred<S: serde::Serializer>(ds: &[Deferred], s: S) -> Result<S::Ok, S::Error> {
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

pub(super) fn ser_fingerprint<S: serde::Serializer>(
    f: &Fingerprint,
    s: S,
) -> Result<S::Ok, S::Error> {
    f.every_key().serialize(s)
}

pub(super) fn ser_terminal<S: serde::Serializer>(
    t: &Option<Terminal>,
    s: S,
) -> Result<S::Ok, S::Error> {
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
