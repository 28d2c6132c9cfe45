//! Rendering: text for people, JSON for scripts, and the one place where
//! untrusted journal text is made safe to print.

use comfy_table::{ContentArrangement, Table};
use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// How output looks: chosen once in `main`, passed to every command.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub format: Format,
    pub color: bool,
}

impl Style {
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }
}

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

/// Neutralise untrusted text for a terminal: control characters (and so
/// every escape sequence, which starts with ESC or a C1 control) and bidi
/// overrides become visible `\u{..}` escapes. With `multiline`, `\n` and
/// `\t` are kept (transcripts); otherwise they are escaped too.
pub fn sanitize(s: &str, multiline: bool) -> Cow<'_, str> {
    let keep = |c: char| multiline && (c == '\n' || c == '\t');
    if !s.chars().any(|c| is_dangerous(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_dangerous(c) && !keep(c) {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                _ => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Untrusted bytes (possibly not UTF-8), sanitised and cut to `max` chars.
pub fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let clean = sanitize(&text, false);
    truncate(&clean, max)
}

/// Cut to at most `max` characters, marking the cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// One line for a table cell: sanitised, whitespace runs collapsed, cut.
pub fn cell(s: &str, max: usize) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&sanitize(&one_line, false), max)
}

pub fn table(headers: &[&str]) -> Table {
    let mut t = Table::new();
    // Only a rule under the header: listings of thousands of rows stay readable.
    t.load_preset("     ──            ")
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(headers.iter().copied());
    t
}

/// Print a JSON document on one line.
pub fn json_line<T: serde::Serialize>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let text = serde_json::to_string(value)?;
    out.write_all(json_safe(&text).as_bytes())?;
    out.write_all(b"\n")
}

/// Print a JSON document, indented.
pub fn json_pretty<T: serde::Serialize>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    out.write_all(json_safe(&text).as_bytes())?;
    out.write_all(b"\n")
}

/// `value` as a JSON value, every object's keys in sorted order: the
/// documents of `answer`, `diff`, `info`, `migrate`, `repair`, `rm`, `run`,
/// `resume`, `stream` and the `verify`/`validate` summaries were first
/// built as `serde_json::Value`s, whose maps sort their keys, and scripts
/// have seen them so. Their outcome types go through here to keep those
/// bytes, nested library types included, whatever order the fields are
/// declared in.
pub fn sorted<T: serde::Serialize>(value: &T) -> io::Result<serde_json::Value> {
    Ok(serde_json::to_value(value)?)
}

/// The last line of a JSON Lines output (`verify`, `validate`):
/// `{"summary": {...}}`, keys sorted.
pub fn summary_line<T: serde::Serialize>(out: &mut dyn Write, summary: &T) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Line<'a, T> {
        summary: &'a T,
    }
    json_line(out, &sorted(&Line { summary })?)
}

/// JSON text with every dangerous character [`is_dangerous`] written as a
/// `\uXXXX` escape (a surrogate pair beyond the BMP). serde_json escapes
/// only C0 controls, so DEL, C1 controls and bidi overrides would reach a
/// terminal that shows the output raw. Outside strings the output holds
/// only ASCII punctuation, digits, letters and whitespace (a raw value
/// copied from a journal keeps its own), so the result is the same JSON
/// value, byte for byte where nothing needed escaping.
pub fn json_safe(text: &str) -> Cow<'_, str> {
    let escape = |c: char| c != '\n' && is_dangerous(c);
    if !text.chars().any(escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        // A raw tab or carriage return can only be whitespace between
        // tokens (serde_json escapes them in strings, and a raw JSON value
        // copied from a journal keeps its own whitespace): a space is the
        // same JSON.
        if c == '\t' || c == '\r' {
            out.push(' ');
        } else if escape(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Colour only on a terminal, and never with NO_COLOR or --no-color.
pub fn want_color(no_color: bool) -> bool {
    !no_color
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && io::stdout().is_terminal()
}

/// The miette handler every diagnostic and failure is drawn with: in
/// colour, or with the same characters and no colour.
pub fn report_handler(color: bool) -> miette::GraphicalReportHandler {
    if color {
        miette::GraphicalReportHandler::new()
    } else {
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
    }
}

/// One journal line presented to miette with its true line number.
#[derive(Debug)]
pub struct LineSource {
    pub name: String,
    pub text: String,
    pub line: usize,
}

impl miette::SourceCode for LineSource {
    fn read_span<'a>(
        &'a self,
        _span: &miette::SourceSpan,
        _before: usize,
        _after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            self.text.as_bytes(),
            (0, self.text.len()).into(),
            self.line.saturating_sub(1),
            0,
            1,
        )))
    }
}

/// Render one diagnostic: `code`, a one-line message, and optionally the
/// offending journal line (sanitised, truncated) under it with its number.
pub fn diagnostic(
    out: &mut dyn Write,
    severity: miette::Severity,
    code: &str,
    message: &str,
    source: Option<(String, usize, &[u8])>,
    style: Style,
) -> io::Result<()> {
    let mut diag = miette::MietteDiagnostic::new(message.to_owned())
        .with_code(code.to_owned())
        .with_severity(severity);
    let handler = report_handler(style.color).with_width(120);
    let mut text = String::new();
    let rendered = match source {
        Some((name, line, bytes)) => {
            let shown = excerpt(bytes, 160);
            diag = diag.with_label(miette::LabeledSpan::at_offset(0, "here"));
            let report = miette::Report::new(diag).with_source_code(LineSource {
                name: sanitize(&name, false).into_owned(),
                text: shown,
                line,
            });
            handler.render_report(&mut text, report.as_ref())
        }
        None => handler.render_report(&mut text, &diag),
    };
    if rendered.is_err() {
        text = format!("[{code}] {message}\n");
    }
    out.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_neutralised() {
        assert_eq!(
            sanitize("a\u{1b}[31mred\u{7}", false),
            "a\\u{1b}[31mred\\u{7}"
        );
        assert_eq!(sanitize("x\u{9b}2J", false), "x\\u{9b}2J");
        assert_eq!(sanitize("l1\nl2\tx", true), "l1\nl2\tx");
        assert_eq!(sanitize("l1\nl2", false), "l1\\nl2");
        assert_eq!(sanitize("abc\u{202e}def", false), "abc\\u{202e}def");
        assert!(matches!(sanitize("plain é 😀", false), Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn json_safe_output_is_the_same_json_value() {
        // A raw value from a journal keeps its tabs and carriage returns
        // between tokens; strings hold C1, bidi and tag characters.
        let text = "{\"input\":\t{\"a\":\r\n\"x\u{9b}y\u{202e}z\u{e0041}\u{7f}\"},\"b\":[1,\t2]}";
        let safe = json_safe(text);
        assert!(!safe.contains(['\t', '\r', '\u{9b}', '\u{202e}', '\u{e0041}', '\u{7f}']));
        assert!(safe.contains("\\u009b") && safe.contains("\\udb40\\udc41"));
        let a: serde_json::Value = serde_json::from_str(text).unwrap();
        let b: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(a, b);
        let plain = "{\n  \"a\": \"b\"\n}";
        assert_eq!(json_safe(plain), plain, "nothing to escape: unchanged");
    }
}
