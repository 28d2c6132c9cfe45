//! `info`: which store would be used, and why.

use super::{locate, CmdResult};
use crate::cli::Global;
use crate::output::{json_pretty, Style};
use journal::location::Backend;
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Global, style: Style, out: &mut dyn Write) -> CmdResult {
    let loc = locate(g)?;
    let (backend, location, exists) = match &loc.backend {
        Backend::File { dir } => ("file", dir.display().to_string(), Some(dir.is_dir())),
        Backend::JetStream { stream } => ("jetstream", stream.clone(), None),
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
    }
    Ok(ExitCode::SUCCESS)
}
