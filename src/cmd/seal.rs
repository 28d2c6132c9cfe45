//! `seal`: every run's record count and chain of hashes under one root
//! (`journal::custody::seal`), chained to the store's previous seal,
//! optionally signed (`--key`, or a key made now with `--new-key`), kept
//! in a file of its own (`--out`, never over an existing one) and
//! recorded in the store's audit log. `verify --against FILE` checks a
//! store, a migrated copy of it or an exported run against it later. A
//! stream is sealed as it was when seal started (issue 40): up to its
//! cut, which the output says.
//!
//! JSON (`-o json`): `{seal, root, runs, time, cut, previous, signed_by,
//! public_key, verify}` (`schemas/output/seal.json`).

use crate::cli::SealArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, thousands, Format};
use journal::custody::{key, seal};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Serialize)]
struct Done {
    /// The seal's file (`None`: a dry run).
    seal: Option<PathBuf>,
    root: String,
    runs: usize,
    time: journal::time::Time,
    /// A stream: the sequence it was sealed up to (its last when seal
    /// started); `None` for a file store.
    cut: Option<u64>,
    previous: Option<String>,
    signed_by: Option<String>,
    /// The public key made with --new-key.
    public_key: Option<PathBuf>,
    /// The command that checks the store against it.
    verify: Option<crate::hint::Cmd>,
}

pub fn run(g: &Invocation, a: SealArgs, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let dry = a.write.dry_run;
    let path = a.out.clone().unwrap_or_else(|| {
        let now = journal::time::Time::now().to_rfc3339();
        let stamp: String = now.chars().take(19).filter(|c| *c != ':').collect();
        PathBuf::from(format!("seal-{stamp}Z.json"))
    });
    if !dry && std::fs::symlink_metadata(&path).is_ok() {
        return Err(Failure::refused(format!(
            "{} exists: a seal is never written over another; nothing was sealed",
            crate::hint::quote_path(&path)
        ))
        .help("name a new file with --out"));
    }
    let (k, public_key) = match (&a.key, &a.new_key) {
        (Some(p), _) => (Some(key::load(p)?), None),
        (None, Some(p)) if !dry => {
            let public = key::new_key(p)?;
            (Some(key::load(p)?), Some(public))
        }
        _ => (None, None),
    };
    if k.as_ref().is_some_and(|k| k.sign(b"").is_none()) {
        return Err(Failure::refused(
            "--key names a public key: a seal is signed with the secret key (the file without .pub); nothing was sealed",
        ));
    }
    // A dry run logs nothing: the store is not told who writes.
    let store = match dry {
        true => store,
        false => crate::audit::writer(
            store,
            g,
            a.write.operator.as_deref(),
            a.write.why.as_deref(),
        )?,
    };
    let s = seal::seal(&store, k.as_ref())?;
    if !dry {
        s.write_new(&path)?;
    }
    let done = Done {
        seal: (!dry).then(|| path.clone()),
        root: s.root.clone(),
        runs: s.runs.len(),
        time: s.time,
        cut: s.cut,
        previous: s.previous.clone(),
        signed_by: s.signature.as_ref().map(|x| x.key.clone()),
        public_key,
        verify: (!dry).then(|| {
            crate::hint::verify_against(g, &path, a.key.as_deref().or(a.new_key.as_deref()))
        }),
    };
    match g.style.format {
        Format::Json => json_pretty(out, &done)?,
        Format::Text => {
            match &done.seal {
                Some(p) => writeln!(
                    out,
                    "sealed {} run(s) of {}: root {}",
                    done.runs,
                    store.describe(),
                    done.root
                )
                .and_then(|()| writeln!(out, "the seal is in {}", crate::hint::quote_path(p)))?,
                None => writeln!(
                    out,
                    "would seal {} run(s) of {}: root {} (dry run: nothing written)",
                    done.runs,
                    store.describe(),
                    done.root
                )?,
            }
            if let Some(cut) = done.cut {
                writeln!(
                    out,
                    "the store as it was when seal started: up to stream sequence {}; what was stored after it is left for the next seal",
                    thousands(cut)
                )?;
            }
            if let Some(p) = &done.previous {
                writeln!(out, "it follows the seal with root {p}")?;
            }
            if let Some(k) = &done.signed_by {
                writeln!(out, "signed by key {k}")?;
            }
            if let Some(p) = &done.public_key {
                writeln!(
                    out,
                    "new key: the secret in {}, its public key in {} (keep the secret apart from the store)",
                    crate::hint::quote_path(a.new_key.as_deref().unwrap_or(p)),
                    crate::hint::quote_path(p)
                )?;
            }
            if let Some(v) = &done.verify {
                writeln!(out, "{}", v.step("", "check the store against it with"))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
