//! Where a store is ([`Address`]): a URI, an agent file or the default.

use super::{file, jetstream, Store};
use std::path::PathBuf;

/// Where a store is, as a URI, an agent file or the default names it: a
/// directory of journal files, or a JetStream stream. The rules that turn
/// a name into an address are here so that every front end reads them
/// alike; which name wins (a flag over a variable over an agent file) is
/// the front end's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Address {
    /// A file store: a directory of journal files.
    File {
        /// The directory.
        dir: PathBuf,
    },
    /// A JetStream store: a stream, on the server the NATS settings name.
    JetStream {
        /// The stream's name.
        stream: String,
    },
}

/// The store an agent file chooses, and why, in words (`info` shows them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromAgent {
    /// The address chosen.
    pub address: Address,
    /// Why, in words.
    pub why: String,
    /// The agent's root directory, when one places the store.
    pub root: Option<crate::agent::Root>,
}

impl Address {
    /// `file:DIR` (or `file:///DIR`) or `jetstream:STREAM`.
    pub fn parse(uri: &str) -> crate::Result<Address> {
        let bad = |m: String| crate::Error::Usage(m);
        if let Some(dir) = uri.strip_prefix("file:") {
            // The URL form names a local path after `//` (`file:///var/...`);
            // anything else there (`file://`, `file://host/...`) is not a
            // directory here.
            let dir = match dir.strip_prefix("//") {
                Some(path) if path.starts_with('/') => path,
                Some(_) => {
                    return Err(bad(format!(
                        "store {uri:?}: file: takes a local directory, e.g. file:/var/lib/fisk-ai/runs or file:///var/lib/fisk-ai/runs"
                    )))
                }
                None => dir,
            };
            if dir.is_empty() {
                return Err(bad(format!(
                    "store {uri:?}: file: needs a directory, e.g. file:/var/lib/fisk-ai/runs"
                )));
            }
            Ok(Address::File {
                dir: crate::agent::tidy(std::path::Path::new(dir)),
            })
        } else if let Some(stream) = uri.strip_prefix("jetstream:") {
            if stream.is_empty() || stream.contains(['.', '*', '>', ' ', '/', '\\']) {
                return Err(bad(format!(
                    "store {uri:?}: jetstream: needs a stream name (no '.', '*', '>', spaces or slashes)"
                )));
            }
            Ok(Address::JetStream {
                stream: stream.to_owned(),
            })
        } else {
            Err(bad(format!(
                "store {uri:?} is not understood: use file:DIR or jetstream:STREAM"
            )))
        }
    }

    /// The default store (a directory under the XDG state home), and where
    /// it is as a rule: `under $XDG_STATE_HOME` or `under ~/.local/state
    /// (...)`.
    pub fn default_store() -> crate::Result<(Address, String)> {
        let base = match file::state_home()?.1 {
            "$XDG_STATE_HOME" => "under $XDG_STATE_HOME".to_owned(),
            other => format!("under {other} (XDG_STATE_HOME is not set to an absolute path)"),
        };
        Ok((
            Address::File {
                dir: file::default_dir()?,
            },
            base,
        ))
    }

    /// The store of the agent file at `path`: see [`Address::from_agent`].
    pub fn from_agent_file(
        path: &std::path::Path,
        root_override: Option<&std::path::Path>,
    ) -> crate::Result<FromAgent> {
        Address::from_agent(&crate::agent::AgentFile::load(path)?, root_override)
    }

    /// The store an agent file chooses, as the agent would: its
    /// `harness.sessions` block, placed by the root directory
    /// (`root_override`, the agent's `--root-dir`, else the file's
    /// `root_directory`); a file that names no store means the agent's
    /// default (`<root>/runs` under a root).
    pub fn from_agent(
        a: &crate::agent::AgentFile,
        root_override: Option<&std::path::Path>,
    ) -> crate::Result<FromAgent> {
        let root = crate::agent::root(root_override, Some(a))?;
        let shown = crate::shell::shown(&a.path);
        let config = |message: String| crate::Error::Config {
            at: crate::Where::Path(a.path.clone()),
            message,
        };
        let backend = a.harness.sessions.as_ref().map(|s| s.backend.as_str());
        let (address, why) = match backend {
            None | Some("" | "file") => {
                // The root has its own line in `info` and its own help.
                let dir = a.file_store_dir(root.as_ref());
                let default = || Address::default_store();
                let why = match (&dir, backend) {
                    (Some(_), Some(_)) => format!("harness.sessions in {shown}"),
                    (Some(_), None) => {
                        format!("{shown}: no harness.sessions, so the root directory's runs")
                    }
                    (None, Some(_)) => format!(
                        "harness.sessions in {shown}: no directory, so the default, {}",
                        default()?.1
                    ),
                    (None, None) => format!(
                        "{shown}: no harness.sessions, so the default, {}",
                        default()?.1
                    ),
                };
                let address = match dir {
                    Some(dir) => Address::File { dir },
                    None => default()?.0,
                };
                (address, why)
            }
            Some("jetstream") => {
                let stream = a
                    .harness
                    .sessions
                    .as_ref()
                    .map(|s| s.options.stream.clone())
                    .unwrap_or_default();
                if stream.is_empty() {
                    return Err(config(
                        "harness.sessions.backend is jetstream but options.stream is empty; name the stream".into(),
                    ));
                }
                (
                    Address::JetStream { stream },
                    format!("harness.sessions in {shown}"),
                )
            }
            Some(other) => {
                return Err(config(format!(
                    "harness.sessions.backend {other:?} is not known: use file or jetstream"
                )))
            }
        };
        Ok(FromAgent { address, why, root })
    }

    /// The store at this address: a directory as it is (whether it must
    /// exist is the caller's to say), or the stream bound with `settings`
    /// (unused for a directory) and SPEC 8's `hold`, refused when its
    /// configuration breaks SPEC 8.
    pub fn open(
        &self,
        settings: &crate::nats::Settings,
        hold: std::time::Duration,
    ) -> crate::Result<Store> {
        Ok(match self {
            Address::File { dir } => Store::directory(dir.clone()),
            Address::JetStream { stream } => Store::JetStream(Box::new(
                jetstream::JetStreamStore::connect(settings, stream)?.with_hold(hold),
            )),
        })
    }
}
