//! Laying out one block for the screen: folded to one row, or its label
//! and body wrapped to the text width by display width (wide characters
//! take two columns). Only the blocks on screen are ever laid out.

use crate::transcript::shown::Shown;
use unicode_width::UnicodeWidthChar;

/// One screen row of a block: the label's part (drawn in the label's
/// style) and the rest. Two strings, so no byte offset can fall inside a
/// character.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    pub rest: String,
}

#[cfg(test)]
impl Row {
    /// The whole row as drawn.
    pub fn text(&self) -> String {
        format!("{}{}", self.label, self.rest)
    }
}

/// Columns the gutter takes: a cursor mark, the seq, the iteration.
pub const GUTTER: usize = 13;

/// The rows of `s` at `width` columns of text.
pub fn rows(s: &Shown, folded: bool, width: usize) -> Vec<Row> {
    let width = width.max(8);
    if folded {
        let mut rest = String::new();
        let first = match &s.preview {
            Some(p) => Some(p.trim()),
            None => s.body.iter().map(|l| l.trim()).find(|l| !l.is_empty()),
        };
        if let Some(first) = first {
            rest.push_str("  ");
            rest.push_str(first);
        }
        let tail = match s.body.len() {
            0 => String::new(),
            1 => "  (1 line, z opens)".to_owned(),
            n => format!("  ({n} lines, z opens)"),
        };
        let (label, mut rest) =
            fit_two(&s.label, &rest, width.saturating_sub(display_width(&tail)));
        rest.push_str(&tail);
        return vec![Row { label, rest }];
    }
    let mut out: Vec<Row> = wrap(&s.label, width)
        .into_iter()
        .map(|label| Row {
            label,
            rest: String::new(),
        })
        .collect();
    for line in &s.body {
        for piece in wrap(line, width.saturating_sub(2)) {
            out.push(Row {
                label: String::new(),
                rest: format!("  {piece}"),
            });
        }
    }
    out
}

/// Which row of the open block holds body line `k` (the label's rows
/// come first).
pub fn row_of_line(s: &Shown, k: usize, width: usize) -> usize {
    let width = width.max(8);
    let label = wrap(&s.label, width).len();
    label
        + s.body
            .iter()
            .take(k)
            .map(|l| wrap(l, width.saturating_sub(2)).len())
            .sum::<usize>()
}

pub fn display_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// The longest prefix of `s` at most `width` columns wide, with `…` when
/// something was cut.
pub fn fit(s: &str, width: usize) -> String {
    fit_two(s, "", width).0
}

/// `label` then `rest` fitted together into `width` columns as [`fit`]
/// does, kept apart: the `…` goes to the part that was cut.
pub fn fit_two(label: &str, rest: &str, width: usize) -> (String, String) {
    if display_width(label) + display_width(rest) <= width {
        return (label.to_owned(), rest.to_owned());
    }
    let (mut a, mut b) = (String::new(), String::new());
    let mut used = 0;
    let mut in_label = true;
    for (part, c) in label
        .chars()
        .map(|c| (true, c))
        .chain(rest.chars().map(|c| (false, c)))
    {
        let w = c.width().unwrap_or(0);
        in_label = part;
        if used + w + 1 > width {
            break;
        }
        if part {
            a.push(c);
        } else {
            b.push(c);
        }
        used += w;
    }
    if in_label {
        a.push('…');
    } else {
        b.push('…');
    }
    (a, b)
}

/// `s` cut into pieces of at most `width` columns (at least one piece).
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        cur.push(c);
        used += w;
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(body: &[&str]) -> Shown {
        Shown::new(
            "[tool_result toolu_1]".into(),
            body.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[test]
    fn a_folded_block_is_one_row_naming_its_size() {
        let r = rows(&block(&["", "first words", "more"]), true, 60);
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[0].text(),
            "[tool_result toolu_1]  first words  (3 lines, z opens)"
        );
        assert_eq!(r[0].label, "[tool_result toolu_1]");
        let narrow = rows(&block(&["a long line of output to cut"]), true, 30);
        assert!(display_width(&narrow[0].text()) <= 30, "{:?}", narrow);
    }

    #[test]
    fn an_open_block_wraps_by_display_width() {
        let r = rows(&block(&["日本語日本語", "abcdefghij"]), false, 8);
        let texts: Vec<String> = r.iter().map(Row::text).collect();
        assert_eq!(
            texts,
            [
                "[tool_re",
                "sult too",
                "lu_1]",
                "  日本語",
                "  日本語",
                "  abcdef",
                "  ghij"
            ]
        );
        assert!(r.iter().all(|r| display_width(&r.text()) <= 8));
        assert_eq!(
            row_of_line(&block(&["日本語日本語", "abcdefghij"]), 1, 8),
            5
        );
    }
}
