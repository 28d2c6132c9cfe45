//! Rendering: text for people, JSON for scripts, and the one place where
//! untrusted journal text is made safe to print.

use comfy_table::{Cell, Color, ColumnConstraint, ContentArrangement, Row, Table, Width};
use journal::store::Listed;
use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

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
/// `2026-11-30T17:01:00Z`), which every time argument reads back; `-` for
/// none and for Go's zero time. JSON keeps the times as journaled.
pub fn time_cell(t: Option<&journal::time::Time>) -> String {
    match t {
        Some(t) if !t.is_zero() => t.to_rfc3339_seconds(),
        _ => "-".to_owned(),
    }
}

/// A table as every command prints it: built with [`table`], printed
/// with [`print_table`], which fits it to the terminal.
pub struct Tab {
    t: Table,
    /// The columns cut first when the table is wider than the terminal,
    /// the first of them cut before the next (a prompt, then a message).
    flex: Vec<usize>,
    /// Columns never cut (ids, model names, a command to paste); a column
    /// of figures is never cut either ([`figures`]).
    keep: Vec<usize>,
    /// Columns left out, in this order, while the table does not fit.
    drop: Vec<usize>,
    /// Into a pipe, tab-separated fields (see [`print_table`]).
    fields: bool,
}

impl Tab {
    pub fn add_row<T: Into<Row>>(&mut self, row: T) -> &mut Self {
        self.t.add_row(row);
        self
    }
    /// Cut this column first when the table does not fit (a prompt); a
    /// second call names the column cut after it.
    pub fn flex(mut self, col: usize) -> Self {
        self.flex.push(col);
        self
    }
    /// Never cut this column (left out, and named, instead).
    pub fn keep(mut self, col: usize) -> Self {
        self.keep.push(col);
        self
    }
    /// Leave these columns out, in this order, while the table does not
    /// fit even with the flex column cut to its narrowest.
    pub fn drop_first(mut self, cols: &[usize]) -> Self {
        self.drop.extend_from_slice(cols);
        self
    }
    /// Into a pipe, print tab-separated fields for a program rather than
    /// the aligned table (`ls`, `stats --all`; other tables keep their
    /// aligned pipe form, which scripts and tests have read).
    pub fn fields_in_pipe(mut self) -> Self {
        self.fields = true;
        self
    }
}

pub fn table(headers: &[&str]) -> Tab {
    let mut t = Table::new();
    let mut header = Row::from(headers.iter().copied());
    header.max_height(1);
    // Only a rule under the header: listings of thousands of rows stay readable.
    t.load_preset("     ──            ")
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_truncation_indicator("…")
        .set_header(header);
    Tab {
        t,
        flex: Vec::new(),
        // The first column names the row (a run id, a tool): never cut.
        keep: vec![0],
        drop: Vec::new(),
        fields: false,
    }
}

/// Whether every cell of a column is a figure (starts with a digit, or is
/// `-` or empty): counts, sizes, times, durations. Such a column is never
/// cut: a cut number reads as another number.
fn figures<'a>(mut cells: impl Iterator<Item = &'a str>) -> bool {
    cells.all(|c| c.is_empty() || c == "-" || c.starts_with(|ch: char| ch.is_ascii_digit()))
}

