//! The two layouts of a [`Doc`]: Markdown for a ticket and one HTML file.
//! Both fold thinking and tool input and output in `<details>`. Every
//! journal text is escaped before it is placed: in HTML nothing from the
//! journal becomes markup; in Markdown bodies sit in a fence longer than
//! any backtick run they hold, and labels are HTML-escaped.

use super::{Doc, Section};
use std::fmt::Write;

/// `s` with `&`, `<`, `>`, `"` and `'` as character references.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `seq N · iteration I · label`, the label escaped.
fn heading(s: &Section) -> String {
    let mut h = format!("seq {}", s.seq);
    if let Some(i) = s.iteration {
        let _ = write!(h, " · iteration {i}");
    }
    let _ = write!(h, " · {}", escape(&s.label));
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
    let _ = writeln!(o, "# Run {}\n", escape(&d.run).replace('`', "\\`"));
    o.push_str("| figure | value |\n|---|---|\n");
    for (k, v) in &d.figures {
        let _ = writeln!(o, "| {} | {} |", escape(k), escape(v).replace('|', "\\|"));
    }
    o.push_str("\n## Transcript\n");
    for s in &d.sections {
        let body = if s.body.is_empty() {
            String::new()
        } else {
            let f = fence(&s.body);
            let nl = if s.body.ends_with('\n') { "" } else { "\n" };
            format!("{f}text\n{}{nl}{f}\n", s.body)
        };
        if s.folded {
            let _ = write!(
                o,
                "\n<details><summary>{}</summary>\n\n{body}\n</details>\n",
                heading(s)
            );
        } else {
            let _ = writeln!(o, "\n### {}\n", heading(s).replace('#', "\\#"));
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
                heading(s)
            );
        } else {
            let _ = writeln!(o, "<section><h3>{}</h3>{body}</section>", heading(s));
        }
    }
    o.push_str("</body>\n</html>\n");
    o
}
