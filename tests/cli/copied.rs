//! A run just copied to JetStream is held by SPEC 8's hold, which counts
//! from the store's time as the agent's does; the refusal says it was
//! copied, not written, and what to do (issue 39, d-6: at b926494 it said
//! "a turn is in flight", beside an UPDATED days old).

use crate::nats_support::NatsServer;
use crate::support::*;

#[test]
fn a_run_just_migrated_is_refused_as_a_copy_not_a_turn_in_flight() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    for (dir, stream, subject) in [
        ("runs-v1", "NIGHT", "night.>"),
        ("runs", "NIGHT3", "night3.>"),
    ] {
        srv.spec_stream(stream, subject);
        let to = format!("jetstream:{stream}");
        let src = store_copy(dir);
        migrate_via(
            home.path(),
            &srv.url,
            &format!("file:{}", s(src.path())),
            &to,
            &["pending-batch"],
        );
        let js = |args: &[&str]| {
            let mut all = vec!["--server", srv.url.as_str(), "--store", to.as_str()];
            all.extend_from_slice(args);
            fisk_in(home.path(), &all, None)
        };
        let r = js(&["end", "pending-batch", "--yes"]);
        assert_eq!(r.code, 1, "{dir}: {}{}", r.stdout, r.stderr);
        let said = r.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        match dir {
            // Version 1: the record's own time is days old: a copy.
            "runs-v1" => {
                assert!(
                    said.contains("is live by the hold")
                        && said.contains("but written ")
                        && said.contains("it was copied here")
                        && said.contains("not written by an agent")
                        && !said.contains("a turn is in flight"),
                    "{dir}: {said}"
                );
            }
            // Version 3 records carry no time: it says it cannot tell.
            _ => assert!(
                said.contains("carries no time of its own to tell a turn in flight from a copy"),
                "{dir}: {said}"
            ),
        }
        // What to do: the same command with --force.
        assert!(
            said.contains("run the same command with --force"),
            "{dir}: {said}"
        );
        let r = js(&["end", "pending-batch", "--yes", "--force"]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
    }
}
