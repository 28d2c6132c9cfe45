//! `stream check STREAM` / `stream create STREAM --subject 'PREFIX.>'` /
//! `stream edit STREAM --allow-rollup|--no-allow-rollup`: a JetStream
//! stream against the session-store rules (SPEC 8), and the one setting
//! `upgrade` needs changed.

use crate::cli::{StreamCheckArgs, StreamCommand, StreamCreateArgs, StreamEditArgs};
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::{config_context, nats_settings, stream_help};
use crate::output::{json_pretty, sanitize, sorted, Format, Style};
use journal::nats::Settings;
use journal::store::jetstream::{self, ConfigProblem};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, c: StreamCommand, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    let settings = nats_settings(g, config_context(g)?.as_deref())?;
    match c {
        StreamCommand::Check(a) => check(g, &settings, a, style, out),
        StreamCommand::Create(a) => create(&settings, a, style, out),
        StreamCommand::Edit(a) => edit(g, &settings, a, style, out),
    }
}

/// A stream as `stream check` found it (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Checked<'a> {
    stream: &'a str,
    server: &'a str,
    /// The version the server answering states (empty when none).
    server_version: &'a str,
    /// Subjects the stream holds, and about how many bytes of each
    /// replica's server memory its subject index takes.
    subject_count: u64,
    subject_index_bytes: u64,
    /// Whether fisk can use the stream: no problems.
    ok: bool,
    subjects: &'a [String],
    prefix: Option<String>,
    problems: Vec<Problem<'a>>,
    /// Settings that cost sessions or appends (exit 1 with `--strict`).
    warnings: &'a [String],
    notes: &'a [String],
    messages: u64,
    bytes: u64,
    replicas: usize,
    storage: &'static str,
    placement: &'a jetstream::Placement,
    /// The commands that clear the warnings (rollups allowed: the edit
    /// that forbids them), complete for pasting: this invocation's store
    /// and connection flags (issue 39, d-7).
    next: Vec<crate::hint::Cmd>,
}

/// One way the stream breaks SPEC 8.
#[derive(Serialize)]
struct Problem<'a> {
    setting: &'a str,
    found: &'a str,
    required: &'a str,
    fix: &'a str,
    #[serde(skip)]
    problem: &'a ConfigProblem,
}

