//! `repair [RUN...|--all] [--dry-run]`: fix what is safe to fix, at the tail only.
//! A torn final line is cut after its bytes are saved beside the journal; a
//! missing final newline is added. Interior corruption is refused: cutting
//! it would throw away the intact records after it. With several runs or
//! `--all`, one run's refusal never stops the others; a journal whose tail
//! is clean is only read (the library takes no lock and writes nothing).

use crate::cli::RepairArgs;
use crate::error::{CmdResult, Failure};
use crate::hint;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sorted, Format};
use journal::store::{Repair, Store};
use journal::verify::{Code, Severity};
use journal::Remedy;
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// What `repair` did or would do (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Repaired<'a> {
    run: &'a str,
    dry_run: bool,
    #[serde(flatten)]
    action: Action,
    /// Errors `verify` reports for the run that a repair of the tail does
    /// not touch (`seq-gap at line 4`): the agent still refuses it.
    other_errors: Vec<String>,
    /// The commands for what is left: `verify`, or `rm` for a journal a
    /// cut leaves with no record.
    #[serde(skip)]
    next: Vec<String>,
}

#[derive(Serialize)]
#[serde(tag = "action")]
enum Action {
    #[serde(rename = "nothing")]
    Nothing { records: usize },
    #[serde(rename = "add-newline")]
    AddNewline { line: usize, records: usize },
    #[serde(rename = "cut-torn-tail")]
    CutTornTail {
        line: usize,
        offset: u64,
        bytes: u64,
        /// Where the cut bytes are kept; `null` in a dry run.
        backup: Option<String>,
        records: usize,
    },
    /// JetStream: the fence an interrupted delete or recover left after
    /// the run's last record, taken away.
    #[serde(rename = "remove-fence")]
    RemoveFence { subject: String, records: usize },
}

pub fn run(g: &Invocation, a: RepairArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let runs =
        match (a.all, a.runs.as_slice()) {
            // One run named: its outcome alone, an object in JSON, its
            // refusal the command's (as before --all existed).
            (false, [one_run]) => {
                let done = one(g, &store, &Default::default(), one_run, a.write.dry_run)?;
                match style.format {
                    Format::Json => json_pretty(out, &sorted(&done)?)?,
                    Format::Text => render(out, &done)?,
                }
                return Ok(ExitCode::SUCCESS);
            }
            (false, []) => return Err(Failure::new("no run named").help(
                "name the runs to repair, or pass --all to repair every damaged tail in the store",
            )),
            (true, [_, ..]) => return Err(Failure::new("name runs or pass --all, not both")),
            (true, []) => store.runs()?,
            (false, named) => {
                let mut seen = std::collections::HashSet::new();
                named
                    .iter()
                    .filter(|r| seen.insert(r.as_str()))
                    .cloned()
                    .collect()
            }
        };
    many(g, &store, &runs, a.all, a.write.dry_run, out)
}

/// Several runs, or `--all`: each repaired (one's refusal, said on
/// standard error, never stops the others). JSON is one array of the
/// runs repaired or clean; text says each repair and, with `--all`, only
/// the runs that had something to repair, then a count.
fn many(
    g: &Invocation,
    store: &Store,
    runs: &[String],
    all: bool,
    dry_run: bool,
    out: &mut dyn Write,
) -> CmdResult {
    let style = g.style;
    let mut done = Vec::new();
    let (mut clean, mut exit) = (0usize, 0u8);
    let mut refused = Vec::new();
    // A store failure stops the batch (issue 36.4).
    let breaker = journal::store::Breaker::default();
    let mut skipped = 0;
    for r in runs {
        match one(g, store, &breaker, r, dry_run) {
            Ok(d) => {
                if matches!(d.action, Action::Nothing { .. }) {
                    clean += 1;
                    if all && style.format == Format::Text {
                        continue;
                    }
                }
                if style.format == Format::Text {
                    render(out, &d)?;
                }
                done.push(d);
            }
            Err(f) if f.error.as_deref().is_some_and(crate::batch::not_attempted) => {
                exit = exit.max(f.exit);
                skipped += 1;
            }
            Err(f) => {
                exit = exit.max(f.exit);
                let msg = format!(
                    "{}; run {r} was not repaired",
                    f.message.trim_end_matches('.')
                );
                crate::error::say(&msg, f.help.as_deref(), style);
                refused.push(r.clone());
            }
        }
    }
    match style.format {
        Format::Json => json_pretty(out, &sorted(&done)?)?,
        Format::Text => {
            let repaired = done
                .iter()
                .filter(|d| !matches!(d.action, Action::Nothing { .. }))
                .count();
            writeln!(
                out,
                "{} run(s): {repaired} {}, {clean} with a clean tail, {} not repaired{}{}",
                runs.len(),
                if dry_run {
                    "would be repaired"
                } else {
                    "repaired"
                },
                refused.len(),
                if refused.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", refused.join(", "))
                },
                match skipped {
                    0 => String::new(),
                    n => format!(", {n} not attempted"),
                }
            )?;
        }
    }
    crate::batch::say_stopped(&breaker, skipped, "repair", style);
    Ok(ExitCode::from(exit))
}

