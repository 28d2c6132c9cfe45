//! One run folded as the inspecting commands (`show`, `fold`) fold it: up
//! to a seq, any version, and the refusal of `--until-seq 0` they share;
//! and the runs a writing command (`rm`, `end`) is given by name. A module
//! of its own so that no command imports another.

use crate::error::Failure;
use crate::invocation::Invocation;
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

/// The runs named on the command line, each once, in the order given:
/// every id valid and in `store`, or the command stops before it does
/// anything (`nothing` says what was not done: "nothing was deleted").
pub fn named(
    g: &Invocation,
    store: &Store,
    runs: &[String],
    nothing: &str,
) -> Result<Vec<String>, Failure> {
    let mut seen = std::collections::HashSet::new();
    let mut named = Vec::new();
    for r in runs {
        journal::id::check(r)?;
        if !seen.insert(r.as_str()) {
            continue;
        }
        if !store.exists(r)? {
            return Err(Failure::new(format!(
                "run {r} not found in {}; {nothing}",
                store.describe()
            ))
            .help(crate::hint::advice(
                g,
                journal::Remedy::List,
                None,
                None,
                &[],
            )));
        }
        named.push(r.clone());
    }
    Ok(named)
}
