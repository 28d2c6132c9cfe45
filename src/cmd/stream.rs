//! `stream check STREAM` / `stream create STREAM --subject PREFIX.>`: a
//! JetStream stream against the session-store rules (SPEC 8).

use crate::cli::{Global, StreamCommand};
use crate::error::{CmdResult, Failure};
use crate::open::{config_context, nats_settings, stream_help};
use crate::output::{json_pretty, sanitize, Style};
use journal::store::jetstream;
use std::io::Write;
use std::process::ExitCode;

pub fn run(g: &Global, c: StreamCommand, style: Style, out: &mut dyn Write) -> CmdResult {
    let settings = nats_settings(g, config_context(g)?.as_deref())?;
    match c {
        StreamCommand::Check(a) => {
            let r = jetstream::inspect(&settings, &a.stream)
                .map_err(|e| about(e, "checking", &a.stream))?;
            let prefix = jetstream::prefix_of(&r.config.subjects);
            if style.json() {
                let problems: Vec<_> = r
                    .problems
                    .iter()
                    .map(|p| {
                        serde_json::json!({
                            "setting": p.setting, "found": p.found,
                            "required": p.required, "fix": p.fix,
                        })
                    })
                    .collect();
                json_pretty(
                    out,
                    &serde_json::json!({
                        "stream": r.name, "server": r.server, "ok": r.problems.is_empty(),
                        "subjects": r.config.subjects, "prefix": prefix,
                        "problems": problems, "notes": r.notes,
                        "messages": r.messages, "bytes": r.bytes,
                    }),
                )?;
            } else {
                // The stream's subjects come from the server: untrusted.
                writeln!(
                    out,
                    "stream {} on {}",
                    sanitize(&r.name, false),
                    sanitize(&r.server, false)
                )?;
                let subjects = r.config.subjects.join(", ");
                writeln!(out, "  subjects: {}", sanitize(&subjects, false))?;
                if let Some(p) = &prefix {
                    writeln!(out, "  prefix:   {}", sanitize(p, false))?;
                }
                writeln!(out, "  messages: {} ({} bytes)", r.messages, r.bytes)?;
                for p in &r.problems {
                    writeln!(out, "  error: {}", sanitize(&p.to_string(), false))?;
                }
                for n in &r.notes {
                    writeln!(out, "  note:  {}", sanitize(n, false))?;
                }
                if r.problems.is_empty() {
                    writeln!(out, "ok: the stream can hold fisk sessions")?;
                } else {
                    writeln!(
                        out,
                        "refused: fisk cannot use this stream until every error above is fixed"
                    )?;
                }
            }
            Ok(if r.problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        StreamCommand::Create(a) => {
            if jetstream::prefix_of(std::slice::from_ref(&a.subject)).is_none() {
                return Err(Failure::new(format!(
                    "--subject {:?} is not of the form PREFIX.>",
                    a.subject
                ))
                .help("for example: --subject 'fisk.sessions.>'"));
            }
            let created = jetstream::create_stream(&settings, &a.stream, &a.subject)
                .map_err(|e| about(e, "creating", &a.stream))?;
            if style.json() {
                json_pretty(
                    out,
                    &serde_json::json!({"stream": a.stream, "subject": a.subject, "created": created}),
                )?;
            } else if created {
                writeln!(
                    out,
                    "created stream {} on {} for subject {}",
                    a.stream,
                    settings.server_list(),
                    a.subject
                )?;
            } else {
                writeln!(
                    out,
                    "stream {} already exists with the session-store configuration; nothing changed",
                    a.stream
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A failure, with which stream it was about.
fn about(e: journal::Error, doing: &str, stream: &str) -> Failure {
    stream_help(e, &format!("{doing} jetstream stream {stream:?}"))
}
