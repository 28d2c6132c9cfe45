//! Deleting runs: migrate's delete of a verified copy's source, and `rm`,
//! which first keeps every message of the run as a one-run file store.

use super::{as_lines, sort_by_seq, JetStreamStore};
use crate::error::{Error, Result};
use crate::id;
use std::path::PathBuf;

impl JetStreamStore {
    /// Delete a copied run by purging `<prefix>.<id>.>` (no backup: its
    /// copy is verified), only when the run still ends at seq `last`;
    /// returns how many messages were removed. The purge is bounded by the stream sequence of that record,
    /// so a record appended meanwhile survives it.
    pub fn delete_copied(&self, run: &str, last: u64) -> Result<u64> {
        id::check(run)?;
        self.block_on(async {
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
        })
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

    /// Delete a run (`rm`), keeping it: every message of the run is first
    /// written, in seq order and one line each (a file journal), to
    /// `<keep>/<run>.json`, fsynced; then exactly those messages are
    /// purged. A message stored meanwhile is not purged, and makes this an
    /// warning. Returns the messages purged, the file kept, and a warning
    /// when the run may not be gone entirely (once the purge is done, the
    /// backup is always reported).
    pub fn delete_keeping(
        &self,
        run: &str,
        keep: &std::path::Path,
    ) -> Result<(u64, PathBuf, Option<String>)> {
        id::check(run)?;
        self.block_on(async {
            let mut messages = self.read_run(run, true).await?;
            let upto = messages.iter().map(|m| m.stream_seq).max().unwrap_or(0);
            // The journal: the records in seq order, one line each. A
            // message on a subject that names no record (damage, a foreign
            // writer) goes beside it with its subject, so nothing is lost.
            sort_by_seq(&mut messages);
            let bytes = as_lines(messages.iter().filter(|m| m.subject_seq.is_some()));
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
            let kept = keep_new(keep, run, &bytes, &others)?;
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
            Ok((purged, kept, warning))
        })
    }
}

/// `bytes` as `<dir>/<run>.json` in a new directory `dir` = `<keep>-<N>`
/// (the first free N, none for the first), 0700, the file 0600, all
/// fsynced with every directory created on the way: a file store holding
/// the one run, which `migrate` copies back. `others` (messages on no
/// record subject, JSON lines), when any, go to `<dir>/<run>.other.jsonl`.
/// On failure nothing half-written is left behind.
///
/// Not [`FileStore::create_whole`](crate::store::file::FileStore::create_whole):
/// that writer keeps the appender's rules, and a backup must hold whatever
/// the stream held, byte for byte, damaged runs above all. It refuses an
/// empty body or one holding a raw newline, and a gap in the seqs; it
/// writes no file for a run with no records; where there are no unnamed
/// files it takes the run lock, leaving `<run>.lock` in the backup; and it
/// does not fsync the directories it creates on the way.
pub(super) fn keep_new(
    keep: &std::path::Path,
    run: &str,
    bytes: &[u8],
    others: &[u8],
) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let sync = |d: &std::path::Path| crate::durable::sync_dir(d).map_err(|e| Error::io(d, e));
    let parent = keep.parent().unwrap_or(std::path::Path::new("."));
    // Each missing ancestor, top down, fsynced into its own parent.
    let missing: Vec<&std::path::Path> = parent
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .collect();
    for d in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(d, e)),
        }
        if let Some(up) = d.parent() {
            sync(up)?;
        }
    }
    for n in 0..100 {
        let dir = match n {
            0 => keep.to_path_buf(),
            _ => PathBuf::from(format!("{}-{n}", keep.display())),
        };
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        }
        let file = dir.join(format!("{run}.json"));
        let other = dir.join(format!("{run}.other.jsonl"));
        let written = crate::durable::write_new(&file, bytes)
            .map_err(|e| Error::io(&file, e))
            .and_then(|()| match others.is_empty() {
                true => Ok(()),
                false => {
                    crate::durable::write_new(&other, others).map_err(|e| Error::io(&other, e))
                }
            })
            .and_then(|()| sync(&dir))
            .and_then(|()| sync(parent));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&file);
            let _ = std::fs::remove_file(&other);
            let _ = std::fs::remove_dir(&dir);
            return Err(e);
        }
        return Ok(file);
    }
    Err(Error::NoFreeName {
        dir: keep.to_path_buf(),
        like: "a backup directory".into(),
    })
}
