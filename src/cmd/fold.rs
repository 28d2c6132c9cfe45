//! `fold RUN [--until-seq N]`: the folded run state (SPEC 3, SPEC 11).

use crate::cli::FoldArgs;
use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::output::{json_pretty, sanitize, Format};
use crate::render::state::render_state;
use crate::runs::{until_zero, Read};
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Invocation, mut a: FoldArgs, out: &mut dyn Write) -> CmdResult {
    a.target.settle(g)?;
    let style = g.style;
    if a.until_seq == Some(0) {
        return Err(until_zero());
    }
    let read = Read::open(
        g,
        a.target.run.as_deref(),
        a.target.file.file.as_deref(),
        a.until_seq,
    )?;
    let st = read.fold(a.until_seq)?;
    match style.format {
        Format::Json => json_pretty(out, &st)?,
        Format::Text => {
            // What this is the state of: the run, and as of which record.
            let run = sanitize(&st.run_id, false);
            match a.until_seq {
                Some(n) if n > st.last_seq => writeln!(
                    out,
                    "Run {run} as of seq {} (its last record: --until-seq {n} is past it)",
                    st.last_seq
                )?,
                Some(_) => writeln!(out, "Run {run} as of seq {}", st.last_seq)?,
                None => writeln!(out, "Run {run} as of seq {} (its last record)", st.last_seq)?,
            }
            writeln!(
                out,
                "  status:      {}",
                sanitize(&st.status.to_string(), false)
            )?;
            render_state(out, &st, g, style)?
        }
    }
    Ok(ExitCode::SUCCESS)
}
