//! A replicated (R3) stream on a real three-server cluster, through the
//! library (issue 28): a fence its leader refuses is another writer's, as
//! on one server (never a failure of the store, which would tell the
//! writer to re-run into a run that is taken), and nothing is stored.
// A test (or benchmark) crate: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "support/nats.rs"]
mod nats_support;

use journal::store::jetstream::{create_stream, JetStreamStore, Layout};
use journal::store::Appender;
use nats_support::Cluster;

const STREAM: &str = "SESSIONS";

/// The R3 stream created on the cluster, every replica current; the
/// settings that reach all three servers.
fn r3_stream(c: &Cluster) -> journal::nats::Settings {
    let settings = journal::nats::Settings {
        servers: c.servers.iter().map(|s| s.url.clone()).collect(),
        ..Default::default()
    };
    let layout = Layout {
        replicas: 3,
        memory: false,
    };
    assert!(create_stream(&settings, STREAM, "fisk.sessions.>", layout).unwrap());
    c.settled(STREAM);
    settings
}

#[test]
fn a_fence_a_replicated_stream_refuses_is_another_writers_not_the_stores_failure() {
    let c = Cluster::start();
    let settings = r3_stream(&c);
    let store = JetStreamStore::connect(&settings, STREAM).unwrap();
    let mut a = store.create("taken").unwrap();
    assert!(a.append_raw(1, b"{\"seq\":1}").unwrap());
    assert!(a.append_raw(2, b"{\"seq\":2}").unwrap());
    // Another writer stores record 2 again (purged and published anew: a
    // new stream sequence), so the fence of `a`'s record 3 fails.
    c.live().with_js(async |js| {
        let s = js.get_stream(STREAM).await.unwrap();
        s.purge().filter("fisk.sessions.taken.2").await.unwrap();
        let ack = js.publish("fisk.sessions.taken.2", "{\"seq\":2}".into());
        ack.await.unwrap().await.unwrap();
    });
    let e = a.append_raw(3, b"{\"seq\":3}").unwrap_err();
    assert!(
        matches!(e, journal::Error::Live { .. }),
        "not told another writer holds the run: {e}"
    );
    let msgs = store.read_messages("taken").unwrap();
    assert_eq!(msgs.len(), 2, "record 3 was stored: {msgs:?}");
}

/// migrate's check of its copies (`digests`, one consumer over the runs)
/// read while the stream's leader is being replaced: the read is asked
/// again until another leader answers, and every run's count and digest
/// are the ones read before the kill (issue 28; CI once saw this read
/// time out right after a killed leader).
#[test]
fn a_read_back_while_the_leader_is_replaced_rides_through_the_election() {
    let mut c = Cluster::start();
    r3_stream(&c);
    let leader = c.leader(STREAM);
    // The client on the two followers: it stays connected through the kill.
    let followers = journal::nats::Settings {
        servers: (c.servers.iter().enumerate())
            .filter(|(i, _)| *i != leader)
            .map(|(_, s)| s.url.clone())
            .collect(),
        ..Default::default()
    };
    let store = JetStreamStore::connect(&followers, STREAM).unwrap();
    let runs: Vec<String> = (0..6).map(|i| format!("run-{i}")).collect();
    for r in &runs {
        let mut a = store.create(r).unwrap();
        for seq in 1..=4u64 {
            assert!(a
                .append_raw(seq, format!("{{\"seq\":{seq}}}").as_bytes())
                .unwrap());
        }
    }
    c.settled(STREAM);
    let before = store.digests(&runs, 24);
    assert!(
        before.iter().all(|d| matches!(d, Ok(Some((4, _))))),
        "{before:?}"
    );
    c.kill(leader);
    let during = store.digests(&runs, 24);
    let same = |a: &journal::Result<Option<(u64, String)>>,
                b: &journal::Result<Option<(u64, String)>>| {
        matches!((a, b), (Ok(x), Ok(y)) if x == y)
    };
    assert!(
        before.iter().zip(&during).all(|(a, b)| same(a, b)),
        "read back during the election: {during:?}"
    );
}
