//! `search [filters] [--match RE [--in WHERE]]`: find runs across the store
//! (SPEC 13). JSON is the agent's document (`{runs, no_agent_excluded}`,
//! newest first; `--since`/`--until` compare `created`, as the agent's),
//! with two keys beyond it: each run's first transcript `match` (with
//! `--in` other than `prompt`) and the runs that could not be read
//! (`unreadable`). Transcripts are read in parallel (or in one pass over a
//! stream), each matched as it is read, so memory grows with the matches,
//! not the store.

use crate::cli::{SearchArgs, SearchIn, SearchRole};
use crate::error::CmdResult;
use crate::filter::Unreadable;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{
    cell, json_pretty, print_table, sanitize, status_cell, table, time_cell, Format, Style,
};
use comfy_table::Cell;
use journal::search::{count_matches, Hit, Matches, Role, Scope, Within};
use journal::store::Listed;
use journal::store::Summary;
use journal::time::Time;
use serde::Serialize;
use std::io::{self, Write};

/// One run found (the agent's fields, then what fisk-admin adds).
#[derive(Serialize)]
struct Found {
    run_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caller: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    status: Listed,
    /// Where the run stands (beyond the agent: the run model).
    state: journal::state::State,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ended: Option<Time>,
    prompt: String,
    /// The first match inside the transcript (`--in` other than prompt,
    /// or `--role`).
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    hit: Option<Hit>,
    /// How many times the pattern matches in it (beyond the agent; with
    /// `match`): the runs are ranked by it, most first.
    #[serde(skip_serializing_if = "Option::is_none")]
    matches: Option<u64>,
    /// The command that opens the run's transcript on its first match
    /// (beyond the agent; with `match`).
    #[serde(skip_serializing_if = "Option::is_none")]
    open: Option<crate::hint::Cmd>,
    /// The calls waiting on an approval (beyond the agent; left out when
    /// none, so the agent's document is unchanged for every other run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    needs_approval: Vec<journal::runner::Gated>,
}

#[derive(Serialize)]
struct Document {
    runs: Vec<Found>,
    no_agent_excluded: usize,
    unreadable: Vec<Unreadable>,
}

pub fn run(g: &Invocation, a: SearchArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(g)?;
    let mut filter = a.filter;
    // A pattern for the transcript (or for some roles' words) is not a
    // prompt filter.
    let scope: Option<Within> = match (a.within, a.role.is_empty()) {
        (_, false) => Some(Within::roles(
            &a.role
                .iter()
                .map(|r| match r {
                    SearchRole::Prompt => Role::Prompt,
                    SearchRole::Model => Role::Model,
                    SearchRole::ToolInput => Role::ToolInput,
                    SearchRole::ToolOutput => Role::ToolOutput,
                })
                .collect::<Vec<_>>(),
        )),
        (SearchIn::Prompt, true) => None,
        (SearchIn::Text, true) => Some(Scope::Text.into()),
        (SearchIn::Tools, true) => Some(Scope::Tools.into()),
        (SearchIn::All, true) => Some(Scope::All.into()),
    };
    let pattern = match scope {
        Some(_) => filter.matches.take(),
        None => None,
    };
    let all = store.summaries()?;
    let (readable, mut unreadable) = Unreadable::split(all);
    let misses = filter.near_misses(&readable);
    let selected = filter.select(readable);
    let mut found: Vec<(Summary, Option<Matches>)> = match (scope, &pattern) {
        (Some(scope), Some(re)) => {
            // Every selected run read once (in parallel, or in one pass
            // over the stream: `Store::read_each`), matched as it arrives;
            // its count and first match are kept.
            let runs: Vec<&Summary> = selected.runs.iter().collect();
            let matched = store.read_each(&runs, |_, j| {
                j.map(|j| count_matches(j.records(), scope, re))
            });
            let mut hits = Vec::new();
            for (s, m) in selected.runs.into_iter().zip(matched) {
                match m {
                    Ok(Some(h)) => hits.push((s, Some(h))),
                    Ok(None) => {}
                    Err(e) => unreadable.push(Unreadable::new(&s.run_id, &e)),
                }
            }
            hits
        }
        _ => selected.runs.into_iter().map(|s| (s, None)).collect(),
    };
    // Most matches first (in a transcript), then newest first, as the
    // agent's; then at most --limit.
    found.sort_by(|(a, x), (b, y)| {
        let count = |m: &Option<Matches>| m.as_ref().map_or(0, |m| m.count);
        count(y)
            .cmp(&count(x))
            .then(b.updated.cmp(&a.updated))
            .then(a.run_id.cmp(&b.run_id))
    });
    a.limit.apply(&mut found);
    unreadable.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    // grep's convention: 1 when nothing matched, 2 when the store failed.
    let code = match (found.is_empty(), Unreadable::exit(&unreadable)) {
        (_, c) if c != std::process::ExitCode::SUCCESS => c,
        (true, _) => std::process::ExitCode::from(1),
        (false, c) => c,
    };
    let open = |run: &str| {
        pattern
            .as_ref()
            .map(|re| crate::hint::cmd(g, &["show", run, "--transcript", "--find", re.as_str()]))
    };
    let doc = Document {
        runs: found
            .into_iter()
            .map(|(s, m)| {
                let open = m.as_ref().and_then(|_| open(&s.run_id));
                found_of(s, m, open)
            })
            .collect(),
        no_agent_excluded: selected.no_agent_excluded,
        unreadable,
    };
    match style.format {
        Format::Json => json_pretty(out, &doc)?,
        Format::Text => {
            render(
                out,
                &doc,
                &filter,
                scope.is_some(),
                &store.describe(),
                style,
            )?;
            if doc.runs.is_empty() {
                for m in &misses {
                    writeln!(out, "{m}")?;
                }
            }
        }
    }
    Ok(code)
}

