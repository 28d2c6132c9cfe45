//! `inbox [filters] [--older-than DUR]`: one queue of what waits on a
//! person across the store (issue 26): every open deferral and every call
//! a run was suspended for, oldest first, each with the command that acts
//! on it. Which call waits on what is the library's (`journal::ops::inbox`),
//! which reads only the runs whose summary says they wait; this command
//! selects the runs as `ls` does and renders.

use crate::cli::InboxArgs;
use crate::error::CmdResult;
use crate::filter::{excluded_note, Selected, Unreadable};
use crate::hint;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{cell, json_pretty, print_table, sanitize, table, time_cell, Format};
use journal::ops::inbox::{inbox, Item, Waits};
use journal::time::Time;
use serde::Serialize;
use std::io::Write;

/// One waiting call as printed for scripts (`schemas/output/inbox.json`).
#[derive(Serialize)]
struct Waiting {
    run: String,
    tool_use_id: String,
    tool: String,
    /// `answer` or `approval`.
    waits: Waits,
    note: String,
    handle: String,
    /// As journaled (or the store's time); null when unknown.
    since: Option<Time>,
    /// Whole seconds waited so far; null when `since` is.
    waited_s: Option<u64>,
    agent: Option<String>,
    caller: Option<String>,
    /// The command that acts on it, complete for pasting.
    command: hint::Cmd,
}

/// A run a person acted on that nobody has resumed (the run model's
/// `ready`): nothing waits on a person any more, and the resume goes on.
#[derive(Serialize)]
struct Ready {
    run: String,
    /// Its last record's time (when the person acted).
    since: Option<Time>,
    agent: Option<String>,
    caller: Option<String>,
    /// The resume that goes on, complete for pasting.
    command: hint::Cmd,
    /// Who acted on it last, as the store's audit log says (issue 38).
    acted: Option<journal::custody::Act>,
}

#[derive(Serialize)]
struct Document {
    items: Vec<Waiting>,
    /// The runs ready to resume, oldest first.
    ready: Vec<Ready>,
    no_agent_excluded: usize,
    unreadable: Vec<Unreadable>,
}

