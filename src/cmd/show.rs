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
    #[serde(skip)]
    tail: &'a Tail,
}

pub fn run(g: &Invocation, a: ShowArgs, out: &mut dyn Write) -> CmdResult {
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
    let shown = Shown {
        state: &st,
        stands,
        live,
        records: journal.last_seq(),
        bytes: journal.bytes,
        tail: &journal.tail,
    };
    match style.format {
        Format::Json => json_pretty(out, &shown)?,
        Format::Text => {
            let schemas = journal::schema::SchemaSet::embedded().ok();
            let check = schemas.as_ref().map(|s| s as &dyn RecordCheck);
            let (times, health) = match &read {
                Read::Store(store, _) => {
                    let listed = store.summary(run);
                    let verified = store.verify(&[run.to_owned()], check).ok();
                    let health = verified.and_then(|v| health(g, Some(store), run, &v.reports));
                    ((listed.created, listed.updated), health)
                }
                Read::File(l) => {
                    let created = journal.records().next().and_then(|r| match &r.payload {
                        Some(journal::record::Payload::Meta(m)) => Some(m.created),
                        _ => None,
                    });
                    let report = journal::store::file::Loose::verify(&l.path, check).ok();
                    let health = report.and_then(|r| health(g, None, run, &[r]));
                    ((created, None), health)
                }
            };
            render(out, &shown, run, times, health.as_deref(), g, &a, style)?;
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
) -> Option<String> {
    let errors: Vec<&Finding> = reports
        .iter()
        .flat_map(|r| &r.findings)
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let worst = errors
        .iter()
        .find(|f| f.remedy.is_some())
        .or(errors.first())?;
    let at = worst
        .line
        .map_or_else(String::new, |l| format!(" at line {l}"));
    let more = match errors.len() {
        1 => String::new(),
        n => format!(" (and {} more error(s))", n - 1),
    };
    let fix = worst
        .remedy
        .zip(store)
        .and_then(|(r, store)| crate::hint::fix(g, store, r, run))
        .map_or_else(
            || {
                format!(
                    "every finding: {}",
                    crate::hint::command(g, &["verify", run, "--details"])
                )
            },
            |c| format!("fix: {c}"),
        );
    Some(format!(
        "error[{}]{at}: {}{more}; {fix}",
        worst.code,
        cell(&worst.message, 120)
    ))
}

#[allow(clippy::too_many_arguments)]
fn render(
    out: &mut dyn Write,
    shown: &Shown,
    run: &str,
    (created, updated): (Option<Time>, Option<Time>),
    health: Option<&str>,
    g: &Invocation,
    a: &ShowArgs,
    style: Style,
) -> io::Result<()> {
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
        writeln!(out, "  go on with:  {}", crate::hint::resume(g, run).line())?;
    }
    if let Some(h) = health {
        writeln!(out, "  health:      {}", sanitize(h, false))?;
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
