//! The Go agent's JSON: its encoding, byte for byte, here, and how it reads
//! a line in [`scan`].
//!
//! Go's `encoding/json` differs from serde_json's defaults in three ways that
//! matter for byte identity: it escapes `<`, `>`, `&`, U+2028 and U+2029 inside
//! strings (HTML-safe output), it compacts and HTML-escapes `json.RawMessage`
//! values it embeds, and it sorts map keys. serde_json already writes control
//! characters the way Go >= 1.22 does (`\b \f \n \r \t`, otherwise lowercase
//! `\u00XX`), and `BTreeMap` gives sorted keys; this formatter adds the rest.
//!
//! Public API: only [`scan`] and [`unique`], which `validate` uses to place a
//! syntax error and to build the value a schema checks; the Go-compatible
//! writer stays inside the crate (records encode through
//! [`crate::record::Record::encode`]).

pub mod scan;
pub mod unique;

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io::{self, Write};

/// A serde_json formatter producing Go's `json.Marshal` bytes.
#[derive(Default, Clone, Copy)]
pub(crate) struct GoFormatter;

fn write_html_safe<W: ?Sized + Write>(w: &mut W, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let esc: Option<&[u8]> = match b {
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8.
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                Some(b"\\u2028")
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                Some(b"\\u2029")
            }
            _ => None,
        };
        if let Some(esc) = esc {
            w.write_all(bytes.get(start..i).unwrap_or_default())?;
            w.write_all(esc)?;
            i += if b == 0xE2 { 3 } else { 1 };
            start = i;
        } else {
            i += 1;
        }
    }
    w.write_all(bytes.get(start..).unwrap_or_default())
}

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_html_safe(writer, fragment)
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        // Go writes `/` unescaped; serde_json never asks for Solidus anyway.
        serde_json::ser::CompactFormatter.write_char_escape(writer, char_escape)
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Go embeds a RawMessage through compact(..., escapeHTML=true).
        compact_html(writer, fragment)
    }
}

/// Go's `json.Compact` with HTML escaping: drop insignificant whitespace and
/// escape `<>&`, U+2028 and U+2029 inside strings. Idempotent on Go output.
pub(crate) fn compact_html<W: ?Sized + Write>(w: &mut W, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    let mut in_str = false;
    let mut escaped = false;
    let mut run_start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            } else if matches!(b, b'<' | b'>' | b'&' | 0xE2) {
                // Let the string writer decide; it only rewrites the five.
                let end = if b == 0xE2 {
                    (i + 3).min(bytes.len())
                } else {
                    i + 1
                };
                w.write_all(bytes.get(run_start..i).unwrap_or_default())?;
                let piece = bytes.get(i..end).unwrap_or_default();
                match std::str::from_utf8(piece) {
                    Ok(piece) => write_html_safe(w, piece)?,
                    Err(_) => w.write_all(piece)?,
                }
                i = end;
                run_start = i;
                continue;
            }
        } else if b == b'"' {
            in_str = true;
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            w.write_all(bytes.get(run_start..i).unwrap_or_default())?;
            run_start = i + 1;
        }
        i += 1;
    }
    w.write_all(bytes.get(run_start..).unwrap_or_default())
}

/// Encode a value as Go would (no trailing newline).
pub(crate) fn to_vec<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    // Serialising our own types into a Vec cannot fail: no IO error is
    // possible and every map key is a string.
    if value.serialize(&mut ser).is_err() {
        out.clear();
        out.extend_from_slice(b"null");
    }
    out
}

#[cfg(test)]
mod go_decode;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_html_escaped_like_go() {
        let s = "a<b>&c\u{2028}d\u{2029}e\u{1b}[0m\t\u{8}\u{c}é😀";
        let got = String::from_utf8(to_vec(s)).unwrap_or_default();
        assert_eq!(
            got,
            r#""a\u003cb\u003e\u0026c\u2028d\u2029e\u001b[0m\t\b\fé😀""#
        );
    }

    #[test]
    fn raw_values_are_compacted_and_escaped() {
        let mut out = Vec::new();
        compact_html(&mut out, "{ \"a\" : [1, \"<x> y\\\"&\" ],\n \"b\":null }").unwrap_or(());
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            r#"{"a":[1,"\u003cx\u003e y\"\u0026"],"b":null}"#
        );
    }
}
