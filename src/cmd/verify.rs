//! `verify [RUN...]`: every finding in every journal, one line each, then
//! the runs that need something done with the command that does it; exit
//! 0 clean, 1 errors (or warnings with `--strict`), 2 when the tool could
//! not do its job.
//!
//! Text: `run:line:byte: severity[code]: message`, the parts not known
//! left out (a JetStream record has a position, not a byte offset); with
//! `--details` the offending line under it, neutralised and cut. Then a
//! table of every run with an error or a warning (its worst finding and
//! the command that clears it, from the finding's remedy through
//! `src/hint.rs`), or one line saying the store is clean.
//!
//! JSON output (`--format json`) is JSON Lines: one finding object per line
//! (`run, code, severity, line, offset, seq, message`), then one summary
//! object `{"summary": {runs, records, bytes, errors, warnings, infos,
//! seconds}}`. The shape is `schemas/output/verify.json`.

use crate::cli::VerifyArgs;
use crate::error::CmdResult;
use crate::hint;
use crate::invocation::Invocation;
use crate::open::{inspect_store, schemas};
use crate::output::{
    cell, colored, excerpt, json_line, print_table, sanitize, severity_cell, summary_line, table,
    Format, Style,
};
use comfy_table::{Cell, Color};
use journal::store::{Store, Verified};
use journal::verify::{self, Finding, Severity};
use journal::Remedy;
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

