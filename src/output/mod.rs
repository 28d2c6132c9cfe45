//! Rendering: text for people, JSON for scripts, and the one place where
//! untrusted journal text is made safe to print.

use comfy_table::{Cell, Color, ColumnConstraint, ContentArrangement, Row, Table, Width};
use journal::store::Listed;
use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

mod table;

pub use table::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// How output looks: chosen once, with the rest of the invocation
/// (`invocation::Invocation::style`), and read from it by every command.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub format: Format,
    pub color: bool,
    /// The width tables fit: the terminal's, or `COLUMNS`; none in a pipe.
    pub width: Option<u16>,
}

impl Style {
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }

    /// Whether a table goes out for a program (see [`print_table`]): into
    /// a pipe, uncoloured.
    pub fn fields(&self) -> bool {
        as_fields(*self)
    }

    /// A count as a table cell shows it: with thousands separators for
    /// people (`2,576`), plain for a program (`2576`, [`Style::fields`]).
    pub fn count(&self, n: impl std::fmt::Display) -> String {
        match self.fields() {
            true => n.to_string(),
            false => thousands(n),
        }
    }

    /// A size in bytes as a table cell shows it: `7.6 KiB` for people,
    /// the whole number of bytes for a program ([`Style::fields`]).
    pub fn size(&self, n: u64) -> String {
        match self.fields() {
            true => n.to_string(),
            false => human_bytes(n),
        }
    }

    /// A line under a table (a note, a total, what was left out): on
    /// `out` for people; for a program, whose stdout is the table alone,
    /// on standard error as `fisk-admin: note: ...`.
    pub fn footnote(&self, out: &mut dyn Write, line: &str) -> io::Result<()> {
        match self.fields() {
            true => writeln!(io::stderr(), "fisk-admin: note: {line}"),
            false => writeln!(out, "{line}"),
        }
    }
}

/// A size as text shows it, in binary units (`812 B`, `7.6 KiB`,
/// `1.4 MiB`): the one style of every size printed for people.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS.get(u).unwrap_or(&"TiB"))
    }
}

/// Whether `c` must not reach a terminal as is (the library decides, so
/// that its names, [`journal::shell::word`], and this output agree).
pub use journal::shell::is_dangerous;

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

/// A whole number with thousands separators, as text tables show counts
/// (`1,234,567`, `-12,000`); JSON keeps the plain number.
pub fn thousands(n: impl std::fmt::Display) -> String {
    let digits = n.to_string();
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d.to_owned()),
        None => ("", digits),
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// A time as text output shows it (ls, search, stats): RFC 3339 to the
/// second with the zone it was written with (`2026-09-22T14:44:03+05:30`,
/// `2026-11-30T17:01:00Z`), or in UTC for every line with `--utc`
/// ([`show_utc`], c-18), which every time argument reads back; `-` for
/// none and for Go's zero time. JSON keeps the times as journaled.
pub fn time_cell(t: Option<&journal::time::Time>) -> String {
    match t {
        Some(t) if !t.is_zero() && UTC.load(std::sync::atomic::Ordering::Relaxed) => {
            t.in_utc().to_rfc3339_seconds()
        }
        Some(t) if !t.is_zero() => t.to_rfc3339_seconds(),
        _ => "-".to_owned(),
    }
}

/// `--utc`: every time text shows, in UTC.
static UTC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Show every time of text output in UTC (`--utc`, journalctl's), one zone
/// for every line, rather than each with the zone it was written in.
pub fn show_utc(on: bool) {
    UTC.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Print a JSON document on one line.
pub fn json_line<T: serde::Serialize>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let text = serde_json::to_string(value)?;
    out.write_all(json_safe(&text).as_bytes())?;
    out.write_all(b"\n")
}

/// One element of a JSON list as [`json_array`] writes it: compact, with
/// terminal-escape characters escaped ([`json_safe`]). Made when its item
/// is at hand, written later (`ls` keeps its rows' text, not summaries).
pub fn json_element<T: serde::Serialize>(item: &T) -> io::Result<Box<[u8]>> {
    let text = serde_json::to_string(item)?;
    Ok(json_safe(&text).as_bytes().into())
}

/// Print a JSON list of elements made by [`json_element`] on one line:
/// the same bytes as [`json_line`] of a list of the items, written an
/// element at a time, so the text of the whole array is never held (`ls`
/// of 100,000 runs, issue 16).
pub fn json_array<'a>(
    out: &mut dyn Write,
    items: impl IntoIterator<Item = &'a [u8]>,
) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    w.write_all(b"[")?;
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(item)?;
    }
    w.write_all(b"]\n")?;
    w.flush()
}

