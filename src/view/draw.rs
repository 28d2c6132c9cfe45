//! Drawing one frame: the rows of the blocks on screen behind a gutter
//! (cursor mark, seq, iteration), search hits highlighted, and a status
//! bar. Every string drawn was neutralised when its block was decoded.

use super::layout::{fit, Row};
use super::model::Model;
use crate::transcript::index::Kind;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

const HELP: &str = "j/k move  PgUp/PgDn  g/G  z fold  Z all  / search  n/N  q quit";

pub fn frame(f: &mut Frame, m: &mut Model, color: bool) {
    let area = f.area();
    let body = Rect {
        height: area.height.saturating_sub(1),
        ..area
    };
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
            spans.extend(row_spans(row, kind, m.needle.as_deref(), color));
            lines.push(Line::from(spans));
        }
        skip = 0;
        i += 1;
    }
    f.render_widget(Paragraph::new(lines), body);

    let status = match (&m.prompt, &m.message) {
        (Some(p), _) => format!("/{p}"),
        (None, Some(msg)) => format!("{}  {msg}", m.position()),
        (None, None) => format!("{}  {HELP}", m.position()),
    };
    let bar = Rect {
        y: area.y + area.height.saturating_sub(1),
        height: area.height.min(1),
        ..area
    };
    let text = fit(&status, area.width as usize);
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
    if !color {
        return s;
    }
    let c = match kind {
        Some(Kind::Thinking) => Color::Magenta,
        Some(Kind::ToolUse) => Color::Cyan,
        Some(Kind::ToolResult | Kind::ResultBlock) => Color::Green,
        Some(Kind::Answer | Kind::Deferred | Kind::CallApproval | Kind::Decision) => Color::Yellow,
        Some(Kind::Terminal | Kind::Claim | Kind::End) => Color::Blue,
        Some(Kind::Unreadable | Kind::Torn | Kind::Refused) => Color::Red,
        _ => return s,
    };
    s.fg(c)
}

/// A row as spans: the label part styled, search hits reversed.
pub(super) fn row_spans(
    row: &Row,
    kind: Option<Kind>,
    needle: Option<&str>,
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
        match needle.filter(|n| !n.is_empty() && n.is_ascii()) {
            Some(n) => {
                let mut last = 0;
                for at in ascii_hits(part, n) {
                    if at < last {
                        continue;
                    }
                    out.push(Span::styled(
                        part.get(last..at).unwrap_or("").to_owned(),
                        style,
                    ));
                    let end = at + n.len();
                    out.push(Span::styled(
                        part.get(at..end).unwrap_or("").to_owned(),
                        style.add_modifier(Modifier::REVERSED),
                    ));
                    last = end;
                }
                out.push(Span::styled(
                    part.get(last..).unwrap_or("").to_owned(),
                    style,
                ));
            }
            None => out.push(Span::styled(part.to_owned(), style)),
        }
    }
    out
}

/// Byte offsets where an ASCII needle occurs, case-insensitively (on
/// character boundaries: the needle is ASCII).
fn ascii_hits(hay: &str, needle: &str) -> Vec<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    h.windows(n.len())
        .enumerate()
        .filter(|(_, w)| w.eq_ignore_ascii_case(n))
        .map(|(i, _)| i)
        .collect()
}
