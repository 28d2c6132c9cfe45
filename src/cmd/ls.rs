//! `ls`: one line per run, from the meta record and the tail only, in
//! parallel across journals. `--all` adds what the agent's listing cannot
//! see (JetStream: runs whose messages have no meta record, as corrupt).

use crate::cli::{LsArgs, SortKey};
use crate::error::CmdResult;
use crate::filter::{excluded_note, Selected};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{cell, json_array, print_table, sanitize, status_cell, table, time_cell};
use comfy_table::Cell;
use journal::store::Summary;
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Invocation, a: LsArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(g)?;
    let mut all: Vec<Summary> = store.summaries()?;
    if a.all {
        all.extend(store.unlisted_summaries()?);
    }
    let total = all.len();
    let Selected {
        mut runs,
        no_agent_excluded,
    } = a.filter.select(all);
    sort(&mut runs, a.sort);
    if a.reverse {
        runs.reverse();
    }
    if let Some(n) = a.limit {
        runs.truncate(n);
    }
    // The prompt is untrusted: control characters (and so every escape
    // sequence's introducer) are removed in both output forms.
    for s in &mut runs {
        if let Some(p) = s.prompt.as_mut() {
            p.retain(|c| !c.is_control());
        }
        // What gets past the problem, as a command of this tool.
        if let (Some(p), Some(r)) = (s.problem.as_mut(), s.remedy) {
            p.push_str("; ");
            p.push_str(&crate::hint::advice(g, r, Some(&s.run_id), None, &[]));
        }
    }
    if style.json() {
        json_array(out, &runs)?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        let why = match (total, a.filter.any()) {
            (0, _) => "no runs".to_owned(),
            (n, true) => format!("no run of {n} matches the filters"),
            (_, false) => "no runs".to_owned(),
        };
        writeln!(out, "{why} in {}", sanitize(&store.describe(), false))?;
        if no_agent_excluded > 0 {
            writeln!(out, "{}", excluded_note(no_agent_excluded))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    // On a narrow terminal the prompt is cut first, then CREATED, RECORDS,
    // VER, SIZE, MODEL and LIVE are left out, in that order. STATUS is
    // one word; what the run waits on has its own column.
    let mut t = table(&[
        "RUN", "STATUS", "WAITING", "LIVE", "VER", "MODEL", "RECORDS", "SIZE", "CREATED",
        "UPDATED", "PROMPT",
    ])
    .flex(10)
    .drop_first(&[8, 6, 4, 7, 5, 3]);
    for s in &runs {
        let status = s.status.to_string();
        let plain = |text: String| Cell::new(text);
        t.add_row(vec![
            plain(cell(&s.run_id, 40)),
            status_cell(cell(&status, 40), &s.status, s.waits_on_person()),
            plain(waiting_cell(s)),
            plain(if s.live { "live".into() } else { String::new() }),
            // The generation (SPEC 1.1): 3 is the August agent's, which the
            // current agent will not resume until it is upgraded.
            plain(s.version.map_or("-".into(), |v| v.to_string())),
            plain(cell(s.model.as_deref().unwrap_or("-"), 24)),
            plain(s.records.map_or("-".into(), |n| n.to_string())),
            plain(s.bytes.map_or("-".into(), human_bytes)),
            plain(time_cell(s.created.as_ref())),
            plain(time_cell(s.updated.as_ref())),
            // A run that could not be summarised says why instead (the
            // row names the run already); `verify RUN` says the rest.
            plain(match &s.problem {
                Some(p) => {
                    let p = p.strip_prefix(&format!("run {}: ", s.run_id)).unwrap_or(p);
                    cell(p, 100)
                }
                None => cell(s.prompt.as_deref().unwrap_or(""), 50),
            }),
        ]);
    }
    print_table(out, t, style)?;
    if no_agent_excluded > 0 {
        writeln!(out, "{}", excluded_note(no_agent_excluded))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a run waits on a person for: `1 approval`, `2 deferred`, both
/// (`1 approval, 2 deferred`), or `-`.
fn waiting_cell(s: &Summary) -> String {
    let mut parts = Vec::new();
    match s.needs_approval.len() {
        0 => {}
        1 => parts.push("1 approval".to_owned()),
        n => parts.push(format!("{n} approvals")),
    }
    if s.open_deferrals > 0 {
        parts.push(format!("{} deferred", s.open_deferrals));
    }
    match parts.is_empty() {
        true => "-".to_owned(),
        false => parts.join(", "),
    }
}

fn sort(runs: &mut [Summary], key: SortKey) {
    match key {
        // Newest first, compared as instants whatever their offsets.
        SortKey::Updated => {
            runs.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.run_id.cmp(&b.run_id)))
        }
        SortKey::Created => {
            runs.sort_by(|a, b| b.created.cmp(&a.created).then(a.run_id.cmp(&b.run_id)))
        }
        SortKey::Size => runs.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.run_id.cmp(&b.run_id))),
    }
}

pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS.get(u).unwrap_or(&"TiB"))
    }
}