pub fn run(g: &Invocation, a: VerifyArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let started = Instant::now();
    let schemas = if a.no_schema {
        None
    } else {
        Some(schemas(a.schema_dir.as_deref())?)
    };
    let check = schemas.as_ref().map(|s| s as &dyn verify::RecordCheck);
    let store = inspect_store(g)?;
    let Verified {
        reports,
        runs: nruns,
    } = store.verify(&a.runs, check)?;

    let mut totals = [0u64; 3];
    let (mut records, mut bytes) = (0u64, 0u64);
    for rep in &reports {
        records += rep.records;
        bytes += rep.bytes;
        for f in &rep.findings {
            if let Some(n) = totals.get_mut(f.severity as usize) {
                *n += 1;
            }
            match style.format {
                Format::Json => json_line(out, f)?,
                Format::Text => render(out, f, a.details, style)?,
            }
        }
    }
    let [errors, warnings, infos] = totals;
    let summary = Summary {
        runs: nruns,
        records,
        bytes,
        errors,
        warnings,
        infos,
        seconds: started.elapsed().as_secs_f64(),
    };
    match style.format {
        Format::Json => summary_line(out, &summary)?,
        Format::Text => {
            let flagged = worst_per_run(&reports);
            render_closing(out, g, &store, &flagged, &summary, a.runs.is_empty(), style)?
        }
    }
    let failed = errors > 0 || (a.strict && warnings > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The totals over every run checked (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Summary {
    runs: usize,
    records: u64,
    bytes: u64,
    errors: u64,
    warnings: u64,
    infos: u64,
    seconds: f64,
}

/// One finding: `run:line:byte: severity[code]: message`.
fn render(out: &mut dyn Write, f: &Finding, details: bool, style: Style) -> io::Result<()> {
    let mut at = sanitize(&f.run, false).into_owned();
    if let Some(l) = f.line {
        at.push_str(&format!(":{l}"));
        if let Some(o) = f.offset {
            at.push_str(&format!(":{o}"));
        }
    }
    let (word, color) = severity_word(f.severity);
    writeln!(
        out,
        "{at}: {}[{}]: {}",
        colored(word, color, style.color),
        f.code,
        sanitize(&f.message, false)
    )?;
    if let (true, Some(bytes)) = (details, &f.excerpt) {
        let width = usize::from(style.width.unwrap_or(160)).clamp(40, 400);
        let gutter = f.line.map_or_else(String::new, |l| l.to_string());
        let room = width.saturating_sub(gutter.len() + 7);
        writeln!(out, "    {gutter} | {}", excerpt(bytes, room))?;
    }
    Ok(())
}

fn severity_word(s: Severity) -> (&'static str, Color) {
    match s {
        Severity::Error => ("error", Color::Red),
        Severity::Warning => ("warning", Color::Yellow),
        Severity::Info => ("info", Color::Blue),
    }
}

/// Each run (or store-level name) with an error or a warning, in report
/// order, with the findings of its worst severity.
fn worst_per_run(reports: &[verify::Report]) -> Vec<Vec<&Finding>> {
    let mut order: Vec<&str> = Vec::new();
    let mut worst: std::collections::HashMap<&str, Vec<&Finding>> = Default::default();
    for f in reports.iter().flat_map(|r| &r.findings) {
        if f.severity == Severity::Info {
            continue;
        }
        let have = worst.entry(&f.run).or_insert_with(|| {
            order.push(&f.run);
            Vec::new()
        });
        match have.first().map(|w| w.severity) {
            Some(s) if f.severity > s => {}
            Some(s) if f.severity == s => have.push(f),
            _ => *have = vec![f],
        }
    }
    order.iter().filter_map(|r| worst.remove(r)).collect()
}

/// The commands that fix a run's findings, in order, each once, as a
/// chain that can run whole: `rm` ends it (nothing is left to fix after
/// it), and `upgrade` is never chained after another fix, since an
/// upgraded run can no longer be read by an August 2026 agent that may
/// still use the store: it is offered alone, when it is the only fix.
fn fix_chain(g: &Invocation, store: &Store, findings: &[&Finding]) -> Vec<String> {
    let mut remedies: Vec<Remedy> = Vec::new();
    for r in findings.iter().filter_map(|x| x.remedy) {
        if !remedies.contains(&r) {
            remedies.push(r);
        }
    }
    if remedies.contains(&Remedy::Remove) {
        remedies = vec![Remedy::Remove];
    }
    if remedies.len() > 1 {
        remedies.retain(|r| *r != Remedy::Upgrade);
    }
    let Some(run) = findings.first().map(|f| f.run.as_str()) else {
        return Vec::new();
    };
    let mut fixes: Vec<String> = Vec::new();
    for c in remedies
        .into_iter()
        .filter_map(|r| hint::fix(g, store, r, run))
    {
        if !fixes.contains(&c) {
            fixes.push(c);
        }
    }
    fixes
}

/// The runs to act on, each with the command that fixes its worst
/// finding; or one line saying everything checked is clean. Then the
/// totals.
fn render_closing(
    out: &mut dyn Write,
    g: &Invocation,
    store: &Store,
    flagged: &[Vec<&Finding>],
    s: &Summary,
    whole_store: bool,
    style: Style,
) -> io::Result<()> {
    let what = match (whole_store, s.runs) {
        (true, _) => "the store is",
        (false, 1) => "the run named is",
        (false, _) => "the runs named are",
    };
    let counts = format!(
        "{} run(s), {} records, {} bytes, {:.3} s",
        s.runs, s.records, s.bytes, s.seconds
    );
    if flagged.is_empty() {
        let infos = match s.infos {
            0 => String::new(),
            n => format!("; {n} info finding(s) above"),
        };
        return writeln!(
            out,
            "{}: {what} clean: no errors or warnings ({counts}){infos}",
            colored("ok", Color::Green, style.color)
        );
    }
    writeln!(out)?;
    // The command is never cut: it is there to be pasted.
    let mut t = table(&["RUN", "WORST", "FINDING", "FIX"]).keep(3);
    for findings in flagged {
        // The one named: the first with a remedy, else the first. The fix:
        // every distinct command its severity's findings ask for.
        let Some(f) = findings
            .iter()
            .find(|f| f.remedy.is_some())
            .or(findings.first())
        else {
            continue;
        };
        let fixes = fix_chain(g, store, findings);
        let fix = if fixes.is_empty() {
            "-".to_owned()
        } else {
            sanitize(&fixes.join(" && "), false).into_owned()
        };
        t.add_row(vec![
            Cell::new(cell(&f.run, 60)),
            severity_cell(severity_word(f.severity).0),
            Cell::new(f.code),
            Cell::new(fix),
        ]);
    }
    print_table(out, t, style)?;
    writeln!(
        out,
        "{} error(s), {} warning(s), {} info(s) in {counts}",
        s.errors, s.warnings, s.infos
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use journal::verify::Code;

    fn finding(code: Code, remedy: Remedy) -> Finding {
        Finding {
            run: "r1".into(),
            code,
            severity: code.severity(),
            line: None,
            offset: None,
            seq: None,
            message: String::new(),
            excerpt: None,
            remedy: Some(remedy),
        }
    }

    #[test]
    fn a_fix_chain_can_run_whole_and_never_chains_an_upgrade() {
        let g = crate::cli::Cli::parse_from(["fisk-admin", "--state-dir", "/s", "info"])
            .global
            .resolve();
        let store = Store::File(journal::store::file::FileStore::new("/s"));
        let chain = |fs: &[Finding]| fix_chain(&g, &store, &fs.iter().collect::<Vec<_>>());
        let v3 = finding(Code::VersionThree, Remedy::Upgrade);
        // A repair is the fix; upgrading is a store-wide decision.
        assert_eq!(
            chain(&[v3.clone(), finding(Code::TornTail, Remedy::Repair)]),
            ["fisk-admin --state-dir /s repair r1"]
        );
        // Alone, the upgrade is offered.
        assert_eq!(
            chain(std::slice::from_ref(&v3)),
            ["fisk-admin --state-dir /s upgrade r1"]
        );
        // rm ends the chain: `rm RUN && upgrade RUN` would fail "not found".
        assert_eq!(
            chain(&[v3, finding(Code::EmptyJournal, Remedy::Remove)]),
            ["fisk-admin --state-dir /s rm r1"]
        );
    }
}
