//! Go's `encoding/json` field rules, as serde helpers for the record
//! structs: `null` reads as zero, a time names its field when it fails,
//! the zero tests behind `omitempty`, `[]byte` as base64, and the
//! collection of fields this tool does not know.

use crate::time::Time;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// Go reads `null` into a non-pointer field as "leave it zero".
pub(super) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
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
pub(super) fn created<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
    named_time(d, "created")
}
pub(super) fn claimed<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
    named_time(d, "claimed")
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

pub(super) fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// `null` reads as the zero value (Go semantics) for a whole struct.
pub(super) struct Nullable<T>(pub(super) T);
impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Nullable(Option::<T>::deserialize(d)?.unwrap_or_default()))
    }
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
                let mut keys: Vec<String> = Vec::new();
                while let Some((k, de::IgnoredAny)) = map.next_entry::<String, de::IgnoredAny>()? {
                    // A key given twice is settled by the scanner
                    // (`Record::decode`).
                    if keys.contains(&k) {
                        return Err(de::Error::custom("a key is given twice"));
                    }
                    keys.push(k);
                }
                Ok(Unknown(keys))
            }
        }
        d.deserialize_map(V)
    }
}

/// Go's `[]byte`: base64 text; absent or `null` reads as empty.
pub(super) mod base64_bytes {
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
