//! `show RUN --transcript`: the whole conversation, block by block. On a
//! terminal the full-screen viewer (`crate::view`); otherwise, or with
//! `--no-tui` / `NO_TUI`, labelled line output, through a pager on a
//! terminal.

use crate::cli::ShowArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::Style;
use crate::transcript::index::Transcript;
use crate::transcript::{end, pager, text};
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

pub fn show(g: &Invocation, a: &ShowArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let (mut t, end) = match a.target.file.file.as_deref() {
        Some(path) => {
            let (run, bytes) = journal::store::file::Loose::bytes(path)?;
            let end = end::closing_file(g, &run, &bytes, path);
            let t = Transcript::new(g, &run, bytes, end.blocks).of_file(path);
            (t, end.next)
        }
        None => {
            // clap requires a run when there is no --file.
            let run = a.target.run.as_deref().unwrap_or_default();
            let store = open_store(g)?;
            let bytes = store.read_lines(run)?;
            let end = end::closing(g, run, &bytes);
            let mut t = Transcript::new(g, run, bytes, end.blocks);
            t.by_hand = by_hand(&store, run)?;
            (t, end.next)
        }
    };
    t.find = a.find.clone().map(|re| (re.as_str().to_owned(), re));
    let tty = io::stdout().is_terminal();
    if tty && !a.no_tui && !crate::invocation::env_on("NO_TUI") {
        return crate::view::run(&mut t, &end, style, out);
    }
    let thinking = a.thinking || crate::invocation::env_on("THINKING");
    if tty && !a.no_pager {
        pager::through(out, style.color, |w| {
            text::print(&mut t, thinking, style.color, w)
        })?;
    } else {
        let mut w = io::BufWriter::with_capacity(1 << 16, out);
        text::print(&mut t, thinking, style.color, &mut w)?;
        w.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The records of `run` written by hand one at a time (an answer, an
/// approval, an end), by seq, each with who wrote it, when and why, as
/// the store's audit log says (issue 38); neutralised for printing.
fn by_hand(
    store: &journal::Store,
    run: &str,
) -> Result<std::collections::HashMap<u64, String>, crate::error::Failure> {
    let log = store.audit_log()?;
    Ok(journal::custody::acts(&log, run)
        .into_iter()
        .filter(|a| matches!(a.op.as_str(), "answer" | "approve" | "end"))
        .filter_map(|a| {
            let s = a.written?;
            Some((
                s.first,
                crate::output::sanitize(&a.sentence(), false).into_owned(),
            ))
        })
        .collect())
}
