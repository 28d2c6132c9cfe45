//! A tool's output as a person reads it (issue 27 section 6, review c-13):
//! exec's JSON result (`{"stdout": ..., "stderr": ..., "exit_status": N}`,
//! the runner's and the agent's) is shown as its text, one output line per
//! body line, its exit status in the label, and its first line of text as
//! the folded preview, rather than one escaped JSON string under a `{`.
//! Any other JSON document is indented (folded: its start on one line);
//! anything else is shown as it is.
//! Every piece is neutralised (`block::lines`): output is untrusted.

use super::json;
use super::shown::lines;
use crate::output::{cell, sanitize};
use serde_json::{Map, Value};

/// A tool's output, ready for its block.
#[derive(Debug, Default, PartialEq)]
pub struct Output {
    /// Words for the label: `exit 1`, `signal 9`, `timed out`.
    pub status: Vec<String>,
    pub body: Vec<String>,
    /// The folded row's preview when the body's first line is not the
    /// best one (a `stderr:` heading, an indented document's `{`).
    pub preview: Option<String>,
}

/// The keys of exec's result that are shown as the output itself or in the
/// label; any other key is listed after the output.
const EXEC_KEYS: [&str; 6] = [
    "stdout",
    "stderr",
    "exit_status",
    "exit_code",
    "signal",
    "timed_out",
];

/// `content` as shown: exec's result as text, other JSON indented, the
/// rest as its lines.
pub fn output(content: &str) -> Output {
    let t = content.trim_start();
    if t.starts_with('{') {
        if let Some(out) = exec(content) {
            return out;
        }
    }
    if t.starts_with('{') || t.starts_with('[') {
        if let Some(p) = json::pretty(content) {
            let body = lines(&p);
            return Output {
                preview: Some(one_line(&body)),
                body,
                status: Vec::new(),
            };
        }
    }
    Output {
        body: lines(content),
        ..Output::default()
    }
}

/// Exec's result: a JSON object with a string `stdout` or `stderr` (and
/// neither of them anything but a string); `None` for any other content.
fn exec(content: &str) -> Option<Output> {
    let doc: Map<String, Value> = serde_json::from_str(content).ok()?;
    let text = |k: &str| match doc.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(()),
    };
    let (stdout, stderr) = (text("stdout").ok()?, text("stderr").ok()?);
    if stdout.is_none() && stderr.is_none() {
        return None;
    }
    let mut status = Vec::new();
    for key in ["exit_status", "exit_code"] {
        if let Some(n) = doc.get(key).filter(|v| !v.is_null()) {
            status.push(format!("exit {}", scalar(n)));
            break;
        }
    }
    if let Some(n) = doc.get("signal").filter(|v| !v.is_null()) {
        status.push(format!("signal {}", scalar(n)));
    }
    if doc.get("timed_out") == Some(&Value::Bool(true)) {
        status.push("timed out".into());
    }
    let stdout = stdout.map(text_lines).unwrap_or_default();
    let stderr = stderr.map(text_lines).unwrap_or_default();
    let mut body = Vec::new();
    let mut preview = None;
    if stderr.is_empty() {
        body = stdout;
    } else {
        // Two streams (or stderr alone): each under its heading, indented,
        // so a reader never takes a line of one for the other.
        preview = stdout
            .iter()
            .chain(&stderr)
            .find(|l| !l.trim().is_empty())
            .cloned();
        for (name, stream) in [("stdout", stdout), ("stderr", stderr)] {
            if stream.is_empty() {
                continue;
            }
            body.push(format!("{name}:"));
            body.extend(stream.into_iter().map(|l| format!("  {l}")));
        }
    }
    if body.is_empty() {
        body.push("(no output)".into());
    }
    for (k, v) in &doc {
        if !EXEC_KEYS.contains(&k.as_str()) {
            body.push(format!("{}: {}", sanitize(k, false), scalar(v)));
        }
    }
    Some(Output {
        status,
        body,
        preview,
    })
}

/// The start of an indented document on one line (`{ "messages": 10 }`),
/// for a folded row: more than `{`, and never longer than a row needs.
fn one_line(body: &[String]) -> String {
    let mut out = String::new();
    for l in body {
        if out.len() > 400 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(l.trim());
    }
    out
}

/// A stream's lines, without the empty line after its final newline; none
/// for an empty stream.
fn text_lines(s: &str) -> Vec<String> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    if s.is_empty() {
        return Vec::new();
    }
    lines(s)
}

