//! Runs without a meta record (`orphan-messages`): messages on a run's
//! subjects `<prefix>.<id>.>` with nothing on `<prefix>.<id>._meta`, what
//! a delete interrupted by a writer left before deletes were fenced, or a
//! foreign writer. No agent lists or reads them (runs are listed from the
//! meta subjects), so fisk-admin finds them by listing every subject:
//! `verify` reports them, `ls --all` lists them and `migrate
//! --include-corrupt` copies them.
//!
//! Finding them costs one listing of every subject of the stream (the
//! server has no query for "runs without a meta subject"), so only the
//! commands that read everything anyway, or are asked to, look.

use super::core::Core;
use crate::error::Result;
use crate::id;
use futures_util::TryStreamExt;
use std::collections::BTreeMap;

/// A run whose messages have no meta record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// The run's id, from the subjects.
    pub run: String,
    /// Messages on `<prefix>.<id>.>`.
    pub messages: u64,
    /// The lowest and highest record seq its subjects name, when any
    /// names one.
    pub seqs: Option<(u64, u64)>,
    /// It carries a mark (`whole.rs`): a write of the whole run that has
    /// not finished, not an orphan of a delete.
    pub pending: bool,
}

impl Orphan {
    /// What `verify` and `ls --all` say about it.
    pub fn describe(&self, prefix: &str) -> String {
        let records = match self.seqs {
            Some((a, b)) if a == b => format!(" (record {a})"),
            Some((a, b)) => format!(" (records {a}-{b})"),
            None => " (none on a record subject)".to_owned(),
        };
        format!(
            "{} message(s) on {prefix}.{run}.>{records} and no meta record on {prefix}.{run}._meta: no agent lists or reads them",
            self.messages,
            run = self.run
        )
    }
}

/// The records of an orphan as stored, for a copy of them.
#[derive(Debug, Clone, Default)]
pub struct Headless {
    /// `(seq, body)` in seq order: the messages on record subjects.
    pub records: Vec<(u64, Vec<u8>)>,
    /// Messages on no record subject (not records; `rm` keeps them).
    pub others: usize,
}

/// Per run token: messages, and the seqs its subjects name.
#[derive(Default)]
struct Tally {
    messages: u64,
    meta: bool,
    pending: bool,
    seqs: Option<(u64, u64)>,
}

impl Core {
    /// Every run (valid id) with messages and no meta record, sorted.
    pub(super) async fn orphans(&self) -> Result<Vec<Orphan>> {
        Ok(self.orphans_under(&format!("{}.>", self.prefix)).await?.0)
    }

    /// [`orphans`](Self::orphans), and the run tokens on the stream's
    /// subjects that are not valid run ids (sorted, each once): the agent
    /// cannot see such a run, as it cannot see a file so named.
    pub(super) async fn orphans_and_invalid(&self) -> Result<(Vec<Orphan>, Vec<String>)> {
        self.orphans_under(&format!("{}.>", self.prefix)).await
    }

    /// `run` as an orphan: `None` when it has a meta record or nothing.
    pub(super) async fn orphan(&self, run: &str) -> Result<Option<Orphan>> {
        id::check(run)?;
        let (mut found, _) = self
            .orphans_under(&format!("{}.{run}.>", self.prefix))
            .await?;
        Ok(found.pop().filter(|o| o.run == run))
    }

    async fn orphans_under(&self, filter: &str) -> Result<(Vec<Orphan>, Vec<String>)> {
        let mut subjects = self
            .stream
            .info_with_subjects(filter)
            .await
            .map_err(|e| self.err(None, format!("cannot list {filter}: {e}")))?;
        let mut runs: BTreeMap<String, Tally> = BTreeMap::new();
        let mut invalid = std::collections::BTreeSet::new();
        while let Some((subject, count)) = subjects
            .try_next()
            .await
            .map_err(|e| self.err(None, format!("cannot list {filter}: {e}")))?
        {
            // The audit log is no run (`audit.rs`).
            if self.is_audit_subject(&subject) {
                continue;
            }
            let Some((run, seq)) = self.parse_subject(&subject) else {
                continue;
            };
            if !id::is_valid(run) {
                invalid.insert(run.to_owned());
                continue;
            }
            let t = runs.entry(run.to_owned()).or_default();
            t.messages = t.messages.saturating_add(count as u64);
            if subject == self.mark_subject(run) {
                t.pending = true;
            }
            match seq {
                Some(1) => t.meta = true,
                Some(n) => {
                    t.seqs = Some(t.seqs.map_or((n, n), |(a, b)| (a.min(n), b.max(n))));
                }
                None => {}
            }
        }
        let orphans = runs
            .into_iter()
            .filter(|(_, t)| !t.meta && t.messages > 0)
            .map(|(run, t)| Orphan {
                run,
                messages: t.messages,
                seqs: t.seqs,
                pending: t.pending,
            })
            .collect();
        Ok((orphans, invalid.into_iter().collect()))
    }
}
