//! Completion of run ids on the command line (clap_complete's dynamic
//! completion): `show <TAB>` offers the runs of the store the words typed
//! so far select (`--state-dir DIR`, `--store file:DIR`, or
//! `FISK_ADMIN_STORE`, else the default directory). Only the file backend
//! is listed: a completion must answer at once, and a JetStream listing
//! needs the server.

use clap_complete::engine::CompletionCandidate;
use std::ffi::OsStr;
use std::path::PathBuf;

/// The store directory the command line being completed names: the last
/// `--state-dir`, else a `--store` (or `FISK_ADMIN_STORE`) read as the
/// tool reads it, else the default directory. `None` for a JetStream store.
fn store_dir() -> Option<PathBuf> {
    use crate::open::{parse_uri, Backend};
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let flag = |name: &str| -> Option<std::ffi::OsString> {
        let mut found = None;
        for (i, a) in args.iter().enumerate() {
            let text = a.to_string_lossy();
            match text.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                Some(v) => found = Some(v.into()),
                None if text == name => found = args.get(i + 1).cloned(),
                None => {}
            }
        }
        found
    };
    if let Some(d) = flag("--state-dir") {
        return Some(PathBuf::from(d));
    }
    let uri = flag("--store")
        .and_then(|s| s.into_string().ok())
        .or_else(|| std::env::var("FISK_ADMIN_STORE").ok());
    match uri.map(|u| parse_uri(&u)) {
        Some(Ok(Backend::File { dir })) => Some(dir),
        Some(_) => None,
        None => journal::store::file::default_dir().ok(),
    }
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
