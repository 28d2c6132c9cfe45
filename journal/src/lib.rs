//! The fisk session journal: records, the fold, fingerprints, the stores and
//! verification. This crate prints nothing; the `fisk-admin` binary renders.
//! `journal/FORMAT.md` describes the format and its durability rules.
//!
//! A run is a journal: one JSON record a line, appended by one writer at a
//! time, never rewritten (SPEC 1, 2). Its state is never stored: it is
//! recomputed by the [`fold()`] of its records, so it cannot drift from what
//! happened (SPEC 3).
//!
//! What a front end reaches for first is re-exported here:
//!
//! - [`Address`] names a store (a directory of journal files, or a JetStream
//!   stream) and opens it as a [`Store`], the one type every command goes
//!   through, whichever the backend;
//! - [`Store::summaries`] lists runs as [`Summary`]s (what `ls` shows, status
//!   [`Listed`]); [`Store::read`] reads one as a [`Journal`] of [`Record`]s;
//! - [`fold()`] (or [`Store::fold`]) turns the records into a [`RunState`];
//! - [`Store::follow`] reads a run and then yields the records its writer
//!   appends, until a terminal record ([`store::follow`]);
//! - [`verify::verify_bytes`] checks a journal's bytes against every rule and
//!   reports [`verify::Finding`]s;
//! - [`ops`] holds what an operator does by hand to a run (answer a deferred
//!   call, approve a gated one), each one checked append;
//! - every failure is an [`Error`], with where it is ([`Where`]) and, for a
//!   refusal, the way past it ([`Remedy`]).
//!
//! ```
//! use journal::{fold, Listed, Status, Store};
//!
//! // A file store: a directory of `<run id>.json` journals.
//! let dir = tempfile::tempdir()?;
//! std::fs::write(
//!     dir.path().join("g-simple-completed.json"),
//!     include_bytes!("../../testdata/agent-journals/v1/g-simple-completed.json"),
//! )?;
//! let store = Store::directory(dir.path());
//!
//! // List the runs, as `ls` does.
//! let listed = store.summaries()?;
//! assert_eq!(listed.len(), 1);
//! assert_eq!(listed[0].run_id, "g-simple-completed");
//! assert!(matches!(listed[0].status, Listed::Run(Status::Terminal(_))));
//!
//! // Read one and fold it.
//! let journal = store.read("g-simple-completed")?;
//! let state = fold(journal.records())?;
//! assert!(state.completed);
//! assert_eq!(state.last_seq, journal.last_seq());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod agent;
pub mod audit;
pub mod bounded;
pub mod calls;
pub mod custody;
pub(crate) mod digest;
pub(crate) mod durable;
pub mod error;
pub mod export;
pub mod fingerprint;
pub mod fold;
pub(crate) mod gojson;
pub(crate) mod held;
pub mod id;
pub mod lines;
pub mod migrate;
pub mod nats;
pub mod ops;
pub(crate) mod paths;
mod place;
pub mod record;
pub mod recover;
mod refusal;
pub mod runner;
pub mod schema;
pub mod search;
pub mod shell;
pub mod state;
pub mod stats;
pub mod store;
pub mod time;
pub mod upgrade;
pub mod validate;
pub mod verify;

pub use error::{Error, Remedy, Result, Where};
pub use fold::{fold, fold_with, FoldOptions, RunState, Status};
pub use record::Record;
pub use store::{Address, Journal, Listed, Store, Summary};
