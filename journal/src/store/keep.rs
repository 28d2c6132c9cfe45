//! Where a run is kept before a write changes or removes it (JetStream:
//! a one-run file store under the XDG state home), and the backups so
//! kept as the store lists, prunes and puts them back.

use super::*;

/// Where a JetStream run is kept before `why` (`removed`, `upgraded`)
/// changes it: `$XDG_STATE_HOME/fisk-admin/<why>/<STREAM>/<id>-<UTC time>`
/// (else under `~/.local/state`), a directory that becomes a file store of
/// the one run.
pub(super) fn keep_dir(
    why: &str,
    stream: &str,
    run: &str,
    command: &str,
    undone: &str,
) -> crate::Result<PathBuf> {
    let (home, _) = file::state_home().map_err(|_| {
        crate::Error::Usage(format!(
            "{command} on JetStream keeps each run in $XDG_STATE_HOME/fisk-admin/{why} \
             (else ~/.local/state/...), but neither XDG_STATE_HOME nor HOME is an \
             absolute path; set one of them; nothing was {undone}"
        ))
    })?;
    let stamp = crate::time::compact(std::time::SystemTime::now());
    Ok(home
        .join("fisk-admin")
        .join(why)
        .join(stream)
        .join(backup::dir_name(run, &stamp)))
}

/// Keep a run as a one-run file store: `journal` as `<dir>/<run>.json`, in
/// a new directory `dir` = `<keep>[-<N>]` (the first free N, none for the
/// first), which `migrate` copies back. Both go through the [`Store`]: the
/// directory ([`Store::new_backup`]: 0700, every directory created on the
/// way fsynced into its parent) and the journal ([`Store::write_whole`]:
/// byte for byte, whatever the stream held, damaged runs above all; 0600,
/// fsynced, named only once durable, no run lock). `others` (messages on
/// no record subject, JSON lines), when any, go to
/// `<dir>/<run>.other.jsonl` (not a journal, so written here), fsynced
/// with the directory. On failure nothing half-written is left behind.
/// Returns the journal's path.
pub(crate) fn keep_run(
    keep: &std::path::Path,
    run: &str,
    journal: &[u8],
    others: &[u8],
) -> crate::Result<PathBuf> {
    use crate::Error;
    let store = Store::new_backup(keep)?;
    let crate::Where::Path(dir) = store.place() else {
        return Err(Error::refused(run, "a backup is kept in a file store"));
    };
    let file = dir.join(format!("{run}.json"));
    let other = dir.join(format!("{run}.other.jsonl"));
    let written = store
        .write_whole(run, journal)
        .and_then(|_| match others.is_empty() {
            true => Ok(()),
            false => crate::durable::write_new(&other, others)
                .map_err(|e| Error::io(&other, e))
                .and_then(|()| crate::durable::sync_dir(&dir).map_err(|e| Error::io(&dir, e))),
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_file(&other);
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    Ok(file)
}

/// [`keep_run`], unless a copy of exactly these bytes was kept before by
/// the same command, killed before it went on ([`kept_before`]): that
/// one's journal then. For `rm` and `recover`, which never remove a copy
/// they kept (two `upgrade`s at once each remove their own on a lost
/// race, so they keep one each).
pub(crate) fn keep_run_once(
    keep: &std::path::Path,
    run: &str,
    journal: &[u8],
    others: &[u8],
) -> crate::Result<PathBuf> {
    match kept_before(keep, run, journal, others) {
        Some(file) => Ok(file),
        None => keep_run(keep, run, journal, others),
    }
}

/// A copy of `run` kept before beside `keep` (a directory
/// `<run>-<UTC time>[-N]` under the same parent) holding exactly
/// `journal` and `others`: what the same command left when it was killed
/// after keeping the run and before changing it (issue 36.5: `rm` again
/// kept a second copy). Its journal's path; `None` when there is none.
pub(super) fn kept_before(
    keep: &std::path::Path,
    run: &str,
    journal: &[u8],
    others: &[u8],
) -> Option<PathBuf> {
    let parent = keep.parent()?;
    let prefix = format!("{run}-");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.into_iter().find_map(|d| {
        let file = d.join(format!("{run}.json"));
        let other = std::fs::read(d.join(format!("{run}.other.jsonl"))).unwrap_or_default();
        let same = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_file())
            && std::fs::read(&file).is_ok_and(|b| b == journal)
            && other == others;
        same.then_some(file)
    })
}

/// The backups the destructive commands keep, as a store lists, prunes and
/// puts them back.
impl Store {
    /// Every backup the destructive commands kept of this store's runs,
    /// oldest first ([`backup`]).
    pub fn backups(&self) -> crate::Result<Vec<backup::Backup>> {
        match self {
            Store::File(f) => f.backups(),
            Store::JetStream(j) => {
                let (mut found, _) = backup::list_kept(j.name())?;
                found.sort_by(|a, b| (a.when, &a.id).cmp(&(b.when, &b.id)));
                Ok(found)
            }
        }
    }

    /// What prunes killed half way left (JetStream: a backup directory
    /// renamed to be removed), for the next prune to finish.
    pub(crate) fn unfinished_prunes(&self) -> crate::Result<Vec<PathBuf>> {
        match self {
            Store::File(_) => Ok(Vec::new()),
            Store::JetStream(j) => backup::list_kept(j.name()).map(|(_, p)| p),
        }
    }

    /// Remove backup `b`, or finish the removal an interrupted prune left
    /// at `b.path`, durably: the file beside the journals (through the
    /// directory seam), or the backup directory (renamed first).
    pub(crate) fn prune_backup(&self, path: &std::path::Path) -> crate::Result<()> {
        match self {
            Store::File(f) => f.prune_backup(path),
            Store::JetStream(_) => backup::remove_kept(path),
        }
    }

    /// Whether the run `b.run` stored now is what putting backup `b` back
    /// makes, or the start of it: a restore interrupted after the run's
    /// name (file) or first records (JetStream) were stored, which the
    /// next restore finishes. Its records, whole lines, are a prefix of
    /// the backup's.
    pub(crate) fn holds_backup(&self, b: &backup::Backup) -> crate::Result<bool> {
        let kept = match self {
            Store::File(_) => b.path.clone(),
            Store::JetStream(_) => b.path.join(format!("{}.json", b.run)),
        };
        let kept = std::fs::read(&kept).map_err(|e| crate::Error::io(&kept, e))?;
        let have = self.raw(&b.run)?;
        Ok(kept.starts_with(&have) && (have.is_empty() || have.ends_with(b"\n")))
    }

    /// Start putting run `b.run` back from its backup `b`: on the file
    /// backend it is done here (the backup linked back, crash-safe: see
    /// `FileStore::restore_backup`); on JetStream the run is to be copied
    /// back from the one-run file store the backup is, which the caller
    /// does (a copy between stores is `migrate`'s), then removes the
    /// backup ([`prune_backup`](Self::prune_backup)).
    pub(crate) fn put_back(&self, b: &backup::Backup) -> crate::Result<PutBack> {
        match self {
            Store::File(f) => f.restore_backup(&b.run, &b.path).map(PutBack::Linked),
            Store::JetStream(_) => Ok(PutBack::Copy(Store::File(file::FileStore::new(&b.path)))),
        }
    }
}
