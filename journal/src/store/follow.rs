//! Following a run as it is written (`show RUN --follow`, issue 27.3):
//! the records a writer appends after those read, decoded, as they arrive,
//! until a terminal record. The library owns it so the binary's line
//! transcript and viewer read one source whatever the backend: a journal
//! file is polled (`store/file/follow.rs`), a JetStream run read through
//! an ordered consumer from the stream sequence after the last message
//! read (`store/jetstream/follow.rs`).
//!
//! [`Store::follow`] reads the run and starts following from what it read
//! in the same step, so no record falls between the read and the follow.

use super::file::FileFollow;
use super::jetstream::JetStreamFollow;
use super::Store;
use crate::error::Result;
use crate::record::{Payload, Record};
use std::path::Path;
use std::time::Duration;

/// A run being followed. [`poll`](Follow::poll) for the records appended
/// since; [`ended`](Follow::ended) once a terminal record came.
pub struct Follow {
    source: Source,
    ended: bool,
}

enum Source {
    File(FileFollow),
    JetStream(Box<JetStreamFollow>),
}

/// What a follower says beside the records ([`Follow::notice`]), once
/// each time it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// The server does not answer (`why`): the follower waits for it,
    /// then goes on from the last record it gave.
    Waiting {
        /// What failed, in words.
        why: String,
    },
    /// The server answers again: the follow of `run` goes on.
    Back {
        /// The run followed.
        run: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // What it does first: a status bar shows the start of it.
            Notice::Waiting { why } => write!(
                f,
                "waiting for the server to answer again ({why}), then following on from the last record shown"
            ),
            Notice::Back { run } => write!(
                f,
                "the server answers again: following run {} on",
                crate::shell::text(run)
            ),
        }
    }
}

/// One record appended to the run followed.
#[derive(Debug, Clone)]
pub struct Followed {
    /// The record's bytes as stored (a file's line, a message's body),
    /// without a `\n`.
    pub line: Vec<u8>,
    /// The record decoded.
    pub record: Record,
}

/// The start of a follow: the run's lines read so far and the follower.
pub struct Started {
    /// The run's id (a journal file's: its meta record's, else the
    /// file's name without `.json`).
    pub run: String,
    /// The run's records so far as the lines of a journal (a file's bytes
    /// as stored, up to the last whole line; a stream's bodies each with
    /// `\n`).
    pub lines: Vec<u8>,
    /// What comes after them.
    pub follow: Follow,
}

/// Whether the last record of the journal `lines` that decodes is a
/// terminal record: a run that has ended, with nothing to follow.
fn ends(lines: &[u8]) -> bool {
    crate::lines::split(lines)
        .filter(|l| !l.bytes.iter().all(u8::is_ascii_whitespace))
        .filter_map(|l| Record::decode(l.bytes).ok())
        .last()
        .is_some_and(|r| is_terminal(&r))
}

fn is_terminal(r: &Record) -> bool {
    matches!(r.payload, Some(Payload::Terminal(_)))
}

impl Store {
    /// Read `run` and follow it from there.
    pub fn follow(&self, run: &str) -> Result<Started> {
        let (lines, source) = match self {
            Store::File(f) => {
                let (path, file) = f.open(run)?;
                let (lines, follow) = FileFollow::start(run, &path, file)?;
                (lines, Source::File(follow))
            }
            Store::JetStream(j) => {
                let (lines, follow) = j.follow(run)?;
                (lines, Source::JetStream(Box::new(follow)))
            }
        };
        Ok(Started::new(run.to_owned(), lines, source))
    }
}

impl Started {
    fn new(run: String, lines: Vec<u8>, source: Source) -> Started {
        let ended = ends(&lines);
        Started {
            run,
            lines,
            follow: Follow { source, ended },
        }
    }

    /// Read the journal file at `path`, outside any store (`--file`), and
    /// follow it.
    pub fn file(path: &Path) -> Result<Started> {
        let (lines, mut follow) = FileFollow::start_path("", path)?;
        let run = crate::store::file::run_of(path, &lines);
        follow.named(&run);
        Ok(Started::new(run, lines, Source::File(follow)))
    }
}

impl Follow {
    /// The records appended since the last call (or since the read),
    /// in order: waits up to `wait` for the first, returns as soon as
    /// some came, empty when none did. Nothing after a terminal record is
    /// returned; once one came, [`ended`](Self::ended) is true and this
    /// returns nothing more.
    ///
    /// Errors: a line that does not decode although whole (naming the
    /// file and line, or the subject); the journal removed or written
    /// anew (`repair`, `upgrade`) while followed; the server gone.
    pub fn poll(&mut self, wait: Duration) -> Result<Vec<Followed>> {
        if self.ended {
            return Ok(Vec::new());
        }
        let got = match &mut self.source {
            Source::File(f) => f.poll(wait)?,
            Source::JetStream(j) => j.poll(wait)?,
        };
        let mut out = Vec::with_capacity(got.len());
        for (line, record) in got {
            let end = is_terminal(&record);
            out.push(Followed { line, record });
            if end {
                self.ended = true;
                break;
            }
        }
        Ok(out)
    }

    /// What the follower has to say, once, beside the records: the server
    /// does not answer and it waits for it, or it answers again
    /// (JetStream).
    pub fn notice(&mut self) -> Option<Notice> {
        match &mut self.source {
            Source::File(_) => None,
            Source::JetStream(j) => j.notice(),
        }
    }

    /// Whether the run reached a terminal record: nothing more comes.
    pub fn ended(&self) -> bool {
        self.ended
    }
}
