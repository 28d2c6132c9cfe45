//! Deletes racing writers on JetStream, through the library (issue 18 item
//! 4): the delete fences the run before it purges, so the stream is left
//! with the whole run or none of it, never records without their meta
//! record, and a writer is told the run is being deleted. The races through
//! the binary are in `tests/cli/jetstream_race.rs`.

use crate::nats_support;

use journal::store::Appender;
use nats_support::NatsServer;
use std::time::Duration;

const STREAM: &str = "SESSIONS";
const SUBJECT: &str = "fisk.sessions.>";
const TRIES: usize = 50;

/// A record body for seq `n`: an assistant record, so that a summary
/// (what the test reads a run's end with) reads the last message only.
fn body(n: u64) -> Vec<u8> {
    format!("{{\"seq\":{n},\"protocol\":\"io.choria.fisk-ai.v1.session.assistant\",\"assistant\":{{\"iteration\":{n},\"message\":{{\"role\":\"assistant\",\"content\":null}},\"in_tokens\":0,\"out_tokens\":0}}}}").into_bytes()
}

/// How many messages the stream holds on the run's subjects.
fn left(srv: &NatsServer, run: &str) -> u64 {
    srv.with_js(async |j| {
        let s = j.get_stream(STREAM).await.unwrap();
        let info = s
            .info_with_subjects(format!("fisk.sessions.{run}.>"))
            .await
            .unwrap();
        use futures_util::TryStreamExt;
        let all: Vec<(String, usize)> = info.try_collect().await.unwrap();
        all.iter().map(|(_, n)| *n as u64).sum()
    })
}