fn found_of(s: Summary, m: Option<Matches>, open: Option<crate::hint::Cmd>) -> Found {
    let some = |v: Option<String>| v.filter(|x| !x.is_empty());
    Found {
        status: s.status,
        state: s.state,
        created: s.created.filter(|c| !c.is_zero()),
        updated: s.updated,
        ended: s.ended,
        agent: some(s.agent),
        caller: some(s.caller),
        model: some(s.model),
        prompt: s.prompt.unwrap_or_default(),
        run_id: s.run_id,
        matches: m.as_ref().map(|m| m.count),
        hit: m.map(|m| m.first),
        open,
        needs_approval: s.needs_approval,
    }
}

/// The runs as `ls` lists them, with agent, caller and created columns
/// where a filter made them relevant, and the match where the transcript
/// was searched; then what was left out and what could not be read.
fn render(
    out: &mut dyn Write,
    doc: &Document,
    f: &crate::filter::FilterArgs,
    transcript: bool,
    store: &str,
    style: Style,
) -> io::Result<()> {
    if doc.runs.is_empty() {
        writeln!(out, "no run matched in {}", sanitize(store, false))?;
    } else {
        let mut headers = vec!["RUN"];
        let (agent, caller) = (f.agent.is_some(), f.caller.is_some());
        let created = f.since.is_some() || f.until.is_some();
        if agent {
            headers.push("AGENT");
        }
        if caller {
            headers.push("CALLER");
        }
        headers.extend(["MODEL", "STATUS"]);
        if created {
            headers.push("CREATED");
        }
        headers.push("UPDATED");
        if transcript {
            headers.extend(["MATCHES", "MATCH", "OPEN"]);
        } else {
            headers.push("PROMPT");
        }
        let droppable: Vec<usize> = ["CREATED", "MODEL", "UPDATED", "STATUS"]
            .iter()
            .filter_map(|h| headers.iter().position(|x| x == h))
            .collect();
        let text = headers
            .iter()
            .position(|h| *h == "MATCH" || *h == "PROMPT")
            .unwrap_or(0);
        let mut t = table(&headers).flex(text).drop_first(&droppable);
        if transcript {
            // The command that opens each hit: never cut nor left out.
            t = t.action(headers.len().saturating_sub(1));
        }
        for r in &doc.runs {
            let mut row = vec![Cell::new(cell(&r.run_id, 40))];
            if agent {
                row.push(Cell::new(cell(r.agent.as_deref().unwrap_or("-"), 30)));
            }
            if caller {
                row.push(Cell::new(cell(r.caller.as_deref().unwrap_or("-"), 30)));
            }
            row.push(Cell::new(cell(r.model.as_deref().unwrap_or("-"), 30)));
            row.push(status_cell(
                cell(&r.status.to_string(), 20),
                &r.status,
                false,
            ));
            if created {
                row.push(Cell::new(time_cell(r.created.as_ref())));
            }
            row.push(Cell::new(time_cell(r.updated.as_ref())));
            if transcript {
                row.push(Cell::new(
                    r.matches.map_or_else(|| "-".to_owned(), |n| style.count(n)),
                ));
            }
            row.push(Cell::new(match &r.hit {
                Some(h) => cell(&format!("seq {}: {}", h.seq, h.excerpt), 90),
                None => cell(&r.prompt, 50),
            }));
            if transcript {
                row.push(Cell::new(r.open.as_ref().map_or_else(
                    || "-".to_owned(),
                    |c| sanitize(&c.to_string(), false).into_owned(),
                )));
            }
            t.add_row(row);
        }
        print_table(out, t, style)?;
    }
    // Under a table for a program, the lines below go to standard error.
    let tabled = !doc.runs.is_empty();
    let note = |out: &mut dyn Write, line: &str| match tabled {
        true => style.footnote(out, line),
        false => writeln!(out, "{line}"),
    };
    if doc.no_agent_excluded > 0 {
        note(out, &crate::filter::excluded_note(doc.no_agent_excluded))?;
    }
    if let Some(n) = Unreadable::note(&doc.unreadable, "searched") {
        note(out, &n)?;
    }
    Ok(())
}