/// Repair one run: what was done, or the refusal (with its salvage
/// route for interior damage: recover).
fn one<'a>(
    g: &Invocation,
    store: &Store,
    breaker: &journal::store::Breaker,
    run: &'a str,
    dry_run: bool,
) -> Result<Repaired<'a>, Failure> {
    let repaired = breaker.run(run, || store.repair(run, dry_run)).map_err(|e| {
        // Interior damage is refused: recover rebuilds the run from its
        // intact records.
        let recover = (Remedy::of(&e) == Some(Remedy::Recover))
            .then(|| hint::fix(g, store, Remedy::Recover, run))
            .flatten();
        let mut f = crate::error::Failure::from(e);
        if let Some(cmd) = recover {
            f.help = Some(format!(
                "`{cmd} --dry-run` shows what recovering would keep, drop and write; `{}` lists every finding",
                hint::command(g, &["verify", run])
            ));
        }
        f
    })?;
    let action = match repaired {
        Repair::Nothing { records } => Action::Nothing { records },
        Repair::AddedNewline { line, records } => Action::AddNewline { line, records },
        Repair::CutTorn {
            line,
            offset,
            len,
            backup,
            records,
        } => Action::CutTornTail {
            line,
            offset,
            bytes: len,
            backup: backup.map(|b| journal::shell::shown(&b)),
            records,
        },
        Repair::RemovedFence { subject, records } => Action::RemoveFence { subject, records },
    };
    // What else is wrong (a dry run reads the journal as it is: its tail
    // findings are the ones the repair would clear).
    let findings = store
        .read_lines(run)
        .map(|b| journal::verify::verify_bytes(run, &b, None).findings)
        .unwrap_or_default();
    let other_errors: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error && !f.code.is_tail())
        // A cut that leaves no record: `rm` is the next step, said below.
        .filter(|f| {
            !(f.code == Code::EmptyJournal
                && matches!(action, Action::CutTornTail { records: 0, .. }))
        })
        .map(|f| match f.line {
            Some(l) => format!("{} at line {l}", f.code),
            None => f.code.to_string(),
        })
        .collect();
    let mut next = Vec::new();
    if !other_errors.is_empty() {
        next.push(hint::command(g, &["verify", run]));
    }
    if matches!(action, Action::CutTornTail { records: 0, .. }) {
        next.push(hint::command(g, &["rm", run]));
    }
    Ok(Repaired {
        run,
        dry_run,
        action,
        other_errors,
        next,
    })
}

fn render(out: &mut dyn Write, done: &Repaired) -> io::Result<()> {
    let run = done.run;
    let would = if done.dry_run { "would " } else { "" };
    match &done.action {
        Action::Nothing { records } => writeln!(
            out,
            "run {run}: the tail is clean ({records} records); nothing to repair"
        )?,
        Action::AddNewline { line, records } => writeln!(
            out,
            "run {run}: {} the missing newline after the final record (line {line}); {records} records",
            if done.dry_run { "would add" } else { "added" }
        )?,
        Action::CutTornTail { line, offset, bytes, backup, records } => {
            writeln!(
                out,
                "run {run}: {would}cut the torn final line {line} ({bytes} bytes at byte {offset}); {records} intact records remain"
            )?;
            match backup {
                Some(b) => writeln!(out, "  its bytes are saved in {b}")?,
                None => writeln!(out, "  its bytes would be saved beside the journal first")?,
            }
            if *records == 0 {
                writeln!(
                    out,
                    "  the journal {} no record: nothing of the run is left to resume",
                    if done.dry_run { "would hold" } else { "holds" }
                )?;
            }
        }
        Action::RemoveFence { subject, records } => writeln!(
            out,
            "run {run}: {} the fence of an interrupted delete or recover on {}; the run is as it was before it was fenced ({records} records)",
            if done.dry_run { "would take away" } else { "took away" },
            crate::output::sanitize(subject, false)
        )?,
    }
    if !done.other_errors.is_empty() {
        writeln!(
            out,
            "  a repair of the tail does not touch the run's other errors, and the agent refuses it for them: {}",
            done.other_errors.join(", ")
        )?;
    }
    // Each command alone on its line, under its label (issue 39, d-22).
    if !done.next.is_empty() {
        writeln!(out, "next:")?;
    }
    for cmd in &done.next {
        writeln!(out, "  {cmd}")?;
    }
    Ok(())
}
