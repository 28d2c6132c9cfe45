//! The JetStream backend's library API against a real nats-server (SPEC 8):
//! fencing and lost acks on the appender, the bulk reader and its budget,
//! the bulk digests, `delete_copied`, the create pipeline and the batched
//! listing (against the run-by-run one, on damaged runs), and `migrate`'s
//! bulk verification of copies. Each test starts its own server. What
//! goes through the `fisk-admin` binary is in `tests/cli/jetstream.rs`.

use crate::nats_support;

use async_nats::jetstream::stream::Config;
use journal::store::jetstream::ReadBudget;
use journal::store::{Appender, Store};
use nats_support::{publish_interleaved, testdata_runs, NatsServer};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const STREAM: &str = "SESSIONS";
const SUBJECT: &str = "fisk.sessions.>";

#[test]
fn two_writers_on_one_run_one_is_fenced_out() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let runs = testdata_runs();
    let lines: Vec<&[u8]> = runs["tool-batch"]
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();

    let mut first = store.create("tool-batch").unwrap();
    first.append_raw(1, lines[0]).unwrap();
    first.append_raw(2, lines[1]).unwrap();

    // A second creator finds the run taken.
    let mut creator = store.create("other").unwrap();
    let mut late = store.create("other").unwrap();
    creator.append_raw(1, lines[0]).unwrap();
    match late.append_raw(1, lines[0]) {
        Err(journal::Error::Exists { run, .. }) => assert_eq!(run, "other"),
        other => panic!("second creator not refused: {other:?}"),
    }

    // Two writers open the same run; the one that appends first wins.
    let mut a = store.open("tool-batch").unwrap();
    let mut b = store.open("tool-batch").unwrap();
    assert_eq!((a.last_seq(), b.last_seq()), (2, 2));
    assert!(a.append_raw(3, lines[2]).unwrap());
    match b.append_raw(3, lines[2]) {
        Err(journal::Error::Live { run, holder }) => {
            assert_eq!(run, "tool-batch");
            assert!(holder.unwrap().contains(STREAM));
        }
        other => panic!("second writer not fenced out: {other:?}"),
    }
    // The fenced-out writer stays out even for the next seq.
    assert_eq!(b.last_seq(), 2);
    // The original writer, which the newer opens overtook, is fenced out too.
    assert!(first.append_raw(3, lines[2]).is_err());
    assert!(a.append_raw(4, lines[3]).unwrap());
    let j = store.read("tool-batch").unwrap();
    assert_eq!(j.entries.len(), 4);
    for (e, l) in j.entries.iter().zip(&lines) {
        assert_eq!(e.raw, *l);
    }
}

/// A seq that would leave a gap is the run's own fault (`Error::Gap`,
/// nothing published), not the store failing: `migrate` goes on with the
/// next run.
#[test]
fn a_gap_is_the_runs_error_not_the_stores() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let mut app = store.create("gappy").unwrap();
    assert!(app.append_raw(1, br#"{"seq":1}"#).unwrap());
    match app.append_raw(3, br#"{"seq":3}"#) {
        Err(
            e @ journal::Error::Gap {
                seq: 3, last: 1, ..
            },
        ) => {
            assert!(!e.is_store_failure(), "{e}");
        }
        other => panic!("a gap not refused as one: {other:?}"),
    }
    assert_eq!(app.last_seq(), 1);
    assert_eq!(srv.messages(STREAM), 1);
}

/// Publish record `seq` as the appender would, but drop the ack: the write
/// lands, the appender never hears of it.
fn publish_behind_its_back(
    srv: &NatsServer,
    subject: &str,
    msg_id: &str,
    prev: Option<(&str, u64)>,
    body: &[u8],
) {
    let (subject, msg_id, body) = (subject.to_owned(), msg_id.to_owned(), body.to_vec());
    let prev = prev.map(|(s, q)| (s.to_owned(), q));
    srv.with_js(async move |js| {
        let mut m = async_nats::jetstream::message::PublishMessage::build()
            .payload(body.into())
            .message_id(msg_id);
        m = match prev {
            Some((s, q)) => m
                .expected_last_subject_sequence(q)
                .header("Nats-Expected-Last-Subject-Sequence-Subject", s.as_str()),
            None => m.expected_last_subject_sequence(0),
        };
        js.send_publish(subject, m).await.unwrap().await.unwrap();
    });
}

#[test]
fn a_lost_ack_is_adopted_not_duplicated() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    // A second stream whose de-duplication window is short, so the re-append
    // reaches the fence instead of the duplicate check.
    srv.raw_stream(Config {
        duplicate_window: Duration::from_millis(100),
        ..journal::store::jetstream::spec_config("SHORTDUP", "short.>")
    });
    let runs = testdata_runs();
    let lines: Vec<&[u8]> = runs["tool-batch"]
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for (stream, prefix, wait) in [
        (STREAM, "fisk.sessions", false),
        ("SHORTDUP", "short", true),
    ] {
        let store = srv.store(stream);
        let mut w = store.create("r1").unwrap();
        w.append_raw(1, lines[0]).unwrap();
        let meta_seq = w.last_stream_seq();
        // Seq 2 lands, its ack is lost.
        publish_behind_its_back(
            &srv,
            &format!("{prefix}.r1.2"),
            &w.msg_id(2),
            Some((&format!("{prefix}.r1._meta"), meta_seq)),
            lines[1],
        );
        if wait {
            std::thread::sleep(Duration::from_millis(1500));
        }
        let before = srv.messages(stream);
        // The writer re-appends the same seq with the same msg id: adopted.
        assert!(w.append_raw(2, lines[1]).unwrap(), "{stream}");
        assert_eq!(w.last_seq(), 2);
        assert_eq!(
            srv.messages(stream),
            before,
            "{stream}: a duplicate was stored"
        );
        // And it goes on from there.
        assert!(w.append_raw(3, lines[2]).unwrap());
        let j = store.read("r1").unwrap();
        assert_eq!(j.entries.len(), 3, "{stream}");
    }
    // The same for a lost ack on the very first record.
    let store = srv.store(STREAM);
    let mut w = store.create("r2").unwrap();
    publish_behind_its_back(&srv, "fisk.sessions.r2._meta", &w.msg_id(1), None, lines[0]);
    assert!(w.append_raw(1, lines[0]).unwrap());
    assert_eq!(store.read("r2").unwrap().entries.len(), 1);
}

