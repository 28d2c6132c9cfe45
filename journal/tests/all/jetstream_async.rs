//! The async store ([`AsyncJetStreamStore`]) against a real nats-server,
//! inside runtimes the test builds itself (multi-thread and
//! current-thread), as a host that owns its runtime would use it: it
//! lists, reads, summarises and appends, and what it reads and writes is
//! what the blocking store reads. Its appender is fenced as the blocking
//! one: a second writer of either kind is refused.
// A test crate: a panic is a failed test.

use crate::nats_support;

use journal::record::{Generation, Record};
use journal::store::jetstream::{AsyncJetStreamStore, JetStreamStore};
use journal::store::Appender;
use nats_support::{testdata_runs, NatsServer};
use std::collections::BTreeMap;

const STREAM: &str = "SESSIONS";
const SUBJECT: &str = "fisk.sessions.>";

fn lines(file: &[u8]) -> Vec<Vec<u8>> {
    file.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// A few testdata runs, stored through the blocking store.
fn fill(store: &JetStreamStore) -> BTreeMap<String, Vec<Vec<u8>>> {
    let all = testdata_runs();
    let mut runs = BTreeMap::new();
    for id in ["deferral-waiting", "tool-batch", "simple-completed"] {
        let mut app = store.create(id).unwrap();
        let ls = lines(&all[id]);
        for (i, l) in ls.iter().enumerate() {
            assert!(app.append_raw(i as u64 + 1, l).unwrap());
        }
        runs.insert(id.to_owned(), ls);
    }
    runs
}

/// Each run's lines as the blocking store reads them, and its `ls` row.
fn blocking_view(store: &JetStreamStore) -> BTreeMap<String, (Vec<Vec<u8>>, String)> {
    let runs = store.runs().unwrap();
    let rows = store.summaries(&runs);
    runs.iter()
        .zip(rows)
        .map(|(id, row)| {
            let j = store.read(id).unwrap();
            let raw = j.entries.iter().map(|e| e.raw.clone()).collect();
            (id.clone(), (raw, serde_json::to_string(&row).unwrap()))
        })
        .collect()
}

/// What the async store sees, and an append through it: run on the
/// caller's runtime, with no blocking call anywhere inside.
async fn async_round(srv_settings: journal::nats::Settings, tag: &str) -> AsyncSeen {
    let store = AsyncJetStreamStore::connect(&srv_settings, STREAM)
        .await
        .unwrap();
    assert_eq!(store.name(), STREAM);
    assert_eq!(store.prefix(), "fisk.sessions");
    let runs = store.runs().await.unwrap();
    let rows = store.summaries(&runs).await;
    let mut view = BTreeMap::new();
    for (id, row) in runs.iter().zip(&rows) {
        let j = store.read(id).await.unwrap();
        let raw = j.entries.iter().map(|e| e.raw.clone()).collect();
        // One run's summary alone is the same row.
        let one = serde_json::to_string(&store.summary(id).await).unwrap();
        let row = serde_json::to_string(row).unwrap();
        assert_eq!(one, row, "{id}");
        view.insert(id.clone(), (raw, row));
    }
    let waiting: Vec<String> = rows
        .iter()
        .filter(|s| s.waits_on_person())
        .map(|s| s.run_id.clone())
        .collect();

    // A new run, created and written through the async appender: the
    // lines of tool-batch, then one record more by append_next.
    let copy = format!("async-{tag}");
    let source = store.read("tool-batch").await.unwrap();
    let mut app = store.create(&copy).await.unwrap();
    for e in &source.entries {
        assert!(app.append_raw(e.record.seq, &e.raw).await.unwrap());
    }
    // A duplicate is skipped, not stored.
    assert!(!app.append_raw(1, &source.entries[0].raw).await.unwrap());
    let last = source.entries.last().unwrap();
    let payload = last.record.payload.clone().unwrap();
    let next = app.append_next(payload, Generation::Current).await.unwrap();
    assert_eq!(next.seq, last.record.seq + 1);
    assert_eq!(app.last_seq(), next.seq);
    app.check_held().await.unwrap();

    // Two writers on one run: the first to append wins, the other is
    // fenced out (as the blocking appender is).
    let mut a = store.open(&copy).await.unwrap();
    let mut b = store.open(&copy).await.unwrap();
    let raw = next.encode().unwrap();
    let again = Record::decode(&raw).unwrap();
    let n = a.last_seq();
    assert!(a
        .append_raw(n + 1, &raw_with_seq(&again, n + 1))
        .await
        .unwrap());
    match b.append_raw(n + 1, &raw_with_seq(&again, n + 1)).await {
        Err(journal::Error::Live { run, .. }) => assert_eq!(run, copy),
        other => panic!("second async writer not fenced out: {other:?}"),
    }
    // The first writer was overtaken too.
    assert!(matches!(
        app.check_held().await,
        Err(journal::Error::Live { .. })
    ));
    let written = store.read(&copy).await.unwrap();
    AsyncSeen {
        view,
        waiting,
        copy,
        written: written.entries.iter().map(|e| e.raw.clone()).collect(),
    }
}

fn raw_with_seq(r: &Record, seq: u64) -> Vec<u8> {
    let mut r = r.clone();
    r.seq = seq;
    r.encode().unwrap()
}

struct AsyncSeen {
    view: BTreeMap<String, (Vec<Vec<u8>>, String)>,
    waiting: Vec<String>,
    copy: String,
    written: Vec<Vec<u8>>,
}

/// What the async store saw equals what the blocking store reads, and
/// what it wrote reads back through the blocking store.
fn check(
    store: &JetStreamStore,
    before: &BTreeMap<String, (Vec<Vec<u8>>, String)>,
    seen: AsyncSeen,
) {
    assert_eq!(&seen.view, before);
    assert_eq!(seen.waiting, vec!["deferral-waiting".to_owned()]);
    let j = store.read(&seen.copy).unwrap();
    let raw: Vec<Vec<u8>> = j.entries.iter().map(|e| e.raw.clone()).collect();
    assert_eq!(raw, seen.written);
    let source = store.read("tool-batch").unwrap();
    assert_eq!(raw.len(), source.entries.len() + 2);
    for (a, b) in raw.iter().zip(&source.entries) {
        assert_eq!(a, &b.raw);
    }
    // A blocking writer opened now continues after the async one's last.
    let app = store.open(&seen.copy).unwrap();
    assert_eq!(app.last_seq(), raw.len() as u64);
}

#[test]
fn the_async_store_reads_and_writes_what_the_blocking_one_does() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let runs = fill(&store);
    let before = blocking_view(&store);
    assert_eq!(before.len(), runs.len());

    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let seen = multi.block_on(async_round(srv.settings(), "multi"));
    check(&store, &before, seen);

    // The current-thread runtime sees the run the multi-thread round
    // wrote too: compare with the blocking store's view of now.
    let before = blocking_view(&store);
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let seen = current.block_on(async_round(srv.settings(), "current"));
    check(&store, &before, seen);
}