/// The one way a table is printed.
///
/// Into a pipe (no width: not a terminal and no `COLUMNS`), without
/// colour (`--color always` is for a pager), and for a table built with
/// [`Tab::fields_in_pipe`], the table is for a program: a header line and one line per
/// row, the cells separated by a tab, every value whole, no rule line and
/// no padding; an empty cell reads `-`, and a tab or newline in a value
/// reads `\t` or `\n`, so each column is one tab-separated field.
///
/// Otherwise the table is aligned. Wider than `style.width` (a terminal,
/// or `COLUMNS`), its rows stay one line each: the flex columns are cut
/// first (to no less than `FLEX_MIN`), then the droppable columns are left
/// out in their order (a line under the table names them), then the
/// widest of the others are cut in turn; the first column, a kept column
/// and a column of figures are never cut, and if the table still does not fit, columns are
/// left out from the right (and named) instead. Colour (statuses,
/// severities) only with `style.color`. No line ends in padding.
pub fn print_table(out: &mut dyn Write, tab: Tab, style: Style) -> io::Result<()> {
    let Tab {
        mut t,
        flex,
        mut keep,
        drop,
        fields,
    } = tab;
    if fields && as_fields(style) {
        return print_fields(out, &t);
    }
    if style.color {
        // crossterm, which draws comfy-table's colours, leaves them out
        // under NO_COLOR; `--color always` outranks it.
        ratatui::crossterm::style::force_color_output(true);
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    let mut hidden_names = Vec::new();
    if let Some(width) = style.width {
        let natural: Vec<usize> = t
            .column_max_content_widths()
            .into_iter()
            .map(usize::from)
            .collect();
        for i in 0..natural.len() {
            let mut col = t.row_iter().map(|r| r.cell_iter().nth(i));
            let contents: Vec<String> = col
                .by_ref()
                .map(|c| c.map(|c| c.content()).unwrap_or_default())
                .collect();
            if figures(contents.iter().map(String::as_str)) && !flex.contains(&i) {
                keep.push(i);
            }
        }
        if let Some(fit) = fit(&natural, usize::from(width), &flex, &keep, &drop) {
            // Cut by character, not at a space: no cell holds a NUL
            // (sanitised), so a cell is one word, cut where it must be.
            t.set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(width)
                .set_delimiter('\u{0}');
            for r in t.row_iter_mut() {
                r.max_height(1);
            }
            let names: Vec<String> = t
                .header()
                .map(|h| h.cell_iter().map(|c| c.content()).collect())
                .unwrap_or_default();
            for (i, w) in fit.iter().enumerate() {
                let constraint = match w {
                    None => {
                        hidden_names.extend(names.get(i).cloned());
                        ColumnConstraint::Hidden
                    }
                    // The width comfy-table is given includes the padding.
                    Some(w) => ColumnConstraint::Absolute(Width::Fixed(
                        u16::try_from(w + 2).unwrap_or(u16::MAX),
                    )),
                };
                if let Some(c) = t.column_mut(i) {
                    c.set_constraint(constraint);
                }
            }
        }
    }
    for line in t.lines() {
        out.write_all(line.trim_end().as_bytes())?;
        out.write_all(b"\n")?;
    }
    if !hidden_names.is_empty() {
        let note = format!("(too narrow for {})", hidden_names.join(", "));
        let width = style.width.map_or(usize::MAX, usize::from);
        writeln!(out, "{}", truncate(&note, width))?;
    }
    Ok(())
}

/// Whether a table built with [`Tab::fields_in_pipe`] goes out as
/// tab-separated fields (see [`print_table`]): into a pipe, uncoloured.
pub fn as_fields(style: Style) -> bool {
    style.width.is_none() && !style.color
}

/// A table for a program written a row at a time (see [`print_table`]):
/// nothing is fitted, so nothing is kept (`ls` of 100,000 runs).
pub struct Fields<'a> {
    w: io::BufWriter<&'a mut dyn Write>,
}

