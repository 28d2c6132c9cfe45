//! `rm RUN... [--yes]`: delete runs (journal and lock), keeping each run's
//! bytes as a backup first (see `Store::delete`). Live runs are refused; on
//! a terminal it asks first unless `--yes`; without a terminal it needs
//! `--yes`. Every id is checked before anything is deleted.
//!
//! With filters (`ls`'s, and `--older-than`) the runs are selected from the
//! store's listing (a summary each, no journal read in full), listed and
//! asked about; `--dry-run` lists them and deletes nothing.

use crate::cli::RmArgs;
use crate::error::{exit_of, CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, sorted, Format, Style};
use journal::state::{Ask, Op};
use journal::store::{Store, Summary};
use serde::Serialize;
use std::io::{self, Write};
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
    /// The backup's id for `backups prune` (file backend: its file name).
    #[serde(skip)]
    kept_id: Option<String>,
    /// The backup is the journal under a second name (file backend): it
    /// frees no disk until pruned.
    #[serde(skip)]
    linked: bool,
}

/// What happened to one named run.
enum Deletion {
    Done(Removed),
    /// Not deleted: why, and the exit status that gives.
    Failed {
        run: String,
        error: String,
        exit: u8,
        /// Not attempted: an earlier run failed on the store (said once).
        skipped: bool,
    },
}

