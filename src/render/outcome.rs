//! How a `run` or `resume` ended and how to go on, and the runner's events
//! on stderr while it works.

use crate::error::{CmdResult, Failure};
use crate::output::{json_pretty, sanitize, Style};
use journal::runner::{Event, Outcome};
use std::io::{IsTerminal, Write};
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
    if style.json() {
        json_pretty(
            out,
            &serde_json::json!({
                "run": o.run,
                "terminal": {"reason": o.terminal.reason, "message": Some(&o.terminal.message).filter(|m| !m.is_empty())},
                "waiting_on": o.waiting_on,
                "last_seq": o.last_seq,
                "next": next,
            }),
        )
        .map_err(Failure::from)?;
    } else {
        writeln!(out, "run {}", o.run)?;
        let msg = if o.terminal.message.is_empty() {
            String::new()
        } else {
            format!(": {}", sanitize(&o.terminal.message, false))
        };
        writeln!(
            out,
            "  ended: {}{msg} (seq {})",
            o.terminal.reason, o.last_seq
        )?;
        for d in &o.waiting_on {
            writeln!(
                out,
                "  waiting on {} ({}){}{}",
                sanitize(&d.tool_use_id, false),
                sanitize(&d.tool_name, false),
                if d.note.is_empty() {
                    String::new()
                } else {
                    format!(" note: {}", sanitize(&d.note, false))
                },
                if d.handle.is_empty() {
                    String::new()
                } else {
                    format!(" handle: {}", sanitize(&d.handle, false))
                },
            )?;
        }
        writeln!(out, "  next: {next}")?;
    }
    Ok(match o.terminal.reason.as_str() {
        "completed" | "suspended" => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}
