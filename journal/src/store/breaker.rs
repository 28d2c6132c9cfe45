//! One rule for every bulk write (`end`, `rm`, `upgrade`, `repair --all`,
//! `migrate`; issue 36.4): once one run fails on the store as a whole
//! ([`Error::is_store_failure`]: the server gone or frozen, the stream
//! deleted, a full disk), no further run is started. Every further run
//! would wait out the same timeout: a batch of 60 runs against a frozen
//! server took 150 s, one timeout per run; it now takes about one. What
//! was done stays done, the runs not attempted are said as such
//! ([`Error::NotAttempted`]), and the same command again finishes them
//! once the store answers.

use crate::{Error, Result};
use std::sync::{Mutex, PoisonError};

/// A batch's breaker: tripped by the first store failure of any run, shared
/// by the threads that write the batch.
#[derive(Debug, Default)]
pub struct Breaker(Mutex<Option<String>>);

impl Breaker {
    /// Why runs are no longer started (`run R: what failed`), once
    /// tripped.
    pub fn tripped(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Note run `run`'s failure: one of the store as a whole trips the
    /// breaker (the first is kept).
    pub fn note(&self, run: &str, e: &Error) {
        if !e.is_store_failure() || matches!(e, Error::NotAttempted { .. }) {
            return;
        }
        self.trip(format!("run {run}: {e}"));
    }

    /// Trip the breaker for a store failure said as `why` (`run R: ...`),
    /// when it is not tripped yet.
    pub fn trip(&self, why: String) {
        let mut first = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some(why);
        }
    }

    /// `write` for run `run`, unless the breaker is tripped
    /// (`Error::NotAttempted`, nothing done); its store failure trips it.
    pub fn run<T>(&self, run: &str, write: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Some(why) = self.tripped() {
            return Err(Error::NotAttempted {
                run: run.to_owned(),
                why,
            });
        }
        let done = write();
        if let Err(e) = &done {
            self.note(run, e);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_store_failure_stops_the_batch_and_a_runs_own_failure_does_not() {
        let b = Breaker::default();
        let own = b.run("a", || -> Result<()> { Err(Error::refused("a", "live")) });
        assert!(own.is_err());
        assert_eq!(b.tripped(), None);
        let down = b.run("b", || -> Result<()> {
            Err(Error::Unavailable {
                at: crate::Where::Process,
                message: "no answer in 5s".into(),
            })
        });
        assert!(down.is_err());
        let mut ran = false;
        let skipped = b.run("c", || {
            ran = true;
            Ok(())
        });
        assert!(!ran);
        match skipped {
            Err(e @ Error::NotAttempted { .. }) => {
                assert!(e.is_store_failure());
                let said = e.to_string();
                assert!(said.contains("run c was not attempted"), "{said}");
                assert!(said.contains("run b: "), "{said}");
                assert!(said.contains("no answer in 5s"), "{said}");
            }
            other => panic!("{other:?}"),
        }
        // The first failure is the one named.
        b.note("d", &Error::NoStateHome);
        assert!(b.tripped().unwrap().starts_with("run b: "));
    }
}
