//! A line parsed to a `serde_json::Value` in one pass, when Go would read
//! it exactly as written: the fast path of the schema check.
//!
//! [`scan`](super::scan::scan) reads a line as Go's decoder does and says
//! where Go reads it other than as written: a repeated key (the last value
//! wins), invalid UTF-8 or a lone surrogate (U+FFFD), nesting too deep for
//! the schema check. It walks every byte in Rust, which costs about a third
//! of `verify` with schemas. But serde_json already refuses invalid UTF-8,
//! lone surrogates and nesting past its limit, and a repeated key is seen
//! as the value is built. So `parse` builds the value with a visitor that
//! refuses a repeated key and counts the depth: when it gives a value, the
//! scan would have noted nothing and left the bytes as they are, so the
//! value is the one the scan's bytes parse to. When it gives `None` the
//! caller scans, and says what the scan found.
//!
//! The scanned bytes are then built into a value by [`value`], the same
//! visitor with the last of a repeated key kept. Neither goes through
//! `serde_json::Value`'s own `Deserialize`: with serde_json's `raw_value`
//! feature it takes an object whose only key is
//! `$serde_json::private::RawValue` for a raw value token, where Go (and
//! the readers) see an ordinary object.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// `line` as a value with its nesting depth (a scalar is 0, `[]` is 1),
/// or `None` when serde_json refuses it or a key repeats in an object:
/// then only the scan can say how Go reads it.
pub(crate) fn parse(line: &[u8]) -> Option<(Value, usize)> {
    serde_json::from_slice::<Unique>(line)
        .ok()
        .map(|u| (u.value, u.depth))
}

/// `bytes` as a value, the last of a repeated key kept (as Go keeps it):
/// for bytes the scan has already judged.
pub fn value(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice::<LastWins>(bytes).map(|u| u.0.value)
}

struct Unique {
    value: Value,
    depth: usize,
}

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
        d.deserialize_any(UniqueVisitor { repeats: false })
    }
}

/// [`Unique`], a repeated key's last value kept.
struct LastWins(Unique);

impl<'de> Deserialize<'de> for LastWins {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LastWins, D::Error> {
        d.deserialize_any(UniqueVisitor { repeats: true })
            .map(LastWins)
    }
}

/// Builds a value; `repeats`: a repeated key is let through (its last
/// value kept) rather than refused.
#[derive(Clone, Copy)]
struct UniqueVisitor {
    repeats: bool,
}

impl UniqueVisitor {
    fn element<'de, A: SeqAccess<'de>>(self, seq: &mut A) -> Result<Option<Unique>, A::Error> {
        match self.repeats {
            true => Ok(seq.next_element::<LastWins>()?.map(|l| l.0)),
            false => seq.next_element::<Unique>(),
        }
    }
    fn member<'de, A: MapAccess<'de>>(self, map: &mut A) -> Result<Unique, A::Error> {
        match self.repeats {
            true => Ok(map.next_value::<LastWins>()?.0),
            false => map.next_value::<Unique>(),
        }
    }
}

fn scalar<E>(value: Value) -> Result<Unique, E> {
    Ok(Unique { value, depth: 0 })
}

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Unique, E> {
        scalar(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Unique, E> {
        scalar(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Unique, E> {
        scalar(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Unique, E> {
        // As serde_json's own Value visitor does.
        scalar(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Unique, E> {
        scalar(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Unique, E> {
        scalar(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        scalar(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Unique, E> {
        scalar(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut depth = 0;
        while let Some(u) = self.element(&mut seq)? {
            depth = depth.max(u.depth);
            items.push(u.value);
        }
        Ok(Unique {
            value: Value::Array(items),
            depth: depth + 1,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut members = Map::new();
        let mut depth = 0;
        while let Some(key) = map.next_key::<String>()? {
            let u = self.member(&mut map)?;
            depth = depth.max(u.depth);
            if members.insert(key, u.value).is_some() && !self.repeats {
                return Err(de::Error::custom("a key repeats"));
            }
        }
        Ok(Unique {
            value: Value::Object(members),
            depth: depth + 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_given_only_where_go_reads_the_line_as_written() {
        let (v, depth) = parse(br#"{"a":[1,{"b":null}],"c":"x"}"#).unwrap();
        assert_eq!(v, serde_json::json!({"a": [1, {"b": null}], "c": "x"}));
        assert_eq!(depth, 3);
        assert_eq!(parse(b"7").map(|(_, d)| d), Some(0));
        // What only the scan can say how Go reads.
        for line in [
            &br#"{"a":1,"a":2}"#[..],
            br#"{"x":{"a":1,"b":{"c":1,"c":1}}}"#,
            b"{\"a\":\"\xff\"}",
            br#"{"a":"\ud800"}"#,
            b"{\"a\":1",
        ] {
            assert!(parse(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
        // The same value serde_json builds, numbers included.
        let line = br#"{"f":1.5e300,"i":-3,"u":18446744073709551615,"s":"\u00e9\n"}"#;
        let ours = parse(line).unwrap().0;
        let theirs: Value = serde_json::from_slice(line).unwrap();
        assert_eq!(ours, theirs);
        // A repeated key: refused by one, its last value kept by the other.
        assert_eq!(
            value(br#"{"a":1,"b":[{"a":2,"a":3}],"a":4}"#).unwrap(),
            serde_json::json!({"a": 4, "b": [{"a": 3}]})
        );
        // serde_json's raw-value token is an ordinary key here, as in Go.
        let token = br#"{"$serde_json::private::RawValue":"{\"seq\":3}"}"#;
        let v = parse(token).unwrap().0;
        assert_eq!(v.as_object().map(|o| o.len()), Some(1));
        assert!(v.get("seq").is_none(), "{v}");
        assert_eq!(value(token).unwrap(), v);
    }
}
