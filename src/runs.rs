//! One run folded as the inspecting commands (`show`, `fold`) fold it: up
//! to a seq, any version, and the refusal of `--until-seq 0` they share.
//! A module of its own so that no command imports another.

use crate::error::Failure;
use journal::fold::{FoldOptions, RunState};
use journal::store::{Journal, Store};

/// `--until-seq 0`: refused, as no record has it.
pub fn until_zero() -> Failure {
    Failure::new("--until-seq 0 folds nothing: seqs start at 1 (the meta record)")
}

/// Fold a run of any version, up to `until_seq`; a refusal says where the
/// record it refuses is stored.
pub fn fold_journal(
    store: &Store,
    run: &str,
    journal: &Journal,
    until_seq: Option<u64>,
) -> Result<RunState, Failure> {
    let opts = FoldOptions {
        until_seq,
        ..FoldOptions::inspect()
    };
    Ok(store.fold(run, journal, opts)?)
}
