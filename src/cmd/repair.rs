//! `repair RUN [--dry-run]`: fix what is safe to fix, at the tail only.
//! A torn final line is cut after its bytes are saved beside the journal; a
//! missing final newline is added. Interior corruption is refused: cutting
//! it would throw away the intact records after it.

use super::{open_store, CmdResult};
use crate::cli::{Global, RepairArgs};
use crate::output::{json_pretty, Style};
use journal::store::Repair;
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Global, a: RepairArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let done = store.repair(&a.run, a.dry_run)?;
    let would = if a.dry_run { "would " } else { "" };
    if style.json() {
        let v = match &done {
            Repair::Nothing { records } => serde_json::json!({
                "run": a.run, "action": "nothing", "dry_run": a.dry_run, "records": records,
            }),
            Repair::AddedNewline { line, records } => serde_json::json!({
                "run": a.run, "action": "add-newline", "dry_run": a.dry_run, "line": line, "records": records,
            }),
            Repair::CutTorn {
                line,
                offset,
                len,
                backup,
                records,
            } => serde_json::json!({
                "run": a.run, "action": "cut-torn-tail", "dry_run": a.dry_run, "line": line,
                "offset": offset, "bytes": len,
                "backup": backup.as_ref().map(|b| b.display().to_string()), "records": records,
            }),
        };
        json_pretty(out, &v)?;
        return Ok(ExitCode::SUCCESS);
    }
    match done {
        Repair::Nothing { records } => {
            writeln!(out, "run {}: the tail is clean ({records} records); nothing to do", a.run)?
        }
        Repair::AddedNewline { line, records } => writeln!(
            out,
            "run {}: {would}add the missing newline after the final record (line {line}); {records} records",
            a.run
        )?,
        Repair::CutTorn { line, offset, len, backup, records } => {
            writeln!(
                out,
                "run {}: {would}cut the torn final line {line} ({len} bytes at byte {offset}); {records} intact records remain",
                a.run
            )?;
            match backup {
                Some(b) => writeln!(out, "  its bytes are saved in {}", b.display())?,
                None => writeln!(out, "  its bytes would be saved beside the journal first")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
