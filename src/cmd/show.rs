//! `show RUN [--transcript]`: everything an operator needs to decide what to
//! do with a run, and what it is waiting on.

mod follow;
mod transcript;

use crate::cli::ShowArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::output::{cell, json_pretty, sanitize, Format, Style};
use crate::render::state::render_state;
use crate::runs::{until_zero, Read};
use journal::fold::RunState;
use journal::lines::Tail;
use journal::store::Store;
use journal::time::Time;
use journal::verify::{Finding, RecordCheck, Severity};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// A run as `show` reports it: the fold's object and three keys more,
/// serialised straight out: through a `serde_json::Value` a deeply nested
/// tool input would hit its recursion limit, where `fold --format json`
/// prints it.
#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    state: &'a RunState,
    /// Where the run stands (the run model, beside the agent's status).
    #[serde(rename = "state")]
    stands: journal::state::State,
    live: bool,
    records: u64,
    bytes: u64,
    /// Beyond the fold (issue 39, d-23): `meta.created` and the last
    /// activity, as `ls` gives them (null when unknown).
    created: Option<Time>,
    updated: Option<Time>,
    /// verify's worst error for the run, with the command that fixes it;
    /// null when verify finds no error.
    health: Option<Health>,
    /// What the run was forked from, when `fork` made it (null otherwise).
    forked_from: Option<crate::runs::ForkNote>,
    #[serde(skip)]
    tail: &'a Tail,
}

/// verify's worst error for a run: the first error with a remedy, else
/// the first error.
#[derive(Serialize)]
struct Health {
    code: String,
    line: Option<usize>,
    message: String,
    /// How many errors verify finds in all.
    errors: usize,
    /// The command that fixes it (null: none does; `verify RUN --details`
    /// lists every finding).
    fix: Option<String>,
}

