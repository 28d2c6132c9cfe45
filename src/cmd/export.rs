//! `export RUN|--file PATH --as markdown|html|jsonl [--redact RE]...
//! [--out FILE]`: a run (or a journal file copied off a host) to hand on.
//! The journal crate builds the document (`journal::export`); this
//! parses, reads the run (`runs::Read`), writes it to stdout
//! or a new file, and says on stderr how many matches were redacted.

use crate::cli::{ExportArgs, ExportFormat};
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::output::sanitize;
use journal::export;
use regex::Regex;
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Invocation, a: ExportArgs, out: &mut dyn Write) -> CmdResult {
    let patterns = a
        .redact
        .iter()
        .map(|p| {
            let re = Regex::new(p).map_err(|e| {
                Failure::new(format!(
                    "--redact {}: not a regular expression: {}",
                    sanitize(p, false),
                    sanitize(&e.to_string(), true)
                ))
            })?;
            // One that matches nothing would put `[redacted]` between
            // every two characters.
            if re.is_match("") {
                return Err(Failure::new(format!(
                    "--redact {}: matches the empty string",
                    sanitize(p, false)
                )));
            }
            Ok(re)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let read = crate::runs::Read::target(g, &a.target)?;
    let journal = read.journal();
    // `Cli::settle` gave export its document, from --as or --format.
    let doc_as = a.doc_as.unwrap_or(ExportFormat::Markdown);
    let (bytes, redacted) = match doc_as {
        ExportFormat::Jsonl => export::jsonl(journal, &patterns),
        ExportFormat::Markdown | ExportFormat::Html => {
            let (records, n) = export::redacted(journal, &patterns);
            let doc = export::doc(&journal.run, &records);
            let text = if doc_as == ExportFormat::Html {
                export::html(&doc)
            } else {
                export::markdown(&doc)
            };
            (text.into_bytes(), n)
        }
    };
    match &a.out {
        Some(path) => write_new(path, &bytes).map_err(|e| {
            let name = sanitize(&path.display().to_string(), false).into_owned();
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Failure::refused(format!("{name} exists: export never overwrites a file"))
            } else {
                Failure::new(format!("writing {name}: {e}"))
            }
        })?,
        None => out.write_all(&bytes)?,
    }
    if !patterns.is_empty() {
        eprintln!("redacted {redacted} match(es)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Write `bytes` to a new file of mode 0600: an existing file is refused
/// (`create_new`), never overwritten.
fn write_new(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
