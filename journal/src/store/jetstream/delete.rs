//! Deleting runs: migrate's delete of a verified copy's source, and `rm`,
//! which first keeps every message of the run as a one-run file store.
//!
//! The backup is written by the file store itself ([`FileStore::new_backup`]
//! and [`FileStore::write_whole`], its public API), outside the runtime:
//! the blocking facade reads the run ([`Core::to_keep`]), keeps it
//! ([`keep_run`]), then purges it ([`Core::purge_kept`]).

use super::core::Core;
use super::{as_lines, sort_by_seq};
use crate::error::{Error, Result};
use crate::id;
use crate::store::file::FileStore;
use std::path::{Path, PathBuf};

/// A run as `rm` keeps it, read before it is purged.
pub(super) struct ToKeep {
    /// The records in seq order, one line each: the kept journal.
    pub(super) journal: Vec<u8>,
    /// The messages on no record subject, as JSON lines (empty for none).
    pub(super) others: Vec<u8>,
    /// The last stream sequence read: the purge stops there.
    pub(super) upto: u64,
}

impl Core {
    /// Delete a copied run by purging `<prefix>.<id>.>` (no backup: its
    /// copy is verified), only when the run still ends at seq `last`;
    /// returns how many messages were removed. The purge is bounded by the
    /// stream sequence of that record, so a record appended meanwhile
    /// survives it.
    pub(super) async fn delete_copied(&self, run: &str, last: u64) -> Result<u64> {
        id::check(run)?;
        let Some(m) = self.last_of_run(run).await? else {
            return Err(self.not_found(run));
        };
        let have = self.parse_subject(&m.subject).and_then(|(_, s)| s);
        if have != Some(last) {
            return Err(Error::SourceChanged {
                run: run.to_owned(),
                have: have.unwrap_or(0),
                copied: last,
            });
        }
        self.purge_through(run, m.sequence).await
    }

    /// Purge the run's messages (`<prefix>.<id>.>`) stored up to stream
    /// sequence `upto`; one stored after it survives. Returns how many were
    /// removed.
    async fn purge_through(&self, run: &str, upto: u64) -> Result<u64> {
        let filter = format!("{}.{run}.>", self.prefix);
        self.stream
            .purge()
            .filter(&filter)
            .sequence(upto + 1)
            .await
            .map(|r| r.purged)
            .map_err(|e| self.err(Some(run), format!("cannot purge {filter}: {e}")))
    }

    /// Every message of the run, as `rm` keeps it: the records in seq
    /// order, one line each (a file journal), and beside them any message
    /// on a subject that names no record (damage, a foreign writer), with
    /// its subject, so nothing is lost.
    pub(super) async fn to_keep(&self, run: &str) -> Result<ToKeep> {
        id::check(run)?;
        let mut messages = self.read_run(run, true).await?;
        let upto = messages.iter().map(|m| m.stream_seq).max().unwrap_or(0);
        sort_by_seq(&mut messages);
        let journal = as_lines(messages.iter().filter(|m| m.subject_seq.is_some()));
        let mut others = Vec::new();
        for m in messages.iter().filter(|m| m.subject_seq.is_none()) {
            let line = serde_json::json!({
                "subject": m.subject,
                "stream_seq": m.stream_seq,
                "body": String::from_utf8_lossy(&m.body),
                "body_hex": crate::digest::hex(&m.body),
            });
            others.extend_from_slice(line.to_string().as_bytes());
            others.push(b'\n');
        }
        Ok(ToKeep {
            journal,
            others,
            upto,
        })
    }

    /// Purge exactly the messages [`to_keep`](Self::to_keep) read (up to
    /// stream sequence `upto`), once they are kept. A message stored
    /// meanwhile is not purged, and makes this a warning. Returns the
    /// messages purged and a warning when the run may not be gone
    /// entirely.
    pub(super) async fn purge_kept(&self, run: &str, upto: u64) -> Result<(u64, Option<String>)> {
        let purged = self.purge_through(run, upto).await?;
        let warning = match self.last_of_run(run).await {
            Ok(None) => None,
            Ok(Some(_)) => Some(format!(
                "a writer stored more of run {run} while it was deleted: the messages saved were \
                 purged, the newer ones are still on the stream; delete the run again once the \
                 writer has stopped (its backup will hold them)"
            )),
            Err(e) => Some(format!(
                "run {run} was purged, but whether anything was stored meanwhile could not be \
                 checked ({e}); list the store to see"
            )),
        };
        Ok((purged, warning))
    }
}

/// Keep a run as a one-run file store: `journal` as `<dir>/<run>.json`, in
/// a new directory `dir` = `<keep>[-<N>]` (the first free N, none for the
/// first), which `migrate` copies back. The file store makes both: the
/// directory ([`FileStore::new_backup`]: 0700, every directory created on
/// the way fsynced into its parent) and the journal
/// ([`FileStore::write_whole`]: byte for byte, whatever the stream held,
/// damaged runs above all; 0600, fsynced, named only once durable, no run
/// lock). `others` (messages on no record subject, JSON lines), when any,
/// go to `<dir>/<run>.other.jsonl` (not a journal, so written here),
/// fsynced with the directory. On failure nothing half-written is left
/// behind. Returns the journal's path.
pub(super) fn keep_run(keep: &Path, run: &str, journal: &[u8], others: &[u8]) -> Result<PathBuf> {
    let store = FileStore::new_backup(keep)?;
    let dir = store.dir();
    let file = dir.join(format!("{run}.json"));
    let other = dir.join(format!("{run}.other.jsonl"));
    let written = store
        .write_whole(run, journal)
        .and_then(|_| match others.is_empty() {
            true => Ok(()),
            false => crate::durable::write_new(&other, others)
                .map_err(|e| Error::io(&other, e))
                .and_then(|()| crate::durable::sync_dir(dir).map_err(|e| Error::io(dir, e))),
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_file(&other);
        let _ = std::fs::remove_dir(dir);
        return Err(e);
    }
    Ok(file)
}
