//! Encoding: a record's canonical bytes, as the Go agent writes them. The
//! envelope keys come first in SPEC order (`seq`, `protocol`, `time`,
//! `optional`), then the payload under its key. Inside the payload the
//! order is the field order of the structs in `payload` and `content`; the
//! escaping is [`crate::gojson`]'s.

use super::{Payload, Record};
use crate::gojson;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

impl Record {
    /// The canonical bytes (no newline), as the Go agent writes them.
    /// `None` for a record without a decodable payload: such a record can
    /// only be copied, never re-encoded.
    /// # Examples
    ///
    /// ```
    /// use journal::record::{Decision, Payload, Record};
    ///
    /// let approval = Decision { tool: "exec".into(), ..Decision::default() };
    /// let r = Record::new(2, Payload::Decision(approval));
    /// let bytes = r.encode().unwrap_or_default();
    /// assert_eq!(
    ///     String::from_utf8_lossy(&bytes),
    ///     r#"{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision","optional":true,"decision":{"tool":"exec"}}"#
    /// );
    /// assert_eq!(Record::decode(&bytes)?, r);
    /// # Ok::<(), journal::record::DecodeError>(())
    /// ```
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
        m.serialize_entry(self.1.kind().key(), self.1)?;
        m.end()
    }
}
