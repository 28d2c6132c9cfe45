//! The crash sweep of a logged write on JetStream (issue 38): `answer`
//! through a store that logs its writes, cut at every request that
//! changes the stream (the intent's publish, the record's, the
//! outcome's), once never reaching the server and once stored with its
//! answer lost. After each cut, write-ahead holds: the record is on the
//! stream only if its intent is; an outcome only for a record stored; an
//! intent left open is settled by `verify`'s rule to exactly what the run
//! holds.

use crate::nats_support::NatsServer;
use journal::audit::{Actor, Kind, Settled};
use journal::ops::answer;
use journal::store::Store;
use std::time::Duration;

const WAITING: &[u8] =
    include_bytes!("../../../testdata/agent-journals/v1/g-deferral-waiting.json");
const RUN: &str = "g-deferral-waiting";

fn stream_with(srv: &NatsServer, n: usize) -> journal::store::jetstream::JetStreamStore {
    let (name, prefix) = (format!("A{n}"), format!("a{n}"));
    srv.spec_stream(&name, &format!("{prefix}.>"));
    let bodies: Vec<Vec<u8>> = WAITING
        .split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let subjects: Vec<String> = (1..=bodies.len() as u64)
        .map(|s| journal::store::jetstream::subject(&prefix, RUN, s))
        .collect();
    srv.with_js(async move |js| {
        for (subject, body) in subjects.into_iter().zip(bodies) {
            js.publish(subject, body.into())
                .await
                .unwrap()
                .await
                .unwrap();
        }
    });
    srv.store(&name).with_hold(Duration::ZERO)
}

fn actor() -> Actor {
    Actor {
        operator: "alice".into(),
        command: "fisk-admin answer".into(),
        ..Actor::default()
    }
}

fn answer_it(store: &Store) -> bool {
    let req = answer::Request {
        run: RUN,
        call: None,
        is_error: false,
    };
    answer::prepare(store, &req)
        .and_then(|p| p.commit("ok".into()))
        .is_ok()
}

#[test]
fn a_logged_answer_cut_at_any_request_leaves_an_intent_for_every_record_stored() {
    let srv = NatsServer::start();
    let js = stream_with(&srv, 0);
    js.cut_at(0, false);
    assert!(answer_it(&Store::from(js.clone()).with_actor(actor())));
    let steps = js.cut_steps();
    assert_eq!(steps, 3, "intent, record, outcome");
    let mut n = 1;
    for at in 1..=steps {
        for lands in [false, true] {
            let js = stream_with(&srv, n);
            n += 1;
            let store = Store::from(js.clone()).with_actor(actor());
            js.cut_at(at, lands);
            // Only the last request landed with its answer lost goes
            // through: its entry is adopted as the log's own.
            let went = answer_it(&store);
            assert_eq!(went, at == steps && lands, "cut at {at} ({lands})");
            let fresh = Store::from(srv.store(js.name()).with_hold(Duration::ZERO));
            let records = fresh.read(RUN).unwrap().entries.len();
            let stored = records == 5;
            assert!(stored || records == 4);
            let log = fresh.audit_log().unwrap();
            let kinds: Vec<Kind> = log.iter().map(|l| l.entry.as_ref().unwrap().kind).collect();
            let intent = kinds.contains(&Kind::Intent);
            let outcome = kinds.contains(&Kind::Outcome);
            assert!(
                !stored || intent,
                "cut at {at} ({lands}): stored, no intent"
            );
            assert!(!outcome || stored);
            assert!(!went || (stored && outcome));
            let check = journal::custody::check_log(&fresh, &[]).unwrap();
            assert!(check.broken.is_empty());
            if intent && !outcome {
                let want = match stored {
                    true => Settled::Done { grew: 0 },
                    false => Settled::NotDone { grew: 0 },
                };
                assert_eq!(check.dangling.len(), 1);
                assert_eq!(check.dangling[0].settled, want, "cut at {at} ({lands})");
            }
        }
    }
}

/// The operations by hand of an async host (`ops::asynch`) are logged as
/// the blocking ones are, once the store is told who writes.
#[test]
fn an_answer_through_the_async_store_is_logged_too() {
    let srv = NatsServer::start();
    let js = stream_with(&srv, 0);
    let settings = srv.settings();
    let name = js.name().to_owned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let store = journal::store::jetstream::AsyncJetStreamStore::connect(&settings, &name)
            .await
            .unwrap()
            .with_hold(Duration::ZERO)
            .with_actor(actor());
        let req = answer::Request {
            run: RUN,
            call: None,
            is_error: false,
        };
        let checked = journal::ops::asynch::check_answer(&store, &req)
            .await
            .unwrap();
        let w = journal::ops::asynch::commit_answer(&store, &checked, "ok".into())
            .await
            .unwrap();
        assert_eq!(w.seq, 5);
        let log = store.audit_read().await.unwrap();
        let entries: Vec<journal::audit::Entry> = log
            .iter()
            .map(|m| journal::audit::Entry::decode(&m.body).unwrap())
            .collect();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].kind, Kind::Intent);
        assert_eq!(entries[0].operator.as_deref(), Some("alice"));
        assert_eq!(entries[1].kind, Kind::Outcome);
        assert_eq!(entries[1].prev, Some(journal::audit::link(&log[0].body)));
    });
}
