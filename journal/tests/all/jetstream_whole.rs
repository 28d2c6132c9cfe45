//! The crash sweep on JetStream (issue 36.1): every writer that creates or
//! rewrites a whole run (`fork`, `recover --as`, `recover` in place) is
//! cut at every request that changes the stream, once with that request
//! never reaching the server and once with it stored and its answer lost
//! (the store's crash seam, `JetStreamStore::cut_at`: every later request
//! fails as a dead process makes none). After each cut the stream must
//! hold the old state, the new one, or a run marked as half written that
//! `verify` names and readers refuse, never a shorter run taken for a
//! whole one and never no run; the same command again must finish it.
//! Each test starts its own nats-server, and each cut point gets a stream
//! of its own.

use crate::nats_support;

use journal::ops::{backups, fork, recover};
use journal::store::jetstream::JetStreamStore;
use journal::store::Store;
use journal::verify::{Code, Severity};
use nats_support::NatsServer;
use std::time::Duration;

const MULTI: &[u8] = include_bytes!("../../../testdata/agent-journals/v1/g-multi-iteration.json");

/// g-multi-iteration (27 records) with its line 5 (the result for tu_01)
/// garbage: what `recover` has to put right.
fn damaged() -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = MULTI
        .split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    lines[4] = b"\x00\x00 garbage".to_vec();
    lines
}

