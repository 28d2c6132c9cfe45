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
//! - `--as NEW_ID`: a new run, written whole (`Store::create_marked`);
//!   the source is only read.
//! - On JetStream either write is marked until it is whole
//!   (`store/jetstream/whole.rs`): killed half way, the same command
//!   again finishes it (in place, from the new records staged on the
//!   stream; `--as`, planning again with the mark's time, so its error
//!   results come out byte for byte the same).
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
    /// An earlier recover of this run was interrupted half way: this one
    /// finished it.
    pub resumed: bool,
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
    let mut intent = crate::store::Intent {
        command: match req.new_id {
            Some(new) => vec!["recover".into(), run.into(), "--as".into(), new.into()],
            None => vec!["recover".into(), run.into()],
        },
        at: crate::time::Time::now(),
    };
    // What the stream must allow, asked before anything (dry runs too):
    // in place the run is purged and written again, a new run is
    // unmarked once whole.
    match req.new_id {
        None => {
            if let Some(why) = store.purge_refusal("recover in place") {
                return Err(crate::Error::refused(run, why));
            }
        }
        Some(new) => store.check_whole_write(new)?,
    }
    // A write of the target this same command began and did not finish
    // (JetStream) is finished; another command's is refused.
    let pending = store.pending(target)?;
    if let Some(p) = &pending {
        if !p.is_of(&intent) {
            return Err(p.refusal(target));
        }
        intent.at = p.began().unwrap_or(intent.at);
        if req.new_id.is_none() {
            if let Some(done) = finish_in_place(store, req, p, intent.at)? {
                return Ok(done);
            }
            // The replacement had not touched the run: recover it afresh.
            intent.at = crate::time::Time::now();
        }
    }
    // What the run's state allows (a write this command began and did not
    // finish is finished above, whatever the run reads as). A new id only
    // reads the run: who holds it does not matter.
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
    let plan = crate::recover::plan(target, &bytes, intent.at)
        .map_err(|e| refuse(Op::Recover, run, Why::Unrecoverable { why: e.to_string() }))?;
    if let Some(new) = req.new_id {
        if pending.is_none() && store.exists(new)? {
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
        resumed: pending.is_some(),
    };
    if req.dry_run || !out.plan.changes() {
        return Ok(out);
    }
    let after = crate::audit::Digest::of_lines(out.plan.records.iter().map(Vec::as_slice), b"");
    let written = crate::audit::Seqs::range(1, after.records);
    match req.new_id {
        Some(new) => {
            let records = (1u64..).zip(out.plan.records.iter().cloned()).collect();
            let plan = crate::store::Plan {
                op: Op::Recover.word().to_owned(),
                run: new.to_owned(),
                before: None,
                after: Some(after),
                written,
                detail: Some(format!("recovered from run {run}")),
                ..Default::default()
            };
            store.audited(&plan, || store.create_marked(new, records, &intent))?;
        }
        None => {
            let before = crate::audit::Digest::of_lines(
                bytes.split(|c| *c == b'\n').filter(|l| !l.is_empty()),
                b"",
            );
            let plan = crate::store::Plan {
                op: Op::Recover.word().to_owned(),
                run: run.to_owned(),
                removed: crate::audit::Seqs::range(1, before.records),
                before: Some(before),
                after: Some(after),
                written,
                detail: Some("in place, the damaged journal kept as a backup".into()),
            };
            let (kept, unreadable) = store.audited(&plan, || {
                store.recover_in_place(
                    run,
                    &bytes,
                    &out.plan.records,
                    &out.plan.unreadable,
                    &intent,
                )
            })?;
            out.kept = Some(kept);
            out.unreadable = unreadable;
        }
    }
    out.written = true;
    Ok(out)
}

/// Finish the recover in place of `req.run` that `p` marks (JetStream:
/// interrupted half way, its new records staged on the stream): what was
/// done, or `None` when it had not touched the run (its stage not whole;
/// the mark is taken away and the run is as it was). The plan reported is
/// the one the interrupted recover made, when its copy of the damaged run
/// is on this machine (planned again with its time: the same records),
/// else that of the recovered run.
fn finish_in_place(
    store: &Store,
    req: &Request,
    p: &crate::store::jetstream::Pending,
    at: crate::time::Time,
) -> Result<Option<Recovered>> {
    let run = req.run;
    if req.dry_run {
        return Err(crate::Error::refused_until(
            run,
            format!(
                "{}: a dry run does not finish it, the recover itself does",
                p.describe(run)
            ),
            crate::Remedy::Recover,
        ));
    }
    let Some(records) = store.finish_replace(run, p)? else {
        return Ok(None);
    };
    let written = crate::lines::join(&records);
    let kept = p.mark.kept.as_ref().map(PathBuf::from);
    let original = kept
        .as_ref()
        .and_then(|k| std::fs::read(k).ok())
        .and_then(|b| crate::recover::plan(run, &b, at).ok())
        .filter(|plan| plan.records == records);
    let plan = match original {
        Some(plan) => plan,
        None => crate::recover::plan(run, &written, at)
            .map_err(|e| refuse(Op::Recover, run, Why::Unrecoverable { why: e.to_string() }))?,
    };
    Ok(Some(Recovered {
        run: run.to_owned(),
        from: run.to_owned(),
        plan,
        written: true,
        kept,
        unreadable: None,
        resumed: true,
    }))
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
        assert!(e.refusal().is_some_and(|r| r.state().is_some()), "{e}");
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
            matches!(&e, crate::Error::Refused(r) if matches!(r.why, Why::Unrecoverable { .. })),
            "{e:?}"
        );
        assert_eq!(std::fs::read(dir.path().join("r.json")).unwrap(), bad);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
