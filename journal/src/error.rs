//! The library's error type. Every variant carries what an operator needs to
//! find the problem as data (a [`Where`]: a path and line, or a stream and
//! subject), and its message says what is wrong. What to run next is the
//! binary's to say (it knows its commands and this invocation's flags): a
//! refusal names the way past it as a [`Remedy`], and `src/error.rs` turns
//! that into a command.

use crate::fold::FoldError;
pub use crate::place::{Subject, Where};
pub use crate::refusal::{Refusal, Remedy, Why};
use crate::shell::shown;
use std::path::PathBuf;

/// A store as the place a run is in: "directory D", "stream S on URL".
fn in_store(at: &Where) -> String {
    match at {
        Where::Path(d) => format!("directory {}", shown(d)),
        other => other.to_string(),
    }
}

/// What [`Error::Held`] says: a turn in flight, or (the last record
/// written long before the store took it) a copy that the hold, which
/// counts from the store's time as the agent's does, holds all the same.
fn held(run: &str, at: &Where, age: u64, hold: u64, written: Option<u64>) -> String {
    match written {
        Some(w) if crate::state::copied(age, hold, written) => format!(
            "run {run} is live by the hold on {at}: its last record was stored {age}s ago, within the {hold}s hold, but written {} ago (its own time): it was copied here (a migrate or a restore stores old records anew), not written by an agent; the hold is the agent's rule and ends {}s from now",
            crate::time::format_age(w),
            hold.saturating_sub(age)
        ),
        // A version-3 record carries no time: a copy cannot be told.
        None => format!(
            "run {run} is live: a turn may be in flight on {at}; its last record was stored {age}s ago, within the {hold}s hold, and carries no time of its own to tell a turn in flight from a copy (a migrate or a restore stores old records anew); wait {}s for the hold to end",
            hold.saturating_sub(age)
        ),
        _ => format!(
            "run {run} is live: a turn is in flight on {at}; its last record was stored {age}s ago, within the {hold}s hold; wait for it to end"
        ),
    }
}

impl From<crate::state::Refused> for Error {
    /// A live run's refusal as the store says it (its lock, or SPEC 8's
    /// hold); any other as [`Error::Refused`], [`Why::State`].
    fn from(r: crate::state::Refused) -> Error {
        use crate::state::{Holder, State};
        match r.state {
            State::Live(Holder::Lock { holder }) => Error::Live { run: r.run, holder },
            State::Live(Holder::Hold {
                at,
                age_secs,
                hold_secs,
                written_secs,
            }) => Error::Held {
                run: r.run,
                at,
                age_secs,
                hold_secs,
                written_secs,
            },
            _ => Error::Refused(Box::new(Refusal {
                op: Some(r.op),
                run: r.run.clone(),
                why: Why::State(Box::new(r)),
                remedy: None,
                calls: Vec::new(),
            })),
        }
    }
}

impl Remedy {
    /// What gets past `e`, where one action does.
    pub fn of(e: &Error) -> Option<Remedy> {
        match e {
            Error::Refused(r) => r.remedy,
            Error::Corrupt { .. } | Error::Fold { .. } | Error::Poisoned { .. } => {
                Some(Remedy::Verify)
            }
            Error::TornTail { .. } => Some(Remedy::Repair),
            Error::NotFound { .. } => Some(Remedy::List),
            Error::Held { .. } => Some(Remedy::Unhold),
            Error::NoStream { .. } => Some(Remedy::CreateStream),
            Error::Sealed { .. } => Some(Remedy::MoveOff),
            Error::Config {
                at: Where::Stream { .. },
                ..
            } => Some(Remedy::CheckStream),
            _ => None,
        }
    }
}

