//! The fisk session journal: records, the fold, fingerprints, the stores and
//! verification. This crate prints nothing; the `fisk-admin` binary renders.
//! `journal/FORMAT.md` describes the format and its durability rules.
#![forbid(unsafe_code)]

pub mod agent;
pub mod bounded;
pub mod calls;
pub mod digest;
pub(crate) mod durable;
pub mod error;
pub mod fingerprint;
pub mod fold;
pub mod gojson;
pub mod id;
pub mod lines;
pub mod migrate;
pub mod nats;
pub mod ops;
pub(crate) mod paths;
pub mod record;
pub mod runner;
pub mod schema;
pub mod search;
pub mod shell;
pub mod stats;
pub mod store;
pub mod time;
pub mod upgrade;
pub mod verify;

pub use error::{Error, Remedy, Result, Where};
