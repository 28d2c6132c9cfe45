//! `ls`: one line per run, from the meta record and the tail only, in
//! parallel across journals. `--all` adds what the agent's listing cannot
//! see (JetStream: runs whose messages have no meta record, as corrupt).

use crate::cli::{LsArgs, LsColumn, SortKey};
use crate::error::CmdResult;
use crate::filter::{excluded_note, Selected};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{
    as_fields, cell, json_array, print_table, sanitize, status_cell, table, thousands, time_cell,
    Fields,
};
use comfy_table::Cell;
use journal::store::Summary;
use std::io::Write;
use std::process::ExitCode;

/// Who acted on a run last by hand, by run id (the ACTED column).
type Acted = std::collections::HashMap<String, String>;

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
    sort(&mut runs, a.sort, a.reverse);
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
    let sizeless = !store.keeps_sizes();
    let note = sort_note(&runs, a.sort, sizeless);
    if style.json() {
        json_array(out, &runs)?;
        if let Some(n) = note {
            eprintln!("fisk-admin: note: {n}");
        }
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
    let columns = chosen(&a.columns);
    // Who acted on each run last, by hand, as the audit log says (issue
    // 38): read only when the column is asked for.
    let acted: Acted = match columns.contains(&LsColumn::Acted) {
        true => {
            let log = store.audit_log()?;
            runs.iter()
                .filter_map(|s| {
                    let a = journal::custody::acts(&log, &s.run_id).pop()?;
                    Some((s.run_id.clone(), a.sentence()))
                })
                .collect()
        }
        false => Acted::new(),
    };
    let at = |c: LsColumn| columns.iter().position(|x| *x == c);
    let headers: Vec<&str> = columns.iter().map(|c| header(*c)).collect();
    // Into a pipe the rows are written as they are formatted, every value
    // whole: nothing is fitted, so no table is held (issue 24's doubt).
    if as_fields(style) {
        let mut f = Fields::new(out, &headers)?;
        for s in &runs {
            f.row(
                columns
                    .iter()
                    .map(|c| ls_text(s, *c, &|_| usize::MAX, &acted)),
            )?;
        }
        f.finish()?;
        return trailer(out, no_agent_excluded, note);
    }
    // On a narrow terminal the prompt is cut first, then the message;
    // then CREATED, CALLER, RECORDS, VER, SIZE, AGENT, LIVE, STATE, MESSAGE,
    // UPDATED, MODEL, TOKENS, PROMPT and WAITING are left out, in that
    // order: which run, what it is about and what it waits on stay
    // longest (a prompt cut to a few words still names the run). Ids, model
    // names and figures are never cut. STATUS is one word; what the run
    // waits on has its own column.
    let mut t = table(&headers).fields_in_pipe();
    for c in [LsColumn::Prompt, LsColumn::Message] {
        if let Some(i) = at(c) {
            t = t.flex(i);
        }
    }
    for c in [
        LsColumn::Run,
        LsColumn::Model,
        LsColumn::Agent,
        LsColumn::Caller,
    ] {
        if let Some(i) = at(c) {
            t = t.keep(i);
        }
    }
    let drop: Vec<usize> = [
        LsColumn::Acted,
        LsColumn::Created,
        LsColumn::Caller,
        LsColumn::Records,
        LsColumn::Ver,
        LsColumn::Size,
        LsColumn::Agent,
        LsColumn::Live,
        LsColumn::State,
        LsColumn::Message,
        LsColumn::Updated,
        LsColumn::Model,
        LsColumn::Tokens,
        LsColumn::Prompt,
        LsColumn::Waiting,
    ]
    .into_iter()
    .filter_map(at)
    .collect();
    t = t.drop_first(&drop);
    // On a terminal the table fits it; cells are cut to these first.
    let max = |n: usize| n;
    for s in &runs {
        let row: Vec<Cell> = columns
            .iter()
            .map(|c| ls_cell(s, *c, &max, &acted))
            .collect();
        t.add_row(row);
    }
    print_table(out, t, style)?;
    trailer(out, no_agent_excluded, note)
}

