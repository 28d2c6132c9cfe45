//! `fork RUN --at-seq N --as NEW_ID [--dry-run]`: a new run of a run's
//! first N records, to retry from a point (SPEC 6.1, "Forking").
//!
//! The rules are the library's (`journal::ops::fork`): every check before
//! anything is written, the source only read. This command renders what
//! was made and the commands that go on from it (`show`, `resume`).

use crate::cli::ForkArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::open::open_store;
use journal::ops::fork::{fork, Forked, Request};
use std::io::{self, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, a: ForkArgs, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let forked = fork(
        &store,
        &Request {
            run: &a.run,
            at_seq: a.at_seq,
            new_id: &a.new_id,
            dry_run: a.dry_run,
        },
    )?;
    render(g, out, &forked)?;
    Ok(ExitCode::SUCCESS)
}

fn render(g: &Invocation, out: &mut dyn Write, f: &Forked) -> io::Result<()> {
    let verb = match f.written {
        true => "forked",
        false => "would fork",
    };
    writeln!(
        out,
        "{verb} run {} at seq {} (of {}) as {}: {} records, format version {}",
        f.from, f.records, f.source_last, f.run, f.records, f.version
    )?;
    if f.pending {
        writeln!(
            out,
            "it ends inside a batch: the batch is pending, and resume completes it"
        )?;
    }
    if f.written {
        writeln!(
            out,
            "see it with:    {}",
            crate::hint::cmd(g, &["show", &f.run]).line()
        )?;
        writeln!(
            out,
            "resume it with: {}",
            crate::hint::resume(g, &f.run).line()
        )?;
    }
    Ok(())
}
