//! `info`: which store would be used, and why.

use crate::error::CmdResult;
use crate::invocation::Invocation;
use crate::open::{given, locate, nats_settings_from, Backend, Given};
use crate::output::{json_pretty, sanitize, sorted, Format};
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
    /// What kind of setting chose the store: `flag`, `environment`,
    /// `agent file` or `default`.
    chosen_by: &'static str,
    /// The flag or variable that chose it (`--state-dir`, `--store`,
    /// `--config`, `--agent`, `--root-dir`, `FISK_ADMIN_STORE`); `null` for
    /// the default.
    setting: Option<&'static str>,
    /// The agent's root directory, when it placed the store, and what set
    /// it (`--root-dir`, `root_directory in FILE`).
    root_directory: Option<String>,
    root_from: Option<String>,
    /// JetStream: where each connection setting in use came from
    /// (`--server`, `NATS_URL (environment)`, `context NAME`, `the server
    /// URL`, `default`), by setting (`server`, `creds`, `user`, `password`,
    /// `token`).
    connection: Option<std::collections::BTreeMap<&'static str, String>>,
    /// Whether the directory exists (file stores).
    exists: Option<bool>,
    nats_context: Option<String>,
    server: Option<String>,
    /// The version the server answering states, when the stream could be
    /// looked up.
    server_version: Option<String>,
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

pub fn run(g: &Invocation, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let loc = locate(g)?;
    // 2 when the server did not answer, 1 when the stream is missing.
    let mut exit = 0u8;
    let mut info = Info {
        backend: "file",
        location: String::new(),
        why: loc.why.clone(),
        chosen_by: loc.chosen.kind(),
        setting: loc.chosen.setting(),
        root_directory: loc.root.as_ref().map(|r| journal::shell::shown(&r.dir)),
        root_from: loc.root.as_ref().map(|r| r.from.clone()),
        connection: None,
        exists: None,
        nats_context: loc.nats_context.clone(),
        server: None,
        server_version: None,
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
            let given = given(g)?;
            let settings = nats_settings_from(g, given.clone(), loc.nats_context.as_deref())?;
            info.connection = Some(sources(&given, &settings));
            info.server = Some(settings.server_list());
            info.context = settings.context_description();
            match jetstream::inspect(&settings, stream) {
                Ok(r) => {
                    info.server_version = Some(r.version.clone()).filter(|v| !v.is_empty());
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
        // A backend newer than this binary: what `info` holds already.
        _ => {}
    }
    match style.format {
        Format::Json => json_pretty(out, &sorted(&info)?)?,
        Format::Text => render(out, &info)?,
    }
    Ok(ExitCode::from(exit))
}

/// Where each connection setting in use came from: the flag or its
/// variable, else the context, else the server URL (credentials written
/// into it), else (the server) the default.
fn sources(
    given: &Given,
    s: &journal::nats::Settings,
) -> std::collections::BTreeMap<&'static str, String> {
    let ctx = s.context.as_ref().map(|(name, _)| {
        (
            name.clone(),
            journal::nats::load_context(name).unwrap_or_default(),
        )
    });
    let in_context = |pick: fn(&journal::nats::ContextFile) -> &str| match &ctx {
        Some((name, c)) if !pick(c).is_empty() => Some(format!("context {name}")),
        _ => None,
    };
    let mut m = std::collections::BTreeMap::new();
    let server = given
        .server
        .as_ref()
        .map(|(_, src)| src.describe())
        .or_else(|| in_context(|c| &c.url))
        .unwrap_or_else(|| "default".into());
    m.insert("server", server);
    let mut put = |key: &'static str,
                   set: bool,
                   flag: Option<crate::open::Source>,
                   pick: fn(&journal::nats::ContextFile) -> &str| {
        if !set {
            return;
        }
        let from = flag
            .map(|f| f.describe())
            .or_else(|| in_context(pick))
            .unwrap_or_else(|| "the server URL".into());
        m.insert(key, from);
    };
    put(
        "creds",
        s.creds.is_some(),
        given.creds.as_ref().map(|x| x.1),
        |c| &c.creds,
    );
    put(
        "user",
        s.user.is_some(),
        given.user.as_ref().map(|x| x.1),
        |c| &c.user,
    );
    put(
        "password",
        s.password.is_some(),
        given.password.as_ref().map(|x| x.1),
        |c| &c.password,
    );
    put(
        "token",
        s.token.is_some(),
        given.token.as_ref().map(|x| x.1),
        |c| &c.token,
    );
    m
}

/// The setting that chose the store, in words: `--state-dir (flag)`.
fn chosen_text(info: &Info) -> String {
    match (info.chosen_by, info.setting) {
        ("flag", _) => format!("{} (flag)", info.why),
        ("environment", _) => format!("{} (environment variable)", info.why),
        ("agent file", Some(flag)) => format!("{} ({flag})", info.why),
        _ => info.why.clone(),
    }
}

/// Paths, names and the server's words are untrusted when printed.
fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    sanitize(s, false)
}

fn render(out: &mut dyn Write, info: &Info) -> io::Result<()> {
    writeln!(out, "Sessions")?;
    writeln!(out, "  backend:   {}", info.backend)?;
    match info.backend {
        "file" => writeln!(out, "  directory: {}", clean(&info.location))?,
        _ => writeln!(out, "  stream:    {}", clean(&info.location))?,
    }
    writeln!(out, "  chosen by: {}", clean(&chosen_text(info)))?;
    if let (Some(r), Some(from)) = (&info.root_directory, &info.root_from) {
        writeln!(out, "  root:      {} ({})", clean(r), clean(from))?;
    }
    if info.exists == Some(false) {
        writeln!(out, "  (the directory does not exist yet)")?;
    }
    if let Some(server) = &info.server {
        let from = |key: &str| {
            info.connection
                .as_ref()
                .and_then(|c| c.get(key))
                .map(|f| format!(" (from {f})"))
                .unwrap_or_default()
        };
        writeln!(
            out,
            "  server:    {}{}",
            clean(server),
            clean(&from("server"))
        )?;
        if let Some(v) = &info.server_version {
            writeln!(out, "  version:   nats-server {}", clean(v))?;
        }
        writeln!(
            out,
            "  context:   {}",
            clean(
                info.context
                    .as_deref()
                    .unwrap_or("none (defaults and flags)")
            )
        )?;
        for key in ["creds", "user", "password", "token"] {
            if let Some(f) = info.connection.as_ref().and_then(|c| c.get(key)) {
                writeln!(
                    out,
                    "  {key}:{:w$}from {}",
                    "",
                    clean(f),
                    w = 10 - key.len()
                )?;
            }
        }
        match &info.stream_error {
            None => {
                if let Some(p) = &info.prefix {
                    writeln!(out, "  prefix:    {}", sanitize(p, false))?;
                }
                writeln!(out, "  messages:  {}", info.messages.unwrap_or(0))?;
                for p in &info.problems {
                    writeln!(out, "  error:     {}", sanitize(p, false))?;
                }
            }
            Some(e) => writeln!(out, "  unreachable: {}", sanitize(e, false))?,
        }
    }
    Ok(())
}
