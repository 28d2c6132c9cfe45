//! How Go's `encoding/json` reads a line, for serde_json to read it the same.
//!
//! The agent decodes a record with `json.Unmarshal`, which first checks the
//! whole line with Go's scanner and then decodes it. Go and serde_json agree
//! on the grammar (RFC 8259: no comments, no trailing commas, no leading
//! zeros, no control characters inside strings) but read four things
//! differently, and [`scan`] settles each as Go does:
//!
//! - **Duplicate keys.** Go takes the last value; serde_json's derived
//!   structs refuse the line. The earlier members are cut from the bytes
//!   serde_json sees, and each duplicate is a [`Note`].
//! - **Invalid UTF-8 in a string.** Go reads each byte that does not start a
//!   valid sequence as U+FFFD (one per byte, as `utf8.DecodeRune` steps);
//!   serde_json refuses the line. Outside strings it is a syntax error for
//!   both.
//! - **Lone surrogates** (`\ud800` without its pair, or `\udc00` alone): Go
//!   reads U+FFFD; serde_json refuses the line.
//! - **Nesting.** Go refuses a line nested deeper than 10,000 arrays and
//!   objects and accepts anything up to that; serde_json refuses 128 levels
//!   where it builds values and accepts any depth where it skips them.
//!
//! [`scan`] returns the bytes serde_json must parse (the line itself when
//! none of that occurs, which is every line the agent writes), the notes,
//! and the deepest nesting, or the syntax error Go would give. A line's
//! bytes are never changed where they are stored or copied: this is only
//! what a reader parses.
//!
//! Two of Go's rules stay out of reach of a pass over the bytes, since they
//! depend on the Go type a key lands in (journal/FORMAT.md, "Decoding"):
//! struct field names match keys case-insensitively, and a duplicate key
//! whose values are both objects decoded into a struct or map merges them
//! rather than taking the last.

use std::borrow::Cow;
use std::fmt;

/// Go's `maxNestingDepth`: a line nested deeper is refused.
// Public for tests (journal/tests/go_decode.rs builds lines at the bound).
#[doc(hidden)]
pub const MAX_DEPTH: usize = 10_000;

/// Containers nested deeper than this are cut to empty ones in the value
/// built for a schema check ([`Scanned::shallow`]): serde_json builds values
/// recursively and refuses past 128 levels. No schema constrains a value
/// this deep (a test walks the schemas to keep it so).
// Public for tests (journal/tests/go_decode.rs walks the schemas against it).
#[doc(hidden)]
pub const SCHEMA_DEPTH: usize = 100;

const REPLACEMENT: &[u8] = "\u{fffd}".as_bytes();

/// The first byte at or after `i` inside a string that needs a look: a
/// quote, a backslash, a control character, or (when the line is not all
/// UTF-8) a byte above ASCII. Eight bytes at a time (SWAR), as most of
/// every string needs none.
#[inline]
fn skip_plain(b: &[u8], mut i: usize, utf8: bool) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let high = if utf8 { 0 } else { HIGH };
    while let Some(chunk) = b.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let v = u64::from_le_bytes(w);
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        let hit = zero(v ^ (ONES * u64::from(b'"')))
            | zero(v ^ (ONES * u64::from(b'\\')))
            | (v.wrapping_sub(ONES * 0x20) & !v & HIGH)
            | (v & high);
        if hit != 0 {
            // The lowest flagged byte is exact (higher ones may be borrows).
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 || (!utf8 && c >= 0x80) {
            break;
        }
        i += 1;
    }
    i
}
const REPLACEMENT_ESCAPE: &[u8] = b"\\ufffd";

