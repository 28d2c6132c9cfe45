//! `run --agent FILE PROMPT`: start a run with the minimal runner.

use crate::cli::{Global, RunArgs};
use crate::error::CmdResult;
use crate::open::agent_store;
use crate::output::Style;
use crate::render::outcome::{printer, report};
use crate::signal::stop_flag;
use journal::runner::{Agent, Runner};
use std::io::Write;

pub fn run(g: &Global, a: RunArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let agent = Agent::load(&a.agent)?;
    if let Some(id) = &a.id {
        journal::id::check(id)?;
    }
    let store = agent_store(g, &a.agent, false)?;
    let agent_file = a.agent.to_string_lossy();
    let stop = stop_flag(match &a.id {
        Some(id) => crate::hint::command(g, &["resume", id, "--agent", &agent_file]),
        // The id is made when the run starts: `run` prints it first.
        None => format!(
            "{} (RUN: the id printed when the run started)",
            crate::hint::command(g, &["resume", "RUN", "--agent", &agent_file])
        ),
    })?;
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
    let outcome = runner
        .start(&a.prompt, a.id.as_deref())
        .inspect_err(|_| made.remove_empty())?;
    report(&outcome, g, &a.agent, style, out)
}
