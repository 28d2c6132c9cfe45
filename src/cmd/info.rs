//! `info`: which store would be used, and why.

use crate::cli::Global;
use crate::error::CmdResult;
use crate::open::{locate, nats_settings, Backend};
use crate::output::{json_pretty, sanitize, sorted, Format, Style};
use journal::store::jetstream;
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// The store and why it was chosen (keys sorted: `output::sorted`). The
/// JetStream fields are `null` for a file store.
#[derive(Serialize)]
struct Info {
    backend: &'static str,
    /// The directory or the stream.
    location: String,
    why: String,
    /// Whether the directory exists (file stores).
    exists: Option<bool>,
    nats_context: Option<String>,
    server: Option<String>,
    context: Option<String>,
    prefix: Option<String>,
    stream_ok: Option<bool>,
    /// Why the stream could not be inspected.
    stream_error: Option<String>,
    #[serde(skip)]
    messages: Option<u64>,
    /// What breaks SPEC 8 in the stream's configuration.
    #[serde(skip)]
    problems: Vec<String>,
}

pub fn run(g: &Global, style: Style, out: &mut dyn Write) -> CmdResult {
    let loc = locate(g)?;
    // 2 when the server did not answer, 1 when the stream is missing.
    let mut exit = 0u8;
    let mut info = Info {
        backend: "file",
        location: String::new(),
        why: loc.why.clone(),
        exists: None,
        nats_context: loc.nats_context.clone(),
        server: None,
        context: None,
        prefix: None,
        stream_ok: None,
        stream_error: None,
        messages: None,
        problems: Vec::new(),
    };
    match &loc.backend {
        Backend::File { dir } => {
            // Absolute, with `.`, `..` and links resolved (b-21).
            let shown = crate::open::canonical_dir(dir).unwrap_or_else(|| dir.clone());
            info.location = journal::shell::shown(&shown);
            info.exists = Some(dir.is_dir());
        }
        // The connection settings, and whether the stream answers (a
        // failure is reported, not fatal: info says what would be used).
        Backend::JetStream { stream } => {
            info.backend = "jetstream";
            info.location = stream.clone();
            let settings = nats_settings(g, loc.nats_context.as_deref())?;
            info.server = Some(settings.server_list());
            info.context = settings.context_description();
            match jetstream::inspect(&settings, stream) {
                Ok(r) => {
                    info.prefix = jetstream::prefix_of(&r.config.subjects);
                    info.stream_ok = Some(r.problems.is_empty());
                    info.messages = Some(r.messages);
                    info.problems = r.problems.iter().map(ToString::to_string).collect();
                }
                Err(e) => {
                    exit = match &e {
                        journal::Error::NoStream { .. } => 1,
                        journal::Error::Unavailable { .. } => 2,
                        _ => 2,
                    };
                    info.stream_ok = Some(false);
                    info.stream_error = Some(e.to_string());
                }
            }
        }
    }
    match style.format {
        Format::Json => json_pretty(out, &sorted(&info)?)?,
        Format::Text => render(out, &info)?,
    }
    Ok(ExitCode::from(exit))
}

/// Paths, names and the server's words are untrusted when printed.
fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    sanitize(s, false)
}

fn render(out: &mut dyn Write, info: &Info) -> io::Result<()> {
    writeln!(out, "Sessions")?;
    writeln!(out, "  backend:  {}", info.backend)?;
    match info.backend {
        "file" => writeln!(out, "  directory: {}", clean(&info.location))?,
        _ => writeln!(out, "  stream:   {}", clean(&info.location))?,
    }
    writeln!(out, "  chosen by: {}", clean(&info.why))?;
    if info.exists == Some(false) {
        writeln!(out, "  (the directory does not exist yet)")?;
    }
    if let Some(c) = &info.nats_context {
        writeln!(out, "  nats context: {}", clean(c))?;
    }
    if let Some(server) = &info.server {
        writeln!(out, "  server:   {}", clean(server))?;
        writeln!(
            out,
            "  context:  {}",
            clean(
                info.context
                    .as_deref()
                    .unwrap_or("none (defaults and flags)")
            )
        )?;
        match &info.stream_error {
            None => {
                if let Some(p) = &info.prefix {
                    writeln!(out, "  prefix:   {}", sanitize(p, false))?;
                }
                writeln!(out, "  messages: {}", info.messages.unwrap_or(0))?;
                for p in &info.problems {
                    writeln!(out, "  error:    {}", sanitize(p, false))?;
                }
            }
            Some(e) => writeln!(out, "  unreachable: {}", sanitize(e, false))?,
        }
    }
    Ok(())
}
