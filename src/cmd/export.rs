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

pub fn run(g: &Invocation, mut a: ExportArgs, out: &mut dyn Write) -> CmdResult {
    a.target.settle(g)?;
    // The operator's patterns, then each preset's (`--redact-preset`).
    let mut given = a.redact.clone();
    for p in &a.redact_preset {
        for re in p.patterns() {
            if !given.iter().any(|g| g == re) {
                given.push(re.to_owned());
            }
        }
    }
    let patterns = export::patterns(&given).map_err(|why| {
        // Which pattern: the first one refused.
        let bad = given
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
        ExportFormat::Jsonl => {
            resumes(journal, &redacted)?;
            redacted.lines.clone()
        }
        ExportFormat::Markdown | ExportFormat::Html => {
            let mut doc = export::doc(&redacted.run, &redacted.records);
            for_a_ticket(&mut doc, &redacted.records);
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

/// A journal export is for a reproduction: it must verify, and a resume
/// must take it as it takes the original (issue 39). Checked on the bytes
/// written: `verify` finds nothing the original does not have, and the
/// resume's own fold (strict, as `resume` folds) gives the same place to
/// go on from (status, next iteration, what waits). A run the agent
/// cannot fold to begin with is exported as it is (forensics), saying so.
fn resumes(journal: &journal::store::Journal, r: &export::Redacted) -> Result<(), Failure> {
    use journal::fold::{fold_with, FoldOptions};
    let refuse = |why: String| {
        Failure::refused(format!(
            "run {}: the journal export would not resume as the original does: {why}; nothing was exported",
            sanitize(&journal.run, false)
        ))
    };
    let schemas = journal::schema::SchemaSet::embedded()?;
    let check = Some(&schemas as &dyn journal::verify::RecordCheck);
    let worst = |run: &str, bytes: &[u8]| {
        journal::verify::verify_bytes(run, bytes, check)
            .findings
            .into_iter()
            .filter(|f| f.severity == journal::verify::Severity::Error)
            .map(|f| (f.code, f.line))
            .collect::<std::collections::BTreeSet<_>>()
    };
    let mut original = Vec::new();
    for e in &journal.entries {
        original.extend_from_slice(&e.raw);
        original.push(b'\n');
    }
    let before = worst(&journal.run, &original);
    if let Some((code, line)) = worst(&r.run, &r.lines).difference(&before).next() {
        return Err(refuse(format!(
            "verify finds {code} at line {}",
            line.unwrap_or(0)
        )));
    }
    let resumed = |records: &[journal::record::Record]| {
        fold_with(records.iter(), FoldOptions::default()).map(|st| {
            (
                st.status.to_string(),
                st.next_iteration,
                st.open_deferrals,
                st.needs_approval.len(),
            )
        })
    };
    let theirs: Vec<journal::record::Record> = journal.records().cloned().collect();
    match (resumed(&theirs), resumed(&r.records)) {
        (Ok(a), Ok(b)) if a == b => {
            eprintln!(
                "checked: the export verifies and a resume takes it as the original (status {}, next iteration {})",
                sanitize(&b.0, false),
                b.1
            );
            Ok(())
        }
        (Ok(_), Ok(_)) => Err(refuse("its fold differs from the original's".into())),
        (Ok(_), Err(e)) => Err(refuse(format!("the agent's fold refuses it: {e}"))),
        (Err(e), _) => {
            eprintln!(
                "fisk-admin: note: the original does not resume either (the agent's fold refuses it: {}): exported as it is",
                sanitize(&e.to_string(), false)
            );
            Ok(())
        }
    }
}

/// What a ticket needs first, and the output as a person reads it (issue
/// 39, d-12): who and what ran (agent, model, caller), when (created, the
/// last record, the end), the prompt and how it ended, ahead of the run's
/// figures; a tool's output as the viewer shows it (exec's result as its
/// text, its exit status in the label), not its JSON. From the redacted
/// records, so a redaction holds here too (and the document is checked
/// for what is left after).
fn for_a_ticket(doc: &mut export::Doc, records: &[journal::record::Record]) {
    use journal::record::Payload;
    let mut first: Vec<(String, String)> = Vec::new();
    let time = |t: Option<journal::time::Time>| {
        t.filter(|t| !t.is_zero())
            .map_or_else(|| "-".to_owned(), |t| t.to_rfc3339_seconds())
    };
    let meta = records.first().and_then(|r| match &r.payload {
        Some(Payload::Meta(m)) => Some(m),
        _ => None,
    });
    if let Some(m) = meta {
        let or_dash = |s: &str| match s {
            "" => "-".to_owned(),
            s => s.to_owned(),
        };
        first.push(("agent".into(), or_dash(&m.agent)));
        first.push(("model".into(), or_dash(&m.fingerprint.model)));
        first.push(("caller".into(), or_dash(&m.caller)));
        first.push(("created".into(), time(Some(m.created))));
    }
    first.push(("updated".into(), time(records.last().and_then(|r| r.time))));
    // How it ended: the last terminal with nothing after it.
    let ended = records.last().and_then(|r| match &r.payload {
        Some(Payload::Terminal(t)) => Some((t, r.time)),
        _ => None,
    });
    if let Some((t, at)) = ended {
        let mut how = t.reason.clone();
        if !t.message.is_empty() {
            how.push_str(&format!(": {}", t.message));
        }
        first.push(("ended".into(), format!("{} ({how})", time(at))));
    }
    if let Some(m) = meta {
        let one: String = m.prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        first.push(("prompt".into(), crate::output::truncate(&one, 300)));
    }
    first.append(&mut doc.figures);
    doc.figures = first;
    for s in &mut doc.sections {
        let result = s.label.starts_with("tool_result ") || s.label.starts_with("answer ");
        if !result {
            continue;
        }
        let shown = crate::transcript::output::output(&s.body);
        for word in &shown.status {
            s.label.push(' ');
            s.label.push_str(word);
        }
        s.body = shown.body.join("\n");
    }
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
