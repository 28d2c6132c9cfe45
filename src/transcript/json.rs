//! JSON from a journal shown to a person: indented two spaces, keys in the
//! order written, numbers exactly as written, and the `\uXXXX` escapes Go
//! writes for `<`, `>`, `&` (and any other character) decoded, so a pasted
//! command reads as the model wrote it (operator review b-25). The text is
//! re-indented token by token rather than parsed into a value: a value
//! would sort keys, round big numbers and hit a recursion limit.

/// `raw` indented, or `None` when it is not one JSON document.
pub fn pretty(raw: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(raw).ok()?;
    let b = raw.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() + b.len() / 4);
    let mut depth = 0usize;
    let mut i = 0usize;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', depth * 2));
    };
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' => i = string(b, i, &mut out),
            b'{' | b'[' => {
                out.push(c);
                let close = if c == b'{' { b'}' } else { b']' };
                let mut j = i;
                while b.get(j).is_some_and(u8::is_ascii_whitespace) {
                    j += 1;
                }
                if b.get(j) == Some(&close) {
                    out.push(close);
                    i = j + 1;
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(c),
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Copy the string starting after its opening quote at `i`, decoding
/// `\uXXXX` escapes whose character needs none; returns the index after
/// the closing quote.
fn string(b: &[u8], mut i: usize, out: &mut Vec<u8>) -> usize {
    out.push(b'"');
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            b'"' => break,
            b'\\' if b.get(i) == Some(&b'u') => {
                let (ch, used) = unicode_escape(b, i + 1);
                match ch {
                    // A quote, a backslash or a control stays escaped: the
                    // text must still read as JSON, and `sanitize` would
                    // show a control as `\u{..}` anyway.
                    Some(ch) if ch != '"' && ch != '\\' && !ch.is_control() => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        i += 1 + used;
                    }
                    _ => out.push(b'\\'),
                }
            }
            b'\\' => {
                out.push(c);
                if let Some(&n) = b.get(i) {
                    out.push(n);
                    i += 1;
                }
            }
            _ => out.push(c),
        }
    }
    out.push(b'"');
    i
}

/// The character of the escape whose hex digits start at `i` (a surrogate
/// pair when one follows), and how many bytes after the `u` it used.
fn unicode_escape(b: &[u8], i: usize) -> (Option<char>, usize) {
    let hex = |at: usize| -> Option<u32> {
        let s = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u32::from_str_radix(s, 16).ok()
    };
    let Some(hi) = hex(i) else {
        return (None, 0);
    };
    if (0xd800..0xdc00).contains(&hi) {
        if b.get(i + 4) == Some(&b'\\') && b.get(i + 5) == Some(&b'u') {
            if let Some(lo) = hex(i + 6).filter(|lo| (0xdc00..0xe000).contains(lo)) {
                let c = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                return (char::from_u32(c), 10);
            }
        }
        return (None, 0);
    }
    (char::from_u32(hi), 4)
}

#[cfg(test)]
mod tests {
    use super::pretty;

    #[test]
    fn go_escapes_are_decoded_and_the_document_indented() {
        let raw = r#"{"command":"nats sub 'ORDERS.\u003e' \u0026\u0026 echo \"ok\"","n":[1,{}, []],"big":18446744073709551615}"#;
        let p = pretty(raw).unwrap();
        assert_eq!(
            p,
            "{\n  \"command\": \"nats sub 'ORDERS.>' && echo \\\"ok\\\"\",\n  \"n\": [\n    1,\n    {},\n    []\n  ],\n  \"big\": 18446744073709551615\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&p).unwrap();
        let orig: serde_json::Value = serde_json::from_str(raw).unwrap();
        assert_eq!(back, orig, "still the same JSON");
    }

    #[test]
    fn controls_quotes_and_pairs() {
        assert_eq!(
            pretty(r#""a\u001b[2J\u0022""#).unwrap(),
            r#""a\u001b[2J\u0022""#
        );
        assert_eq!(pretty(r#""\ud83d\ude00""#).unwrap(), "\"😀\"");
        assert_eq!(pretty(r#""\ud83d""#).unwrap(), r#""\ud83d""#);
        assert_eq!(pretty("not json"), None);
        assert_eq!(pretty("{\"a\":1} trailing"), None);
    }
}
