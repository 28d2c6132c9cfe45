//! One integration test binary driving the real `fisk-admin` in fresh temp
//! dirs. Each area of the tool has its own module file.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "../../journal/tests/all/nats_support.rs"]
mod nats_support;
mod support;

mod answer;
mod approve;
mod backups;
mod bulk;
mod cluster;
mod columns;
mod copied;
mod corpus;
mod cost;
mod crash;
mod custody;
mod deny_purge;
mod docs;
mod dry_run;
mod end;
mod export;
mod fingerprint;
mod fleet;
mod follow;
mod fork;
mod full_disk;
mod go_decode;
mod inbox;
mod inspect;
mod jetstream;
mod jetstream_race;
mod live;
mod location;
mod migrate;
mod mutations;
mod names;
mod offhost;
mod old_server;
mod output;
mod pasted;
mod pipes;
mod read;
mod recover;
mod reference;
mod repair;
mod runner;
mod schema;
mod seal_cut;
mod search_roles;
mod steps;
mod transcript;
mod upgrade;
mod verify_quiet;
pub mod viewer;
mod waiting;
mod watching;
mod window;
