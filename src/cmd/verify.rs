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

use crate::cli::{SeverityArg, VerifyArgs};
use crate::error::CmdResult;
use crate::hint;
use crate::invocation::Invocation;
use crate::open::{inspect_store, schemas};
use crate::output::{
    cell, colored, excerpt, human_bytes, json_line, print_table, sanitize, severity_cell,
    summary_line, table, thousands, Format, Style,
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
    if let Some(seal) = &a.against {
        return against(g, &a, seal, out);
    }
    let style = g.style;
    let started = Instant::now();
    let schemas = if a.no_schema {
        None
    } else {
        Some(schemas(a.schema_dir.as_deref())?)
    };
    let check = schemas.as_ref().map(|s| s as &dyn verify::RecordCheck);
    // A journal file (`--file`) is checked with no store: no fix of a
    // store's is offered for it.
    let (
        store,
        Verified {
            mut reports,
            runs: nruns,
        },
    ) = match &a.file.file {
        Some(path) => (
            None,
            Verified {
                reports: vec![journal::store::file::Loose::verify(path, check)?],
                runs: 1,
            },
        ),
        None => {
            let store = inspect_store(g)?;
            let mut verified = store.verify(&a.runs, check)?;
            // The audit log (issue 38): its chain, the writes it began
            // and never closed, the runs changed since its last write.
            verified
                .reports
                .push(journal::custody::findings(&store, &a.runs)?);
            (Some(store), verified)
        }
    };

    // Each run's findings in line order (a store-wide one first), the
    // passes' order kept within a line (c-31).
    for r in &mut reports {
        r.findings.sort_by_key(|f| f.line.unwrap_or(0));
    }
    let shown = Shown::of(&a);
    let mut totals = [0u64; 3];
    let (mut records, mut bytes) = (0u64, 0u64);
    let mut version_3: Vec<&str> = Vec::new();
    for rep in &reports {
        records += rep.records;
        bytes += rep.bytes;
        for f in &rep.findings {
            if let Some(n) = totals.get_mut(f.severity as usize) {
                *n += 1;
            }
            if !shown.shows(f) {
                continue;
            }
            match style.format {
                // With the command that fixes it (null: none does).
                Format::Json => json_line(
                    out,
                    &Line {
                        f,
                        fix: fix_of(g, store.as_ref(), f),
                    },
                )?,
                Format::Text if shown.sums_up(f) => version_3.push(&f.run),
                Format::Text => render(out, f, a.details, style)?,
            }
        }
    }
    let [errors, warnings, infos] = totals;
    // Every run with an error or a warning, its worst finding and the
    // commands that fix it: the closing table's rows (JSON too, d-23).
    let to_fix: Vec<ToFix> = worst_per_run(&reports)
        .iter()
        .filter_map(|findings| {
            let f = named(findings)?;
            Some(ToFix {
                run: f.run.clone(),
                worst: severity_word(f.severity).0,
                finding: f.code.to_string(),
                fix: fix_chain(g, store.as_ref(), findings),
            })
        })
        .collect();
    let summary = Summary {
        runs: nruns,
        records,
        bytes,
        errors,
        warnings,
        infos,
        seconds: started.elapsed().as_secs_f64(),
        runs_to_fix: to_fix,
    };
    match style.format {
        Format::Json => summary_line(out, &summary)?,
        Format::Text => {
            if !version_3.is_empty() {
                // The version-3 runs that are damaged as well: upgrade
                // refuses them until they are repaired or recovered.
                let damaged = version_3
                    .iter()
                    .filter(|run| {
                        reports.iter().flat_map(|r| &r.findings).any(|f| {
                            f.run == **run
                                && f.severity <= Severity::Warning
                                && !matches!(
                                    f.code,
                                    verify::Code::VersionThree | verify::Code::Permissions
                                )
                        })
                    })
                    .count();
                render_version_3(
                    out,
                    g,
                    &version_3,
                    damaged,
                    a.runs.is_empty() && store.is_some(),
                    style,
                )?;
            }
            let mut flagged = worst_per_run(&reports);
            if shown.filtered {
                // The version-3 warnings and their upgrade are in the line
                // above: a run's row names its other findings, or goes.
                for fs in &mut flagged {
                    fs.retain(|f| f.code != verify::Code::VersionThree);
                }
                flagged.retain(|fs| !fs.is_empty());
            }
            // Runs whose worst finding is below what is shown are left out.
            flagged.retain(|fs| fs.first().is_some_and(|f| shown.shows(f)));
            let closing = Closing {
                whole_store: a.runs.is_empty() && store.is_some(),
                infos_shown: shown.level >= Severity::Info,
            };
            render_closing(out, g, store.as_ref(), &flagged, &summary, closing, style)?
        }
    }
    let failed = errors > 0 || (a.strict && warnings > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Which findings are printed (`--quiet`, `--severity`); the totals and
/// the exit status count every finding whatever is shown.
struct Shown {
    /// The lowest severity shown.
    level: Severity,
    /// A filter was asked for: the version-3 warnings are summed up in one
    /// line with one `upgrade` (text), not one line per run.
    filtered: bool,
}

impl Shown {
    fn of(a: &VerifyArgs) -> Shown {
        let level = match (a.quiet, a.severity) {
            (true, _) | (false, Some(SeverityArg::Warning)) => Severity::Warning,
            (false, Some(SeverityArg::Error)) => Severity::Error,
            (false, Some(SeverityArg::Info) | None) => Severity::Info,
        };
        Shown {
            level,
            filtered: a.quiet || a.severity.is_some(),
        }
    }

    fn shows(&self, f: &Finding) -> bool {
        f.severity <= self.level
    }

    fn sums_up(&self, f: &Finding) -> bool {
        self.filtered && f.code == verify::Code::VersionThree
    }
}

/// The version-3 runs in one line, with the one command that upgrades
/// them (the whole store's `--all`, or the runs named).
fn render_version_3(
    out: &mut dyn Write,
    g: &Invocation,
    runs: &[&str],
    damaged: usize,
    whole_store: bool,
    style: Style,
) -> io::Result<()> {
    let mut args = vec!["upgrade"];
    match whole_store {
        true => args.push("--all"),
        false => args.extend_from_slice(runs),
    }
    let (word, color) = severity_word(Severity::Warning);
    // What upgrade will refuse, said before it is pasted (issue 39, d-29).
    let refused = match damaged {
        0 => String::new(),
        n => format!(
            "; {n} of them are damaged as well: upgrade refuses them (one line each) until the fix the table below names has run"
        ),
    };
    writeln!(
        out,
        "{} run(s): {}[version-3]: format version 3 (the August 2026 agent): the current agent will not list or resume them until they are upgraded to version 1 (an August 2026 agent still using the store cannot read an upgraded run){refused}",
        runs.len(),
        colored(word, color, style.color),
    )?;
    // The command alone on its line (d-22).
    writeln!(
        out,
        "{}",
        hint::cmd(g, &args).step("  ", "upgrade them with")
    )
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
    /// Every run with an error or a warning, as the closing table lists it.
    runs_to_fix: Vec<ToFix>,
}

/// One run to act on: its worst severity, the finding named, and the
/// commands that fix its findings of that severity, in order (each whole,
/// for pasting; empty when no command does).
#[derive(Serialize)]
struct ToFix {
    run: String,
    worst: &'static str,
    finding: String,
    fix: Vec<String>,
}

/// One finding as a JSON line: the library's fields, and the command that
/// fixes it.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    f: &'a Finding,
    fix: Option<String>,
}

/// The command that applies `f`'s remedy to its run (none for a journal
/// file, which no store's command fixes).
fn fix_of(g: &Invocation, store: Option<&Store>, f: &Finding) -> Option<String> {
    let (remedy, store) = (f.remedy?, store?);
    hint::fix(g, store, remedy, &f.run)
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

/// The finding a run's row names: the first whose remedy the fix chain
/// keeps (an upgrade only when nothing else is asked for), else the first
/// with a remedy, else the first.
fn named<'a>(findings: &[&'a Finding]) -> Option<&'a Finding> {
    findings
        .iter()
        .find(|f| f.remedy.is_some_and(|r| r != Remedy::Upgrade))
        .or_else(|| findings.iter().find(|f| f.remedy.is_some()))
        .or(findings.first())
        .copied()
}