/// The bulk reader over `ids`, giving up the runs still open beyond `open`
/// bytes, each run released as soon as it is handed over (as migrate does
/// once it is copied). Every run is handed over once, and everything the
/// reader counted is released (by the caller, or by the reader itself).
fn bulk_read(
    store: &journal::store::jetstream::JetStreamStore,
    ids: &[String],
    open: u64,
) -> BTreeMap<usize, Option<Vec<journal::store::jetstream::RunMessage>>> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let held = AtomicU64::new(0);
    let mut got = BTreeMap::new();
    let limits = ReadBudget { open, waiting: 0 };
    store.stream_runs(ids, limits, &held, |i, m| {
        let bytes: u64 = m.iter().flatten().map(|x| x.body.len() as u64).sum();
        held.fetch_sub(bytes, Ordering::Relaxed);
        assert!(got.insert(i, m).is_none(), "run {i} handed over twice");
    });
    assert_eq!(held.load(Ordering::Relaxed), 0, "open {open}: all released");
    got
}

#[test]
fn the_bulk_reader_hands_over_each_run_once_and_gives_up_what_the_budget_cannot_hold() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let runs: Vec<(String, Vec<Vec<u8>>)> = (0..8)
        .map(|i| {
            let id = format!("r{i}");
            let b = (1..=20)
                .map(|k| {
                    format!(
                        "{{\"seq\":{k},\"run\":\"{id}\",\"pad\":\"{}\"}}",
                        "p".repeat(100)
                    )
                    .into_bytes()
                })
                .collect();
            (id, b)
        })
        .collect();
    publish_interleaved(&srv, &runs);
    let store = srv.store(STREAM);
    let mut ids: Vec<String> = runs.iter().map(|(id, _)| id.clone()).collect();
    ids.push("absent".into());
    for budget in [u64::MAX, 2_000, 0] {
        let got = bulk_read(&store, &ids, budget);
        assert_eq!(got.len(), ids.len(), "budget {budget}: every run once");
        assert!(got[&8].is_none(), "an absent run is read on its own");
        let mut whole = 0;
        for (i, (id, bodies)) in runs.iter().enumerate() {
            if let Some(msgs) = &got[&i] {
                whole += 1;
                let have: Vec<&Vec<u8>> = msgs.iter().map(|m| &m.body).collect();
                assert_eq!(
                    have,
                    bodies.iter().collect::<Vec<_>>(),
                    "budget {budget}: {id}"
                );
            }
        }
        match budget {
            u64::MAX => assert_eq!(whole, 8, "an unbounded read hands over every run"),
            // Interleaved 8 ways, the runs cannot finish within the budget.
            _ => assert!(whole < 8, "budget {budget}: {whole} runs whole"),
        }
    }
}

