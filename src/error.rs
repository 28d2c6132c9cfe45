//! Why a command did not do its job: the failure type, the exit-status
//! policy (CLI.md: 0 success, 1 a refusal or findings, 2 the tool could not
//! do its job; a closed pipe is success) and how a failure is shown.

use crate::output::{report_handler, sanitize, Style};
use std::process::ExitCode;

/// Why a command did not do its job.
#[derive(Debug)]
pub struct Failure {
    /// The library error this failure came from, if it came from one:
    /// kept whole so its fields (run, path, line, offset) are there for
    /// rendering, not only its message.
    pub error: Option<Box<journal::Error>>,
    pub message: String,
    pub help: Option<String>,
    /// More help, shown after what the error itself calls for (which is
    /// worded when the failure is shown, with the invocation's flags).
    pub also: Vec<String>,
    /// 1: a refusal (the tool worked and said no); 2: it could not do its job.
    pub exit: u8,
    pub broken_pipe: bool,
}

impl Failure {
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            error: None,
            message: message.into(),
            help: None,
            also: Vec::new(),
            exit: 2,
            broken_pipe: false,
        }
    }

    pub fn refused(message: impl Into<String>) -> Failure {
        Failure {
            exit: 1,
            ..Failure::new(message)
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Failure {
        self.help = Some(help.into());
        self
    }
}

/// The exit status an error gives: 1 for a refusal (the tool worked and
/// said no), 2 for anything that stopped it.
pub fn exit_of(e: &journal::Error) -> u8 {
    match e {
        journal::Error::Live { .. }
        | journal::Error::Held { .. }
        | journal::Error::Refused(_)
        | journal::Error::TornTail { .. }
        | journal::Error::Exists { .. } => 1,
        _ => 2,
    }
}

/// A library error as one line: its message, then what to run next (with
/// this invocation's flags).
pub fn describe(g: &crate::invocation::Invocation, e: &journal::Error) -> String {
    match crate::hint::for_error(g, e) {
        Some(h) => format!("{}; {h}", said(e)),
        None => said(e),
    }
}

/// What the library says of `e`, with this tool's words where the library
/// says what an operator does: forcing is `--force` here.
pub fn said(e: &journal::Error) -> String {
    match e.refusal().and_then(|r| r.state()) {
        Some(s) if s.forcible => format!(
            "{} ({} takes it only when it is named, with --force); nothing was written",
            s.why(),
            s.op.word()
        ),
        _ => e.to_string(),
    }
}

impl From<journal::Error> for Failure {
    fn from(e: journal::Error) -> Failure {
        Failure {
            exit: exit_of(&e),
            message: said(&e),
            // Worded when shown ([`finish`]), with the invocation's flags.
            help: None,
            error: Some(Box::new(e)),
            ..Failure::new("")
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure {
            broken_pipe: e.kind() == std::io::ErrorKind::BrokenPipe,
            ..Failure::new(format!("writing output: {e}"))
        }
    }
}

/// The most of a journal line read to place an error in it: a longer
/// line is shown from its start, the caret at its first column.
const LINE_CAP: u64 = 1024 * 1024;

/// The journal line a corrupt or torn journal's error points at, read from
/// its file, for miette to show under the message: the part around the
/// byte where Go's scanner stops (so the caret is at that column), or the
/// line's start when the line is JSON but not a record.
fn offending_line(e: &journal::Error) -> Option<DamageSource> {
    use std::io::{Read, Seek};
    // A line of a file: a JetStream message is not one, and no snippet
    // pretends it is.
    let (path, line, offset) = match e.place()? {
        journal::Where::Line { path, line, offset } if *line > 0 => (path, *line, *offset),
        _ => return None,
    };
    // Only a regular file (not through a link): a FIFO would block the
    // open, a device never end.
    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let mut f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    f.seek(std::io::SeekFrom::Start(offset)).ok()?;
    let mut buf = Vec::new();
    f.take(LINE_CAP).read_to_end(&mut buf).ok()?;
    let whole = buf.len() < LINE_CAP as usize || buf.contains(&b'\n');
    let end = buf.iter().position(|b| *b == b'\n').unwrap_or(buf.len());
    let bytes = buf.get(..end)?;
    // Where in the line Go's scanner stops (0 when the line is JSON, or
    // too long to have been read whole).
    let at = match whole {
        true => journal::Record::syntax_error_at(bytes).unwrap_or(0),
        false => 0,
    };
    Some(DamageSource::new(
        sanitize(&path.display().to_string(), false).into_owned(),
        bytes,
        at,
        line,
    ))
}

/// One journal line as miette shows it: at most [`BEFORE`] characters
/// before the damaged byte and [`AFTER`] from it, neutralised, with the
/// damaged byte's place kept for the caret and the `line:column` header.
#[derive(Debug)]
struct DamageSource {
    name: String,
    text: String,
    line: usize,
    /// Byte offset of the damaged byte in `text`.
    caret: usize,
    /// Its column in the whole line (0-based, in characters as shown).
    column: usize,
}

const BEFORE: usize = 60;
const AFTER: usize = 100;

impl DamageSource {
    fn new(name: String, bytes: &[u8], at: usize, line: usize) -> DamageSource {
        let (head, tail) = bytes.split_at(at.min(bytes.len()));
        let head = sanitize(&String::from_utf8_lossy(head), false).into_owned();
        let tail = sanitize(&String::from_utf8_lossy(tail), false).into_owned();
        let column = head.chars().count();
        let kept: String = if column > BEFORE {
            let skip = column - (BEFORE - 1);
            std::iter::once('…')
                .chain(head.chars().skip(skip))
                .collect()
        } else {
            head
        };
        let caret = kept.len();
        let rest = crate::output::truncate(&tail, AFTER);
        DamageSource {
            name,
            text: format!("{kept}{rest}"),
            line,
            caret,
            column,
        }
    }
}

impl miette::SourceCode for DamageSource {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        // Asked for the label alone (no context lines), miette wants where
        // it is, for the `file:line:column` header: the damaged byte's
        // column in the whole line, not in the part shown.
        let column = if before == 0 && after == 0 && span.offset() == self.caret {
            self.column
        } else {
            0
        };
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            self.text.as_bytes(),
            (0, self.text.len()).into(),
            self.line.saturating_sub(1),
            column,
            1,
        )))
    }
}

