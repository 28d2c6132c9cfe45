//! `backups`, `backups restore ID`, `backups prune [ID...] [--older-than
//! DUR] [--dry-run] [--yes]`: the backups the destructive commands keep
//! (`journal::ops::backups` finds, restores and removes them). It exists
//! because nothing else ever frees them: `rm` on the file backend keeps
//! the journal as a second name, so the disk is freed only by a prune.

use crate::cli::{BackupsArgs, BackupsCommand, BackupsPruneArgs, BackupsRestoreArgs};
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{
    human_bytes, json_pretty, print_table, sanitize, sorted, table, thousands, Format,
};
use journal::ops::backups::{self, Backup, Restored};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One backup (`schemas/output/backups.json`; keys sorted).
#[derive(Serialize)]
struct Row {
    id: String,
    kind: &'static str,
    run: String,
    when: String,
    path: String,
    bytes: u64,
    held: u64,
}

impl Row {
    fn of(b: &Backup) -> Row {
        Row {
            id: b.id.clone(),
            kind: b.kind.word(),
            run: b.run.clone(),
            when: b.when.to_rfc3339(),
            path: journal::shell::shown(&b.path),
            bytes: b.bytes,
            held: b.held,
        }
    }
}

pub fn run(g: &Invocation, a: BackupsArgs, out: &mut dyn Write) -> CmdResult {
    match a.action {
        None => list(g, out),
        Some(BackupsCommand::Restore(r)) => restore(g, r, out),
        Some(BackupsCommand::Prune(p)) => prune(g, p, out),
    }
}