#[test]
fn the_bulk_reader_pauses_while_the_runs_it_handed_over_wait_for_their_copies() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    // 24 runs of 2 MB, one after the other: a pull (8 MiB) brings about
    // four of them.
    let runs: Vec<(String, Vec<Vec<u8>>)> = (0..24u8)
        .map(|i| {
            let bodies = (0..20).map(|_| vec![b'a' + i % 26; 100_000]).collect();
            (format!("r{i:02}"), bodies)
        })
        .collect();
    srv.with_js(async |js| {
        for (id, bodies) in &runs {
            for (k, b) in bodies.iter().enumerate() {
                let subject = journal::store::jetstream::subject("fisk.sessions", id, k as u64 + 1);
                js.publish(subject, b.clone().into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        }
    });
    let store = srv.store(STREAM);
    let ids: Vec<String> = runs.iter().map(|(id, _)| id.clone()).collect();
    use std::sync::atomic::{AtomicU64, Ordering};
    let held = AtomicU64::new(0);
    let released = AtomicU64::new(0);
    let mut delivered = 0u64;
    let mut most_waiting = 0u64;
    let mut whole = 0;
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    std::thread::scope(|s| {
        // A slow copier: each run takes 30 ms before it is released.
        s.spawn(|| {
            for bytes in rx {
                std::thread::sleep(Duration::from_millis(30));
                held.fetch_sub(bytes, Ordering::Relaxed);
                released.fetch_add(1, Ordering::Relaxed);
            }
        });
        let limits = ReadBudget {
            open: u64::MAX,
            waiting: 0,
        };
        store.stream_runs(&ids, limits, &held, |i, m| {
            let bytes: u64 = m.iter().flatten().map(|x| x.body.len() as u64).sum();
            if m.as_deref()
                .map(|v| v.iter().map(|x| x.body.clone()).collect::<Vec<_>>())
                == runs.get(i).map(|r| r.1.clone())
            {
                whole += 1;
            }
            delivered += 1;
            most_waiting = most_waiting.max(delivered - released.load(Ordering::Relaxed));
            tx.send(bytes).unwrap();
        });
        drop(tx);
    });
    assert_eq!(whole, 24, "every run handed over whole");
    // With nothing allowed to wait, each pull waits for the copies of the
    // runs the previous one completed: never more than one pull's worth
    // (about four runs, five with the one it ends inside) are waiting.
    // Without the pause, the reader would hand over all 24 at once.
    assert!(
        most_waiting <= 6,
        "{most_waiting} runs were waiting for a copy at once"
    );
    assert_eq!(held.load(Ordering::Relaxed), 0);
}

#[test]
fn reads_are_bounded_by_bytes_and_a_record_larger_than_a_batch_comes_on_its_own() {
    // Records larger than the default max_payload need a server that takes them.
    let conf = tempfile::tempdir().unwrap();
    let file = conf.path().join("server.conf");
    std::fs::write(&file, "max_payload: 12MB\n").unwrap();
    let srv = NatsServer::start_with(&["-c", file.to_str().unwrap()]);
    srv.spec_stream(STREAM, SUBJECT);
    // 30 records of 400 KB (12 MB: more than one pull may bring, so batches
    // end full) with, at seq 15, one of 9 MiB (more than a whole batch may
    // hold: it must come on its own); a small run interleaved with it.
    let big: Vec<Vec<u8>> = (1..=30u8)
        .map(|k| {
            let size = if k == 15 { 9 << 20 } else { 400_000 };
            vec![b'a' + k % 26; size]
        })
        .collect();
    let small: Vec<Vec<u8>> = (1..=5)
        .map(|k| format!("{{\"seq\":{k}}}").into_bytes())
        .collect();
    let runs = vec![("big".to_owned(), big), ("small".to_owned(), small)];
    publish_interleaved(&srv, &runs);
    let store = srv.store(STREAM);
    let ids: Vec<String> = runs.iter().map(|(id, _)| id.clone()).collect();
    let bodies = |msgs: &[journal::store::jetstream::RunMessage]| -> Vec<Vec<u8>> {
        msgs.iter().map(|m| m.body.clone()).collect()
    };

    // A run read on its own.
    for (id, want) in &runs {
        let got = store.read_messages(id).unwrap();
        assert!(bodies(&got) == *want, "{id} read on its own");
    }
    // The bulk reader, with room for everything and with a budget smaller
    // than the big record (which then makes it give up, not stall).
    for budget in [u64::MAX, 1 << 20] {
        let got = bulk_read(&store, &ids, budget);
        assert_eq!(got.len(), 2, "budget {budget}: every run handed over");
        if budget == u64::MAX {
            for (i, (id, want)) in runs.iter().enumerate() {
                let have = got[&i].as_deref().map(bodies);
                assert!(have.as_ref() == Some(want), "bulk read of {id}");
            }
        }
    }
    // The bulk verification's read (one consumer over the prefix, and one
    // per group of runs).
    let want: Vec<Option<(u64, String)>> = runs
        .iter()
        .map(|(_, b)| {
            let sha = journal::migrate::digest(b.iter().map(Vec::as_slice));
            Some((b.len() as u64, sha))
        })
        .collect();
    for records in [u64::MAX, 0] {
        let have: Vec<Option<(u64, String)>> = store
            .digests(&ids, records)
            .into_iter()
            .map(|d| d.unwrap())
            .collect();
        assert_eq!(have, want, "digests ({records})");
    }
}

#[test]
fn a_jetstream_source_is_purged_only_up_to_what_was_copied() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let runs: Vec<(String, Vec<Vec<u8>>)> = vec![(
        "grows".into(),
        (1..=3)
            .map(|k| format!("{{\"seq\":{k}}}").into_bytes())
            .collect(),
    )];
    publish_interleaved(&srv, &runs);
    // Just stored and not at rest: the hold (which the delete checks on
    // the run as it reads it) is off.
    let store = srv.store(STREAM).with_hold(Duration::ZERO);
    // A copy that ends at seq 2 while the source holds 3: refused, nothing purged.
    let e = store.delete_copied("grows", 2).unwrap_err();
    assert!(e.to_string().contains("not deleted"), "{e}");
    assert_eq!(srv.messages(STREAM), 3);
    // The copy ends where the source does: purged.
    assert_eq!(store.delete_copied("grows", 3).unwrap(), 3);
    assert_eq!(srv.messages(STREAM), 0);
}

