//! `man [DIR]`: write the man pages generated from the clap definitions.
//! The committed pages in `man/` are checked against these by a test.

use crate::cli::{Cli, ManArgs};
use crate::error::{CmdResult, Failure};
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// Every page: `fisk-admin.1` and one `fisk-admin-<sub>.1` per subcommand.
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let cmd = Cli::command();
    let mut pages = Vec::new();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    pages.push(("fisk-admin.1".to_owned(), buf));
    for sub in cmd.get_subcommands() {
        let name = format!("fisk-admin-{}", sub.get_name());
        let sub = sub.clone().name(name.clone());
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub).render(&mut buf)?;
        pages.push((format!("{name}.1"), buf));
    }
    Ok(pages)
}

pub fn run(a: ManArgs, out: &mut dyn Write) -> CmdResult {
    std::fs::create_dir_all(&a.dir)
        .map_err(|e| Failure::new(format!("creating {}: {e}", a.dir.display())))?;
    for (name, bytes) in pages()? {
        let path = a.dir.join(&name);
        std::fs::write(&path, bytes)
            .map_err(|e| Failure::new(format!("writing {}: {e}", path.display())))?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
