//! Names as an operator can paste them. A file name is bytes: it need not
//! be UTF-8, and it may hold what a terminal acts on. Shown lossily (with
//! U+FFFD) it names no file; shown raw it can rewrite the screen. So every
//! name and path this tool prints goes through one of two functions here:
//! [`word`], one shell word naming exactly those bytes (for commands and
//! for naming a file in a message), and [`shown`], a path in running text:
//! as is when that is exact and safe, else its [`word`].
//!
//! A word is bare when it holds only characters no shell treats specially,
//! single-quoted when it is UTF-8 with nothing a terminal acts on, and
//! otherwise ANSI-C quoted, `$'...'`, with every other byte written as a
//! three-digit octal escape (`$'bad\377.json'`), as GNU `ls` shows such
//! names: bash, zsh, ksh and a POSIX.1-2024 `sh` read it back to the same
//! bytes.
//!
//! Public API: the binary quotes names for a shell ([`word`], [`path_word`]),
//! shows paths in running text ([`shown`]) and keeps characters a terminal
//! acts on off it ([`is_dangerous`]).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether `c` must not reach a terminal as is: C0 and C1 controls, DEL,
/// and the invisible format characters (Unicode category Cf): the
/// bidirectional overrides and marks that can make text read differently
/// from what it is, the line and paragraph separators, zero-width spaces
/// and joiners, and the tag characters that can hide a whole text inside
/// one that looks short. The zero-width joiner and non-joiner are kept:
/// emoji sequences and Persian and Indic text need them.
pub fn is_dangerous(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'
                | '\u{200e}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
        )
}

/// `s` as one shell word that names exactly its bytes (see the module
/// doc). The result is printable ASCII whenever `s` is not printable UTF-8.
pub fn word(s: &OsStr) -> String {
    let bytes = s.as_bytes();
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"-_./:=+@%,".contains(b);
    if !bytes.is_empty() && bytes.iter().all(plain) {
        // Only ASCII: as it is.
        return String::from_utf8_lossy(bytes).into_owned();
    }
    if let Some(text) = printable(bytes) {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    let octal = |out: &mut String, b: u8| out.push_str(&format!("\\{b:03o}"));
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str(r"\\"),
                '\'' => out.push_str(r"\'"),
                '\n' => out.push_str(r"\n"),
                '\t' => out.push_str(r"\t"),
                c if is_dangerous(c) => {
                    let mut buf = [0; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        octal(&mut out, b);
                    }
                }
                c => out.push(c),
            }
        }
        for &b in chunk.invalid() {
            octal(&mut out, b);
        }
    }
    out.push('\'');
    out
}

/// [`word`] of a path.
pub fn path_word(p: &Path) -> String {
    word(p.as_os_str())
}

/// A path for running text: as it is when it is UTF-8 with nothing a
/// terminal acts on (so messages read as they always have), else its
/// [`word`], which names it exactly.
pub fn shown(p: &Path) -> String {
    match printable(p.as_os_str().as_bytes()) {
        Some(text) => text.to_owned(),
        None => path_word(p),
    }
}

/// `bytes` as text, when they are UTF-8 with nothing a terminal acts on.
fn printable(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|t| !t.chars().any(is_dangerous))
}

/// Untrusted text (ids, tool names from the journal) made safe for a
/// message: control characters and bidi overrides as visible escapes,
/// `\n`, `\t` and `\r` included (the binary's `sanitize(_, false)`).
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_dangerous) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_dangerous(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn w(bytes: &[u8]) -> String {
        word(OsStr::from_bytes(bytes))
    }

    #[test]
    fn a_name_is_bare_quoted_or_escaped_as_little_as_it_needs() {
        assert_eq!(w(b"r-1.json"), "r-1.json");
        assert_eq!(w(b""), "''");
        assert_eq!(w(b"x y.json"), "'x y.json'");
        assert_eq!(w(b"it's"), r"'it'\''s'");
        assert_eq!(w("caf\u{e9}.json".as_bytes()), "'caf\u{e9}.json'");
        assert_eq!(w(b"bad\xff.json"), r"$'bad\377.json'");
        assert_eq!(w(b"a\x1b[2J'\\b\n"), r"$'a\033[2J\'\\b\n'");
        // A digit after an escape is not read into it: three digits always.
        assert_eq!(w(b"\x017"), r"$'\0017'");
        // A bidi override is written as its bytes.
        assert_eq!(w("x\u{202e}y".as_bytes()), r"$'x\342\200\256y'");
        let p = Path::new(OsStr::from_bytes(b"/tmp/d\xff/a.json"));
        assert_eq!(shown(p), r"$'/tmp/d\377/a.json'");
        assert_eq!(shown(Path::new("/tmp/x y/a.json")), "/tmp/x y/a.json");
    }

    /// Every escaped word, read back by a real shell, is the same bytes.
    #[test]
    fn bash_reads_every_word_back_to_its_bytes() {
        let Ok(out) = std::process::Command::new("bash").arg("--version").output() else {
            eprintln!("no bash here: the words are checked against the table above only");
            return;
        };
        assert!(out.status.success());
        let cases: [&[u8]; 8] = [
            b"bad\xff.json",
            b"a\x1b[2J'\\b\n",
            b"\x017",
            "x\u{202e}y".as_bytes(),
            b"x y'z",
            b"\xc3(\xe2\x82",
            b"\t\r\x7f\x80\x9b",
            b"plain-1.json",
        ];
        for bytes in cases {
            let script = format!("printf '%s' {}", w(bytes));
            let out = std::process::Command::new("bash")
                .args(["-c", &script])
                .output()
                .unwrap();
            assert_eq!(out.stdout, bytes, "{script}");
        }
    }
}
