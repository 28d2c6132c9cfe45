//! `verify [RUN...]`: every finding in every journal, with line and byte
//! offset; a summary table; exit 0 clean, 1 errors (or warnings with
//! `--strict`), 2 when the tool could not do its job.
//!
//! JSON output (`--format json`) is JSON Lines: one finding object per line
//! (`run, code, severity, line, offset, seq, message`), then one summary
//! object `{"summary": {runs, records, bytes, errors, warnings, infos,
//! seconds}}`. The shape is `schemas/output/verify.json`.

use crate::cli::{Global, VerifyArgs};
use crate::error::CmdResult;
use crate::open::{inspect_store, schemas};
use crate::output::{diagnostic, json_line, sanitize, summary_line, table, Format, Style};
use journal::store::Verified;
use journal::verify::{self, Finding, Severity};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

pub fn run(g: &Global, a: VerifyArgs, style: Style, out: &mut dyn Write) -> CmdResult {
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
                Format::Text => render(out, f, style)?,
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
        Format::Text => render_summary(out, &summary)?,
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

fn render_summary(out: &mut dyn Write, s: &Summary) -> io::Result<()> {
    let mut t = table(&[
        "RUNS", "RECORDS", "BYTES", "ERRORS", "WARNINGS", "INFOS", "SECONDS",
    ]);
    t.add_row(vec![
        s.runs.to_string(),
        s.records.to_string(),
        s.bytes.to_string(),
        s.errors.to_string(),
        s.warnings.to_string(),
        s.infos.to_string(),
        format!("{:.3}", s.seconds),
    ]);
    writeln!(out, "{t}")
}

fn render(out: &mut dyn Write, f: &Finding, style: Style) -> std::io::Result<()> {
    let sev = match f.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    };
    let mut where_ = String::new();
    if let Some(l) = f.line {
        where_.push_str(&format!(" line {l}"));
    }
    if let Some(o) = f.offset {
        where_.push_str(&format!(" (byte {o})"));
    }
    if let Some(s) = f.seq {
        where_.push_str(&format!(" seq {s}"));
    }
    let mut message = format!(
        "{}{}: {}",
        sanitize(&f.run, false),
        where_,
        sanitize(&f.message, false)
    );
    // What clears it, as a command of this tool.
    if let Some(r) = verify::Code::parse(f.code).and_then(verify::Code::remedy) {
        let run = (!f.run.is_empty()).then_some(f.run.as_str());
        message.push_str("; ");
        message.push_str(&sanitize(&crate::hint::advice(r, run, None), false));
    }
    let source = match (&f.excerpt, f.line) {
        (Some(bytes), Some(line)) => Some((format!("{}.json", f.run), line, bytes.as_slice())),
        _ => None,
    };
    diagnostic(out, sev, f.code, &message, source, style)
}
