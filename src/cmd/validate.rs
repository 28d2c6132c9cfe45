//! `validate [RUN...] | --all | --file PATH|-`: every record against its
//! JSON schema. JSON output is JSON Lines: one violation per line
//! (`run, file, line, seq, protocol, instance_path, schema,
//! keyword_location, message`), then `{"summary": {records, valid, invalid,
//! files, seconds}}` (`schemas/output/validate.json`).
//!
//! Records are streamed: a run (or file) is read, checked and dropped
//! before the next, so memory is bounded by the largest journal.

use crate::cli::ValidateArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::{open_store, schemas};
use crate::output::{
    diagnostic, json_line, print_table, sanitize, summary_line, table, Format, Style,
};
use journal::schema::SchemaSet;
use journal::store::Store;
use journal::validate::{check_lines, JournalVerdict, LineVerdict};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

pub fn run(g: &Invocation, a: ValidateArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let started = Instant::now();
    let set = schemas(a.schema_dir.as_deref())?;
    let mut files = 0u64;
    let mut unreadable = 0u64;
    let mut total = JournalVerdict::default();
    let mut emit = |t: JournalVerdict, out: &mut dyn Write| -> std::io::Result<()> {
        total.records += t.records;
        total.valid += t.valid;
        total.invalid += t.invalid;
        for r in &t.rows {
            match style.format {
                Format::Json => json_line(out, r)?,
                Format::Text => render(out, r, style)?,
            }
        }
        Ok(())
    };
    if let Some(path) = &a.file {
        if g.state_dir.is_some() || g.store.is_some() {
            return Err(Failure::new(
                "--file validates one file, not a store: drop --state-dir/--store, or drop --file to validate the store's runs",
            ));
        }
        let (name, bytes) = if path.as_os_str() == "-" {
            let buf = journal::bounded::read(std::io::stdin().lock(), journal::bounded::RECORDS)
                .map_err(|e| Failure::new(format!("reading stdin: {e}")))?;
            ("-".to_owned(), buf)
        } else {
            let bytes = journal::bounded::read_path(path, journal::bounded::RECORDS)
                .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
            (path.display().to_string(), bytes)
        };
        files = 1;
        emit(check_lines(&set, None, Some(&name), &bytes), out)?;
    } else {
        let store = open_store(g)?;
        let runs = if a.runs.is_empty() {
            store.runs()?
        } else {
            a.runs.clone()
        };
        for r in &runs {
            journal::id::check(r)?;
            // A run named that is not there is refused before any output,
            // as verify refuses it (b-26), with the close ids offered.
            if !a.runs.is_empty() && !store.exists(r)? {
                return Err(journal::Error::NotFound {
                    run: r.clone(),
                    at: store.place(),
                }
                .into());
            }
        }
        // Bounded parallelism: a chunk of runs at a time, so at most a
        // chunk's journals are in memory, and output keeps run order.
        for chunk in runs.chunks(rayon::current_num_threads().max(1) * 4) {
            let tallies: Vec<journal::Result<JournalVerdict>> = chunk
                .par_iter()
                .map(|r| validate_run(&store, &set, r))
                .collect();
            for (r, t) in chunk.iter().zip(tallies) {
                match t {
                    Ok(t) => {
                        files += 1;
                        emit(t, out)?;
                    }
                    // A journal that cannot be read (a directory or FIFO
                    // in its place, a permission) is named and the others
                    // are still checked; a failure of the store itself
                    // (the server gone, the disk failing) is the same for
                    // every run: stop.
                    Err(e) if !e.is_store_failure() => {
                        unreadable += 1;
                        let f = Failure::from(e);
                        crate::error::say(
                            &format!("run {r} not validated: {}", f.message),
                            f.help.as_deref(),
                            style,
                        );
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    let summary = Summary {
        records: total.records,
        valid: total.valid,
        invalid: total.invalid,
        files,
        seconds: started.elapsed().as_secs_f64(),
    };
    match style.format {
        Format::Json => summary_line(out, &summary)?,
        Format::Text => render_summary(out, &summary, a.file.is_some(), style)?,
    }
    Ok(if unreadable > 0 {
        ExitCode::from(2)
    } else if total.invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The totals (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Summary {
    records: u64,
    valid: u64,
    invalid: u64,
    files: u64,
    seconds: f64,
}

fn render_summary(
    out: &mut dyn Write,
    s: &Summary,
    file: bool,
    style: Style,
) -> std::io::Result<()> {
    // What was validated: a file, or the store's runs (b-27).
    let what = if file { "FILES" } else { "RUNS" };
    let mut t = table(&[what, "RECORDS", "VALID", "INVALID", "SECONDS"]);
    t.add_row(vec![
        s.files.to_string(),
        s.records.to_string(),
        s.valid.to_string(),
        s.invalid.to_string(),
        format!("{:.3}", s.seconds),
    ]);
    print_table(out, t, style)
}

fn validate_run(store: &Store, set: &SchemaSet, run: &str) -> journal::Result<JournalVerdict> {
    let bytes = store.read_lines(run)?;
    Ok(check_lines(set, Some(run), None, &bytes))
}

fn render(out: &mut dyn Write, r: &LineVerdict, style: Style) -> std::io::Result<()> {
    let who = r.run.as_deref().or(r.file.as_deref()).unwrap_or("-");
    let mut msg = sanitize(who, false).into_owned();
    if let Some(l) = r.line {
        msg.push_str(&format!(" line {l}"));
    }
    if let Some(s) = r.seq {
        msg.push_str(&format!(" seq {s}"));
    }
    let at = if r.instance_path.is_empty() {
        "/"
    } else {
        &r.instance_path
    };
    msg.push_str(&format!(
        " at {}: {}",
        sanitize(at, false),
        sanitize(&r.message, false)
    ));
    if let (Some(s), Some(k)) = (&r.schema, &r.keyword_location) {
        msg.push_str(&format!(" [{s}#{}]", sanitize(k, false)));
    }
    let source = r.line.map(|l| (who.to_owned(), l, r.excerpt.as_slice()));
    diagnostic(out, miette::Severity::Error, "schema", &msg, source, style)
}
