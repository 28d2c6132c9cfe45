//! How a `run` or `resume` ended and how to go on, and the runner's events
//! on stderr while it works.

use crate::error::CmdResult;
use crate::output::{json_pretty, sanitize, sorted, Format, Style};
use journal::record::Deferred;
use journal::runner::{Event, Outcome};
use serde::Serialize;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// Events go to stderr: warnings always, progress only on a terminal.
pub fn printer() -> impl FnMut(Event) {
    let progress = std::io::stderr().is_terminal();
    move |e| match e {
        Event::Warning(w) => eprintln!("fisk-admin: warning: {}", sanitize(&w, false)),
        Event::Step(s) if progress => eprintln!("  {}", sanitize(&s, false)),
        Event::Step(_) => {}
    }
}

/// The report of a run or resume (keys sorted: [`sorted`]).
#[derive(Serialize)]
struct Report<'a> {
    run: &'a str,
    terminal: Ended<'a>,
    waiting_on: &'a [Deferred],
    last_seq: u64,
    /// The command that goes on from here.
    next: String,
}

#[derive(Serialize)]
struct Ended<'a> {
    reason: &'a str,
    /// Absent from the terminal record when empty: `null` here.
    message: Option<&'a str>,
}

/// How a run or resume ended, and how to go on. Exit 0 when the run
/// completed or suspended (it can be resumed), 1 when it ended in error,
/// budget or max_iterations.
pub fn report(o: &Outcome, style: Style, out: &mut dyn Write) -> CmdResult {
    let next = match o.terminal.reason.as_str() {
        "completed" => format!("fisk-admin resume {} --prompt TEXT", o.run),
        _ if !o.waiting_on.is_empty() => format!(
            "fisk-admin answer {} TOOL_USE_ID --content TEXT, then fisk-admin resume {}",
            o.run, o.run
        ),
        _ => format!("fisk-admin resume {}", o.run),
    };
    let report = Report {
        run: &o.run,
        terminal: Ended {
            reason: &o.terminal.reason,
            message: Some(o.terminal.message.as_str()).filter(|m| !m.is_empty()),
        },
        waiting_on: &o.waiting_on,
        last_seq: o.last_seq,
        next,
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&report)?)?,
        Format::Text => render(out, &report)?,
    }
    Ok(match o.terminal.reason.as_str() {
        "completed" | "suspended" => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

fn render(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "run {}", r.run)?;
    let msg = match r.terminal.message {
        Some(m) => format!(": {}", sanitize(m, false)),
        None => String::new(),
    };
    writeln!(
        out,
        "  ended: {}{msg} (seq {})",
        r.terminal.reason, r.last_seq
    )?;
    for d in r.waiting_on {
        let labelled = |label: &str, v: &str| {
            if v.is_empty() {
                String::new()
            } else {
                format!(" {label}: {}", sanitize(v, false))
            }
        };
        writeln!(
            out,
            "  waiting on {} ({}){}{}",
            sanitize(&d.tool_use_id, false),
            sanitize(&d.tool_name, false),
            labelled("note", &d.note),
            labelled("handle", &d.handle),
        )?;
    }
    writeln!(out, "  next: {}", r.next)
}
