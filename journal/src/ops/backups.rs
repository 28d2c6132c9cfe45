//! The backups the destructive commands keep (`rm`, `repair`, `upgrade`,
//! `recover`):
//! listed with the disk each really holds, one restored, old ones pruned.
//!
//! It exists because every destructive command keeps the run's bytes
//! before it changes them, and nothing else ever removes them: `rm` on the
//! file backend frees no disk at all (its backup is a second name of the
//! journal's inode) until the backup is pruned here.
//!
//! Where the backups are (their names are made by `keep_beside` and
//! `keep_dir` in the store layer; this module only reads them back):
//! - file store: beside the journal, `<id>.<why>-<UTC time>[-N].bak`,
//!   `why` being `removed` (rm, a hard link), `torn` (repair, the cut
//!   bytes), `v3` (upgrade, a hard link of the original), `recovered`
//!   (recover, a hard link of the damaged original) or `unreadable`
//!   (recover, the bytes it could not read);
//! - JetStream: `$XDG_STATE_HOME/fisk-admin/<why>/<STREAM>/<id>-<UTC
//!   time>[-N]/`, a one-run file store, `why` being `removed`, `upgraded`
//!   or `recovered`.
//!
//! A backup's id, the one a person types, is its file name (file store)
//! or `<why>/<directory name>` (JetStream).

use crate::store::file::FileStore;
use crate::store::Store;
use crate::time::Time;
use crate::{Error, Result};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Which command kept a backup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Kind {
    /// `rm`: the whole run, as it was deleted.
    Rm,
    /// `repair`: the torn final line it cut.
    Repair,
    /// `upgrade`: the version-3 journal it replaced.
    Upgrade,
    /// `recover`: the damaged journal it replaced, or the bytes of it
    /// that could not be read.
    Recover,
}

impl Kind {
    /// The word `backups` shows.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Rm => "rm",
            Kind::Repair => "repair",
            Kind::Upgrade => "upgrade",
            Kind::Recover => "recover",
        }
    }

    /// The kind a file backup's `why` names.
    fn of_file(why: &str) -> Option<Kind> {
        match why {
            "removed" => Some(Kind::Rm),
            "torn" => Some(Kind::Repair),
            "v3" => Some(Kind::Upgrade),
            "recovered" | "unreadable" => Some(Kind::Recover),
            _ => None,
        }
    }
}

/// The JetStream backup directories (`$XDG_STATE_HOME/fisk-admin/<why>`)
/// and their kinds.
const KEPT_DIRS: [(&str, Kind); 3] = [
    ("removed", Kind::Rm),
    ("upgraded", Kind::Upgrade),
    ("recovered", Kind::Recover),
];

/// One backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// What a person types to name it: its file name (file store), or
    /// `<why>/<directory name>` (JetStream).
    pub id: String,
    /// Which command kept it.
    pub kind: Kind,
    /// The run it is of.
    pub run: String,
    /// When it was kept (from its name).
    pub when: Time,
    /// The file (file store) or directory (JetStream).
    pub path: PathBuf,
    /// Its size in bytes (every file of it).
    pub bytes: u64,
    /// The disk it alone holds: nothing for a second name of a file that
    /// another name (the run's journal, or an earlier backup listed)
    /// still holds; else its allocated blocks.
    pub held: u64,
}

/// Split a name that ends in `-<UTC time>[-N]` (as `time::compact`
/// writes it) into what is before the `-` and the time.
fn split_stamp(name: &str) -> Option<(&str, Time)> {
    // A taken name got `-N` after the stamp (`first_free_path`).
    let base = match name.rsplit_once('-') {
        Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => name,
    };
    // `20231114T221320.120000000Z`: 26 bytes.
    let cut = base.len().checked_sub(26)?;
    let (head, stamp) = (base.get(..cut)?, base.get(cut..)?);
    let head = head.strip_suffix('-')?;
    let digits = |r: std::ops::Range<usize>| {
        stamp
            .get(r)
            .filter(|s| s.bytes().all(|c| c.is_ascii_digit()))
    };
    let rfc = format!(
        "{}-{}-{}T{}:{}:{}.{}Z",
        digits(0..4)?,
        digits(4..6)?,
        digits(6..8)?,
        digits(9..11)?,
        digits(11..13)?,
        digits(13..15)?,
        digits(16..25)?
    );
    Time::parse(&rfc).ok().map(|t| (head, t))
}

/// The backup a file store's directory entry `name` is, if it is one:
/// its kind, run and time.
fn parse_file_name(name: &str) -> Option<(Kind, String, Time)> {
    let (head, when) = split_stamp(name.strip_suffix(".bak")?)?;
    let (run, why) = head.rsplit_once('.')?;
    let kind = Kind::of_file(why)?;
    crate::id::check(run).ok()?;
    Some((kind, run.to_owned(), when))
}