#[test]
fn the_async_store_refuses_what_the_blocking_one_refuses() {
    let srv = NatsServer::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // No such stream: the same error as the blocking connect.
    let blocking = JetStreamStore::connect(&srv.settings(), STREAM)
        .err()
        .unwrap()
        .to_string();
    let settings = srv.settings();
    let asynch = rt
        .block_on(AsyncJetStreamStore::connect(&settings, STREAM))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(asynch, blocking);

    // A stream that breaks SPEC 8 (no direct gets, per-subject limit
    // unset): refused alike, naming the settings.
    srv.raw_stream(async_nats::jetstream::stream::Config {
        name: "LOOSE".into(),
        subjects: vec!["loose.>".into()],
        ..Default::default()
    });
    let blocking = JetStreamStore::connect(&settings, "LOOSE")
        .err()
        .unwrap()
        .to_string();
    let asynch = rt
        .block_on(AsyncJetStreamStore::connect(&settings, "LOOSE"))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(asynch, blocking);
    assert!(asynch.contains("SPEC 8"), "{asynch}");
    // Unchecked, it binds.
    let loose = rt
        .block_on(AsyncJetStreamStore::connect_unchecked(&settings, "LOOSE"))
        .unwrap();
    assert_eq!(loose.prefix(), "loose");
}