/// Something Go reads differently from the bytes as written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// A key given more than once in one object: the last value counts.
    /// `offset` is where the first occurrence starts, `count` how many.
    DuplicateKey {
        /// The key, as decoded.
        key: String,
        /// Byte offset of the key's first occurrence.
        offset: usize,
        /// How many times the key is given.
        count: usize,
    },
    /// Bytes in a string that are not UTF-8, each read as U+FFFD: where the
    /// first is and how many there are on the line.
    InvalidUtf8 {
        /// Byte offset of the first byte not UTF-8.
        offset: usize,
        /// How many there are on the line.
        count: usize,
    },
    /// `\uXXXX` escapes of half a surrogate pair, each read as U+FFFD.
    LoneSurrogate {
        /// Byte offset of the first lone surrogate escape.
        offset: usize,
        /// How many there are on the line.
        count: usize,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Note::DuplicateKey { key, count, .. } => write!(
                f,
                "the key {key:?} is given {count} times in one object; the agent reads the last (journal/FORMAT.md, \"Decoding\", says when it does not)"
            ),
            Note::InvalidUtf8 { count, .. } => write!(
                f,
                "{count} byte{} in a string {} not UTF-8; the agent reads each as U+FFFD",
                if *count == 1 { "" } else { "s" },
                if *count == 1 { "is" } else { "are" },
            ),
            Note::LoneSurrogate { count, .. } => write!(
                f,
                "{count} \\u escape{} half of a surrogate pair; the agent reads each as U+FFFD",
                if *count == 1 { " is" } else { "s are" },
            ),
        }
    }
}

/// A line Go refuses before decoding it: where and why, in Go's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset in the line where Go stops.
    pub offset: usize,
    /// Go's message (`invalid character ...`).
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (byte {})", self.message, self.offset)
    }
}

/// A line Go accepts, as serde_json must see it.
#[derive(Debug)]
pub struct Scanned<'a> {
    /// The bytes to parse: the line itself unless a [`Note`] changed them.
    pub bytes: Cow<'a, [u8]>,
    /// What Go reads differently from the bytes as written, in line order.
    pub notes: Vec<Note>,
    /// The deepest nesting of arrays and objects (0 for a scalar).
    pub depth: usize,
}

impl Scanned<'_> {
    /// The bytes for a value a schema checks: [`Scanned::bytes`], with every
    /// container deeper than [`SCHEMA_DEPTH`] emptied (`[]` or `{}`, so the
    /// type at every level a schema can see is kept).
    pub fn shallow(&self) -> Cow<'_, [u8]> {
        if self.depth <= SCHEMA_DEPTH {
            Cow::Borrowed(&self.bytes)
        } else {
            Cow::Owned(cut_below(&self.bytes, SCHEMA_DEPTH))
        }
    }
}

/// Whether `line` cannot nest deeper than Go's limit: it has no more
/// opening brackets than that (a cheap count, and no count at all for a
/// line shorter than the limit).
pub(crate) fn within_depth(line: &[u8]) -> bool {
    line.len() <= MAX_DEPTH || line.iter().filter(|&&c| c == b'[' || c == b'{').count() <= MAX_DEPTH
}

/// Check `line` as Go's scanner does and settle what Go reads differently.
pub fn scan(line: &[u8]) -> Result<Scanned<'_>, SyntaxError> {
    let mut s = Scanner {
        b: line,
        i: 0,
        utf8: std::str::from_utf8(line).is_ok(),
        frames: Vec::new(),
        keys: Vec::new(),
        edits: Vec::new(),
        dups: Vec::new(),
        invalid: None,
        surrogates: None,
        depth: 0,
    };
    s.run()?;
    let Scanner {
        edits,
        dups,
        invalid,
        surrogates,
        depth,
        ..
    } = s;
    let mut notes = dups;
    if let Some((offset, count)) = invalid {
        notes.push(Note::InvalidUtf8 { offset, count });
    }
    if let Some((offset, count)) = surrogates {
        notes.push(Note::LoneSurrogate { offset, count });
    }
    let bytes = if edits.is_empty() {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(apply(line, edits))
    };
    Ok(Scanned {
        bytes,
        notes,
        depth,
    })
}

/// A change to the bytes serde_json sees.
#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    with: &'static [u8],
}

