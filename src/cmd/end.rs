//! `end [RUN...] [ls filters] [--older-than DUR]`: close runs that crashed
//! and will never resume with one `terminal` record the agent reads (SPEC
//! 6.1, the agent's "terminate"), so `ls` stops showing them open.
//!
//! The write rules are the library's (`journal::ops::end`, and the run
//! model's table, `journal::state`): every check is made with no lock, so
//! a refusal leaves the journal exactly as it was; then exactly one record
//! is written. This command selects the runs (by name, or by the filters
//! `ls` takes and the age of their last record), leaves to a person every
//! run a filter selected that waits on one or is ready to resume (and says
//! so), lists what it would end, asks on a terminal (or needs `--yes`),
//! and renders the outcome. `--dry-run` makes every check the real command
//! makes and writes nothing.
//!
//! The message is the operator's words, stored exactly; without
//! `--message` it is ours, and says so ([`ENDED_BY`]), so that a run the
//! night's cleanup closed is told from a provider's failure in `ls
//! --status error` (issue 39, d-28); `--message ''` leaves it out.

use crate::cli::{EndArgs, EndReason};
use crate::error::{exit_of, CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize};
use journal::ops::end::{prepare, Open, Request};
use journal::record::Reason;
use journal::state::{Op, State};
use journal::store::{Breaker, Store, Summary};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One run's outcome (`schemas/output/end.json`).
#[derive(Serialize)]
struct Row {
    run: String,
    /// `ended`, `would-end`, `refused`, `failed`, or `left` (a filter
    /// selected it, and it holds a person's act).
    outcome: &'static str,
    /// Where the run stands (`left` rows).
    state: Option<String>,
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

/// The terminal's message when the operator gives none: fisk-admin's
/// words, naming it.
pub const ENDED_BY: &str = "ended by fisk-admin end: no writer finished the run";

pub fn run(g: &Invocation, mut a: EndArgs, out: &mut dyn Write) -> CmdResult {
    if a.message.is_none() {
        a.message = Some(ENDED_BY.to_owned());
    }
    let style = g.style;
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let (runs, left) = select(g, &store, &a)?;
    let reason = reason_of(a.reason);
    let base = Request {
        run: "",
        reason: &reason,
        message: a.message.as_deref(),
        named: !a.runs.is_empty(),
        force: a.force || a.even_if_waiting,
        seen: None,
    };
    // Checked with no lock; nothing is kept of a run but what was shown,
    // so thousands of journals are not held in memory until the answer.
    // A store failure stops the batch (issue 36.4): the rest would each
    // wait out the same timeout.
    let breaker = Breaker::default();
    let mut planned: Vec<Row> = runs
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
    let rows = if a.write.dry_run || to_end.is_empty() {
        planned
    } else {
        if !a.write.yes {
            confirm(&to_end, &a, left.len())?;
        }
        planned = planned
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
            .collect();
        planned
    };
    let exit = rows.iter().map(|r| r.exit).max().unwrap_or(0);
    let skipped = rows.iter().filter(|r| r.skipped).count();
    if style.json() {
        let mut all = rows;
        all.extend(left.iter().map(|s| left_row(&a, s)));
        json_pretty(out, &all)?;
    } else {
        render(out, &rows, &left, &a, style)?;
    }
    crate::batch::say_stopped(&breaker, skipped, "end", style);
    Ok(ExitCode::from(exit))
}

/// The runs named (each checked to exist), or the open runs of the store
/// the filters select; either narrowed by the filters and `--older-than`.
/// A selection by filter leaves to a person the runs that wait on one or
/// are ready to resume (the second list); named runs are all checked.
fn select(
    g: &Invocation,
    store: &Store,
    a: &EndArgs,
) -> Result<(Vec<String>, Vec<Summary>), Failure> {
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
        // Only an open run has anything to end: one that crashed (a
        // damaged or live one is listed, and refused with its way out),
        // or one a person must see to, which is left to them. A run the
        // agent calls open that is at rest by its terminal (a memory
        // revision or a decision after it) is not.
        all.retain(|s| {
            keep(s)
                && (s.state.holds_a_persons_act()
                    || matches!(s.state, State::Open | State::Damaged | State::Live(_)))
        });
        let (mut take, left) = crate::filter::leave_to_a_person(Op::End, all);
        // --limit: the longest inactive first.
        if a.limit.limit.is_some() {
            take.sort_by(|x, y| x.updated.cmp(&y.updated).then(x.run_id.cmp(&y.run_id)));
            a.limit.apply(&mut take);
        }
        return Ok((take.into_iter().map(|s| s.run_id).collect(), left));
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
    Ok((runs, Vec::new()))
}

/// A run a filter selected and `end` left to a person.
fn left_row(a: &EndArgs, s: &Summary) -> Row {
    Row {
        state: Some(s.state.word().to_owned()),
        version: s.version,
        last_seq: s.records,
        ..base_row(a, &s.run_id, "left")
    }
}

/// A row of `run` with `outcome` and nothing else known yet.
fn base_row(a: &EndArgs, run: &str, outcome: &'static str) -> Row {
    Row {
        run: run.to_owned(),
        outcome,
        state: None,
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
    }
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
    let base = base_row(a, run, outcome);
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
fn confirm(rows: &[&Row], a: &EndArgs, left: usize) -> Result<(), Failure> {
    let mut lines: Vec<String> = rows.iter().map(|r| format!("  {}", line(r))).collect();
    if left > 0 {
        lines.push(format!(
            "  ({left} more run(s) left to a person: they wait on one, or are ready to resume)"
        ));
    }
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
    left: &[Summary],
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
    if let Some(n) = crate::filter::left_note(Op::End, left) {
        writeln!(out, "{n}")?;
    }
    let count = |o: &str| rows.iter().filter(|r| r.outcome == o).count();
    let done = count("ended") + count("would-end");
    let of = rows.len() + left.len();
    let left_words = match left.len() {
        0 => String::new(),
        n => format!(", {n} left to a person"),
    };
    match (of == 0, a.write.dry_run) {
        (true, _) => writeln!(out, "no run selected; nothing was written"),
        (false, true) => writeln!(
            out,
            "{of} run(s): {done} would be ended with {}, {} refused, {} failed{left_words}; dry run, nothing was written",
            what(a),
            count("refused"),
            count("failed")
        ),
        (false, false) => writeln!(
            out,
            "{of} run(s): {done} ended with {}, {} refused, {} failed{left_words}",
            what(a),
            count("refused"),
            count("failed")
        ),
    }
}
