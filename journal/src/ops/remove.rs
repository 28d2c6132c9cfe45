//! Deleting runs as `rm` does, by name or by selection: which runs a
//! last-activity bound keeps ([`older_than`]) and the delete of each
//! ([`delete_each`]), one run's refusal (a live run) never stopping the
//! others. It is here, not in a front end, because which runs a bulk
//! delete takes is a rule: a run whose last record has no time is never
//! taken by an age (nothing says it is old).

use crate::store::{Breaker, Deleted, Store, Summary};
use crate::time::Time;
use std::time::Duration;

/// Keep of `runs` those whose last activity (the last record's time) is
/// more than `age` before `now`; a run with no such time (or Go's zero
/// time) is left out.
pub fn older_than(runs: &mut Vec<Summary>, age: Duration, now: Time) {
    let cutoff = now.checked_sub(age).unwrap_or(now);
    runs.retain(|s| s.updated.is_some_and(|u| !u.is_zero() && u < cutoff));
}

/// Delete each of `runs` in turn, keeping a backup of each
/// ([`Store::delete`]): every run's outcome, in the order given. A live
/// run is refused (its `Err`) and the others go on; once one fails on the
/// store as a whole, `breaker` stops the rest (`Error::NotAttempted`).
pub fn delete_each(
    store: &Store,
    runs: &[String],
    breaker: &Breaker,
) -> Vec<(String, crate::Result<Deleted>)> {
    runs.iter()
        .map(|r| (r.clone(), breaker.run(r, || store.delete(r))))
        .collect()
}
