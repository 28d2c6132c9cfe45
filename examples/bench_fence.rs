//! Benchmark: what a JetStream append costs fenced on the previous
//! record's literal subject (fisk-admin's appender) and on the run's
//! wildcard `<prefix>.<id>.>` (the agent's, and a delete's fence), as the
//! run grows, with other runs in the stream beside it (issue 18 item 4:
//! the decision in journal/FORMAT.md, "Deleting").
//!
//! cargo run --release --example bench_fence -- NATS_URL
//!
//! NATS_URL is a nats-server with JetStream (e.g. `nats-server -js -p 4333
//! -sd /tmp/bench-js`); the stream BENCHFENCE is created, and deleted at
//! the end. Figures go to bench/RESULTS.md.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use async_nats::jetstream::{self, message::PublishMessage};
use std::time::Instant;

const SUBJECT_HEADER: &str = "Nats-Expected-Last-Subject-Sequence-Subject";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().nth(1).expect("NATS_URL");
    let js = jetstream::new(async_nats::connect(&url).await.expect("connect"));
    let _ = js.delete_stream("BENCHFENCE").await;
    js.create_stream(journal::store::jetstream::spec_config(
        "BENCHFENCE",
        "bench.>",
    ))
    .await
    .expect("stream");
    // Other runs beside the measured one: 200 runs of 100 records.
    for r in 0..200 {
        let mut prev = 0;
        for n in 1..=100u64 {
            prev = publish(&js, &format!("other{r}"), n, prev, false).await;
        }
    }
    println!("| records in the run | literal fence | wildcard fence |");
    println!("|---|---|---|");
    let mut prev = (0, 0);
    let mut n = 0u64;
    for upto in [1_000u64, 10_000, 50_000] {
        // Both runs grow to `upto`; the last 500 appends of each are timed.
        let (mut lit, mut wild) = (0.0, 0.0);
        while n < upto {
            n += 1;
            let timed = upto - n < 500;
            let t = Instant::now();
            prev.0 = publish(&js, "literal", n, prev.0, false).await;
            let a = t.elapsed().as_secs_f64();
            let t = Instant::now();
            prev.1 = publish(&js, "wildcard", n, prev.1, true).await;
            let b = t.elapsed().as_secs_f64();
            if timed {
                lit += a;
                wild += b;
            }
        }
        println!(
            "| {upto} | {:.0} us | {:.0} us |",
            lit / 500.0 * 1e6,
            wild / 500.0 * 1e6
        );
    }
    js.delete_stream("BENCHFENCE").await.expect("delete stream");
}

/// Record `n` of `run`, fenced on the record before it (stream sequence
/// `prev`): on its literal subject, or on the run's wildcard. Returns its
/// stream sequence.
async fn publish(js: &jetstream::Context, run: &str, n: u64, prev: u64, wildcard: bool) -> u64 {
    let subject = |k: u64| match k {
        1 => format!("bench.{run}._meta"),
        k => format!("bench.{run}.{k}"),
    };
    let fence_on = match (n, wildcard) {
        (1, _) | (_, true) => format!("bench.{run}.>"),
        (_, false) => subject(n - 1),
    };
    let msg = PublishMessage::build()
        .payload(format!("{{\"seq\":{n}}}").into())
        .expected_last_subject_sequence(prev)
        .header(SUBJECT_HEADER, fence_on);
    js.send_publish(subject(n), msg)
        .await
        .expect("send")
        .await
        .expect("ack")
        .sequence
}
