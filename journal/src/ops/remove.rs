//! Deleting runs as `rm` does, by name or by selection: which runs a
//! last-activity bound keeps ([`older_than`]), whether the run model lets
//! a run go ([`check`]), and the delete of each ([`delete_each`]), one
//! run's refusal never stopping the others. It is here, not in a front
//! end, because which runs a bulk delete takes is a rule: a run whose last
//! record has no time is never taken by an age (nothing says it is old),
//! and a run that waits on a person or is ready to resume is taken only
//! when it is named and forced ([`crate::state`]).

use crate::state::{permit, Ask, Op, State};
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

/// Whether `rm` may delete `run`, asked as `ask`: the run model's table
/// on the run as `ls` sees it (its meta record and tail, who holds it).
/// What a dry run reports and what the delete checks first.
pub fn check(store: &Store, run: &str, ask: Ask) -> crate::Result<State> {
    if !store.exists(run)? {
        return Err(crate::Error::NotFound {
            run: run.to_owned(),
            at: store.place(),
        });
    }
    let state = store.summary(run).state;
    permit(Op::Remove, run, &state, ask)?;
    Ok(state)
}

/// Delete `run`, keeping a backup ([`Store::delete`]), logged (issue 38)
/// when the store logs its writes: the run as it was, and none after.
pub fn delete_logged(store: &Store, run: &str) -> crate::Result<Deleted> {
    let plan = match store.actor() {
        None => crate::store::Plan::default(),
        Some(_) => {
            let before = store.state_digest(run)?;
            crate::store::Plan {
                op: Op::Remove.word().to_owned(),
                run: run.to_owned(),
                removed: before
                    .as_ref()
                    .and_then(|d| crate::audit::Seqs::range(1, d.records)),
                before,
                after: None,
                ..Default::default()
            }
        }
    };
    store.audited(&plan, || store.delete(run))
}

/// Delete each of `runs` in turn, each checked first ([`check`]) and kept
/// as a backup ([`Store::delete`]): every run's outcome, in the order
/// given. A refusal (a live run, one that holds a person's act) is its
/// `Err` and the others go on; once one fails on the store as a whole,
/// `breaker` stops the rest (`Error::NotAttempted`).
pub fn delete_each(
    store: &Store,
    runs: &[String],
    ask: Ask,
    breaker: &Breaker,
) -> Vec<(String, crate::Result<Deleted>)> {
    runs.iter()
        .map(|r| {
            let done = breaker.run(r, || {
                check(store, r, ask)?;
                delete_logged(store, r)
            });
            (r.clone(), done)
        })
        .collect()
}