fn whole() -> Vec<Vec<u8>> {
    MULTI
        .split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// A stream of its own for one cut point (`W<n>`, subjects `w<n>.>`),
/// holding `run` as these bodies on its record subjects.
fn stream_with(srv: &NatsServer, n: usize, run: &str, bodies: &[Vec<u8>]) -> JetStreamStore {
    let (name, prefix) = (format!("W{n}"), format!("w{n}"));
    srv.spec_stream(&name, &format!("{prefix}.>"));
    let subjects: Vec<String> = (1..=bodies.len() as u64)
        .map(|s| journal::store::jetstream::subject(&prefix, run, s))
        .collect();
    let bodies = bodies.to_vec();
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

fn store_of(js: &JetStreamStore) -> Store {
    Store::JetStream(Box::new(js.clone()))
}

/// A fresh connection to the same stream, no cut armed.
fn fresh(srv: &NatsServer, js: &JetStreamStore) -> Store {
    Store::JetStream(Box::new(srv.store(js.name()).with_hold(Duration::ZERO)))
}

/// The run's error findings.
fn errors(store: &Store, run: &str) -> Vec<(Code, String)> {
    store
        .verify(&[run.to_owned()], None)
        .unwrap()
        .reports
        .into_iter()
        .flat_map(|r| r.findings)
        .filter(|f| f.run == run && f.severity == Severity::Error)
        .map(|f| (f.code, f.message))
        .collect()
}

fn bodies(store: &Store, run: &str) -> Vec<Vec<u8>> {
    store
        .read(run)
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.raw)
        .collect()
}

/// What a cut left of run `run`, which a writer was making or replacing:
/// marked (verify names it, readers refuse it), or absent (`may_be_absent`:
/// a new run not begun), or a whole run with no error whose records are
/// one of `states`. Returns which: `"marked"`, `"absent"` or the index of
/// the state.
fn left(store: &Store, run: &str, may_be_absent: bool, states: &[Vec<Vec<u8>>]) -> String {
    if let Some(p) = store.pending(run).unwrap() {
        let found = errors(store, run);
        assert!(
            found.iter().any(|(c, m)| *c == Code::WriteInterrupted
                && m.contains(&p.command())
                && m.contains("the same command again finishes it")),
            "{run}: marked, but verify says {found:?}"
        );
        let e = store.read(run).unwrap_err();
        assert!(e.to_string().contains("half written"), "{run}: {e}");
        return "marked".into();
    }
    if !store.exists(run).unwrap() {
        assert!(may_be_absent, "{run}: the run is gone");
        return "absent".into();
    }
    // Whole: one of the states, byte for byte (the old one may end on
    // recover's fence, which readers drop as a final body that is no
    // record).
    let have = store.read_prefix(run).unwrap().0;
    let have: Vec<Vec<u8>> = have.entries.into_iter().map(|e| e.raw).collect();
    let i = states.iter().position(|s| {
        s.len() == have.len()
            && s.iter()
                .zip(&have)
                .all(|(a, b)| a == b || is_made(a) && is_made(b))
    });
    match i {
        Some(i) => i.to_string(),
        None => panic!(
            "{run}: not marked, and {} records that are neither state",
            have.len()
        ),
    }
}

/// An error result fisk-admin wrote (its `time` is when it was planned).
fn is_made(body: &[u8]) -> bool {
    String::from_utf8_lossy(body).contains("lost to corruption")
}

/// Run `write` once to count its steps, then once per step and landing,
/// each on a stream of its own made by `setup`: `check` judges what the
/// cut left, then `write` again (no cut) must finish, and `done` judges
/// the end. Returns the steps swept.
fn sweep(
    srv: &NatsServer,
    name: &str,
    setup: &dyn Fn(usize) -> JetStreamStore,
    write: &dyn Fn(&Store) -> journal::Result<()>,
    check: &dyn Fn(&Store) -> String,
    done: &dyn Fn(&Store),
) -> u64 {
    let js = setup(0);
    js.cut_at(0, false);
    write(&store_of(&js)).unwrap();
    let steps = js.cut_steps();
    done(&fresh(srv, &js));
    assert!(steps >= 3, "{name}: {steps} steps");
    let mut seen = std::collections::BTreeMap::new();
    let mut n = 1;
    for at in 1..=steps {
        for lands in [false, true] {
            let js = setup(n);
            n += 1;
            js.cut_at(at, lands);
            let cut = write(&store_of(&js));
            // Only the very last step, landed, may leave nothing to do.
            if at < steps || !lands {
                assert!(
                    cut.is_err(),
                    "{name}: cut at step {at} ({lands}) went through"
                );
            }
            let store = fresh(srv, &js);
            let state = check(&store);
            *seen.entry(state.clone()).or_insert(0) += 1;
            match write(&store) {
                Ok(()) => {}
                // Cut once it was done: a new run exists, which a new
                // one is refused.
                Err(journal::Error::Exists { .. }) if state.parse::<usize>().is_ok() => {}
                // Cut once it was done in place: the run is whole, which
                // the run model lets recover take only when forced.
                Err(e) if state == "0" && e.refusal().is_some_and(|r| r.state().is_some()) => {}
                Err(e) => {
                    panic!("{name}: cut at step {at} (landed {lands}) left {state}; again: {e}")
                }
            }
            done(&store);
        }
    }
    eprintln!("{name}: {steps} steps swept twice each; states after a cut: {seen:?}");
    steps
}

fn xdg() {
    // recover in place keeps the damaged run under the XDG state home.
    nats_support::state_home();
}

#[test]
fn a_fork_killed_at_any_step_leaves_nothing_or_a_marked_run_and_again_finishes_it() {
    let srv = NatsServer::start();
    let src = whole();
    let at = 12u64;
    let want: Vec<Vec<u8>> = {
        let mut w: Vec<Vec<u8>> = src[..at as usize].to_vec();
        w[0] = String::from_utf8(w[0].clone())
            .unwrap()
            .replace("\"run_id\":\"g-multi-iteration\"", "\"run_id\":\"copy\"")
            .into_bytes();
        w
    };
    let req = fork::Request {
        run: "src",
        at_seq: at,
        new_id: "copy",
        dry_run: false,
    };
    let steps = sweep(
        &srv,
        "fork",
        &|n| stream_with(&srv, n, "src", &src),
        &|s| fork::fork(s, &req).map(|_| ()),
        &|s| left(s, "copy", true, std::slice::from_ref(&want)),
        &|s| {
            assert_eq!(bodies(s, "copy"), want);
            assert!(s.pending("copy").unwrap().is_none());
            assert_eq!(errors(s, "copy"), []);
            assert_eq!(bodies(s, "src"), src);
        },
    );
    // The mark, the records, the mark taken away.
    assert_eq!(steps, at + 2);
}

#[test]
fn a_recover_as_killed_at_any_step_leaves_nothing_or_a_marked_run_and_again_finishes_it() {
    let srv = NatsServer::start();
    let bad = damaged();
    let req = recover::Request {
        run: "bad",
        new_id: Some("good"),
        dry_run: false,
        force: false,
    };
    let want = recovered();
    let steps = sweep(
        &srv,
        "recover --as",
        &|n| stream_with(&srv, n, "bad", &bad),
        &|s| recover::recover(s, &req).map(|_| ()),
        &|s| left(s, "good", true, &[renamed(&want, "good")]),
        &|s| {
            assert_eq!(left(s, "good", false, &[renamed(&want, "good")]), "0");
            assert_eq!(errors(s, "good"), []);
            // The source is only read.
            assert_eq!(raw_bodies(s, "bad"), bad);
        },
    );
    assert_eq!(steps, want.len() as u64 + 2);
}

#[test]
fn a_recover_in_place_killed_at_any_step_keeps_the_run_and_again_finishes_it() {
    xdg();
    let srv = NatsServer::start();
    let bad = renamed(&damaged(), "bad");
    let req = recover::Request {
        run: "bad",
        new_id: None,
        dry_run: false,
        force: false,
    };
    let want = renamed(&recovered(), "bad");
    let steps = sweep(
        &srv,
        "recover in place",
        &|n| stream_with(&srv, n, "bad", &bad),
        &|s| recover::recover(s, &req).map(|_| ()),
        &|s| {
            // Never gone: the damaged run (its readable prefix), the
            // recovered one, or marked.
            let state = match s.pending("bad").unwrap() {
                Some(_) => left(s, "bad", false, &[]),
                None if raw_bodies(s, "bad") == bad => "old".into(),
                None => left(s, "bad", false, std::slice::from_ref(&want)),
            };
            assert!(s.exists("bad").unwrap(), "the run is gone");
            state
        },
        &|s| {
            assert_eq!(left(s, "bad", false, std::slice::from_ref(&want)), "0");
            assert_eq!(errors(s, "bad"), []);
            // Whole now: the agent reads it, so recover refuses (the run
            // model); forced, it finds nothing to do.
            let refused = recover::recover(s, &req).unwrap_err();
            assert!(
                refused.refusal().is_some_and(|r| r.state().is_some()),
                "{refused:?}"
            );
            let forced = recover::Request { force: true, ..req };
            let again = recover::recover(s, &forced).unwrap();
            assert!(!again.written && !again.plan.changes());
        },
    );
    // The fence, the mark, the stage, the purge, the records, the mark
    // and stage taken away.
    assert_eq!(steps, 2 * want.len() as u64 + 4);
}

/// The run's records as stored, every one (a damaged one too), without
/// a delete's or recover's fence.
fn raw_bodies(store: &Store, run: &str) -> Vec<Vec<u8>> {
    let Store::JetStream(j) = store else {
        unreachable!()
    };
    let mut m = j.read_all_messages(run).unwrap();
    m.retain(|m| m.subject_seq.is_some() && !journal::store::jetstream::is_tombstone(&m.body));
    journal::store::jetstream::sort_by_seq(&mut m);
    m.into_iter().map(|m| m.body).collect()
}

/// The recovered run: the original, but the lost result one fisk-admin
/// wrote (compared by [`is_made`]).
fn recovered() -> Vec<Vec<u8>> {
    let mut w = whole();
    w[4] = b"lost to corruption".to_vec();
    w
}

/// `records` with the meta record's run id changed to `id`.
fn renamed(records: &[Vec<u8>], id: &str) -> Vec<Vec<u8>> {
    let mut r = records.to_vec();
    r[0] = String::from_utf8(r[0].clone())
        .unwrap()
        .replace(
            "\"run_id\":\"g-multi-iteration\"",
            &format!("\"run_id\":\"{id}\""),
        )
        .into_bytes();
    r
}

/// Issue 36.5: an `rm` killed at any step, run again, deletes the run and
/// keeps one backup of it, not two (a kill between keeping it and purging
/// it used to leave a second copy behind the same rm again).
#[test]
fn an_rm_killed_at_any_step_and_run_again_keeps_one_backup() {
    xdg();
    let srv = NatsServer::start();
    let run = whole();
    let steps = {
        let js = stream_with(&srv, 1000, "r", &run);
        js.cut_at(0, false);
        store_of(&js).delete("r").unwrap();
        js.cut_steps()
    };
    // The fence, the purge.
    assert_eq!(steps, 2);
    for at in 1..=steps {
        for lands in [false, true] {
            let n = 1001 + 2 * at as usize + usize::from(lands);
            let js = stream_with(&srv, n, "r", &run);
            js.cut_at(at, lands);
            let first = store_of(&js).delete("r");
            assert!(first.is_err(), "cut at {at} ({lands}) went through");
            let store = fresh(&srv, &js);
            // Cut once the purge landed, the run is gone: nothing to do.
            if store.exists("r").unwrap() {
                store.delete("r").unwrap();
            }
            assert!(!store.exists("r").unwrap());
            let kept = nats_support::state_home()
                .join("fisk-admin/removed")
                .join(js.name());
            let copies: Vec<_> = std::fs::read_dir(&kept).unwrap().collect();
            assert_eq!(copies.len(), 1, "cut at {at} ({lands}): {copies:?}");
        }
    }
}

/// Issue 36 (a doubt decided): a JetStream `backups restore` killed at any
/// step leaves no run, or a marked one that readers refuse and `verify`
/// names, or the whole run; the same restore again finishes it and takes
/// the backup away. Never a shorter run that reads as whole.
#[test]
fn a_restore_killed_at_any_step_leaves_nothing_or_a_marked_run_and_again_finishes_it() {
    xdg();
    let srv = NatsServer::start();
    let want = renamed(&whole(), "r");
    // A stream of its own per cut, the run deleted by rm into its backup.
    let setup = |n: usize| {
        let js = stream_with(&srv, 3000 + n, "r", &want);
        store_of(&js).delete("r").unwrap();
        assert!(!store_of(&js).exists("r").unwrap());
        js
    };
    let id = |s: &Store| {
        let kept = s.backups().unwrap();
        assert!(kept.len() <= 1, "{kept:?}");
        kept.first().map(|b| b.id.clone())
    };
    let steps = sweep(
        &srv,
        "backups restore",
        &setup,
        &|s| match id(s) {
            Some(id) => backups::restore(s, &id).map(|_| ()),
            // Restored once already: the backup is gone.
            None => Err(journal::Error::Usage("no backup left".into())),
        },
        &|s| left(s, "r", true, std::slice::from_ref(&want)),
        &|s| {
            assert_eq!(left(s, "r", false, std::slice::from_ref(&want)), "0");
            assert_eq!(errors(s, "r"), []);
            assert_eq!(id(s), None, "the backup is taken away once restored");
        },
    );
    // The mark, the records, the mark taken away.
    assert_eq!(steps, want.len() as u64 + 2);
}