pub fn run(g: &Invocation, mut a: ShowArgs, out: &mut dyn Write) -> CmdResult {
    a.target.settle(g)?;
    let style = g.style;
    if a.follow {
        return follow::show(g, &a, style, out);
    }
    if a.transcript && style.format == Format::Text {
        return transcript::show(g, &a, style, out);
    }
    if a.until_seq == Some(0) {
        return Err(until_zero());
    }
    let read = Read::open(
        g,
        a.target.run.as_deref(),
        a.target.file.file.as_deref(),
        a.until_seq,
    )?;
    let journal = read.journal();
    let run = read.run();
    // A journal file outside a store has no writer to hold it.
    let holder = match &read {
        Read::Store(store, _) => store.holder(run)?,
        Read::File(_) => None,
    };
    let live = holder.is_some();
    let st = read.fold(a.until_seq)?;
    let stands = journal::state::State::of_fold(&st, !journal.tail.is_clean(), holder);
    let schemas = journal::schema::SchemaSet::embedded().ok();
    let check = schemas.as_ref().map(|s| s as &dyn RecordCheck);
    let meta = journal.entries.first().map(|e| e.raw.as_slice());
    let ((created, updated), health, forked_from) = match &read {
        Read::Store(store, _) => {
            let listed = store.summary(run);
            let verified = store.verify(&[run.to_owned()], check).ok();
            let health = verified.and_then(|v| health(g, Some(store), run, &v.reports));
            let forked = meta.and_then(|m| crate::runs::ForkNote::of(store, run, m));
            ((listed.created, listed.updated), health, forked)
        }
        Read::File(l) => {
            let created = journal.records().next().and_then(|r| match &r.payload {
                Some(journal::record::Payload::Meta(m)) => Some(m.created),
                _ => None,
            });
            let report = journal::store::file::Loose::verify(&l.path, check).ok();
            let health = report.and_then(|r| health(g, None, run, &[r]));
            // As the file store says it (SPEC 9): the last record's time,
            // else the file's mtime.
            let updated = journal
                .entries
                .last()
                .and_then(|e| e.record.time)
                .or_else(|| {
                    std::fs::metadata(&l.path)
                        .and_then(|m| m.modified())
                        .ok()
                        .map(Time::from_system)
                });
            ((created, updated), health, None)
        }
    };
    let shown = Shown {
        state: &st,
        stands,
        live,
        records: journal.last_seq(),
        bytes: journal.bytes,
        created: created.filter(|c| !c.is_zero()),
        updated,
        health,
        forked_from,
        tail: &journal.tail,
    };
    match style.format {
        Format::Json => json_pretty(out, &shown)?,
        Format::Text => {
            render(out, &shown, run, g, &a, style)?;
            if let Read::Store(store, _) = &read {
                by_hand(out, store, run)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line when `verify` would report an error for the run: its worst
/// finding (the first error with a remedy, else the first error), how
/// many more there are, and the command that fixes it (else the verify
/// command that lists them).
/// A journal file (no `store`) gets no fix of a store's.
fn health(
    g: &Invocation,
    store: Option<&Store>,
    run: &str,
    reports: &[journal::verify::Report],
) -> Option<Health> {
    let errors: Vec<&Finding> = reports
        .iter()
        .flat_map(|r| &r.findings)
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let worst = errors
        .iter()
        .find(|f| f.remedy.is_some())
        .or(errors.first())?;
    let fix = worst
        .remedy
        .zip(store)
        .and_then(|(r, store)| crate::hint::fix(g, store, r, run));
    Some(Health {
        code: worst.code.to_string(),
        line: worst.line,
        message: worst.message.clone(),
        errors: errors.len(),
        fix,
    })
}

/// The health line: the worst error, how many more, and its fix (else the
/// verify that lists them all).
fn health_line(g: &Invocation, run: &str, h: &Health) -> String {
    let at = h.line.map_or_else(String::new, |l| format!(" at line {l}"));
    let more = match h.errors {
        0 | 1 => String::new(),
        n => format!(" (and {} more error(s))", n - 1),
    };
    let fix = match &h.fix {
        Some(c) => format!("fix: {c}"),
        None => format!(
            "every finding: {}",
            crate::hint::command(g, &["verify", run, "--details"])
        ),
    };
    format!(
        "error[{}]{at}: {}{more}; {fix}",
        h.code,
        cell(&h.message, 120)
    )
}

fn render(
    out: &mut dyn Write,
    shown: &Shown,
    run: &str,
    g: &Invocation,
    a: &ShowArgs,
    style: Style,
) -> io::Result<()> {
    let (created, updated) = (shown.created, shown.updated);
    let st = shown.state;
    match a.until_seq {
        Some(_) => writeln!(
            out,
            "Run {} as of seq {}",
            sanitize(&st.run_id, false),
            st.last_seq
        )?,
        None => writeln!(out, "Run {}", sanitize(&st.run_id, false))?,
    }
    writeln!(
        out,
        "  status:      {}{}",
        sanitize(&st.status.to_string(), false),
        if shown.live {
            " (live: a writer holds it now)"
        } else {
            ""
        }
    )?;
    writeln!(out, "  state:       {}", stands_words(&shown.stands))?;
    // A ready run's next step, a command alone on its line (a copy of a
    // journal is not where the run is: no command).
    if shown.stands == journal::state::State::Ready && a.target.file.file.is_none() {
        writeln!(
            out,
            "{}",
            crate::hint::resume(g, run).step("  ", "go on with")
        )?;
    }
    if let Some(h) = &shown.health {
        writeln!(
            out,
            "  health:      {}",
            sanitize(&health_line(g, run, h), false)
        )?;
    }
    // Said by `fork`'s note beside the run: its meta record is the
    // source's but for the id, `created` included (issue 39, d-20).
    if let Some(f) = &shown.forked_from {
        writeln!(
            out,
            "  forked from: {} at seq {}, on {} (its created is the source's)",
            sanitize(&f.from, false),
            f.at_seq,
            sanitize(&f.when, false)
        )?;
    }
    if st.waiting {
        writeln!(
            out,
            "  waiting:     on {} deferred call(s), listed at the end",
            st.open_deferrals
        )?;
    }
    if let Some(t) = st.ended {
        writeln!(out, "  ended:       {t}")?;
    }
    writeln!(
        out,
        "  records:     {} ({} bytes)",
        shown.records, shown.bytes
    )?;
    let when =
        |t: Option<&journal::time::Time>| t.map_or_else(|| "-".to_owned(), |t| t.to_rfc3339());
    writeln!(out, "  created:     {}", when(created.as_ref()))?;
    // Version 3 records carry no time: the store's own time of the last write.
    let updated = match (st.last_time, a.until_seq) {
        (Some(t), _) => t.to_rfc3339(),
        (None, None) => format!(
            "{} (when it was last stored: its records carry no time)",
            when(updated.as_ref())
        ),
        (None, Some(_)) => "- (its records carry no time)".to_owned(),
    };
    writeln!(out, "  updated:     {updated}")?;
    if !shown.tail.is_clean() {
        writeln!(
            out,
            "  tail:        damaged ({}); run `{}`",
            tail_word(shown.tail),
            crate::hint::command(g, &["verify", run])
        )?;
    }
    render_state(out, st, g, style)
}

/// A run's state in words, for `show`.
fn stands_words(s: &journal::state::State) -> String {
    format!("{} ({})", s.word(), s.why())
}

fn tail_word(t: &Tail) -> &'static str {
    match t {
        Tail::Clean => "clean",
        Tail::Unterminated { .. } => "final record unterminated",
        Tail::Torn { .. } => "torn final line dropped",
    }
}

/// What was written to the run by hand, as the store's audit log says
/// (issue 38): "seq 5: answered by alice at T: why". Nothing when the log
/// says nothing of the run.
fn by_hand(out: &mut dyn Write, store: &Store, run: &str) -> Result<(), crate::error::Failure> {
    let acts = journal::custody::acts(&store.audit_log()?, run);
    if acts.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nBy hand (the audit log):")?;
    for a in acts {
        let at = a.written.map_or_else(String::new, |s| format!("seq {s}: "));
        writeln!(out, "  {at}{}", sanitize(&a.sentence(), false))?;
    }
    Ok(())
}