/// `delete_copied` (migrate's delete of a verified source) racing a writer
/// that appends as fast as it can: a delete that succeeds at seq N leaves
/// nothing of the run, and the writer was never told a record after N was
/// stored (it is refused, told the run is being deleted); a delete refused
/// says the source changed. Before the fence, a record appended between
/// the delete's look at the run's end and its purge survived it, and the
/// writer went on appending to a run with no meta record.
#[test]
fn delete_copied_racing_an_appender_deletes_the_whole_run_or_nothing() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM).with_hold(Duration::ZERO);
    let (mut fenced, mut refused) = (0, 0);
    let mut bad = Vec::new();
    for i in 0..TRIES {
        let run = format!("d{i:02}");
        let mut w = store.create(&run).unwrap();
        for n in 1..=5 {
            assert!(w.append_raw(n, &body(n)).unwrap());
        }
        let writer = std::thread::spawn(move || {
            let mut acked = 5;
            for n in 6..=200 {
                match w.append_raw(n, &body(n)) {
                    Ok(_) => acked = n,
                    Err(e) => return (acked, Some(e)),
                }
            }
            (acked, None)
        });
        std::thread::sleep(Duration::from_micros(300 * (i as u64 % 10)));
        let mut deleted_at = None;
        for _ in 0..1000 {
            let last = store.summary(&run).records.unwrap_or(0);
            match store.delete_copied(&run, last) {
                Ok(_) => {
                    deleted_at = Some(last);
                    break;
                }
                Err(journal::Error::SourceChanged { .. }) => refused += 1,
                Err(e) => panic!("try {i}: delete_copied at {last}: {e}"),
            }
        }
        let (acked, ended) = writer.join().unwrap();
        let remaining = left(&srv, &run);
        let what = format!(
            "try {i}: deleted at {deleted_at:?}, writer acked {acked}, ended {ended:?}, {remaining} message(s) left"
        );
        let Some(at) = deleted_at else {
            bad.push(format!("never deleted: {what}"));
            continue;
        };
        if remaining != 0 {
            bad.push(format!("messages survived the delete: {what}"));
        }
        if acked > at {
            bad.push(format!(
                "the writer was told a record after the delete's end was stored: {what}"
            ));
        }
        match &ended {
            None => {}
            Some(e) if e.to_string().contains("is being deleted") => fenced += 1,
            Some(e) => bad.push(format!("the writer was stopped by {e}: {what}")),
        }
    }
    eprintln!("{TRIES} tries: writer fenced out {fenced} times, delete refused {refused} times");
    assert!(
        bad.is_empty(),
        "{} of {TRIES} tries went wrong:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// A run of records 1..=n (assistant bodies), created through the store.
fn stored_run(store: &journal::store::jetstream::JetStreamStore, run: &str, n: u64) {
    let mut w = store.create(run).unwrap();
    for k in 1..=n {
        assert!(w.append_raw(k, &body(k)).unwrap());
    }
}

/// A delete killed after its fence landed and before its purge (here its
/// fence is published by hand, as FORMAT.md words it): the run is whole,
/// readers drop the fence as a final body that does not decode, every
/// writer is refused (an appender opened before, a new open, and a publish
/// fenced as the agent fences, on the run's wildcard), and the next delete
/// finishes it, keeping the run without the fence.
#[test]
fn a_delete_interrupted_after_its_fence_leaves_the_run_whole_and_closed_to_writers() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM);
    stored_run(&store, "cut", 5);
    let mut early = store.open("cut").unwrap();
    let fifth = srv.with_js(async |j| {
        let s = j.get_stream(STREAM).await.unwrap();
        let m = s
            .get_last_raw_message_by_subject("fisk.sessions.cut.5")
            .await
            .unwrap();
        let fence = async_nats::jetstream::message::PublishMessage::build()
            .payload("fisk-admin tombstone: run cut is being deleted (a test)".into())
            .expected_last_subject_sequence(m.sequence)
            .header(
                "Nats-Expected-Last-Subject-Sequence-Subject",
                "fisk.sessions.cut.>",
            );
        j.send_publish("fisk.sessions.cut.6", fence)
            .await
            .unwrap()
            .await
            .unwrap();
        m.sequence
    });
    let j = store.read("cut").unwrap();
    assert_eq!(j.entries.len(), 5);
    assert!(matches!(j.tail, journal::lines::Tail::Torn { .. }));
    let report = journal::store::jetstream::verify_jetstream_run(
        "cut",
        store.read_messages("cut").unwrap(),
        None,
    );
    let fence = report
        .findings
        .iter()
        .find(|f| f.code == journal::verify::Code::GarbageFinalLine)
        .unwrap_or_else(|| panic!("{:?}", report.findings));
    assert_eq!(fence.line, Some(6));
    assert!(fence.message.contains("interrupted"), "{}", fence.message);
    let refused = |e: journal::Error, what: &str| {
        assert!(e.to_string().contains("is being deleted"), "{what}: {e}");
    };
    refused(store.open("cut").err().unwrap(), "open");
    refused(
        early.append_raw(6, &body(6)).unwrap_err(),
        "an appender opened before",
    );
    // The agent's writer: record 6 fenced on record 5 over the wildcard.
    let agent = srv.with_js(async |j| {
        let msg = async_nats::jetstream::message::PublishMessage::build()
            .payload(body(6).into())
            .expected_last_subject_sequence(fifth)
            .header(
                "Nats-Expected-Last-Subject-Sequence-Subject",
                "fisk.sessions.cut.>",
            );
        j.send_publish("fisk.sessions.cut.6", msg)
            .await
            .unwrap()
            .await
    });
    assert!(agent.is_err(), "the agent's append lands after the fence");
    // The hold does not keep the next delete off: no writer can append.
    let keep = tempfile::tempdir().unwrap();
    let (purged, kept, warning) = store.delete_keeping("cut", &keep.path().join("k")).unwrap();
    assert_eq!((purged, warning), (5, None));
    let want: Vec<u8> = (1..=5)
        .flat_map(|k| [body(k), b"\n".to_vec()].concat())
        .collect();
    assert_eq!(
        std::fs::read(kept).unwrap(),
        want,
        "the backup holds the run, not the fence"
    );
    assert_eq!(left(&srv, "cut"), 0);
}

/// A delete whose backup cannot be written takes its fence back: nothing
/// is deleted, and the run's writer goes on.
#[test]
fn a_delete_that_cannot_keep_its_backup_takes_its_fence_back() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let store = srv.store(STREAM).with_hold(Duration::ZERO);
    stored_run(&store, "undo", 3);
    let mut w = store.open("undo").unwrap();
    let file = tempfile::NamedTempFile::new().unwrap();
    let below_a_file = file.path().join("keep");
    assert!(store.delete_keeping("undo", &below_a_file).is_err());
    assert_eq!(left(&srv, "undo"), 3);
    assert!(w.append_raw(4, &body(4)).unwrap());
    assert_eq!(store.read("undo").unwrap().entries.len(), 4);
}
