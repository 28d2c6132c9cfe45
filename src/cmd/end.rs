//! `end [RUN...] [ls filters] [--older-than DUR]`: close runs that crashed
//! and will never resume with one `terminal` record the agent reads (SPEC
//! 6.1, the agent's "terminate"), so `ls` stops showing them open.
//!
//! The write rules are the library's (`journal::ops::end`): every check is
//! made with no lock, so a refusal leaves the journal exactly as it was;
//! then exactly one record is written. This command selects the runs (by
//! name, or by the filters `ls` takes and the age of their last record),
//! lists what it would end, asks on a terminal (or needs `--yes`), and
//! renders the outcome. `--dry-run` lists and writes nothing.
//!
//! The message is the operator's words, stored exactly: without
//! `--message` the record carries none, never words of ours presented as
//! theirs.

use crate::cli::{EndArgs, EndReason};
use crate::error::{exit_of, CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize};
use journal::fold::Status;
use journal::ops::end::{prepare, Open, Request};
use journal::record::Reason;
use journal::store::{Breaker, Listed, Store, Summary};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One run's outcome (`schemas/output/end.json`).
#[derive(Serialize)]
struct Row {
    run: String,
    /// `ended`, `would-end`, `refused` or `failed`.
    outcome: &'static str,
    /// The run's format version, when it was read.
    version: Option<i64>,
    /// The terminal's seq (written, or that would be written).
    seq: Option<u64>,
    reason: String,
    message: Option<String>,
    /// The calls a person was asked about that ending it drops
    /// (`--even-if-waiting`).
    waiting_on: Vec<String>,
    /// The record as stored (`ended` only).
    record: Option<serde_json::Value>,
    error: Option<String>,
    /// The last seq the run had when it was checked (what was listed).
    #[serde(skip)]
    last_seq: Option<u64>,
    #[serde(skip)]
    exit: u8,
    /// Not attempted: an earlier run failed on the store (said once).
    #[serde(skip)]
    skipped: bool,
}

pub fn run(g: &Invocation, a: EndArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(&crate::open::unheld(g, a.force))?;
    let runs = select(g, &store, &a)?;
    let reason = reason_of(a.reason);
    let base = Request {
        run: "",
        reason: &reason,
        message: a.message.as_deref(),
        even_if_waiting: a.even_if_waiting,
        seen: None,
    };
    // Checked with no lock; nothing is kept of a run but what was shown,
    // so thousands of journals are not held in memory until the answer.
    // A store failure stops the batch (issue 36.4): the rest would each
    // wait out the same timeout.
    let breaker = Breaker::default();
    let planned: Vec<Row> = runs
        .par_iter()
        .map(|r| {
            let checked = breaker.run(r, || {
                prepare(&store, &Request { run: r, ..base }).map(|p| p.open().clone())
            });
            row(g, &a, r, checked.map(|o| (o, None)), "would-end")
        })
        .collect();
    let to_end: Vec<&Row> = planned
        .iter()
        .filter(|r| r.outcome == "would-end")
        .collect();
    let rows = if a.dry_run || to_end.is_empty() {
        planned
    } else {
        if !a.yes {
            confirm(&to_end, &a)?;
        }
        planned
            .into_par_iter()
            .map(|p| match p.outcome {
                // Written only if the run is still as it was listed.
                "would-end" => {
                    let seen = p.last_seq;
                    let done = breaker.run(&p.run, || {
                        prepare(
                            &store,
                            &Request {
                                run: &p.run,
                                seen,
                                ..base
                            },
                        )
                        .and_then(|p| p.commit())
                        .map(|e| (e.open, Some(e.written.line)))
                    });
                    row(g, &a, &p.run, done, "ended")
                }
                _ => p,
            })
            .collect()
    };
    let exit = rows.iter().map(|r| r.exit).max().unwrap_or(0);
    match style.json() {
        true => json_pretty(out, &rows)?,
        false => render(out, &rows, &a, style)?,
    }
    let skipped = rows.iter().filter(|r| r.skipped).count();
    crate::batch::say_stopped(&breaker, skipped, "end", style);
    Ok(ExitCode::from(exit))
}

/// The runs named (each checked to exist), or the open runs of the store
/// the filters select; either narrowed by the filters and `--older-than`.
fn select(g: &Invocation, store: &Store, a: &EndArgs) -> Result<Vec<String>, Failure> {
    let cutoff = match a.older_than {
        Some(d) => Some(journal::time::Time::now().checked_sub(d).ok_or_else(|| {
            Failure::new("--older-than reaches before the earliest time there is")
        })?),
        None => None,
    };
    let narrowed = a.filter.any() || cutoff.is_some();
    let keep = |s: &Summary| match cutoff {
        // A run whose last record has no time is left out, as --active-until leaves it.
        Some(c) => s.updated.is_some_and(|u| u < c),
        None => true,
    };
    if a.runs.is_empty() {
        if !narrowed {
            return Err(Failure::new("no run named and no filter given").help(
                "name the runs to end, or select them: --status open --older-than 7d (--dry-run lists them)",
            ));
        }
        let selected = a.filter.select(store.summaries()?);
        if selected.no_agent_excluded > 0 {
            eprintln!(
                "fisk-admin: note: {}",
                crate::filter::excluded_note(selected.no_agent_excluded)
            );
        }
        let mut all = selected.runs;
        // Only an open run has anything to end.
        all.retain(|s| s.status == Listed::Run(Status::Open) && keep(s));
        return Ok(all.into_iter().map(|s| s.run_id).collect());
    }
    let mut runs = crate::runs::named(g, store, &a.runs, "nothing was written")?;
    if narrowed {
        let summaries: Vec<Summary> = runs.iter().map(|r| store.summary(r)).collect();
        let chosen = a.filter.select(summaries).runs;
        runs = chosen
            .into_iter()
            .filter(|s| keep(s))
            .map(|s| s.run_id)
            .collect();
    }
    Ok(runs)
}

