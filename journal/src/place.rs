//! Where a problem is: a place an operator can go and look (a path and
//! line, or a stream and subject). A leaf: the error type, the run model
//! and the stores all name places, and it names none of them.

use crate::shell::shown;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a problem is: a place an operator can go and look.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Where {
    /// A file or directory.
    Path(PathBuf),
    /// A line of a journal file starting at byte `offset` (`line` 0 where
    /// it was not counted: a summary reads only a journal's head and tail).
    Line {
        /// The journal file.
        path: PathBuf,
        /// The line's number, 1-based; 0 where it was not counted.
        line: usize,
        /// The byte offset the line starts at.
        offset: u64,
    },
    /// A stream on a server.
    Stream {
        /// The stream's name.
        stream: String,
        /// The server(s) the stream is on.
        server: String,
    },
    /// One subject of a stream (boxed: errors stay small).
    Subject(Box<Subject>),
    /// The NATS server(s), before any stream is bound.
    Server(String),
    /// This process: its async runtime, its source of randomness.
    Process,
}

/// One subject of a stream on a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The stream's name.
    pub stream: String,
    /// The server(s) the stream is on, as a URL list.
    pub server: String,
    /// The subject, as stored.
    pub subject: String,
    /// The record's place in its run, 0 where it is not known.
    pub position: usize,
}

impl Where {
    /// The file this is in, if it is in one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Where::Path(p) | Where::Line { path: p, .. } => Some(p),
            _ => None,
        }
    }

    /// The journal line (1-based) this is, where it was counted.
    pub fn line(&self) -> Option<usize> {
        match self {
            Where::Line { line, .. } if *line > 0 => Some(*line),
            Where::Subject(s) if s.position > 0 => Some(s.position),
            _ => None,
        }
    }
}

impl fmt::Display for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Where::Path(p) => write!(f, "{}", shown(p)),
            Where::Line { path, line, offset } => {
                write!(f, "{}", shown(path))?;
                if *line > 0 {
                    write!(f, " line {line}")?;
                }
                write!(f, " (byte {offset})")
            }
            Where::Stream { stream, server } => write!(f, "stream {stream} on {server}"),
            Where::Subject(s) => {
                write!(f, "{}", s.subject)?;
                if s.position > 0 {
                    write!(f, " (record {})", s.position)?;
                }
                write!(f, " in stream {} on {}", s.stream, s.server)
            }
            Where::Server(s) => write!(f, "NATS server {s}"),
            Where::Process => f.write_str("this process"),
        }
    }
}
