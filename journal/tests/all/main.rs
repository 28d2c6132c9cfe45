//! The library's integration tests, one test binary (as jj keeps its own):
//! one link instead of a dozen, and a check ([`house`]) that no test file
//! is left out of it. Each module is what was a test file of its own; the
//! support they share (a real nats-server started and stopped per test,
//! the deterministic journal mutations) is here once.
// A test crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod cluster;
mod custody;
mod examples;
mod follow;
mod fuzz_corpus;
mod house;
mod jetstream;
mod jetstream_async;
mod jetstream_race;
mod jetstream_read;
mod jetstream_whole;
mod model;
mod mutate;
mod mutations;
mod nats_support;
mod no_panic;
mod seq_edges;
