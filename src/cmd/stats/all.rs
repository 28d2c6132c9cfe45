//! `stats --all [filters] [--by model,agent,tool,day]`: SPEC 13's figures
//! added up over every run the `ls` filters select, per group and in
//! total. Runs are read in parallel, one at a time per worker, and folded
//! into per-worker group totals that are merged at the end: memory grows
//! with the groups and tools, not with the runs. A run that cannot be read
//! is counted and named under the totals, never left out silently.
//! The JSON document is `schemas/output/stats-all.json`.

use crate::cli::{GroupBy, StatsArgs};
use crate::error::CmdResult;
use crate::filter::Unreadable;
use crate::output::{cell, json_pretty, print_table, sanitize, table, Format, Style};
use crate::render::stats::{duration, tools_table};
use journal::stats::{stats, Totals};
use journal::store::{Store, Summary};
use rayon::prelude::*;
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
}

#[derive(Serialize)]
struct Group {
    #[serde(flatten)]
    key: Key,
    #[serde(flatten)]
    totals: Totals,
}

#[derive(Serialize)]
struct Document {
    by: Vec<GroupBy>,
    groups: Vec<Group>,
    totals: Totals,
    unreadable: Vec<Unreadable>,
}

/// Per-worker accumulation: the groups, and the runs that did not read.
#[derive(Default)]
struct Acc {
    groups: BTreeMap<Key, Totals>,
    unreadable: Vec<Unreadable>,
}

impl Acc {
    fn merge(mut self, o: Acc) -> Acc {
        for (k, t) in o.groups {
            self.groups.entry(k).or_default().merge(&t);
        }
        self.unreadable.extend(o.unreadable);
        self
    }
}

pub fn run(store: &Store, a: &StatsArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let mut by = a.by.clone();
    by.sort();
    by.dedup();
    let all = store.summaries()?;
    let (readable, corrupt) = Unreadable::split(all);
    let selected = a.filter.select(readable);
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
    };
    // A batch of runs at a time, read together (in parallel, or
    // concurrently on the connection), their figures folded in parallel.
    let mut acc = Acc::default();
    for batch in selected.runs.chunks(Store::READ_BATCH) {
        let ids: Vec<String> = batch.iter().map(|s| s.run_id.clone()).collect();
        let read = store.read_batch(&ids);
        let part = batch
            .par_iter()
            .zip(read)
            .fold(Acc::default, |mut acc, (s, j)| {
                match j {
                    Ok(j) => acc
                        .groups
                        .entry(key_of(s))
                        .or_default()
                        .add(&stats(j.records())),
                    Err(e) => acc.unreadable.push(Unreadable::new(&s.run_id, &e)),
                }
                acc
            })
            .reduce(Acc::default, Acc::merge);
        acc = acc.merge(part);
    }
    let mut totals = Totals::default();
    for t in acc.groups.values() {
        totals.merge(t);
    }
    let mut unreadable = acc.unreadable;
    unreadable.extend(corrupt);
    unreadable.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    let code = Unreadable::exit(&unreadable);
    let doc = Document {
        by,
        groups: acc
            .groups
            .into_iter()
            .map(|(key, totals)| Group { key, totals })
            .collect(),
        totals,
        unreadable,
    };
    match style.format {
        Format::Json => json_pretty(out, &doc)?,
        Format::Text => render(out, &doc, style)?,
    }
    Ok(code)
}

/// `2026-11-30T08:00:00.5Z` -> `2026-11-30` (the time is in UTC or with
/// its offset as written; the date is the one written).
fn day(rfc3339: &str) -> String {
    rfc3339.get(..10).unwrap_or(rfc3339).to_owned()
}

fn render(out: &mut dyn Write, doc: &Document, style: Style) -> io::Result<()> {
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
            GroupBy::Tool => "TOOL",
        })
        .collect();
    headers.extend([
        "RUNS",
        "RESPONSES",
        "TOKENS",
        "IN",
        "OUT",
        "CACHE READ",
        "CACHE CREATE",
        "WALL CLOCK",
    ]);
    let mut t = table(&headers);
    let row = |key: Option<&Key>, x: &Totals| {
        let mut r: Vec<String> = keyed
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let v = key.and_then(|k| match b {
                    GroupBy::Model => k.model.as_deref(),
                    GroupBy::Agent => k.agent.as_deref(),
                    GroupBy::Day => k.day.as_deref(),
                    GroupBy::Tool => None,
                });
                match (key, v) {
                    (None, _) if i == 0 => "total".to_owned(),
                    (None, _) => String::new(),
                    (Some(_), Some("") | None) => "-".to_owned(),
                    (Some(_), Some(v)) => cell(v, 30),
                }
            })
            .collect();
        let wall = match (x.wall_clock_ns, x.untimed_runs) {
            (_, u) if u == x.runs => "untimed".to_owned(),
            (ns, 0) => duration(u128::try_from(ns).unwrap_or(0)),
            (ns, u) => format!(
                "{} (+{u} untimed)",
                duration(u128::try_from(ns).unwrap_or(0))
            ),
        };
        r.extend([
            x.runs.to_string(),
            x.iterations.to_string(),
            x.total_tokens.to_string(),
            x.tokens.in_tokens.to_string(),
            x.tokens.out_tokens.to_string(),
            x.tokens.cache_read_tokens.to_string(),
            x.tokens.cache_create_tokens.to_string(),
            wall,
        ]);
        r
    };
    for g in &doc.groups {
        if !keyed.is_empty() {
            t.add_row(row(Some(&g.key), &g.totals));
        }
    }
    t.add_row(row(None, &doc.totals));
    print_table(out, t, style)?;
    let tools: Vec<_> = doc.totals.tools.values().cloned().collect();
    if by_tool && !keyed.is_empty() {
        for g in &doc.groups {
            let name = [&g.key.model, &g.key.agent, &g.key.day]
                .into_iter()
                .flatten()
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