/// Every backup of `store`, oldest first.
pub fn list(store: &Store) -> Result<Vec<Backup>> {
    let mut found = match store {
        Store::File(f) => list_file(f)?,
        Store::JetStream(j) => list_kept(&kept_root(j.name())?)?,
    };
    found.sort_by(|a, b| (a.when, &a.id).cmp(&(b.when, &b.id)));
    held_once(store, &mut found);
    Ok(found)
}

/// The backups beside the journals of a file store.
fn list_file(f: &FileStore) -> Result<Vec<Backup>> {
    let entries = match std::fs::read_dir(f.dir()) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(f.dir(), e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(f.dir(), e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Some((kind, run, when)) = parse_file_name(&name) else {
            continue;
        };
        let path = entry.path();
        // Never followed: a backup is a regular file this tool made.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        found.push(Backup {
            id: name,
            kind,
            run,
            when,
            path,
            bytes: meta.len(),
            held: meta.blocks().saturating_mul(512),
        });
    }
    Ok(found)
}

/// Where a JetStream stream's backups are kept.
fn kept_root(stream: &str) -> Result<PathBuf> {
    let (home, _) = crate::store::file::state_home()?;
    Ok(home.join("fisk-admin").join("{why}").join(stream))
}

/// The one-run file stores kept for a stream under `root` (whose
/// `{why}` component is replaced by each of [`KEPT_DIRS`]).
fn list_kept(root: &Path) -> Result<Vec<Backup>> {
    let mut found = Vec::new();
    for (why, kind) in KEPT_DIRS {
        let dir = replace_why(root, why);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Some((run, when)) = split_stamp(&name) else {
                continue;
            };
            if crate::id::check(run).is_err() {
                continue;
            }
            let path = entry.path();
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            let (bytes, held) = dir_size(&path)?;
            found.push(Backup {
                id: format!("{why}/{name}"),
                kind,
                run: run.to_owned(),
                when,
                path,
                bytes,
                held,
            });
        }
    }
    Ok(found)
}

/// `root` with its `{why}` component replaced by `why`.
fn replace_why(root: &Path, why: &str) -> PathBuf {
    root.components()
        .map(|c| match c.as_os_str().to_str() {
            Some("{why}") => std::ffi::OsStr::new(why),
            _ => c.as_os_str(),
        })
        .collect()
}

/// The size and allocated bytes of the files in a backup directory.
fn dir_size(dir: &Path) -> Result<(u64, u64)> {
    let mut size = (0u64, 0u64);
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if let Ok(m) = std::fs::symlink_metadata(entry.path()) {
            size.0 = size.0.saturating_add(m.len());
            size.1 = size.1.saturating_add(m.blocks().saturating_mul(512));
        }
    }
    Ok(size)
}

