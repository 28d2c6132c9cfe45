//! Tables as every command prints them: fitted to the terminal, never
//! cutting the action column or a short word, and in a pipe one rule
//! (tab-separated fields, plain integers, the lines under a table on
//! stderr).

use super::*;

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
    /// Into a pipe, tab-separated fields (see [`print_table`]); a table
    /// inside a report (`show`'s sections, `diff`, `migrate`) stays
    /// aligned.
    fields: bool,
    /// The column of commands to paste: never cut and never left out;
    /// where it does not fit beside the others, its commands go under the
    /// table, one a line, in the rows' order.
    action: Option<usize>,
    /// Said under the table when a flex column was cut to fit (how to see
    /// it whole: `ls`'s `--columns`).
    when_cut: Option<String>,
    /// Flex columns the droppable columns are left out for, in their
    /// order, until these stand whole (`ls --status error`'s MESSAGE).
    whole: Vec<usize>,
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
    /// Into a pipe, keep the aligned table: a table that is one part of
    /// a report of several (`show`'s sections, `diff`, `migrate`,
    /// `validate`), not a listing a program reads.
    pub fn aligned_in_pipe(mut self) -> Self {
        self.fields = false;
        self
    }
    /// Leave the droppable columns out, in their order, until this flex
    /// column stands whole; cut it only when that is not enough.
    pub fn whole(mut self, col: usize) -> Self {
        self.whole.push(col);
        self
    }
    /// Say `line` under the table when a flex column was cut to fit.
    pub fn when_cut(mut self, line: String) -> Self {
        self.when_cut = Some(line);
        self
    }
    /// This column holds the commands to paste (`verify`'s FIX,
    /// `inbox`'s COMMAND): see [`Tab::action`]'s field.
    pub fn action(mut self, col: usize) -> Self {
        self.action = Some(col);
        self.keep.push(col);
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
        fields: true,
        action: None,
        when_cut: None,
        whole: Vec::new(),
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
/// Into a pipe (no width: not a terminal and no `COLUMNS`) and without
/// colour (`--color always` is for a pager), a listing is for a program
/// (every table but one built with [`Tab::aligned_in_pipe`]): a header line and one line per
/// row, the cells separated by a tab, every value whole, no rule line and
/// no padding; an empty cell reads `-`, and a tab or newline in a value
/// reads `\t` or `\n`, so each column is one tab-separated field. Its
/// figures are plain integers ([`Style::count`], [`Style::size`]) and the
/// lines under it go to standard error ([`Style::footnote`]).
///
/// Otherwise the table is aligned. Wider than `style.width` (a terminal,
/// or `COLUMNS`), its rows stay one line each: the flex columns are cut
/// first (to no less than `FLEX_MIN`), then the droppable columns are left
/// out in their order (a line under the table names them), then the
/// widest of the others are cut in turn; the first column, a kept column,
/// a column of figures and a column of short words (`rm`, `warning`:
/// [`SHORT`] characters at most) are never cut, and if the table still does not fit, columns are
/// left out from the right (and named) instead. The action column
/// ([`Tab::action`]) is never left out: when it does not fit beside the
/// first column it goes under the table, a command a line in the rows'
/// order. Colour (statuses, severities) only with `style.color`. No line
/// ends in padding.
pub fn print_table(out: &mut dyn Write, tab: Tab, style: Style) -> io::Result<()> {
    let Tab {
        mut t,
        flex,
        mut keep,
        drop,
        fields,
        action,
        when_cut,
        whole,
    } = tab;
    let lay = Lay {
        flex: &flex,
        whole: &whole,
    };
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
    let mut under: Vec<String> = Vec::new();
    let mut cut = false;
    if let Some(width) = style.width {
        let mut natural: Vec<usize> = t
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
            let short = contents.iter().all(|c| c.chars().count() <= SHORT);
            if (short || figures(contents.iter().map(String::as_str))) && !flex.contains(&i) {
                keep.push(i);
            }
        }
        let mut fitted = fit(&natural, usize::from(width), lay, &keep, &drop);
        // The commands that do not fit beside the rest go under it.
        if let Some(a) = action {
            let shown = |f: &Option<Vec<Option<usize>>>| {
                f.as_ref()
                    .is_none_or(|w| w.get(a).is_some_and(Option::is_some))
            };
            if !shown(&fitted) {
                under = t
                    .row_iter()
                    .filter_map(|r| r.cell_iter().nth(a).map(|c| c.content()))
                    .filter(|c| !c.is_empty() && c != "-")
                    .collect();
                if let Some(n) = natural.get_mut(a) {
                    *n = 0;
                }
                let mut first = vec![a];
                first.extend_from_slice(&drop);
                fitted = fit(&natural, usize::from(width), lay, &keep, &first).map(|mut w| {
                    if let Some(c) = w.get_mut(a) {
                        *c = None;
                    }
                    w
                });
                if fitted.is_none() {
                    fitted = Some(
                        (0..natural.len())
                            .map(|i| natural.get(i).copied().filter(|_| i != a))
                            .collect(),
                    );
                }
            }
        }
        if let Some(fit) = fitted {
            cut = flex.iter().any(|f| {
                let shown = fit.get(*f).copied().flatten();
                shown.is_some_and(|w| natural.get(*f).is_some_and(|n| w < *n))
            });
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
                        if Some(i) != action {
                            hidden_names.extend(names.get(i).cloned());
                        }
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
    if !under.is_empty() {
        let name = action
            .and_then(|a| t.header().and_then(|h| h.cell_iter().nth(a)))
            .map(|c| c.content())
            .unwrap_or_default();
        writeln!(
            out,
            "{name} (too wide to stand beside the rows), in the rows' order:"
        )?;
        for c in &under {
            writeln!(out, "  {c}")?;
        }
    }
    if !hidden_names.is_empty() {
        let note = format!("(too narrow for {})", hidden_names.join(", "));
        let width = style.width.map_or(usize::MAX, usize::from);
        writeln!(out, "{}", truncate(&note, width))?;
    }
    if let (true, Some(line)) = (cut, when_cut) {
        let width = style.width.map_or(usize::MAX, usize::from);
        writeln!(out, "{}", truncate(&line, width))?;
    }
    Ok(())
}

/// Whether a listing goes out as tab-separated fields (see
/// [`print_table`]): into a pipe, uncoloured.
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
/// The flex columns of a table, and those of them to stand whole.
#[derive(Clone, Copy)]
struct Lay<'a> {
    flex: &'a [usize],
    whole: &'a [usize],
}

fn fit(
    natural: &[usize],
    width: usize,
    lay: Lay,
    keep: &[usize],
    drop: &[usize],
) -> Option<Vec<Option<usize>>> {
    let flex = lay.flex;
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
    // What the columns take with the ones to stand whole at full width.
    let wanted = |w: &[Option<usize>]| {
        let mut v = w.to_vec();
        for c in lay.whole {
            if let (Some(Some(x)), Some(n)) = (v.get_mut(*c), natural.get(*c)) {
                *x = *n;
            }
        }
        total(&v)
    };
    for d in drop {
        if wanted(&w) <= width {
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
            let mut refit = fit(&fewer, width, lay, keep, &order)
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

/// A column whose every cell is this short (a kind, a severity, a state)
/// is never cut: `rep…` names nothing.
const SHORT: usize = 8;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(flex: &[usize]) -> Lay<'_> {
        Lay { flex, whole: &[] }
    }

    #[test]
    fn a_column_to_stand_whole_has_the_others_left_out_for_it() {
        // RUN, a message of 30, two droppable columns of 20.
        let flex = [1];
        let l = Lay {
            flex: &flex,
            whole: &flex,
        };
        let w = fit(&[10, 30, 20, 20], 60, l, &[0], &[2, 3]).unwrap();
        assert_eq!(w, [Some(10), Some(30), None, None]);
        // Without it, the first drop that fits at the narrowest is enough.
        let w = fit(&[10, 30, 20, 20], 60, lay(&flex), &[0], &[2, 3]).unwrap();
        assert_eq!(w[2], None);
        assert!(w[1].unwrap() < 30);
    }

    #[test]
    fn ids_and_figures_are_left_out_not_cut() {
        // RUN kept, a flex prompt, a figure column: at 30 columns the
        // prompt is cut to its narrowest, then columns go from the right.
        let w = fit(&[20, 40, 10], 30, lay(&[1]), &[0], &[]).unwrap();
        assert_eq!(w[0], Some(20), "the id is whole");
        assert!(w.iter().flatten().map(|c| c + 3).sum::<usize>() - 1 <= 30);
        // A kept column too wide for any fit goes, and the others are
        // fitted again whole, not left cut for it.
        let w = fit(&[27, 7, 30, 80], 80, lay(&[]), &[0, 3], &[]).unwrap();
        assert_eq!(w, [Some(27), Some(7), Some(30), None]);
        // Two flex columns: the first is cut before the second.
        let w = fit(&[10, 40, 40], 60, lay(&[2, 1]), &[0], &[]).unwrap();
        assert_eq!(w, [Some(10), Some(30), Some(12)]);
    }

    #[test]
    fn figures_are_cells_that_start_with_a_digit() {
        assert!(figures(
            ["1,234", "-", "", "2026-11-30T08:00:00Z", "1.2 KiB"].into_iter()
        ));
        assert!(!figures(["1", "claude"].into_iter()));
    }
}
