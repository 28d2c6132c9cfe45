//! `show RUN --follow` (issue 27.3): the line transcript of a run being
//! written, each record printed (and flushed) as it is stored, through the
//! same renderer as `show --transcript --no-tui`; it ends by itself, with
//! the closing section and status 0, when the run reaches a terminal
//! record, and on Ctrl-C (SIGINT, SIGTERM, SIGHUP) with status 130. No
//! pager: a pager would hold the lines back. The records come from the
//! journal crate's follow source (`journal::store::follow`), whatever the backend.
//! With `--transcript` on a terminal the viewer follows instead
//! (`crate::view`).

use crate::cli::ShowArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{Format, Style};
use crate::transcript::index::Transcript;
use crate::transcript::{end, text};
use journal::store::follow::{Follow, Started};
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long one wait for new records lasts: how soon Ctrl-C is seen.
const TICK: Duration = Duration::from_millis(200);

/// The viewer's wait for new records between two looks at the keyboard:
/// short, the viewer waits for keys itself.
const FEED_WAIT: Duration = Duration::from_millis(10);

/// The run followed: where its records come from, and what closes its
/// transcript.
pub struct Followed {
    pub follow: Follow,
    /// The journal file (`--file`), else a run of the store.
    file: Option<std::path::PathBuf>,
    /// Once the run has ended: the commands that answer what it waits on
    /// (the viewer prints them when it leaves).
    next: Vec<String>,
    /// No writer held the run when following began (the store's lock or
    /// hold): nothing may come until someone resumes it.
    idle: bool,
}

impl Followed {
    /// Read the run (or `--file`) and start following it: its transcript
    /// so far (closed already when the run has ended).
    pub fn start(g: &Invocation, a: &ShowArgs) -> Result<(Transcript, Followed), Failure> {
        let file = a.target.file.file.clone();
        let (started, idle) = match &file {
            Some(path) => (Started::file(path)?, false),
            None => {
                // clap requires a run when there is no --file.
                let run = a.target.run.as_deref().unwrap_or_default();
                let store = open_store(g)?;
                let started = store.follow(run)?;
                // Asked after the read: a writer gone by then is gone.
                let idle = !started.follow.ended() && store.is_live(run).is_ok_and(|live| !live);
                (started, idle)
            }
        };
        let mut t = Transcript::new(g, &started.run, started.lines, Vec::new());
        if let Some(path) = &file {
            t = t.of_file(path);
        }
        let mut t = t.following();
        let mut f = Followed {
            follow: started.follow,
            file,
            next: Vec::new(),
            idle,
        };
        if f.follow.ended() {
            f.close(g, &mut t);
        }
        Ok((t, f))
    }

    /// Wait up to `wait` for new records and add them to `t`; once the
    /// run has ended, close `t` with its closing section. True when
    /// anything was added.
    pub fn step(
        &mut self,
        g: &Invocation,
        t: &mut Transcript,
        wait: Duration,
    ) -> Result<bool, Failure> {
        if self.follow.ended() {
            return Ok(false);
        }
        let got = self.follow.poll(wait)?;
        for f in &got {
            t.append(&f.line);
        }
        if self.follow.ended() {
            self.close(g, t);
        }
        Ok(!got.is_empty())
    }

    /// The run ended: the closing section, built as `show --transcript`
    /// builds it.
    fn close(&mut self, g: &Invocation, t: &mut Transcript) {
        let closing = match &self.file {
            Some(path) => end::closing_file(g, &t.run, t.bytes(), path),
            None => end::closing(g, &t.run, t.bytes()),
        };
        t.close(closing.blocks);
        self.next = closing.next;
    }
}

pub fn show(g: &Invocation, a: &ShowArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    if style.format == Format::Json {
        return Err(Failure::new(
            "--follow prints the transcript as text: drop -o json (`export --format jsonl` gives the records as JSON lines)",
        ));
    }
    let (mut t, mut f) = Followed::start(g, a)?;
    if a.transcript
        && !a.no_tui
        && !crate::invocation::env_on("NO_TUI")
        && io::stdout().is_terminal()
    {
        let mut feed = |t: &mut Transcript| {
            let added = f.step(g, t, FEED_WAIT)?;
            Ok(crate::view::Fed {
                added,
                notice: f.follow.notice().map(|n| n.to_string()),
            })
        };
        let code = crate::view::run_fed(&mut t, &[], style, out, Some(&mut feed))?;
        // What the run waits on is known only once it has ended.
        if code == ExitCode::SUCCESS {
            crate::view::print_next(&f.next)?;
        }
        return Ok(code);
    }
    let stop = crate::signal::flag()?;
    let thinking = a.thinking || crate::invocation::env_on("THINKING");
    text::header(&t, out)?;
    let mut idle = f.idle;
    loop {
        text::more(&mut t, thinking, style.color, out)?;
        out.flush()?;
        if f.follow.ended() {
            return Ok(ExitCode::SUCCESS);
        }
        if std::mem::take(&mut idle) {
            // Said once, after what is there: following a run nobody
            // writes waits until someone resumes it.
            eprintln!(
                "fisk-admin: no writer holds run {} now; following until one writes its terminal record (Ctrl-C to stop)",
                crate::output::sanitize(&t.run, false)
            );
        }
        if stop.load(Ordering::Relaxed) {
            eprintln!(
                "fisk-admin: stopped following run {}",
                crate::output::sanitize(&t.run, false)
            );
            return Ok(ExitCode::from(130));
        }
        f.step(g, &mut t, TICK)?;
        // The server gone (waited for) or back: said as it happens.
        if let Some(notice) = f.follow.notice() {
            let stop = match notice {
                journal::store::follow::Notice::Waiting { .. } => " (Ctrl-C to stop)",
                _ => "",
            };
            eprintln!(
                "fisk-admin: {}{stop}",
                crate::output::sanitize(&notice.to_string(), false)
            );
        }
    }
}