fn apply(line: &[u8], mut edits: Vec<Edit>) -> Vec<u8> {
    // Cut members contain the edits inside them; an edit starting inside an
    // earlier one is dropped with it.
    edits.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end)));
    let mut out = Vec::with_capacity(line.len());
    let mut at = 0;
    for e in edits {
        if e.start < at {
            continue;
        }
        out.extend_from_slice(line.get(at..e.start).unwrap_or_default());
        out.extend_from_slice(e.with);
        at = e.end;
    }
    out.extend_from_slice(line.get(at..).unwrap_or_default());
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    Array,
    /// An object whose keys start at this index of `Scanner::keys`.
    Object(usize),
}

/// One member of an open object.
struct Key {
    /// The key as Go compares it: decoded.
    text: Cow<'static, [u8]>,
    /// Where the raw key is in the line, when it needed no decoding.
    raw: Option<(usize, usize)>,
    /// Where the member starts (its key's opening quote) and where the next
    /// one starts: cutting `start..next` removes it with its comma.
    start: usize,
    next: usize,
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    /// The whole line is UTF-8: strings need no check of their own.
    utf8: bool,
    frames: Vec<Frame>,
    keys: Vec<Key>,
    edits: Vec<Edit>,
    dups: Vec<Note>,
    invalid: Option<(usize, usize)>,
    surrogates: Option<(usize, usize)>,
    depth: usize,
}

fn count(slot: &mut Option<(usize, usize)>, at: usize) {
    match slot {
        Some((_, n)) => *n += 1,
        None => *slot = Some((at, 1)),
    }
}

