//! `info`: which store would be used, and why.

use crate::cli::Global;
use crate::error::CmdResult;
use crate::open::{locate, nats_settings, Backend};
use crate::output::{json_pretty, sanitize, Style};
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Global, style: Style, out: &mut dyn Write) -> CmdResult {
    let loc = locate(g)?;
    let (backend, location, exists) = match &loc.backend {
        Backend::File { dir } => ("file", dir.display().to_string(), Some(dir.is_dir())),
        Backend::JetStream { stream } => ("jetstream", stream.clone(), None),
    };
    // JetStream: the connection settings, and whether the stream answers
    // (a failure is reported, not fatal: info says what would be used).
    let nats = match &loc.backend {
        Backend::File { .. } => None,
        Backend::JetStream { stream } => {
            let settings = nats_settings(g, loc.nats_context.as_deref())?;
            let check = journal::store::jetstream::inspect(&settings, stream);
            Some((settings, check))
        }
    };
    if style.json() {
        json_pretty(
            out,
            &serde_json::json!({
                "backend": backend,
                "location": location,
                "why": loc.why,
                "exists": exists,
                "nats_context": loc.nats_context,
                "server": nats.as_ref().map(|(s, _)| s.server_list()),
                "context": nats.as_ref().and_then(|(s, _)| s.context_description()),
                "prefix": nats.as_ref().and_then(|(_, c)| c.as_ref().ok()).and_then(|r| journal::store::jetstream::prefix_of(&r.config.subjects)),
                "stream_ok": nats.as_ref().map(|(_, c)| c.as_ref().is_ok_and(|r| r.problems.is_empty())),
                "stream_error": nats.as_ref().and_then(|(_, c)| c.as_ref().err()).map(ToString::to_string),
            }),
        )?;
    } else {
        writeln!(out, "Sessions")?;
        writeln!(out, "  backend:  {backend}")?;
        match &loc.backend {
            Backend::File { .. } => writeln!(out, "  directory: {location}")?,
            Backend::JetStream { .. } => writeln!(out, "  stream:   {location}")?,
        }
        writeln!(out, "  chosen by: {}", loc.why)?;
        if exists == Some(false) {
            writeln!(out, "  (the directory does not exist yet)")?;
        }
        if let Some(c) = &loc.nats_context {
            writeln!(out, "  nats context: {c}")?;
        }
        if let Some((settings, check)) = &nats {
            writeln!(out, "  server:   {}", settings.server_list())?;
            writeln!(
                out,
                "  context:  {}",
                settings
                    .context_description()
                    .unwrap_or_else(|| "none (defaults and flags)".into())
            )?;
            match check {
                Ok(r) => {
                    if let Some(p) = journal::store::jetstream::prefix_of(&r.config.subjects) {
                        writeln!(out, "  prefix:   {}", sanitize(&p, false))?;
                    }
                    writeln!(out, "  messages: {}", r.messages)?;
                    for p in &r.problems {
                        writeln!(out, "  error:    {}", sanitize(&p.to_string(), false))?;
                    }
                }
                Err(e) => writeln!(out, "  unreachable: {}", sanitize(&e.to_string(), false))?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
