//! Verifying copies: read back on their own or in bulk, judged against
//! the source's record count and digest; and deleting a verified source.

use super::report::{failed_with, Check, Copied, Outcome, RunReport};
use super::Options;
use crate::store::Store;

/// A report after [`verify_bulk`].
pub(super) enum Checked {
    /// Verified here (a verdict, or why it could not be read back).
    Now(RunReport),
    /// Ended before (nothing to verify).
    Earlier(RunReport),
}

/// Verify the runs that are [`Copied::ToVerify`] by reading them back from
/// `to` ([`Store::digests`]); a run that read cannot vouch for (irregular
/// messages, a group that could not be read, a file that could not be
/// hashed) is read on its own instead, which says what is wrong.
pub(super) fn verify_bulk(to: &Store, items: Vec<Copied>) -> Vec<Checked> {
    use rayon::prelude::*;
    let pending: Vec<String> = items
        .iter()
        .filter_map(|c| match c {
            Copied::ToVerify(r, _) => Some(r.run.clone()),
            Copied::Ended(_) => None,
        })
        .collect();
    let records = items
        .iter()
        .filter_map(|c| match c {
            Copied::ToVerify(_, c) => Some(c.records as u64),
            Copied::Ended(_) => None,
        })
        .sum();
    let mut found = to.digests(&pending, records).into_iter();
    let paired: Vec<_> = items
        .into_iter()
        .map(|c| {
            let got = matches!(c, Copied::ToVerify(..)).then(|| found.next());
            (c, got)
        })
        .collect();
    paired
        .into_par_iter()
        .map(|(copied, got)| match (copied, got) {
            // Exactly the records 1..N: the digest decides.
            (Copied::ToVerify(rep, c), Some(Some(Ok(Some((n, have)))))) => {
                Checked::Now(judge(rep, c, n as usize, have))
            }
            // The store failed (the server gone): reading each run on its
            // own would wait out the same timeout once per run.
            (Copied::ToVerify(rep, _), Some(Some(Err(e)))) if e.is_store_failure() => {
                let note = format!("cannot read the copy back to verify it: {e}; re-run to verify");
                Checked::Now(failed_with(rep, &e, note))
            }
            // Anything irregular, or a failure that was this run's: read it
            // on its own, which also says what is wrong.
            (Copied::ToVerify(rep, c), _) => Checked::Now(verify_by_read(to, rep, c)),
            (Copied::Ended(rep), _) => Checked::Earlier(rep),
        })
        .collect()
}

/// Verify copies already in `to` as `migrate` does after copying: each
/// `(run, records, sha256)` is what the run must hold. A report per run,
/// `copied` when it matches, `failed` with the reason otherwise.
// For tests (journal/tests/jetstream.rs), not API: a front end goes through `Store`.
#[doc(hidden)]
pub fn verify_copies(to: &Store, expected: &[(String, usize, String)]) -> Vec<RunReport> {
    let items = expected
        .iter()
        .map(|(run, records, sha256)| {
            let mut rep = RunReport::new(run);
            rep.records = *records as u64;
            rep.appended = *records as u64;
            let c = Check {
                records: *records,
                sha256: sha256.clone(),
            };
            Copied::ToVerify(rep, c)
        })
        .collect::<Vec<_>>();
    verify_bulk(to, items)
        .into_iter()
        .map(|c| match c {
            Checked::Now(r) | Checked::Earlier(r) => r,
        })
        .collect()
}

/// Read the run back on its own and compare.
fn verify_by_read(to: &Store, rep: RunReport, c: Check) -> RunReport {
    match to.digest(&rep.run) {
        Ok((n, have)) => judge(rep, c, n, have),
        Err(e) => {
            let note = format!("cannot read the copy back to verify it: {e}");
            failed_with(rep, &e, note)
        }
    }
}

/// The verdict on a copy read back with `n` records and digest `have`.
pub(super) fn judge(mut rep: RunReport, c: Check, n: usize, have: String) -> RunReport {
    if n != c.records || have != c.sha256 {
        return rep.end(
            Outcome::Failed,
            format!(
                "verification failed: the copy has {n} records (sha256 {have}), the source {} (sha256 {})",
                c.records, c.sha256
            ),
        );
    }
    rep.sha256 = Some(c.sha256);
    rep.result = if rep.appended == 0 {
        Outcome::Complete
    } else {
        Outcome::Copied
    };
    if rep.already > 0 && rep.appended > 0 {
        rep.notes
            .push(format!("continued after seq {} already there", rep.already));
    }
    rep
}

/// `--delete-source` for a run whose copy was verified.
pub(super) fn after_verify(from: &Store, mut rep: RunReport, opts: &Options) -> RunReport {
    if !opts.delete_source || rep.sha256.is_none() || !rep.result.ok() {
        return rep;
    }
    if rep.prefix_only {
        // The records after the prefix exist only in the source.
        rep.notes.push(
            "source kept: only its readable prefix was copied; repair or inspect it, then delete it by hand"
                .into(),
        );
        return rep;
    }
    // Logged in the source's audit log (issue 38), as `rm` is.
    let plan = crate::store::Plan {
        op: "migrate --delete-source".into(),
        run: rep.run.clone(),
        before: rep.sha256.clone().map(|sha256| crate::audit::Digest {
            records: rep.records,
            sha256,
        }),
        after: None,
        removed: crate::audit::Seqs::range(1, rep.records),
        detail: Some("deleted once its copy was verified".into()),
        ..Default::default()
    };
    match from.audited(&plan, || from.delete_copied(&rep.run, rep.records)) {
        Ok(()) => {
            rep.source_deleted = true;
            rep.notes.push("source deleted after verification".into());
        }
        Err(e) => {
            rep.result = Outcome::Failed;
            rep.notes.push(format!(
                "copied and verified, but deleting the source failed: {e}"
            ));
        }
    }
    rep
}
