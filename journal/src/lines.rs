//! Splitting journal bytes into lines and applying the torn-tail rule
//! (SPEC 7): a final line that does not decode is a torn tail and is
//! dropped; any other line that does not decode is corruption.

use crate::record::{DecodeError, Entry, Record};

/// One line of a journal, without its `\n`.
#[derive(Debug, Clone, Copy)]
pub struct RawLine<'a> {
    /// 1-based.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    pub bytes: &'a [u8],
    /// Whether the line ends with `\n`.
    pub terminated: bool,
}

/// Lines of `buf`. A file ending in `\n` has no empty last line.
pub fn split(buf: &[u8]) -> impl Iterator<Item = RawLine<'_>> {
    let mut pos = 0usize;
    let mut line = 0usize;
    std::iter::from_fn(move || {
        if pos >= buf.len() {
            return None;
        }
        line += 1;
        let rest = buf.get(pos..).unwrap_or_default();
        let (bytes, terminated, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (rest.get(..i).unwrap_or_default(), true, pos + i + 1),
            None => (rest, false, buf.len()),
        };
        let out = RawLine {
            line,
            offset: pos as u64,
            bytes,
            terminated,
        };
        pos = next;
        Some(out)
    })
}

/// What the end of a journal looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// Ends with a complete, terminated record (or the journal is empty).
    Clean,
    /// The final record decodes but has no `\n`: the next append must add it.
    Unterminated { line: usize, offset: u64 },
    /// The final line does not decode and was dropped.
    Torn {
        line: usize,
        offset: u64,
        bytes: Vec<u8>,
        terminated: bool,
        error: DecodeError,
    },
}

impl Tail {
    /// Nothing to report at the end of the journal.
    pub fn is_clean(&self) -> bool {
        matches!(self, Tail::Clean)
    }
}

/// A line that does not decode before the final line.
#[derive(Debug, Clone)]
pub struct Interior {
    pub line: usize,
    pub offset: u64,
    pub error: DecodeError,
}

/// Decode every line with the reader's rule. Returns the entries, the state
/// of the tail, or the first interior line that does not decode.
pub fn decode_all(buf: &[u8]) -> Result<(Vec<Entry>, Tail), Interior> {
    match decode_prefix(buf) {
        (entries, tail, None) => Ok((entries, tail)),
        (_, _, Some(bad)) => Err(bad),
    }
}

/// Like [`decode_all`], but an interior line that does not decode ends the
/// reading instead of failing it: the readable prefix, the tail (clean when
/// reading stopped early) and where it stopped.
pub fn decode_prefix(buf: &[u8]) -> (Vec<Entry>, Tail, Option<Interior>) {
    let mut entries = Vec::new();
    let mut tail = Tail::Clean;
    let mut lines = split(buf).peekable();
    while let Some(l) = lines.next() {
        let last = lines.peek().is_none();
        match Record::decode(l.bytes) {
            Ok(record) => {
                if last && !l.terminated {
                    tail = Tail::Unterminated {
                        line: l.line,
                        offset: l.offset,
                    };
                }
                entries.push(Entry {
                    line: l.line,
                    offset: l.offset,
                    raw: l.bytes.to_vec(),
                    record,
                });
            }
            Err(error) if last => {
                tail = Tail::Torn {
                    line: l.line,
                    offset: l.offset,
                    bytes: l.bytes.to_vec(),
                    terminated: l.terminated,
                    error,
                }
            }
            Err(error) => {
                let stop = Interior {
                    line: l.line,
                    offset: l.offset,
                    error,
                };
                return (entries, Tail::Clean, Some(stop));
            }
        }
    }
    (entries, tail, None)
}
