//! `query RUN [filters]`: a run's tool calls, each paired with its answer
//! (SPEC 13). JSON is the agent's document (`{run_id, calls}`, `calls` `[]`
//! when none); text is one block per call, its input and answer decoded
//! and indented.

use crate::cli::QueryArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::output::{json_pretty, sanitize, Format};
use journal::calls::{self, Call, Filter};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// The agent's `session query` document.
#[derive(Serialize)]
struct Document<'a> {
    run_id: &'a str,
    calls: Vec<Call>,
}

pub fn run(g: &Invocation, mut a: QueryArgs, out: &mut dyn Write) -> CmdResult {
    a.target.settle(g)?;
    let style = g.style;
    let read = crate::runs::Read::target(g, &a.target)?;
    let journal = read.journal();
    let filter = Filter {
        tools: a.tool,
        iteration: a.iteration,
        answered: a.results_only,
        errors: a.errors,
        input: a.input_match,
        output: a.output_match,
    };
    let (all, _) = calls::pair(journal.records());
    let mut selected: Vec<Call> = all.into_iter().filter(|c| filter.matches(c)).collect();
    // As the agent's query: the answer left out under --calls-only, the
    // input under --results-only.
    for c in &mut selected {
        if a.calls_only {
            c.answer = None;
            c.answer_time = None;
        }
        if a.results_only {
            c.input = None;
        }
    }
    match style.format {
        Format::Json => json_pretty(
            out,
            &Document {
                run_id: read.run(),
                calls: selected,
            },
        )?,
        Format::Text => render(out, read.run(), &selected)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut dyn Write, run: &str, calls: &[Call]) -> io::Result<()> {
    if calls.is_empty() {
        return writeln!(out, "run {}: no tool call matches", sanitize(run, false));
    }
    for (i, c) in calls.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let at = c
            .time
            .map(|t| format!(" at {}", t.to_rfc3339()))
            .unwrap_or_default();
        writeln!(
            out,
            "[iteration {}] {} {}{at}",
            c.iteration,
            sanitize(&c.tool, false),
            sanitize(&c.tool_use_id, false)
        )?;
        match &c.input {
            Some(Some(input)) => {
                writeln!(out, "  input:")?;
                indented(out, &decoded(input.get()), 4)?;
            }
            Some(None) => writeln!(out, "  input: none")?,
            None => {}
        }
        if let Some(d) = &c.deferred {
            let mut line = "  deferred".to_owned();
            if !d.note.is_empty() {
                line.push_str(&format!(": {}", sanitize(&d.note, false)));
            }
            if !d.handle.is_empty() {
                line.push_str(&format!(" (handle {})", sanitize(&d.handle, false)));
            }
            writeln!(out, "{line}")?;
        }
        match &c.answer {
            Some(r) => {
                let (kind, dispatched) = calls::result_kind(r);
                let how = match dispatched {
                    Some(true) => format!("{kind}, dispatched"),
                    Some(false) => format!("{kind}, not run"),
                    None => kind.to_owned(),
                };
                let error = if r.result.is_error { " error" } else { "" };
                let at = c
                    .answer_time
                    .map(|t| format!(" at {}", t.to_rfc3339()))
                    .unwrap_or_default();
                writeln!(out, "  answer{error} ({how}){at}:")?;
                indented(out, &decoded(&r.result.content), 4)?;
            }
            None if c.deferred.is_some() => writeln!(out, "  answer: none yet (deferred)")?,
            None => writeln!(out, "  answer: none")?,
        }
    }
    Ok(())
}

/// Text as a person reads it: JSON decoded and indented (no `\u003e`
/// escapes), anything else as it is.
fn decoded(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => {
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_owned())
        }
        _ => text.to_owned(),
    }
}

/// Every line of `text`, neutralised, indented by `n` spaces.
fn indented(out: &mut dyn Write, text: &str, n: usize) -> io::Result<()> {
    let pad = " ".repeat(n);
    for line in text.lines() {
        writeln!(out, "{pad}{}", sanitize(line, true))?;
    }
    if text.is_empty() {
        writeln!(out, "{pad}(empty)")?;
    }
    Ok(())
}