/// Runs `c0..c{n-1}` of `records` small records each.
fn new_runs(n: usize, records: usize) -> Vec<(String, Vec<Vec<u8>>)> {
    (0..n)
        .map(|i| {
            let id = format!("c{i}");
            let bodies = (1..=records)
                .map(|k| format!("{{\"seq\":{k},\"run\":\"{id}\"}}").into_bytes())
                .collect();
            (id, bodies)
        })
        .collect()
}

/// Hand `runs` to `create_runs` one at a time: run i+1 goes in only after
/// run i has been reported and `between(i)` has run. Each run's (records
/// stored, outcome), in order.
fn create_one_by_one(
    store: &journal::store::jetstream::JetStreamStore,
    runs: &[(String, Vec<Vec<u8>>)],
    exists: &std::collections::HashSet<String>,
    mut between: impl FnMut(usize) + Send,
) -> Vec<(u64, journal::error::Result<()>)> {
    let (tx, rx) = journal::store::jetstream::new_runs(1);
    let (reported_tx, reported_rx) = std::sync::mpsc::channel::<usize>();
    let mut ended: BTreeMap<usize, (u64, journal::error::Result<()>)> = BTreeMap::new();
    std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..runs.len() {
                tx.send(new_run(runs, i)).unwrap();
                assert_eq!(reported_rx.recv().unwrap(), i, "reported out of turn");
                between(i);
            }
        });
        store.create_runs(rx, 4, exists, |i, n, r| {
            ended.insert(i, (n, r));
            let _ = reported_tx.send(i);
        });
    });
    assert_eq!(ended.len(), runs.len(), "every run reported once");
    ended.into_values().collect()
}

/// The records of run `i` of `runs`, as `create_runs` takes them.
fn new_run(runs: &[(String, Vec<Vec<u8>>)], i: usize) -> journal::store::jetstream::NewRun {
    let (id, bodies) = &runs[i];
    let records = bodies
        .iter()
        .enumerate()
        .map(|(k, b)| (k as u64 + 1, b.clone()))
        .collect();
    (i, id.clone(), records)
}

/// Hand every run to `create_runs` before it starts: each run's (records
/// stored, outcome) by index.
fn create_all_at_once(
    store: &journal::store::jetstream::JetStreamStore,
    runs: &[(String, Vec<Vec<u8>>)],
    exists: &std::collections::HashSet<String>,
) -> BTreeMap<usize, (u64, journal::error::Result<()>)> {
    let (tx, rx) = journal::store::jetstream::new_runs(runs.len());
    for i in 0..runs.len() {
        tx.send(new_run(runs, i)).unwrap();
    }
    drop(tx);
    let mut ended = BTreeMap::new();
    store.create_runs(rx, 4, exists, |i, n, r| {
        assert!(ended.insert(i, (n, r)).is_none(), "run {i} reported twice");
    });
    assert_eq!(ended.len(), runs.len(), "every run reported");
    ended
}

