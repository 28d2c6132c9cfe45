//! Decoding: a journal line's bytes, or its parsed JSON value, to a
//! [`Record`], judged as the agent's decoder judges them (Go's scanner
//! first, [`crate::gojson::scan`]; a time written with an escape included),
//! and the per-kind payload decoders they share.

use super::field::Nullable;
use super::payload::Source;
use super::{Kind, Payload, Record};
use crate::gojson::scan::{scan, within_depth, SyntaxError};
use crate::time::Time;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt;

/// Why a line is not a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// false: not JSON at all; true: JSON, but a field has the wrong type.
    pub json_ok: bool,
    /// What is wrong, for a person (serde_json's or the scanner's words).
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
        Payload::decode_from(self.0, InPlace(d))
    }
}

/// A payload read where it stands in the map; `null` is no payload.
struct InPlace<D>(D);
impl<'de, D: Deserializer<'de>> Source<'de> for InPlace<D> {
    type Error = D::Error;
    fn take<T: Deserialize<'de>>(self) -> Result<Option<T>, D::Error> {
        Option::<T>::deserialize(self.0)
    }
}

/// A payload read whole from a string or a value: `null` is refused, as a
/// struct refuses it.
struct Whole<S>(S);
impl<'de> Source<'de> for Whole<&'de str> {
    type Error = serde_json::Error;
    fn take<T: Deserialize<'de>>(self) -> serde_json::Result<Option<T>> {
        serde_json::from_str(self.0).map(Some)
    }
}
impl<'de> Source<'de> for Whole<serde_json::Value> {
    type Error = serde_json::Error;
    fn take<T: Deserialize<'de>>(self) -> serde_json::Result<Option<T>> {
        T::deserialize(self.0).map(Some)
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
                // A key given twice is refused here and settled by the
                // scanner ([`Record::decode`]).
                let mut seen = 0u8;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let mut once = |bit: u8| {
                        let again = seen & bit != 0;
                        seen |= bit;
                        again
                    };
                    let repeated = match key.as_ref() {
                        "seq" => once(1),
                        "protocol" => once(2),
                        "time" => once(4),
                        "optional" => once(8),
                        k => {
                            env.others.iter().any(|(o, _)| o == k)
                                || (env.payload.is_some() && kind.is_some_and(|kd| kd.key() == k))
                        }
                    };
                    if repeated {
                        return Err(de::Error::custom("a key is given twice"));
                    }
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

impl From<SyntaxError> for DecodeError {
    fn from(e: SyntaxError) -> DecodeError {
        DecodeError {
            json_ok: false,
            message: e.to_string(),
        }
    }
}

impl Record {
    /// Decode one journal line (without its newline) as the agent does.
    ///
    /// serde_json alone reads every line the agent writes exactly as Go
    /// does, and refuses (rather than misreads) each line where they differ
    /// (a duplicate field, invalid UTF-8, a lone surrogate: the envelope and
    /// block decoders refuse a repeated key too), so it goes first and the
    /// scanner only sees what it refused. The one thing serde_json accepts
    /// that Go refuses is nesting past Go's limit inside a raw value; a line
    /// with no more opening brackets than the limit cannot nest that deep.
    /// # Examples
    ///
    /// ```
    /// use journal::record::{Kind, Payload, Record};
    ///
    /// let line = br#"{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision","optional":true,"decision":{"tool":"exec"}}"#;
    /// let r = Record::decode(line)?;
    /// assert_eq!((r.seq, r.kind()), (2, Some(Kind::Decision)));
    /// assert!(matches!(&r.payload, Some(Payload::Decision(d)) if d.tool == "exec"));
    ///
    /// // Not JSON at all, or JSON with a field of the wrong type: refused.
    /// assert!(!Record::decode(b"{").unwrap_err().json_ok);
    /// assert!(Record::decode(br#"{"seq":"two"}"#).unwrap_err().json_ok);
    /// # Ok::<(), journal::record::DecodeError>(())
    /// ```
    pub fn decode(line: &[u8]) -> Result<Record, DecodeError> {
        match Record::decode_scanned(line) {
            Ok(r) if within_depth(line) => Ok(r),
            _ => Record::decode_scanned(&scan(line)?.bytes),
        }
    }

    /// Where Go's scanner stops reading `line` when it is not JSON (a byte
    /// offset into it, at most its length); `None` when it is JSON. What a
    /// front end points at when it shows a damaged line.
    pub fn syntax_error_at(line: &[u8]) -> Option<usize> {
        scan(line).err().map(|bad| bad.offset.min(line.len()))
    }

    /// Decode the bytes [`scan`] gave for a line: JSON Go accepts, so any
    /// error is a field of the wrong type.
    pub(crate) fn decode_scanned(line: &[u8]) -> Result<Record, DecodeError> {
        let env: Envelope = serde_json::from_slice(line).map_err(|e| DecodeError {
            json_ok: true,
            message: e.to_string(),
        })?;
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
    /// bytes instead (and fails there). `line` is what [`scan`] gave.
    // Public for tests: journal/tests/no_panic.rs checks it agrees with
    // `decode`.
    #[doc(hidden)]
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
            Record::decode_scanned(line)
        }
    }
}

impl Payload {
    fn from_value(kind: Kind, v: serde_json::Value) -> serde_json::Result<Payload> {
        Payload::whole(kind, Whole(v))
    }

    fn decode(kind: Kind, raw: &str) -> serde_json::Result<Payload> {
        Payload::whole(kind, Whole(raw))
    }

    fn whole<'de, S>(kind: Kind, source: Whole<S>) -> serde_json::Result<Payload>
    where
        Whole<S>: Source<'de, Error = serde_json::Error>,
    {
        // A whole source gives a payload or an error, never `None`.
        Payload::decode_from(kind, source)?
            .ok_or_else(|| <serde_json::Error as de::Error>::custom("the payload is null"))
    }
}
