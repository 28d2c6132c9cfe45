//! What migrate says about each run: its [`Outcome`] and [`RunReport`],
//! where its copy stands between the phases ([`Copied`], and the
//! [`Check`] it is verified against), and the reports a run ends with
//! when it fails.

use crate::error::Error;
use serde::Serialize;

/// What happened to one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Copied (or continued) and verified.
    Copied,
    /// The destination already held the whole run; verified.
    Complete,
    /// Dry run: would be copied.
    WouldCopy,
    /// Skipped: a writer holds the source run.
    SkippedLive,
    /// Skipped: the source run is corrupt.
    SkippedCorrupt,
    /// The destination holds a different run under this id.
    Conflict,
    /// Copying or verifying failed.
    Failed,
}

impl Outcome {
    /// Whether the run counts as done for the exit status.
    pub fn ok(self) -> bool {
        matches!(
            self,
            Outcome::Copied | Outcome::Complete | Outcome::WouldCopy
        )
    }
    /// The outcome as the report spells it.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Copied => "copied",
            Outcome::Complete => "complete",
            Outcome::WouldCopy => "would-copy",
            Outcome::SkippedLive => "skipped-live",
            Outcome::SkippedCorrupt => "skipped-corrupt",
            Outcome::Conflict => "conflict",
            Outcome::Failed => "failed",
        }
    }
}

/// The report for one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The run's id.
    pub run: String,
    /// What happened to it.
    pub result: Outcome,
    /// Records of the run as copied (the source's readable records).
    pub records: u64,
    /// Bytes of those records (bodies plus a newline each).
    pub bytes: u64,
    /// Records the destination held before this migrate.
    pub already: u64,
    /// Records appended by this migrate.
    pub appended: u64,
    /// SHA-256 over the bodies, when verified.
    pub sha256: Option<String>,
    /// The source run was deleted.
    pub source_deleted: bool,
    /// The copy holds less than the source: a torn tail was dropped, or
    /// only a readable prefix was copied (`--include-corrupt`).
    pub partial: bool,
    /// Records after the copied prefix were left behind (corruption or
    /// seqs out of order): the source is never deleted.
    #[serde(skip)]
    pub prefix_only: bool,
    /// The failure came from a store (connection, server, disk), not from
    /// this run's data: later runs would fail the same way.
    #[serde(skip)]
    pub store_failed: bool,
    /// What the operator must know: dropped tails, prefixes, conflicts, errors.
    pub notes: Vec<String>,
}

impl RunReport {
    pub(super) fn new(run: &str) -> RunReport {
        RunReport {
            run: run.to_owned(),
            result: Outcome::Failed,
            records: 0,
            bytes: 0,
            already: 0,
            appended: 0,
            sha256: None,
            source_deleted: false,
            partial: false,
            prefix_only: false,
            store_failed: false,
            notes: Vec::new(),
        }
    }
    pub(super) fn end(mut self, result: Outcome, note: impl Into<String>) -> RunReport {
        self.result = result;
        let note = note.into();
        if !note.is_empty() {
            self.notes.push(note);
        }
        self
    }
}

/// What a copied run must look like when read back.
#[derive(Debug, Clone)]
pub(super) struct Check {
    pub(super) records: usize,
    pub(super) sha256: String,
}

/// Where a run's copy stands.
pub(super) enum Copied {
    /// Written (or found already there): to be verified against the
    /// [`Check`].
    ToVerify(RunReport, Check),
    /// Its final report (skipped, conflict, failed, dry run, or verified).
    Ended(RunReport),
}

impl Copied {
    pub(super) fn report(&self) -> &RunReport {
        match self {
            Copied::ToVerify(rep, _) | Copied::Ended(rep) => rep,
        }
    }
}

/// The run failed with `e`: its message is the note.
pub(super) fn failed(rep: RunReport, e: Error) -> RunReport {
    let note = e.to_string();
    failed_with(rep, &e, note)
}

/// The run failed with `e`, said as `note`; whether the store failed (not
/// this run's data) is [`Error::is_store_failure`].
pub(super) fn failed_with(mut rep: RunReport, e: &Error, note: String) -> RunReport {
    rep.store_failed = e.is_store_failure();
    rep.end(Outcome::Failed, note)
}

/// An append failed after `stored` records of the run.
pub(super) fn append_failed(rep: RunReport, err: Error, stored: u64) -> RunReport {
    // A refusal, or a subject the destination's configuration gives to
    // another stream: a re-run meets the same.
    let note = if matches!(err, Error::Refused(_) | Error::Config { .. }) {
        format!("{err} (after {stored} records of this run were copied; this destination cannot take the rest)")
    } else {
        format!("{err} (after {stored} records of this run were copied; re-run to continue)")
    };
    failed_with(rep, &err, note)
}

/// Some of seqs `already+1..n` were in the destination when appended.
pub(super) fn changed_meanwhile(rep: RunReport, already: usize, n: usize) -> RunReport {
    rep.end(
        Outcome::Conflict,
        format!(
            "the destination already held some of seqs {}..{n} while copying them; re-run to compare again",
            already + 1
        ),
    )
}
