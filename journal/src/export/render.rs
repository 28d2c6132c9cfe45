//! The two layouts of a [`Doc`]: Markdown for a ticket and one HTML file.
//! Both fold thinking and tool input and output in `<details>`. Every
//! journal text is escaped before it is placed: in HTML nothing from the
//! journal becomes markup; in Markdown bodies sit in a fence longer than
//! any backtick run they hold, and labels are HTML-escaped and their
//! Markdown punctuation backslashed. In both, control characters (escape
//! sequences a terminal would run when the document is printed) and bidi
//! overrides are made visible as `\u{..}`, as `fisk-admin` shows them;
//! newlines and tabs are kept.

use super::{Doc, Section};
use crate::shell::is_dangerous;
use std::fmt::Write;

/// Push `c`, or its visible `\u{..}` form when it is dangerous (newlines
/// and tabs kept).
fn push_visible(out: &mut String, c: char) {
    if is_dangerous(c) && c != '\n' && c != '\t' {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    } else {
        out.push(c);
    }
}

/// `s` with its dangerous characters visible.
fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_visible(&mut out, c);
    }
    out
}

/// `s` with `&`, `<`, `>`, `"` and `'` as character references, its
/// dangerous characters visible.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => push_visible(&mut out, c),
        }
    }
    out
}

/// An escaped label for a Markdown heading or table cell: its Markdown
/// punctuation backslashed so that it stays text.
fn md_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `seq N · iteration I · label`, the label escaped (and then `md` for a
/// Markdown heading).
fn heading(s: &Section, md: fn(&str) -> String) -> String {
    let mut h = format!("seq {}", s.seq);
    if let Some(i) = s.iteration {
        let _ = write!(h, " · iteration {i}");
    }
    let _ = write!(h, " · {}", md(&escape(&s.label)));
    h
}

/// A fence longer than any run of backticks in `body`.
fn fence(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// The document as Markdown.
pub fn markdown(d: &Doc) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Run {}\n", md_inline(&escape(&d.run)));
    o.push_str("| figure | value |\n|---|---|\n");
    for (k, v) in &d.figures {
        let _ = writeln!(o, "| {} | {} |", escape(k), md_inline(&escape(v)));
    }
    o.push_str("\n## Transcript\n");
    for s in &d.sections {
        let body = if s.body.is_empty() {
            String::new()
        } else {
            let body = visible(&s.body);
            let f = fence(&body);
            let nl = if body.ends_with('\n') { "" } else { "\n" };
            format!("{f}text\n{body}{nl}{f}\n")
        };
        if s.folded {
            let _ = write!(
                o,
                "\n<details><summary>{}</summary>\n\n{body}\n</details>\n",
                heading(s, str::to_owned)
            );
        } else {
            let _ = writeln!(o, "\n### {}\n", heading(s, md_inline));
            o.push_str(&body);
        }
    }
    o
}

const STYLE: &str = "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}\
pre{white-space:pre-wrap;word-wrap:break-word;background:#f4f4f4;padding:.5em}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}\
details{margin:.5em 0}summary{cursor:pointer;font-weight:bold}h3{font-size:1em}";

/// The document as one self-contained HTML file: inline CSS, no script,
/// no external resource.
pub fn html(d: &Doc) -> String {
    let run = escape(&d.run);
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Run {run}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>Run {run}</h1>\n<table>\n"
    );
    for (k, v) in &d.figures {
        let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    o.push_str("</table>\n<h2>Transcript</h2>\n");
    for s in &d.sections {
        let body = if s.body.is_empty() {
            String::new()
        } else {
            format!("<pre>{}</pre>", escape(&s.body))
        };
        if s.folded {
            let _ = writeln!(
                o,
                "<details><summary>{}</summary>{body}</details>",
                heading(s, str::to_owned)
            );
        } else {
            let _ = writeln!(
                o,
                "<section><h3>{}</h3>{body}</section>",
                heading(s, str::to_owned)
            );
        }
    }
    o.push_str("</body>\n</html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(label: &str, body: &str, folded: bool) -> Doc {
        Doc {
            run: "r".into(),
            figures: vec![("status".into(), "a|b".into())],
            sections: vec![Section {
                seq: 2,
                iteration: Some(1),
                label: label.into(),
                body: body.into(),
                folded,
            }],
        }
    }

    #[test]
    fn journal_text_stays_text() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1b}[31mb\u{202e}\n"), "a\\u{1b}[31mb\\u{202e}\n");
        let h = html(&doc("<script>", "x</pre><script>\u{1b}", false));
        assert!(h.contains("<h3>seq 2 · iteration 1 · &lt;script&gt;</h3><pre>x&lt;/pre&gt;&lt;script&gt;\\u{1b}</pre>"), "{h}");
        let m = markdown(&doc("*x* <b>", "```\nend", true));
        assert!(
            m.contains("<summary>seq 2 · iteration 1 · *x* &lt;b&gt;</summary>"),
            "{m}"
        );
        assert!(m.contains("````text\n```\nend\n````\n"), "{m}");
        assert!(m.contains("| status | a\\|b |"), "{m}");
        let m = markdown(&doc("*x* #", "", false));
        assert!(m.contains("### seq 2 · iteration 1 · \\*x\\* \\#\n"), "{m}");
    }
}
