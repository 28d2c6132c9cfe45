//! `fold RUN [--until-seq N]`: the folded run state (SPEC 3, SPEC 11).

use super::{open_store, CmdResult, Failure};
use crate::cli::{FoldArgs, Global};
use crate::output::{json_pretty, Style};
use journal::fold::{fold_with, FoldOptions};
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Global, a: FoldArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let journal = store.read(&a.run)?;
    let opts = FoldOptions {
        any_version: true,
        until_seq: a.until_seq,
    };
    let st = fold_with(journal.entries.into_iter().map(|e| e.record), opts).map_err(|e| {
        Failure::new(format!("run {}: the fold refuses the journal: {e}", a.run)).help(format!(
            "run `fisk-admin verify {}` for every finding with its line",
            a.run
        ))
    })?;
    if style.json() {
        json_pretty(out, &st)?;
    } else {
        super::show::render_state(out, &st, false, style)?;
    }
    Ok(ExitCode::SUCCESS)
}
