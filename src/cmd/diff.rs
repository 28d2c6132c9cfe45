//! `diff A B`: compare two fingerprints (SPEC 4) and give the resume verdict.
//! A is the run's side, B what a resume would use. Each is a run id (its
//! meta record's fingerprint) or a fingerprint JSON file, `-` for stdin.
//! An argument that names an existing file (or `-`) is a file; anything
//! else must be a valid run id. A JSON object with a `fingerprint` key
//! (`fold --format json`, a meta payload) is read through that key.
//!
//! Exit 0 when a resume would proceed (identical, or continues with
//! warnings), 1 when it would be refused (with or without --force).

use crate::cli::DiffArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, print_table, sanitize, sorted, table, Format, Style};
use journal::fingerprint::{diff, Change, Class};
use journal::record::{Fingerprint, Payload};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

/// The comparison and its verdict (keys sorted: `output::sorted`).
#[derive(Serialize)]
struct Compared {
    /// Where each side came from.
    a: String,
    b: String,
    changes: Vec<Change>,
    verdict: &'static str,
    /// Whether a resume would go on without --force.
    proceeds: bool,
}

pub fn run(g: &Invocation, a: DiffArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    if a.a == "-" && a.b == "-" {
        return Err(Failure::new(
            "only one side can be read from standard input",
        ));
    }
    let (fa, sa) = side(g, &a.a)?;
    let (fb, sb) = side(g, &a.b)?;
    let d = diff(&fa, &fb);
    let compared = Compared {
        a: sa,
        b: sb,
        proceeds: d.verdict.proceeds(false),
        verdict: d.verdict.as_str(),
        changes: d.changes,
    };
    match style.format {
        Format::Json => json_pretty(out, &sorted(&compared)?)?,
        Format::Text => render(out, &compared, style)?,
    }
    Ok(if compared.proceeds {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn render(out: &mut dyn Write, c: &Compared, style: Style) -> io::Result<()> {
    writeln!(out, "A: {}", sanitize(&c.a, false))?;
    writeln!(out, "B: {}", sanitize(&c.b, false))?;
    if !c.changes.is_empty() {
        let mut t = table(&["FIELD", "CLASS", "CHANGE"]).aligned_in_pipe();
        for ch in &c.changes {
            let change = match (&ch.from, &ch.to) {
                (Some(x), Some(y)) => format!("{} -> {}", sanitize(x, false), sanitize(y, false)),
                _ => "changed".to_owned(),
            };
            let class = match ch.class {
                Class::Hard => "hard",
                Class::Blocking => "blocking",
                Class::Tools => "tools",
                Class::Budget => "budget",
                // A class a newer library knows: its JSON name says it.
                _ => "unknown",
            };
            t.add_row(vec![ch.field.to_owned(), class.to_owned(), change]);
        }
        print_table(out, t, style)?;
    }
    writeln!(out, "verdict: {}", c.verdict)
}

/// One side: its fingerprint and a description of where it came from.
fn side(g: &Invocation, arg: &str) -> Result<(Fingerprint, String), Failure> {
    if arg == "-" {
        let buf = journal::bounded::read(std::io::stdin().lock(), journal::bounded::SETTINGS)
            .map_err(|e| Failure::new(format!("reading standard input: {e}")))?;
        return Ok((parse(&buf, "standard input")?, "standard input".into()));
    }
    let p = Path::new(arg);
    if p.is_file() {
        let buf = journal::bounded::read_path(p, journal::bounded::SETTINGS)
            .map_err(|e| Failure::new(format!("{}: {e}", p.display())))?;
        // A fingerprint (JSON), or an agent file (YAML): the fingerprint a
        // run started from it would have.
        if serde_json::from_slice::<serde::de::IgnoredAny>(&buf).is_err() {
            if let Ok(agent) = journal::runner::Agent::load(p) {
                return Ok((agent.fingerprint, format!("agent file {arg}")));
            }
        }
        return Ok((parse(&buf, arg)?, format!("file {arg}")));
    }
    journal::id::check(arg).map_err(|e| {
        Failure::new(format!(
            "{arg:?} is neither an existing file nor a run id: {e}"
        ))
    })?;
    let store = open_store(g)?;
    let journal = store.read(arg)?;
    match journal
        .entries
        .first()
        .and_then(|e| e.record.payload.as_ref())
    {
        Some(Payload::Meta(m)) => Ok((m.fingerprint.clone(), format!("run {arg}"))),
        _ => Err(Failure::new(format!(
            "run {arg}: the first record is not a meta record, so there is no fingerprint"
        ))
        .help(crate::hint::advice(
            g,
            journal::Remedy::Verify,
            Some(arg),
            None,
            &[],
        ))),
    }
}

fn parse(buf: &[u8], name: &str) -> Result<Fingerprint, Failure> {
    let v: serde_json::Value =
        serde_json::from_slice(buf).map_err(|e| Failure::new(format!("{name}: not JSON: {e}")))?;
    let v = match v.get("fingerprint") {
        Some(inner) if inner.is_object() => inner.clone(),
        _ => v,
    };
    let Some(keys) = v.as_object() else {
        return Err(Failure::new(format!(
            "{name}: a fingerprint is a JSON object"
        )));
    };
    // Any object would decode (every field has a default): a file that is
    // not a fingerprint must not get a confident verdict. Keys this tool
    // does not know are accepted (a newer agent's fields, SPEC 1.3).
    let missing: Vec<&str> = ["provider", "model"]
        .into_iter()
        .filter(|k| !keys.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(Failure::new(format!(
            "{name}: not a fingerprint: it has no {}",
            missing.join(" or ")
        ))
        .help("produce one with `fisk-admin fingerprint --agent` and the agent file's path, or give the agent file itself"));
    }
    serde_json::from_value(v).map_err(|e| {
        Failure::new(format!("{name}: not a fingerprint: {e}"))
            .help("produce one with `fisk-admin fingerprint --agent` and the agent file's path, or give the agent file itself")
    })
}