/// The commands that fix a run's findings, in order, each once, as a
/// chain that can run whole: `rm` ends it (nothing is left to fix after
/// it), `recover` makes `repair` needless, and `upgrade` is never chained after another fix, since an
/// upgraded run can no longer be read by an August 2026 agent that may
/// still use the store: it is offered alone, when it is the only fix.
fn fix_chain(g: &Invocation, store: Option<&Store>, findings: &[&Finding]) -> Vec<String> {
    let mut remedies: Vec<Remedy> = Vec::new();
    for r in findings.iter().filter_map(|x| x.remedy) {
        if !remedies.contains(&r) {
            remedies.push(r);
        }
    }
    if remedies.contains(&Remedy::Remove) {
        remedies = vec![Remedy::Remove];
    }
    // recover rebuilds the run whole, a torn tail included (repair
    // refuses a journal with interior damage), and a second meta record
    // among its findings is a copy it drops, keeping a backup: the
    // salvage by migrate is for what recover does not take (c-31: the FIX
    // was `migrate ... && recover`).
    if remedies.contains(&Remedy::Recover) {
        remedies.retain(|r| !matches!(r, Remedy::Repair | Remedy::Salvage));
    }
    if remedies.len() > 1 {
        remedies.retain(|r| *r != Remedy::Upgrade);
    }
    let (Some(run), Some(store)) = (findings.first().map(|f| f.run.as_str()), store) else {
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

/// What the closing lines say beside the findings.
#[derive(Clone, Copy)]
struct Closing {
    /// No run was named: the whole store was checked.
    whole_store: bool,
    /// The info findings were printed above.
    infos_shown: bool,
}

/// The runs to act on, each with the command that fixes its worst
/// finding; or one line saying everything checked is clean. Then the
/// totals.
fn render_closing(
    out: &mut dyn Write,
    g: &Invocation,
    store: Option<&Store>,
    flagged: &[Vec<&Finding>],
    s: &Summary,
    closing: Closing,
    style: Style,
) -> io::Result<()> {
    let what = match (closing.whole_store, s.runs) {
        (true, _) => "the store is",
        (false, 1) => "the run named is",
        (false, _) => "the runs named are",
    };
    let counts = format!(
        "{} run(s), {} records, {}, {:.3} s",
        thousands(s.runs),
        thousands(s.records),
        human_bytes(s.bytes),
        s.seconds
    );
    if s.errors == 0 && s.warnings == 0 {
        let infos = match (s.infos, closing.infos_shown) {
            (0, _) => String::new(),
            (n, true) => format!("; {n} info finding(s) above"),
            (n, false) => format!("; {n} info finding(s) not shown (--severity info shows them)"),
        };
        return writeln!(
            out,
            "{}: {what} clean: no errors or warnings ({counts}){infos}",
            colored("ok", Color::Green, style.color)
        );
    }
    if flagged.is_empty() {
        // Filtered away (--severity, the version-3 line): only the totals.
        return writeln!(
            out,
            "{} error(s), {} warning(s), {} info(s) in {counts}",
            s.errors, s.warnings, s.infos
        );
    }
    writeln!(out)?;
    // The command is never cut nor left out: it is there to be pasted
    // (under the table when it does not fit beside the rest).
    let mut t = table(&["RUN", "WORST", "FINDING", "FIX"]).action(3);
    for findings in flagged {
        // The fix: every distinct command its severity's findings ask for.
        let Some(f) = named(findings) else {
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
    style.footnote(
        out,
        &format!(
            "{} error(s), {} warning(s), {} info(s) in {counts}",
            thousands(s.errors),
            thousands(s.warnings),
            thousands(s.infos)
        ),
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
        let store = Store::directory("/s");
        let chain = |fs: &[Finding]| fix_chain(&g, Some(&store), &fs.iter().collect::<Vec<_>>());
        let v3 = finding(Code::VersionThree, Remedy::Upgrade);
        // A repair is the fix; upgrading is a store-wide decision.
        assert_eq!(
            chain(&[v3.clone(), finding(Code::TornTail, Remedy::Repair)]),
            ["fisk-admin --state-dir /s repair r1"]
        );
        // Whichever comes first, the upgrade never follows the repair.
        assert_eq!(
            chain(&[finding(Code::TornTail, Remedy::Repair), v3.clone()]),
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
        // A second meta record with the seq it breaks: recover alone.
        assert_eq!(
            chain(&[
                finding(Code::DuplicateMeta, Remedy::Salvage),
                finding(Code::SeqNotIncreasing, Remedy::Recover),
            ]),
            ["fisk-admin --state-dir /s recover r1"]
        );
    }
}

/// One run against a seal, for `-o json` (`schemas/output/verify-against.json`).
#[derive(Serialize)]
struct Against<'a> {
    run: &'a str,
    verdict: &'static str,
    records: Option<u64>,
    sealed_records: Option<u64>,
    seq: Option<u64>,
    record: Option<u64>,
    offset: Option<u64>,
    attested_from: Option<journal::time::Time>,
}

/// `verify --against SEAL`: the seal checked against itself (and the key
/// given), then every run (or those named, or the journal `--file`) and
/// the audit log against it. Exit 1 unless every run is unchanged or grew
/// and the seal and the log stand.
fn against(
    g: &Invocation,
    a: &VerifyArgs,
    path: &std::path::Path,
    out: &mut dyn Write,
) -> CmdResult {
    use journal::custody::seal::{self, Verdict};
    let s = seal::Seal::read(path)?;
    let key = a
        .key
        .as_deref()
        .map(journal::custody::key::load)
        .transpose()?;
    let standing = seal::standing(&s, key.as_ref());
    let (verdicts, log_check) = match &a.file.file {
        Some(p) => {
            let (run, bytes) = journal::store::file::Loose::bytes(p)?;
            (
                vec![seal::against(&run, s.runs.get(&run), Some(&bytes))],
                seal::LogCheck::Holds,
            )
        }
        None => {
            let store = crate::open::open_store(g)?;
            let v = seal::against_store(&s, &store, &a.runs)?;
            (v, seal::log_against(&s, &store.audit_log()?))
        }
    };
    let (log_problem, log_own) = match log_check {
        seal::LogCheck::Holds => (None, None),
        seal::LogCheck::Own(note) => (None, Some(note)),
        seal::LogCheck::Broken(p) => (Some(p), None),
    };
    let mut counts: std::collections::BTreeMap<&str, u64> = Default::default();
    for v in &verdicts {
        *counts.entry(v.verdict.word()).or_default() += 1;
    }
    let held = verdicts.iter().all(|v| v.verdict.holds());
    let ok = held && standing.ok() && log_problem.is_none();
    let attested = |v: &Verdict| v.holds().then_some(s.time);
    match g.style.format {
        Format::Json => {
            for v in &verdicts {
                let (seq, record, offset) = match v.verdict {
                    Verdict::Edited {
                        seq,
                        record,
                        offset,
                        ..
                    } => (Some(seq), Some(record), Some(offset)),
                    _ => (None, None, None),
                };
                let records = match v.verdict {
                    Verdict::Unchanged => v.sealed,
                    Verdict::Grew { records }
                    | Verdict::Truncated { records }
                    | Verdict::Edited { records, .. }
                    | Verdict::New { records } => Some(records),
                    Verdict::Removed => None,
                };
                json_line(
                    out,
                    &Against {
                        run: &v.run,
                        verdict: v.verdict.word(),
                        records,
                        sealed_records: v.sealed,
                        seq,
                        record,
                        offset,
                        attested_from: attested(&v.verdict),
                    },
                )?;
            }
            json_line(
                out,
                &serde_json::json!({"seal": {
                    "path": path,
                    "root": s.root,
                    "time": s.time,
                    "cut": s.cut,
                    "root_ok": standing.root_ok,
                    "signed": standing.signed,
                    "signed_by": standing.signed_by,
                    "other_key": standing.other_key,
                    "log": log_problem,
                    "log_own": log_own,
                    "verdicts": counts,
                    "ok": ok,
                }}),
            )?;
        }
        Format::Text => {
            let when = s.time.to_rfc3339();
            writeln!(
                out,
                "seal {} of {} at {when}{}: {} run(s), root {}",
                crate::hint::quote_path(path),
                sanitize(&s.store, false),
                s.cut.map_or(String::new(), |c| format!(
                    ", up to stream sequence {}",
                    thousands(c)
                )),
                s.runs.len(),
                s.root
            )?;
            if !standing.root_ok {
                writeln!(out, "the seal was edited: its root does not match what it holds; nothing it says can be trusted")?;
            }
            match (&standing.signed_by, standing.signed) {
                (Some(k), Some(true)) if !standing.other_key => {
                    writeln!(out, "signed by key {k}: the signature checks")?
                }
                (Some(k), Some(true)) => writeln!(
                    out,
                    "signed by key {k}, which is not the key given: it is not the seal you trust"
                )?,
                (Some(k), _) => writeln!(
                    out,
                    "signed by key {k}, but the signature does not check: the seal was edited"
                )?,
                (None, _) if standing.other_key => writeln!(
                    out,
                    "not signed, but --key was given: it is not the seal you trust"
                )?,
                (None, _) => writeln!(out, "not signed (seal --key signs)")?,
            }
            for v in &verdicts {
                let run = sanitize(&v.run, false);
                let sealed = v.sealed.unwrap_or(0);
                match &v.verdict {
                    Verdict::Unchanged => {}
                    Verdict::Grew { records } => writeln!(out, "{run}: grew: {sealed} record(s) as sealed, {} appended after (attested from {when})", records - sealed)?,
                    Verdict::Truncated { records } => writeln!(out, "{run}: truncated: {sealed} record(s) sealed, {records} now: records {}-{sealed} are missing at the end", records + 1)?,
                    Verdict::Edited { seq, record, offset, records } => writeln!(out, "{run}: edited: the first record that differs is seq {seq} (record {record}, at byte {offset}); {sealed} record(s) sealed, {records} now")?,
                    Verdict::Removed => writeln!(out, "{run}: removed: {sealed} record(s) sealed, the run is gone")?,
                    Verdict::New { records } => writeln!(out, "{run}: new: not in the seal ({records} record(s))")?,
                }
            }
            if let Some(p) = &log_problem {
                writeln!(out, "audit log: {}", sanitize(p, false))?;
            }
            if let Some(n) = &log_own {
                writeln!(out, "audit log: {}", sanitize(n, false))?;
            }
            let summary: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
            writeln!(
                out,
                "{}: {} (attested from {when}: the seal says nothing of before)",
                if ok { "ok" } else { "NOT AS SEALED" },
                summary.join(", ")
            )?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
