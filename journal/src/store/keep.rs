//! Where a run is kept before a write changes or removes it (JetStream:
//! a one-run file store under the XDG state home).

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