/// What went wrong in the library, as data an operator can act on (see the module doc).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("invalid run id {id:?}: {reason} (ids match ^[a-zA-Z0-9][a-zA-Z0-9_-]*$, at most 128 bytes)")]
    /// A run id that breaks the id rule (SPEC): nothing is looked up with it.
    InvalidId {
        /// The id as given.
        id: String,
        /// Which part of the rule it breaks.
        reason: &'static str,
    },

    #[error("run {run} not found at {at}")]
    /// No run has this id in the store.
    NotFound {
        /// The run's id.
        run: String,
        /// The store looked in.
        at: Where,
    },

    #[error("{}: {source}", shown(path))]
    /// An I/O error on one path.
    Io {
        /// The path the operation was on.
        path: PathBuf,
        #[source]
        /// The underlying I/O error.
        source: std::io::Error,
    },

    /// A line (or message) that does not parse, or breaks SPEC 2.
    #[error("run {run}: {at}: {message}")]
    Corrupt {
        /// The run's id.
        run: String,
        /// Where the bad line or message is.
        at: Where,
        /// What is wrong with it.
        message: String,
    },

    #[error("run {run}: the fold refuses the journal{}: {source}", at.as_ref().map(|w| format!(" at {w}")).unwrap_or_default())]
    /// The fold refuses a record: the journal breaks a rule of its state machine.
    Fold {
        /// The run's id.
        run: String,
        /// Where the record it refuses is stored.
        at: Option<Where>,
        #[source]
        /// The fold's reason.
        source: FoldError,
    },

    #[error("run {run} is live: another process holds its lock{}; wait for it to finish or stop it first", holder.as_deref().map(|h| format!(" ({h})")).unwrap_or_default())]
    /// The run's lock is held by another process: it is being written.
    Live {
        /// The run's id.
        run: String,
        /// Who holds the lock, where the lock file says.
        holder: Option<String>,
    },

    /// SPEC 8's hold: a JetStream run not at rest whose last record is
    /// younger than the hold is treated as live (no lock tells).
    #[error("{}", held(run, at, *age_secs, *hold_secs, *written_secs))]
    Held {
        /// The run's id.
        run: String,
        /// The stream (or subject) the run is on.
        at: Where,
        /// Seconds since its last record was stored.
        age_secs: u64,
        /// The hold, in seconds.
        hold_secs: u64,
        /// Seconds since its last record was written, by its own `time`.
        written_secs: Option<u64>,
    },

    #[error(
        "run {run} already exists in {}; pick another id, or continue it instead of creating it",
        in_store(at)
    )]
    /// A run to create already exists.
    Exists {
        /// The run's id.
        run: String,
        /// The store it is in.
        at: Where,
    },

    #[error(
        "run {run}: {at} is a torn final line (an unfinished write); nothing is appended onto it"
    )]
    /// The journal ends in a torn line: no append is made onto it.
    TornTail {
        /// The run's id.
        run: String,
        /// The torn line.
        at: Where,
    },

    /// The tool worked and said no: a gate, a state that forbids the
    /// action, an operation by hand refused; why, typed, and the way past
    /// it (boxed: errors stay small). The one refusal there is.
    #[error("{0}")]
    Refused(Box<Refusal>),

    /// A configuration (agent file, NATS context, a stream's settings)
    /// that cannot be used.
    #[error("{at}: {message}")]
    Config {
        /// The configuration (file, stream).
        at: Where,
        /// What is wrong with it.
        message: String,
    },

    /// The schema set cannot be loaded or compiled.
    #[error("{origin}: {message}")]
    Schema {
        /// The schema file or embedded set.
        origin: String,
        /// What is wrong with it.
        message: String,
    },

    #[error("{0}")]
    /// A request that makes no sense (bad arguments), refused before anything is read.
    Usage(String),

    /// A run of a bulk write that was not started: an earlier run of the
    /// batch failed on the store as a whole (`store::Breaker`).
    #[error("run {run} was not attempted: an earlier run failed on the store ({why}); once the store answers again, the same command goes on")]
    NotAttempted {
        /// The run's id.
        run: String,
        /// The earlier failure: `run R: what failed`.
        why: String,
    },

    /// No store directory was named, and none follows from the
    /// environment (the default is under the XDG state home).
    #[error("neither XDG_STATE_HOME nor HOME is set to an absolute path, so there is no default store directory")]
    NoStateHome,

    /// The stream the store names does not exist.
    #[error("stream {stream} does not exist on {server}")]
    NoStream {
        /// The stream's name.
        stream: String,
        /// The server(s) asked.
        server: String,
    },

    /// The store as a whole cannot be used: the server or connection, a
    /// runtime that did not start. What `migrate` stops starting further
    /// runs on.
    #[error("{at}: {message}")]
    Unavailable {
        /// The server, stream or process that failed.
        at: Where,
        /// What failed.
        message: String,
    },

    /// The stream is sealed: it takes no write, and nothing unseals it.
    /// Its runs can still be read and copied to another store
    /// ([`Remedy::MoveOff`]).
    #[error(
        "{at}: the stream is sealed: it takes no append, purge or delete, and cannot be unsealed; its runs can still be read, and copied to another stream or a directory"
    )]
    Sealed {
        /// The stream.
        at: Where,
    },

    /// A writer whose earlier write failed refuses every further one: what
    /// landed is unknown until the run is read again.
    #[error(
        "run {run} ({}): an earlier write failed ({why}); this writer stops",
        shown(path)
    )]
    Poisoned {
        /// The run's id.
        run: String,
        /// The journal file (or the stream's name) written to.
        path: PathBuf,
        /// What the earlier write failed with.
        why: String,
    },

    /// An append would leave seqs out (SPEC 2): nothing was written.
    #[error("run {run}: record seq {seq} would leave a gap after seq {last}; nothing was written")]
    Gap {
        /// The run's id.
        run: String,
        /// The seq of the record refused.
        seq: u64,
        /// The seq of the run's last record.
        last: u64,
    },

    /// A journal or lock that is a symbolic link, which no writer follows.
    #[error("{}: is a symbolic link, which no writer here follows", shown(path))]
    Symlink {
        /// The link.
        path: PathBuf,
    },

    /// Something other than a regular file where a journal must be.
    #[error("{}: {what}", shown(path))]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What is there instead.
        what: String,
    },

    /// Every name a backup could take is in use: nothing was changed.
    #[error(
        "{}: no free name like {like} for a backup; nothing was changed",
        shown(dir)
    )]
    NoFreeName {
        /// The directory the backup would go in.
        dir: PathBuf,
        /// The backup name's pattern.
        like: String,
    },

    /// The audit log (issue 38) could not be written or read: a write
    /// whose intent cannot be stored is not made.
    #[error("the audit log at {at}: {message}")]
    Audit {
        /// Where the log is.
        at: Where,
        /// What went wrong, and whether the run was written.
        message: String,
    },

    /// A source run changed while it was copied: it is not deleted.
    #[error("run {run}: the source now ends at seq {have}, the copy at seq {copied}: it changed while migrating, so it was not deleted")]
    SourceChanged {
        /// The run's id.
        run: String,
        /// The seq the source now ends at.
        have: u64,
        /// The seq the copy ends at.
        copied: u64,
    },
}