/// The bodies stored under a run, in stream order.
fn stored_bodies(store: &journal::store::jetstream::JetStreamStore, run: &str) -> Vec<Vec<u8>> {
    match store.read_messages(run) {
        Ok(m) => m.into_iter().map(|m| m.body).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn the_create_pipeline_gives_way_to_another_writer_and_loses_nothing() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let runs = new_runs(6, 30);
    // Another writer publishes between our runs: the pipeline's next
    // message is refused (its msg-id chain broken), what it had in flight
    // is finished run by run, and the rest goes run by run.
    let foreign = |n: usize| {
        let subject = journal::store::jetstream::subject("fisk.sessions", &format!("zz{n}"), 1);
        publish_behind_its_back(&srv, &subject, &format!("other-{n}"), None, b"{\"seq\":1}");
    };
    let ended = create_one_by_one(&store, &runs, &Default::default(), |i| {
        if i == 0 || i == 2 {
            foreign(i);
        }
    });
    for ((id, bodies), (n, r)) in runs.iter().zip(&ended) {
        assert!(r.is_ok(), "{id}: {r:?}");
        assert_eq!(*n, 30, "{id}");
        assert_eq!(&stored_bodies(&store, id), bodies, "{id}");
    }
    assert_eq!(stored_bodies(&store, "zz0"), vec![b"{\"seq\":1}".to_vec()]);
    assert_eq!(stored_bodies(&store, "zz2"), vec![b"{\"seq\":1}".to_vec()]);
    assert_eq!(srv.messages(STREAM), 6 * 30 + 2, "nothing written twice");
}

#[test]
fn the_create_pipeline_never_writes_into_a_run_that_exists() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let runs = new_runs(8, 40);
    // c2 was created by someone else after migrate listed the stream; c5
    // is in the listing.
    let c2 = journal::store::jetstream::subject("fisk.sessions", "c2", 1);
    publish_behind_its_back(&srv, &c2, "theirs-1", None, b"{\"theirs\":1}");
    let exists: std::collections::HashSet<String> = ["c5".to_owned()].into();
    // All at once: c2's refusal lands in the middle of the pipeline.
    let ended = create_all_at_once(&store, &runs, &exists);
    for (i, (id, bodies)) in runs.iter().enumerate() {
        let (n, r) = &ended[&i];
        match id.as_str() {
            "c2" | "c5" => {
                assert!(
                    matches!(r, Err(journal::error::Error::Exists { .. })),
                    "{id}: {r:?}"
                );
                assert_eq!(*n, 0, "{id}");
            }
            _ => {
                assert!(r.is_ok(), "{id}: {r:?}");
                assert_eq!(*n, 40, "{id}");
                assert_eq!(&stored_bodies(&store, id), bodies, "{id}");
            }
        }
    }
    assert_eq!(
        stored_bodies(&store, "c2"),
        vec![b"{\"theirs\":1}".to_vec()],
        "c2 left as it was"
    );
    assert!(stored_bodies(&store, "c5").is_empty(), "c5 never written");
    assert_eq!(srv.messages(STREAM), 6 * 40 + 1);
}

#[test]
fn a_record_too_large_mid_run_refuses_its_run_only_and_keeps_its_prefix() {
    let srv = NatsServer::start();
    let mut config = journal::store::jetstream::spec_config(STREAM, SUBJECT);
    config.max_message_size = 4096; // the least SPEC 8 allows
    srv.raw_stream(config);
    let store = srv.store(STREAM);
    let mut runs = new_runs(6, 10);
    // c1's record 5 is over the stream's limit (refused by the server);
    // c3's record 3 is over the server's max payload (refused by the
    // client before it is sent).
    runs[1].1[4] = format!("{{\"seq\":5,\"pad\":\"{}\"}}", "x".repeat(5000)).into_bytes();
    runs[3].1[2] = format!("{{\"seq\":3,\"pad\":\"{}\"}}", "x".repeat(1_100_000)).into_bytes();
    let ended = create_all_at_once(&store, &runs, &Default::default());
    for (i, (id, bodies)) in runs.iter().enumerate() {
        let (n, r) = &ended[&i];
        let kept = match i {
            1 => 4,
            3 => 2,
            _ => 10,
        };
        if kept < 10 {
            assert!(
                matches!(r, Err(journal::error::Error::Refused(_))),
                "{id}: {r:?}"
            );
        } else {
            assert!(r.is_ok(), "{id}: {r:?}");
        }
        assert_eq!(*n, kept as u64, "{id}");
        assert_eq!(stored_bodies(&store, id), bodies[..kept].to_vec(), "{id}");
    }
    assert_eq!(srv.messages(STREAM), 4 * 10 + 4 + 2);
}

