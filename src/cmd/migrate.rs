//! `migrate --from URI --to URI [RUN...|--all]`: copy runs between stores,
//! byte-identical, resumable, verified (journal::migrate has the rules).
//! Prints one row per run (run, records, bytes, result) and exits 0 only
//! when every selected run was copied and verified. `--format json` is one
//! document, `schemas/output/migrate.json` (docs/OUTPUT.md).

use crate::cli::MigrateArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::{open_store_uri, same_store, IfMissing};
use crate::output::{
    cell, json_pretty_rows, outcome_cell, print_table, sanitize, table, thousands, Format, Style,
};
use comfy_table::Cell;
use journal::migrate::{self, Lever, Options, Outcome, Progress, RunReport};
use serde::Serialize;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub fn run(g: &Invocation, a: MigrateArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    if g.state_dir.is_some() || g.store.is_some() {
        return Err(Failure::new(
            "migrate takes its stores from --from and --to, not --state-dir or --store",
        ));
    }
    same_store(&a.from, &a.to)?;
    let from = open_store_uri(&crate::open::unheld(g, a.force), &a.from, IfMissing::Fail)?;
    // The source is written only to delete what was copied: then its
    // audit log says who deleted it (issue 38).
    let from = match a.delete_source {
        true => crate::audit::writer(from, g, a.write.operator.as_deref(), a.write.why.as_deref())?,
        false => from,
    };
    // The runs are chosen (their ids checked) before the destination is
    // opened: a refusal creates nothing.
    let named: &[String] = if a.all { &[] } else { &a.runs };
    // Deleting the sources needs purges, asked before anything is copied.
    if a.delete_source {
        if let Some(why) = from.purge_refusal("migrate --delete-source") {
            return Err(crate::error::Failure::refused(why));
        }
    }
    // A stream is copied as it is now (issue 40): the cut is taken before
    // the runs are listed, so every run listed is copied up to it, and
    // nothing stored after it is.
    let cut = from.cut()?;
    let runs = migrate::select(&from, named, a.include_corrupt)?;
    // The directories opening a file destination creates, removed again
    // if nothing is stored in them.
    let made = crate::open::missing_dirs(&a.to)?;
    let to = open_store_uri(
        g,
        &a.to,
        if a.write.dry_run {
            IfMissing::Empty
        } else {
            IfMissing::Create
        },
    )?;
    let to = match runs.is_empty() {
        true => to,
        false => crate::audit::writer(to, g, a.write.operator.as_deref(), a.write.why.as_deref())?,
    };
    let opts = Options {
        dry_run: a.write.dry_run,
        include_corrupt: a.include_corrupt,
        allow_live: a.allow_live,
        delete_source: a.delete_source,
        upgrade: a.upgrade,
        jobs: usize::from(a.jobs),
        named: flag,
        cut,
    };
    let progress = Progress::default();
    let started = Instant::now();
    let done = AtomicBool::new(false);
    let reports = std::thread::scope(|s| {
        if std::io::stderr().is_terminal() && !runs.is_empty() {
            s.spawn(|| show_progress(&progress, runs.len() as u64, &done));
        }
        let r = migrate::migrate(&from, &to, &runs, &opts, &progress);
        done.store(true, Ordering::Relaxed);
        r
    });
    made.remove_empty();
    let ok = reports.iter().filter(|r| r.result.ok()).count();
    let migrated = Migrated {
        summary: Summary {
            runs: reports.len(),
            ok,
            failed: reports.len() - ok,
            appended: reports.iter().map(|r| r.appended).sum(),
            seconds: started.elapsed().as_secs_f64(),
        },
        from: &a.from,
        to: &a.to,
        dry_run: a.write.dry_run,
        cut,
        runs: &reports,
    };
    match style.format {
        Format::Json => {
            let head = Migrated {
                runs: &[],
                ..migrated
            };
            json_pretty_rows(out, &head, "runs", &reports)?
        }
        Format::Text => render(out, &migrated, style, a.quiet)?,
    }
    Ok(if migrated.summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The flag that sets a lever a report names.
fn flag(l: Lever) -> &'static str {
    match l {
        Lever::AllowLive => "--allow-live",
        Lever::IncludeCorrupt => "--include-corrupt",
        Lever::Upgrade => "--upgrade",
    }
}

/// `schemas/output/migrate.json` (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Migrated<'a> {
    from: &'a str,
    to: &'a str,
    dry_run: bool,
    /// A stream source: the sequence it was copied up to (its last when
    /// migrate started); `null` for a file source.
    cut: Option<u64>,
    runs: &'a [RunReport],
    summary: Summary,
}

