//! `log [RUN...]`: the store's audit log (issue 38), as `git log` reads:
//! newest first, one write per block (its intent and outcome together),
//! `--oneline` one line a write; `--since`, `--operator`, `--command`
//! filter. Entries carried with a run from another store (`migrate`) are
//! shown with where they came from. Reading only: a store without a log
//! has nothing to show, and none is created.
//!
//! JSON (`-o json`): one object `{log, writes: [...]}`, newest first, each
//! write `{write, op, run, operator, nats_user, why, command, time,
//! stored, result, error, before, after, written, removed, detail,
//! carried_from, kind}` (`schemas/output/log.json`).

use crate::cli::LogArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, Format};
use journal::audit::{Digest, Ended, Entry, Kind, Seqs};
use journal::time::Time;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One write as `log` shows it: its intent and outcome together.
#[derive(Serialize, Debug, Default)]
struct Write1 {
    kind: &'static str,
    write: String,
    op: Option<String>,
    run: Option<String>,
    operator: Option<String>,
    nats_user: Option<String>,
    why: Option<String>,
    command: Option<String>,
    time: Option<Time>,
    stored: Option<Time>,
    result: Option<&'static str>,
    error: Option<String>,
    before: Option<Digest>,
    after: Option<Digest>,
    written: Option<Seqs>,
    removed: Option<Seqs>,
    detail: Option<String>,
    root: Option<String>,
    carried_from: Option<String>,
}

#[derive(Serialize)]
struct Doc<'a> {
    log: String,
    writes: &'a [Write1],
}

