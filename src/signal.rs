//! SIGINT and SIGTERM for `run` and `resume`: the first asks the runner to
//! finish the step it is in and suspend the run; the second exits at once.
//!
//! Handlers are installed with `signal-hook`, not `rustix`: rustix 1.x can
//! send and name signals but installs handlers only in its `runtime`
//! module, which is unsafe and meant for libc-free runtimes (origin), not
//! for a program on libc. signal-hook's flag handlers are async-signal-safe
//! by construction (an atomic store, or `_exit`), which is all this needs.

use crate::error::Failure;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// SIGINT/SIGTERM: the first sets the returned flag (finish the step,
/// suspend); the second exits at once with status 130.
pub fn stop_flag() -> Result<Arc<AtomicBool>, Failure> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal.
        flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .and_then(|_| flag::register(sig, Arc::clone(&stop)))
            .map_err(|e| Failure::new(format!("installing signal handlers: {e}")))?;
    }
    Ok(stop)
}
