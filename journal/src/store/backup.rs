//! The backups the destructive commands keep, as the store keeps them:
//! their names (made and read back here, one format), where they are,
//! and the two writes that touch them, putting a run back and removing a
//! backup, which each backend does through its own seam (the file
//! backend's directory seam, so its crash sweep covers them).
//!
//! Where the backups are:
//! - file store: beside the journal, `<id>.<why>-<UTC time>[-N].bak`,
//!   `why` being `removed` (rm, a hard link), `torn` (repair, the cut
//!   bytes), `v3` (upgrade, a hard link of the original), `recovered`
//!   (recover, a hard link of the damaged original) or `unreadable`
//!   (recover, the bytes it could not read);
//! - JetStream: `$XDG_STATE_HOME/fisk-admin/<why>/<STREAM>/<id>-<UTC
//!   time>[-N]/`, a one-run file store, `why` being `removed`, `upgraded`
//!   or `recovered`. A prune renames the directory to `<name>.pruning`
//!   first, so that a prune killed half way leaves no half a backup that
//!   lists as one: the listing skips such a name and the next prune
//!   finishes it.
//!
//! A backup's id, the one a person types, is its file name (file store)
//! or `<why>/<directory name>` (JetStream).

use crate::time::Time;
use crate::{Error, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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

/// What a prune renames a JetStream backup directory to before it
/// removes it.
pub(crate) const PRUNING: &str = ".pruning";

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

/// The name of a file backup of `run` kept by `why` at `stamp` (as
/// `time::compact` writes it), `suffix` the `-N` of a taken name.
pub(crate) fn file_name(run: &str, why: &str, stamp: &str, suffix: &str) -> String {
    format!("{run}.{why}-{stamp}{suffix}.bak")
}

/// The name of a JetStream backup directory of `run` kept at `stamp`.
pub(crate) fn dir_name(run: &str, stamp: &str) -> String {
    format!("{run}-{stamp}")
}

/// Split a name that ends in `-<UTC time>[-N]` (as `time::compact`
/// writes it) into what is before the `-` and the time.
pub(crate) fn split_stamp(name: &str) -> Option<(&str, Time)> {
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
pub(crate) fn parse_file_name(name: &str) -> Option<(Kind, String, Time)> {
    let (head, when) = split_stamp(name.strip_suffix(".bak")?)?;
    let (run, why) = head.rsplit_once('.')?;
    let kind = Kind::of_file(why)?;
    crate::id::check(run).ok()?;
    Some((kind, run.to_owned(), when))
}

/// Where a JetStream stream's backups are kept: the directory of each
/// kind.
pub(crate) fn kept_dirs(stream: &str) -> Result<Vec<(PathBuf, Kind, &'static str)>> {
    let (home, _) = crate::store::file::state_home()?;
    Ok(KEPT_DIRS
        .iter()
        .map(|(why, kind)| (home.join("fisk-admin").join(why).join(stream), *kind, *why))
        .collect())
}

/// The one-run file stores kept for a JetStream stream, and the
/// directories of prunes that were interrupted (to finish).
pub(crate) fn list_kept(stream: &str) -> Result<(Vec<Backup>, Vec<PathBuf>)> {
    let mut found = Vec::new();
    let mut pruning = Vec::new();
    for (dir, kind, why) in kept_dirs(stream)? {
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
            let path = entry.path();
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            if name.ends_with(PRUNING) {
                pruning.push(path);
                continue;
            }
            let Some((run, when)) = split_stamp(&name) else {
                continue;
            };
            if crate::id::check(run).is_err() {
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
    Ok((found, pruning))
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

/// Remove a JetStream backup directory: renamed to `<name>.pruning` and
/// the rename made durable first, so that a kill half way through the
/// removal leaves a name the listing skips and the next prune finishes,
/// never half a backup listed as one. Also what finishes such a prune.
pub(crate) fn remove_kept(dir: &Path) -> Result<()> {
    let sync = |d: &Path| crate::durable::sync_dir(d).map_err(|e| Error::io(d, e));
    let parent = dir.parent().unwrap_or(Path::new("."));
    let doomed = match dir.to_str().is_some_and(|s| s.ends_with(PRUNING)) {
        true => dir.to_path_buf(),
        false => {
            let mut name = dir.as_os_str().to_owned();
            name.push(PRUNING);
            let doomed = PathBuf::from(name);
            std::fs::rename(dir, &doomed).map_err(|e| Error::io(dir, e))?;
            sync(parent)?;
            doomed
        }
    };
    match std::fs::remove_dir_all(&doomed) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&doomed, e)),
    }
    sync(parent)
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
        let made = file_name("a-b", "removed", "20231114T221320.120000000Z", "-2");
        assert_eq!(
            parse_file_name(&made).map(|(k, r, _)| (k, r)),
            Some((Kind::Rm, "a-b".into()))
        );
        let dir = dir_name("r", "20231114T221320.120000000Z");
        assert_eq!(split_stamp(&dir).map(|(r, _)| r), Some("r"));
        // A directory being pruned is not a backup.
        assert!(split_stamp(&format!("{dir}{PRUNING}")).is_none());
    }
}
