//! `recover RUN [--as NEW_ID] [--dry-run] [--yes] [--force]`: the most a journal
//! with interior damage can give back, as a run the agent accepts (SPEC
//! 6.1, "Recovering"; issue 27).
//!
//! The plan and the write are the library's (`journal::recover`,
//! `journal::ops::recover`); this command shows the plan, asks before
//! rewriting a run in place (on a terminal, unless `--yes`; without one it
//! needs `--yes`), and says what was kept, what fisk-admin wrote, what was
//! lost, where the original is kept, and the commands that go on
//! (`verify`, `resume`).

use crate::cli::RecoverArgs;
use crate::error::CmdResult;
use crate::hint::Cmd;
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, sanitize, Format};
use journal::ops::recover::{recover, Recovered, Request};
use journal::recover::Finding;
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// Why `recover` in place asks nothing without a terminal.
const NO_TERMINAL: &str =
    "recover rewrites the run in place (keeping the damaged journal as a backup) and there is no terminal to ask on; nothing was changed";

pub fn run(g: &Invocation, a: RecoverArgs, out: &mut dyn Write) -> CmdResult {
    let store = crate::audit::writer(
        open_store(&crate::open::unheld(g, a.force))?,
        g,
        a.write.operator.as_deref(),
        a.write.why.as_deref(),
    )?;
    let req = Request {
        run: &a.run,
        new_id: a.new_id.as_deref(),
        dry_run: a.write.dry_run,
        force: a.force,
    };
    if req.new_id.is_none() && !a.write.dry_run && !a.write.yes {
        // What it would do, shown before the question; nothing written.
        let seen = recover(
            &store,
            &Request {
                dry_run: true,
                ..req
            },
        )?;
        if seen.plan.changes() {
            let mut shown = Vec::new();
            render(g, &mut shown, &seen)?;
            crate::ask::confirm(
                &String::from_utf8_lossy(&shown)
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
                &format!(
                    "recover run {} in place (the damaged journal is kept as a backup)?",
                    a.run
                ),
                NO_TERMINAL,
                "pass --yes to recover without asking, --dry-run to see what it would do, or --as NEW_ID to leave the run as it is",
                "nothing was changed",
            )?;
        }
    }
    let done = recover(&store, &req)?;
    match g.style.format {
        Format::Json => json_pretty(out, &Doc::of(g, &done))?,
        Format::Text => render(g, out, &done)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `recover --format json` (docs/OUTPUT.md, schemas/output/recover.json).
#[derive(Serialize)]
struct Doc<'a> {
    run: &'a str,
    from: &'a str,
    in_place: bool,
    changes: bool,
    written: bool,
    version: i64,
    intact: u64,
    kept: u64,
    findings: Vec<FindingDoc<'a>>,
    made: Vec<MadeDoc<'a>>,
    renumbered: Vec<Renumbered>,
    backup: Option<String>,
    unreadable: Option<String>,
    resumed: bool,
    verify: Option<Cmd>,
    resume: Option<Cmd>,
}

#[derive(Serialize)]
struct FindingDoc<'a> {
    line: usize,
    seq: Option<u64>,
    damage: &'a str,
    what: Option<&'a str>,
    bytes: u64,
    harmless: bool,
    loses: &'a str,
}

#[derive(Serialize)]
struct MadeDoc<'a> {
    seq: u64,
    call: &'a str,
    tool: &'a str,
    why: &'a str,
}

#[derive(Serialize)]
struct Renumbered {
    old: u64,
    new: u64,
}

