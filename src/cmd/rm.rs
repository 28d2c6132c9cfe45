//! `rm RUN... [--yes]`: delete runs (journal and lock), keeping each run's
//! bytes as a backup first (see `Store::delete`). Live runs are refused; on a terminal it asks first unless `--yes`; without a terminal
//! it needs `--yes`. Every id is checked before anything is deleted.

use crate::cli::{Global, RmArgs};
use crate::error::{exit_of, CmdResult, Failure};
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, Style};
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

pub fn run(g: &Global, mut a: RmArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    // A run named twice is deleted once.
    let mut seen = std::collections::HashSet::new();
    a.runs.retain(|r| seen.insert(r.clone()));
    for r in &a.runs {
        journal::id::check(r)?;
        if !store.exists(r)? {
            return Err(Failure::new(format!(
                "run {r} not found in {}; nothing was deleted",
                store.describe()
            ))
            .help("`fisk-admin ls` lists the runs in this store"));
        }
    }
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure::refused(
                "rm deletes runs (keeping a backup of each) and there is no terminal to ask on; nothing was deleted",
            )
            .help("pass --yes to delete without asking"));
        }
        eprint!(
            "delete {} run(s): {}? [y/N] ",
            a.runs.len(),
            a.runs.join(", ")
        );
        let mut answer = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|e| Failure::new(format!("reading the answer: {e}")))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            return Err(Failure::refused("not confirmed; nothing was deleted"));
        }
    }
    let mut removed_all = Vec::new();
    // The exit status: 1 when every failure was a refusal (a live run),
    // 2 when something could not be done (CLI.md).
    let mut failed: u8 = 0;
    for r in &a.runs {
        match store.delete(r) {
            Ok(d) => {
                if !style.json() {
                    for p in &d.removed {
                        writeln!(out, "removed {}", sanitize(p, false))?;
                    }
                    if let Some(k) = &d.kept {
                        let k = k.display().to_string();
                        writeln!(out, "kept    {}", sanitize(&k, false))?;
                    }
                    if let Some(c) = &d.restore {
                        let flags = match &store {
                            journal::store::Store::JetStream(_) => {
                                " (with the connection flags of this rm)"
                            }
                            journal::store::Store::File(_) => "",
                        };
                        writeln!(out, "restore with{flags}: {}", sanitize(c, false))?;
                    }
                }
                if let Some(w) = &d.warning {
                    failed = failed.max(1);
                    eprintln!("fisk-admin: warning: {}", sanitize(w, false));
                }
                let kept = d.kept.as_ref().map(|k| k.display().to_string());
                removed_all.push(serde_json::json!({
                    "run": r, "removed": d.removed, "kept": kept, "restore": d.restore,
                    "warning": d.warning,
                }));
            }
            Err(e) => {
                failed = failed.max(exit_of(&e));
                let e = e.to_string();
                eprintln!(
                    "fisk-admin: {}; run {r} was not deleted",
                    sanitize(&e, false)
                );
            }
        }
    }
    if style.json() {
        json_pretty(out, &removed_all)?;
    }
    Ok(ExitCode::from(failed))
}
