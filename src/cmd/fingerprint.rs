//! `fingerprint --agent FILE`: the fingerprint a run started from this agent
//! file would carry (SPEC 4), as JSON, for `diff`.

use crate::cli::FingerprintArgs;
use crate::error::CmdResult;
use crate::output::{json_pretty, sorted};
use journal::agent::AgentFile;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// All eight keys, `reasoning_effort` included when empty (a journal's
/// meta record leaves it out then); keys sorted: `output::sorted`.
#[derive(Serialize)]
struct Printed<'a> {
    provider: &'a str,
    model: &'a str,
    system_hash: &'a str,
    tools_hash: &'a str,
    thinking_mode: &'a str,
    reasoning_effort: &'a str,
    max_tokens: i64,
    max_iterations: i64,
}

pub fn run(a: FingerprintArgs, out: &mut dyn Write) -> CmdResult {
    let agent = AgentFile::load(&a.agent)?;
    let f = journal::fingerprint::of_agent(&agent);
    let printed = Printed {
        provider: &f.provider,
        model: &f.model,
        system_hash: &f.system_hash,
        tools_hash: &f.tools_hash,
        thinking_mode: &f.thinking_mode,
        reasoning_effort: &f.reasoning_effort,
        max_tokens: f.max_tokens,
        max_iterations: f.max_iterations,
    };
    json_pretty(out, &sorted(&printed)?)?;
    Ok(ExitCode::SUCCESS)
}
