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
    /// The line's bytes, without its `\n`.
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

/// What the torn-tail rule (SPEC 7) makes of one line (or message body):
/// the one place a journal's final line is classified, for the readers,
/// the `ls` tail walk and verify alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Decodes, and is terminated or not the last: a record.
    Record,
    /// The last line decodes but has no `\n`: read; the next append must
    /// add the newline first.
    Unterminated,
    /// The last line does not decode and has no `\n`: a write cut short,
    /// dropped.
    Torn,
    /// The last line does not decode although terminated: dropped all the
    /// same (readers cannot tell it from a torn write that got its newline).
    Garbage,
    /// A line before the last does not decode: corruption, the run cannot
    /// be read past it.
    Interior,
}

impl Verdict {
    /// The verdict on a line that `decodes` or not, is the `last` one or
    /// not, and is `terminated` by `\n` or not (a message body always is).
    pub fn of(decodes: bool, last: bool, terminated: bool) -> Verdict {
        match (decodes, last, terminated) {
            (true, true, false) => Verdict::Unterminated,
            (true, _, _) => Verdict::Record,
            (false, true, false) => Verdict::Torn,
            (false, true, true) => Verdict::Garbage,
            (false, false, _) => Verdict::Interior,
        }
    }

    /// A final line that readers drop.
    pub(crate) fn is_dropped(self) -> bool {
        matches!(self, Verdict::Torn | Verdict::Garbage)
    }
}

/// What the end of a journal looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// Ends with a complete, terminated record (or the journal is empty).
    Clean,
    /// The final record decodes but has no `\n`: the next append must add it.
    Unterminated {
        /// Its line number.
        line: usize,
        /// The byte offset it starts at.
        offset: u64,
    },
    /// The final line does not decode and was dropped.
    Torn {
        /// Its line number.
        line: usize,
        /// The byte offset it starts at.
        offset: u64,
        /// Its bytes, without any `\n`.
        bytes: Vec<u8>,
        /// Whether it ends with `\n`.
        terminated: bool,
        /// Why it does not decode.
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
    /// Its line number.
    pub line: usize,
    /// The byte offset it starts at.
    pub offset: u64,
    /// Why it does not decode.
    pub error: DecodeError,
}

/// `records` as a journal: each line followed by a newline.
pub fn join(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.iter().map(|r| r.len() + 1).sum());
    for r in records {
        out.extend_from_slice(r);
        out.push(b'\n');
    }
    out
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
        let decoded = Record::decode(l.bytes);
        let verdict = Verdict::of(decoded.is_ok(), last, l.terminated);
        match decoded {
            Ok(record) => {
                if verdict == Verdict::Unterminated {
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
            Err(error) if verdict.is_dropped() => {
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

#[cfg(test)]
mod tests {
    use super::Verdict::{self, *};

    #[test]
    fn only_the_final_line_may_fail_to_decode_or_lack_its_newline() {
        for terminated in [true, false] {
            assert_eq!(Verdict::of(true, false, terminated), Record);
            assert_eq!(Verdict::of(false, false, terminated), Interior);
        }
        assert_eq!(Verdict::of(true, true, true), Record);
        assert_eq!(Verdict::of(true, true, false), Unterminated);
        assert_eq!(Verdict::of(false, true, false), Torn);
        assert_eq!(Verdict::of(false, true, true), Garbage);
        let dropped: Vec<_> = [Record, Unterminated, Torn, Garbage, Interior]
            .into_iter()
            .filter(|v| v.is_dropped())
            .collect();
        assert_eq!(
            dropped,
            [Torn, Garbage],
            "readers drop a bad final line only"
        );
    }

    #[test]
    fn the_readers_keep_an_unterminated_record_and_drop_a_torn_one() {
        let meta = br#"{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":1,"run_id":"r","created":"2026-09-22T09:14:03Z","fingerprint":{},"prompt":"go"}}"#;
        let (entries, tail) = super::decode_all(meta).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(entries.len(), 1);
        assert_eq!(tail, super::Tail::Unterminated { line: 1, offset: 0 });
        let mut torn = meta.to_vec();
        torn.extend_from_slice(b"\n{\"seq\":2");
        let (entries, tail) = super::decode_all(&torn).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(entries.len(), 1);
        assert!(matches!(
            tail,
            super::Tail::Torn {
                line: 2,
                terminated: false,
                ..
            }
        ));
        torn.extend_from_slice(b"\nnot json\n");
        assert!(super::decode_all(&torn).is_err(), "an interior line");
    }
}