pub fn run(g: &Invocation, a: InboxArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(g)?;
    let all = store.summaries()?;
    let total = all.len();
    let (readable, mut unreadable) = Unreadable::split(all);
    let Selected {
        runs,
        no_agent_excluded,
    } = a.filter.select(readable);
    let mut ready: Vec<Ready> = runs
        .iter()
        .filter(|s| s.state == journal::state::State::Ready)
        .map(|s| Ready {
            run: s.run_id.clone(),
            since: s.updated,
            agent: s.agent.clone(),
            caller: s.caller.clone(),
            command: hint::resume(g, &s.run_id),
            acted: None,
        })
        .collect();
    if !ready.is_empty() {
        let log = store.audit_log()?;
        for r in &mut ready {
            r.acted = journal::custody::acts(&log, &r.run).pop();
        }
    }
    ready.sort_by(|a, b| a.since.cmp(&b.since).then(a.run.cmp(&b.run)));
    let found = inbox(&store, &runs);
    unreadable.extend(
        found
            .unreadable
            .iter()
            .map(|(run, e)| Unreadable::new(run, e)),
    );
    unreadable.sort_by(|x, y| x.run_id.cmp(&y.run_id));
    let now = Time::now();
    let waited = |i: &Item| {
        i.since
            .map(|t| u64::try_from(now.nanos_since(&t) / 1_000_000_000).unwrap_or(u64::MAX))
    };
    let items: Vec<Waiting> = found
        .items
        .into_iter()
        .filter(|i| match a.older_than {
            // Waiting longer than DUR: an item of unknown age is not.
            Some(d) => i.since.is_some_and(|t| now.nanos_since(&t) > d.as_nanos()),
            None => true,
        })
        .map(|i| Waiting {
            waited_s: waited(&i),
            command: match i.waits {
                Waits::Answer => hint::answer(g, &i.run, &i.call),
                _ => hint::approve(g, &i.run, &i.call),
            },
            run: i.run,
            tool_use_id: i.call,
            tool: i.tool,
            waits: i.waits,
            note: i.note,
            handle: i.handle,
            since: i.since,
            agent: i.agent,
            caller: i.caller,
        })
        .collect();
    let code = Unreadable::exit(&unreadable);
    let doc = Document {
        items,
        ready,
        no_agent_excluded,
        unreadable,
    };
    if style.format == Format::Json {
        json_pretty(out, &doc)?;
        return Ok(code);
    }
    if doc.items.is_empty() {
        let why = match (total, a.filter.any() || a.older_than.is_some()) {
            (0, _) => "no runs".to_owned(),
            (n, true) => {
                format!("nothing waits on a person in the {n} run(s) the filters select from")
            }
            (_, false) => "nothing waits on a person".to_owned(),
        };
        writeln!(out, "{why} in {}", sanitize(&store.describe(), false))?;
    }
    if !doc.items.is_empty() {
        // A command is never cut: where the widest does not fit beside
        // the first columns, the commands go under the table, one a line
        // in the rows' order, and the table keeps the rest.
        let commands: Vec<String> = doc
            .items
            .iter()
            .map(|w| sanitize(&w.command.to_string(), false).into_owned())
            .collect();
        let widest = commands
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0);
        let beside = style.width.is_none_or(|w| widest + 24 <= usize::from(w));
        // On a narrow terminal the note is cut first, then CALLER, AGENT,
        // HANDLE, SINCE, NOTE, TOOL, CALL and RUN are left out (the
        // command names the run and the call); ids are never cut.
        let mut headers = vec![
            "WAITED", "SINCE", "RUN", "CALL", "TOOL", "WAITS", "AGENT", "CALLER", "HANDLE", "NOTE",
        ];
        if beside {
            headers.push("COMMAND");
        }
        let mut t = table(&headers)
            .flex(9)
            .keep(2)
            .keep(3)
            .keep(5)
            .keep(10)
            .drop_first(&[7, 6, 8, 1, 9, 4, 3, 2]);
        for (w, command) in doc.items.iter().zip(&commands) {
            let mut row = vec![
                w.waited_s.map_or_else(|| "-".to_owned(), human_age),
                time_cell(w.since.as_ref()),
                cell(&w.run, usize::MAX),
                cell(&w.tool_use_id, usize::MAX),
                cell(&w.tool, 30),
                match w.waits {
                    Waits::Answer => "answer".to_owned(),
                    _ => "approval".to_owned(),
                },
                cell(w.agent.as_deref().unwrap_or("-"), 24),
                cell(w.caller.as_deref().unwrap_or("-"), 24),
                cell(&w.handle, 30),
                cell(&w.note, 60),
            ];
            if beside {
                row.push(command.clone());
            }
            t.add_row(row);
        }
        print_table(out, t, style)?;
        if !beside {
            writeln!(out, "the commands, in the rows' order:")?;
            for c in &commands {
                writeln!(out, "  {c}")?;
            }
        }
        if doc.items.iter().any(|w| w.waits == Waits::Answer) {
            writeln!(out, "answer: {}", hint::Need::Answer.says())?;
        }
    }
    // What a person did and nobody has taken up yet: each run's resume,
    // a command alone on its line.
    if !doc.ready.is_empty() {
        writeln!(
            out,
            "{} run(s) ready to resume (a person answered or approved what they waited on; nobody has resumed them yet):",
            doc.ready.len()
        )?;
        for r in &doc.ready {
            writeln!(out, "  {}", sanitize(&r.command.to_string(), false))?;
            if let Some(a) = &r.acted {
                writeln!(out, "    ({})", sanitize(&a.sentence(), false))?;
            }
        }
    }
    if no_agent_excluded > 0 {
        writeln!(out, "{}", excluded_note(no_agent_excluded))?;
    }
    if let Some(note) = Unreadable::note(&doc.unreadable, "listed") {
        writeln!(out, "{note}")?;
    }
    Ok(code)
}

/// A wait as people say it: `45s`, `12m`, `3h5m`, `2d4h`.
fn human_age(s: u64) -> String {
    let (d, h, m) = (s / 86_400, s % 86_400 / 3_600, s % 3_600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h{m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d{h}h"),
    }
}