pub fn run(g: &Invocation, mut a: RmArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    // What deleting needs of the stream, asked before any run is touched
    // (a dry run too): a run fenced and then not purged is left ending in
    // a fence no writer appends after (issue 36.3).
    if let Some(why) = store.purge_refusal("rm") {
        return Err(Failure::refused(why));
    }
    let filtered = a.filter.any() || a.older_than.is_some();
    if !filtered && a.runs.is_empty() {
        return Err(Failure::new("no run named").help(
            "name the runs to delete, or select them with the filters ls takes (--status, --match ...) and --older-than DUR",
        ));
    }
    // A run named twice is deleted once.
    let named = !a.runs.is_empty();
    a.runs = crate::runs::named(g, &store, &a.runs, "nothing was deleted")?;
    // With filters, the runs are what they select (of those named, when
    // any are); the selection is listed before it is asked about. A
    // selection by filter alone leaves to a person every run that waits on
    // one or is ready to resume.
    let (selection, left) = match filtered {
        true => {
            let sel = select(&store, &a)?;
            match named {
                true => (Some(sel), Vec::new()),
                false => {
                    let (take, left) = crate::filter::leave_to_a_person(Op::Remove, sel);
                    (Some(take), left)
                }
            }
        }
        false => (None, Vec::new()),
    };
    if let Some(sel) = &selection {
        a.runs = sel.iter().map(|s| s.run_id.clone()).collect();
    }
    let ask = Ask {
        named,
        force: a.force,
    };
    let by_created = a.filter.since.is_some() || a.filter.until.is_some();
    if a.write.dry_run {
        let times = |run: &str| {
            selection
                .as_ref()
                .and_then(|sel| sel.iter().find(|s| s.run_id == run))
                .map(|s| when(s, by_created))
        };
        let what = Selection {
            runs: &a.runs,
            left: &left,
            times: &times,
        };
        return dry_run(g, &store, out, what, ask, style);
    }
    if let Some(n) = crate::filter::left_note(Op::Remove, &left) {
        eprintln!("fisk-admin: note: {n}");
    }
    if a.runs.is_empty() {
        match style.format {
            Format::Json => writeln!(out, "[]")?,
            Format::Text => writeln!(out, "no run selected; nothing was deleted")?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !a.write.yes {
        match &selection {
            None => confirm(&a.runs)?,
            Some(sel) => crate::ask::confirm(
                &sel.iter().map(|s| line(s, by_created)).collect::<Vec<_>>(),
                &format!("delete these {} run(s)?", sel.len()),
                NO_TERMINAL,
                "pass --yes to delete without asking, or --dry-run to list only",
                "nothing was deleted",
            )?,
        }
    }
    // A store failure stops the batch (issue 36.4).
    let breaker = journal::store::Breaker::default();
    let started = journal::time::Time::now();
    let deletions: Vec<Deletion> =
        journal::ops::remove::delete_each(&store, &a.runs, ask, &breaker)
            .into_iter()
            .map(|(r, done)| match done {
                Ok(d) => Deletion::Done(Removed {
                    run: r.clone(),
                    removed: d.removed,
                    kept_id: d
                        .kept
                        .as_ref()
                        .and_then(|k| k.file_name())
                        .and_then(|n| n.to_str())
                        .map(str::to_owned),
                    linked: matches!(d.restore, Some(journal::store::Restore::Link { .. })),
                    kept: d.kept.map(|k| journal::shell::shown(&k)),
                    restore: d.restore.as_ref().map(|r| crate::hint::restore(g, r)),
                    warning: d.warning,
                }),
                Err(e) => Deletion::Failed {
                    run: r.clone(),
                    exit: exit_of(&e),
                    error: crate::error::describe(g, &e),
                    skipped: crate::batch::not_attempted(&e),
                },
            })
            .collect();
    render(out, &deletions, style)?;
    let skipped = deletions
        .iter()
        .filter(|d| matches!(d, Deletion::Failed { skipped: true, .. }))
        .count();
    crate::batch::say_stopped(&breaker, skipped, "rm", style);
    if style.format == Format::Text {
        not_freed(g, out, &deletions, started)?;
    }
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

/// Why `rm` asks nothing without a terminal.
const NO_TERMINAL: &str =
    "rm deletes runs (keeping a backup of each) and there is no terminal to ask on; nothing was deleted";

/// Ask on the terminal about the runs named; without one, refuse.
fn confirm(runs: &[String]) -> Result<(), Failure> {
    crate::ask::confirm(
        &[],
        &format!("delete {} run(s): {}?", runs.len(), runs.join(", ")),
        NO_TERMINAL,
        "pass --yes to delete without asking",
        "nothing was deleted",
    )
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
            Deletion::Failed { skipped: true, .. } => {}
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

/// The runs of the store the filters select, of those named when any are,
/// in the listing's order.
fn select(store: &Store, a: &RmArgs) -> Result<Vec<Summary>, Failure> {
    let mut runs = a.filter.select(store.summaries()?).runs;
    if !a.runs.is_empty() {
        runs.retain(|s| a.runs.contains(&s.run_id));
    }
    if let Some(d) = a.older_than {
        journal::ops::remove::older_than(&mut runs, d, journal::time::Time::now());
    }
    // --limit: the longest inactive first.
    if a.limit.limit.is_some() {
        runs.sort_by(|x, y| x.updated.cmp(&y.updated).then(x.run_id.cmp(&y.run_id)));
        a.limit.apply(&mut runs);
    }
    Ok(runs)
}

/// One run of a selection, as listed before the question and by a dry run.
fn line(s: &Summary, created: bool) -> String {
    format!(
        "  {}  {}  {}{}",
        sanitize(&s.run_id, false),
        s.status,
        when(s, created),
        if s.live { "  (live: refused)" } else { "" }
    )
}

/// The times a selection went by (issue 39, d-9): `created` when the
/// window (`--since`/`--until`, on the run's created) chose it, and its
/// last activity, which `--older-than` and `--active-*` go by.
fn when(s: &Summary, created: bool) -> String {
    let last = format!(
        "last activity {}",
        crate::output::time_cell(s.updated.as_ref())
    );
    match created {
        true => format!(
            "created {}, {last}",
            crate::output::time_cell(s.created.as_ref())
        ),
        false => last,
    }
}

/// What a dry run goes through: the runs to check, those left to a
/// person, and the times each was selected by.
struct Selection<'a> {
    runs: &'a [String],
    left: &'a [Summary],
    times: &'a dyn Fn(&str) -> Option<String>,
}

/// One run a dry run would delete, or would refuse (`--dry-run -o json`).
#[derive(Serialize)]
struct Would {
    run: String,
    /// `would-delete`, `refused` (the real rm would refuse it too), or
    /// `left` (a filter selected it, and it holds a person's act).
    outcome: &'static str,
    state: Option<String>,
    error: Option<String>,
}

/// `--dry-run`: every check the real `rm` makes, on each run; what it
/// would delete, refuse and leave to a person. Nothing is deleted.
fn dry_run(
    g: &Invocation,
    store: &Store,
    out: &mut dyn Write,
    what: Selection,
    ask: Ask,
    style: Style,
) -> CmdResult {
    let Selection { runs, left, times } = what;
    let mut exit = 0u8;
    let mut would: Vec<Would> = runs
        .iter()
        .map(|r| match journal::ops::remove::check(store, r, ask) {
            Ok(state) => Would {
                run: r.clone(),
                outcome: "would-delete",
                state: Some(state.word().to_owned()),
                error: None,
            },
            Err(e) => {
                exit = exit.max(exit_of(&e));
                Would {
                    run: r.clone(),
                    outcome: "refused",
                    state: None,
                    error: Some(crate::error::describe(g, &e)),
                }
            }
        })
        .collect();
    let deleted = would.iter().filter(|w| w.outcome == "would-delete").count();
    let refused = would.len() - deleted;
    would.extend(left.iter().map(|s| Would {
        run: s.run_id.clone(),
        outcome: "left",
        state: Some(s.state.word().to_owned()),
        error: None,
    }));
    match style.format {
        Format::Json => json_pretty(out, &sorted(&would)?)?,
        Format::Text => {
            for w in &would {
                match (w.outcome, &w.error) {
                    ("would-delete", _) => writeln!(
                        out,
                        "would delete  {}  {}{}",
                        sanitize(&w.run, false),
                        w.state.as_deref().unwrap_or(""),
                        times(&w.run).map_or_else(String::new, |t| format!("  {t}"))
                    )?,
                    (_, Some(e)) => crate::error::say(e, None, style),
                    _ => {}
                }
            }
            if let Some(n) = crate::filter::left_note(Op::Remove, left) {
                writeln!(out, "{n}")?;
            }
            writeln!(
                out,
                "{deleted} run(s) would be deleted, {refused} refused, {} left to a person (dry run); nothing was deleted",
                left.len()
            )?;
        }
    }
    Ok(ExitCode::from(exit))
}

/// On the file backend a deleted run's backup is its journal under a
/// second name: nothing of the disk is freed until the backup is pruned.
/// Says so, with the prune that frees it.
fn not_freed(
    g: &Invocation,
    out: &mut dyn Write,
    deletions: &[Deletion],
    started: journal::time::Time,
) -> io::Result<()> {
    let kept: Vec<String> = deletions
        .iter()
        .filter_map(|d| match d {
            Deletion::Done(r) if r.linked => r.kept_id.clone(),
            _ => None,
        })
        .collect();
    if kept.is_empty() {
        return Ok(());
    }
    // One short command (issue 39, d-11): this rm's backups are the rm
    // backups kept since it started (a name for each run, past a few,
    // made a line of thousands of characters).
    let since = started.to_rfc3339_seconds();
    let argv: Vec<&str> = match kept.len() {
        1..=3 => ["backups", "prune"]
            .into_iter()
            .chain(kept.iter().map(String::as_str))
            .collect(),
        _ => vec!["backups", "prune", "--kind", "rm", "--since", &since],
    };
    writeln!(
        out,
        "no disk was freed: each backup is the journal under a second name (a hard link); free it with:\n  {}",
        sanitize(&crate::hint::command(g, &argv), false)
    )
}
