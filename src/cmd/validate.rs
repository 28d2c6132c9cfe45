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
use journal::lines;
use journal::record::DecodeError;
use journal::schema::{SchemaSet, Violation};
use journal::store::Store;
use journal::verify::check_line;
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Serialize, Debug)]
struct Row {
    run: Option<String>,
    file: Option<String>,
    line: Option<usize>,
    seq: Option<u64>,
    protocol: Option<String>,
    instance_path: String,
    schema: Option<String>,
    keyword_location: Option<String>,
    message: String,
    #[serde(skip)]
    excerpt: Vec<u8>,
}

#[derive(Default)]
struct Tally {
    records: u64,
    valid: u64,
    invalid: u64,
    rows: Vec<Row>,
}

/// A line of JSON the agent's decoder refuses (a field of the wrong type,
/// `1.0` for an integer): said so, with what the schema says of it too.
fn refused(set: &SchemaSet, bytes: &[u8], e: &DecodeError) -> (Vec<Violation>, Option<u64>) {
    let mut out = vec![Violation::plain(
        None,
        format!("the agent cannot read this record (the line does not parse for it): {e}"),
    )];
    let value = journal::gojson::scan::scan(bytes)
        .ok()
        .and_then(|s| journal::gojson::unique::value(&s.shallow()).ok());
    let seq = value.as_ref().and_then(|v| v.get("seq")?.as_u64());
    if let Some(v) = value {
        out.extend(set.validate(&v));
    }
    (out, seq)
}

/// Check every line of one journal's bytes.
fn check_lines(set: &SchemaSet, run: Option<&str>, file: Option<&str>, bytes: &[u8]) -> Tally {
    let mut t = Tally::default();
    let all: Vec<_> = lines::split(bytes).collect();
    for (i, l) in all.iter().enumerate() {
        let last = i + 1 == all.len();
        // As every reader decodes the line (Go's reading), so validate never
        // passes a line the readers refuse; then the schema check.
        let (violations, seq) = match check_line(l.bytes, Some(set)) {
            Ok(c) => (c.violations, Some(c.record.seq)),
            Err(e) if e.json_ok => refused(set, l.bytes, &e),
            Err(e) if last && !l.terminated => (
                vec![Violation::plain(
                    None,
                    format!("torn final line (a write cut short; readers drop it): {e}"),
                )],
                None,
            ),
            Err(e) => (
                vec![Violation::plain(None, format!("the line is not JSON: {e}"))],
                None,
            ),
        };
        t.records += 1;
        if violations.is_empty() {
            t.valid += 1;
            continue;
        }
        t.invalid += 1;
        for v in violations {
            t.rows.push(Row {
                run: run.map(str::to_owned),
                file: file.map(str::to_owned),
                line: Some(l.line),
                seq,
                protocol: v.protocol,
                instance_path: v.instance_path,
                schema: v.schema,
                keyword_location: v.keyword_location,
                message: v.message,
                excerpt: journal::verify::excerpt(l.bytes),
            });
        }
    }
    t
}

pub fn run(g: &Invocation, a: ValidateArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let started = Instant::now();
    let set = schemas(a.schema_dir.as_deref())?;
    let mut files = 0u64;
    let mut unreadable = 0u64;
    let mut total = Tally::default();
    let mut emit = |t: Tally, out: &mut dyn Write| -> std::io::Result<()> {
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
            let tallies: Vec<Result<Tally, Failure>> = chunk
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
                    // are still checked; on JetStream a failure is the
                    // server's, and the same for every run: stop.
                    Err(f) if store.read_failures_are_per_run() => {
                        unreadable += 1;
                        crate::error::say(
                            &format!("run {r} not validated: {}", f.message),
                            f.help.as_deref(),
                            style,
                        );
                    }
                    Err(f) => return Err(f),
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

fn validate_run(store: &Store, set: &SchemaSet, run: &str) -> Result<Tally, Failure> {
    let bytes = store.read_lines(run)?;
    Ok(check_lines(set, Some(run), None, &bytes))
}

fn render(out: &mut dyn Write, r: &Row, style: Style) -> std::io::Result<()> {
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
