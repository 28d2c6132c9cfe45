//! `fingerprint --agent <file>`: the fingerprint a run started from this agent
//! file would carry (SPEC 4), as JSON, for `diff`.

use crate::cli::FingerprintArgs;
use crate::error::CmdResult;
use crate::output::{json_pretty, sorted};
use journal::agent::AgentFile;
use std::io::Write;
use std::process::ExitCode;

pub fn run(a: FingerprintArgs, out: &mut dyn Write) -> CmdResult {
    let agent = AgentFile::load(&a.agent)?;
    let f = journal::fingerprint::of_agent(&agent);
    // Keys sorted (`output::sorted`), all eight of them.
    json_pretty(out, &sorted(&f.every_key())?)?;
    Ok(ExitCode::SUCCESS)
}
