//! `ls --watch` and `inbox --watch` (kubectl's `get -w`): the listing made
//! again every interval until Ctrl-C (exit 130). On a terminal the screen
//! is cleared and the listing shown anew under the time it was made; into
//! a pipe the first listing is written whole, then only the rows that are
//! new or changed since the one before (a column that changes by itself,
//! as inbox's WAITED, is not a change); JSON is a document per listing,
//! one a line.

use crate::error::CmdResult;
use std::collections::HashSet;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How a listing is watched.
pub struct Watch {
    pub every: Duration,
    /// Each listing whole (JSON), not the rows that changed.
    pub whole: bool,
    /// The tab-separated fields a row may change in by itself (not a
    /// change: inbox's WAITED).
    pub volatile: &'static [usize],
}

/// A listing, once or (`--watch EVERY`) again and again: `ls` and
/// `inbox` alike.
pub fn listing(
    every: Option<Duration>,
    whole: bool,
    volatile: &'static [usize],
    out: &mut dyn Write,
    mut once: impl FnMut(&mut dyn Write) -> CmdResult,
) -> CmdResult {
    match every {
        Some(every) => Watch {
            every,
            whole,
            volatile,
        }
        .run(out, |buf| once(buf)),
        None => once(out),
    }
}

impl Watch {
    /// Run `once` (one listing, into the buffer it is given) again and
    /// again, until Ctrl-C or until a listing fails (its error ends it).
    pub fn run(
        &self,
        out: &mut dyn Write,
        mut once: impl FnMut(&mut Vec<u8>) -> CmdResult,
    ) -> CmdResult {
        let stop = crate::signal::flag()?;
        let tty = io::stdout().is_terminal();
        let mut seen: Option<HashSet<String>> = None;
        loop {
            let mut buf = Vec::new();
            once(&mut buf)?;
            let text = String::from_utf8_lossy(&buf);
            if tty {
                out.write_all(b"\x1b[H\x1b[2J")?;
                writeln!(
                    out,
                    "every {}, at {} (Ctrl-C to stop)",
                    journal::time::format_duration(self.every),
                    journal::time::Time::now().to_rfc3339_seconds()
                )?;
                out.write_all(&buf)?;
            } else if self.whole || seen.is_none() {
                out.write_all(&buf)?;
            } else if let Some(before) = &seen {
                for line in text.lines() {
                    if !before.contains(&self.key(line)) {
                        writeln!(out, "{line}")?;
                    }
                }
            }
            out.flush()?;
            seen = Some(text.lines().map(|l| self.key(l)).collect());
            let until = Instant::now() + self.every;
            loop {
                if stop.load(Ordering::Relaxed) {
                    return Ok(ExitCode::from(130));
                }
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(100)));
            }
        }
    }

    /// A row as compared between two listings: its fields but the
    /// volatile ones.
    fn key(&self, line: &str) -> String {
        line.split('\t')
            .enumerate()
            .filter(|(i, _)| !self.volatile.contains(i))
            .map(|(_, f)| f)
            .collect::<Vec<_>>()
            .join("\t")
    }
}
