//! `verify`'s file-backend checks: the store directory (its mode, names
//! that are not run ids, orphan locks) and each journal's file (a link, its
//! mode, a live lock), then its bytes through the one line checker.

use super::{FileStore, Listing, LiveLocks};
use crate::shell::{path_word, shown};
use crate::verify::{file_finding, verify_bytes, Code, Finding, RecordCheck, Report};
use crate::Remedy;
use std::path::Path;

/// Store-level findings: directory permissions, invalid names, orphan locks.
// For tests (journal/tests/mutations.rs), not API: a front end goes through `Store`.
#[doc(hidden)]
pub fn verify_store_dir(store: &FileStore, listing: &Listing) -> Vec<Finding> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let dir_name = shown(store.dir());
    let dir_word = path_word(store.dir());
    if let Ok(md) = std::fs::metadata(store.dir()) {
        let mode = md.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            out.push(Finding {
                remedy: Some(Remedy::ChmodStore),
                ..file_finding(&dir_name, Code::Permissions, format!("the store directory is mode {mode:04o}, not 0700: other users may read session journals (chmod 700 {dir_word})"))
            });
        } else if mode != 0o700 {
            let cannot: Vec<&str> = [
                (0o400, "list its runs"),
                (0o200, "create or delete runs"),
                (0o100, "open its journals"),
            ]
            .into_iter()
            .filter(|(bit, _)| mode & bit == 0)
            .map(|(_, what)| what)
            .collect();
            out.push(Finding {
                remedy: Some(Remedy::ChmodStore),
                ..file_finding(&dir_name, Code::Permissions, format!("the store directory is mode {mode:04o}, not 0700: its owner cannot {} (chmod 700 {dir_word})", cannot.join(" or ")))
            });
        }
    }
    // A name is shown as it is when that is exact, and always quoted in
    // the message as the shell word that names it (`shell::word`): a name
    // that is not UTF-8 can then be copied to rename or remove it.
    for p in &listing.invalid {
        let (name, word) = names_of(p);
        out.push(file_finding(&name, Code::InvalidId, format!("{word} is not a valid run id, so the agent cannot see this journal; rename it to a valid id to use it")));
    }
    for p in &listing.leftover {
        let (name, word) = names_of(p);
        out.push(file_finding(
            &name,
            Code::LeftoverTemp,
            format!("{word} is a temporary file an interrupted create or upgrade left; nothing reads it, the next create or upgrade of the run replaces it, and rm of the run removes it"),
        ));
    }
    for p in &listing.orphan_locks {
        let (name, word) = names_of(p);
        out.push(file_finding(
            &name,
            Code::OrphanLock,
            format!("lock file {word} has no journal beside it; it is harmless and can be removed"),
        ));
    }
    out
}

/// Every run's checks, in parallel. With `whole_store` (no run named), a
/// store whose journals all have the same loose mode gets one
/// `permissions` finding for the store, with one chmod for them all,
/// instead of one per journal: it is one condition, and 10,000 identical
/// lines would hide every other finding. It comes first, about the store
/// directory as the directory's own finding is.
pub fn verify_file_runs(
    store: &FileStore,
    runs: &[String],
    check: Option<&dyn RecordCheck>,
    whole_store: bool,
) -> Vec<Report> {
    use rayon::prelude::*;
    let locks = LiveLocks::snapshot();
    let (mut reports, modes): (Vec<Report>, Vec<Option<u32>>) = runs
        .par_iter()
        .map(|r| verify_file_run(store, r, &locks, check))
        .unzip();
    let first = modes.first().copied().flatten();
    let same = modes.len() >= 2 && modes.iter().all(|m| *m == first);
    let (Some(mode), true, true) = (first, same, whole_store) else {
        return reports;
    };
    for r in &mut reports {
        r.findings
            .retain(|f| f.code != Code::Permissions || f.remedy != Some(Remedy::ChmodJournal));
    }
    let dir = shown(store.dir());
    let glob = format!("{}/*.json", path_word(store.dir()));
    let finding = Finding {
        remedy: Some(Remedy::ChmodJournals),
        ..file_finding(
            &dir,
            Code::Permissions,
            format!(
                "every journal in the store ({}) is mode {mode:04o}: readable by group or others (chmod 600 {glob})",
                modes.len()
            ),
        )
    };
    reports.insert(
        0,
        Report {
            findings: vec![finding],
            ..Report::default()
        },
    );
    reports
}

/// File-level checks for one run, then its content; and the journal's
/// mode when it is reported as too loose.
// For tests (journal/tests/mutations.rs), not API: a front end goes through `Store`.
#[doc(hidden)]
pub fn verify_file_run(
    store: &FileStore,
    run: &str,
    locks: &LiveLocks,
    check: Option<&dyn RecordCheck>,
) -> (Report, Option<u32>) {
    use std::os::unix::fs::PermissionsExt;
    let mut pre = Vec::new();
    let (Ok(journal), Ok(lock)) = (store.journal_path(run), store.lock_path(run)) else {
        let report = Report {
            findings: vec![file_finding(
                run,
                Code::InvalidId,
                format!("{run:?} is not a valid run id"),
            )],
            ..Report::default()
        };
        return (report, None);
    };
    let mut loose = None;
    for (what, p) in [("journal", &journal), ("lock", &lock)] {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = std::fs::read_link(p)
                .map(|t| path_word(&t))
                .unwrap_or_else(|_| "''".into());
            pre.push(file_finding(
                run,
                Code::Symlink,
                format!(
                    "the {what} {} is a symbolic link to {target}; writers refuse to follow it",
                    shown(p)
                ),
            ));
        }
    }
    if let Ok(md) = std::fs::metadata(&journal) {
        let mode = md.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            loose = Some(mode);
            pre.push(file_finding(
                run,
                Code::Permissions,
                format!(
                    "the journal is mode {mode:04o}: readable by group or others (chmod 600 {})",
                    path_word(&journal)
                ),
            ));
        }
    }
    if locks.is_held(&lock) {
        pre.push(file_finding(
            run,
            Code::Live,
            "a writer holds the run's lock now; findings at the tail may be a write in progress"
                .into(),
        ));
    }
    let mut report = match store.read_bytes(run) {
        Ok((_, bytes)) => verify_bytes(run, &bytes, check),
        Err(e) => Report {
            findings: vec![file_finding(
                run,
                Code::Unreadable,
                format!("cannot read the journal: {e}"),
            )],
            ..Report::default()
        },
    };
    pre.append(&mut report.findings);
    report.findings = pre;
    (report, loose)
}

/// A file's name as a finding's `run` shows it ([`shown`]), and as the
/// shell word that names it ([`path_word`]).
fn names_of(p: &Path) -> (String, String) {
    let name = Path::new(p.file_name().unwrap_or(p.as_os_str()));
    (shown(name), path_word(name))
}