fn check(
    g: &Invocation,
    settings: &Settings,
    a: StreamCheckArgs,
    style: Style,
    out: &mut dyn Write,
) -> CmdResult {
    let r = jetstream::inspect(settings, &a.stream).map_err(|e| about(e, "checking", &a.stream))?;
    let mut next = Vec::new();
    if r.config.allow_rollup {
        next.push(crate::hint::cmd(
            g,
            &["stream", "edit", &a.stream, "--no-allow-rollup"],
        ));
    }
    let checked = Checked {
        stream: &r.name,
        server: &r.server,
        server_version: &r.version,
        subject_count: r.subjects,
        subject_index_bytes: r.subject_index_bytes,
        ok: r.problems.is_empty(),
        subjects: &r.config.subjects,
        prefix: jetstream::prefix_of(&r.config.subjects),
        problems: r
            .problems
            .iter()
            .map(|p| Problem {
                setting: p.setting,
                found: &p.found,
                required: &p.required,
                fix: &p.fix,
                problem: p,
            })
            .collect(),
        warnings: &r.warnings,
        notes: &r.notes,
        messages: r.messages,
        bytes: r.bytes,
        replicas: r.layout.replicas,
        storage: match r.layout.memory {
            true => "memory",
            false => "file",
        },
        placement: &r.placement,
        next,
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&checked)?)?,
        Format::Text => render_check(out, &checked)?,
    }
    let warned = a.strict && !checked.warnings.is_empty();
    Ok(if checked.ok && !warned {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Bytes in megabytes, one decimal (`219.6 MB`).
fn render_check(out: &mut dyn Write, c: &Checked) -> io::Result<()> {
    // The stream's subjects come from the server: untrusted.
    writeln!(
        out,
        "stream {} on {}",
        sanitize(c.stream, false),
        sanitize(c.server, false)
    )?;
    writeln!(
        out,
        "  subjects: {}",
        sanitize(&c.subjects.join(", "), false)
    )?;
    if let Some(p) = &c.prefix {
        writeln!(out, "  prefix:   {}", sanitize(p, false))?;
    }
    if !c.server_version.is_empty() {
        writeln!(
            out,
            "  server:   nats-server {}",
            sanitize(c.server_version, false)
        )?;
    }
    writeln!(
        out,
        "  messages: {} ({})",
        crate::output::thousands(c.messages),
        crate::output::human_bytes(c.bytes)
    )?;
    writeln!(
        out,
        "  index:    {} subjects, about {} of the server's memory on each replica ({} bytes a subject, measured on nats-server 2.15.1)",
        crate::output::thousands(c.subject_count),
        crate::output::human_bytes(c.subject_index_bytes),
        jetstream::SUBJECT_INDEX_BYTES
    )?;
    writeln!(out, "  storage:  {}", c.storage)?;
    let mut replicas = format!("  replicas: {}", c.replicas);
    if let Some(cluster) = &c.placement.cluster {
        replicas.push_str(&format!(" in cluster {}", sanitize(cluster, false)));
    }
    if let Some(leader) = &c.placement.leader {
        replicas.push_str(&format!(", leader {}", sanitize(leader, false)));
    }
    for (peer, current) in &c.placement.peers {
        let state = if *current { "current" } else { "behind" };
        replicas.push_str(&format!(", {} {state}", sanitize(peer, false)));
    }
    if !c.placement.tags.is_empty() {
        replicas.push_str(&format!(
            " (placement tags {})",
            sanitize(&c.placement.tags.join(", "), false)
        ));
    }
    writeln!(out, "{replicas}")?;
    for p in &c.problems {
        writeln!(out, "  error: {}", sanitize(&p.problem.to_string(), false))?;
    }
    for w in c.warnings {
        writeln!(out, "  warning: {}", sanitize(w, false))?;
    }
    for cmd in &c.next {
        writeln!(out, "{}", cmd.step("  ", "clear it with"))?;
    }
    for n in c.notes {
        writeln!(out, "  note:  {}", sanitize(n, false))?;
    }
    // The last line says what was found.
    match (c.ok, c.warnings.len()) {
        (true, 0) => writeln!(out, "ok: the stream can hold fisk sessions"),
        (true, n) => writeln!(
            out,
            "usable, with {n} warning(s): fisk can hold sessions here, at the cost each warning above names"
        ),
        (false, 0) => writeln!(
            out,
            "refused: fisk cannot use this stream until every error above is fixed"
        ),
        (false, n) => writeln!(
            out,
            "refused: fisk cannot use this stream until every error above is fixed ({n} warning(s) as well)"
        ),
    }
}

/// What `stream create` did (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Created<'a> {
    stream: &'a str,
    subject: &'a str,
    /// False when a stream with exactly this configuration was there.
    created: bool,
    #[serde(skip)]
    server: String,
}

fn create(
    settings: &Settings,
    a: StreamCreateArgs,
    style: Style,
    out: &mut dyn Write,
) -> CmdResult {
    if jetstream::prefix_of(std::slice::from_ref(&a.subject)).is_none() {
        return Err(Failure::new(format!(
            "--subject {:?} is not of the form 'PREFIX.>'",
            a.subject
        ))
        .help("for example: --subject 'fisk.sessions.>'"));
    }
    let created = Created {
        created: jetstream::create_stream(
            settings,
            &a.stream,
            &a.subject,
            jetstream::Layout {
                replicas: usize::from(a.replicas),
                memory: a.storage == crate::cli::Storage::Memory,
            },
        )
        .map_err(|e| about(e, "creating", &a.stream))?,
        stream: &a.stream,
        subject: &a.subject,
        server: settings.server_list(),
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&created)?)?,
        // The name and subject are a flag's, the server a context's:
        // untrusted text, neutralised as journal text is (issue 18).
        Format::Text if created.created => writeln!(
            out,
            "created stream {} on {} for subject {}",
            sanitize(created.stream, false),
            sanitize(&created.server, false),
            sanitize(created.subject, false)
        )?,
        Format::Text => writeln!(
            out,
            "stream {} already exists with the session-store configuration; nothing changed",
            sanitize(created.stream, false)
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What `stream edit` did (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Edited<'a> {
    stream: &'a str,
    allow_rollup: bool,
    /// False when the stream was so already.
    changed: bool,
}

fn edit(
    g: &Invocation,
    settings: &Settings,
    a: StreamEditArgs,
    style: Style,
    out: &mut dyn Write,
) -> CmdResult {
    let allow = a.allow_rollup && !a.no_allow_rollup;
    let edited = Edited {
        changed: jetstream::set_allow_rollup(settings, &a.stream, allow)
            .map_err(|e| about(e, "editing", &a.stream))?,
        stream: &a.stream,
        allow_rollup: allow,
    };
    let name = sanitize(edited.stream, false);
    match (style.format, edited.changed, allow) {
        (Format::Json, ..) => json_pretty(out, &sorted(&edited)?)?,
        (Format::Text, true, true) => writeln!(
            out,
            "stream {name} now allows rollups (upgrade can replace records in place); forbid them again once done: {}",
            crate::hint::command(g, &["stream", "edit", &a.stream, "--no-allow-rollup"])
        )?,
        (Format::Text, true, false) => writeln!(
            out,
            "stream {name} no longer allows rollups: every record is write-once"
        )?,
        (Format::Text, false, true) => {
            writeln!(out, "stream {name} allows rollups already; nothing changed")?
        }
        (Format::Text, false, false) => writeln!(
            out,
            "stream {name} forbids rollups already; nothing changed"
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// A failure, with which stream it was about.
fn about(e: journal::Error, doing: &str, stream: &str) -> Failure {
    stream_help(e, &format!("{doing} jetstream stream {stream:?}"))
}
