//! `repair RUN [--dry-run]`: fix what is safe to fix, at the tail only.
//! A torn final line is cut after its bytes are saved beside the journal; a
//! missing final newline is added. Interior corruption is refused: cutting
//! it would throw away the intact records after it.

use crate::cli::{Global, RepairArgs};
use crate::error::CmdResult;
use crate::open::open_store;
use crate::output::{json_pretty, sorted, Format, Style};
use journal::store::Repair;
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// What `repair` did or would do (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Repaired<'a> {
    run: &'a str,
    dry_run: bool,
    #[serde(flatten)]
    action: Action,
}

#[derive(Serialize)]
#[serde(tag = "action")]
enum Action {
    #[serde(rename = "nothing")]
    Nothing { records: usize },
    #[serde(rename = "add-newline")]
    AddNewline { line: usize, records: usize },
    #[serde(rename = "cut-torn-tail")]
    CutTornTail {
        line: usize,
        offset: u64,
        bytes: u64,
        /// Where the cut bytes are kept; `null` in a dry run.
        backup: Option<String>,
        records: usize,
    },
}

pub fn run(g: &Global, a: RepairArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let action = match store.repair(&a.run, a.dry_run)? {
        Repair::Nothing { records } => Action::Nothing { records },
        Repair::AddedNewline { line, records } => Action::AddNewline { line, records },
        Repair::CutTorn {
            line,
            offset,
            len,
            backup,
            records,
        } => Action::CutTornTail {
            line,
            offset,
            bytes: len,
            backup: backup.map(|b| journal::shell::shown(&b)),
            records,
        },
    };
    let done = Repaired {
        run: &a.run,
        dry_run: a.dry_run,
        action,
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&done)?)?,
        Format::Text => render(out, &done)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut dyn Write, done: &Repaired) -> io::Result<()> {
    let run = done.run;
    let would = if done.dry_run { "would " } else { "" };
    match &done.action {
        Action::Nothing { records } => {
            writeln!(out, "run {run}: the tail is clean ({records} records); nothing to do")
        }
        Action::AddNewline { line, records } => writeln!(
            out,
            "run {run}: {would}add the missing newline after the final record (line {line}); {records} records"
        ),
        Action::CutTornTail { line, offset, bytes, backup, records } => {
            writeln!(
                out,
                "run {run}: {would}cut the torn final line {line} ({bytes} bytes at byte {offset}); {records} intact records remain"
            )?;
            match backup {
                Some(b) => writeln!(out, "  its bytes are saved in {b}"),
                None => writeln!(out, "  its bytes would be saved beside the journal first"),
            }
        }
    }
}
