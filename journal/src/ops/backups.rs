//! The backups the destructive commands keep (`rm`, `repair`, `upgrade`,
//! `recover`): listed with the disk each really holds, one restored, old
//! ones pruned.
//!
//! It exists because every destructive command keeps the run's bytes
//! before it changes them, and nothing else ever removes them: `rm` on the
//! file backend frees no disk at all (its backup is a second name of the
//! journal's inode) until the backup is pruned here.
//!
//! Where the backups are, their names and the two writes that touch them
//! are the store's ([`crate::store::backup`]); this module is what an
//! operator asks of them: which to prune, whether a backup may be put
//! back, and the copy that puts one back on JetStream.

pub use crate::store::backup::{Backup, Kind};
use crate::store::{PutBack, Store};
use crate::time::Time;
use crate::{Error, Result};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Every backup of `store`, oldest first.
pub fn list(store: &Store) -> Result<Vec<Backup>> {
    store.backups()
}

/// How many prunes killed half way left something to finish (JetStream:
/// a backup directory renamed to be removed, which `backups` does not
/// list); the next prune finishes them.
pub fn unfinished(store: &Store) -> Result<usize> {
    store.unfinished_prunes().map(|p| p.len())
}

/// The backup of `store` named `id` (as [`Backup::id`] gives it).
pub fn find(store: &Store, id: &str) -> Result<Backup> {
    list(store)?
        .into_iter()
        .find(|b| b.id == id)
        .ok_or_else(|| {
            Error::Usage(format!(
                "no backup {id} in {}; `backups` lists them",
                store.describe()
            ))
        })
}

/// What pruning removed (or, on a dry run, would remove).
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// The backups removed, oldest first.
    pub backups: Vec<Backup>,
    /// The disk freed: the sum of their `held`.
    pub freed: u64,
}

/// What a prune selected: the backups, and the ids named that are no
/// backup of the store (pruned already, by a prune that was killed or by
/// another, or never one).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The backups to remove, oldest first.
    pub backups: Vec<Backup>,
    /// The ids named that are not there.
    pub missing: Vec<String>,
}

/// The backups of `store` kept before `now - older_than`, and those named
/// by `ids`; an id that is not there is said ([`Selection::missing`]),
/// never a reason to prune none of the others.
pub fn select(
    store: &Store,
    older_than: Option<Duration>,
    ids: &[String],
    now: SystemTime,
) -> Result<Selection> {
    let all = list(store)?;
    let missing = ids
        .iter()
        .filter(|id| !all.iter().any(|b| &b.id == *id))
        .cloned()
        .collect();
    let cutoff = older_than.map(|d| Time::from_system(now.checked_sub(d).unwrap_or(now)));
    let backups = all
        .into_iter()
        .filter(|b| ids.contains(&b.id) || cutoff.is_some_and(|c| b.when < c))
        .collect();
    Ok(Selection { backups, missing })
}

/// Remove `backups` (as [`select`] chose them), oldest first, each
/// durably through the store, after finishing what an interrupted prune
/// left; with `dry_run`, remove nothing and say what would go. A removal
/// that fails stops the prune, and a rerun picks up the rest.
pub fn prune(store: &Store, backups: Vec<Backup>, dry_run: bool) -> Result<Pruned> {
    let freed = backups.iter().map(|b| b.held).sum();
    if !dry_run {
        for left in store.unfinished_prunes()? {
            store.prune_backup(&left)?;
        }
        for b in &backups {
            store.prune_backup(&b.path)?;
        }
    }
    Ok(Pruned { backups, freed })
}

/// What restoring a backup did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Restored {
    /// File store: the kept file is the run's journal again (a hard link
    /// back; the backup's name is gone).
    Linked {
        /// The run's journal.
        journal: PathBuf,
    },
    /// JetStream: the run was written back from its one-run file store,
    /// marked until whole; the backup directory is gone.
    Copied {
        /// Records copied back.
        records: u64,
    },
}