fn describe(c: Option<u8>) -> String {
    match c {
        None => "unexpected end of JSON input".into(),
        Some(b'\'') => "invalid character '\\''".into(),
        Some(c) if c.is_ascii_graphic() || c == b' ' => {
            format!("invalid character '{}'", c as char)
        }
        Some(c) => format!("invalid character 0x{c:02x}"),
    }
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn fail<T>(&self, context: &str) -> Result<T, SyntaxError> {
        let c = self.peek();
        let message = match c {
            None => describe(None),
            Some(_) => format!("{} {context}", describe(c)),
        };
        Err(SyntaxError {
            offset: self.i,
            message,
        })
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn run(&mut self) -> Result<(), SyntaxError> {
        let mut want_value = true;
        loop {
            if want_value {
                self.skip_ws();
                match self.peek() {
                    Some(b'{') => {
                        self.open(Frame::Object(self.keys.len()))?;
                        self.skip_ws();
                        if self.peek() == Some(b'}') {
                            self.i += 1;
                            self.close();
                            want_value = false;
                        } else {
                            self.member()?;
                        }
                        continue;
                    }
                    Some(b'[') => {
                        self.open(Frame::Array)?;
                        self.skip_ws();
                        if self.peek() == Some(b']') {
                            self.i += 1;
                            self.close();
                            want_value = false;
                        }
                        continue;
                    }
                    Some(b'"') => {
                        self.string(false)?;
                    }
                    Some(b't') => self.literal(b"true")?,
                    Some(b'f') => self.literal(b"false")?,
                    Some(b'n') => self.literal(b"null")?,
                    Some(b'-' | b'0'..=b'9') => self.number()?,
                    _ => return self.fail("looking for beginning of value"),
                }
                want_value = false;
            }
            let Some(&top) = self.frames.last() else {
                break;
            };
            self.skip_ws();
            match (top, self.peek()) {
                (Frame::Array, Some(b',')) => {
                    self.i += 1;
                    want_value = true;
                }
                (Frame::Array, Some(b']')) | (Frame::Object(_), Some(b'}')) => {
                    self.i += 1;
                    self.close();
                }
                (Frame::Object(_), Some(b',')) => {
                    self.i += 1;
                    self.skip_ws();
                    self.member()?;
                    want_value = true;
                }
                (Frame::Array, _) => return self.fail("after array element"),
                (Frame::Object(_), _) => return self.fail("after object key:value pair"),
            }
        }
        self.skip_ws();
        if self.i < self.b.len() {
            return self.fail("after top-level value");
        }
        Ok(())
    }

    fn open(&mut self, f: Frame) -> Result<(), SyntaxError> {
        if self.frames.len() >= MAX_DEPTH {
            return Err(SyntaxError {
                offset: self.i,
                message: format!("exceeded max depth ({MAX_DEPTH} nested arrays and objects)"),
            });
        }
        self.i += 1;
        self.frames.push(f);
        self.depth = self.depth.max(self.frames.len());
        Ok(())
    }

    fn close(&mut self) {
        if let Some(Frame::Object(first)) = self.frames.pop() {
            self.dedupe(first);
            self.keys.truncate(first);
        }
    }

    /// An object member's key and colon; the value is read by the caller.
    fn member(&mut self) -> Result<(), SyntaxError> {
        if self.peek() != Some(b'"') {
            return self.fail("looking for beginning of object key string");
        }
        let start = self.i;
        let first = match self.frames.last() {
            Some(Frame::Object(first)) => *first,
            _ => self.keys.len(),
        };
        if self.keys.len() > first {
            if let Some(prev) = self.keys.last_mut() {
                prev.next = start;
            }
        }
        let (text, raw) = match self.string(true)? {
            Some(decoded) => (Cow::Owned(decoded), None),
            None => (Cow::Borrowed(&[][..]), Some((start + 1, self.i - 1))),
        };
        self.keys.push(Key {
            text,
            raw,
            start,
            next: start,
        });
        self.skip_ws();
        if self.peek() != Some(b':') {
            return self.fail("after object key");
        }
        self.i += 1;
        Ok(())
    }

    fn key_bytes<'k>(&'k self, k: &'k Key) -> &'k [u8] {
        match k.raw {
            Some((a, b)) => self.b.get(a..b).unwrap_or_default(),
            None => &k.text,
        }
    }

    /// Cut every member of the object whose keys start at `first` that a
    /// later member with the same key overrides.
    fn dedupe(&mut self, first: usize) {
        let Some(members) = self.keys.get(first..) else {
            return;
        };
        if members.len() < 2 {
            return;
        }
        // Most objects are small and have no duplicate: say so without
        // allocating.
        if members.len() <= 16
            && members.iter().enumerate().all(|(n, a)| {
                let ka = self.key_bytes(a);
                members
                    .get(n + 1..)
                    .unwrap_or_default()
                    .iter()
                    .all(|b| self.key_bytes(b) != ka)
            })
        {
            return;
        }
        // (key, position, start, next), sorted by key and then position:
        // of each run of equal keys, the last one stays.
        let mut order: Vec<(&[u8], usize, usize, usize)> = members
            .iter()
            .enumerate()
            .map(|(n, k)| (self.key_bytes(k), n, k.start, k.next))
            .collect();
        order.sort_unstable();
        let mut cuts = Vec::new();
        let mut notes = Vec::new();
        for same in order.chunk_by(|a, b| a.0 == b.0) {
            let (Some(first), Some((_, earlier))) = (same.first(), same.split_last()) else {
                continue;
            };
            if earlier.is_empty() {
                continue;
            }
            cuts.extend(earlier.iter().map(|&(_, _, start, next)| Edit {
                start,
                end: next,
                with: b"",
            }));
            notes.push(Note::DuplicateKey {
                key: String::from_utf8_lossy(first.0).into_owned(),
                offset: first.2,
                count: same.len(),
            });
        }
        self.edits.extend(cuts);
        self.dups.extend(notes);
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), SyntaxError> {
        for &w in word {
            if self.peek() != Some(w) {
                let name = String::from_utf8_lossy(word);
                return self.fail(&format!("in literal {name} (expecting '{}')", w as char));
            }
            self.i += 1;
        }
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let from = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - from
    }

    fn number(&mut self) -> Result<(), SyntaxError> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.fail("in numeric literal"),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return self.fail("after decimal point in numeric literal");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.fail("in exponent of numeric literal");
            }
        }
        Ok(())
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        self.b.get(at..at + 4)?.iter().try_fold(0u32, |n, &c| {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return None,
            };
            Some(n << 4 | u32::from(d))
        })
    }

    /// A string from its opening quote to past its closing one. For a key
    /// (`decode`), the decoded text when it differs from the raw bytes.
    fn string(&mut self, decode: bool) -> Result<Option<Vec<u8>>, SyntaxError> {
        self.i += 1;
        let mut out: Option<Vec<u8>> = None;
        let mut clean = self.i;
        loop {
            self.i = skip_plain(self.b, self.i, self.utf8);
            let Some(c) = self.peek() else {
                return self.fail("in string literal");
            };
            match c {
                b'"' => {
                    if let Some(o) = out.as_mut() {
                        o.extend_from_slice(self.b.get(clean..self.i).unwrap_or_default());
                    }
                    self.i += 1;
                    return Ok(out);
                }
                0x00..=0x1f => return self.fail("in string literal"),
                // The common escapes of a value (not a key) need only be
                // stepped over: Go's HTML escaping makes them frequent.
                b'\\'
                    if !decode
                        && matches!(
                            self.b.get(self.i + 1),
                            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
                        ) =>
                {
                    self.i += 2;
                }
                b'\\'
                    if !decode
                        && self.b.get(self.i + 1) == Some(&b'u')
                        && self
                            .hex4(self.i + 2)
                            .is_some_and(|u| !(0xD800..=0xDFFF).contains(&u)) =>
                {
                    self.i += 6;
                }
                b'\\' => {
                    let at = self.i;
                    let decoded: Option<char>;
                    let mut len = 2;
                    match self.b.get(at + 1) {
                        Some(b'"') => decoded = Some('"'),
                        Some(b'\\') => decoded = Some('\\'),
                        Some(b'/') => decoded = Some('/'),
                        Some(b'b') => decoded = Some('\u{8}'),
                        Some(b'f') => decoded = Some('\u{c}'),
                        Some(b'n') => decoded = Some('\n'),
                        Some(b'r') => decoded = Some('\r'),
                        Some(b't') => decoded = Some('\t'),
                        Some(b'u') => {
                            let Some(u) = self.hex4(at + 2) else {
                                self.i = at + 2;
                                while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                    self.i += 1;
                                }
                                return self.fail("in \\u hexadecimal character escape");
                            };
                            len = 6;
                            decoded = match u {
                                0xD800..=0xDBFF => {
                                    let low = (self.b.get(at + 6..at + 8) == Some(&b"\\u"[..]))
                                        .then(|| self.hex4(at + 8))
                                        .flatten()
                                        .filter(|l| (0xDC00..=0xDFFF).contains(l));
                                    match low {
                                        Some(l) => {
                                            len = 12;
                                            char::from_u32(
                                                0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00),
                                            )
                                        }
                                        None => None,
                                    }
                                }
                                0xDC00..=0xDFFF => None,
                                _ => char::from_u32(u),
                            };
                            if decoded.is_none() {
                                count(&mut self.surrogates, at);
                                self.edits.push(Edit {
                                    start: at,
                                    end: at + 6,
                                    with: REPLACEMENT_ESCAPE,
                                });
                            }
                        }
                        _ => {
                            self.i = at + 1;
                            return self.fail("in string escape code");
                        }
                    }
                    if decode {
                        let o = out.get_or_insert_with(Vec::new);
                        o.extend_from_slice(self.b.get(clean..at).unwrap_or_default());
                        let ch = decoded.unwrap_or('\u{fffd}');
                        o.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    self.i = at + len;
                    clean = self.i;
                }
                0x80..=0xff if !self.utf8 => {
                    let at = self.i;
                    let width = match c {
                        0xC2..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        0xF0..=0xF4 => 4,
                        _ => 0,
                    };
                    let valid = width > 0
                        && self
                            .b
                            .get(at..at + width)
                            .is_some_and(|s| std::str::from_utf8(s).is_ok());
                    if valid {
                        self.i += width;
                    } else {
                        count(&mut self.invalid, at);
                        self.edits.push(Edit {
                            start: at,
                            end: at + 1,
                            with: REPLACEMENT,
                        });
                        if decode {
                            let o = out.get_or_insert_with(Vec::new);
                            o.extend_from_slice(self.b.get(clean..at).unwrap_or_default());
                            o.extend_from_slice(REPLACEMENT);
                        }
                        self.i += 1;
                        clean = self.i;
                    }
                }
                _ => self.i += 1,
            }
        }
    }
}