pub fn run(g: &Invocation, a: LogArgs, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let log = store.audit_log()?;
    let mut writes: Vec<Write1> = Vec::new();
    let mut index: std::collections::HashMap<(String, Option<String>, bool), usize> =
        Default::default();
    let entries: Vec<(Option<Time>, Entry)> = match a.runs.is_empty() {
        true => log
            .iter()
            .filter_map(|l| {
                let e = l.entry.as_ref().ok()?;
                Some(match e.kind {
                    Kind::Carried => {
                        let inner = e.carried()?;
                        (
                            l.stored,
                            Entry {
                                from: e.from.clone(),
                                ..inner
                            },
                        )
                    }
                    _ => (l.stored, e.clone()),
                })
            })
            .collect(),
        false => {
            let mut v: Vec<(u64, Option<Time>, Entry)> = a
                .runs
                .iter()
                .flat_map(|r| {
                    journal::custody::about_run(&log, r).map(|(l, e)| (l.position, l.stored, e))
                })
                .collect();
            v.sort_by_key(|(p, _, _)| *p);
            v.dedup_by_key(|(p, _, _)| *p);
            v.into_iter().map(|(_, s, e)| (s, e)).collect()
        }
    };
    for (stored, e) in entries {
        let carried = e.from.is_some();
        let key = (e.write.clone(), e.run.clone(), carried);
        let w = match index.get(&key).copied() {
            Some(i) if !e.write.is_empty() => i,
            _ => {
                writes.push(Write1 {
                    kind: match e.kind {
                        Kind::Seal => "seal",
                        _ => "write",
                    },
                    write: e.write.clone(),
                    op: e
                        .op
                        .clone()
                        .or_else(|| (e.kind == Kind::Seal).then(|| "seal".into())),
                    run: e.run.clone(),
                    operator: e.operator.clone(),
                    nats_user: e.nats_user.clone(),
                    time: Some(e.time),
                    stored,
                    root: e.root.clone(),
                    carried_from: e.from.clone(),
                    ..Write1::default()
                });
                index.insert(key, writes.len() - 1);
                writes.len() - 1
            }
        };
        let Some(w) = writes.get_mut(w) else { continue };
        match e.kind {
            Kind::Intent => {
                w.why = e.why.clone();
                w.command = e.command.clone();
                w.before = e.before.clone();
                w.after = e.after.clone();
                w.written = e.written;
                w.removed = e.removed;
                w.detail = e.detail.clone();
                w.time = Some(e.time);
            }
            Kind::Outcome => {
                w.result = e.result.map(|r| match r {
                    Ended::Done => "done",
                    Ended::Failed => "failed",
                });
                w.error = e.error.clone();
                if w.after.is_none() {
                    w.after = e.after.clone();
                }
                if w.written.is_none() {
                    w.written = e.written;
                }
                if w.detail.is_none() {
                    w.detail = e.detail.clone();
                }
            }
            Kind::Seal => {
                w.result = Some("done");
                w.detail = e.detail.clone();
            }
            Kind::Carried => {}
        }
    }
    writes.retain(|w| {
        a.since.is_none_or(|s| w.time.is_some_and(|t| t >= s))
            && a.operator
                .as_deref()
                .is_none_or(|o| w.operator.as_deref() == Some(o))
            && a.command.as_deref().is_none_or(|c| {
                w.op.as_deref()
                    .is_some_and(|op| op == c || op.split_whitespace().next() == Some(c))
            })
    });
    writes.reverse();
    match g.style.format {
        Format::Json => json_pretty(
            out,
            &Doc {
                log: store.describe_audit(),
                writes: &writes,
            },
        )?,
        Format::Text if writes.is_empty() => writeln!(
            out,
            "no writes logged{} in the audit log ({})",
            match a.runs.is_empty() {
                true => String::new(),
                false => format!(" for {}", a.runs.join(", ")),
            },
            store.describe_audit()
        )?,
        Format::Text => {
            for w in &writes {
                match a.oneline {
                    true => oneline(out, w)?,
                    false => block(out, w)?,
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn text(s: &Option<String>) -> String {
    sanitize(s.as_deref().unwrap_or("-"), false).into_owned()
}

fn when(w: &Write1) -> String {
    w.stored
        .or(w.time)
        .map_or_else(|| "-".to_owned(), |t| t.to_rfc3339())
}

fn result(w: &Write1) -> &'static str {
    match (w.result, w.kind) {
        (Some(r), _) => r,
        (None, "seal") => "done",
        (None, _) => "not closed",
    }
}

fn oneline(out: &mut dyn Write, w: &Write1) -> std::io::Result<()> {
    write!(
        out,
        "{} {} {} by {} {}",
        when(w),
        text(&w.op),
        text(&w.run),
        text(&w.operator),
        result(w)
    )?;
    if let Some(why) = &w.why {
        write!(out, ": {}", sanitize(why, false))?;
    }
    if let Some(f) = &w.carried_from {
        write!(out, " (carried from {})", sanitize(f, false))?;
    }
    writeln!(out)
}

fn block(out: &mut dyn Write, w: &Write1) -> std::io::Result<()> {
    let head = match (&w.run, w.kind) {
        (_, "seal") => format!("seal {}", text(&w.root)),
        (Some(r), _) => format!("{} {}", text(&w.op), sanitize(r, false)),
        (None, _) => text(&w.op),
    };
    writeln!(out, "{head}  [{}]", result(w))?;
    writeln!(out, "Operator: {}", text(&w.operator))?;
    if let Some(n) = &w.nats_user {
        writeln!(out, "NATS user: {}", sanitize(n, false))?;
    }
    writeln!(out, "Date:     {}", when(w))?;
    if let Some(c) = &w.command {
        writeln!(out, "Command:  {}", sanitize(c, false))?;
    }
    let digest = |d: &Option<Digest>| match d {
        Some(d) => format!("{} record(s), SHA-256 {}", d.records, d.sha256),
        None => "no run".to_owned(),
    };
    if w.kind == "write" && w.run.is_some() {
        writeln!(out, "Before:   {}", digest(&w.before))?;
        writeln!(out, "After:    {}", digest(&w.after))?;
    }
    if let Some(s) = w.written {
        writeln!(out, "Written:  seq {s}")?;
    }
    if let Some(s) = w.removed {
        writeln!(out, "Removed:  seq {s}")?;
    }
    if let Some(d) = &w.detail {
        writeln!(out, "Detail:   {}", sanitize(d, false))?;
    }
    if let Some(e) = &w.error {
        writeln!(out, "Error:    {}", sanitize(e, false))?;
    }
    if let Some(f) = &w.carried_from {
        writeln!(out, "Carried from {}", sanitize(f, false))?;
    }
    if let Some(why) = &w.why {
        writeln!(out)?;
        for l in why.lines() {
            writeln!(out, "    {}", sanitize(l, false))?;
        }
    }
    writeln!(out)
}
