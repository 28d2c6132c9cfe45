//! `show RUN --follow` (issue 27.3): the line transcript of a run being
//! written, each record printed (and flushed) as it is stored, through the
//! same renderer as `show --transcript --no-tui`; it ends by itself, with
//! the closing section and status 0, when the run reaches a terminal
//! record, and on Ctrl-C (SIGINT, SIGTERM, SIGHUP) with status 130. No
//! pager: a pager would hold the lines back. The records come from the
//! journal crate's follow source (`journal::follow`), whatever the backend.
//! With `--transcript` on a terminal the viewer follows instead
//! (`crate::view`).

use crate::cli::ShowArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{Format, Style};
use crate::transcript::index::Transcript;
use crate::transcript::{end, text};
use journal::follow::{Follow, Started};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long one wait for new records lasts: how soon Ctrl-C is seen.
const TICK: Duration = Duration::from_millis(200);

/// The run followed, its transcript so far, and what closes it.
pub struct Followed {
    pub transcript: Transcript,
    pub follow: Follow,
    /// The journal file (`--file`), else a run of the store.
    file: Option<std::path::PathBuf>,
}

impl Followed {
    /// Read the run (or `--file`) and start following it.
    pub fn start(g: &Invocation, a: &ShowArgs) -> Result<Followed, Failure> {
        let file = a.target.file.file.clone();
        let started = match &file {
            Some(path) => Started::file(path)?,
            None => {
                // clap requires a run when there is no --file.
                let run = a.target.run.as_deref().unwrap_or_default();
                open_store(g)?.follow(run)?
            }
        };
        let mut transcript = Transcript::new(g, &started.run, started.lines, Vec::new());
        if let Some(path) = &file {
            transcript = transcript.of_file(path);
        }
        Ok(Followed {
            transcript: transcript.following(),
            follow: started.follow,
            file,
        })
    }

    /// Wait up to `wait` for new records and add them to the transcript;
    /// once the run has ended, close the transcript with its closing
    /// section. True when anything was added.
    pub fn step(&mut self, g: &Invocation, wait: Duration) -> Result<bool, Failure> {
        let got = self.follow.poll(wait)?;
        for f in &got {
            self.transcript.append(&f.line);
        }
        if self.follow.ended() {
            self.close(g);
        }
        Ok(!got.is_empty())
    }

    /// The run ended: the closing section, built as `show --transcript`
    /// builds it.
    fn close(&mut self, g: &Invocation) {
        let t = &self.transcript;
        let closing = match &self.file {
            Some(path) => end::closing_file(g, &t.run, t.bytes(), path),
            None => end::closing(g, &t.run, t.bytes()),
        };
        self.transcript.close(closing.blocks);
    }
}

pub fn show(g: &Invocation, a: &ShowArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    if style.format == Format::Json {
        return Err(Failure::new(
            "--follow prints the transcript as text: drop -o json (`export --as jsonl` gives the records as JSON lines)",
        ));
    }
    let stop = crate::signal::flag()?;
    let mut f = Followed::start(g, a)?;
    if f.follow.ended() {
        f.close(g);
    }
    let thinking = a.thinking || super::transcript::env_on("THINKING");
    text::header(&f.transcript, out)?;
    loop {
        text::more(&mut f.transcript, thinking, out)?;
        out.flush()?;
        if f.follow.ended() {
            return Ok(ExitCode::SUCCESS);
        }
        if stop.load(Ordering::Relaxed) {
            eprintln!(
                "fisk-admin: stopped following run {}",
                crate::output::sanitize(&f.transcript.run, false)
            );
            return Ok(ExitCode::from(130));
        }
        f.step(g, TICK)?;
    }
}