#[test]
fn the_create_pipeline_fails_fast_and_names_the_server_when_it_stops() {
    let mut srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let runs = new_runs(4, 10);
    let url = srv.url.clone();
    let started = Instant::now();
    let ended = create_one_by_one(&store, &runs, &Default::default(), |i| {
        if i == 0 {
            srv.stop();
        }
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert!(ended[0].1.is_ok(), "{:?}", ended[0].1);
    for (n, r) in &ended[1..] {
        assert_eq!(*n, 0);
        let e = r.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(&url) && e.contains("re-run"), "{e}");
    }
}

#[test]
fn callbacks_run_outside_the_runtime_so_they_may_call_the_store() {
    // Calling a blocking method inside the runtime would panic ("Cannot
    // start a runtime from within a runtime"): the facade calls `done`
    // and `deliver` on the caller's thread, outside it.
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    let runs = new_runs(3, 5);
    let (tx, rx) = journal::store::jetstream::new_runs(runs.len());
    for i in 0..runs.len() {
        tx.send(new_run(&runs, i)).unwrap();
    }
    drop(tx);
    let mut seen = Vec::new();
    store.create_runs(rx, 4, &Default::default(), |i, n, r| {
        r.unwrap();
        assert_eq!(n, 5);
        let id = &runs[i].0;
        assert!(store.exists(id).unwrap(), "{id}");
        assert_eq!(store.read(id).unwrap().entries.len(), 5);
        seen.push(i);
    });
    seen.sort();
    assert_eq!(seen, [0, 1, 2]);
    let ids: Vec<String> = runs.iter().map(|(id, _)| id.clone()).collect();
    let held = std::sync::atomic::AtomicU64::new(0);
    let mut delivered = 0;
    store.stream_runs(&ids, ReadBudget::UNLIMITED, &held, |i, m| {
        let got = m.expect("read in bulk");
        assert_eq!(store.read_messages(&ids[i]).unwrap().len(), got.len());
        delivered += 1;
    });
    assert_eq!(delivered, 3);
}

/// `body` (a record line) with its seq set to `seq`.
fn with_seq(body: &[u8], seq: usize) -> Vec<u8> {
    let text = std::str::from_utf8(body).unwrap();
    let rest = text.split_once(',').unwrap().1;
    format!("{{\"seq\":{seq},{rest}").into_bytes()
}

/// A run to publish: its id, and its messages in publish order (the last
/// token of the subject, the body).
type Published = (String, Vec<(String, Vec<u8>)>);

/// Damaged and unusual runs for the listing tests, besides every testdata
/// run.
fn listing_runs() -> Vec<Published> {
    let td = testdata_runs();
    let lines = |id: &str| -> Vec<Vec<u8>> {
        td[id]
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let token = |k: usize| match k {
        1 => "_meta".to_owned(),
        k => k.to_string(),
    };
    let numbered = |bodies: Vec<Vec<u8>>| -> Vec<(String, Vec<u8>)> {
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, b)| (token(i + 1), b))
            .collect()
    };
    let mut runs: Vec<Published> = td
        .keys()
        .map(|id| (id.clone(), numbered(lines(id))))
        .collect();
    let simple = lines("simple-completed"); // meta, assistant, terminal
    let batch = lines("tool-batch"); // meta, assistant, 3 results, assistant, terminal
                                     // A message on no record subject after the records.
    let mut stray = numbered(simple.clone());
    stray.push(("junk".into(), b"{\"stray\":1}".to_vec()));
    runs.push(("stray-last".into(), stray));
    // An upgrade interrupted between its two publishes: the meta record is
    // the last message, record 2 exists.
    let mut behind = numbered(simple.clone());
    behind.rotate_left(1);
    runs.push(("upgrade-interrupted".into(), behind));
    // The record before the last is gone.
    let mut lost = numbered(simple.clone());
    lost.remove(1);
    runs.push(("record-lost".into(), lost));
    // A final body that does not parse (dropped), one before it that does
    // not (corruption), a meta record that does not.
    let mut torn = numbered(batch.clone());
    torn.last_mut().unwrap().1 = b"{\"seq\":7,".to_vec();
    runs.push(("torn-last".into(), torn));
    let mut bad = numbered(batch.clone());
    bad[5].1 = b"not json".to_vec();
    runs.push(("bad-before-last".into(), bad));
    let mut bad_meta = numbered(batch.clone());
    bad_meta[0].1 = b"{\"seq\":1,".to_vec();
    runs.push(("bad-meta".into(), bad_meta));
    runs.push(("meta-only".into(), numbered(vec![simple[0].clone()])));
    // Records but no meta record (not listed; summarised when named).
    let mut no_meta = numbered(simple.clone());
    no_meta.remove(0);
    runs.push(("no-meta".into(), no_meta));
    // Long tails: many tool results after the last assistant record (read
    // back in growing steps, more subjects than one batched get takes),
    // and a run with no assistant record at all.
    for r in 0..20 {
        let mut long = vec![batch[0].clone(), batch[1].clone()];
        long.extend((3..=150).map(|k| with_seq(&batch[2], k)));
        runs.push((format!("long-tail-{r:02}"), numbered(long)));
    }
    let mut none = vec![batch[0].clone()];
    none.extend((2..=40).map(|k| with_seq(&batch[2], k)));
    runs.push(("no-assistant".into(), numbered(none)));
    // Tails of large records: more bytes than one batched get brings.
    let big = String::from_utf8(batch[2].clone()).unwrap().replace(
        "\\\"lag\\\":0",
        &format!("\\\"lag\\\":0,\\\"pad\\\":\\\"{}\\\"", "x".repeat(900_000)),
    );
    for r in 0..12 {
        let run = vec![
            batch[0].clone(),
            batch[1].clone(),
            with_seq(big.as_bytes(), 3),
            with_seq(&batch[6], 4),
        ];
        runs.push((format!("big-tail-{r:02}"), numbered(run)));
    }
    // More runs than one group summarises.
    for r in 0..300 {
        runs.push((format!("copy-{r:03}"), numbered(simple.clone())));
    }
    runs
}

