//! Benchmark store (issue 40): copy a file store (`bench/gen_store.py`)
//! into a session stream the way agents writing at once leave it, not the
//! way `migrate` does (run after run). Runs are started in a shuffled
//! order, `OPEN` of them are being written at a time, and each next record
//! goes to a run picked at random among those whose previous record is
//! stored: the stream holds the runs' records interleaved, and (with
//! `gen_store.py --ids hashed`) no run id says where in the stream the run
//! is. Each record is published as SPEC 8's writers publish it (msg id,
//! the fence on the record before it), so the messages carry the same
//! headers as the agent's.
//!
//! NATS_URL=nats://127.0.0.1:PORT cargo run --release --example bench_interleave -- DIR STREAM PREFIX [OPEN] [SEED]
//!
//! The stream must exist (`fisk-admin stream create`); `bench/fleet_scale.sh`
//! drives it.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use async_nats::jetstream::message::PublishMessage;
use futures_util::stream::FuturesUnordered;
use futures_util::StreamExt;
use std::path::PathBuf;
use std::time::Instant;

/// xorshift64*: a seeded, reproducible order without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A run being written: its id, its records, the next one to publish and
/// the stream sequence of the last one stored (the fence of the next).
struct Open {
    id: String,
    records: Vec<Vec<u8>>,
    next: usize,
    prev: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(args.first().expect("DIR STREAM PREFIX [OPEN] [SEED]"));
    let stream = args.get(1).expect("STREAM").clone();
    let prefix = args.get(2).expect("PREFIX").clone();
    let open_at_once: usize = args.get(3).map_or(1000, |a| a.parse().expect("OPEN"));
    let seed: u64 = args.get(4).map_or(40, |a| a.parse().expect("SEED"));
    let url = std::env::var("NATS_URL").expect("NATS_URL");

    let mut rng = Rng(seed.max(1));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("DIR")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    // Fisher-Yates: the order the runs are started in.
    for i in (1..files.len()).rev() {
        files.swap(i, rng.below(i + 1));
    }
    let total = files.len();
    let load = |p: &PathBuf| -> Open {
        let text = std::fs::read(p).expect("journal");
        let id = p
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("id")
            .to_owned();
        let records = text
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        Open {
            id,
            records,
            next: 0,
            prev: 0,
        }
    };

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    let stored = rt.block_on(async {
        let client = async_nats::connect(&url).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        let mut queue = files.iter();
        // Slots of runs being written; `ready` holds the slots whose last
        // record is acknowledged (so the next can be fenced on it).
        let mut slots: Vec<Option<Open>> = Vec::new();
        let mut ready: Vec<usize> = Vec::new();
        for p in queue.by_ref().take(open_at_once) {
            ready.push(slots.len());
            slots.push(Some(load(p)));
        }
        let mut inflight = FuturesUnordered::new();
        let mut stored = 0u64;
        loop {
            // Keep up to 256 publishes in flight, each to a random ready run.
            while inflight.len() < 256 && !ready.is_empty() {
                let k = rng.below(ready.len());
                let slot = ready.swap_remove(k);
                let run = slots[slot].as_mut().expect("open run");
                let seq = run.next as u64 + 1;
                let (subject, fence_subject) = match seq {
                    1 => (
                        format!("{prefix}.{}._meta", run.id),
                        format!("{prefix}.{}.>", run.id),
                    ),
                    2 => (
                        format!("{prefix}.{}.2", run.id),
                        format!("{prefix}.{}._meta", run.id),
                    ),
                    n => (
                        format!("{prefix}.{}.{n}", run.id),
                        format!("{prefix}.{}.{}", run.id, n - 1),
                    ),
                };
                let msg = PublishMessage::build()
                    .payload(run.records[run.next].clone().into())
                    .message_id(format!("bench-{}-{seq}", run.id))
                    .expected_last_subject_sequence(run.prev)
                    .header(
                        "Nats-Expected-Last-Subject-Sequence-Subject",
                        fence_subject.as_str(),
                    );
                let ack = js.send_publish(subject, msg).await.expect("publish");
                inflight.push(async move { (slot, ack.await) });
            }
            let Some((slot, ack)) = inflight.next().await else {
                break;
            };
            let ack = ack.expect("ack (a fence refused: is the stream empty?)");
            stored += 1;
            let run = slots[slot].as_mut().expect("open run");
            run.prev = ack.sequence;
            run.next += 1;
            if run.next < run.records.len() {
                ready.push(slot);
            } else {
                slots[slot] = queue.next().map(load);
                if slots[slot].is_some() {
                    ready.push(slot);
                }
            }
        }
        stored
    });
    let secs = started.elapsed().as_secs_f64();
    println!(
        "interleaved {total} runs ({stored} records) into {stream}, {open_at_once} open at a time: {secs:.1} s"
    );
}
