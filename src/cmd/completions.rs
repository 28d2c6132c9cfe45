//! `completions SHELL`: the script that registers fisk-admin's completion
//! with a shell. The completion is dynamic (src/complete.rs): the shell
//! asks `fisk-admin` itself, through `COMPLETE=<shell>`, so `show <TAB>`
//! offers the store's run ids, not only the subcommands and flags.

use crate::cli::CompletionsArgs;
use crate::error::CmdResult;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
use clap_complete::Shell;
use std::io::Write;
use std::process::ExitCode;

pub fn run(a: CompletionsArgs, out: &mut dyn Write) -> CmdResult {
    let shell: &dyn EnvCompleter = match a.shell {
        Shell::Bash => &Bash,
        Shell::Elvish => &Elvish,
        Shell::Fish => &Fish,
        Shell::PowerShell => &Powershell,
        // Zsh, and any shell clap adds later.
        _ => &Zsh,
    };
    // The binary as the shell finds it on PATH.
    shell.write_registration("COMPLETE", "fisk-admin", "fisk-admin", "fisk-admin", out)?;
    Ok(ExitCode::SUCCESS)
}
