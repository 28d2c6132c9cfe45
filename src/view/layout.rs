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
    for (k, line) in s.body.iter().enumerate() {
        for rest in body_rows(s, k, line, width) {
            out.push(Row {
                label: String::new(),
                rest,
            });
        }
    }
    out
}

/// Body line `k` of `s` as rows of `width` columns, indented two: a
/// command to paste ([`Shown::commands`]) cut at its spaces with a shell
/// continuation ([`wrap_command`]), any other line at its spaces.
fn body_rows(s: &Shown, k: usize, line: &str, width: usize) -> Vec<String> {
    match s.commands.contains(&k) {
        true => wrap_command(&format!("  {line}"), width),
        false => wrap(line, width.saturating_sub(2))
            .into_iter()
            .map(|piece| format!("  {piece}"))
            .collect(),
    }
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
            .enumerate()
            .map(|(i, l)| body_rows(s, i, l, width).len())
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

/// `s` cut into pieces of at most `width` columns (at least one piece),
/// at a space where the row has one (the space ends the row it closes):
/// a word is broken only when it is wider than a whole row.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !cur.is_empty() {
            // Back to the last space of the row, unless the row is one
            // word (or the space leads it: the indent of a line).
            let cut = cur
                .char_indices()
                .rev()
                .find(|(i, ch)| *ch == ' ' && cur.get(..*i).is_some_and(|b| !b.trim().is_empty()))
                .map(|(i, _)| i + 1);
            let carried = match cut {
                Some(i) if c != ' ' => cur.split_off(i),
                _ => String::new(),
            };
            out.push(std::mem::take(&mut cur));
            used = display_width(&carried);
            cur = carried;
            if c == ' ' && cur.is_empty() {
                continue;
            }
        }
        cur.push(c);
        used += w;
    }
    out.push(cur);
    out
}

/// A command cut into rows of at most `width` columns at its spaces, each
/// row but the last ending in ` \\` (a shell's line continuation) and
/// the next led by two spaces: copied off the screen and pasted, the
/// rows run as the one command. A word wider than a row is cut, each
/// piece but the last ended by `\\` right after it (a shell joins them).
pub fn wrap_command(s: &str, width: usize) -> Vec<String> {
    if display_width(s) <= width {
        return vec![s.to_owned()];
    }
    let lead: String = s.chars().take_while(|c| *c == ' ').collect();
    let room = width.saturating_sub(2).max(1);
    let mut out: Vec<String> = Vec::new();
    let mut cur = lead.clone();
    for word in s.split(' ').filter(|w| !w.is_empty()) {
        let fresh = cur.trim().is_empty();
        let wanted = display_width(&cur) + usize::from(!fresh) + display_width(word);
        if !fresh && wanted > room {
            out.push(format!("{cur} \\"));
            cur = format!("{lead}  ");
        } else if !fresh {
            cur.push(' ');
        }
        // A word wider than a row (a long path): cut where it must be,
        // each piece ended by the continuation with no space before it
        // and the next at the row's start (a shell joins them into the
        // word again; the viewer prints the command whole when it leaves).
        for c in word.chars() {
            if display_width(&cur) + c.width().unwrap_or(0) + 2 > width && !cur.trim().is_empty() {
                out.push(format!("{cur}\\"));
                cur = String::new();
            }
            cur.push(c);
        }
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

    /// Issue 39, d-13: text wraps at its spaces, never inside a word
    /// (at b926494 `interest lea` / `der`), and a word wider than a row
    /// is the only thing broken.
    #[test]
    fn text_wraps_at_spaces_and_breaks_only_a_word_wider_than_a_row() {
        assert_eq!(
            wrap("the interest leader of the night", 16),
            ["the interest ", "leader of the ", "night"]
        );
        assert_eq!(wrap("abcdefghijkl xy", 5), ["abcde", "fghij", "kl xy"]);
        assert_eq!(
            wrap("  indented words here", 10),
            ["  indented", "words here"]
        );
        for w in 4..30 {
            for piece in wrap("the interest leader of the night", w) {
                assert!(display_width(&piece) <= w, "{w}: {piece:?}");
            }
            if w < 8 {
                continue; // "interest" is wider: broken, as it must be
            }
            let pieces = wrap("the interest leader of the night", w);
            let words: Vec<&str> = pieces.iter().flat_map(|p| p.split_whitespace()).collect();
            assert_eq!(
                words.join(" "),
                "the interest leader of the night",
                "{w}: {pieces:?}"
            );
        }
    }

    /// A command is cut at its spaces with a shell continuation, so that
    /// the rows, copied off the screen and pasted, run as the one command.
    #[test]
    fn a_command_wraps_with_a_shell_continuation_never_inside_a_word() {
        let cmd = "  fisk-admin --state-dir night answer r-425b0c1e9a7f3d21 toolu_ex_2";
        let rows = wrap_command(cmd, 40);
        assert!(rows.len() > 1, "{rows:?}");
        for r in rows.iter().take(rows.len() - 1) {
            assert!(r.ends_with(" \\") && display_width(r) <= 40, "{rows:?}");
        }
        // What a shell reads: the continuations joined back.
        let read: Vec<&str> = rows
            .iter()
            .flat_map(|r| r.trim_end_matches('\\').split_whitespace())
            .collect();
        assert_eq!(read, cmd.split_whitespace().collect::<Vec<_>>());
        assert_eq!(wrap_command("  short one", 40), ["  short one"]);
        let s = Shown::new(
            "[waiting on t tool]".into(),
            vec!["answer it with:".into(), cmd.into()],
        )
        .command(1);
        let texts: Vec<String> = rows_of(&s, 44);
        assert!(texts.iter().any(|t| t.ends_with(" \\")), "{texts:?}");
        let words: Vec<&str> = texts
            .iter()
            .skip(2)
            .flat_map(|t| t.trim_end_matches('\\').split_whitespace())
            .collect();
        assert_eq!(
            words,
            cmd.split_whitespace().collect::<Vec<_>>(),
            "{texts:?}"
        );
    }

    fn rows_of(s: &Shown, width: usize) -> Vec<String> {
        rows(s, false, width).iter().map(Row::text).collect()
    }

    #[test]
    fn an_open_block_wraps_by_display_width() {
        let r = rows(&block(&["日本語日本語", "abcdefghij"]), false, 8);
        let texts: Vec<String> = r.iter().map(Row::text).collect();
        assert_eq!(
            texts,
            [
                "[tool_re",
                "sult ",
                "toolu_1]",
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
