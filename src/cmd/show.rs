//! `show RUN [--transcript]`: everything an operator needs to decide what to
//! do with a run, and what it is waiting on.

mod transcript;

use crate::cli::ShowArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{cell, json_pretty, sanitize, Format, Style};
use crate::render::state::render_state;
use crate::runs::{fold_journal, until_zero};
use journal::fold::RunState;
use journal::lines::Tail;
use journal::store::{Store, Summary};
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
    live: bool,
    records: u64,
    bytes: u64,
    #[serde(skip)]
    tail: &'a Tail,
}

pub fn run(g: &Invocation, a: ShowArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    if a.transcript && style.format == Format::Text {
        return transcript::show(g, &a, style, out);
    }
    let store = open_store(g)?;
    if a.until_seq == Some(0) {
        return Err(until_zero());
    }
    let journal = match a.until_seq {
        Some(n) => store.read_until(&a.run, n)?,
        None => store.read(&a.run)?,
    };
    let live = store.is_live(&a.run)?;
    let st = fold_journal(&store, &a.run, &journal, a.until_seq)?;
    let shown = Shown {
        state: &st,
        live,
        records: journal.last_seq(),
        bytes: journal.bytes,
        tail: &journal.tail,
    };
    match style.format {
        Format::Json => json_pretty(out, &shown)?,
        Format::Text => {
            let listed = store.summary(&a.run);
            let health = health(g, &store, &a.run);
            render(out, &shown, &listed, health.as_deref(), g, &a, style)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line when `verify` would report an error for the run: its worst
/// finding (the first error with a remedy, else the first error), how
/// many more there are, and the command that fixes it (else the verify
/// command that lists them).
fn health(g: &Invocation, store: &Store, run: &str) -> Option<String> {
    let schemas = journal::schema::SchemaSet::embedded().ok();
    let check = schemas.as_ref().map(|s| s as &dyn RecordCheck);
    let verified = store.verify(&[run.to_owned()], check).ok()?;
    let errors: Vec<&Finding> = verified
        .reports
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
        .and_then(|r| crate::hint::fix(g, store, r, run))
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
    listed: &Summary,
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
    writeln!(out, "  created:     {}", when(listed.created.as_ref()))?;
    // Version 3 records carry no time: the store's own time of the last write.
    let updated = match (st.last_time, a.until_seq) {
        (Some(t), _) => t.to_rfc3339(),
        (None, None) => format!(
            "{} (when it was last stored: its records carry no time)",
            when(listed.updated.as_ref())
        ),
        (None, Some(_)) => "- (its records carry no time)".to_owned(),
    };
    writeln!(out, "  updated:     {updated}")?;
    if !shown.tail.is_clean() {
        writeln!(
            out,
            "  tail:        damaged ({}); run `{}`",
            tail_word(shown.tail),
            crate::hint::command(g, &["verify", &a.run])
        )?;
    }
    render_state(out, st, g, style)
}

fn tail_word(t: &Tail) -> &'static str {
    match t {
        Tail::Clean => "clean",
        Tail::Unterminated { .. } => "final record unterminated",
        Tail::Torn { .. } => "torn final line dropped",
    }
}
