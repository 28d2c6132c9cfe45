//! Benchmark: the JetStream requests a listing of every run could be built
//! from, each timed alone over one existing session stream (issue 16 item
//! 6, bench/RESULTS.md). Every phase prints its wall time, what it brought
//! and the CPU seconds it cost this process and the server.
//!
//! NATS_URL=nats://127.0.0.1:PORT cargo run --release --example bench_js_list -- STREAM PREFIX SERVER_PID
//!
//! The stream is one `bench/fleet_js.sh` made (`migrate` of a
//! `bench/gen_store.py` store); nothing is written to it.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use async_nats::jetstream::{self, consumer, stream};
use futures_util::{StreamExt, TryStreamExt};
use std::time::Instant;

fn cpu(pid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

struct Phase {
    start: Instant,
    client: f64,
    server: f64,
    pid: u32,
}

impl Phase {
    fn new(pid: u32) -> Phase {
        Phase {
            start: Instant::now(),
            client: cpu(std::process::id()),
            server: cpu(pid),
            pid,
        }
    }
    fn done(self, what: &str, got: usize) {
        println!(
            "{what:<72} {:>8.3} s  {got:>8} msgs  cpu client {:.2} s server {:.2} s",
            self.start.elapsed().as_secs_f64(),
            cpu(std::process::id()) - self.client,
            cpu(self.pid) - self.server
        );
    }
}

/// One batched direct get (`multi_last`): the messages before its EOB.
async fn multi_last(
    client: &async_nats::Client,
    api: &str,
    stream: &str,
    subjects: Vec<String>,
) -> Vec<async_nats::Message> {
    let inbox = client.new_inbox();
    let mut sub = client.subscribe(inbox.clone()).await.unwrap();
    let body = serde_json::json!({ "multi_last": subjects });
    client
        .publish_with_reply(
            format!("{api}.DIRECT.GET.{stream}"),
            inbox,
            serde_json::to_vec(&body).unwrap().into(),
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    while let Some(m) = sub.next().await {
        match m.status.map(|s| s.as_u16()) {
            None => out.push(m),
            Some(204) => break,
            Some(s) => panic!("multi_last: status {s} {:?}", m.description),
        }
    }
    out
}

/// The last message on a wildcard, by direct get with the subject in the
/// body (the URL form takes no wildcard).
async fn last_direct(
    client: &async_nats::Client,
    api: &str,
    stream: &str,
    subject: String,
) -> async_nats::Message {
    let body = serde_json::json!({ "last_by_subj": subject });
    client
        .request(
            format!("{api}.DIRECT.GET.{stream}"),
            serde_json::to_vec(&body).unwrap().into(),
        )
        .await
        .unwrap()
}

fn header(m: &async_nats::Message, name: &str) -> String {
    m.headers
        .as_ref()
        .and_then(|h| h.get(name))
        .map(|v| v.as_str().to_owned())
        .unwrap_or_default()
}

async fn drain_consumer(s: &stream::Stream, cfg: consumer::pull::OrderedConfig) -> usize {
    let c = s.create_consumer(cfg).await.unwrap();
    let pending = c.cached_info().num_pending as usize;
    let mut msgs = c.messages().await.unwrap();
    let mut n = 0;
    while n < pending {
        let _m = msgs.try_next().await.unwrap().unwrap();
        n += 1;
    }
    n
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, prefix, pid) = (&args[0], &args[1], args[2].parse::<u32>().unwrap());
    let url = std::env::var("NATS_URL").unwrap();
    let client = async_nats::ConnectOptions::new()
        .client_capacity(8192)
        .connect(url)
        .await
        .unwrap();
    let js = jetstream::new(client.clone());
    let api = "$JS.API";
    let s = js.get_stream(name).await.unwrap();

    let p = Phase::new(pid);
    let mut runs = Vec::new();
    let mut subjects = s
        .info_with_subjects(format!("{prefix}.*._meta"))
        .await
        .unwrap();
    while let Some((subj, _)) = subjects.try_next().await.unwrap() {
        runs.push(subj.split('.').nth(1).unwrap().to_owned());
    }
    runs.sort();
    p.done("runs: subjects of PREFIX.*._meta (today)", runs.len());

    for inflight in [32, 128] {
        let p = Phase::new(pid);
        let got: Vec<_> = futures_util::stream::iter(runs.iter())
            .map(|r| {
                let subject = format!("{prefix}.{r}.>");
                let s = &s;
                async move { s.get_last_raw_message_by_subject(&subject).await }
            })
            .buffered(inflight)
            .try_collect()
            .await
            .unwrap();
        p.done(
            &format!("last of each run, STREAM.MSG.GET PREFIX.ID.> ({inflight} in flight; today)"),
            got.len(),
        );
    }

    let mut last_n = Vec::new();
    for inflight in [32, 128, 512] {
        let p = Phase::new(pid);
        let got: Vec<_> = futures_util::stream::iter(runs.iter())
            .map(|r| last_direct(&client, api, name, format!("{prefix}.{r}.>")))
            .buffered(inflight)
            .collect()
            .await;
        p.done(
            &format!("last of each run, direct get PREFIX.ID.> in the body ({inflight} in flight)"),
            got.len(),
        );
        last_n = got
            .iter()
            .map(|m| {
                let subj = header(m, "Nats-Subject");
                subj.rsplit('.').next().unwrap().parse::<u64>().unwrap_or(1)
            })
            .collect();
    }

    let p = Phase::new(pid);
    let got: Vec<_> = futures_util::stream::iter(runs.iter())
        .map(|r| s.direct_get_last_for_subject(format!("{prefix}.{r}._meta")))
        .buffered(32)
        .try_collect()
        .await
        .unwrap();
    p.done(
        "meta of each run, direct get PREFIX.ID._meta (32 in flight; today)",
        got.len(),
    );

    let p = Phase::new(pid);
    let n = drain_consumer(
        &s,
        consumer::pull::OrderedConfig {
            filter_subject: format!("{prefix}.*._meta"),
            deliver_policy: consumer::DeliverPolicy::LastPerSubject,
            ..Default::default()
        },
    )
    .await;
    p.done("meta of each run, ordered consumer PREFIX.*._meta", n);

    for (per, inflight) in [(256, 4), (1000, 4)] {
        let p = Phase::new(pid);
        let got: Vec<Vec<_>> = futures_util::stream::iter(runs.chunks(per))
            .map(|c| {
                let subjects = c.iter().map(|r| format!("{prefix}.{r}._meta")).collect();
                multi_last(&client, api, name, subjects)
            })
            .buffered(inflight)
            .collect()
            .await;
        p.done(
            &format!("meta of each run, multi_last of {per} subjects ({inflight} in flight)"),
            got.iter().map(Vec::len).sum(),
        );
    }

    let p = Phase::new(pid);
    let pairs: Vec<(String, u64)> = runs.iter().cloned().zip(last_n.iter().copied()).collect();
    let got: Vec<Vec<_>> = futures_util::stream::iter(pairs.chunks(1000))
        .map(|c| {
            let subjects = c
                .iter()
                .map(|(r, n)| format!("{prefix}.{r}.{}", n.saturating_sub(1).max(2)))
                .collect();
            multi_last(&client, api, name, subjects)
        })
        .buffered(4)
        .collect()
        .await;
    p.done(
        "record N-1 of each run, multi_last of 1000 subjects (4 in flight)",
        got.iter().map(Vec::len).sum(),
    );

    let p = Phase::new(pid);
    let n = drain_consumer(
        &s,
        consumer::pull::OrderedConfig {
            filter_subject: format!("{prefix}.>"),
            deliver_policy: consumer::DeliverPolicy::LastPerSubject,
            headers_only: true,
            ..Default::default()
        },
    )
    .await;
    p.done(
        "every subject, ordered consumer PREFIX.> last per subject, headers only",
        n,
    );

    let p = Phase::new(pid);
    let n = drain_consumer(
        &s,
        consumer::pull::OrderedConfig {
            filter_subject: format!("{prefix}.>"),
            deliver_policy: consumer::DeliverPolicy::LastPerSubject,
            ..Default::default()
        },
    )
    .await;
    p.done(
        "every subject, ordered consumer PREFIX.> last per subject, bodies",
        n,
    );

    let p = Phase::new(pid);
    let mut n = 0;
    let mut subjects = s.info_with_subjects(format!("{prefix}.>")).await.unwrap();
    while subjects.try_next().await.unwrap().is_some() {
        n += 1;
    }
    p.done("every subject, stream info with subjects PREFIX.>", n);
}