/// Whether backup `id` may be put back, every check made and nothing
/// written (what a dry run says): only `rm`'s backups are restored, and
/// only while no other run of that id exists. A repair backup holds a
/// torn line (putting it back would tear the journal again), an upgrade
/// backup a version-3 journal the run may have gone on from since, and a
/// recover backup a damaged journal (or bytes of it): all three are
/// refused, the backup left for a person to read.
pub fn check_restore(store: &Store, id: &str) -> Result<Backup> {
    let b = find(store, id)?;
    let refuse = |holds: &str, why: &str| {
        Err(Error::refused(
            &b.run,
            format!(
                "backup {id} holds {holds}; {why}, so it is not restored; read it at {}",
                crate::shell::shown(&b.path)
            ),
        ))
    };
    match b.kind {
        Kind::Rm => {}
        Kind::Repair => {
            return refuse(
                "the torn final line repair cut",
                "putting it back would tear the journal again",
            )
        }
        Kind::Upgrade => {
            return refuse(
                "the version-3 journal upgrade replaced",
                "the run may have gone on since, and putting it back would drop those records",
            )
        }
        Kind::Recover => {
            return refuse(
                "what recover replaced: the damaged journal (or the bytes of it that could not be read)",
                "putting it back would bring the damage back and drop what the run did since",
            )
        }
    }
    // A restore of this backup that was interrupted is finished; a run
    // another command left half written is refused, naming its command.
    match store.pending(&b.run)? {
        Some(p) if p.is_of(&restore_intent(id)) => return Ok(b),
        Some(p) => return Err(p.refusal(&b.run)),
        None => {}
    }
    if store.exists(&b.run)? && !store.holds_backup(&b)? {
        return Err(Error::refused(
            &b.run,
            format!(
                "a run {} exists in {}; backup {id} is restored only while none does (delete or rename that run first); nothing was changed",
                b.run,
                store.describe()
            ),
        ));
    }
    Ok(b)
}

/// The mark a JetStream restore of backup `id` leaves on a run it has not
/// finished writing: its command, so that the same restore again goes on.
fn restore_intent(id: &str) -> crate::store::Intent {
    crate::store::Intent {
        command: vec!["backups".into(), "restore".into(), id.into()],
        at: crate::time::Time::now(),
    }
}

/// Put the run of backup `id` back ([`check_restore`] first). File store:
/// the backup is linked back to the journal's name (crash-safe; a restore
/// killed half way is finished by the next). JetStream: the run is written
/// back from the backup as `fork` writes a new run, marked until it is
/// whole ([`Store::create_marked`]: killed half way, readers refuse it,
/// `verify` names it, and the same restore again finishes it), and only
/// then the backup removed.
pub fn restore(store: &Store, id: &str) -> Result<Restored> {
    let b = check_restore(store, id)?;
    // Logged (issue 38): no run before (or the start of this backup's
    // copy, which the restore finishes), the backup's records after.
    let plan = match store.actor() {
        None => crate::store::Plan::default(),
        Some(_) => {
            let kept = match store.keeps_sizes() {
                true => b.path.clone(),
                false => b.path.join(format!("{}.json", b.run)),
            };
            let bytes = std::fs::read(&kept).map_err(|e| Error::io(&kept, e))?;
            let after =
                crate::audit::Digest::of_lines(crate::lines::split(&bytes).map(|l| l.bytes), b"");
            crate::store::Plan {
                op: crate::state::Op::Restore.word().to_owned(),
                run: b.run.clone(),
                before: store.state_digest(&b.run)?,
                written: crate::audit::Seqs::range(1, after.records),
                after: Some(after),
                detail: Some(format!("from backup {id}")),
                ..Default::default()
            }
        }
    };
    store.audited(&plan, || put_back(store, &b, id))
}

