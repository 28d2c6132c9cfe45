//! Copying a run whose messages have no meta record (`orphan-messages`,
//! JetStream) with `--include-corrupt`: its records exactly as stored, at
//! their own seqs, so what a split left on a stream can be taken off it
//! and looked at. The copy has no meta record either (no agent reads it);
//! it is what there is.
//!
//! The rules: the records from the lowest seq up to the first gap are
//! copied (a gap cannot be appended; the notes say what was left); the
//! destination must not hold the run, or hold exactly these records (then
//! the copy is complete); the copy is read back and compared byte for
//! byte; the source is never deleted (`rm` deletes it, keeping a backup,
//! once the copy has been looked at). Messages on no record subject are
//! not records and are not copied (`rm`'s backup keeps them).

use super::report::{append_failed, failed, Outcome, RunReport};
use super::{Options, Progress};
use crate::digest::digest;
use crate::store::Store;
use std::sync::atomic::Ordering;

/// Copy orphan `run` from `from` to `to` (see the module doc).
pub(super) fn copy_orphan(
    from: &Store,
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
) -> RunReport {
    let mut rep = RunReport::new(run);
    let (mut records, others) = match from.read_headless(run) {
        Ok(h) => (h.records, h.others),
        Err(e) => return failed(rep, e),
    };
    let Some(first) = records.first().map(|(s, _)| *s) else {
        return rep.end(
            Outcome::SkippedCorrupt,
            format!(
                "no meta record (orphan-messages), and none of its {others} message(s) is on a record subject; nothing to copy (rm deletes them, keeping a backup)"
            ),
        );
    };
    let whole = records.len();
    let gap = records
        .iter()
        .enumerate()
        .find(|(i, (s, _))| *s != first.saturating_add(*i as u64))
        .map(|(i, _)| i);
    if let Some(cut) = gap {
        records.truncate(cut);
    }
    let last = records.last().map_or(first, |(s, _)| *s);
    rep.records = records.len() as u64;
    rep.bytes = records.iter().map(|(_, b)| b.len() as u64 + 1).sum();
    rep.notes.push(format!(
        "no meta record (orphan-messages): records {first}-{last} copied as they are stored ({}); the copy has no meta record either, so no agent reads it",
        (opts.named)(super::Lever::IncludeCorrupt)
    ));
    if gap.is_some() {
        rep.partial = true;
        rep.notes.push(format!(
            "seq {} is missing: the {} record(s) after the gap were not copied",
            last.saturating_add(1),
            whole - records.len()
        ));
    }
    if others > 0 {
        rep.notes.push(format!(
            "{others} message(s) on subjects that name no record were not copied (rm keeps them in its backup)"
        ));
    }
    let want: Vec<u8> = records
        .iter()
        .flat_map(|(_, b)| b.iter().copied().chain(std::iter::once(b'\n')))
        .collect();
    let sha = digest(records.iter().map(|(_, b)| b.as_slice()));
    // The destination: absent, or these records exactly.
    let held = match to.exists(run) {
        Ok(false) => None,
        Ok(true) => match to.read_lines(run) {
            Ok(b) => Some(b),
            Err(e) => return failed(rep, e),
        },
        Err(e) => return failed(rep, e),
    };
    match held {
        Some(b) if b == want => {
            rep.already = rep.records;
            rep.sha256 = (!opts.dry_run).then_some(sha);
            return kept(rep.end(Outcome::Complete, ""), opts);
        }
        Some(_) => {
            return rep.end(
                Outcome::Conflict,
                "the destination holds other records under this id; it was left untouched",
            )
        }
        None if opts.dry_run => return rep.end(Outcome::WouldCopy, ""),
        None => {}
    }
    let n = records.len() as u64;
    if let Err(e) = progress.batch.open(to) {
        return failed(rep, e);
    }
    let (stored, ended) = to.create_headless(run, records);
    rep.appended = stored;
    progress.records.fetch_add(stored, Ordering::Relaxed);
    if let Err(e) = ended {
        return append_failed(rep, e, stored);
    }
    if stored != n {
        return rep.end(
            Outcome::Conflict,
            "the destination already held some of these records while copying them; re-run to compare again",
        );
    }
    match to.read_lines(run) {
        Ok(b) if b == want => {
            rep.sha256 = Some(sha);
            kept(rep.end(Outcome::Copied, ""), opts)
        }
        Ok(b) => rep.end(
            Outcome::Failed,
            format!(
                "verification failed: the copy reads back as {} bytes, not the {} copied",
                b.len(),
                want.len()
            ),
        ),
        Err(e) => {
            let note = format!("cannot read the copy back to verify it: {e}");
            super::report::failed_with(rep, &e, note)
        }
    }
}

/// `--delete-source` leaves an orphan's source where it is.
fn kept(mut rep: RunReport, opts: &Options) -> RunReport {
    if opts.delete_source {
        rep.notes.push(
            "source kept: it has no meta record; look at the copy, then delete it with rm (which keeps a backup)"
                .into(),
        );
    }
    rep
}
