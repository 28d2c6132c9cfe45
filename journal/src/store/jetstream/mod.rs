//! The JetStream backend (SPEC 8). The operator owns the stream: this module
//! binds to it, derives the subject prefix from its one `<prefix>.>`
//! subject and refuses a stream that breaks SPEC 8, naming the setting and
//! the fix.
//!
//! Layout: seq 1 (the meta record) on `<prefix>.<id>._meta`, seq N on
//! `<prefix>.<id>.<N>`; each message body is the record's bytes exactly as a
//! file line holds them, without the newline.
//!
//! The rest of the crate is synchronous; this backend is one async core
//! with two public faces, as mini-redis publishes its `Client` beside the
//! `BlockingClient` that wraps it. Inside a tokio runtime the host owns,
//! use [`AsyncJetStreamStore`] (`asynch.rs`: bind, list, read, summarise,
//! append, all `async fn`s on the caller's runtime); everywhere else the
//! blocking [`JetStreamStore`], which binds through it. The boundary:
//!
//! - the core (`core.rs`'s `Core`, and `append.rs`'s `Writer`) is
//!   crate-private and async: every method that talks to the server is an
//!   `async fn`, the rest are pure. It holds no runtime and no facade
//!   type, so no code reachable from it can block on a runtime, and it
//!   runs on any (multi-thread or current-thread);
//! - the async store (`asynch.rs`) is the core's public async face: a
//!   thin wrapper, one core call per method, no runtime of its own;
//! - the facade (`blocking.rs`: [`JetStreamStore`], [`JetStreamAppender`];
//!   `chain.rs`'s [`NewRunSender`]; `config.rs`'s [`inspect`] and
//!   [`create_stream`]) is public and synchronous: each method blocks on
//!   the runtime it owns (`conn.rs`'s `Rt`, held by nothing else) for one
//!   core call, or runs it as a task and waits where many callers at once
//!   must stay cheap. Work over many runs (listing, summaries) runs
//!   concurrently inside that one call, bounded;
//! - a caller's callback (`stream_runs`'s `deliver`, `create_runs`'s
//!   `done`) is called on the caller's thread outside the runtime, while
//!   the core runs on a thread of its own; file writes (`rm`'s and
//!   `upgrade`'s backups) happen in the facade, between two core calls.
//!   No tokio type crosses the facade.
//!
//! Appends are fenced on the previous record's literal subject (SPEC 8): the
//! publish of seq N carries `Nats-Expected-Last-Subject-Sequence` = the
//! stream sequence of record N-1 and
//! `Nats-Expected-Last-Subject-Sequence-Subject` = its subject; seq 1
//! expects its own subject to be empty. With one message per subject and
//! discard-new-per-subject this refuses exactly the writers the agent's
//! wildcard fence refuses, in constant time.
//!
//! The module is split by job: `asynch` (the async store), `blocking`
//! (the facade), `core` (binding,
//! places, listing, and which errors are the store's and which one
//! run's), `config` (the stream policy, pure), `conn` (the runtime and
//! the connection), `subject` (the subject layout, and a delete's
//! tombstone told from a record), `read` (single runs and summaries),
//! `list` (the summaries of many runs, batched), `pull` (the one
//! pull-consumer drain), `bulk` (many-run reads in one pass: migrate's,
//! and the whole-store reads'), `append` (the
//! fenced writer), `chain` (the pipelined create), `delete` (`rm` and
//! migrate's delete, each fencing the run first), `follow` (an ordered
//! consumer after the last message read: `show --follow`), `orphan` (runs without
//! a meta record), `upgrade` and `verify` (the stream's findings and each
//! run's, over its messages in seq order).

mod append;
mod asynch;
mod audit;
mod blocking;
mod budget;
mod bulk;
mod chain;
mod config;
mod conn;
mod core;
mod delete;
mod follow;
mod gets;
mod list;
mod multi;
mod orphan;
mod pull;
mod read;
mod subject;
mod upgrade;
mod verify;
mod whole;

/// The hold a store starts with (SPEC 8's default).
pub const DEFAULT_HOLD: std::time::Duration = std::time::Duration::from_secs(600);

pub use append::EXPECTED_SUBJECT_HEADER;
pub use asynch::{AsyncJetStreamAppender, AsyncJetStreamStore};
pub use audit::LogMessage;
pub use blocking::{JetStreamAppender, JetStreamStore};
pub use budget::{release, ReadBudget};
pub use chain::{new_runs, NewRun, NewRunReceiver, NewRunSender};
pub use config::{
    check_config, config_notes, config_warnings, create_stream, inspect, prefix_of,
    set_allow_rollup, spec_config, ConfigProblem, Layout, Placement, StreamReport,
    SUBJECT_INDEX_BYTES,
};
pub use follow::JetStreamFollow;
pub use orphan::{Headless, Orphan};
pub use subject::{as_lines, is_tombstone, sort_by_seq, subject, upto_cut, RunMessage};
pub(crate) use verify::verify_run_on;
pub use verify::{
    invalid_id_report, orphan_report, stream_config_findings, verify_jetstream_run,
    write_interrupted_report,
};
pub use whole::{Mark, Pending};

/// How many runs are read or summarised at once.
pub const CONCURRENCY: usize = 32;

/// Connections a read spreads its direct gets over (`Core::reader`):
/// [`READERS`], or FISK_ADMIN_READERS (1 to 8; 1 where the server
/// limits connections).
fn readers() -> usize {
    readers_of(std::env::var("FISK_ADMIN_READERS").ok().as_deref())
}

/// [`readers`] given the variable's value: a count from 1 to 8 (beyond,
/// the nearest), else [`READERS`].
fn readers_of(value: Option<&str>) -> usize {
    value
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(READERS, |n| n.clamp(1, 8))
}

/// The connections of [`readers`] by default: two, one besides the
/// store's own, opened when a read has more than one group of runs. On
/// one server sharing two cores with the client, two took 11-16% off the
/// wall time of `ls` and `stats --all` at 10,000 and 30,000 runs, and a
/// third no more (bench/RESULTS.md, "Issue 40, the levers").
const READERS: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readers_variable_is_a_count_from_one_to_eight_or_the_default() {
        assert_eq!(readers_of(None), READERS);
        assert_eq!(readers_of(Some("1")), 1);
        assert_eq!(readers_of(Some(" 3 ")), 3);
        assert_eq!(readers_of(Some("0")), 1);
        assert_eq!(readers_of(Some("64")), 8);
        for junk in ["", "two", "-1", "1.5"] {
            assert_eq!(readers_of(Some(junk)), READERS, "{junk:?}");
        }
    }
}
