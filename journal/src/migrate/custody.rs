//! What a migrate leaves in the destination's audit log (issue 38): after
//! the batch's intent (`migrate`), one outcome per run it wrote (the run
//! as verified, or why it failed), the source log's entries about each run
//! it created, carried byte for byte (so a run's history travels with
//! it), and the closing outcome.

use super::report::{Outcome, RunReport};
use crate::audit::{Digest, Entry, Kind};
use crate::error::{Error, Result};
use crate::store::{Batch, Logged, Store};
use std::sync::Mutex;

/// The batch intent of one migrate, written once, before its first write
/// ([`Gate::open`]): a migrate that writes nothing logs nothing.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
enum GateState {
    /// No migrate armed it: writes go ahead unlogged.
    #[default]
    Idle,
    /// Armed with what the intent says; nothing written yet.
    Armed(String),
    /// The intent is stored (or the store logs nothing: `None`).
    Begun(Option<Box<Batch>>),
    /// The intent could not be stored: nothing may be written.
    Failed(String),
}

impl Gate {
    /// Arm it: the intent is to say `detail`.
    pub(crate) fn arm(&self, detail: String) {
        if let Ok(mut s) = self.state.lock() {
            *s = GateState::Armed(detail);
        }
    }

    /// Before a write: the intent stored in `to`'s log, once; an error
    /// when it cannot be (then nothing may be written).
    pub(crate) fn open(&self, to: &Store) -> Result<()> {
        let Ok(mut s) = self.state.lock() else {
            return Ok(());
        };
        match &*s {
            GateState::Idle | GateState::Begun(_) => Ok(()),
            GateState::Failed(why) => Err(Error::Audit {
                at: to.audit_place(),
                message: why.clone(),
            }),
            GateState::Armed(detail) => match to.audit_begin("migrate", detail.clone()) {
                Ok(b) => {
                    *s = GateState::Begun(b.map(Box::new));
                    Ok(())
                }
                Err(e) => {
                    *s = GateState::Failed(e.to_string());
                    Err(e)
                }
            },
        }
    }

    /// The batch, once its intent is stored.
    pub(crate) fn begun(&self) -> Option<Batch> {
        match &*self.state.lock().ok()? {
            GateState::Begun(b) => b.as_deref().cloned(),
            _ => None,
        }
    }
}

/// Log the copies `reports` made into `to`'s log; a run whose entries
/// could not be logged says so in its report, and fails.
pub(super) fn log_copies(from: &Store, to: &Store, batch: &Batch, reports: &mut [RunReport]) {
    let mut source: Option<Vec<Logged>> = None;
    let mut copied = 0usize;
    let mut failed_log = false;
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
            // The log is the store's: the next run would fail alike.
            failed_log = true;
            break;
        }
    }
    if failed_log {
        return;
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
