//! `run --agent <file> <prompt>`: start a run with the minimal runner.

use crate::cli::RunArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::agent_store;
use crate::render::outcome::{printer, report};
use crate::signal::stop_flag;
use journal::runner::{Agent, Runner};
use std::io::Write;

pub fn run(g: &Invocation, a: RunArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let agent = Agent::load(&a.agent)?;
    if let Some(id) = &a.id {
        journal::id::check(id)?;
    }
    let store = agent_store(g, &a.agent, false)?;
    // The id is chosen here, not by the runner, so that the command an
    // interrupt prints names the run.
    let id = a.id.clone().unwrap_or_else(journal::runner::new_run_id);
    let stop = stop_flag(crate::hint::resume_with(g, &id, Some(&a.agent), false).to_string())?;
    let mut events = printer();
    let mut runner = Runner {
        store: &store,
        agent: &agent,
        stop: &stop,
        events: &mut events,
    };
    // A store directory this run creates goes again when the run never
    // comes to exist (its first record could not be stored).
    let made = store.missing_dirs();
    let outcome = runner.start(&a.prompt, Some(&id)).map_err(|e| {
        made.remove_empty();
        let help = crate::hint::for_run_store_failure(g, &store, &id, &a.agent, &e);
        let mut f = Failure::from(e);
        f.help = help.or(f.help);
        f
    })?;
    report(&outcome, g, &a.agent, style, out)
}