/// [`restore`]'s write.
fn put_back(store: &Store, b: &Backup, id: &str) -> Result<Restored> {
    match store.put_back(b)? {
        PutBack::Linked(journal) => Ok(Restored::Linked { journal }),
        PutBack::Copy(from) => {
            let mut intent = restore_intent(id);
            let pending = store.pending(&b.run)?;
            if let Some(p) = &pending {
                intent.at = p.began().unwrap_or(intent.at);
            }
            let kept = from.read(&b.run)?;
            let n = kept.entries.len() as u64;
            if pending.is_none() && store.exists(&b.run)? {
                // Unmarked and a prefix of the backup (check_restore): all
                // of it when the restore was killed before the backup was
                // removed, else what an older fisk-admin's copy left.
                let have = store.read(&b.run)?;
                if have.entries.len() as u64 != n {
                    copy_rest(store, &from, &b.run, id)?;
                }
                store.prune_backup(&b.path)?;
                return Ok(Restored::Copied { records: n });
            }
            let records: Vec<(u64, Vec<u8>)> = kept
                .entries
                .into_iter()
                .map(|e| (e.record.seq, e.raw))
                .collect();
            store.create_marked(&b.run, records, &intent)?;
            store.prune_backup(&b.path)?;
            Ok(Restored::Copied { records: n })
        }
    }
}

/// Append to `run` on `store` the records of backup `id` (the one-run
/// store `from`) that it lacks, as `migrate` finishes a copy, verified.
fn copy_rest(store: &Store, from: &Store, run: &str, id: &str) -> Result<()> {
    let opts = crate::migrate::Options::default();
    let progress = crate::migrate::Progress::default();
    let reports = crate::migrate::migrate(from, store, &[run.to_owned()], &opts, &progress);
    match reports.into_iter().next() {
        Some(r) if r.result.ok() => Ok(()),
        Some(r) => Err(Error::refused(
            run,
            format!(
                "copying backup {id} back gave {}{}; the backup is kept",
                r.result.word(),
                match r.notes.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", r.notes.join("; ")),
                }
            ),
        )),
        None => Err(Error::refused(
            run,
            format!("backup {id} was not copied back"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rm_backup_holds_the_disk_until_pruned_and_restores_by_link() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::directory(dir.path());
        let line = br#"{"v":1,"seq":1,"t":"2026-01-01T00:00:00Z","k":"meta","id":"r","created":"2026-01-01T00:00:00Z"}"#;
        store
            .write_whole("r", &[&line[..], b"\n"].concat())
            .unwrap();
        store.delete("r").unwrap();
        let all = list(&store).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].kind, Kind::Rm);
        assert!(all[0].held > 0);
        let restored = restore(&store, &all[0].id).unwrap();
        assert!(matches!(restored, Restored::Linked { .. }));
        assert!(list(&store).unwrap().is_empty());
        assert!(store.exists("r").unwrap());
        store.delete("r").unwrap();
        let old = select(&store, Some(Duration::ZERO), &[], SystemTime::now()).unwrap();
        assert_eq!(old.backups.len(), 1);
        prune(&store, old.backups, false).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_prune_named_ids_prunes_what_is_there_and_says_what_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::directory(dir.path());
        let line = br#"{"seq":1}"#;
        for run in ["a", "b"] {
            store
                .write_whole(run, &[&line[..], b"\n"].concat())
                .unwrap();
            store.delete(run).unwrap();
        }
        let ids: Vec<String> = list(&store).unwrap().into_iter().map(|b| b.id).collect();
        let first = select(&store, None, &ids[..1], SystemTime::now()).unwrap();
        prune(&store, first.backups, false).unwrap();
        // The same list again, one already gone: the other is pruned.
        let again = select(&store, None, &ids, SystemTime::now()).unwrap();
        assert_eq!(again.missing, ids[..1]);
        assert_eq!(again.backups.len(), 1);
        prune(&store, again.backups, false).unwrap();
        assert!(list(&store).unwrap().is_empty());
    }
}
