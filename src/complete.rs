//! Completion of run ids on the command line (clap_complete's dynamic
//! completion): `show <TAB>` offers the runs of the store the words typed
//! so far select (`--state-dir DIR`, `--store file:DIR`, or
//! `FISK_ADMIN_STORE`, else the default directory). Only the file backend
//! is listed: a completion must answer at once, and a JetStream listing
//! needs the server.

use clap_complete::engine::CompletionCandidate;
use std::ffi::OsStr;
use std::path::PathBuf;

/// The store directory the command line being completed names.
fn store_dir() -> Option<PathBuf> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut dir = None;
    for (i, a) in args.iter().enumerate() {
        let text = a.to_string_lossy();
        let value = |flag: &str| -> Option<std::ffi::OsString> {
            match text.strip_prefix(&format!("{flag}=")) {
                Some(v) => Some(v.into()),
                None if text == flag => args.get(i + 1).cloned(),
                None => None,
            }
        };
        if let Some(v) = value("--state-dir") {
            dir = Some(PathBuf::from(v));
        } else if let Some(v) = value("--store") {
            dir = v
                .to_str()
                .and_then(|s| s.strip_prefix("file:"))
                .map(PathBuf::from);
        }
    }
    dir.or_else(|| {
        std::env::var("FISK_ADMIN_STORE")
            .ok()
            .and_then(|s| s.strip_prefix("file:").map(PathBuf::from))
    })
    .or_else(|| journal::paths::state_home().map(|(h, _)| h.join("fisk-ai").join("runs")))
}

/// The run ids of the store that start with what is typed.
pub fn run_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Some(dir) = store_dir() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?;
            (journal::id::check(id).is_ok() && id.starts_with(typed.as_ref()))
                .then(|| id.to_owned())
        })
        .collect();
    ids.sort();
    ids.into_iter().map(CompletionCandidate::new).collect()
}
