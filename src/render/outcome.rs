//! How a `run` or `resume` ended and how to go on, and the runner's events
//! on stderr while it works.

use crate::error::CmdResult;
use crate::hint::Cmd;
use crate::output::{json_pretty, sanitize, sorted, Format, Style};
use journal::record::Deferred;
use journal::record::Reason;
use journal::runner::{Event, Gated, Outcome};
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
    needs_approval: &'a [Gated],
    last_seq: u64,
    /// The commands that go on from here, in order; none when nothing is
    /// next.
    next: Vec<Cmd>,
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
pub fn report(
    o: &Outcome,
    g: &crate::invocation::Invocation,
    agent: &std::path::Path,
    style: Style,
    out: &mut dyn Write,
) -> CmdResult {
    let g = &crate::hint::with_agent_store(g, agent);
    let resume = crate::hint::resume_with(g, &o.run, Some(agent), false);
    // Every step is a whole command with this invocation's store flags,
    // one step each (an answer is never chained into a resume: each is
    // run and read on its own). A completed run has no next step: a new
    // turn is the operator's idea, not a step.
    let next: Vec<Cmd> = match o.terminal.reason() {
        Reason::Completed => Vec::new(),
        _ => {
            let mut steps: Vec<Cmd> = o
                .needs_approval
                .iter()
                .map(|c| crate::hint::cmd(g, &["approve", &o.run, &c.tool_use_id]))
                .collect();
            steps.extend(
                o.waiting_on
                    .iter()
                    .map(|d| crate::hint::answer(g, &o.run, &d.tool_use_id)),
            );
            steps.push(resume);
            steps
        }
    };
    let report = Report {
        run: &o.run,
        terminal: Ended {
            reason: &o.terminal.reason,
            message: Some(o.terminal.message.as_str()).filter(|m| !m.is_empty()),
        },
        waiting_on: &o.waiting_on,
        needs_approval: &o.needs_approval,
        last_seq: o.last_seq,
        next,
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&report)?)?,
        Format::Text => render(out, &report)?,
    }
    Ok(match o.terminal.reason() {
        Reason::Completed | Reason::Suspended => ExitCode::SUCCESS,
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
    for c in r.needs_approval {
        writeln!(
            out,
            "  needs approval: {} ({})",
            sanitize(&c.tool_use_id, false),
            sanitize(&c.tool, false)
        )?;
    }
    for (i, step) in r.next.iter().enumerate() {
        let label = if i == 0 { "next" } else { "then" };
        writeln!(out, "{}", step.step("", label))?;
    }
    Ok(())
}
