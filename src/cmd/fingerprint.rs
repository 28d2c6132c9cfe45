//! `fingerprint --agent FILE`: the fingerprint a run started from this agent
//! file would carry (SPEC 4), as JSON, for `diff`.

use crate::cli::FingerprintArgs;
use crate::error::CmdResult;
use crate::output::json_pretty;
use journal::agent::AgentFile;
use std::io::Write;
use std::process::ExitCode;

pub fn run(a: FingerprintArgs, out: &mut dyn Write) -> CmdResult {
    let agent = AgentFile::load(&a.agent)?;
    let f = journal::fingerprint::of_agent(&agent);
    // All eight keys, reasoning_effort included when empty.
    json_pretty(
        out,
        &serde_json::json!({
            "provider": f.provider, "model": f.model,
            "system_hash": f.system_hash, "tools_hash": f.tools_hash,
            "thinking_mode": f.thinking_mode, "reasoning_effort": f.reasoning_effort,
            "max_tokens": f.max_tokens, "max_iterations": f.max_iterations,
        }),
    )?;
    Ok(ExitCode::SUCCESS)
}
