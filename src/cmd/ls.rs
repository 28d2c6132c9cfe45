//! `ls`: one line per run, from the meta record and the tail only, in
//! parallel across journals. `--all` adds what the agent's listing cannot
//! see (JetStream: runs whose messages have no meta record, as corrupt).

use crate::cli::{LsArgs, LsColumn, SortKey};
use crate::error::CmdResult;
use crate::filter::{excluded_note, Admit, Held};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{
    as_fields, cell, fields_line, json_array, json_element, print_table, sanitize, status_cell,
    table, time_cell, Fields, Style,
};
use comfy_table::Cell;
use journal::store::Summary;
use std::io::Write;
use std::process::ExitCode;

/// A run `ls` keeps until it prints (issue 40): what orders it, and the
/// run as it will print. Into a pipe or as JSON nothing is fitted, so the
/// row is rendered as soon as it is selected and only its text is kept
/// (a summary in memory is about twice its JSON); a table on a terminal
/// keeps the summary, to fit the table to the terminal.
struct Row {
    /// The figure the order goes by; `None` when unknown.
    figure: Option<Figure>,
    run: Box<str>,
    shown: Shown,
}

/// A figure `ls` sorts by.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Figure {
    Time(journal::time::Time),
    Number(i128),
}

enum Shown {
    /// Its JSON, or its line of tab-separated fields.
    Printed(Box<[u8]>),
    Summary(Box<Summary>),
}

/// How the rows print.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Json,
    Fields,
    Table,
}

/// Who acted on a run last by hand, by run id (the ACTED column).
type Acted = std::collections::HashMap<String, String>;

pub fn run(g: &Invocation, a: LsArgs, out: &mut dyn Write) -> CmdResult {
    let once = |buf: &mut dyn Write| match a.openmetrics {
        true => metrics(g, &a, buf),
        false => list(g, &a, buf),
    };
    let whole = g.style.json() || a.openmetrics;
    crate::watch::listing(a.watch, whole, &[], out, once)
}

