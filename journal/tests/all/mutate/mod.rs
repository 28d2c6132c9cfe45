//! Deterministic damage for the mutation sweeps: every healthy journal of
//! `testdata/runs/` turned into many broken ones (flipped bits, cuts, lost
//! and doubled newlines, swapped and duplicated lines, stray control bytes,
//! invalid UTF-8, edited seqs and numbers, huge, deeply nested and hostile
//! values). Shared by the in-process sweep (`journal/tests/mutations.rs`)
//! and the CLI sweep (`tests/cli/mutations.rs`), so both judge the same
//! kinds of damage. No RNG crate: a seeded xorshift, so a failure names a
//! mutant that can be rebuilt exactly.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// xorshift64*: deterministic, so every mutant reproduces.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One damaged journal: which healthy run it came from and what was done.
pub struct Mutant {
    pub run: String,
    /// The mutation and its position, e.g. `flip bit 3 @812`.
    pub what: String,
    pub bytes: Vec<u8>,
}

/// How many mutants of each kind to make per run.
#[derive(Clone, Copy)]
pub struct Plan {
    /// Single-bit flips at rng-chosen positions.
    pub flips: usize,
    /// Cuts at rng-chosen positions.
    pub truncations: usize,
    /// Also cut at every position inside the last line.
    pub every_cut_in_last_line: bool,
    /// Insertions of each of [`INSERTED`] at rng-chosen positions.
    pub inserts: usize,
    /// Insertions of each of [`INVALID_UTF8`]: at a position and inside a
    /// string value.
    pub utf8: usize,
    /// Lines whose `seq` is edited (every edit of [`SEQ_EDITS`]).
    pub seq_lines: usize,
    /// Newlines deleted, lines duplicated, pairs of lines swapped (each).
    pub line_edits: usize,
    /// String values replaced, per kind of replacement (long, nested,
    /// hostile, ...); numbers replaced by extremes.
    pub values: usize,
    /// One mutant with every string value hostile (see [`hostile_all`]).
    pub hostile_all: bool,
}

/// Single bytes inserted: NUL, ESC, DEL, a byte never valid in UTF-8, CR,
/// and a newline (a line split in two).
pub const INSERTED: &[u8] = &[0x00, 0x1b, 0x7f, 0xff, b'\r', b'\n'];

/// Byte sequences that are not UTF-8: a lone lead byte, a cut 3-byte
/// sequence, an encoded surrogate, an overlong `/`, a lead byte beyond
/// U+10FFFF, a lone continuation byte.
pub const INVALID_UTF8: &[&[u8]] = &[
    &[0xc3],
    &[0xe2, 0x82],
    &[0xed, 0xa0, 0x80],
    &[0xc0, 0xaf],
    &[0xf5, 0x80, 0x80, 0x80],
    &[0x80],
];

/// What a `seq` value is replaced with, besides a changed digit.
pub const SEQ_EDITS: &[&str] = &[
    "",
    "0",
    "-1",
    "01",
    "1.5",
    "18446744073709551615",
    "18446744073709551616",
    "\"2\"",
    "null",
];