impl Error {
    /// An [`Error::Io`] on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A refusal with no remedy to name, said in words
    /// ([`Why::Said`]).
    pub fn refused(run: &str, message: impl Into<String>) -> Error {
        Error::refused_for_calls(run, message, None, Vec::new())
    }

    /// A refusal and the way past it.
    pub(crate) fn refused_until(run: &str, message: impl Into<String>, remedy: Remedy) -> Error {
        Error::refused_for_calls(run, message, Some(remedy), Vec::new())
    }

    /// A refusal until the pending `calls` get `remedy` (answered,
    /// approved).
    pub(crate) fn refused_for_calls(
        run: &str,
        message: impl Into<String>,
        remedy: Option<Remedy>,
        calls: Vec<String>,
    ) -> Error {
        Error::Refused(Box::new(Refusal {
            op: None,
            run: run.to_owned(),
            why: Why::Said(message.into()),
            remedy,
            calls,
        }))
    }

    /// The refusal, when this is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Error::Refused(r) => Some(r),
            _ => None,
        }
    }

    /// Where the error is, when it is about one place.
    pub fn place(&self) -> Option<&Where> {
        match self {
            Error::NotFound { at, .. }
            | Error::Exists { at, .. }
            | Error::Corrupt { at, .. }
            | Error::TornTail { at, .. }
            | Error::Config { at, .. }
            | Error::Unavailable { at, .. }
            | Error::Sealed { at } => Some(at),
            Error::Fold { at, .. } => at.as_ref(),
            _ => None,
        }
    }

    /// Whether the store as a whole failed, so that further runs would fail
    /// the same way: the one answer every command that works over many
    /// runs acts on (`migrate` stops starting runs on this, and only this;
    /// `validate` stops on it, and names any other read failure as the
    /// run's and goes on), whichever the backend:
    /// the JetStream server or connection, and I/O errors of the disk
    /// itself (full, read-only, failing). A refusal of one run, or an I/O
    /// error about one path (a directory named like a journal, a link, a
    /// permission), is not.
    pub fn is_store_failure(&self) -> bool {
        match self {
            Error::Unavailable { .. }
            | Error::Sealed { .. }
            | Error::NoStream { .. }
            | Error::NotAttempted { .. } => true,
            // Every write to the store goes through its one audit log
            // (issue 38): a log that cannot be written stops them all.
            Error::Audit { .. } => true,
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

/// The library's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_store_wide_failures_stop_a_migrate_or_validate() {
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
        assert!(!Error::NoFreeName {
            dir: "/s".into(),
            like: "x.json.N.bak".into()
        }
        .is_store_failure());
        assert!(!Error::refused("x", "no").is_store_failure());
        // A run gone or damaged is that run's, on either backend.
        assert!(!Error::NotFound {
            run: "x".into(),
            at: Where::Path("/s".into())
        }
        .is_store_failure());
        assert!(
            Error::io("/s/x.json", std::io::Error::from_raw_os_error(libc::EIO)).is_store_failure()
        );
        assert!(Error::Unavailable {
            at: Where::Stream {
                stream: "S".into(),
                server: "nats://127.0.0.1:4222".into()
            },
            message: "timed out".into()
        }
        .is_store_failure());
    }

    #[test]
    fn a_place_reads_as_a_path_and_line_or_a_subject() {
        let line = Where::Line {
            path: "/s/r.json".into(),
            line: 3,
            offset: 120,
        };
        assert_eq!(line.to_string(), "/s/r.json line 3 (byte 120)");
        assert_eq!(line.line(), Some(3));
        let uncounted = Where::Line {
            path: "/s/r.json".into(),
            line: 0,
            offset: 7,
        };
        assert_eq!(uncounted.to_string(), "/s/r.json (byte 7)");
        assert_eq!(uncounted.line(), None);
        let subject = Where::Subject(Box::new(Subject {
            stream: "S".into(),
            server: "nats://h:4222".into(),
            subject: "fisk.r.3".into(),
            position: 3,
        }));
        assert_eq!(
            subject.to_string(),
            "fisk.r.3 (record 3) in stream S on nats://h:4222"
        );
        assert_eq!(subject.path(), None);
    }
}
