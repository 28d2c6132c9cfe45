//! What a migrate leaves in the destination's audit log (issue 38): after
//! the batch's intent (`migrate`), one outcome per run it wrote (the run
//! as verified, or why it failed), the source log's entries about each run
//! it created, carried byte for byte (so a run's history travels with
//! it), and the closing outcome.

use super::report::{Outcome, RunReport};
use crate::audit::{Digest, Entry, Kind};
use crate::store::{Batch, Logged, Store};

/// Log the copies `reports` made into `to`'s log; a run whose entries
/// could not be logged says so in its report, and fails.
pub(super) fn log_copies(from: &Store, to: &Store, batch: &Batch, reports: &mut [RunReport]) {
    let mut source: Option<Vec<Logged>> = None;
    let mut copied = 0usize;
    for rep in reports.iter_mut() {
        if rep.appended == 0 {
            continue;
        }
        copied += 1;
        let done = match (rep.result.ok(), &rep.sha256) {
            (true, Some(sha)) => Ok(Digest {
                records: rep.records,
                sha256: sha.clone(),
            }),
            _ => Err(rep.notes.join("; ")),
        };
        let ok = done.is_ok();
        let mut logged = to.audit_each(batch, &rep.run, done, None);
        if ok && rep.already == 0 && logged.is_ok() {
            // The source's entries about the run, carried with it.
            let entries = source.get_or_insert_with(|| from.audit_log().unwrap_or_default());
            for l in entries.iter().filter(|l| about(l, &rep.run)) {
                let carried = Entry {
                    kind: Kind::Carried,
                    run: Some(rep.run.clone()),
                    from: Some(from.describe()),
                    original: Some(String::from_utf8_lossy(&l.raw).into_owned()),
                    ..Entry::default()
                };
                if let Err(e) = to.audit_note(carried) {
                    logged = Err(e);
                    break;
                }
            }
        }
        if let Err(e) = logged {
            rep.result = Outcome::Failed;
            rep.notes
                .push(format!("copied, but the audit log could not say so: {e}"));
        }
    }
    if let Err(e) = to.audit_end(batch, format!("{copied} run(s) written")) {
        if let Some(rep) = reports.iter_mut().find(|r| r.appended > 0) {
            rep.notes
                .push(format!("the audit log could not close the migrate: {e}"));
        }
    }
}

/// Whether the logged entry is about `run` (or carries one that is).
fn about(l: &Logged, run: &str) -> bool {
    match &l.entry {
        Ok(e) if e.kind == Kind::Carried => e.run.as_deref() == Some(run),
        Ok(e) => e.run.as_deref() == Some(run),
        Err(_) => false,
    }
}