/// Lines that replace a record: blank, JSON of another shape, and records
/// the writer never produces (empty payloads, a meta of version 0, ids
/// missing).
pub const OTHER_LINES: &[&str] = &[
    "",
    " \t ",
    "{}",
    "[]",
    "null",
    "1",
    "\"x\"",
    "{\"seq\":2}",
    "{\"protocol\":null,\"seq\":null}",
    "{\"seq\":2,\"protocol\":\"io.choria.fisk-ai.v1.session.meta\",\"meta\":{}}",
    "{\"seq\":3,\"protocol\":\"io.choria.fisk-ai.v1.session.assistant\",\"assistant\":{}}",
    "{\"seq\":4,\"protocol\":\"io.choria.fisk-ai.v1.session.assistant\",\"assistant\":{\"message\":{\"content\":[{\"tool_use\":{}},{\"tool_use\":null},{},{\"x\":1,\"text\":null}]}}}",
    "{\"seq\":5,\"protocol\":\"io.choria.fisk-ai.v1.session.tool_result\",\"tool_result\":{}}",
    "{\"seq\":6,\"protocol\":\"io.choria.fisk-ai.v1.session.deferred\",\"deferred\":{}}",
    "{\"seq\":7,\"protocol\":\"io.choria.fisk-ai.v1.session.terminal\",\"terminal\":{}}",
    "{\"seq\":8,\"protocol\":\"io.choria.fisk-ai.v1.session.memory_revisions\",\"memory_revisions\":{\"revisions\":{\"\":-1}}}",
    "{\"seq\":9,\"protocol\":\"io.choria.fisk-ai.v1.session.future\",\"optional\":true}",
];

/// Extremes a number is replaced with.
pub const NUMBERS: &[&str] = &[
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "1e400",
    "0.5",
    "true",
];

/// JSON text that would drive or fool a terminal if printed raw: CSI and
/// OSC sequences, BEL, backspace, CR, NUL (escaped), a raw DEL, a raw C1 CSI
/// (U+009B), a bidi override and isolate, invisible format characters
/// (zero-width space, BOM, a tag, soft hyphen, Arabic letter mark) and an
/// escaped line separator.
pub const HOSTILE: &str = "\"\\u001b[2J\\u001b[31mred\\u001b]0;owned\\u0007 \\b\\r\\u0000 \u{7f}\u{9b}6n \u{202e}gnp.exe \u{200b}\u{2066}\u{feff}\u{e0041}\u{ad}\u{61c}\\u2028\\t\\ndone\"";

/// Deep nesting: 10,000 arrays, closed (valid JSON that a recursive parser
/// cannot take) and unclosed.
pub fn deep(closed: bool) -> Vec<u8> {
    let mut v = vec![b'['; 10_000];
    if closed {
        v.extend(std::iter::repeat_n(b']', 10_000));
    }
    v
}

/// A valid string value of about 300 KiB, with multi-byte characters and
/// escapes (larger than ls's tail window and the whole-read limit).
pub fn long_string() -> Vec<u8> {
    let unit = "long value é 日本 \\n\\t\\u001b[0m ";
    let mut v = b"\"".to_vec();
    while v.len() < 300 * 1024 {
        v.extend_from_slice(unit.as_bytes());
    }
    v.push(b'"');
    v
}

/// The healthy runs: `(id, bytes)`, sorted by id.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = runs_dir();
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.ok()?.path();
            let id = p.file_name()?.to_str()?.strip_suffix(".json")?.to_owned();
            Some((id, std::fs::read(&p).ok()?))
        })
        .collect();
    out.sort();
    assert!(out.len() >= 20, "testdata/runs is the seed corpus");
    out
}

fn runs_dir() -> PathBuf {
    // This file is compiled into two crates: find the workspace's testdata
    // from whichever manifest dir is building it.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    [here.join("testdata/runs"), here.join("../testdata/runs")]
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap_or_else(|| here.join("testdata/runs"))
}

/// `(start, end)` of each line, without its `\n`.
pub fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in b.iter().enumerate() {
        if *c == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    if start < b.len() {
        out.push((start, b.len()));
    }
    out
}

/// A JSON string in the buffer: `[start, end)` including its quotes; for a
/// value, the last key before it (its own key, or for an array element
/// the key of a member enclosing it). Keys have `key: None`.
pub struct Str {
    pub start: usize,
    pub end: usize,
    pub key: Option<String>,
    pub is_key: bool,
}