/// The lines under the table: what `--agent` left out, what the order
/// leaves unsaid.
fn trailer(out: &mut dyn Write, no_agent_excluded: usize, note: Option<String>) -> CmdResult {
    if no_agent_excluded > 0 {
        writeln!(out, "{}", excluded_note(no_agent_excluded))?;
    }
    if let Some(n) = note {
        writeln!(out, "({n})")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The columns asked for, in order (`all` for every one): by default
/// every one but CALLER.
fn chosen(asked: &[LsColumn]) -> Vec<LsColumn> {
    use LsColumn::*;
    const EVERY: [LsColumn; 17] = [
        Run, Status, State, Waiting, Live, Ver, Agent, Model, Caller, Records, Tokens, Size,
        Created, Updated, Acted, Message, Prompt,
    ];
    if asked.is_empty() {
        return EVERY
            .into_iter()
            .filter(|c| !matches!(c, Caller | Acted))
            .collect();
    }
    let mut out: Vec<LsColumn> = Vec::new();
    for c in asked {
        let add: &[LsColumn] = match c {
            All => &EVERY,
            one => std::slice::from_ref(one),
        };
        for c in add {
            if !out.contains(c) {
                out.push(*c);
            }
        }
    }
    out
}

fn header(c: LsColumn) -> &'static str {
    match c {
        LsColumn::All => "",
        LsColumn::Run => "RUN",
        LsColumn::Status => "STATUS",
        LsColumn::State => "STATE",
        LsColumn::Waiting => "WAITING",
        LsColumn::Live => "LIVE",
        LsColumn::Ver => "VER",
        LsColumn::Agent => "AGENT",
        LsColumn::Model => "MODEL",
        LsColumn::Caller => "CALLER",
        LsColumn::Records => "RECORDS",
        LsColumn::Tokens => "TOKENS",
        LsColumn::Size => "SIZE",
        LsColumn::Created => "CREATED",
        LsColumn::Updated => "UPDATED",
        LsColumn::Message => "MESSAGE",
        LsColumn::Prompt => "PROMPT",
        LsColumn::Acted => "ACTED",
    }
}

/// One cell of a run's row; `max(n)` is how many characters a value may
/// take (every one, into a pipe).
fn ls_cell(s: &Summary, c: LsColumn, max: &dyn Fn(usize) -> usize, acted: &Acted) -> Cell {
    let text = ls_text(s, c, max, acted);
    match c {
        LsColumn::Status => status_cell(text, &s.status, s.waits_on_person()),
        _ => Cell::new(text),
    }
}

/// The text of one cell of a run's row.
fn ls_text(s: &Summary, c: LsColumn, max: &dyn Fn(usize) -> usize, acted: &Acted) -> String {
    let text = |v: Option<&str>, n: usize| match v {
        Some(v) if !v.is_empty() => cell(v, max(n)),
        _ => "-".to_owned(),
    };
    match c {
        LsColumn::All => String::new(),
        LsColumn::Acted => text(acted.get(&s.run_id).map(String::as_str), 60),
        // Ids and names are never cut, on a terminal either.
        LsColumn::Run => cell(&s.run_id, usize::MAX),
        LsColumn::Status => cell(&s.status.to_string(), max(40)),
        LsColumn::State => s.state.word().to_owned(),
        LsColumn::Waiting => waiting_cell(s),
        LsColumn::Live => match s.live {
            true => "live".into(),
            false => String::new(),
        },
        // The generation (SPEC 1.1): 3 is the August agent's, which the
        // current agent will not resume until it is upgraded.
        LsColumn::Ver => s.version.map_or("-".into(), |v| v.to_string()),
        LsColumn::Agent => text(s.agent.as_deref(), usize::MAX),
        LsColumn::Model => text(s.model.as_deref(), usize::MAX),
        LsColumn::Caller => text(s.caller.as_deref(), usize::MAX),
        LsColumn::Records => s.records.map_or("-".into(), thousands),
        LsColumn::Tokens => s.total_tokens.map_or("-".into(), thousands),
        LsColumn::Size => s.bytes.map_or("-".into(), human_bytes),
        LsColumn::Created => time_cell(s.created.as_ref()),
        LsColumn::Updated => time_cell(s.updated.as_ref()),
        LsColumn::Message => text(s.message.as_deref(), 100),
        // A run that could not be summarised says why instead (the row
        // names the run already); `verify RUN` says the rest.
        LsColumn::Prompt => match &s.problem {
            Some(p) => {
                let p = p.strip_prefix(&format!("run {}: ", s.run_id)).unwrap_or(p);
                cell(p, max(100))
            }
            None => cell(s.prompt.as_deref().unwrap_or(""), max(50)),
        },
    }
}

/// What the order leaves unsaid: runs whose figure is unknown (listed
/// last), or a size the store does not keep at all (`sizeless`).
fn sort_note(runs: &[Summary], key: SortKey, sizeless: bool) -> Option<String> {
    let unknown = |f: &dyn Fn(&Summary) -> bool| runs.iter().filter(|s| f(s)).count();
    match key {
        SortKey::Size if sizeless && !runs.is_empty() && runs.iter().all(|s| s.bytes.is_none()) => Some(
            "the store keeps no per-run size (JetStream): sorted by run id".to_owned(),
        ),
        SortKey::Tokens => match unknown(&|s| s.total_tokens.is_none()) {
            0 => None,
            1 => Some("1 run's tokens are unknown (version 3, or no terminal since its last response): listed last".to_owned()),
            n => Some(format!("{n} runs' tokens are unknown (version 3, or no terminal since their last response): listed last")),
        },
        SortKey::Records => match unknown(&|s| s.records.is_none()) {
            0 => None,
            n => Some(format!("{n} run(s) of unknown length: listed last")),
        },
        _ => None,
    }
}

/// What a run waits on a person for: `1 approval`, `2 deferred`, both
/// (`1 approval, 2 deferred`), `resume` when a person acted and nothing
/// waits any more (ready to resume), or `-`.
fn waiting_cell(s: &Summary) -> String {
    if s.state == journal::state::State::Ready {
        return "resume".to_owned();
    }
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

fn sort(runs: &mut [Summary], key: SortKey, reverse: bool) {
    // Largest first (smallest with --reverse), a run whose figure is
    // unknown last either way, then by run id.
    let by_figure = |runs: &mut [Summary], f: fn(&Summary) -> Option<i128>| {
        runs.sort_by(|a, b| {
            let order = match (f(a), f(b)) {
                (Some(x), Some(y)) if reverse => x.cmp(&y),
                (Some(x), Some(y)) => y.cmp(&x),
                (x, y) => y.is_some().cmp(&x.is_some()),
            };
            order.then(a.run_id.cmp(&b.run_id))
        })
    };
    match key {
        SortKey::Tokens => return by_figure(runs, |s| s.total_tokens),
        SortKey::Records => return by_figure(runs, |s| s.records.map(i128::from)),
        _ => {}
    }
    match key {
        SortKey::Tokens | SortKey::Records => {}
        // Newest first, compared as instants whatever their offsets.
        SortKey::Updated => {
            runs.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.run_id.cmp(&b.run_id)))
        }
        SortKey::Created => {
            runs.sort_by(|a, b| b.created.cmp(&a.created).then(a.run_id.cmp(&b.run_id)))
        }
        SortKey::Size => runs.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.run_id.cmp(&b.run_id))),
    }
    if reverse {
        runs.reverse();
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
