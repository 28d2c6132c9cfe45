//! `show RUN [--transcript]`: everything an operator needs to decide what to
//! do with a run, and what it is waiting on.

use super::fold::fold_journal;
use crate::cli::{Global, ShowArgs};
use crate::error::CmdResult;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, Format, Style};
use crate::render::state::render_state;
use journal::fold::RunState;
use journal::lines::Tail;
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

pub fn run(g: &Global, a: ShowArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    if a.transcript && style.format == Format::Text {
        return crate::transcript::show(g, &a, style, out);
    }
    let store = open_store(g)?;
    let journal = store.read(&a.run)?;
    let live = store.is_live(&a.run)?;
    let st = fold_journal(&store, &a.run, &journal, None)?;
    let shown = Shown {
        state: &st,
        live,
        records: journal.last_seq(),
        bytes: journal.bytes,
        tail: &journal.tail,
    };
    match style.format {
        Format::Json => json_pretty(out, &shown)?,
        Format::Text => render(out, &shown, &a)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut dyn Write, shown: &Shown, a: &ShowArgs) -> io::Result<()> {
    let st = shown.state;
    writeln!(out, "Run {}", sanitize(&st.run_id, false))?;
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
    if !shown.tail.is_clean() {
        writeln!(
            out,
            "  tail:        damaged ({:?}); run `fisk-admin verify {}`",
            tail_word(shown.tail),
            a.run
        )?;
    }
    render_state(out, st)
}

fn tail_word(t: &Tail) -> &'static str {
    match t {
        Tail::Clean => "clean",
        Tail::Unterminated { .. } => "final record unterminated",
        Tail::Torn { .. } => "torn final line dropped",
    }
}
