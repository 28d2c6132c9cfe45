//! `rm RUN... [--yes]`: delete runs (journal and lock), keeping each run's
//! bytes as a backup first (see `Store::delete`). Live runs are refused; on
//! a terminal it asks first unless `--yes`; without a terminal it needs
//! `--yes`. Every id is checked before anything is deleted.

use crate::cli::RmArgs;
use crate::error::{exit_of, CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, Format, Style};
use serde::Serialize;
use std::io::{self, BufRead, IsTerminal, Write};
use std::process::ExitCode;

/// One run deleted (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Removed {
    run: String,
    removed: Vec<String>,
    kept: Option<String>,
    /// The command that puts the run back, with this invocation's
    /// connection flags.
    restore: Option<String>,
    /// The run may not be gone entirely.
    warning: Option<String>,
}

/// What happened to one named run.
enum Deletion {
    Done(Removed),
    /// Not deleted: why, and the exit status that gives.
    Failed {
        run: String,
        error: String,
        exit: u8,
    },
}

pub fn run(g: &Invocation, mut a: RmArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = open_store(&crate::open::unheld(g, a.force))?;
    // A run named twice is deleted once.
    let mut seen = std::collections::HashSet::new();
    a.runs.retain(|r| seen.insert(r.clone()));
    for r in &a.runs {
        journal::id::check(r)?;
        if !store.exists(r)? {
            return Err(Failure::new(format!(
                "run {r} not found in {}; nothing was deleted",
                store.describe()
            ))
            .help(crate::hint::advice(
                g,
                journal::Remedy::List,
                None,
                None,
                &[],
            )));
        }
    }
    if !a.yes {
        confirm(&a.runs)?;
    }
    let deletions: Vec<Deletion> = a
        .runs
        .iter()
        .map(|r| match store.delete(r) {
            Ok(d) => Deletion::Done(Removed {
                run: r.clone(),
                removed: d.removed,
                kept: d.kept.map(|k| journal::shell::shown(&k)),
                restore: d.restore.as_ref().map(|r| crate::hint::restore(g, r)),
                warning: d.warning,
            }),
            Err(e) => Deletion::Failed {
                run: r.clone(),
                exit: exit_of(&e),
                error: crate::error::describe(g, &e),
            },
        })
        .collect();
    render(out, &deletions, style)?;
    // The exit status: 1 when every failure was a refusal (a live run) or
    // a warning, 2 when something could not be done (CLI.md).
    let exit = deletions
        .iter()
        .map(|d| match d {
            Deletion::Done(r) if r.warning.is_some() => 1,
            Deletion::Done(_) => 0,
            Deletion::Failed { exit, .. } => *exit,
        })
        .max()
        .unwrap_or(0);
    Ok(ExitCode::from(exit))
}

/// Ask on the terminal; without one, refuse.
fn confirm(runs: &[String]) -> Result<(), Failure> {
    if !std::io::stdin().is_terminal() {
        return Err(Failure::refused(
            "rm deletes runs (keeping a backup of each) and there is no terminal to ask on; nothing was deleted",
        )
        .help("pass --yes to delete without asking"));
    }
    eprint!("delete {} run(s): {}? [y/N] ", runs.len(), runs.join(", "));
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::new(format!("reading the answer: {e}")))?;
    if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        return Err(Failure::refused("not confirmed; nothing was deleted"));
    }
    Ok(())
}

/// What was removed and kept, per run; warnings and failures on stderr in
/// either format. JSON lists only the runs deleted.
fn render(out: &mut dyn Write, deletions: &[Deletion], style: Style) -> io::Result<()> {
    for d in deletions {
        match d {
            Deletion::Done(r) => {
                if style.format == Format::Text {
                    for p in &r.removed {
                        writeln!(out, "removed {}", sanitize(p, false))?;
                    }
                    if let Some(k) = &r.kept {
                        writeln!(out, "kept    {}", sanitize(k, false))?;
                    }
                    if let Some(c) = &r.restore {
                        writeln!(out, "restore with: {}", sanitize(c, false))?;
                    }
                }
                if let Some(w) = &r.warning {
                    eprintln!("fisk-admin: warning: {}", sanitize(w, false));
                }
            }
            Deletion::Failed { run, error, .. } => {
                crate::error::say(&format!("{error}; run {run} was not deleted"), None, style)
            }
        }
    }
    if style.format == Format::Json {
        let removed: Vec<&Removed> = deletions
            .iter()
            .filter_map(|d| match d {
                Deletion::Done(r) => Some(r),
                Deletion::Failed { .. } => None,
            })
            .collect();
        json_pretty(out, &sorted(&removed)?)?;
    }
    Ok(())
}
