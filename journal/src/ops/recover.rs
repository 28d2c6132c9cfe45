//! `recover` (SPEC 6.1, "Recovering"): a journal with interior damage
//! made again into a run the agent accepts, from every intact record.
//! The plan is [`crate::recover`] (pure); this is the operation around
//! it: what may be recovered, and where the result goes.
//!
//! - In place (the default): refused while a writer holds the run (the
//!   file lock; JetStream: SPEC 8's hold); the damaged original is kept
//!   as a backup and the bytes that could not be read beside it, both
//!   listed by `backups` (kind `recover`); the new journal is written
//!   whole, as `upgrade` writes one (crash-safe: `store::file::recover`).
//! - `--as NEW_ID`: a new run, written whole (`Store::create_whole`);
//!   the source is only read.
//! - A dry run plans and writes nothing.
//!
//! A journal the agent reads whole (the reader's rule drops a torn tail,
//! and the fold takes the rest) is refused unless forced: recover would
//! rebuild a run the agent goes on with as it is, and can change what a
//! resume does; `repair` is what a damaged tail needs (the run model's
//! table, [`crate::state`]). A journal with nothing to recover is left as
//! it is. One whose meta record is lost is refused: nothing can stand in
//! for the run's identity, fingerprint and prompt.

use super::{refuse, Op, Why};
use crate::recover::Plan;
use crate::store::Store;
use crate::Result;
use std::path::PathBuf;

/// What to recover.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The damaged run's id.
    pub run: &'a str,
    /// Write the recovered run under this id, leaving the original as it
    /// is; `None`: in place.
    pub new_id: Option<&'a str>,
    /// Plan and write nothing (every check made).
    pub dry_run: bool,
    /// Recover a journal the agent reads whole all the same (and, on
    /// JetStream, one within the hold: the store is opened without it).
    pub force: bool,
}

/// What a recovery did (or, on a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The run recovered into (the run itself, or the new id).
    pub run: String,
    /// The damaged run.
    pub from: String,
    /// What was found, kept, written and lost.
    pub plan: Plan,
    /// The new journal was written (false on a dry run, and when there was
    /// nothing to recover).
    pub written: bool,
    /// Where the damaged original is kept (in place only).
    pub kept: Option<PathBuf>,
    /// Where the bytes that could not be read are kept (in place, file
    /// store, when there were any; on JetStream they are in `kept`).
    pub unreadable: Option<PathBuf>,
}

