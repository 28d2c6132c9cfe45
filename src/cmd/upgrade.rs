//! `upgrade [RUN...|--all] [--dry-run]`: convert version-3 journals (the
//! August 2026 agent) to version 1 so the current agent resumes them (SPEC
//! 12; `journal::upgrade` and each backend's module say how it is done and
//! why it is crash-safe). One run's refusal never stops the others; a
//! failure of the store as a whole stops the batch, the rest reported as
//! not attempted.

use crate::cli::UpgradeArgs;
use crate::error::{exit_of, CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize};
use journal::state::Ask;
use journal::store::{Breaker, Store};
use journal::upgrade::Outcome;
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One run's result (`schemas/output/upgrade.json`).
#[derive(Serialize)]
struct Row {
    run: String,
    /// `upgraded`, `current`, `would-upgrade`, `refused`, `failed`, or
    /// `left` (`--all` selected it, and it holds a person's act).
    outcome: &'static str,
    /// Where a `left` run stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    records: Option<usize>,
    kept: Option<String>,
    /// A previous, interrupted upgrade of the run was finished.
    resumed: bool,
    error: Option<String>,
    /// Not started: an earlier run failed on the store (said once in text).
    #[serde(skip)]
    skipped: bool,
}

pub fn run(g: &Invocation, a: UpgradeArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = crate::audit::writer(
        open_store(g)?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    // With --all, thousands of version-1 runs would bury the rest.
    let quiet_current = a.all;
    let runs = match (a.all, a.runs.is_empty()) {
        (true, true) => store.runs()?,
        (false, false) => {
            let mut seen = std::collections::HashSet::new();
            let runs: Vec<String> = a
                .runs
                .into_iter()
                .filter(|r| seen.insert(r.clone()))
                .collect();
            for r in &runs {
                journal::id::check(r)?;
            }
            runs
        }
        (true, false) => {
            return Err(Failure::new("name runs or pass --all, not both"));
        }
        (false, true) => {
            return Err(Failure::new("no run named").help(
                "name the runs to upgrade, or pass --all to upgrade every version-3 run in the store",
            ));
        }
    };
    let hold = g.hold;
    // `--all` is a selection: it leaves to a person every version-3 run
    // that waits on one or is ready to resume; a named one is taken with
    // --force.
    let ask = Ask {
        named: !a.all,
        force: a.force,
    };
    // A store-wide failure (the server gone) stops the batch
    // (journal::store::Breaker): every further run would wait out its own
    // timeout.
    let breaker = Breaker::default();
    let upgrade_all = |dry_run: bool| -> Vec<(Row, u8)> {
        runs.par_iter()
            .map(|r| one(g, &store, &breaker, r, dry_run, hold, ask))
            .collect()
    };
    // What the batch needs of the stream, asked once before any run is
    // touched: a stream without rollups refuses every upgrade alike.
    let rollups_off = store.rollup_refusal().map(|off| off.stream);
    let mut refusal = None;
    let rows = match rollups_off {
        None => upgrade_all(a.write.dry_run),
        Some(stream) => {
            let planned = upgrade_all(true);
            let need = planned
                .iter()
                .filter(|(r, _)| r.outcome == "would-upgrade")
                .count();
            match (need, a.write.dry_run) {
                // Nothing needs a rollup: planning was all there was to do.
                (0, _) => planned,
                (need, dry_run) => {
                    let f = no_rollups(g, &stream, need, runs.len());
                    if !dry_run {
                        return Err(f);
                    }
                    refusal = Some(f);
                    planned
                }
            }
        }
    };
    let mut exit = rows.iter().map(|(_, e)| *e).max().unwrap_or(0);
    if refusal.is_some() {
        exit = exit.max(1);
    }
    let rows: Vec<Row> = rows.into_iter().map(|(r, _)| r).collect();
    // A dry run says once what the real one would refuse.
    let say_refusal = || {
        if let Some(f) = &refusal {
            crate::error::say(
                &format!("the upgrade would be refused: {}", f.message),
                f.help.as_deref(),
                style,
            );
        }
    };
    let skipped = rows.iter().filter(|r| r.skipped).count();
    if style.json() {
        json_pretty(out, &rows)?;
        crate::batch::say_stopped(&breaker, skipped, "upgrade", style);
        say_refusal();
        return Ok(ExitCode::from(exit));
    }
    let count = |o: &str| rows.iter().filter(|r| r.outcome == o).count();
    for r in &rows {
        let run = sanitize(&r.run, false);
        match r.outcome {
            "upgraded" => {
                let kept = sanitize(r.kept.as_deref().unwrap_or("-"), false).into_owned();
                let resumed = if r.resumed {
                    " (an interrupted upgrade, finished)"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "upgraded {run}: version 3 -> 1, {} records{resumed}; the original is kept at {kept}",
                    r.records.unwrap_or(0)
                )?;
            }
            "would-upgrade" => writeln!(
                out,
                "would upgrade {run}: version 3 -> 1, {} records",
                r.records.unwrap_or(0)
            )?,
            // With --all, thousands of current runs would bury the rest.
            "current" if quiet_current => {}
            "current" => writeln!(out, "{run} is version 1 already; left alone")?,
            "left" => {}
            _ if r.skipped => {}
            _ => crate::error::say(r.error.as_deref().unwrap_or("failed"), None, style),
        }
    }
    let left: Vec<&str> = rows
        .iter()
        .filter(|r| r.outcome == "left")
        .map(|r| r.run.as_str())
        .collect();
    if !left.is_empty() {
        writeln!(
            out,
            "left {} run(s) to a person: a filter never takes a run that waits on a person or is ready to resume; upgrade takes one only when it is named, with --force: {}",
            left.len(),
            left.iter()
                .map(|r| sanitize(r, false).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    crate::batch::say_stopped(&breaker, skipped, "upgrade", style);
    writeln!(
        out,
        "{} run(s): {} {}, {} already version 1, {} refused, {} failed{}",
        rows.len(),
        count("upgraded") + count("would-upgrade"),
        if a.write.dry_run {
            "would be upgraded"
        } else {
            "upgraded"
        },
        count("current"),
        count("refused"),
        count("failed"),
        match count("left") {
            0 => String::new(),
            n => format!(", {n} left to a person"),
        },
    )?;
    say_refusal();
    Ok(ExitCode::from(exit))
}

/// Upgrade (or, on a dry run, plan) one run, unless the batch stopped:
/// its row and exit status.
fn one(
    g: &Invocation,
    store: &Store,
    breaker: &Breaker,
    run: &str,
    dry_run: bool,
    hold: std::time::Duration,
    ask: Ask,
) -> (Row, u8) {
    match breaker.run(run, || store.upgrade(run, dry_run, hold, ask.force, ask)) {
        Ok(o) => (row(run, o), 0),
        // Selected by --all and holding a person's act: left to them, and
        // counted (not a refusal: nothing asked for it by name).
        Err(e)
            if e.refusal()
                .and_then(|r| r.state())
                .is_some_and(|r| r.by_filter && r.forcible) =>
        {
            (
                Row {
                    run: run.to_owned(),
                    outcome: "left",
                    state: e.refusal().and_then(|r| r.state()).map(|r| r.state.word()),
                    records: None,
                    kept: None,
                    resumed: false,
                    error: None,
                    skipped: false,
                },
                0,
            )
        }
        Err(e) => {
            let exit = exit_of(&e);
            let outcome = if exit == 1 { "refused" } else { "failed" };
            (
                Row {
                    run: run.to_owned(),
                    outcome,
                    state: None,
                    records: None,
                    kept: None,
                    resumed: false,
                    error: Some(crate::error::describe(g, &e)),
                    skipped: crate::batch::not_attempted(&e),
                },
                exit,
            )
        }
    }
}

/// The one refusal of a batch on a stream without rollups, with the
/// commands that allow them and forbid them again.
fn no_rollups(g: &Invocation, stream: &str, need: usize, of: usize) -> Failure {
    let edit = |flag: &str| crate::hint::command(g, &["stream", "edit", stream, flag]);
    Failure::refused(format!(
        "stream {stream} does not allow rollups, which upgrade needs to replace a run's meta record in place; {need} of {of} run(s) need upgrading; nothing was changed"
    ))
    .help(format!(
        "allow them with `{}`, run the upgrade again, then forbid them with `{}` to keep records write-once",
        edit("--allow-rollup"),
        edit("--no-allow-rollup")
    ))
}

fn row(run: &str, o: Outcome) -> Row {
    let base = Row {
        run: run.to_owned(),
        outcome: "current",
        state: None,
        records: None,
        kept: None,
        resumed: false,
        error: None,
        skipped: false,
    };
    match o {
        Outcome::Current => base,
        Outcome::Would { records } => Row {
            outcome: "would-upgrade",
            records: Some(records),
            ..base
        },
        Outcome::Upgraded {
            records,
            kept,
            resumed,
        } => Row {
            outcome: "upgraded",
            records: Some(records),
            kept: Some(journal::shell::shown(&kept)),
            resumed,
            ..base
        },
    }
}