/// `bytes` (valid JSON) with every array or object that opens below depth
/// `limit` replaced by an empty one of its kind.
fn cut_below(bytes: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // Depth at which the bytes are being skipped, if they are.
    let mut skipping: Option<usize> = None;
    for &c in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            if skipping.is_none() {
                out.push(c);
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if skipping.is_none() && depth > limit {
                    skipping = Some(depth);
                    out.push(c);
                    continue;
                }
            }
            b']' | b'}' => {
                if skipping == Some(depth) {
                    skipping = None;
                    out.push(c);
                    depth -= 1;
                    continue;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        if skipping.is_none() {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Scanned<'_> {
        scan(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
    }
    fn text(s: &Scanned) -> String {
        String::from_utf8(s.bytes.to_vec()).unwrap()
    }

    #[test]
    fn a_line_with_nothing_to_settle_is_passed_through_unchanged() {
        let line = r#"{"seq":1,"a":[1,-2.5e+3,true,false,null,"x\"\u00e9\ud83d\ude00"],"b":{}}"#;
        let s = ok(line);
        assert!(matches!(s.bytes, Cow::Borrowed(_)));
        assert!(s.notes.is_empty());
        assert_eq!(s.depth, 2);
    }

    #[test]
    fn duplicate_keys_keep_the_last_member_only() {
        let s = ok(r#"{"a":1,"b":2,"a":{"c":3,"c":4},"d":5}"#);
        assert_eq!(text(&s), r#"{"b":2,"a":{"c":4},"d":5}"#);
        assert_eq!(s.notes.len(), 2);
        assert!(s
            .notes
            .iter()
            .any(|n| matches!(n, Note::DuplicateKey { key, count: 2, offset: 1 } if key == "a")));
        // Compared decoded: "\u0061" is "a".
        let s = ok(r#"{"a":1, "\u0061" :2}"#);
        assert_eq!(text(&s), r#"{"\u0061" :2}"#);
        // Three times, the last at the end of the object.
        let s = ok(r#"{"k":1,"k":2,"k":3}"#);
        assert_eq!(text(&s), r#"{"k":3}"#);
        assert!(matches!(&s.notes[0], Note::DuplicateKey { count: 3, .. }));
        // A cut member takes the edits inside it along.
        let s = ok(r#"{"k":"\ud800","k":2}"#);
        assert_eq!(text(&s), r#"{"k":2}"#);
    }

    #[test]
    fn invalid_utf8_reads_as_one_replacement_per_byte_as_go_steps() {
        // E2 80 is a cut three-byte sequence: Go reads two U+FFFD.
        let line = b"{\"a\":\"x\xe2\x80y\xff\"}";
        let s = scan(line).unwrap();
        assert_eq!(
            s.bytes.as_ref(),
            "{\"a\":\"x\u{fffd}\u{fffd}y\u{fffd}\"}".as_bytes()
        );
        assert_eq!(
            s.notes,
            vec![Note::InvalidUtf8 {
                offset: 7,
                count: 3
            }]
        );
        // An encoded surrogate is three invalid bytes.
        let s = scan(b"[\"\xed\xa0\x80\"]").unwrap();
        assert_eq!(
            s.bytes.as_ref(),
            "[\"\u{fffd}\u{fffd}\u{fffd}\"]".as_bytes()
        );
        // Outside a string it is a syntax error.
        assert!(scan(b"[1,\xff]").is_err());
        // Valid multi-byte text in a line that also holds an invalid byte.
        assert!(scan("[\"é😀\", \"\u{80}\"]".as_bytes())
            .unwrap()
            .notes
            .is_empty());
        let mut bad = "[\"é\",\"".as_bytes().to_vec();
        bad.extend_from_slice(b"\xc0\xaf\"]");
        let s = scan(&bad).unwrap();
        assert_eq!(
            s.notes,
            vec![Note::InvalidUtf8 {
                offset: 7,
                count: 2
            }]
        );
    }

    #[test]
    fn lone_surrogates_read_as_replacement_and_pairs_stay() {
        let s = ok(r#"["\ud800x","\udc00","\ud800\u0041","\ud83d\ude00"]"#);
        assert_eq!(
            text(&s),
            r#"["\ufffdx","\ufffd","\ufffd\u0041","\ud83d\ude00"]"#
        );
        assert_eq!(
            s.notes,
            vec![Note::LoneSurrogate {
                offset: 2,
                count: 3
            }]
        );
        // A high surrogate followed by another high: the first alone is lone.
        let s = ok(r#"["\ud800\ud83d\ude00"]"#);
        assert_eq!(text(&s), r#"["\ufffd\ud83d\ude00"]"#);
    }

    #[test]
    fn nesting_up_to_go_s_limit_is_read_and_deeper_is_refused() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(ok(&deep(MAX_DEPTH)).depth, MAX_DEPTH);
        let e = scan(deep(MAX_DEPTH + 1).as_bytes()).unwrap_err();
        assert!(e.message.contains("exceeded max depth"), "{e}");
        assert_eq!(e.offset, MAX_DEPTH);
        let e = scan(deep(1_000_000).as_bytes()).unwrap_err();
        assert!(e.message.contains("exceeded max depth"), "{e}");
    }

    #[test]
    fn the_schema_copy_empties_containers_below_the_limit_and_keeps_types() {
        let mut line = String::from(r#"{"a":"#);
        line.push_str(&"[".repeat(150));
        line.push_str(r#"{"x":"]}[{"}"#);
        line.push_str(&"]".repeat(150));
        line.push_str(r#","b":{"c":"}"}}"#);
        let s = ok(&line);
        assert_eq!(s.depth, 152);
        let cut = String::from_utf8(s.shallow().into_owned()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&cut).unwrap();
        let mut at = &v["a"];
        let mut levels = 1;
        while let Some(inner) = at.get(0) {
            at = inner;
            levels += 1;
        }
        assert_eq!(levels, SCHEMA_DEPTH, "{cut}");
        assert_eq!(at, &serde_json::json!([]));
        assert_eq!(v["b"]["c"], "}");
    }

    #[test]
    fn the_eight_byte_skip_stops_where_a_byte_by_byte_one_does() {
        let naive = |b: &[u8], i: usize, utf8: bool| {
            (i..b.len())
                .find(|&j| {
                    let c = b[j];
                    c == b'"' || c == b'\\' || c < 0x20 || (!utf8 && c >= 0x80)
                })
                .unwrap_or(b.len())
        };
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..40 {
            for _ in 0..200 {
                let b: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Mostly plain text, now and then a byte to stop at.
                        match x % 16 {
                            0 => b"\"\\\x01\x1f\x7f\x80\xff "[(x >> 8) as usize % 8],
                            _ => b'a' + (x >> 8) as u8 % 26,
                        }
                    })
                    .collect();
                for i in 0..=b.len() {
                    for utf8 in [true, false] {
                        assert_eq!(skip_plain(&b, i, utf8), naive(&b, i, utf8), "{b:?} {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn syntax_go_refuses_is_refused() {
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[-]",
            "[+1]",
            "{a:1}",
            "{'a':1}",
            "[\"\t\"]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[tru]",
            "[nul]",
            "[1] [2]",
            "[1]x",
            "{\"a\" 1}",
            "[NaN]",
            "[Infinity]",
            "[\"a\"",
            "{\"a\":}",
            "[,1]",
            "{,}",
        ] {
            assert!(scan(bad.as_bytes()).is_err(), "accepted {bad:?}");
        }
        for good in [
            "1",
            " [1] ",
            "\"x\"",
            "-0",
            "0.5e-3",
            "{\"\":null}",
            "[\r\n\t]",
            "1E+2",
        ] {
            assert!(scan(good.as_bytes()).is_ok(), "refused {good:?}");
        }
    }

    #[test]
    fn errors_say_where_in_go_s_words() {
        let e = scan(b"{\"seq\":1,}").unwrap_err();
        assert_eq!(e.offset, 9);
        assert_eq!(
            e.message,
            "invalid character '}' looking for beginning of object key string"
        );
        let e = scan(b"{\"seq\":1").unwrap_err();
        assert_eq!(e.message, "unexpected end of JSON input");
    }
}