fn reason_of(r: EndReason) -> Reason {
    match r {
        EndReason::Completed => Reason::Completed,
        EndReason::Suspended => Reason::Suspended,
        EndReason::Error => Reason::Error,
        EndReason::Budget => Reason::Budget,
        EndReason::MaxIterations => Reason::MaxIterations,
    }
}

/// A run's row: `outcome` when the library said yes (with the record
/// written, if one was), else refused or failed.
fn row(
    g: &Invocation,
    a: &EndArgs,
    run: &str,
    done: journal::Result<(Open, Option<Vec<u8>>)>,
    outcome: &'static str,
) -> Row {
    let base = Row {
        run: run.to_owned(),
        outcome,
        version: None,
        seq: None,
        reason: reason_of(a.reason).as_str().to_owned(),
        message: a.message.clone(),
        waiting_on: Vec::new(),
        record: None,
        error: None,
        last_seq: None,
        exit: 0,
        skipped: false,
    };
    match done {
        Ok((open, line)) => Row {
            version: Some(open.version),
            seq: Some(open.last_seq.saturating_add(1)),
            last_seq: Some(open.last_seq),
            waiting_on: open.waiting_on,
            record: line.and_then(|l| serde_json::from_slice(&l).ok()),
            ..base
        },
        Err(e) => {
            let exit = exit_of(&e);
            Row {
                outcome: if exit == 1 { "refused" } else { "failed" },
                error: Some(crate::error::describe(g, &e)),
                exit,
                skipped: crate::batch::not_attempted(&e),
                ..base
            }
        }
    }
}

/// What the terminal says, for the listing and the question.
fn what(a: &EndArgs) -> String {
    let reason = reason_of(a.reason);
    match &a.message {
        Some(m) => format!(
            "reason {}, message {:?}",
            reason.as_str(),
            sanitize(m, false)
        ),
        None => format!("reason {}, no message", reason.as_str()),
    }
}

/// Ask on the terminal; without one, refuse.
fn confirm(rows: &[&Row], a: &EndArgs) -> Result<(), Failure> {
    let lines: Vec<String> = rows.iter().map(|r| format!("  {}", line(r))).collect();
    crate::ask::confirm(
        &lines,
        &format!("end {} run(s) with {}?", rows.len(), what(a)),
        "end writes a terminal record to each run and there is no terminal to ask on; nothing was written",
        "pass --yes to end them without asking, or --dry-run to list them",
        "nothing was written",
    )
}

/// One run as listed: its id, version, the terminal's seq, what it waits on.
fn line(r: &Row) -> String {
    let mut s = format!(
        "{} (version {}, seq {})",
        sanitize(&r.run, false),
        r.version.unwrap_or(0),
        r.seq.unwrap_or(0)
    );
    if !r.waiting_on.is_empty() {
        let calls: Vec<String> = r
            .waiting_on
            .iter()
            .map(|c| sanitize(c, false).into_owned())
            .collect();
        s.push_str(&format!(
            "; it waits on a person ({}), which is dropped",
            calls.join(", ")
        ));
    }
    s
}

fn render(
    out: &mut dyn Write,
    rows: &[Row],
    a: &EndArgs,
    style: crate::output::Style,
) -> std::io::Result<()> {
    for r in rows {
        match r.outcome {
            "ended" => writeln!(out, "ended {}", line(r))?,
            "would-end" => writeln!(out, "would end {}", line(r))?,
            _ if r.skipped => {}
            _ => crate::error::say(r.error.as_deref().unwrap_or("failed"), None, style),
        }
    }
    let count = |o: &str| rows.iter().filter(|r| r.outcome == o).count();
    let done = count("ended") + count("would-end");
    match (rows.is_empty(), a.dry_run) {
        (true, _) => writeln!(out, "no run selected; nothing was written"),
        (false, true) => writeln!(
            out,
            "{} run(s): {done} would be ended with {}, {} refused, {} failed; dry run, nothing was written",
            rows.len(),
            what(a),
            count("refused"),
            count("failed")
        ),
        (false, false) => writeln!(
            out,
            "{} run(s): {done} ended with {}, {} refused, {} failed",
            rows.len(),
            what(a),
            count("refused"),
            count("failed")
        ),
    }
}
