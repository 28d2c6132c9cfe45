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

#[test]
fn a_fence_a_replicated_stream_refuses_is_another_writers_not_the_stores_failure() {
    let c = Cluster::start();
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