/// Publish `runs` under `prefix`, run after run, each in the order given.
fn publish_runs(srv: &NatsServer, prefix: &str, runs: &[Published]) {
    let msgs: Vec<(String, Vec<u8>)> = runs
        .iter()
        .flat_map(|(id, m)| {
            m.iter()
                .map(move |(t, b)| (format!("{prefix}.{id}.{t}"), b.clone()))
        })
        .collect();
    srv.with_js(async move |js| {
        // Sent one after another (stream order is publish order), the
        // acks awaited after.
        let mut acks = Vec::new();
        for (s, b) in msgs {
            acks.push(js.publish(s, b.into()).await.unwrap());
        }
        for a in acks {
            a.await.unwrap();
        }
    });
}

/// A summary as JSON with the stream's names taken out, plus what `ls`
/// does not print (the remedy, when the run ended).
fn comparable(s: &journal::store::Summary, stream: &str, prefix: &str) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap();
    let text = v
        .to_string()
        .replace(stream, "STREAM")
        .replace(prefix, "PREFIX");
    v = serde_json::from_str(&text).unwrap();
    v["remedy"] = format!("{:?}", s.remedy).into();
    v["ended"] = format!("{:?}", s.ended).into();
    // Undated records are dated by when the stream stored them.
    v["updated"] = serde_json::Value::Null;
    v
}

#[test]
fn batched_summaries_of_every_kind_of_run_are_those_read_run_by_run() {
    let srv = NatsServer::start();
    // One stream reads by batched direct gets, the other (no direct gets)
    // run by run.
    srv.spec_stream("FAST", "fast.>");
    let mut slow = journal::store::jetstream::spec_config("SLOW", "slow.>");
    slow.allow_direct = false;
    srv.raw_stream(slow);
    let runs = listing_runs();
    publish_runs(&srv, "fast", &runs);
    publish_runs(&srv, "slow", &runs);
    let (fast, slow) = (srv.store("FAST"), srv.store("SLOW"));
    let mut ids = fast.runs().unwrap();
    assert_eq!(ids, slow.runs().unwrap());
    assert!(!ids.contains(&"no-meta".to_owned()));
    // Named when not listed, and named twice.
    ids.extend(["no-meta", "absent", "simple-completed"].map(String::from));
    let (a, b) = (fast.summaries(&ids), slow.summaries(&ids));
    assert_eq!(a.len(), ids.len());
    let mut by_id = BTreeMap::new();
    for ((id, x), y) in ids.iter().zip(&a).zip(&b) {
        assert_eq!(&x.run_id, id);
        let (x, y) = (comparable(x, "FAST", "fast"), comparable(y, "SLOW", "slow"));
        assert_eq!(x, y, "run {id}");
        by_id.insert(id.as_str(), x);
    }
    // And they are what each damage makes of a run.
    let problem = |id: &str| by_id[id]["problem"].as_str().unwrap_or("").to_owned();
    let status = |id: &str| by_id[id]["status"].as_str().unwrap().to_owned();
    assert_eq!(status("simple-completed"), "completed");
    assert_eq!(status("copy-299"), "completed");
    assert!(
        problem("stray-last").contains("not on a record subject"),
        "{}",
        problem("stray-last")
    );
    assert!(problem("upgrade-interrupted").contains("upgrade was interrupted"));
    assert!(
        problem("record-lost").contains("record 2 is missing"),
        "{}",
        problem("record-lost")
    );
    // The torn terminal is dropped: the run reads as ending at seq 6.
    assert_eq!(status("torn-last"), "open");
    assert_eq!(by_id["torn-last"]["records"], 6);
    assert!(problem("bad-before-last").contains("does not parse"));
    assert!(problem("bad-meta").contains("does not parse"));
    assert!(problem("no-meta").contains("no meta record"));
    assert!(problem("absent").contains("not found"));
    assert_eq!(by_id["meta-only"]["records"], 1);
    assert_eq!(by_id["long-tail-00"]["records"], 150);
    assert_eq!(by_id["big-tail-11"]["records"], 4);
    for id in ["no-assistant", "long-tail-19", "big-tail-00"] {
        assert!(by_id[id]["status"].is_string(), "{id}");
    }
}

/// The SHA-256 migrate expects for a file journal's clean bytes.
fn file_digest(bytes: &[u8]) -> (usize, String) {
    let bodies: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    (
        bodies.len(),
        journal::migrate::digest(bodies.iter().copied()),
    )
}

/// `n` copies of the testdata run `template`, the meta record's run_id
/// changed to each new id (`<template>-0000`, ...): id -> file bytes.
fn synth_runs(n: usize, template: &str) -> BTreeMap<String, Vec<u8>> {
    let text = String::from_utf8(testdata_runs()[template].clone()).unwrap();
    let from = format!("\"run_id\":\"{template}\"");
    assert!(text.contains(&from));
    (0..n)
        .map(|i| {
            let id = format!("{template}-{i:04}");
            let body = text.replacen(&from, &format!("\"run_id\":\"{id}\""), 1);
            (id, body.into_bytes())
        })
        .collect()
}