/// A JSON value on one line: a string as its text, anything else as JSON,
/// neutralised and cut.
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => cell(s, 200),
        v => cell(&v.to_string(), 200),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runner's exec result (journal/src/runner/tools.rs) as it
    /// journals it, Go's escapes and all.
    const RUNNER: &str =
        r#"{"stdout":"Filesystem      Size\n/dev/vda \u003e 252G\n","stderr":"","exit_status":0}"#;

    #[test]
    fn exec_output_is_its_lines_with_the_exit_status_in_the_label() {
        let o = output(RUNNER);
        assert_eq!(o.status, ["exit 0"]);
        assert_eq!(o.body, ["Filesystem      Size", "/dev/vda > 252G"]);
        assert_eq!(o.preview, None);
    }

    #[test]
    fn stderr_comes_under_its_heading_and_the_preview_is_the_first_text() {
        let o = output(
            r#"{"stdout":"","stderr":"sh: nats: not found\n","exit_status":127,"timed_out":false}"#,
        );
        assert_eq!(o.status, ["exit 127"]);
        assert_eq!(o.body, ["stderr:", "  sh: nats: not found"]);
        assert_eq!(o.preview.as_deref(), Some("sh: nats: not found"));
        let o = output(r#"{"stdout":"a\nb","stderr":"warn\n","signal":9,"timed_out":true}"#);
        assert_eq!(o.status, ["signal 9", "timed out"]);
        assert_eq!(o.body, ["stdout:", "  a", "  b", "stderr:", "  warn"]);
        assert_eq!(o.preview.as_deref(), Some("a"));
    }

    /// The agent's generation names the status `exit_code` and may carry
    /// keys of its own: they are listed after the output (in name order),
    /// not lost.
    #[test]
    fn the_agents_shape_and_unknown_keys() {
        let o = output(r#"{"exit_code":2,"stdout":"x\n","truncated":true,"note":"cut\u001b[2J"}"#);
        assert_eq!(o.status, ["exit 2"]);
        assert_eq!(o.body, ["x", "note: cut\\u{1b}[2J", "truncated: true"]);
        let o = output(r#"{"stdout":"","stderr":""}"#);
        assert_eq!(o.body, ["(no output)"]);
        assert!(o.status.is_empty());
    }

    #[test]
    fn json_without_stdout_and_text_that_is_not_json_stay_as_they_were() {
        let o = output(r#"{"messages":10,"stdout":5}"#);
        assert_eq!(o.body, ["{", "  \"messages\": 10,", "  \"stdout\": 5", "}"]);
        assert!(o.status.is_empty());
        // Folded, the document on one line rather than its `{`.
        assert_eq!(
            o.preview.as_deref(),
            Some(r#"{ "messages": 10, "stdout": 5 }"#)
        );
        let o = output(r#"{"messages":10}"#);
        assert_eq!(o.body, ["{", "  \"messages\": 10", "}"]);
        let o = output("ORDERS\n\tEVENTS");
        assert_eq!(o.body, ["ORDERS", "    EVENTS"]);
        assert_eq!(o.preview, None);
        let o = output("{ not json");
        assert_eq!(o.body, ["{ not json"]);
    }

    /// Escape sequences and other controls in the output are made visible,
    /// never passed on; a carriage return (a progress bar) too.
    #[test]
    fn controls_in_output_are_neutralised() {
        let raw = serde_json::json!({
            "stdout": "MARK \u{1b}]2;TITLE\u{7}\u{1b}[31mRED\u{1b}[0m\r50%\u{9b}5m\u{202e}x",
            "stderr": "",
            "exit_status": 1,
        })
        .to_string();
        let o = output(&raw);
        assert_eq!(
            o.body,
            ["MARK \\u{1b}]2;TITLE\\u{7}\\u{1b}[31mRED\\u{1b}[0m\\r50%\\u{9b}5m\\u{202e}x"]
        );
        for l in &o.body {
            assert!(!l.chars().any(crate::output::is_dangerous), "{l:?}");
        }
    }

    /// Far past the runner's cap (64 KiB a stream): every line is kept,
    /// one body line each, and a single huge line stays one line.
    #[test]
    fn a_huge_output_is_every_line() {
        let stdout: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        let raw =
            serde_json::json!({"stdout": stdout, "stderr": "x".repeat(1 << 20), "exit_status": 0})
                .to_string();
        let o = output(&raw);
        assert_eq!(o.body.len(), 200_000 + 3);
        assert_eq!(o.body[200_000].as_str(), "  line 199999");
        assert_eq!(o.body[200_002].len(), 2 + (1 << 20));
        assert_eq!(o.preview.as_deref(), Some("line 0"));
    }
}