impl<'a> Doc<'a> {
    fn of(g: &Invocation, r: &'a Recovered) -> Doc<'a> {
        let p = &r.plan;
        let path = |p: &Option<std::path::PathBuf>| p.as_deref().map(journal::shell::shown);
        Doc {
            run: &r.run,
            from: &r.from,
            in_place: r.run == r.from,
            changes: p.changes(),
            written: r.written,
            version: p.version,
            intact: p.intact,
            kept: p.kept,
            findings: p
                .findings
                .iter()
                .map(|f| FindingDoc {
                    line: f.line,
                    seq: f.seq,
                    damage: f.damage.word(),
                    what: f.what.as_deref(),
                    bytes: f.bytes,
                    harmless: f.harmless,
                    loses: &f.loses,
                })
                .collect(),
            made: p
                .made
                .iter()
                .map(|m| MadeDoc {
                    seq: m.seq,
                    call: &m.call,
                    tool: &m.tool,
                    why: &m.why,
                })
                .collect(),
            renumbered: p
                .renumbered
                .iter()
                .map(|(old, new)| Renumbered {
                    old: *old,
                    new: *new,
                })
                .collect(),
            backup: path(&r.kept),
            unreadable: path(&r.unreadable),
            resumed: r.resumed,
            verify: r.written.then(|| verify(g, &r.run)),
            resume: r.written.then(|| crate::hint::resume(g, &r.run)),
        }
    }
}

fn verify(g: &Invocation, run: &str) -> Cmd {
    crate::hint::cmd(g, &["verify", run])
}

/// One finding as a line: where, which damage, what it was, what the run
/// loses.
fn finding_line(f: &Finding) -> String {
    let mut at = format!("line {}", f.line);
    if let Some(s) = f.seq {
        at.push_str(&format!(", seq {s}"));
    }
    let what = f
        .what
        .as_deref()
        .map_or_else(String::new, |w| format!(" {}:", sanitize(w, false)));
    let bytes = match f.bytes {
        0 => String::new(),
        n => format!(" ({} bytes)", crate::output::thousands(n)),
    };
    format!(
        "  {at}: {}{bytes}:{what} {}",
        f.damage.word(),
        sanitize(&f.loses, false)
    )
}

/// Old -> new seqs as ranges that move together ("8-27 -> 4-23").
fn ranges(pairs: &[(u64, u64)]) -> Vec<String> {
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    for &(old, new) in pairs {
        match out.last_mut() {
            Some((first, last, to)) if old == *last + 1 && new == *to + (old - *first) => {
                *last = old;
            }
            _ => out.push((old, old, new)),
        }
    }
    out.into_iter()
        .map(|(first, last, to)| match first == last {
            true => format!("{first} -> {to}"),
            false => format!("{first}-{last} -> {to}-{}", to + (last - first)),
        })
        .collect()
}

fn render(g: &Invocation, out: &mut dyn Write, r: &Recovered) -> io::Result<()> {
    let p = &r.plan;
    if r.resumed {
        writeln!(
            out,
            "an earlier recover of run {} {} was interrupted half way; this one finished it",
            r.from,
            match r.run == r.from {
                true => "in place".to_owned(),
                false => format!("as {}", r.run),
            }
        )?;
    }
    if !p.changes() && r.resumed {
        writeln!(
            out,
            "run {} holds its {} recovered records (the copy of the damaged journal that recover planned from is not on this machine, so what it found is not shown)",
            r.run, p.intact
        )?;
        return tail(g, out, r);
    }
    if !p.changes() {
        return writeln!(
            out,
            "run {} has nothing to recover: its {} records are whole and consistent; nothing was written",
            r.from, p.intact
        );
    }
    let verb = match r.written {
        true => "recovered",
        false => "would recover",
    };
    let into = match r.run == r.from {
        true => "in place".to_owned(),
        false => format!("as {}", r.run),
    };
    use journal::recover::Damage;
    let lost = p
        .findings
        .iter()
        .filter(|f| {
            !f.harmless && matches!(f.damage, Damage::Garbage | Damage::Nul | Damage::Missing)
        })
        .count();
    writeln!(
        out,
        "{verb} run {} {into} (format version {}): {} of {} intact records kept ({} dropped), {} record(s) written by fisk-admin; {lost} line(s) unreadable or missing",
        r.from,
        p.version,
        p.kept,
        p.intact,
        p.intact - p.kept,
        p.made.len()
    )?;
    writeln!(out, "what was found (journal order):")?;
    for f in &p.findings {
        writeln!(out, "{}", finding_line(f))?;
    }
    if !p.made.is_empty() {
        writeln!(
            out,
            "written by fisk-admin, not by the agent: error results whose text says the original was lost; this changes what a resume does (it hands the model these results, and does not run the calls again):"
        )?;
        for m in &p.made {
            writeln!(
                out,
                "  seq {}: the result for {} (tool {}): {}",
                m.seq,
                sanitize(&m.call, false),
                sanitize(&m.tool, false),
                sanitize(&m.why, false)
            )?;
        }
    }
    if !p.renumbered.is_empty() {
        writeln!(
            out,
            "renumbered (old seq -> new): {}",
            ranges(&p.renumbered).join(", ")
        )?;
    }
    tail(g, out, r)
}

/// Where the original is kept, and the commands that go on.
fn tail(g: &Invocation, out: &mut dyn Write, r: &Recovered) -> io::Result<()> {
    if let Some(k) = &r.kept {
        writeln!(
            out,
            "the damaged journal is kept at {} (`backups` lists it)",
            journal::shell::shown(k)
        )?;
    }
    if let Some(u) = &r.unreadable {
        writeln!(
            out,
            "the bytes that could not be read are kept at {}",
            journal::shell::shown(u)
        )?;
    }
    if r.written {
        writeln!(out, "{}", verify(g, &r.run).step("", "verify it with"))?;
        writeln!(
            out,
            "{}",
            crate::hint::resume(g, &r.run).step("", "resume it with")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ranges;

    #[test]
    fn seqs_that_move_together_read_as_one_range() {
        assert_eq!(
            ranges(&[(8, 4), (9, 5), (10, 6), (12, 7), (20, 9)]),
            ["8-10 -> 4-6", "12 -> 7", "20 -> 9"]
        );
    }
}