fn list(g: &Invocation, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let rows: Vec<Row> = backups::list(&store)?.iter().map(Row::of).collect();
    if backups::unfinished(&store)? > 0 {
        eprintln!(
            "fisk-admin: note: a prune was interrupted and left a backup half removed (not listed); `{}` finishes it",
            crate::hint::command(g, &["backups", "prune", "--older-than", "1000w"])
        );
    }
    match g.style.format {
        Format::Json => json_pretty(out, &sorted(&rows)?)?,
        Format::Text => {
            if rows.is_empty() {
                writeln!(out, "no backups in {}", sanitize(&store.describe(), false))?;
                return Ok(ExitCode::SUCCESS);
            }
            render_rows(out, &rows, g)?;
            let (bytes, held) = totals(&rows);
            g.style.footnote(
                out,
                &format!(
                    "{} backup(s), {}, {} of disk held only by them",
                    thousands(rows.len()),
                    human_bytes(bytes),
                    human_bytes(held)
                ),
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The table of `backups` and of a prune's selection.
fn render_rows(out: &mut dyn Write, rows: &[Row], g: &Invocation) -> std::io::Result<()> {
    let mut t = table(&["ID", "KIND", "RUN", "KEPT", "BYTES", "HELD"])
        .keep(0)
        .keep(2);
    for r in rows {
        t.add_row(vec![
            sanitize(&r.id, false).into_owned(),
            r.kind.to_owned(),
            sanitize(&r.run, false).into_owned(),
            r.when.clone(),
            g.style.size(r.bytes),
            g.style.size(r.held),
        ]);
    }
    print_table(out, t, g.style)
}

fn totals(rows: &[Row]) -> (u64, u64) {
    rows.iter()
        .fold((0, 0), |(b, h), r| (b + r.bytes, h + r.held))
}

/// What `backups restore` did (`schemas/output/backups-restore.json`).
#[derive(Serialize)]
struct RestoreDone {
    id: String,
    run: String,
    /// `linked` (file store) or `copied` (JetStream).
    how: &'static str,
    journal: Option<String>,
    records: Option<u64>,
}

fn restore(g: &Invocation, mut a: BackupsRestoreArgs, out: &mut dyn Write) -> CmdResult {
    let store = crate::audit::writer(
        open_store(g)?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    // A run id names its rm backup: the newest, said when there are more
    // (issue 39, d-10; `git stash pop` takes the newest too).
    let all = backups::list(&store)?;
    if !all.iter().any(|b| b.id == a.id) {
        let mut of_run: Vec<&Backup> = all
            .iter()
            .filter(|b| b.run == a.id && b.kind.word() == "rm")
            .collect();
        of_run.sort_by_key(|b| std::cmp::Reverse(b.when));
        if let Some(newest) = of_run.first() {
            if of_run.len() > 1 {
                eprintln!(
                    "fisk-admin: note: run {} has {} rm backups: restoring the newest, {} (`backups` lists the others)",
                    sanitize(&a.id, false),
                    of_run.len(),
                    sanitize(&newest.id, false)
                );
            }
            a.id = newest.id.clone();
        }
    }
    let b = backups::check_restore(&store, &a.id)?;
    if a.write.dry_run {
        let what = format!(
            "restore run {} from backup {}",
            sanitize(&b.run, false),
            sanitize(&a.id, false)
        );
        let details = serde_json::json!({"id": a.id, "run": b.run});
        crate::output::would(out, g.style, &b.run, &what, details)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let done = match backups::restore(&store, &a.id)? {
        Restored::Linked { journal } => RestoreDone {
            id: a.id,
            run: b.run,
            how: "linked",
            journal: Some(journal::shell::shown(&journal)),
            records: None,
        },
        Restored::Copied { records } => RestoreDone {
            id: a.id,
            run: b.run,
            how: "copied",
            journal: None,
            records: Some(records),
        },
        // A new way of restoring is described by its run alone.
        _ => RestoreDone {
            id: a.id,
            run: b.run,
            how: "restored",
            journal: None,
            records: None,
        },
    };
    match g.style.format {
        Format::Json => json_pretty(out, &sorted(&done)?)?,
        Format::Text => {
            let run = sanitize(&done.run, false);
            match (&done.journal, done.records) {
                (Some(j), _) => writeln!(
                    out,
                    "run {run} restored: {} is its journal again",
                    sanitize(j, false)
                )?,
                (None, Some(n)) => writeln!(
                    out,
                    "run {run} restored: {n} record(s) copied back to {}",
                    sanitize(&store.describe(), false)
                )?,
                (None, None) => writeln!(out, "run {run} restored")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `backups prune` removed (`schemas/output/backups-prune.json`).
#[derive(Serialize)]
struct PruneDone {
    dry_run: bool,
    pruned: Vec<Row>,
    freed: u64,
}

fn prune(g: &Invocation, a: BackupsPruneArgs, out: &mut dyn Write) -> CmdResult {
    let narrowed = !a.kind.is_empty() || a.since.is_some() || !a.run.is_empty();
    if a.older_than.is_none() && a.ids.is_empty() && !narrowed {
        return Err(Failure::new("nothing to prune named").help(
            "pass --older-than DUR (7d: every backup kept more than a week ago), --kind, --since or --run, or the ids `backups` lists",
        ));
    }
    crate::audit::unlogged(
        "backups prune (it removes backups, not runs)",
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let store = open_store(g)?;
    // --kind, --since and --run narrow the backups kept before now (or
    // before --older-than ago), or those named.
    let older_than = match (a.older_than, narrowed && a.ids.is_empty()) {
        (None, true) => Some(std::time::Duration::ZERO),
        (d, _) => d,
    };
    let mut selected = backups::select(&store, older_than, &a.ids, std::time::SystemTime::now())?;
    selected.backups.retain(|b| {
        (a.kind.is_empty() || a.kind.iter().any(|k| k.word() == b.kind.word()))
            && a.since.is_none_or(|t| b.when >= t)
            && (a.run.is_empty() || a.run.contains(&b.run))
    });
    // A named id that is gone (pruned already: a prune killed half way
    // and run again, or another's) is said, and the rest go on.
    for id in &selected.missing {
        eprintln!(
            "fisk-admin: note: no backup {} in {} (pruned already, or not one of its backups)",
            sanitize(id, false),
            sanitize(&store.describe(), false)
        );
    }
    if !a.ids.is_empty() && selected.missing.len() == a.ids.len() && selected.backups.is_empty() {
        return Err(Failure::refused(
            "none of the backups named is in the store; nothing was removed",
        )
        .help("`backups` lists them"));
    }
    let chosen = selected.backups;
    let rows: Vec<Row> = chosen.iter().map(Row::of).collect();
    if !a.write.dry_run && !a.write.yes && !chosen.is_empty() {
        let mut listed = Vec::new();
        let mut text = Vec::new();
        render_rows(&mut text, &rows, g)?;
        listed.extend(String::from_utf8_lossy(&text).lines().map(str::to_owned));
        crate::ask::confirm(
            &listed,
            &format!(
                "remove {} backup(s), freeing {}?",
                thousands(rows.len()),
                human_bytes(totals(&rows).1)
            ),
            "backups prune removes backups for good and there is no terminal to ask on; nothing was removed",
            "pass --yes to remove them without asking, or --dry-run to list only",
            "nothing was removed",
        )?;
    }
    let pruned = backups::prune(&store, chosen, a.write.dry_run)?;
    let done = PruneDone {
        dry_run: a.write.dry_run,
        pruned: rows,
        freed: pruned.freed,
    };
    match g.style.format {
        Format::Json => json_pretty(out, &sorted(&done)?)?,
        Format::Text => {
            let verb = if a.write.dry_run {
                "would remove"
            } else {
                "removed"
            };
            for r in &done.pruned {
                writeln!(
                    out,
                    "{verb} {} ({} backup of run {}, kept {})",
                    sanitize(&r.path, false),
                    r.kind,
                    sanitize(&r.run, false),
                    r.when
                )?;
            }
            let (n, freed) = (thousands(done.pruned.len()), human_bytes(done.freed));
            match a.write.dry_run {
                true => writeln!(
                    out,
                    "{n} backup(s) would be removed, freeing {freed} of disk; nothing was removed"
                )?,
                false => writeln!(out, "{n} backup(s) removed, {freed} of disk freed")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
