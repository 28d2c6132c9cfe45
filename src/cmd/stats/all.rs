//! `stats --all [filters] [--by model,agent,tool,day,run,status,caller]
//! [--sort KEY] [--top N]`: SPEC 13's figures
//! added up over every run the `ls` filters select, per group and in
//! total. Runs are read in parallel (or in one pass over a stream), and
//! each one's figures are added to its group as it is read: memory grows
//! with the groups and tools, not with the runs. A run that cannot be read
//! is counted and named under the totals, never left out silently.
//! The JSON document is `schemas/output/stats-all.json`.

use crate::cli::{GroupBy, StatsArgs, StatsSort};
use crate::cost::{Cost, Prices};
use crate::error::CmdResult;
use crate::filter::{Admit, Unreadable};
use crate::output::{cell, json_pretty, print_table, sanitize, table, Format, Style};
use crate::render::stats::{duration, seconds, tools_table};
use journal::stats::{stats, Totals};
use journal::store::{Store, Summary};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// What a group is keyed on: one value per `--by` key (tool apart, which
/// breaks each group down by tool instead).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
struct Key {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    day: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caller: Option<String>,
}

impl Key {
    /// The value of one `--by` key (`None` for tool, which is no key).
    fn get(&self, b: GroupBy) -> Option<&str> {
        match b {
            GroupBy::Model => self.model.as_deref(),
            GroupBy::Agent => self.agent.as_deref(),
            GroupBy::Day => self.day.as_deref(),
            GroupBy::Run => self.run.as_deref(),
            GroupBy::Status => self.status.as_deref(),
            GroupBy::Caller => self.caller.as_deref(),
            GroupBy::Tool => None,
        }
    }
}

#[derive(Serialize)]
struct Group {
    #[serde(flatten)]
    key: Key,
    #[serde(flatten)]
    totals: Totals,
    /// With `--prices`: what the group's runs cost (whole or not).
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<Cost>,
}

#[derive(Serialize)]
struct Document {
    by: Vec<GroupBy>,
    groups: Vec<Group>,
    /// How many groups `--top` left out (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    groups_left_out: Option<usize>,
    totals: Totals,
    /// With `--prices`: what every selected run cost, whole or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<Cost>,
    unreadable: Vec<Unreadable>,
}

/// The accumulation: each group's figures (and with `--prices` its cost)
/// by the group's number (its index in the keys met while listing), and
/// the runs that did not read.
#[derive(Default)]
struct Acc {
    groups: BTreeMap<u32, Totals>,
    costs: BTreeMap<u32, Cost>,
    unreadable: Vec<Unreadable>,
}

