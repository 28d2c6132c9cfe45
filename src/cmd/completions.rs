//! `completions SHELL`.

use crate::cli::{Cli, CompletionsArgs};
use crate::error::CmdResult;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

pub fn run(a: CompletionsArgs, out: &mut dyn Write) -> CmdResult {
    let mut cmd = Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "fisk-admin", out);
    Ok(ExitCode::SUCCESS)
}
