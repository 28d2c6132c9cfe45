//! Text only the operator can give (an answer, a new user turn, the path of
//! an agent file), read the way `git commit` reads a message: from a flag
//! or a file as given, else from standard input when it is not a terminal,
//! else asked for on the terminal, or written in `$EDITOR` with `--edit`.
//!
//! A printed command never carries such a value as a placeholder word; it
//! leaves the value out, and running it brings the operator here.

use crate::error::Failure;
use std::io::{IsTerminal, Read, Write};

/// What is being asked for, in the operator's words ("the answer to
/// toolu_1"), and the most it may hold.
pub struct Asked<'a> {
    pub what: &'a str,
    /// Lines printed on the terminal (and in the editor's comment) before
    /// asking: what the call is, say.
    pub context: &'a [String],
    pub max: usize,
}

/// Where the text came from, for messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    StandardInput,
    Terminal,
    Editor,
}

/// The text from standard input, the terminal, or the editor (`edit`).
/// One trailing newline is dropped (`echo ok | ...` gives `ok`, as command
/// substitution does); an empty text is refused, since an answer cannot be
/// taken back and an empty one is far more often a mistake (a script that
/// forgot its input) than meant.
pub fn text(a: &Asked, edit: bool) -> Result<(String, Source), Failure> {
    let stdin = std::io::stdin();
    let (bytes, source) = if edit {
        (editor(a)?, Source::Editor)
    } else if stdin.is_terminal() {
        let mut err = std::io::stderr();
        for line in a.context {
            let _ = writeln!(err, "{line}");
        }
        let _ = writeln!(
            err,
            "Type {}, then Ctrl-D on a line of its own (Ctrl-C leaves, nothing written):",
            a.what
        );
        (read_all(stdin.lock(), a, "the terminal")?, Source::Terminal)
    } else {
        (
            read_all(stdin.lock(), a, "standard input")?,
            Source::StandardInput,
        )
    };
    let mut bytes = bytes;
    if source != Source::Editor && bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    }
    let from = match source {
        Source::StandardInput => "standard input",
        Source::Terminal => "the terminal",
        Source::Editor => "the editor",
    };
    if bytes.is_empty() {
        return Err(Failure::refused(format!(
            "{} read from {from} is empty; nothing was written",
            capital(a.what)
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::refused(format!(
            "{} read from {from} is not UTF-8 text (byte {}); nothing was written",
            capital(a.what),
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok((text, source))
}

/// At most `a.max` bytes from `r`; more is refused.
fn read_all(r: impl Read, a: &Asked, name: &str) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    r.take(a.max as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Failure::new(format!("reading {} from {name}: {e}", a.what)))?;
    if buf.len() > a.max {
        return Err(too_big(a));
    }
    Ok(buf)
}

fn too_big(a: &Asked) -> Failure {
    Failure::refused(format!(
        "{} is larger than {} bytes; nothing was written",
        capital(a.what),
        a.max
    ))
    .help("shorten it, or store it elsewhere and give a reference to it")
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The comment lines the editor's file starts with, each `# `: dropped
/// when the file is read back, as `git commit` drops them.
const COMMENT: &str = "#";

/// Write the text in `$VISUAL`, else `$EDITOR`, else `vi`, run through
/// `sh` as git runs it (so `EDITOR="code --wait"` works), on a private
/// file; read it back without its comment lines and trailing blank lines.
fn editor(a: &Asked) -> Result<Vec<u8>, Failure> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let file = Private::new()?;
    let mut template = String::from("\n");
    template.push_str(&format!(
        "{COMMENT} Write {} above. Lines starting with '#' are dropped;\n{COMMENT} an empty text writes nothing.\n",
        a.what
    ));
    for line in a.context {
        template.push_str(&format!("{COMMENT} {}\n", line.replace('\n', " ")));
    }
    std::fs::write(&file.0, template)
        .map_err(|e| Failure::new(format!("writing {}: {e}", file.0.display())))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(&file.0)
        .status()
        .map_err(|e| Failure::new(format!("starting the editor ({editor}): {e}")))?;
    if !status.success() {
        return Err(Failure::refused(format!(
            "the editor ({editor}) exited with {status}; nothing was written"
        )));
    }
    let raw = std::fs::read(&file.0)
        .map_err(|e| Failure::new(format!("reading {}: {e}", file.0.display())))?;
    if raw.len() > a.max.saturating_mul(2) {
        return Err(too_big(a));
    }
    let mut kept: Vec<&[u8]> = raw
        .split(|b| *b == b'\n')
        .filter(|l| !l.starts_with(COMMENT.as_bytes()))
        .collect();
    while kept
        .last()
        .is_some_and(|l| l.iter().all(u8::is_ascii_whitespace))
    {
        kept.pop();
    }
    let text = kept.join(&b'\n');
    if text.len() > a.max {
        return Err(too_big(a));
    }
    Ok(text)
}

/// A 0600 file of our own in the temporary directory, removed when
/// dropped.
struct Private(std::path::PathBuf);

impl Private {
    fn new() -> Result<Private, Failure> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = std::env::temp_dir();
        for _ in 0..8 {
            // Unique enough to try: create_new refuses a name taken.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path = dir.join(format!("fisk-admin-{}-{nanos:09}.txt", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(_) => return Ok(Private(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(Failure::new(format!(
                        "creating a file in {} for the editor: {e}",
                        dir.display()
                    )))
                }
            }
        }
        Err(Failure::new(format!(
            "no free name for a file in {} for the editor",
            dir.display()
        )))
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Ask `question` (it ends in `?`) on the terminal, the lines of `listed`
/// printed before it, all on standard error; `Ok` only for a yes. Without
/// a terminal nothing is asked and it is refused with `no_terminal`
/// (which says nothing was done) and the help `yes_help` (naming
/// `--yes`). `not_done` ends the refusal of an answer other than yes
/// ("nothing was deleted").
pub fn confirm(
    listed: &[String],
    question: &str,
    no_terminal: &str,
    yes_help: &str,
    not_done: &str,
) -> Result<(), Failure> {
    use std::io::BufRead;
    if !std::io::stdin().is_terminal() {
        return Err(Failure::refused(no_terminal).help(yes_help));
    }
    let mut err = std::io::stderr();
    for line in listed {
        let _ = writeln!(err, "{line}");
    }
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::new(format!("reading the answer: {e}")))?;
    if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        return Err(Failure::refused(format!("not confirmed; {not_done}")));
    }
    Ok(())
}
