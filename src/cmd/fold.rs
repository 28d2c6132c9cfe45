//! `fold RUN [--until-seq N]`: the folded run state (SPEC 3, SPEC 11).

use super::{open_store, CmdResult, Failure};
use crate::cli::{FoldArgs, Global};
use crate::output::{json_pretty, Style};
use journal::fold::{fold_with, FoldOptions};
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Global, a: FoldArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    if a.until_seq == Some(0) {
        return Err(Failure::new(
            "--until-seq 0 folds nothing: seqs start at 1 (the meta record)",
        ));
    }
    let journal = store.read(&a.run)?;
    let opts = FoldOptions {
        any_version: true,
        until_seq: a.until_seq,
    };
    let st = fold_with(journal.records(), opts).map_err(|source| journal::Error::Fold {
        run: a.run.clone(),
        at: store.refused_at(&a.run, &journal, &source),
        source,
    })?;
    if style.json() {
        json_pretty(out, &st)?;
    } else {
        super::show::render_state(out, &st, false, style)?;
    }
    Ok(ExitCode::SUCCESS)
}
