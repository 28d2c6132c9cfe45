//! How a bulk write (`end`, `rm`, `upgrade`, `repair --all`) says it
//! stopped on a failure of the store as a whole (`journal::store::Breaker`,
//! issue 36.4): the runs not attempted are said once, with the failure and
//! how to finish, not once per run.

use crate::output::Style;
use journal::store::Breaker;

/// Whether `e` says only that its run was not attempted (said once, by
/// [`say_stopped`]).
pub fn not_attempted(e: &journal::Error) -> bool {
    matches!(e, journal::Error::NotAttempted { .. })
}

/// On standard error, once: how many runs were not attempted, the store
/// failure that stopped the batch, and that `command` again finishes them.
pub fn say_stopped(breaker: &Breaker, skipped: usize, command: &str, style: Style) {
    let Some(why) = breaker.tripped().filter(|_| skipped > 0) else {
        return;
    };
    crate::error::say(
        &format!(
            "{skipped} run(s) not attempted: an earlier run failed on the store ({why}); the runs before it are done; once the store answers again, the same {command} finishes the rest"
        ),
        None,
        style,
    );
}
