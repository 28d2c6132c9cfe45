//! The library's error type. Every variant carries what an operator needs to
//! find the problem (run, path, line, byte offset) and the message says what
//! to do next.

use crate::fold::FoldError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid run id {id:?}: {reason} (ids match ^[a-zA-Z0-9][a-zA-Z0-9_-]*$, at most 128 bytes)")]
    InvalidId { id: String, reason: &'static str },

    #[error("run {run} not found at {}", path.display())]
    NotFound { run: String, path: PathBuf },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("run {run}: {}{} (byte {offset}): {message}; run `fisk-admin verify {run}` for the full report", path.display(), at_line(*line))]
    Corrupt {
        run: String,
        path: PathBuf,
        line: usize,
        offset: u64,
        message: String,
    },

    #[error("run {run}: the fold refuses the journal{}: {source}; run `fisk-admin verify {run}` for every finding with its line", at.as_deref().map(|w| format!(" at {w}")).unwrap_or_default())]
    Fold {
        run: String,
        /// Where the record it refuses is stored.
        at: Option<String>,
        #[source]
        source: FoldError,
    },

    #[error("run {run} is live: another process holds its lock{}; wait for it to finish or stop it first", holder.as_deref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Live { run: String, holder: Option<String> },

    #[error("run {run} already exists in {location}; pick another id, or continue it instead of creating it")]
    Exists { run: String, location: String },

    #[error("run {run}: {}{} (byte {offset}) is a torn final line (an unfinished write); nothing is appended onto it; run `fisk-admin repair {run}` to cut it (its bytes are kept in a backup file), then try again", path.display(), at_line(*line))]
    TornTail {
        run: String,
        path: PathBuf,
        line: usize,
        offset: u64,
    },

    /// The tool worked and said no: a gate, a state that forbids the action.
    #[error("run {run}: {message}")]
    Refused { run: String, message: String },

    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },

    #[error("{0}")]
    Usage(String),

    #[error("{context}: {message}")]
    Store { context: String, message: String },
}

/// ` line N`, or nothing where the line is not known (0): a summary reads
/// only the head and tail of a journal and cannot count its lines.
fn at_line(line: usize) -> String {
    match line {
        0 => String::new(),
        n => format!(" line {n}"),
    }
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