/// Print a JSON document, indented.
pub fn json_pretty<T: serde::Serialize>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    out.write_all(json_safe(&text).as_bytes())?;
    out.write_all(b"\n")
}

/// Print `head` as [`json_pretty`] of [`sorted`] prints it, with `rows`
/// in place of its top-level `key` (which `head` holds as an empty
/// array): the same bytes, each row turned into a value and written on its
/// own, so that no value tree of every row is held (migrate's report of
/// 8,000 runs, issue 25: bench/RESULTS.md).
pub fn json_pretty_rows<T: serde::Serialize, R: serde::Serialize>(
    out: &mut dyn Write,
    head: &T,
    key: &str,
    rows: &[R],
) -> io::Result<()> {
    let text = serde_json::to_string_pretty(&sorted(head)?)?;
    pretty_with_rows(out, &text, key, rows, |r| {
        Ok(serde_json::to_string_pretty(&sorted(r)?)?)
    })
}

/// [`json_pretty`] of `head` with `rows` in place of its top-level `key`
/// (which `head` holds as an empty array), keys in the order their types
/// declare them: the same bytes as [`json_pretty`] of the whole document,
/// written a row at a time, so the text of every row is never held
/// (`inbox` of 30,000 waiting calls, issue 40: bench/RESULTS.md).
pub fn json_pretty_rows_in_order<T: serde::Serialize, R: serde::Serialize>(
    out: &mut dyn Write,
    head: &T,
    key: &str,
    rows: &[R],
) -> io::Result<()> {
    let text = serde_json::to_string_pretty(head)?;
    pretty_with_rows(out, &text, key, rows, |r| {
        Ok(serde_json::to_string_pretty(r)?)
    })
}

/// `head_text` (a pretty document whose top-level `key` is `[]`) written
/// with each row's pretty text (`row_text`) spliced into that array,
/// indented as the whole document's pretty text would indent it.
fn pretty_with_rows<R>(
    out: &mut dyn Write,
    text: &str,
    key: &str,
    rows: &[R],
    row_text: impl Fn(&R) -> io::Result<String>,
) -> io::Result<()> {
    // A top-level key is the only place this can be: inside a string a
    // newline and a quote are escaped.
    let hole = format!("\n  {}: []", serde_json::to_string(key)?);
    let open = text.find(&hole).map(|at| at + hole.len() - 1);
    let (Some((before, after)), false) =
        (open.and_then(|o| text.split_at_checked(o)), rows.is_empty())
    else {
        if open.is_none() {
            return Err(io::Error::other(format!(
                "no empty {key:?} in the document"
            )));
        }
        out.write_all(json_safe(text).as_bytes())?;
        return out.write_all(b"\n");
    };
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    w.write_all(json_safe(before).as_bytes())?;
    for (i, row) in rows.iter().enumerate() {
        w.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        let one = row_text(row)?;
        w.write_all(json_safe(&one.replace('\n', "\n    ")).as_bytes())?;
    }
    w.write_all(b"\n  ")?;
    w.write_all(json_safe(after).as_bytes())?;
    w.write_all(b"\n")?;
    w.flush()
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

/// `--color`: colour on a terminal (`auto`), always (for `less -R`), or
/// never.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--color always` colours even into a pipe and whatever NO_COLOR says
/// (a flag wins over the environment); `never` and `--no-color` never do;
/// `auto` only on a terminal and without NO_COLOR.
pub fn want_color(choice: ColorChoice, no_color: bool) -> bool {
    match (choice, no_color) {
        (ColorChoice::Never, _) | (_, true) => false,
        (ColorChoice::Always, false) => true,
        (ColorChoice::Auto, false) => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stdout().is_terminal()
        }
    }
}

/// The width tables are fitted to: `COLUMNS` when it holds a width (set by
/// hand, or by a shell that exports it), else the terminal's when stdout is
/// one; `None` into a pipe, where nothing is cut.
pub fn table_width() -> Option<u16> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|w| *w > 0);
    columns.or_else(|| {
        io::stdout()
            .is_terminal()
            .then(ratatui::crossterm::terminal::size)
            .and_then(Result::ok)
            .map(|(w, _)| w)
            .filter(|w| *w > 0)
    })
}

