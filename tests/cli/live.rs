//! A stream that agents write while a command reads it (issue 40: the
//! point-in-time cut of `migrate` and `seal`): runs of the template
//! journal, their first records stored before, and a writer that stores
//! the rest of every run, and new runs between them and after, until it
//! is stopped.

use crate::nats_support::NatsServer;
use crate::support::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// A run's records: the template journal with the run's own id.
pub fn lines_of(id: &str) -> Vec<Vec<u8>> {
    let template =
        std::fs::read_to_string(testdata("runs/multi-iteration.json")).expect("template");
    let text = template.replacen(
        "\"run_id\":\"multi-iteration\"",
        &format!("\"run_id\":\"{id}\""),
        1,
    );
    text.lines().map(|l| l.as_bytes().to_vec()).collect()
}

/// The subject of record `k` (0-based) of run `id` under `prefix`.
pub fn subject(prefix: &str, id: &str, k: usize) -> String {
    journal::store::jetstream::subject(prefix, id, k as u64 + 1)
}

/// The writer of a live stream: see the module.
pub struct Writer {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Writer {
    /// Store the first `first` records of each of `ids` under `prefix`,
    /// then start writing the rest, one record every `pace`, a new run
    /// (`new-NNNN`) after every 25 records and then one after another.
    pub fn start(srv: &NatsServer, prefix: &'static str, ids: &[String], first: usize) -> Writer {
        let records = lines_of("x").len();
        assert!(records > first);
        let head: Vec<(String, Vec<u8>)> = ids
            .iter()
            .flat_map(|id| {
                lines_of(id)
                    .into_iter()
                    .take(first)
                    .enumerate()
                    .map(move |(k, b)| (subject(prefix, id, k), b))
            })
            .collect();
        srv.with_js(async move |js| {
            for (s, b) in head {
                js.publish(s, b.into()).await.unwrap().await.unwrap();
            }
        });
        let rest: Vec<(String, Vec<u8>)> = (first..records)
            .flat_map(|k| ids.iter().map(move |id| (id.clone(), k)))
            .map(|(id, k)| (subject(prefix, &id, k), lines_of(&id).swap_remove(k)))
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicUsize::new(0));
        let (stopped, count, url) = (stop.clone(), written.clone(), srv.url.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let js = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
                let publish = async |s: String, b: Vec<u8>| {
                    js.publish(s, b.into()).await.unwrap().await.unwrap();
                    count.fetch_add(1, Ordering::Relaxed);
                };
                let pace = std::time::Duration::from_millis(1);
                let mut made = 0;
                let mut new_run = async || {
                    let id = format!("new-{made:04}");
                    made += 1;
                    for (k, b) in lines_of(&id).into_iter().enumerate() {
                        publish(subject(prefix, &id, k), b).await;
                    }
                };
                for (i, (s, b)) in rest.into_iter().enumerate() {
                    if stopped.load(Ordering::Relaxed) {
                        return;
                    }
                    publish(s, b).await;
                    if i % 25 == 24 {
                        new_run().await;
                    }
                    tokio::time::sleep(pace).await;
                }
                while !stopped.load(Ordering::Relaxed) {
                    new_run().await;
                    tokio::time::sleep(pace).await;
                }
            })
        });
        Writer {
            stop,
            written,
            thread,
        }
    }

    /// Wait until the writer has stored `n` records.
    pub fn wait_written(&self, n: usize) {
        while self.written.load(Ordering::Relaxed) < n {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Stop writing, and wait for the writer to end.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("writer");
    }
}
