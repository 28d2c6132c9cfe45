//! `resume RUN [--agent FILE] [--force] [--prompt TEXT]`: the resume path
//! (SPEC 4, 5): gates, claim, finish the pending batch, continue.
//!
//! The journal stores only the agent's fingerprint, not where its file is,
//! so the agent file is needed: `--agent`, else the `--config` file.

use crate::cli::{Global, ResumeArgs};
use crate::error::{CmdResult, Failure};
use crate::open::agent_store;
use crate::output::Style;
use crate::render::outcome::{printer, report};
use crate::signal::stop_flag;
use journal::runner::{Agent, ResumeOptions, Runner};
use std::io::Write;

pub fn run(g: &Global, a: ResumeArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let Some(path) = a.agent.clone().or_else(|| g.config.clone()) else {
        return Err(Failure::new(format!(
            "resume needs the agent file run {} was started with: the journal stores only its fingerprint",
            a.run
        ))
        .help("pass --agent FILE (or --config FILE)"));
    };
    journal::id::check(&a.run)?;
    let agent = Agent::load(&path)?;
    let store = agent_store(g, &path, true)?;
    let stop = stop_flag(crate::hint::command(
        g,
        &["resume", &a.run, "--agent", &path.to_string_lossy()],
    ))?;
    let mut events = printer();
    let mut runner = Runner {
        store: &store,
        agent: &agent,
        stop: &stop,
        events: &mut events,
    };
    let prompted = a.prompt.is_some();
    let opts = ResumeOptions {
        force: a.force,
        prompt: a.prompt,
    };
    let outcome = runner.resume(&a.run, &opts).map_err(|e| {
        let help = crate::hint::for_resume_error(g, &a.run, &path, prompted, &e);
        let mut f = Failure::from(e);
        f.help = help;
        f
    })?;
    report(&outcome, g, &path, style, out)
}