/// Every JSON string of a (healthy) buffer, keys and values.
pub fn strings(b: &[u8]) -> Vec<Str> {
    let mut out: Vec<Str> = Vec::new();
    let mut i = 0;
    let mut last_key: Option<String> = None;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len() && b[i] != b'"' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        let end = (i + 1).min(b.len());
        i = end;
        let mut j = end;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        let is_key = b.get(j) == Some(&b':');
        let text = String::from_utf8_lossy(&b[start + 1..end.saturating_sub(1).max(start + 1)]);
        if is_key {
            last_key = Some(text.into_owned());
            out.push(Str {
                start,
                end,
                key: None,
                is_key,
            });
        } else {
            out.push(Str {
                start,
                end,
                key: last_key.clone(),
                is_key,
            });
        }
    }
    out
}

/// `[start, end)` of every number that is an object member's value, with
/// its key.
pub fn numbers(b: &[u8]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for s in strings(b).iter().filter(|s| s.is_key) {
        let mut j = s.end;
        while j < b.len() && b[j] != b':' {
            j += 1;
        }
        let start = j + 1;
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'-') {
            end += 1;
        }
        if end > start {
            let key = String::from_utf8_lossy(&b[s.start + 1..s.end - 1]).into_owned();
            out.push((start, end, key));
        }
    }
    out
}

fn splice(b: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + with.len());
    v.extend_from_slice(&b[..start]);
    v.extend_from_slice(with);
    v.extend_from_slice(&b[end..]);
    v
}

fn join(ls: &[&[u8]], trailing_newline: bool) -> Vec<u8> {
    let mut v = ls.join(&b'\n');
    if trailing_newline {
        v.push(b'\n');
    }
    v
}

/// `n` distinct-ish picks out of `0..len`, spread by the rng.
fn picks(rng: &mut Rng, len: usize, n: usize) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    if n >= len {
        return (0..len).collect();
    }
    (0..n).map(|_| rng.below(len)).collect()
}

/// Every string value (not keys) of the run, except those whose key is in
/// `skip`.
fn values<'a>(ss: &'a [Str], skip: &'a [&str]) -> Vec<&'a Str> {
    ss.iter()
        .filter(|s| !s.is_key && !s.key.as_deref().is_some_and(|k| skip.contains(&k)))
        .collect()
}

/// The run with every string value replaced by [`HOSTILE`], except the
/// values the reader must understand for the run to fold (protocol ids,
/// base64 signatures): so every field the tools print carries escape
/// sequences at once.
pub fn hostile_all(b: &[u8]) -> Vec<u8> {
    let ss = strings(b);
    let mut out = Vec::with_capacity(b.len() * 2);
    let mut at = 0;
    for s in values(&ss, &["protocol", "signature"]) {
        out.extend_from_slice(&b[at..s.start]);
        out.extend_from_slice(HOSTILE.as_bytes());
        at = s.end;
    }
    out.extend_from_slice(&b[at..]);
    out
}

/// The payload key a record line names in its protocol.
fn payload_key(line: &[u8]) -> Option<String> {
    let ss = strings(line);
    let v = ss
        .iter()
        .find(|s| !s.is_key && s.key.as_deref() == Some("protocol"))?;
    let text = String::from_utf8_lossy(&line[v.start + 1..v.end - 1]).into_owned();
    text.rsplit('.').next().map(str::to_owned)
}

/// The line with its `"protocol"` member moved to the end of the object,
/// after the payload (never so in a canonical record).
fn protocol_last(line: &[u8]) -> Option<Vec<u8>> {
    let ss = strings(line);
    let k = ss
        .iter()
        .position(|s| s.is_key && &line[s.start..s.end] == b"\"protocol\"")?;
    let (start, end) = (ss[k].start, ss.get(k + 1)?.end);
    if line.get(end) != Some(&b',') {
        return None;
    }
    let member = line[start..end].to_vec();
    let mut v = splice(line, start, end + 1, b"");
    let close = v.iter().rposition(|&c| c == b'}')?;
    let mut with = b",".to_vec();
    with.extend_from_slice(&member);
    v.splice(close..close, with);
    Some(v)
}