/// For a file journal damaged inside, the complete command that reads it
/// up to the damage: `show RUN --until-seq N`, N the seq of the line just
/// before the bad one (none when the first line is bad, or the line
/// before it cannot be read back).
fn read_up_to_damage(g: &crate::invocation::Invocation, e: &journal::Error) -> Option<String> {
    use std::io::{Read, Seek};
    let journal::Error::Corrupt {
        run,
        at: journal::Where::Line { path, line, offset },
        ..
    } = e
    else {
        return None;
    };
    if *line < 2 || *offset == 0 || !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    // The line before the bad one: the bytes just before its start.
    let from = offset.saturating_sub(LINE_CAP);
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(std::io::SeekFrom::Start(from)).ok()?;
    let mut buf = Vec::new();
    f.take(offset - from).read_to_end(&mut buf).ok()?;
    let body = buf.strip_suffix(b"\n")?;
    let start = match body.iter().rposition(|b| *b == b'\n') {
        Some(i) => i + 1,
        None if from == 0 => 0,
        None => return None,
    };
    let prev = body.get(start..)?;
    let seq = journal::record::Record::decode(prev).ok()?.seq;
    let seq = seq.to_string();
    Some(format!(
        "to read it up to the damage (seq {seq}, the last before line {line}): `{}`",
        crate::hint::command(g, &["show", run, "--until-seq", &seq])
    ))
}

/// What every command returns: the exit status it chose, or why it failed.
pub type CmdResult = Result<ExitCode, Failure>;

/// A failure as it is shown: `fisk-admin: × message`, the line it is
/// about (labelled) when there is one, `help:` under it; one shape for a
/// command's own failure and for one run's failure within a batch.
/// Messages quote what they are about (a fingerprint field, a server's
/// error, a stream's subject): untrusted text, neutralised.
fn rendered(
    message: &str,
    help: Option<&str>,
    source: Option<DamageSource>,
    style: Style,
) -> String {
    let mut diag = miette::MietteDiagnostic::new(sanitize(message, true));
    if let Some(h) = help {
        diag = diag.with_help(sanitize(h, true));
    }
    let mut text = String::new();
    let plain = diag.message.clone();
    let done = match source {
        // The line the error is about, shown and labelled.
        Some(source) => {
            let diag = diag.with_label(miette::LabeledSpan::at_offset(source.caret, "here"));
            let report = miette::Report::new(diag).with_source_code(source);
            report_handler(style.color).render_report(&mut text, report.as_ref())
        }
        None => report_handler(style.color).render_report(&mut text, &diag),
    };
    if done.is_err() {
        text = plain;
    }
    let mut out = format!("fisk-admin: {}", text.trim_start());
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// One run's failure within a batch (`rm`, `upgrade`, `validate` of many
/// runs), said on stderr in the shape of a command's own failure while the
/// batch goes on.
pub fn say(message: &str, help: Option<&str>, style: Style) {
    eprint!("{}", rendered(message, help, None, style));
}

/// Render a failure as `fisk-admin: message` (with help) on stderr, and
/// turn the result into the process's exit status.
pub fn finish(result: CmdResult, g: &crate::invocation::Invocation) -> ExitCode {
    let style = g.style;
    match result {
        Ok(code) => code,
        // A closed pipe (`| head`) is not an error.
        Err(f) if f.broken_pipe => ExitCode::SUCCESS,
        Err(mut f) => {
            if f.help.is_none() {
                if let Some(e) = f.error.as_deref() {
                    f.help = crate::hint::for_error(g, e);
                }
            }
            let mut also = std::mem::take(&mut f.also);
            if let Some(h) = f.error.as_deref().and_then(|e| read_up_to_damage(g, e)) {
                also.push(h);
            }
            f.help = f
                .help
                .into_iter()
                .chain(also)
                .reduce(|a, b| format!("{a}; {b}"));
            let source = f.error.as_deref().and_then(offending_line);
            eprint!("{}", rendered(&f.message, f.help.as_deref(), source, style));
            ExitCode::from(f.exit)
        }
    }
}
