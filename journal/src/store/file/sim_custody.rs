//! The crash sweep of a logged write (issue 38): an append announced in
//! the audit log (intent), made, then closed (outcome), crashed at every
//! fsync with every image a crash can leave. Write-ahead holds in each: a
//! record the journal keeps was announced durably first; an intent left
//! without its outcome is settled from the journal to exactly what the
//! journal holds; an outcome is never there for a record that is not.

use super::append::open_media;
use super::audit::log_lines;
use super::sim::{lines_of, path, read_back, store, sweep, Image};
use super::testing::{raw, rec};
use crate::audit::LOG_FILE;
use crate::audit::{settle, Digest, Entry, Kind, Settled};
use crate::store::Appender;
use std::sync::Arc;

fn entry(kind: Kind) -> impl FnMut(u64, Option<String>) -> Vec<u8> {
    move |n, prev| {
        let (one, two) = (raw(1).1, raw(2).1);
        Entry {
            n,
            prev,
            kind,
            write: "w".into(),
            run: Some("r".into()),
            before: Some(Digest::of_lines([one.as_slice()], b"")),
            after: Some(Digest::of_lines([one.as_slice(), two.as_slice()], b"")),
            ..Entry::default()
        }
        .encode()
    }
}

#[test]
fn a_logged_append_crashed_at_any_fsync_leaves_an_intent_for_every_record_kept() {
    let (count, checked) = sweep(
        |sim| sim.put("r.json", &lines_of(&[1])),
        |sim| {
            let st = store();
            if st.audit_append_in(sim, &mut entry(Kind::Intent)).is_err() {
                return false;
            }
            let p = path("r.json");
            let Ok((media, scan)) = open_media(Arc::new(sim.clone()), "r", &p) else {
                return false;
            };
            let mut a = super::FileAppender::with_media("r", &p, Box::new(media), scan, false);
            if a.append(&rec(2)).is_err() {
                return false;
            }
            st.audit_append_in(sim, &mut entry(Kind::Outcome)).is_ok()
        },
        |image: &Image, done| {
            let (seqs, _) = read_back(&image["r.json"]);
            let log = image.get(LOG_FILE).cloned().unwrap_or_default();
            let entries: Vec<Entry> = log_lines(&log)
                .into_iter()
                .map(|(_, l)| Entry::decode(l).unwrap())
                .collect();
            let intent = entries.iter().find(|e| e.kind == Kind::Intent);
            let outcome = entries.iter().any(|e| e.kind == Kind::Outcome);
            let kept = seqs == [1, 2];
            assert!(kept || seqs == [1], "{seqs:?}");
            // Write-ahead: a kept record was announced.
            assert!(!kept || intent.is_some(), "record 2 kept with no intent");
            // An outcome only for a record kept.
            assert!(!outcome || kept);
            assert!(!done || (kept && outcome));
            if let (Some(i), false) = (intent, outcome) {
                let records: Vec<Vec<u8>> = seqs.iter().map(|s| raw(*s).1).collect();
                let want = match kept {
                    true => Settled::Done { grew: 0 },
                    false => Settled::NotDone { grew: 0 },
                };
                assert_eq!(settle(i, Some(&records)), want);
            }
        },
    );
    // Intent (file, directory), record, outcome.
    assert_eq!(count, 4);
    assert!(checked > 10, "{checked}");
}
