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
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, a: ExportArgs, out: &mut dyn Write) -> CmdResult {
    let patterns = export::patterns(&a.redact).map_err(|why| {
        // Which pattern: the first one refused.
        let bad = a
            .redact
            .iter()
            .find(|p| export::patterns(std::slice::from_ref(p)).is_err())
            .map_or(String::new(), |p| sanitize(p, false).into_owned());
        Failure::new(format!("--redact {bad}: {}", sanitize(&why, true)))
    })?;
    let read = crate::runs::Read::target(g, &a.target)?;
    let journal = read.journal();
    // `Cli::settle` gave export its document, from --as or --format.
    let doc_as = a.doc_as.unwrap_or(ExportFormat::Markdown);
    // One redaction for every format: the records, their lines and the
    // run id, or a refusal naming the field it cannot take a match out of.
    let redacted = export::redact_run(journal, &patterns).map_err(|why| {
        Failure::refused(format!(
            "run {}: {}; nothing was exported",
            sanitize(&journal.run, false),
            sanitize(&why, true)
        ))
    })?;
    let bytes = match doc_as {
        ExportFormat::Jsonl => redacted.lines.clone(),
        ExportFormat::Markdown | ExportFormat::Html => {
            let mut doc = export::doc(&redacted.run, &redacted.records);
            // What was written by hand, who wrote it and why: the run's
            // entries of the store's audit log (issue 38), redacted alike.
            // A journal (jsonl) stays the records alone.
            if let crate::runs::Read::Store(store, _) = &read {
                for act in journal::custody::acts(&store.audit_log()?, &journal.run) {
                    let mut body = act.sentence();
                    for p in &patterns {
                        body = p.replace_all(&body, "[redacted]").into_owned();
                    }
                    doc.sections.push(export::Section {
                        seq: act.written.map_or(0, |w| w.first),
                        iteration: None,
                        label: format!("by hand: {}", act.op),
                        body,
                        folded: false,
                    });
                }
            }
            let text = if doc_as == ExportFormat::Html {
                export::html(&doc)
            } else {
                export::markdown(&doc)
            };
            text.into_bytes()
        }
    };
    if let Some(why) = export::leftover(&bytes, &patterns) {
        return Err(Failure::refused(sanitize(&why, true).into_owned()));
    }
    match &a.out {
        Some(path) => write_whole(path, &bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Failure::refused(format!(
                "{} exists: export never overwrites a file",
                sanitize(&path.display().to_string(), false)
            )),
            // A full disk: the error's help says to make room and run the
            // same command again (nothing was left behind).
            _ => Failure::from(journal::Error::io(path, e)),
        })?,
        // A terminal gets no character it would act on (a journal's text is
        // the run's, not ours): the same records, those characters escaped.
        None if doc_as == ExportFormat::Jsonl && std::io::stdout().is_terminal() => {
            out.write_all(&export::terminal_safe(&bytes))?
        }
        None => out.write_all(&bytes)?,
    }
    if !patterns.is_empty() {
        eprintln!("redacted {} match(es)", redacted.count);
    }
    Ok(ExitCode::SUCCESS)
}

/// Write `bytes` as the new file `path` (0600), whole or not at all: an
/// existing name is refused and never overwritten; the bytes go to a
/// temporary file beside it first (`.<name>.export-<pid>.tmp`, fsynced),
/// which is linked to `path` only once whole, then removed, and the
/// directory fsynced. A failure (a full disk) removes the temporary file:
/// no partial file is ever left under either name.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind};
    if path.symlink_metadata().is_ok() {
        return Err(Error::from(ErrorKind::AlreadyExists));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".export-{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        // `create_new` (O_CREAT|O_EXCL) never follows a link at `tmp`.
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut f = o.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::hard_link(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    written?;
    std::fs::File::open(dir)?.sync_all()
}