#[derive(Serialize, Clone, Copy)]
struct Summary {
    runs: usize,
    ok: usize,
    failed: usize,
    /// Records appended to the destination.
    appended: u64,
    seconds: f64,
}

fn render(out: &mut dyn Write, m: &Migrated, style: Style, quiet: bool) -> io::Result<()> {
    let mut t = table(&["RUN", "RECORDS", "BYTES", "RESULT", "NOTE"]);
    let shown: Vec<&RunReport> = m.runs.iter().filter(|r| !quiet || !r.result.ok()).collect();
    for r in &shown {
        t.add_row(vec![
            Cell::new(cell(&r.run, 40)),
            Cell::new(style.count(r.records)),
            Cell::new(style.size(r.bytes)),
            outcome_cell(r.result.word().to_owned(), r.result.ok()),
            Cell::new(sanitize(&r.notes.join("; "), false)),
        ]);
    }
    if !shown.is_empty() {
        print_table(out, t, style)?;
    }
    // Under a table for a program, the lines below go to standard error.
    let tabled = !shown.is_empty();
    let mut say = |line: String| match tabled {
        true => style.footnote(out, &line),
        false => writeln!(out, "{line}"),
    };
    // What was done, each count said once and as what it is (c-26,
    // d-14): a dry run says what it would append, a rerun what was
    // complete already, and a deletion of the sources is said even with
    // --quiet.
    let s = &m.summary;
    let count = |o: Outcome| m.runs.iter().filter(|r| r.result == o).count();
    let (copied, complete) = (count(Outcome::Copied), count(Outcome::Complete));
    let stores = format!("{} to {}", m.from, m.to);
    if m.dry_run {
        let would: u64 = m
            .runs
            .iter()
            .filter(|r| r.result == Outcome::WouldCopy)
            .map(|r| r.records.saturating_sub(r.already))
            .sum();
        let would_copy = count(Outcome::WouldCopy);
        say(format!(
            "{} of {} runs would be copied, appending {} records{}; dry run, nothing was written ({stores})",
            thousands(would_copy),
            thousands(s.runs),
            thousands(would),
            match complete {
                0 => String::new(),
                c => format!(" ({} complete at the destination already)", thousands(c)),
            },
        ))?;
    } else {
        let done = match (copied, complete) {
            (0, 0) => "no run copied".to_owned(),
            (0, c) => format!(
                "every run selected was complete at the destination already ({} verified): nothing was copied",
                thousands(c)
            ),
            (c, 0) => format!("{} copied and verified", thousands(c)),
            (c, k) => format!(
                "{} copied and verified, {} complete at the destination already (verified)",
                thousands(c),
                thousands(k)
            ),
        };
        say(format!(
            "{done}; {} of {} runs done; {} records appended in {:.2}s ({stores})",
            thousands(s.ok),
            thousands(s.runs),
            thousands(s.appended),
            s.seconds,
        ))?;
    }
    let deleted = m.runs.iter().filter(|r| r.source_deleted).count();
    if deleted > 0 {
        say(format!(
            "{} source run(s) deleted from {}, each once its copy was verified",
            thousands(deleted),
            m.from
        ))?;
    }
    if let Some(cut) = m.cut {
        say(format!(
            "the source as it was when migrate started: up to stream sequence {}; what was stored after it is left for the next migrate",
            thousands(cut)
        ))?;
    }
    Ok(())
}

/// A progress bar on stderr (a terminal only): runs copied of all, the
/// records stored, their rate, and the time left. Cleared at the end, so
/// the table that follows starts on a clean line.
fn show_progress(p: &Progress, total: u64, done: &AtomicBool) {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr_with_hz(10),
    );
    let style = indicatif::ProgressStyle::with_template(
        "migrate [{bar:30}] {pos}/{len} runs, {msg}, {elapsed} elapsed, ETA {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    let started = Instant::now();
    while !done.load(Ordering::Relaxed) {
        let records = p.records.load(Ordering::Relaxed);
        let secs = started.elapsed().as_secs_f64().max(0.001);
        bar.set_position(p.runs_done.load(Ordering::Relaxed).min(total));
        bar.set_message(format!(
            "{records} records ({:.0} records/s)",
            records as f64 / secs
        ));
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}