/// `-o openmetrics`: the runs the filters select by state, and what waits
/// on a person among them (`crate::metrics`).
fn metrics(g: &Invocation, a: &LsArgs, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let (states, items) = crate::metrics::gather(&store, |s| a.filter.admits(s) == Admit::Yes)?;
    crate::metrics::write(
        out,
        &store.uri(),
        &states,
        &items,
        journal::time::Time::now(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// One listing.
fn list(g: &Invocation, a: &LsArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(g)?;
    let form = match (style.json(), as_fields(style)) {
        (true, _) => Form::Json,
        (false, true) => Form::Fields,
        (false, false) => Form::Table,
    };
    let columns = chosen(&a.columns);
    // Each summary is kept only when the filters select it, and with
    // `--limit N` only while it is among the first N in the order asked
    // for: the listing holds the rows it prints (issue 40). What the
    // filters name that no run holds is said from the values seen
    // (`Held`), not from every summary.
    let mut total = 0usize;
    let mut no_agent_excluded = 0usize;
    let mut held = Held::default();
    let mut runs: Vec<Row> = Vec::new();
    let mut failed: Option<std::io::Error> = None;
    let limit = a.limit.limit;
    // Who acted on each run last, by hand, as the audit log says (issue
    // 38): read only when the column is asked for, kept for the runs the
    // filters select.
    let log = match columns.contains(&LsColumn::Acted) {
        true => Some(store.audit_log()?),
        false => None,
    };
    let mut acted = Acted::new();
    let mut keep = |mut s: Summary| {
        total += 1;
        a.filter.note_values(&mut held, &s);
        match a.filter.admits(&s) {
            Admit::Yes => {}
            Admit::No => return,
            Admit::NoAgent => {
                no_agent_excluded += 1;
                return;
            }
        }
        // The prompt is untrusted: control characters (and so every escape
        // sequence's introducer) are removed in both output forms.
        if let Some(p) = s.prompt.as_mut() {
            p.retain(|c| !c.is_control());
        }
        // What gets past the problem, as a command of this tool.
        if let (Some(p), Some(r)) = (s.problem.as_mut(), s.remedy) {
            p.push_str("; ");
            p.push_str(&crate::hint::advice(g, r, Some(&s.run_id), None, &[]));
        }
        if let Some(log) = &log {
            if let Some(act) = journal::custody::acts(log, &s.run_id).pop() {
                acted.insert(s.run_id.clone(), act.sentence());
            }
        }
        let (figure, run) = (figure(&s, a.sort), s.run_id.as_str().into());
        let shown = match form {
            Form::Json => match json_element(&s) {
                Ok(text) => Shown::Printed(text),
                Err(e) => {
                    failed.get_or_insert(e);
                    return;
                }
            },
            Form::Fields => Shown::Printed(
                fields_line(
                    columns
                        .iter()
                        .map(|c| ls_text(&s, *c, &|_| usize::MAX, style, &acted)),
                )
                .into(),
            ),
            Form::Table => Shown::Summary(Box::new(s)),
        };
        runs.push(Row { figure, run, shown });
        if let Some(n) = limit {
            // The first N of the first N and the rest are the first N of
            // all: the order is total (ties go by run id).
            if runs.len() >= n.saturating_mul(2).max(1024) {
                runs.sort_by(|x, y| order(x, y, a.sort, a.reverse));
                runs.truncate(n);
            }
        }
    };
    store.summaries_each(&mut keep)?;
    if a.all {
        store.unlisted_summaries()?.into_iter().for_each(&mut keep);
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    runs.sort_by(|x, y| order(x, y, a.sort, a.reverse));
    if let Some(n) = limit {
        runs.truncate(n);
    }
    let sizeless = !store.keeps_sizes();
    let note = sort_note(&runs, a.sort, sizeless);
    fn printed(r: &Row) -> &[u8] {
        match &r.shown {
            Shown::Printed(b) => b,
            Shown::Summary(_) => &[],
        }
    }
    if form == Form::Json {
        json_array(out, runs.iter().map(printed))?;
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
        for m in &a.filter.near_misses_of(&held) {
            writeln!(out, "{m}")?;
        }
        if no_agent_excluded > 0 {
            writeln!(out, "{}", excluded_note(no_agent_excluded))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let at = |c: LsColumn| columns.iter().position(|x| *x == c);
    let headers: Vec<&str> = columns.iter().map(|c| header(*c)).collect();
    // Into a pipe each row was formatted as it was selected, every value
    // whole: nothing is fitted, so no table is held (issue 24's doubt).
    if form == Form::Fields {
        let mut f = Fields::new(out, &headers)?;
        for r in &runs {
            f.line(printed(r))?;
        }
        f.finish()?;
        return trailer(out, no_agent_excluded, note, style);
    }
    // On a narrow terminal the prompt is cut first, then the message;
    // then CREATED, CALLER, RECORDS, VER, SIZE, AGENT, LIVE, STATE, MESSAGE,
    // UPDATED, MODEL, TOKENS, PROMPT and WAITING are left out, in that
    // order: which run, what it is about and what it waits on stay
    // longest (a prompt cut to a few words still names the run). Ids, model
    // names and figures are never cut. STATUS is one word; what the run
    // waits on has its own column.
    // Listing failures (--status error, budget, max_iterations), why each
    // ended is what is read: MESSAGE is cut last and PROMPT left out first
    // (issue 39, d-8).
    use crate::filter::StatusFilter as F;
    let failures = !a.filter.status.is_empty()
        && a.filter
            .status
            .iter()
            .all(|s| matches!(s, F::Error | F::Budget | F::MaxIterations));
    let mut t = table(&headers);
    for c in [LsColumn::Prompt, LsColumn::Message] {
        if let Some(i) = at(c) {
            t = t.flex(i);
        }
    }
    if let (true, Some(i)) = (failures, at(LsColumn::Message)) {
        t = t.whole(i);
    }
    // A cut cell names the way to see it whole (kubectl's -o wide).
    t = t.when_cut("(cut to fit: --columns run,status,message shows it whole)".to_owned());
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
    let mut order = vec![
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
    ];
    if failures {
        order.retain(|c| *c != LsColumn::Prompt && *c != LsColumn::Message);
        order.insert(0, LsColumn::Prompt);
    }
    let drop: Vec<usize> = order.into_iter().filter_map(at).collect();
    t = t.drop_first(&drop);
    // On a terminal the table fits it; cells are cut to these first.
    let max = |n: usize| n;
    for r in &runs {
        if let Shown::Summary(s) = &r.shown {
            let row: Vec<Cell> = columns
                .iter()
                .map(|c| ls_cell(s, *c, &max, style, &acted))
                .collect();
            t.add_row(row);
        }
    }
    print_table(out, t, style)?;
    trailer(out, no_agent_excluded, note, style)
}

/// The lines under the table: what `--agent` left out, what the order
/// leaves unsaid.
fn trailer(
    out: &mut dyn Write,
    no_agent_excluded: usize,
    note: Option<String>,
    style: Style,
) -> CmdResult {
    if no_agent_excluded > 0 {
        style.footnote(out, &excluded_note(no_agent_excluded))?;
    }
    if let Some(n) = note {
        style.footnote(out, &format!("({n})"))?;
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
fn ls_cell(
    s: &Summary,
    c: LsColumn,
    max: &dyn Fn(usize) -> usize,
    style: Style,
    acted: &Acted,
) -> Cell {
    let text = ls_text(s, c, max, style, acted);
    match c {
        LsColumn::Status => status_cell(text, &s.status, s.waits_on_person()),
        _ => Cell::new(text),
    }
}

/// The text of one cell of a run's row.
fn ls_text(
    s: &Summary,
    c: LsColumn,
    max: &dyn Fn(usize) -> usize,
    style: Style,
    acted: &Acted,
) -> String {
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
        LsColumn::Records => s.records.map_or("-".into(), |n| style.count(n)),
        LsColumn::Tokens => s.total_tokens.map_or("-".into(), |n| style.count(n)),
        LsColumn::Size => s.bytes.map_or("-".into(), |n| style.size(n)),
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
fn sort_note(runs: &[Row], key: SortKey, sizeless: bool) -> Option<String> {
    // The figure sorted by is the one a note is about.
    let unknown = runs.iter().filter(|r| r.figure.is_none()).count();
    match key {
        SortKey::Size if sizeless && !runs.is_empty() && unknown == runs.len() => Some(
            "the store keeps no per-run size (JetStream): sorted by run id".to_owned(),
        ),
        SortKey::Tokens => match unknown {
            0 => None,
            1 => Some("1 run's tokens are unknown (no terminal's counters since its last response, and earlier responses not read): listed last".to_owned()),
            n => Some(format!("{n} runs' tokens are unknown (no terminal's counters since their last response, and earlier responses not read): listed last")),
        },
        SortKey::Records => match unknown {
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

/// The figure `key` sorts a run by.
fn figure(s: &Summary, key: SortKey) -> Option<Figure> {
    match key {
        SortKey::Tokens => s.total_tokens.map(Figure::Number),
        SortKey::Records => s.records.map(|n| Figure::Number(n.into())),
        SortKey::Updated => s.updated.map(Figure::Time),
        SortKey::Created => s.created.map(Figure::Time),
        SortKey::Size => s.bytes.map(|n| Figure::Number(n.into())),
    }
}

/// Where `a` goes against `b`. Tokens and records: largest first
/// (smallest with --reverse), a run whose figure is unknown last either
/// way, then by run id. Times (newest first, compared as instants
/// whatever their offsets) and size (largest first): an unknown one last,
/// then by run id; --reverse turns the whole order round.
fn order(a: &Row, b: &Row, key: SortKey, reverse: bool) -> std::cmp::Ordering {
    match key {
        SortKey::Tokens | SortKey::Records => {
            let o = match (a.figure, b.figure) {
                (Some(x), Some(y)) if reverse => x.cmp(&y),
                (Some(x), Some(y)) => y.cmp(&x),
                (x, y) => y.is_some().cmp(&x.is_some()),
            };
            o.then(a.run.cmp(&b.run))
        }
        SortKey::Updated | SortKey::Created | SortKey::Size => {
            let o = b.figure.cmp(&a.figure).then(a.run.cmp(&b.run));
            match reverse {
                true => o.reverse(),
                false => o,
            }
        }
    }
}