pub fn run(store: &Store, a: &StatsArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let prices = a.prices.as_deref().map(Prices::load).transpose()?;
    let mut by = a.by.clone();
    by.sort();
    by.dedup();
    let key_of = |s: &Summary| Key {
        model: by
            .contains(&GroupBy::Model)
            .then(|| s.model.clone().unwrap_or_default()),
        agent: by
            .contains(&GroupBy::Agent)
            .then(|| s.agent.clone().unwrap_or_default()),
        day: by.contains(&GroupBy::Day).then(|| {
            s.created
                .filter(|c| !c.is_zero())
                .map_or_else(|| "undated".to_owned(), |c| day(&c.to_rfc3339()))
        }),
        run: by.contains(&GroupBy::Run).then(|| s.run_id.clone()),
        status: by.contains(&GroupBy::Status).then(|| s.status.to_string()),
        caller: by
            .contains(&GroupBy::Caller)
            .then(|| s.caller.clone().unwrap_or_default()),
    };
    // --limit: only the N most recently active of the runs selected,
    // found by a first pass that keeps N ids and times.
    let newest = match a.limit.limit {
        Some(n) => Some(newest_selected(store, a, n)?),
        None => None,
    };
    // One pass (issue 40): each run's summary is looked at as it is made
    // and kept only as its group's number; each selected run is then read
    // once (in parallel, or in one pass over the stream:
    // `Store::read_picked`) and its figures added to its group as it
    // arrives: memory holds the groups, not the runs.
    let mut corrupt = Vec::new();
    let mut numbers: BTreeMap<Key, u32> = BTreeMap::new();
    let acc = std::sync::Mutex::new(Acc::default());
    store.read_picked(
        |s| {
            if let Some(u) = Unreadable::of_summary(&s) {
                corrupt.push(u);
                return None;
            }
            if a.filter.admits(&s) != Admit::Yes {
                return None;
            }
            if newest
                .as_ref()
                .is_some_and(|keep| !keep.contains(&s.run_id))
            {
                return None;
            }
            let next = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
            Some(*numbers.entry(key_of(&s)).or_insert(next))
        },
        |run, group, j| {
            // Taken before the lock: the lock only guards the adding up.
            let figures = j.map(|j| stats(j.records()));
            let cost = match (&prices, &figures) {
                (Some(p), Ok(f)) => Some(p.of(&f.model, &f.tokens)),
                _ => None,
            };
            let mut acc = acc
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match figures {
                Ok(f) => {
                    if let Some(c) = cost {
                        acc.costs.entry(*group).or_default().add(c);
                    }
                    acc.groups.entry(*group).or_default().add(&f)
                }
                Err(e) => acc.unreadable.push(Unreadable::new(run, &e)),
            }
        },
    )?;
    let mut acc = acc
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Back to the keys, in key order; a group none of whose runs read is
    // no group.
    let groups: BTreeMap<Key, (Totals, Cost)> = numbers
        .into_iter()
        .filter_map(|(k, n)| {
            let cost = acc.costs.remove(&n).unwrap_or_default();
            acc.groups.remove(&n).map(|t| (k, (t, cost)))
        })
        .collect();
    let mut totals = Totals::default();
    for (t, _) in groups.values() {
        totals.merge(t);
    }
    let cost = prices.as_ref().map(|_| {
        let mut c = Cost::default();
        for (_, g) in groups.values() {
            c.merge(g);
        }
        // An unreadable run is not priced either: the sum is not whole.
        for _ in 0..acc.unreadable.len() + corrupt.len() {
            c.add(Err("a run that could not be read".to_owned()));
        }
        c
    });
    let mut unreadable = acc.unreadable;
    unreadable.extend(corrupt);
    unreadable.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    let code = Unreadable::exit(&unreadable);
    let mut groups: Vec<Group> = groups
        .into_iter()
        .map(|(key, (totals, cost))| Group {
            cost: prices.as_ref().map(|_| cost),
            key,
            totals,
        })
        .collect();
    let order = a
        .sort
        .or(a.top.map(|_| StatsSort::Tokens))
        .unwrap_or(StatsSort::Key);
    sort_groups(&mut groups, order);
    let mut groups_left_out = None;
    if let Some(n) = a.top {
        if groups.len() > n {
            groups_left_out = Some(groups.len() - n);
            groups.truncate(n);
        }
    }
    let doc = Document {
        by,
        groups,
        groups_left_out,
        totals,
        cost,
        unreadable,
    };
    match style.format {
        Format::Json => json_pretty(out, &doc)?,
        Format::Text => render(out, &doc, prices.as_ref(), style)?,
    }
    // A total that is not whole was asked for: 1 (2 stays 2).
    if doc.cost.as_ref().is_some_and(|c| !c.complete) && code == std::process::ExitCode::SUCCESS {
        return Ok(std::process::ExitCode::from(1));
    }
    Ok(code)
}

/// The ids of the `n` most recently active runs the filters select (ties
/// by run id), found in one pass over the summaries that keeps at most
/// about 2n of them: what `--limit` reads.
fn newest_selected(
    store: &Store,
    a: &StatsArgs,
    n: usize,
) -> journal::Result<std::collections::BTreeSet<String>> {
    let mut kept: Vec<(Option<journal::time::Time>, String)> = Vec::new();
    let newest_first = |x: &(Option<journal::time::Time>, String),
                        y: &(Option<journal::time::Time>, String)| {
        y.0.cmp(&x.0).then(x.1.cmp(&y.1))
    };
    store.summaries_each(&mut |s: Summary| {
        if Unreadable::of_summary(&s).is_some() || a.filter.admits(&s) != Admit::Yes {
            return;
        }
        kept.push((s.updated, s.run_id));
        if kept.len() >= n.saturating_mul(2).max(1024) {
            kept.sort_by(newest_first);
            kept.truncate(n);
        }
    })?;
    kept.sort_by(newest_first);
    kept.truncate(n);
    Ok(kept.into_iter().map(|(_, run)| run).collect())
}

/// Largest first by a figure (a tie in key order), or in key order (the
/// groups come in it).
fn sort_groups(groups: &mut [Group], order: StatsSort) {
    let figure = |g: &Group| -> i128 {
        let t = &g.totals;
        match order {
            StatsSort::Key => 0,
            StatsSort::Tokens => t.total_tokens,
            StatsSort::Runs => i128::from(t.runs),
            StatsSort::Responses => t.iterations,
            StatsSort::Wall => t.wall_clock_ns,
        }
    };
    // Stable: equal figures keep key order.
    groups.sort_by_key(|g| std::cmp::Reverse(figure(g)));
}

/// `2026-11-30T08:00:00.5Z` -> `2026-11-30` (the time is in UTC or with
/// its offset as written; the date is the one written).
fn day(rfc3339: &str) -> String {
    rfc3339.get(..10).unwrap_or(rfc3339).to_owned()
}