impl<'a> Fields<'a> {
    /// A table of these columns, its header line written.
    pub fn new(out: &'a mut dyn Write, headers: &[&str]) -> io::Result<Fields<'a>> {
        let mut f = Fields {
            w: io::BufWriter::with_capacity(1 << 16, out),
        };
        f.row(headers.iter().map(|h| (*h).to_owned()))?;
        Ok(f)
    }

    /// One line: the cells tab-separated, an empty one `-`, a tab or a
    /// newline inside one `\t` or `\n`.
    pub fn row(&mut self, cells: impl IntoIterator<Item = String>) -> io::Result<()> {
        self.w.write_all(&fields_line(cells))
    }

    /// One line made by [`fields_line`] before.
    pub fn line(&mut self, line: &[u8]) -> io::Result<()> {
        self.w.write_all(line)
    }

    /// Write what is buffered.
    pub fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The line [`Fields::row`] writes for these cells, newline included: a
/// row can be made when its run is read and written later (`ls` keeps
/// rows, not summaries, until it has sorted them).
pub fn fields_line(cells: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut line = Vec::new();
    for (i, c) in cells.into_iter().enumerate() {
        if i > 0 {
            line.push(b'\t');
        }
        match c.as_str() {
            "" => line.push(b'-'),
            _ => line.extend_from_slice(c.replace('\t', "\\t").replace('\n', "\\n").as_bytes()),
        }
    }
    line.push(b'\n');
    line
}

/// A whole table as tab-separated fields.
fn print_fields(out: &mut dyn Write, t: &Table) -> io::Result<()> {
    let headers: Vec<String> = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    let names: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut f = Fields::new(out, &names)?;
    for r in t.row_iter() {
        f.row(r.cell_iter().map(|c| c.content()))?;
    }
    f.finish()
}

/// The width of each column (`None`: left out) when content of widths
/// `natural` does not fit in `width`; `None` when it fits as it is. Each
/// column takes its width and one space either side, and columns are
/// one space apart.
fn fit(
    natural: &[usize],
    width: usize,
    flex: &[usize],
    keep: &[usize],
    drop: &[usize],
) -> Option<Vec<Option<usize>>> {
    // Content, a space either side, and a space between columns.
    let total = |w: &[Option<usize>]| {
        let shown = w.iter().flatten();
        shown
            .clone()
            .map(|w| w + 3)
            .sum::<usize>()
            .saturating_sub(1)
    };
    let mut w: Vec<Option<usize>> = natural.iter().copied().map(Some).collect();
    if total(&w) <= width {
        return None;
    }
    for f in flex {
        if let Some(c) = w.get_mut(*f) {
            *c = c.map(|n| n.min(FLEX_MIN));
        }
    }
    for d in drop {
        if total(&w) <= width {
            break;
        }
        if let Some(c) = w.get_mut(*d) {
            *c = None;
        }
    }
    // The flex columns take what the others leave, the last named first
    // (it is cut after the ones before it).
    let others: usize = w
        .iter()
        .enumerate()
        .filter(|(i, _)| !flex.contains(i))
        .filter_map(|(_, c)| c.map(|c| c + 3))
        .sum();
    // others + the flex columns' (width + 3), less 1, within width.
    let mut room = (width + 1).saturating_sub(others);
    let shown_flex: Vec<usize> = flex
        .iter()
        .copied()
        .filter(|f| w.get(*f).is_some_and(Option::is_some))
        .collect();
    // Each flex column keeps at least its narrowest for now.
    let floor = |f: usize| FLEX_MIN.min(natural.get(f).copied().unwrap_or(0));
    for (k, f) in shown_flex.iter().enumerate().rev() {
        let later_floors: usize = shown_flex.iter().take(k).map(|g| floor(*g) + 3).sum();
        let n = natural.get(*f).copied().unwrap_or(0);
        let give = room
            .saturating_sub(later_floors + 3)
            .clamp(floor(*f), n.max(floor(*f)));
        if let Some(c) = w.get_mut(*f) {
            *c = Some(give);
        }
        room = room.saturating_sub(give + 3);
    }
    // Then the widest column that may be cut loses one character at a
    // time, down to COLUMN_MIN.
    while total(&w) > width {
        let widest = w
            .iter()
            .enumerate()
            .filter(|(i, c)| !keep.contains(i) && c.is_some_and(|c| c > COLUMN_MIN))
            .max_by_key(|(i, c)| (c.unwrap_or(0), usize::MAX - i))
            .map(|(i, _)| i);
        match widest.and_then(|i| w.get_mut(i)) {
            Some(Some(c)) => *c -= 1,
            _ => break,
        }
    }
    // What still does not fit: the rightmost column shown is left out
    // (the first, what the row is, stays) and the rest fitted again from
    // their natural widths, so a column is never cut for one that then
    // goes: never a kept value cut.
    if total(&w) > width {
        let last = w.iter().rposition(Option::is_some).filter(|i| *i > 0);
        if let Some(i) = last {
            let mut fewer = natural.to_vec();
            let mut gone: Vec<usize> = w
                .iter()
                .enumerate()
                .filter(|(_, c)| c.is_none())
                .map(|(j, _)| j)
                .collect();
            gone.push(i);
            // A column left out is fitted as one of no width that the
            // drop list leaves out first.
            for j in &gone {
                if let Some(c) = fewer.get_mut(*j) {
                    *c = 0;
                }
            }
            let mut order = gone.clone();
            order.extend(drop.iter().filter(|d| !gone.contains(d)));
            let mut refit = fit(&fewer, width, flex, keep, &order)
                .unwrap_or_else(|| fewer.iter().copied().map(Some).collect());
            for j in gone {
                if let Some(c) = refit.get_mut(j) {
                    *c = None;
                }
            }
            return Some(refit);
        }
    }
    Some(w)
}

/// The narrowest any column is cut to.
const COLUMN_MIN: usize = 4;

/// The narrowest a flex column is cut to before the others are cut too.
const FLEX_MIN: usize = 12;

/// A run's status, coloured by what it asks of an operator: done, broken,
/// waiting for someone (`waiting`: on a deferral), or running. A newer
/// agent's reason is left plain.
pub fn status_cell(text: String, status: &Listed, waiting: bool) -> Cell {
    use journal::fold::Status as S;
    use journal::record::Reason as R;
    let color = match status {
        _ if waiting => Some(Color::Yellow),
        Listed::Run(S::Terminal(R::Completed)) => Some(Color::Green),
        Listed::Corrupt | Listed::Run(S::Terminal(R::Error)) => Some(Color::Red),
        Listed::Run(S::Terminal(R::Suspended | R::Budget | R::MaxIterations)) => {
            Some(Color::Yellow)
        }
        Listed::Run(S::Open) => Some(Color::Cyan),
        // A newer agent's reason, or a reason or status a newer library
        // names: plain.
        _ => None,
    };
    paint(text, color)
}

/// A severity (`error`, `warning`, `info`), coloured as diagnostics are.
pub fn severity_cell(text: &str) -> Cell {
    let color = match text {
        "error" => Some(Color::Red),
        "warning" => Some(Color::Yellow),
        "info" => Some(Color::Blue),
        _ => None,
    };
    paint(text.to_owned(), color)
}

/// A cell saying whether something worked: green, or red.
pub fn outcome_cell(text: String, ok: bool) -> Cell {
    paint(text, Some(if ok { Color::Green } else { Color::Red }))
}

fn paint(text: String, color: Option<Color>) -> Cell {
    match color {
        Some(c) => Cell::new(text).fg(c),
        None => Cell::new(text),
    }
}

/// Text in a colour when `on`: the severity word of a verify line.
pub fn colored(text: &str, color: Color, on: bool) -> String {
    if !on {
        return text.to_owned();
    }
    let code = match color {
        Color::Red => 31,
        Color::Green => 32,
        Color::Yellow => 33,
        Color::Blue => 34,
        Color::Magenta => 35,
        Color::Cyan => 36,
        _ => 39,
    };
    format!("\u{1b}[{code}m{text}\u{1b}[0m")
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
        out.write_all(json_safe(&text).as_bytes())?;
        return out.write_all(b"\n");
    };
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    w.write_all(json_safe(before).as_bytes())?;
    for (i, row) in rows.iter().enumerate() {
        w.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        let one = serde_json::to_string_pretty(&sorted(row)?)?;
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
    fn ids_and_figures_are_left_out_not_cut() {
        // RUN kept, a flex prompt, a figure column: at 30 columns the
        // prompt is cut to its narrowest, then columns go from the right.
        let w = fit(&[20, 40, 10], 30, &[1], &[0], &[]).unwrap();
        assert_eq!(w[0], Some(20), "the id is whole");
        assert!(w.iter().flatten().map(|c| c + 3).sum::<usize>() - 1 <= 30);
        // A kept column too wide for any fit goes, and the others are
        // fitted again whole, not left cut for it.
        let w = fit(&[27, 7, 30, 80], 80, &[], &[0, 3], &[]).unwrap();
        assert_eq!(w, [Some(27), Some(7), Some(30), None]);
        // Two flex columns: the first is cut before the second.
        let w = fit(&[10, 40, 40], 60, &[2, 1], &[0], &[]).unwrap();
        assert_eq!(w, [Some(10), Some(30), Some(12)]);
    }

    #[test]
    fn figures_are_cells_that_start_with_a_digit() {
        assert!(figures(
            ["1,234", "-", "", "2026-11-30T08:00:00Z", "1.2 KiB"].into_iter()
        ));
        assert!(!figures(["1", "claude"].into_iter()));
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
