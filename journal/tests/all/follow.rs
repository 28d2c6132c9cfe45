//! `Store::follow` (issue 27.3) through the library, on both backends: a
//! run read, then the records its writer appends through the store's own
//! appender, each yielded once and in order, ending at the terminal
//! record. JetStream against a real nats-server this test starts.

use crate::nats_support;

use journal::store::{Address, Store};
use nats_support::NatsServer;
use std::time::Duration;

/// The lines of `testdata/<dir>/simple-completed.json`: meta, assistant,
/// terminal.
fn lines(dir: &str) -> Vec<Vec<u8>> {
    let path = format!(
        "{}/../testdata/{dir}/simple-completed.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path)
        .unwrap()
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// Store the meta record, follow, append the rest a record at a time:
/// each comes back from `poll`, once, and the terminal ends the follow.
fn follows_what_the_writer_appends(store: &Store, dir: &str) {
    let lines = lines(dir);
    let run = "simple-completed";
    {
        let mut w: Box<dyn journal::store::Appender> = match store {
            Store::File(f) => {
                let first = [&lines[0][..], b"\n"].concat();
                std::fs::write(f.dir().join(format!("{run}.json")), first).unwrap();
                store.open_appender(run).unwrap()
            }
            Store::JetStream(j) => {
                let mut w = j.create(run).unwrap();
                assert!(journal::store::Appender::append_raw(&mut w, 1, &lines[0]).unwrap());
                Box::new(w)
            }
            _ => panic!("a backend this test does not know"),
        };
        let mut started = store.follow(run).unwrap();
        assert_eq!(started.run, run);
        assert_eq!(started.lines, [&lines[0][..], b"\n"].concat(), "{dir}");
        let follow = &mut started.follow;
        assert!(follow.poll(Duration::from_millis(300)).unwrap().is_empty());
        for (i, line) in lines.iter().enumerate().skip(1) {
            assert!(!follow.ended(), "{dir}");
            assert!(w.append_raw(i as u64 + 1, line).unwrap());
            let got = follow.poll(Duration::from_secs(10)).unwrap();
            assert_eq!(got.len(), 1, "{dir}: record {}", i + 1);
            assert_eq!(&got[0].line, line, "{dir}");
            assert_eq!(got[0].record.seq, i as u64 + 1, "{dir}");
        }
        assert!(follow.ended(), "{dir}");
        assert!(follow.poll(Duration::ZERO).unwrap().is_empty());
    }
    // A run that has ended: nothing to follow.
    let started = store.follow(run).unwrap();
    assert!(started.follow.ended(), "{dir}");
}

#[test]
fn a_file_store_run_is_followed_as_it_is_appended() {
    for dir in ["runs-v1", "runs"] {
        let d = tempfile::tempdir().unwrap();
        let store = Address::File {
            dir: d.path().to_path_buf(),
        }
        .open(&Default::default(), Duration::ZERO)
        .unwrap();
        follows_what_the_writer_appends(&store, dir);
    }
}

#[test]
fn a_jetstream_run_is_followed_as_it_is_appended() {
    for dir in ["runs-v1", "runs"] {
        let srv = NatsServer::start();
        srv.spec_stream("SESSIONS", "fisk.sessions.>");
        let store = Store::JetStream(Box::new(srv.store("SESSIONS")));
        follows_what_the_writer_appends(&store, dir);
    }
}
