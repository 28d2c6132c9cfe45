//! `resume RUN [--agent <file>] [--force] [--prompt <text>|-]`: the resume path
//! (SPEC 4, 5): gates, claim, finish the pending batch, continue.
//!
//! The journal stores only the agent's fingerprint, not where its file is,
//! so the agent file is needed: `--agent`, else the `--config` file.

use crate::cli::ResumeArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::agent_store;
use crate::output::sanitize;
use crate::render::outcome::{printer, report};
use crate::signal::stop_flag;
use journal::runner::{Agent, ResumeOptions, Runner};
use std::io::Write;

pub fn run(g: &Invocation, a: ResumeArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    journal::id::check(&a.run)?;
    let path = match a.agent.clone().or_else(|| g.config.clone()) {
        Some(p) => p,
        None => ask_agent(&a.run)?,
    };
    let agent = Agent::load(&path)?;
    let store = agent_store(g, &path, true)?;
    // Hints find the store the agent file chose.
    let g = &crate::hint::with_agent_store(g, &path);
    let stop = stop_flag(crate::hint::resume_with(g, &a.run, Some(&path), false).to_string())?;
    // `--prompt -`: the new turn from standard input, or asked for.
    let prompt = match a.prompt.as_deref() {
        Some("-") => {
            let context = [format!("A new user turn for run {}", a.run)];
            let asked = crate::ask::Asked {
                what: "the new user turn",
                context: &context,
                max: MAX_PROMPT,
            };
            Some(crate::ask::text(&asked, false)?.0)
        }
        _ => a.prompt.clone(),
    };
    let mut events = printer();
    let mut runner = Runner {
        store: &store,
        agent: &agent,
        stop: &stop,
        events: &mut events,
    };
    let prompted = prompt.is_some();
    let opts = ResumeOptions {
        force: a.force,
        prompt,
    };
    let failure = |e: journal::Error| {
        let help = crate::hint::for_resume_error(g, &a.run, &path, prompted, &e)
            .or_else(|| crate::hint::for_run_store_failure(g, &store, &a.run, &path, &e))
            .or_else(|| crate::hint::for_error(g, &e));
        let mut f = Failure::from(e);
        f.help = help;
        f
    };
    // The runner is the agent's own write path: its claim record says
    // who resumed; the audit log is for writes by hand (issue 38).
    crate::audit::unlogged(
        "resume",
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    if a.write.dry_run {
        let r = runner.check_resume(&a.run, &opts).map_err(failure)?;
        let calls: Vec<String> = r
            .to_run
            .iter()
            .map(|(id, tool)| format!("{} ({})", sanitize(id, false), sanitize(tool, false)))
            .collect();
        let mut what = format!("resume run {}: claim it at seq {}", a.run, r.last_seq + 1);
        if prompted {
            what.push_str(", add the new user turn");
        }
        if !calls.is_empty() {
            what.push_str(&format!(", run {}", calls.join(", ")));
        }
        what.push_str(&format!(", then go on from iteration {}", r.next_iteration));
        let details = serde_json::json!({
            "claim_seq": r.last_seq + 1,
            "next_iteration": r.next_iteration,
            "to_run": r.to_run.iter().map(|(id, tool)| serde_json::json!({"tool_use_id": id, "tool": tool})).collect::<Vec<_>>(),
        });
        crate::output::would(out, style, &a.run, &what, details)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let outcome = runner.resume(&a.run, &opts).map_err(|e| {
        let help = crate::hint::for_resume_error(g, &a.run, &path, prompted, &e)
            .or_else(|| crate::hint::for_run_store_failure(g, &store, &a.run, &path, &e))
            .or_else(|| crate::hint::for_error(g, &e));
        let mut f = Failure::from(e);
        f.help = help;
        f
    })?;
    report(&outcome, g, &path, style, out)
}

/// The largest new user turn read from standard input.
const MAX_PROMPT: usize = 1024 * 1024;

/// The agent file's path, asked for on a terminal: the journal stores only
/// its fingerprint. Elsewhere the resume cannot go on without `--agent`.
fn ask_agent(run: &str) -> Result<std::path::PathBuf, Failure> {
    use std::io::{BufRead, IsTerminal};
    let refuse = || {
        Failure::new(format!(
            "resume needs the agent file run {run} was started with: the journal stores only its fingerprint"
        ))
        .help("add --agent and the agent file's path (or --config and its path)")
    };
    if !std::io::stdin().is_terminal() {
        return Err(refuse());
    }
    eprint!("The agent file run {run} was started with (its path; Ctrl-C leaves): ");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Failure::new(format!("reading the agent file's path: {e}")))?;
    let path = line.trim_end_matches(['\n', '\r']);
    if path.trim().is_empty() {
        return Err(refuse());
    }
    Ok(std::path::PathBuf::from(path))
}
