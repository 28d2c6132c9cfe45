//! A stream that denies purges (`deny_purge`, issue 36.3): `rm` and
//! `recover` used to fence the run, then fail to purge it, leaving it
//! ending in a fence no writer can append after. Now what the stream
//! allows is asked once, before any run is touched (dry runs too);
//! `stream check` says what the setting costs; a run such a fence was
//! already left on is named by `verify` and `repair` takes the fence
//! away. Each test starts its own nats-server; the streams are created
//! with async-nats, as an operator would.

use crate::nats_support::NatsServer;
use crate::support::*;
use std::path::Path;

const RUN: &str = "g-multi-iteration";

/// A SPEC 8 stream `name` on `prefix.>` that denies purges (and deletes,
/// with `deny_delete`), holding g-multi-iteration with seq 5 garbage
/// (what `recover` is for) as `RUN`, and whole as `whole`.
fn denying(srv: &NatsServer, name: &str, prefix: &str, deny_delete: bool) {
    let mut config = journal::store::jetstream::spec_config(name, &format!("{prefix}.>"));
    config.deny_purge = true;
    config.deny_delete = deny_delete;
    srv.raw_stream(config);
    let text = std::fs::read(testdata("agent-journals/v1/g-multi-iteration.json")).unwrap();
    let lines: Vec<Vec<u8>> = text
        .split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let prefix = prefix.to_owned();
    srv.with_js(async move |js| {
        for (run, garbage) in [(RUN, true), ("whole", false)] {
            for (seq, body) in (1u64..).zip(&lines) {
                let mut body = body.clone();
                if run == "whole" && seq == 1 {
                    body = String::from_utf8(body)
                        .unwrap()
                        .replace(&format!("\"run_id\":\"{RUN}\""), "\"run_id\":\"whole\"")
                        .into_bytes();
                }
                if garbage && seq == 5 {
                    body = b"\x00\x00 garbage".to_vec();
                }
                let subject = journal::store::jetstream::subject(&prefix, run, seq);
                js.publish(subject, body.into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        }
    });
}

fn js(srv: &NatsServer, home: &Path, stream: &str, args: &[&str]) -> Run {
    let store = format!("jetstream:{stream}");
    let mut all = vec!["--server", srv.url.as_str(), "--store", store.as_str()];
    all.extend_from_slice(args);
    fisk_in(home, &all, None)
}

/// The messages of the stream, as (subject, body), in stream order.
fn messages(srv: &NatsServer, stream: &str) -> Vec<(String, Vec<u8>)> {
    let stream = stream.to_owned();
    srv.with_js(async move |js| {
        let s = js.get_stream(&stream).await.unwrap();
        let last = s.get_info().await.unwrap().state.last_sequence;
        let mut out = Vec::new();
        for seq in 1..=last {
            if let Ok(m) = s.get_raw_message(seq).await {
                // The audit log (issue 38) is no run's.
                if !m.subject.contains("._audit.") {
                    out.push((m.subject.to_string(), m.payload.to_vec()));
                }
            }
        }
        out
    })
}

#[test]
fn rm_and_recover_are_refused_before_they_touch_a_run_and_stream_check_says_why() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    denying(&srv, "KEEP", "keep", false);
    let before = messages(&srv, "KEEP");
    let refusals = [
        vec!["rm", RUN, "--yes"],
        vec!["rm", RUN, "--dry-run"],
        vec!["rm", "--status", "completed", "--yes", "--force"],
        vec!["recover", RUN, "--yes", "--force"],
        vec!["recover", RUN, "--dry-run"],
    ];
    for args in &refusals {
        let r = js(&srv, home.path(), "KEEP", args);
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("denies purges (deny_purge"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(
            messages(&srv, "KEEP"),
            before,
            "{args:?} touched the stream"
        );
    }
    // Copying off is a read; deleting the sources is refused first.
    let dest = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(dest.path()));
    let moved = fisk_in(
        home.path(),
        &[
            "--server",
            &srv.url,
            "migrate",
            "--from",
            "jetstream:KEEP",
            "--to",
            &to,
            "--all",
            "--delete-source",
        ],
        None,
    );
    assert_eq!(moved.code, 1, "{}", moved.stderr);
    assert!(moved.stderr.contains("deny_purge"), "{}", moved.stderr);
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
    assert_eq!(messages(&srv, "KEEP"), before);
    // What only adds is done: a fork, and a recover into a new run (their
    // mark is deleted as a message), neither leaving a mark behind.
    let f = js(
        &srv,
        home.path(),
        "KEEP",
        &["fork", "whole", "--at-seq", "9", "--as", "f"],
    );
    assert_eq!(f.code, 0, "{}", f.stderr);
    let r = js(
        &srv,
        home.path(),
        "KEEP",
        &["recover", RUN, "--as", "fixed"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = js(
        &srv,
        home.path(),
        "KEEP",
        &["verify", "f", "fixed", "-o", "json"],
    );
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert!(messages(&srv, "KEEP")
        .iter()
        .all(|(subject, _)| !subject.contains("_writing")));
    // stream check says what the setting costs.
    let c = js(&srv, home.path(), "KEEP", &["stream", "check", "KEEP"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    for says in [
        "rm cannot delete a run",
        "recover cannot rewrite one in place",
    ] {
        assert!(c.stdout.contains(says), "{says}: {}", c.stdout);
    }
}

/// What b926494's `rm` left on such a stream: the run whole, then its
/// fence (the purge was refused). `verify` names it and says `repair`,
/// which takes the fence away; the run is then as it was.
#[test]
fn a_run_left_ending_in_a_fence_is_named_and_repair_takes_the_fence_away() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    denying(&srv, "OLD", "old", false);
    let before = messages(&srv, "OLD");
    let fence = "fisk-admin tombstone: run whole is being deleted by fisk-admin (host-1, 2026-12-01T00:00:00Z); if this is its last message, that delete was interrupted: delete the run again (fisk-admin rm whole) to finish";
    srv.with_js(async move |js| {
        js.publish("old.whole.28", fence.into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    let v = js(&srv, home.path(), "OLD", &["verify", "whole", "-o", "json"]);
    let found = v
        .json_lines()
        .into_iter()
        .find(|f| f["code"] == "garbage-final-line")
        .unwrap_or_else(|| panic!("{}", v.stdout));
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains("denies purges") && message.contains("`repair`"),
        "{message}"
    );
    let text = js(&srv, home.path(), "OLD", &["verify", "whole"]);
    assert!(text.stdout.contains("repair whole"), "{}", text.stdout);
    let dry = js(
        &srv,
        home.path(),
        "OLD",
        &["repair", "whole", "--dry-run", "-o", "json"],
    );
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert_eq!(dry.json()["action"], "remove-fence", "{}", dry.stdout);
    let r = js(&srv, home.path(), "OLD", &["repair", "whole", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = r.json();
    assert_eq!(doc["action"], "remove-fence", "{doc:#}");
    assert_eq!(doc["subject"], "old.whole.28");
    assert_eq!(doc["records"], 27);
    assert_eq!(messages(&srv, "OLD"), before);
    let v = js(&srv, home.path(), "OLD", &["verify", "whole", "-o", "json"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
}

/// A stream that denies purges and deletes: nothing that writes a whole
/// run can take its mark away, so it is refused before anything is
/// written (dry runs too); a fence there cannot be taken away either,
/// and `repair` says how to move the run off instead.
#[test]
fn a_stream_that_denies_purges_and_deletes_refuses_whole_writes_first() {
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    denying(&srv, "SEALED2", "s2", true);
    let before = messages(&srv, "SEALED2");
    for args in [
        vec!["fork", "whole", "--at-seq", "3", "--as", "f"],
        vec!["fork", "whole", "--at-seq", "3", "--as", "f", "--dry-run"],
        vec!["recover", RUN, "--as", "fixed"],
    ] {
        let r = js(&srv, home.path(), "SEALED2", &args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("deny_delete"), "{args:?}: {}", r.stderr);
        assert_eq!(messages(&srv, "SEALED2"), before, "{args:?}");
    }
    srv.with_js(async move |js| {
        js.publish("s2.whole.28", "fisk-admin tombstone: run whole".into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    let r = js(&srv, home.path(), "SEALED2", &["repair", "whole"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("migrate --from jetstream:SEALED2"),
        "{}",
        r.stderr
    );
}