/// Every mutant of one healthy run under `plan`, in a fixed order.
pub fn mutants(run: &str, b: &[u8], plan: Plan, seed: u64) -> Vec<Mutant> {
    let mut rng = Rng(seed ^ 0x9e37_79b9_7f4a_7c15 ^ (b.len() as u64).wrapping_mul(31));
    let mut out = Vec::new();
    let mut push = |what: String, bytes: Vec<u8>| {
        out.push(Mutant {
            run: run.to_owned(),
            what,
            bytes,
        })
    };
    let n = b.len();
    let ls = lines(b);
    let ss = strings(b);
    let vals = values(&ss, &[]);

    for p in picks(&mut rng, n, plan.flips) {
        let bit = rng.below(8);
        let mut v = b.to_vec();
        v[p] ^= 1 << bit;
        push(format!("flip bit {bit} @{p}"), v);
    }
    for p in picks(&mut rng, n, plan.truncations) {
        push(format!("truncate @{p}"), b[..p].to_vec());
    }
    if plan.every_cut_in_last_line {
        if let Some(&(start, _)) = ls.last() {
            for p in start..n {
                push(format!("truncate in last line @{p}"), b[..p].to_vec());
            }
        }
    }
    for &byte in INSERTED {
        for p in picks(&mut rng, n + 1, plan.inserts) {
            push(
                format!("insert 0x{byte:02x} @{p}"),
                splice(b, p, p, &[byte]),
            );
        }
    }
    for (k, seq) in INVALID_UTF8.iter().enumerate() {
        for p in picks(&mut rng, n + 1, plan.utf8) {
            push(format!("invalid utf-8 #{k} @{p}"), splice(b, p, p, seq));
        }
        for i in picks(&mut rng, vals.len(), plan.utf8) {
            let s = vals[i];
            let p = s.start + 1 + rng.below(s.end - s.start - 1);
            push(
                format!("invalid utf-8 #{k} in a string @{p}"),
                splice(b, p, p, seq),
            );
        }
    }

    // Line structure.
    let newlines: Vec<usize> = ls.iter().map(|l| l.1).filter(|&e| e < n).collect();
    for i in picks(&mut rng, newlines.len(), plan.line_edits) {
        let p = newlines[i];
        push(
            format!("delete newline of line {} @{p}", i + 1),
            splice(b, p, p + 1, b""),
        );
    }
    let texts: Vec<&[u8]> = ls.iter().map(|&(s, e)| &b[s..e]).collect();
    let trailing = b.last() == Some(&b'\n');
    for i in picks(&mut rng, texts.len(), plan.line_edits) {
        let mut t = texts.clone();
        t.insert(i, texts[i]);
        push(format!("duplicate line {}", i + 1), join(&t, trailing));
    }
    if texts.len() > 1 {
        for k in 0..plan.line_edits {
            // Adjacent pairs first (a reordered append), then any two.
            let i = rng.below(texts.len() - 1);
            let j = if k % 2 == 0 {
                i + 1
            } else {
                rng.below(texts.len())
            };
            let mut t = texts.clone();
            t.swap(i, j);
            push(
                format!("swap lines {} and {}", i + 1, j + 1),
                join(&t, trailing),
            );
        }
    }

    // Lines of another shape: blank, JSON that is not a record, records
    // that are almost empty, the payload ahead of the protocol, members
    // given twice; and the whole file with CRLF endings or a BOM.
    for i in picks(&mut rng, texts.len(), plan.line_edits) {
        for _ in 0..3 {
            let other = OTHER_LINES[rng.below(OTHER_LINES.len())];
            let mut t = texts.clone();
            t[i] = other.as_bytes();
            push(format!("line {} -> {other:?}", i + 1), join(&t, trailing));
        }
        let mut t = texts.clone();
        t.insert(i, b"");
        push(
            format!("blank line before line {}", i + 1),
            join(&t, trailing),
        );
        let line = texts[i];
        let mut edited = Vec::new();
        if let Some(moved) = protocol_last(line) {
            edited.push(("protocol moved last", moved));
        }
        if let Some(end) = line.iter().rposition(|&c| c == b'}') {
            let key = payload_key(line).unwrap_or_else(|| "x".into());
            let dup = format!(",\"{key}\":{{}},\"seq\":7");
            edited.push((
                "payload and seq given twice",
                splice(line, end, end, dup.as_bytes()),
            ));
        }
        for (what, new) in edited {
            let mut t = texts.clone();
            t[i] = &new;
            push(format!("line {}: {what}", i + 1), join(&t, trailing));
        }
    }
    let crlf: Vec<u8> = b
        .iter()
        .flat_map(|&c| if c == b'\n' { vec![b'\r', c] } else { vec![c] })
        .collect();
    push("CRLF line endings".into(), crlf);
    push(
        "byte order mark".into(),
        [&[0xef, 0xbb, 0xbf][..], b].concat(),
    );

    // Seqs.
    let seqs: Vec<(usize, usize)> = numbers(b)
        .into_iter()
        .filter(|(_, _, k)| k == "seq")
        .map(|(s, e, _)| (s, e))
        .collect();
    for i in picks(&mut rng, seqs.len(), plan.seq_lines) {
        let (s, e) = seqs[i];
        let d = b[s];
        let other = b'0' + (d - b'0' + 1 + rng.below(9) as u8) % 10;
        let mut v = b.to_vec();
        v[s] = other;
        push(
            format!("seq digit {} -> {} @{s}", d as char, other as char),
            v,
        );
        for edit in SEQ_EDITS {
            push(
                format!("seq {} -> {edit:?} @{s}", String::from_utf8_lossy(&b[s..e])),
                splice(b, s, e, edit.as_bytes()),
            );
        }
    }

    // Values.
    let nums: Vec<(usize, usize, String)> = numbers(b)
        .into_iter()
        .filter(|(_, _, k)| k != "seq")
        .collect();
    for i in picks(&mut rng, nums.len(), plan.values) {
        let (s, e, key) = &nums[i];
        let x = NUMBERS[rng.below(NUMBERS.len())];
        push(
            format!("{key} -> {x} @{s}"),
            splice(b, *s, *e, x.as_bytes()),
        );
    }
    // A long value costs every reader time in proportion: one per run.
    let long = long_string();
    let kinds: [(&str, &[u8], usize); 4] = [
        ("a 300 KiB string", &long, plan.values.min(1)),
        ("10,000 nested arrays", &deep(true), plan.values),
        ("10,000 unclosed arrays", &deep(false), plan.values),
        ("hostile text", HOSTILE.as_bytes(), plan.values),
    ];
    for (name, with, count) in kinds {
        for i in picks(&mut rng, vals.len(), count) {
            let s = vals[i];
            let key = s.key.as_deref().unwrap_or("[]");
            push(
                format!("{key} value -> {name} @{}", s.start),
                splice(b, s.start, s.end, with),
            );
        }
    }
    // Raw JSON fields (tool input, provider raw) kept verbatim by the reader.
    let raws: Vec<usize> = strings(b)
        .iter()
        .filter(|s| s.is_key && matches!(&b[s.start..s.end], b"\"input\"" | b"\"raw\""))
        .map(|s| s.end + 1)
        .collect();
    for i in picks(&mut rng, raws.len(), plan.values) {
        let p = raws[i];
        // Replace the whole raw value: from after the colon to the end of
        // its JSON value is hard to find without a parser, so put the deep
        // array in front of it as a new member instead.
        let mut with = deep(true);
        with.extend_from_slice(b",\"was\":");
        push(
            format!("raw value -> 10,000 nested arrays @{p}"),
            splice(b, p, p, &with),
        );
    }
    if plan.hostile_all {
        push("every string value -> hostile text".into(), hostile_all(b));
    }
    out
}
