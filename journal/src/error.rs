//! The library's error type. Every variant carries what an operator needs to
//! find the problem (run, path, line, byte offset); the message says what is
//! wrong. What to run next is the binary's to say (it knows its commands and
//! flags): `src/error.rs` adds it from the variant.

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

    #[error("run {run}: {}{} (byte {offset}): {message}", path.display(), at_line(*line))]
    Corrupt {
        run: String,
        path: PathBuf,
        line: usize,
        offset: u64,
        message: String,
    },

    #[error("run {run}: the fold refuses the journal{}: {source}", at.as_deref().map(|w| format!(" at {w}")).unwrap_or_default())]
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

    #[error("run {run}: {}{} (byte {offset}) is a torn final line (an unfinished write); nothing is appended onto it", path.display(), at_line(*line))]
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

    /// A failure of the store as a whole, or one not yet told apart (the
    /// JetStream server's errors, a runtime that did not start): what
    /// `migrate` stops starting further runs on.
    #[error("{context}: {message}")]
    Store { context: String, message: String },

    /// A writer whose earlier write failed refuses every further one: what
    /// landed is unknown until the run is read again.
    #[error("run {run} ({}): an earlier write failed ({why}); this writer stops", path.display())]
    Poisoned {
        run: String,
        path: PathBuf,
        why: String,
    },

    /// An append would leave seqs out (SPEC 2): nothing was written.
    #[error("run {run}: record seq {seq} would leave a gap after seq {last}; nothing was written")]
    Gap { run: String, seq: u64, last: u64 },

    /// A journal or lock that is a symbolic link, which no writer follows.
    #[error("{}: is a symbolic link, which no writer here follows", path.display())]
    Symlink { path: PathBuf },

    /// Something other than a regular file where a journal must be.
    #[error("{}: {what}", path.display())]
    NotAFile { path: PathBuf, what: String },

    /// A source run changed while it was copied: it is not deleted.
    #[error("run {run}: the source now ends at seq {have}, the copy at seq {copied}: it changed while migrating, so it was not deleted; re-run to copy the rest")]
    SourceChanged { run: String, have: u64, copied: u64 },
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

    /// Whether the store as a whole failed, so that further runs would fail
    /// the same way (`migrate` stops starting runs on this, and only this):
    /// the JetStream server or connection, and I/O errors of the disk
    /// itself (full, read-only, failing). A refusal of one run, or an I/O
    /// error about one path (a directory named like a journal, a link, a
    /// permission), is not.
    pub fn is_store_failure(&self) -> bool {
        match self {
            Error::Store { .. } => true,
            Error::Io { source, .. } => {
                use std::io::ErrorKind as K;
                matches!(
                    source.kind(),
                    K::StorageFull | K::ReadOnlyFilesystem | K::QuotaExceeded
                ) || matches!(
                    source.raw_os_error(),
                    Some(libc::EIO | libc::ENOSPC | libc::EROFS | libc::EDQUOT)
                )
            }
            _ => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_store_wide_failures_stop_a_migrate() {
        let io = |e: std::io::Error| Error::io("/s/x.json", e);
        assert!(io(std::io::Error::from_raw_os_error(libc::ENOSPC)).is_store_failure());
        assert!(io(std::io::Error::from_raw_os_error(libc::EROFS)).is_store_failure());
        assert!(!io(std::io::Error::from_raw_os_error(libc::EISDIR)).is_store_failure());
        assert!(!io(std::io::Error::from_raw_os_error(libc::EACCES)).is_store_failure());
        assert!(!Error::Symlink {
            path: "/s/x.lock".into()
        }
        .is_store_failure());
        assert!(!Error::NotAFile {
            path: "/s/x.json".into(),
            what: "a directory".into()
        }
        .is_store_failure());
        assert!(Error::Store {
            context: "stream S".into(),
            message: "timed out".into()
        }
        .is_store_failure());
    }
}
