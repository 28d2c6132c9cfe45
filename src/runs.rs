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

/// A run read by an inspecting command: of the store, or a journal file
/// named by `--file` (a journal copied off a host, read with no store).
pub enum Read {
    /// A run of the store, read.
    Store(Store, Journal),
    /// A journal file outside any store.
    File(journal::store::file::Loose),
}

impl Read {
    /// The run read with `--file PATH` (`file`), else the run `run` of the
    /// store the global flags select, up to `until_seq` (a store's run
    /// damaged past it reads as far as it can).
    pub fn open(
        g: &crate::invocation::Invocation,
        run: Option<&str>,
        file: Option<&std::path::Path>,
        until_seq: Option<u64>,
    ) -> Result<Read, Failure> {
        if let Some(path) = file {
            return Ok(Read::File(journal::store::file::Loose::read(path)?));
        }
        // clap requires one of the two.
        let run = run.ok_or_else(|| Failure::new("name a run, or a journal file with --file"))?;
        let store = crate::open::open_store(g)?;
        let journal = match until_seq {
            Some(n) => store.read_until(run, n)?,
            None => store.read(run)?,
        };
        Ok(Read::Store(store, journal))
    }

    /// [`open`](Self::open) on a command's `RUN | --file PATH`, read whole.
    pub fn target(g: &Invocation, t: &crate::cli::RunOrFile) -> Result<Read, Failure> {
        Read::open(g, t.run.as_deref(), t.file.file.as_deref(), None)
    }

    /// The journal read.
    pub fn journal(&self) -> &Journal {
        match self {
            Read::Store(_, j) => j,
            Read::File(l) => &l.journal,
        }
    }

    /// The run's id (a file's: its meta record's).
    pub fn run(&self) -> &str {
        &self.journal().run
    }

    /// [`fold_journal`], for either.
    pub fn fold(&self, until_seq: Option<u64>) -> Result<RunState, Failure> {
        match self {
            Read::Store(store, j) => fold_journal(store, &j.run, j, until_seq),
            Read::File(l) => Ok(l.fold(FoldOptions {
                until_seq,
                ..FoldOptions::inspect()
            })?),
        }
    }
}
