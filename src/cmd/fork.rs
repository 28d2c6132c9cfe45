//! `fork RUN --at-seq N --as NEW_ID [--dry-run]`: a new run of a run's
//! first N records, to retry from a point (SPEC 6.1, "Forking").
//!
//! The rules are the library's (`journal::ops::fork`): every check before
//! anything is written, the source only read. This command renders what
//! was made and the commands that go on from it (`show`, `resume`).

use crate::cli::ForkArgs;
use crate::error::CmdResult;
use crate::hint::Cmd;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, Format};
use journal::ops::fork::{fork, Forked, Request};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, a: ForkArgs, out: &mut dyn Write) -> CmdResult {
    let store = crate::audit::writer(
        open_store(g)?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let forked = fork(
        &store,
        &Request {
            run: &a.run,
            at_seq: a.at_seq,
            new_id: &a.new_id,
            dry_run: a.write.dry_run,
        },
    )?;
    // What it came from, beside it (the meta record stays the source's
    // but for the id): `show` of the new run says it. A note that could
    // not be written costs the run nothing, and is said.
    if forked.written {
        if let Err(e) =
            crate::runs::ForkNote::write(&store, &forked.run, &forked.from, forked.records)
        {
            eprintln!(
                "fisk-admin: warning: the fork is made, but the note of what it came from is not: {}",
                crate::output::sanitize(&e.message, false)
            );
        }
    }
    match g.style.format {
        Format::Json => json_pretty(out, &Doc::of(g, &forked))?,
        Format::Text => render(g, out, &forked)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `fork --format json` (docs/OUTPUT.md).
#[derive(Serialize)]
struct Doc<'a> {
    run: &'a str,
    from: &'a str,
    records: u64,
    source_last: u64,
    version: i64,
    pending: bool,
    written: bool,
    resumed: bool,
    /// The commands that go on from the new run (null on a dry run).
    show: Option<Cmd>,
    resume: Option<Cmd>,
}

impl<'a> Doc<'a> {
    fn of(g: &Invocation, f: &'a Forked) -> Doc<'a> {
        Doc {
            run: &f.run,
            from: &f.from,
            records: f.records,
            source_last: f.source_last,
            version: f.version,
            pending: f.pending,
            written: f.written,
            resumed: f.resumed,
            show: f.written.then(|| show(g, &f.run)),
            resume: f.written.then(|| crate::hint::resume(g, &f.run)),
        }
    }
}

fn show(g: &Invocation, run: &str) -> Cmd {
    crate::hint::cmd(g, &["show", run])
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
    if f.resumed {
        writeln!(
            out,
            "an earlier run of this fork was interrupted half way; this one {} it",
            match f.written {
                true => "finished",
                false => "would finish",
            }
        )?;
    }
    if f.pending {
        writeln!(
            out,
            "it ends inside a batch: the batch is pending, and resume completes it"
        )?;
    }
    if f.written {
        writeln!(out, "{}", show(g, &f.run).step("", "see it with"))?;
        writeln!(
            out,
            "{}",
            crate::hint::resume(g, &f.run).step("", "resume it with")
        )?;
    }
    Ok(())
}