/// Verifying copies in bulk (as `migrate` does into a stream) fails the
/// runs whose records were lost, changed or added to since, and both bulk
/// reads (one consumer over the prefix, or per group) agree.
#[test]
fn bulk_verification_fails_runs_with_missing_changed_or_extra_records() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    // Six copies of the testdata run tool-batch, each under its own id,
    // stored as a copy stores them (the fenced appender, record by record).
    let want = synth_runs(6, "tool-batch");
    let js = srv.store(STREAM);
    for (id, bytes) in &want {
        let mut app = js.create(id).unwrap();
        for (k, line) in bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .enumerate()
        {
            assert!(app.append_raw(k as u64 + 1, line).unwrap());
        }
    }
    let expected: Vec<(String, usize, String)> = want
        .iter()
        .map(|(id, bytes)| {
            let (n, sha) = file_digest(bytes);
            (id.clone(), n, sha)
        })
        .chain([("tool-batch-absent".to_owned(), 3, "00".repeat(32))])
        .collect();
    let n = expected[0].1 as u64;
    assert!(n >= 4, "the template run is too short for this test");
    let sub = |run: &str, seq: u64| journal::store::jetstream::subject("fisk.sessions", run, seq);

    // 0001: record 3 deleted. 0002: record 3 replaced by other bytes.
    // 0003: one record too many. 0004: the last record's body changed in
    // place of the original (purged and rewritten). 0000 and 0005 intact.
    let (s3_1, s3_2, extra, last4) = (
        sub("tool-batch-0001", 3),
        sub("tool-batch-0002", 3),
        sub("tool-batch-0003", n + 1),
        sub("tool-batch-0004", n),
    );
    let last_body = want["tool-batch-0004"]
        .split(|b| *b == b'\n')
        .rfind(|l| !l.is_empty())
        .unwrap()
        .to_vec();
    srv.with_js(async move |js| {
        let stream = js.get_stream(STREAM).await.unwrap();
        let m = stream.get_last_raw_message_by_subject(&s3_1).await.unwrap();
        stream.delete_message(m.sequence).await.unwrap();
        stream.purge().filter(&s3_2).await.unwrap();
        js.publish(s3_2, "{\"not\":\"the record\"}".into())
            .await
            .unwrap()
            .await
            .unwrap();
        js.publish(extra, "{\"extra\":true}".into())
            .await
            .unwrap()
            .await
            .unwrap();
        stream.purge().filter(&last4).await.unwrap();
        let mut changed = last_body;
        changed.push(b' ');
        js.publish(last4, changed.into())
            .await
            .unwrap()
            .await
            .unwrap();
    });

    let store = Store::JetStream(Box::new(srv.store(STREAM)));
    let reports = journal::migrate::verify_copies(&store, &expected);
    let results: BTreeMap<&str, &str> = reports
        .iter()
        .map(|r| (r.run.as_str(), r.result.word()))
        .collect();
    let failed = [
        "tool-batch-0001",
        "tool-batch-0002",
        "tool-batch-0003",
        "tool-batch-0004",
        "tool-batch-absent",
    ];
    for r in &reports {
        let bad = failed.contains(&r.run.as_str());
        assert_eq!(r.result.ok(), !bad, "{}: {:?}", r.run, r.notes);
        if bad {
            assert!(r.sha256.is_none(), "{}", r.run);
            assert!(!r.notes.is_empty(), "{} failed without a reason", r.run);
        }
    }
    assert_eq!(results["tool-batch-0000"], "copied");
    assert_eq!(results["tool-batch-0005"], "copied");

    // Both ways of reading in bulk (one consumer over the prefix, filtered
    // consumers per group) see the same thing; irregular runs are None.
    let Store::JetStream(js) = &store else {
        unreachable!()
    };
    let runs: Vec<String> = expected.iter().map(|e| e.0.clone()).collect();
    let whole = js.digests(&runs, u64::MAX);
    let grouped = js.digests(&runs, 0);
    let flat = |v: Vec<journal::Result<Option<(u64, String)>>>| -> Vec<Option<(u64, String)>> {
        v.into_iter().map(|x| x.unwrap()).collect()
    };
    let (whole, grouped) = (flat(whole), flat(grouped));
    assert_eq!(whole, grouped);
    let by_run: BTreeMap<&str, &Option<(u64, String)>> =
        runs.iter().map(String::as_str).zip(&whole).collect();
    assert_eq!(by_run["tool-batch-0000"], &Some((n, expected[0].2.clone())));
    assert_eq!(by_run["tool-batch-0001"], &None, "a gap is irregular");
    assert_eq!(
        by_run["tool-batch-0002"], &None,
        "a record rewritten out of order is irregular"
    );
    assert_eq!(by_run["tool-batch-absent"], &None);
    assert_eq!(by_run["tool-batch-0003"].as_ref().map(|x| x.0), Some(n + 1));
}