/// The miette handler every diagnostic and failure is drawn with: in
/// colour, or with the same characters and no colour.
pub fn report_handler(color: bool) -> miette::GraphicalReportHandler {
    let h = if color {
        miette::GraphicalReportHandler::new()
    } else {
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
    };
    // A help line carries commands to paste: one that miette wrapped
    // would be pasted in halves. The terminal wraps long lines itself.
    h.with_wrap_lines(false)
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

/// What a dry run of a write says: every check passed, and what the
/// command would write (text: `would ...; dry run, nothing was written`;
/// JSON: `{"run", "dry_run": true, "would"}` and the command's details).
pub fn would(
    out: &mut dyn Write,
    style: crate::output::Style,
    run: &str,
    what: &str,
    details: serde_json::Value,
) -> io::Result<()> {
    match style.format {
        Format::Json => {
            let mut v = serde_json::json!({"run": run, "dry_run": true, "would": what});
            if let (Some(o), serde_json::Value::Object(d)) = (v.as_object_mut(), details) {
                o.extend(d);
            }
            json_pretty(out, &v)?;
        }
        Format::Text => writeln!(out, "would {what}; dry run, nothing was written")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_rows_are_the_bytes_of_the_whole_document() {
        #[derive(serde::Serialize)]
        struct Row {
            zeta: u32,
            alpha: &'static str,
            empty: Vec<u32>,
            nested: Vec<serde_json::Value>,
        }
        let row = |n| Row {
            zeta: n,
            alpha: "a \"quoted\"\nline \u{202e} and \u{1b}[31m",
            empty: vec![],
            nested: vec![serde_json::json!({"b": [1, {"c": {}}], "a": null})],
        };
        let whole = |rows: Vec<Row>| {
            let mut out = Vec::new();
            let doc =
                serde_json::json!({"to": "x", "runs": sorted(&rows).unwrap(), "a": {"runs": []}});
            json_pretty(&mut out, &doc).unwrap();
            out
        };
        for n in [0, 1, 3] {
            let rows: Vec<Row> = (0..n).map(row).collect();
            let head = serde_json::json!({"to": "x", "runs": [], "a": {"runs": []}});
            let mut out = Vec::new();
            json_pretty_rows(&mut out, &head, "runs", &rows).unwrap();
            let want = whole((0..n).map(row).collect());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
        let mut out = Vec::new();
        let head = serde_json::json!({"to": "x"});
        assert!(json_pretty_rows(&mut out, &head, "runs", &[1]).is_err());
    }

    #[test]
    fn rows_in_order_print_as_the_whole_document_does() {
        // Keys in declared order (not sorted), nested values, and text
        // a terminal must not see raw: the same bytes as json_pretty.
        #[derive(serde::Serialize, Clone)]
        struct Item {
            zed: String,
            also: Vec<u32>,
            inner: Option<std::collections::BTreeMap<String, String>>,
        }
        #[derive(serde::Serialize)]
        struct Doc {
            items: Vec<Item>,
            ready: Vec<String>,
            count: usize,
        }
        let item = |k: u32| Item {
            zed: format!("run-{k}\u{1b}[2J\u{202e}"),
            also: (0..k).collect(),
            inner: (k % 2 == 1).then(|| [("b\nc".to_owned(), "\t".to_owned())].into()),
        };
        for n in [0, 1, 3] {
            let items: Vec<Item> = (0..n).map(item).collect();
            let mut want = Vec::new();
            json_pretty(
                &mut want,
                &Doc {
                    items: items.clone(),
                    ready: vec!["r".into()],
                    count: 7,
                },
            )
            .unwrap();
            let head = Doc {
                items: Vec::new(),
                ready: vec!["r".into()],
                count: 7,
            };
            let mut out = Vec::new();
            json_pretty_rows_in_order(&mut out, &head, "items", &items).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap(),
                "{n} rows"
            );
        }
    }

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
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(
            thousands(i128::from(i64::MAX) * 4),
            "36,893,488,147,419,103,228"
        );
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn a_json_array_written_element_by_element_is_json_line_of_it() {
        let items = [serde_json::json!({"a": "x\u{202e}y"}), serde_json::json!(2)];
        for n in 0..=items.len() {
            let (mut whole, mut each) = (Vec::new(), Vec::new());
            json_line(&mut whole, &items[..n].to_vec()).unwrap();
            let elements: Vec<Box<[u8]>> = items[..n]
                .iter()
                .map(|i| json_element(i).unwrap())
                .collect();
            json_array(&mut each, elements.iter().map(|e| &e[..])).unwrap();
            assert_eq!(
                String::from_utf8(each).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
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