/// Plan the recovery of `req.run`, then (unless a dry run, or there is
/// nothing to recover) write it.
pub fn recover(store: &Store, req: &Request) -> Result<Recovered> {
    let run = req.run;
    crate::id::check(run)?;
    let target = req.new_id.unwrap_or(run);
    if let Some(new) = req.new_id {
        crate::id::check(new)?;
    }
    // A new id only reads the run: who holds it does not matter.
    let state = store.state_read(run, req.new_id.is_none())?;
    crate::state::permit(
        Op::Recover,
        run,
        &state,
        crate::state::Ask {
            named: true,
            force: req.force,
        },
    )?;
    let bytes = store.raw(run)?;
    let plan = crate::recover::plan(target, &bytes, crate::time::Time::now())
        .map_err(|e| refuse(Op::Recover, run, Why::Unrecoverable { why: e.to_string() }))?;
    if let Some(new) = req.new_id {
        if store.exists(new)? {
            return Err(crate::Error::Exists {
                run: new.to_owned(),
                at: store.place(),
            });
        }
    }
    let mut out = Recovered {
        run: target.to_owned(),
        from: run.to_owned(),
        plan,
        written: false,
        kept: None,
        unreadable: None,
    };
    if req.dry_run || !out.plan.changes() {
        return Ok(out);
    }
    match req.new_id {
        Some(new) => {
            let records = (1u64..).zip(out.plan.records.iter().cloned()).collect();
            let (_, done) = store.create_whole(new, records);
            done?;
        }
        None => {
            let (kept, unreadable) = store.recover_in_place(run, &bytes, &out.plan)?;
            out.kept = Some(kept);
            out.unreadable = unreadable;
        }
    }
    out.written = true;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::backups::{self, Kind};

    const MULTI: &[u8] =
        include_bytes!("../../../testdata/agent-journals/v1/g-multi-iteration.json");

    /// g-multi-iteration with its line 5 (the result for tu_01) garbage.
    fn damaged() -> Vec<u8> {
        let mut lines: Vec<&[u8]> = MULTI.split(|c| *c == b'\n').collect();
        lines[4] = b"\x00\x00 garbage";
        lines.join(&b'\n')
    }

    /// A store holding `bytes` as run `r` (the ops tests' store).
    fn store_with(bytes: &[u8]) -> (tempfile::TempDir, Store) {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let (dir, store, _) = crate::ops::tests::store_with("r", &text);
        (dir, store)
    }

    fn req(new_id: Option<&str>, dry_run: bool) -> Request<'_> {
        Request {
            run: "r",
            new_id,
            dry_run,
            force: false,
        }
    }

    #[test]
    fn in_place_keeps_the_original_and_the_unreadable_bytes_as_backups() {
        let bad = damaged();
        let (dir, store) = store_with(&bad);
        let dry = recover(&store, &req(None, true)).unwrap();
        assert!(!dry.written);
        assert_eq!(std::fs::read(dir.path().join("r.json")).unwrap(), bad);
        assert!(backups::list(&store).unwrap().is_empty());

        let done = recover(&store, &req(None, false)).unwrap();
        assert!(done.written);
        assert_eq!(std::fs::read(done.kept.unwrap()).unwrap(), bad);
        assert_eq!(
            std::fs::read(done.unreadable.unwrap()).unwrap(),
            b"\x00\x00 garbage\n"
        );
        let listed = backups::list(&store).unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed
            .iter()
            .all(|b| b.kind == Kind::Recover && b.run == "r"));
        assert!(backups::restore(&store, &listed[0].id).is_err());
        let st = crate::fold(store.read("r").unwrap().records()).unwrap();
        assert_eq!(st.last_seq, 27);
        // Whole now: the agent reads it, so recover refuses; forced, it
        // finds nothing more to recover.
        let e = recover(&store, &req(None, false)).unwrap_err();
        assert!(matches!(e, crate::Error::State(_)), "{e}");
        let forced = Request {
            force: true,
            ..req(None, false)
        };
        let again = recover(&store, &forced).unwrap();
        assert!(!again.written && !again.plan.changes());
    }

    #[test]
    fn as_a_new_id_leaves_the_original_untouched() {
        let bad = damaged();
        let (dir, store) = store_with(&bad);
        let done = recover(&store, &req(Some("r2"), false)).unwrap();
        assert!(done.written && done.kept.is_none());
        assert_eq!(std::fs::read(dir.path().join("r.json")).unwrap(), bad);
        let st = crate::fold(store.read("r2").unwrap().records()).unwrap();
        assert_eq!(st.run_id, "r2");
        assert!(matches!(
            recover(&store, &req(Some("r2"), false)),
            Err(crate::Error::Exists { .. })
        ));
    }

    #[test]
    fn a_lost_meta_record_is_refused_and_nothing_written() {
        let mut bad = b"garbage\n".to_vec();
        bad.extend_from_slice(&MULTI[MULTI.iter().position(|c| *c == b'\n').unwrap() + 1..]);
        let (dir, store) = store_with(&bad);
        let e = recover(&store, &req(None, false)).unwrap_err();
        assert!(
            matches!(&e, crate::Error::Op(r) if matches!(r.why, Why::Unrecoverable { .. })),
            "{e:?}"
        );
        assert_eq!(std::fs::read(dir.path().join("r.json")).unwrap(), bad);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