fn render(
    out: &mut dyn Write,
    doc: &Document,
    prices: Option<&Prices>,
    style: Style,
) -> io::Result<()> {
    let by_tool = doc.by.contains(&GroupBy::Tool);
    let keyed: Vec<GroupBy> = doc
        .by
        .iter()
        .copied()
        .filter(|b| *b != GroupBy::Tool)
        .collect();
    let mut headers: Vec<&str> = keyed
        .iter()
        .map(|b| match b {
            GroupBy::Model => "MODEL",
            GroupBy::Agent => "AGENT",
            GroupBy::Day => "DAY",
            GroupBy::Run => "RUN",
            GroupBy::Status => "STATUS",
            GroupBy::Caller => "CALLER",
            GroupBy::Tool => "TOOL",
        })
        .collect();
    headers.extend([
        "RUNS",
        "RESPONSES",
        "TOKENS",
        "IN",
        "OUT",
        "THINKING",
        "CACHE READ",
        "CACHE CREATE",
        "WALL CLOCK",
    ]);
    if prices.is_some() {
        headers.push("COST");
    }
    // The keys (ids, model names) and the figures are never cut: on a
    // narrow terminal the cache tiers, THINKING (a part of OUT), then IN
    // and OUT, then RESPONSES are left out, and named.
    let mut t = table(&headers);
    for i in 0..keyed.len() {
        t = t.keep(i);
    }
    let k = keyed.len();
    t = t.drop_first(&[k + 7, k + 6, k + 5, k + 3, k + 4, k + 1]);
    let row = |key: Option<&Key>, x: &Totals, cost: Option<&Cost>| {
        let mut r: Vec<String> = keyed
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let v = key.and_then(|k| k.get(*b));
                match (key, v) {
                    (None, _) if i == 0 => "total".to_owned(),
                    (None, _) => String::new(),
                    (Some(_), Some("") | None) => "-".to_owned(),
                    // A key (an id, a model name) is never cut.
                    (Some(_), Some(v)) => cell(v, usize::MAX),
                }
            })
            .collect();
        // For a program, seconds alone (what they leave out is said on
        // standard error, under the table).
        let ns = u128::try_from(x.wall_clock_ns).unwrap_or(0);
        let wall = match (x.untimed_runs, style.fields()) {
            (u, true) if u == x.runs => "-".to_owned(),
            (_, true) => seconds(ns),
            (u, false) if u == x.runs => "untimed".to_owned(),
            (0, false) => duration(ns),
            (u, false) => format!("{} (+{u} untimed)", duration(ns)),
        };
        r.extend([
            style.count(x.runs),
            style.count(x.iterations),
            style.count(x.total_tokens),
            style.count(x.tokens.in_tokens),
            style.count(x.tokens.out_tokens),
            style.count(x.tokens.thinking_tokens),
            style.count(x.tokens.cache_read_tokens),
            style.count(x.tokens.cache_create_tokens),
            wall,
        ]);
        if let Some(p) = prices {
            r.push(cost.map_or_else(|| "-".to_owned(), |c| c.cell(p)));
        }
        r
    };
    for g in &doc.groups {
        if !keyed.is_empty() {
            t.add_row(row(Some(&g.key), &g.totals, g.cost.as_ref()));
        }
    }
    t.add_row(row(None, &doc.totals, doc.cost.as_ref()));
    print_table(out, t, style)?;
    if style.fields() && doc.totals.untimed_runs > 0 {
        style.footnote(
            out,
            &format!(
                "(WALL CLOCK is seconds over the timed runs: {} run(s) untimed)",
                doc.totals.untimed_runs
            ),
        )?;
    }
    // A sum that is not whole is said, naming what lacks a price.
    if let (Some(c), Some(p)) = (&doc.cost, prices) {
        if let Some(why) = c.incomplete(p) {
            style.footnote(out, &why)?;
        }
    }
    if let Some(n) = doc.groups_left_out {
        let shown = doc.groups.len();
        style.footnote(
            out,
            &format!(
                "(the first {shown} of {} groups; the total counts every run)",
                shown + n
            ),
        )?;
    }
    let tools: Vec<_> = doc.totals.tools.values().cloned().collect();
    if by_tool && !keyed.is_empty() {
        for g in &doc.groups {
            let name = keyed
                .iter()
                .filter_map(|b| g.key.get(*b))
                .map(|v| sanitize(v, false).into_owned())
                .collect::<Vec<_>>()
                .join(" / ");
            writeln!(out, "\ntools of {name}:")?;
            let rows: Vec<_> = g.totals.tools.values().cloned().collect();
            tools_table(out, &rows, style)?;
        }
    } else if !tools.is_empty() {
        writeln!(out)?;
        tools_table(out, &tools, style)?;
    }
    if let Some(note) = Unreadable::note(&doc.unreadable, "counted") {
        writeln!(out, "\n{note}")?;
    }
    Ok(())
}
