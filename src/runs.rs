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

/// What a fork came from (`fork`, issue 39 d-20), kept beside the new run
/// where the store says ([`Store::fork_note`], journal/FORMAT.md "Forks:
/// what a fork came from"), never in the meta record the agent reads: a
/// JSON object naming the new run, its source, the seq it was cut at,
/// when, and the SHA-256 of the new run's meta record, so that a note left
/// by a run since removed is never taken for another run of that id.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ForkNote {
    pub run: String,
    pub from: String,
    pub at_seq: u64,
    /// When the fork was made (RFC 3339).
    pub when: String,
    pub meta_sha256: String,
}

impl ForkNote {
    /// Note that `run` (just written) was forked from `from` at `at_seq`:
    /// replaces a note of an earlier run of that id, never half written
    /// (a new file renamed over it).
    pub fn write(store: &Store, run: &str, from: &str, at_seq: u64) -> Result<(), Failure> {
        let meta = meta_line(store, run)?;
        let note = ForkNote {
            run: run.to_owned(),
            from: from.to_owned(),
            at_seq,
            when: journal::time::Time::now().to_rfc3339_seconds(),
            meta_sha256: journal::migrate::digest([meta.as_slice()]),
        };
        let path = store.fork_note(run)?;
        let dir = path
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let failed = |e: std::io::Error| Failure::from(journal::Error::io(&path, e));
        std::fs::create_dir_all(&dir).map_err(failed)?;
        let tmp = dir.join(format!(".{run}.fork-{}.tmp", std::process::id()));
        let bytes = serde_json::to_vec(&note).map_err(|e| Failure::new(e.to_string()))?;
        let written = (|| {
            let mut o = std::fs::OpenOptions::new();
            o.write(true).create_new(true);
            std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
            let mut f = o.open(&tmp)?;
            std::io::Write::write_all(&mut f, &bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(&dir)?.sync_all()
        })();
        let _ = std::fs::remove_file(&tmp);
        written.map_err(failed)
    }

    /// What `run` was forked from, when a note says so of this very run
    /// (its meta record as `meta` holds it); `None` otherwise.
    pub fn of(store: &Store, run: &str, meta: &[u8]) -> Option<ForkNote> {
        let path = store.fork_note(run).ok()?;
        let text = std::fs::read(path).ok()?;
        let note: ForkNote = serde_json::from_slice(&text).ok()?;
        (note.run == run && note.meta_sha256 == journal::migrate::digest([meta])).then_some(note)
    }
}

/// The meta record's line of `run`, as stored.
fn meta_line(store: &Store, run: &str) -> Result<Vec<u8>, Failure> {
    let lines = store.read_lines(run)?;
    Ok(lines
        .split(|b| *b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default()
        .to_vec())
}
