//! Drawing one frame: the rows of the blocks on screen behind a gutter
//! (cursor mark, seq, iteration), search hits highlighted, and a status
//! bar. Every string drawn was neutralised when its block was decoded.

use super::layout::{fit, Row};
use super::model::Model;
use crate::output::sanitize;
use crate::transcript::hue::Hue;
use crate::transcript::index::Kind;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use regex::Regex;

const HELP: &str = "? help  j/k move  C-d/C-u  g/G  z fold  Z all  / search  n/N  q quit";

/// The help screen (`?`): every key, one a line.
pub const KEYS: &[&str] = &[
    "Keys of the transcript viewer (any key returns to it)",
    "",
    "  j  k  Down  Up        the next / previous block",
    "  Space  PgDn  C-f      a screen down",
    "  PgUp  C-b             a screen up",
    "  C-d  C-u              half a screen down / up",
    "  g  Home               the first block",
    "  G  End                the last block (where the run stands)",
    "  <n>G  <n>g            block <n>, as the status bar counts them (50G)",
    "  <n> before j k n N C-d C-u Space PgDn PgUp: that many times (5j)",
    "  z                     fold or open the block under the cursor",
    "  Z                     open every block; again: fold thinking and tool output",
    "  /RE Enter             search: a regular expression as search --match takes",
    "                        (RE2 syntax; case matters, (?i) for any case);",
    "                        an empty one searches again",
    "  n  N                  the next / previous match (match 3/17: the third of 17)",
    "  Esc                   drop a count or the search being typed",
    "  ?  h  F1              this help",
    "  q  Esc  C-c           leave",
];

pub fn frame(f: &mut Frame, m: &mut Model, color: bool) {
    let area = f.area();
    let body = Rect {
        height: area.height.saturating_sub(1),
        ..area
    };
    if m.help {
        let lines: Vec<Line> = KEYS
            .iter()
            .map(|l| Line::from(fit(l, area.width as usize)))
            .collect();
        f.render_widget(Paragraph::new(lines), body);
        status(f, area, "help: any key returns to the transcript");
        return;
    }
    let re = m.find.as_ref().map(|s| s.re.clone());
    let mut lines: Vec<Line> = Vec::with_capacity(body.height as usize);
    let mut i = m.top;
    let mut skip = m.top_row;
    while lines.len() < body.height as usize && m.has(i) {
        let rows = m.rows(i);
        let item = m.item(i);
        let cursor = i == m.cursor;
        for (n, row) in rows.iter().enumerate().skip(skip) {
            if lines.len() >= body.height as usize {
                break;
            }
            let gutter = if n == 0 {
                let mark = if cursor { '>' } else { ' ' };
                match item {
                    Some(it) if it.kind == Kind::End => format!("{mark}{:>6} {:<4} ", "", "end"),
                    Some(it) => format!(
                        "{mark}{:>6} {:<4} ",
                        if it.seq > 0 {
                            it.seq.to_string()
                        } else {
                            "?".into()
                        },
                        it.iteration.map_or(String::new(), |n| format!("i{n}"))
                    ),
                    None => " ".repeat(super::layout::GUTTER),
                }
            } else {
                format!("{}{}", if cursor { '|' } else { ' ' }, " ".repeat(12))
            };
            let gutter_style = if cursor {
                Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::default().add_modifier(Modifier::DIM)
            };
            let kind = item.map(|it| it.kind);
            let mut spans = vec![Span::styled(gutter, gutter_style)];
            spans.extend(row_spans(row, kind, re.as_ref(), color));
            lines.push(Line::from(spans));
        }
        skip = 0;
        i += 1;
    }
    f.render_widget(Paragraph::new(lines), body);

    let text = match (&m.prompt, m.count, &m.message) {
        (Some(p), _, _) => format!("/{}", sanitize(p, false)),
        (None, Some(n), _) => format!("{}  {n}", m.position()),
        (None, None, Some(msg)) => format!("{}  {msg}", m.position()),
        (None, None, None) => format!("{}  {HELP}", m.position()),
    };
    status(f, area, &text);
}

/// The status bar, on the last row, reversed.
fn status(f: &mut Frame, area: Rect, status: &str) {
    let bar = Rect {
        y: area.y + area.height.saturating_sub(1),
        height: area.height.min(1),
        ..area
    };
    let text = fit(status, area.width as usize);
    f.render_widget(
        Paragraph::new(Line::from(Span::styled(
            text,
            Style::default().add_modifier(Modifier::REVERSED),
        ))),
        bar,
    );
}

fn label_style(kind: Option<Kind>, color: bool) -> Style {
    let s = Style::default().add_modifier(Modifier::BOLD);
    match kind.and_then(Hue::of) {
        Some(h) if color => s.fg(match h {
            Hue::Red => Color::Red,
            Hue::Green => Color::Green,
            Hue::Yellow => Color::Yellow,
            Hue::Blue => Color::Blue,
            Hue::Magenta => Color::Magenta,
            Hue::Cyan => Color::Cyan,
        }),
        _ => s,
    }
}

/// A row as spans: the label part styled, search matches reversed (each
/// part matched on its own: a match is a line, never across the two).
pub(super) fn row_spans(
    row: &Row,
    kind: Option<Kind>,
    re: Option<&Regex>,
    color: bool,
) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    for (part, style) in [
        (row.label.as_str(), label_style(kind, color)),
        (row.rest.as_str(), Style::default()),
    ] {
        if part.is_empty() {
            continue;
        }
        let mut last = 0;
        for m in re.into_iter().flat_map(|re| re.find_iter(part)) {
            if m.start() == m.end() {
                continue;
            }
            out.push(Span::styled(
                part.get(last..m.start()).unwrap_or("").to_owned(),
                style,
            ));
            out.push(Span::styled(
                m.as_str().to_owned(),
                style.add_modifier(Modifier::REVERSED),
            ));
            last = m.end();
        }
        out.push(Span::styled(
            part.get(last..).unwrap_or("").to_owned(),
            style,
        ));
    }
    out
}
