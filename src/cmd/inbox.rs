//! `inbox [filters] [--older-than DUR]`: one queue of what waits on a
//! person across the store (issue 26): every open deferral and every call
//! a run was suspended for, oldest first, each with the command that acts
//! on it. Which call waits on what is the library's (`journal::ops::inbox`),
//! which reads only the runs whose summary says they wait; this command
//! selects the runs as `ls` does and renders.

use crate::cli::InboxArgs;
use crate::error::CmdResult;
use crate::filter::{excluded_note, Admit, Unreadable};
use crate::hint;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{
    cell, json_pretty_rows_in_order, print_table, sanitize, table, time_cell, Format,
};
use journal::ops::inbox::{inbox_of, Item, Waits};
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
    let once = |buf: &mut dyn Write| match a.openmetrics {
        true => metrics(g, &a, buf),
        false => list(g, &a, buf),
    };
    // WAITED (the first field) grows by itself: not a change.
    let whole = g.style.json() || a.openmetrics;
    crate::watch::listing(a.watch, whole, &[0], out, once)
}

/// `-o openmetrics`: the selected runs by state, the calls waiting on a
/// person and the oldest wait (`crate::metrics`).
fn metrics(g: &Invocation, a: &InboxArgs, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let (states, items) = crate::metrics::gather(&store, |s| a.filter.admits(s) == Admit::Yes)?;
    crate::metrics::write(out, &store.uri(), &states, &items, Time::now())?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// One listing.
fn list(g: &Invocation, a: &InboxArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(g)?;
    // One pass (issue 40): each run's summary is looked at as it is made,
    // and only what is printed (the ready runs) and the waiting runs' ids
    // are kept; those are then read and folded.
    let mut total = 0usize;
    let mut no_agent_excluded = 0usize;
    let mut unreadable = Vec::new();
    let mut ready = Vec::new();
    let found = inbox_of(&store, |s| {
        total += 1;
        if let Some(u) = Unreadable::of_summary(s) {
            unreadable.push(u);
            return false;
        }
        match a.filter.admits(s) {
            Admit::Yes => {}
            Admit::No => return false,
            Admit::NoAgent => {
                no_agent_excluded += 1;
                return false;
            }
        }
        if s.state == journal::state::State::Ready {
            ready.push(Ready {
                run: s.run_id.clone(),
                since: s.updated,
                agent: s.agent.clone(),
                caller: s.caller.clone(),
                command: hint::resume(g, &s.run_id),
                acted: None,
            });
        }
        true
    })?;
    if !ready.is_empty() {
        let log = store.audit_log()?;
        for r in &mut ready {
            r.acted = journal::custody::acts(&log, &r.run).pop();
        }
    }
    ready.sort_by(|a, b| a.since.cmp(&b.since).then(a.run.cmp(&b.run)));
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
    let mut items: Vec<Waiting> = found
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
    a.limit.apply(&mut items);
    let code = Unreadable::exit(&unreadable);
    if style.format == Format::Json {
        // The items written one at a time: 30,000 waiting calls are not
        // made into one text first (issue 40).
        let head = Document {
            items: Vec::new(),
            ready,
            no_agent_excluded,
            unreadable,
        };
        json_pretty_rows_in_order(out, &head, "items", &items)?;
        return Ok(code);
    }
    let doc = Document {
        items,
        ready,
        no_agent_excluded,
        unreadable,
    };
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
        // A command is never cut: where it does not fit beside the first
        // columns, the commands go under the table, one a line in the
        // rows' order, and the table keeps the rest (`Tab::action`). On a
        // narrow terminal the note is cut first, then CALLER, AGENT,
        // HANDLE, SINCE, NOTE, TOOL, CALL and RUN are left out (the
        // command names the run and the call); ids are never cut.
        let headers = [
            "WAITED", "SINCE", "RUN", "CALL", "TOOL", "WAITS", "AGENT", "CALLER", "HANDLE", "NOTE",
            "COMMAND",
        ];
        let mut t = table(&headers)
            .flex(9)
            .keep(2)
            .keep(3)
            .keep(5)
            .action(10)
            .drop_first(&[7, 6, 8, 1, 9, 4, 3, 2]);
        for w in &doc.items {
            t.add_row(vec![
                // For a program, whole seconds (as `waited_s` in JSON).
                w.waited_s.map_or_else(
                    || "-".to_owned(),
                    |n| match style.fields() {
                        true => n.to_string(),
                        false => journal::time::format_age(n),
                    },
                ),
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
                sanitize(&w.command.to_string(), false).into_owned(),
            ]);
        }
        print_table(out, t, style)?;
        if doc.items.iter().any(|w| w.waits == Waits::Answer) {
            style.footnote(out, &format!("answer: {}", hint::Need::Answer.says()))?;
        }
    }
    // Under a table for a program, the lines below go to standard error.
    let tabled = !doc.items.is_empty();
    let note = |out: &mut dyn Write, line: &str| match tabled {
        true => style.footnote(out, line),
        false => writeln!(out, "{line}"),
    };
    // What a person did and nobody has taken up yet: each run's resume,
    // a command alone on its line.
    if !doc.ready.is_empty() {
        note(
            out,
            &format!(
                "{} run(s) ready to resume (a person answered or approved what they waited on; nobody has resumed them yet):",
                doc.ready.len()
            ),
        )?;
        for r in &doc.ready {
            note(
                out,
                &format!("  {}", sanitize(&r.command.to_string(), false)),
            )?;
            if let Some(a) = &r.acted {
                note(out, &format!("    ({})", sanitize(&a.sentence(), false)))?;
            }
        }
        // What the commands still need, once for them all, as `answer:`
        // under the table (d-22: the command alone, the words apart).
        let mut needs: Vec<hint::Need> = Vec::new();
        for n in doc.ready.iter().flat_map(|r| r.command.supply.iter()) {
            if !needs.contains(n) {
                needs.push(*n);
            }
        }
        for n in needs {
            note(out, &format!("resume: {}", n.says()))?;
        }
    }
    if no_agent_excluded > 0 {
        note(out, &excluded_note(no_agent_excluded))?;
    }
    if let Some(n) = Unreadable::note(&doc.unreadable, "listed") {
        note(out, &n)?;
    }
    Ok(code)
}