/// A file reached by several names is counted once: a backup that is a
/// second name of its run's journal (same device and inode) holds nothing
/// extra, and of several backups of one inode only the first listed holds
/// its blocks.
fn held_once(store: &Store, found: &mut [Backup]) {
    let Store::File(f) = store else {
        return;
    };
    let mut seen: HashMap<(u64, u64), ()> = HashMap::new();
    for b in found.iter_mut() {
        let Ok(meta) = std::fs::symlink_metadata(&b.path) else {
            continue;
        };
        if meta.nlink() < 2 {
            continue;
        }
        let key = (meta.dev(), meta.ino());
        let journal_is_it = f
            .journal_path(&b.run)
            .ok()
            .and_then(|j| std::fs::symlink_metadata(j).ok())
            .is_some_and(|j| (j.dev(), j.ino()) == key);
        if journal_is_it || seen.insert(key, ()).is_some() {
            b.held = 0;
        }
    }
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

/// The backups of `store` kept before `now - older_than`, and those named
/// by `ids` (every one must exist; nothing is removed otherwise).
pub fn select(
    store: &Store,
    older_than: Option<Duration>,
    ids: &[String],
    now: SystemTime,
) -> Result<Vec<Backup>> {
    let all = list(store)?;
    for id in ids {
        if !all.iter().any(|b| &b.id == id) {
            return Err(Error::Usage(format!(
                "no backup {id} in {}; nothing was pruned",
                store.describe()
            )));
        }
    }
    let cutoff = older_than.map(|d| Time::from_system(now.checked_sub(d).unwrap_or(now)));
    Ok(all
        .into_iter()
        .filter(|b| ids.contains(&b.id) || cutoff.is_some_and(|c| b.when < c))
        .collect())
}

/// Remove `backups` (as [`select`] chose them); with `dry_run`, remove
/// nothing and say what would go. A removal that fails stops the prune:
/// what went before is in the error's context no more, so the backups
/// are removed oldest first and a rerun picks up the rest.
pub fn prune(backups: Vec<Backup>, dry_run: bool) -> Result<Pruned> {
    let freed = backups.iter().map(|b| b.held).sum();
    if !dry_run {
        for b in &backups {
            remove(b)?;
        }
    }
    Ok(Pruned { backups, freed })
}

/// Remove one backup: its file and the directory entry made durable
/// (file store), or its directory (JetStream).
fn remove(b: &Backup) -> Result<()> {
    let is_dir = std::fs::symlink_metadata(&b.path)
        .map_err(|e| Error::io(&b.path, e))?
        .is_dir();
    let removed = match is_dir {
        true => std::fs::remove_dir_all(&b.path),
        false => std::fs::remove_file(&b.path),
    };
    removed.map_err(|e| Error::io(&b.path, e))?;
    if let Some(parent) = b.path.parent() {
        crate::durable::sync_dir(parent).map_err(|e| Error::io(parent, e))?;
    }
    Ok(())
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
    /// JetStream: the run was copied back from its one-run file store
    /// (migrate) and verified; the backup directory is gone.
    Copied {
        /// Records copied back.
        records: u64,
    },
}

/// Put the run of backup `id` back. Only `rm`'s backups are restored, and
/// only while no run of that id exists: a repair backup holds a torn line
/// (putting it back would tear the journal again) and an upgrade backup a
/// version-3 journal the run may have gone on from since, and a recover
/// backup a damaged journal (or bytes of it); all three are refused, the
/// backup left for a person to read.
pub fn restore(store: &Store, id: &str) -> Result<Restored> {
    let b = find(store, id)?;
    match b.kind {
        Kind::Rm => {}
        Kind::Repair => {
            return Err(Error::refused(
                &b.run,
                format!(
                    "backup {id} holds the torn final line repair cut; putting it back would tear the journal again, so it is not restored; read it at {}",
                    crate::shell::shown(&b.path)
                ),
            ))
        }
        Kind::Upgrade => {
            return Err(Error::refused(
                &b.run,
                format!(
                    "backup {id} holds the version-3 journal upgrade replaced; the run may have gone on since, and putting it back would drop those records, so it is not restored; read it at {}",
                    crate::shell::shown(&b.path)
                ),
            ))
        }
        Kind::Recover => {
            return Err(Error::refused(
                &b.run,
                format!(
                    "backup {id} holds what recover replaced: the damaged journal (or the bytes of it that could not be read); putting it back would bring the damage back and drop what the run did since, so it is not restored; read it at {}",
                    crate::shell::shown(&b.path)
                ),
            ))
        }
    }
    if store.exists(&b.run)? {
        return Err(Error::refused(
            &b.run,
            format!(
                "a run {} exists in {}; backup {id} is restored only while none does (delete or rename that run first); nothing was changed",
                b.run,
                store.describe()
            ),
        ));
    }
    match store {
        Store::File(f) => {
            let journal = f.journal_path(&b.run)?;
            // `link` refuses a name taken meanwhile: a run created since the
            // check above is never replaced.
            std::fs::hard_link(&b.path, &journal).map_err(|e| Error::io(&journal, e))?;
            std::fs::remove_file(&b.path).map_err(|e| Error::io(&b.path, e))?;
            crate::durable::sync_dir(f.dir()).map_err(|e| Error::io(f.dir(), e))?;
            Ok(Restored::Linked { journal })
        }
        Store::JetStream(_) => {
            let from = Store::File(FileStore::new(&b.path));
            let opts = crate::migrate::Options {
                dry_run: false,
                include_corrupt: false,
                allow_live: false,
                delete_source: false,
                upgrade: false,
                jobs: 1,
            };
            let progress = crate::migrate::Progress::default();
            let reports = crate::migrate::migrate(
                &from,
                store,
                std::slice::from_ref(&b.run),
                &opts,
                &progress,
            );
            let report = reports.into_iter().next();
            match report {
                Some(r) if r.result.ok() => {
                    std::fs::remove_dir_all(&b.path).map_err(|e| Error::io(&b.path, e))?;
                    Ok(Restored::Copied { records: r.records })
                }
                Some(r) => Err(Error::refused(
                    &b.run,
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
                    &b.run,
                    format!("backup {id} was not copied back"),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_kind_run_and_time() {
        let (k, r, t) = parse_file_name("a-b.removed-20231114T221320.120000000Z.bak").unwrap();
        assert_eq!((k, r.as_str()), (Kind::Rm, "a-b"));
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.12Z");
        let (k, _, _) = parse_file_name("r.torn-20231114T221320.120000000Z-3.bak").unwrap();
        assert_eq!(k, Kind::Repair);
        assert!(parse_file_name("r.json").is_none());
        assert!(parse_file_name("r.other-20231114T221320.120000000Z.bak").is_none());
        let (run, _) = split_stamp("run-7-20231114T221320.120000000Z-1").unwrap();
        assert_eq!(run, "run-7");
    }

    #[test]
    fn an_rm_backup_holds_the_disk_until_pruned_and_restores_by_link() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::File(FileStore::new(dir.path()));
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
        assert_eq!(old.len(), 1);
        prune(old, false).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
