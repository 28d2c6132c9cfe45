//! SIGINT and SIGTERM for `run` and `resume`, and for a command that
//! waits on something until told to stop (`show --follow`, [`flag`]).
//! For `run` and `resume`: the first asks the runner to
//! finish the step it is in and suspend the run, and says so at once; the
//! second leaves at once (status 130), saying that the journal is
//! consistent (every record is appended whole, so a crash repeats at most
//! the one tool call in flight) and how to continue.
//!
//! Handlers are installed with `signal-hook`, not `rustix`: rustix 1.x can
//! send and name signals but installs handlers only in its `runtime`
//! module, which is unsafe and meant for libc-free runtimes (origin), not
//! for a program on libc. signal-hook's handler only records the signal;
//! the words are printed by an ordinary thread that waits for it.

use crate::error::Failure;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Install the handlers. `resume` is the command that continues the run
/// after a second signal. Returns the flag the runner polls.
pub fn stop_flag(resume: String) -> Result<Arc<AtomicBool>, Failure> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(|e| Failure::new(format!("installing signal handlers: {e}")))?;
    let flag = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if flag.swap(true, Ordering::SeqCst) {
                    eprintln!(
                        "fisk-admin: left at once. The journal is consistent: every record stored is whole, and at most the tool call in flight runs again. Continue with: {resume}"
                    );
                    std::process::exit(130);
                }
                eprintln!(
                    "fisk-admin: stopping: the current step finishes, then the run is suspended (interrupt again to leave at once)"
                );
            }
        })
        .map_err(|e| Failure::new(format!("starting the signal thread: {e}")))?;
    Ok(stop)
}

/// A flag set by SIGINT, SIGTERM or SIGHUP, for a loop that polls it
/// (`show --follow`): nothing is printed from the handler; the loop ends
/// cleanly, with the usual interrupt status (130).
pub fn flag() -> Result<Arc<AtomicBool>, Failure> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .map_err(|e| Failure::new(format!("installing signal handlers: {e}")))?;
    }
    Ok(flag)
}
