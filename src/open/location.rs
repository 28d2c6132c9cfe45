//! Which store the flags name: `--state-dir`, `--store`, `--config` or the
//! default, and why, so `info` can tell the operator. Pure: it reads the
//! agent file named by `--config`, and opens nothing.

use crate::error::Failure;
use journal::agent::AgentFile;
use journal::store::file::{default_dir, state_home};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    File { dir: PathBuf },
    JetStream { stream: String },
}

#[derive(Debug, Clone)]
pub struct Location {
    pub backend: Backend,
    /// Why this store: which flag, file or default chose it.
    pub why: String,
    /// The NATS context named by the agent file, if any.
    pub nats_context: Option<String>,
}

/// The NATS context an agent file names, if it names one.
pub fn nats_context(agent: &AgentFile) -> Option<String> {
    Some(agent.nats_context.clone()).filter(|c| !c.is_empty())
}

/// Parse `file:DIR` or `jetstream:STREAM`.
pub fn parse_uri(uri: &str) -> Result<Backend, Failure> {
    if let Some(dir) = uri.strip_prefix("file:") {
        // The URL form names a local path after `//` (`file:///var/...`);
        // anything else there (`file://`, `file://host/...`) is not a
        // directory here.
        let dir = match dir.strip_prefix("//") {
            Some(path) if path.starts_with('/') => path,
            Some(_) => {
                return Err(Failure::new(format!(
                    "store {uri:?}: file: takes a local directory, e.g. file:/var/lib/fisk-ai/runs or file:///var/lib/fisk-ai/runs"
                )))
            }
            None => dir,
        };
        if dir.is_empty() {
            return Err(Failure::new(format!(
                "store {uri:?}: file: needs a directory, e.g. file:/var/lib/fisk-ai/runs"
            )));
        }
        Ok(Backend::File { dir: dir.into() })
    } else if let Some(stream) = uri.strip_prefix("jetstream:") {
        if stream.is_empty() || stream.contains(['.', '*', '>', ' ', '/', '\\']) {
            return Err(Failure::new(format!(
                "store {uri:?}: jetstream: needs a stream name (no '.', '*', '>', spaces or slashes)"
            )));
        }
        Ok(Backend::JetStream {
            stream: stream.to_owned(),
        })
    } else {
        Err(Failure::new(format!(
            "store {uri:?} is not understood: use file:DIR or jetstream:STREAM"
        )))
    }
}

/// A problem with the agent file's `harness.sessions` block.
fn config_error(agent: &AgentFile, message: &str) -> Failure {
    Failure::new(format!("{}: {message}", agent.path.display()))
}

/// The store an agent file's `harness.sessions` block names, if it has one.
fn from_agent(a: &AgentFile) -> Result<Option<(Backend, String)>, Failure> {
    let Some(s) = &a.harness.sessions else {
        return Ok(None);
    };
    let why = format!("harness.sessions in {}", a.path.display());
    let backend = match s.backend.as_str() {
        "" | "file" => Backend::File {
            dir: if s.options.directory.is_empty() {
                default_dir()?
            } else {
                a.resolve(&s.options.directory)
            },
        },
        "jetstream" => {
            if s.options.stream.is_empty() {
                return Err(config_error(
                    a,
                    "harness.sessions.backend is jetstream but options.stream is empty; name the stream",
                ));
            }
            Backend::JetStream {
                stream: s.options.stream.clone(),
            }
        }
        other => {
            return Err(config_error(
                a,
                &format!("harness.sessions.backend {other:?} is not known: use file or jetstream"),
            ))
        }
    };
    Ok(Some((backend, why)))
}

/// Resolve the store from the global flags.
/// The agent file `--config` or `--agent` names.
pub fn load_agent(path: &Path) -> Result<AgentFile, Failure> {
    AgentFile::load(path)
        .map_err(|e| Failure::from(e).help("check the path given to --config or --agent"))
}

pub fn resolve(
    state_dir: Option<&Path>,
    store: Option<&str>,
    config: Option<&Path>,
) -> Result<Location, Failure> {
    let agent = config.map(load_agent).transpose()?;
    let nats_context = agent.as_ref().and_then(nats_context);
    let from_config = match &agent {
        Some(a) => from_agent(a)?,
        None => None,
    };
    let explicit = store.map(parse_uri).transpose()?;
    let (backend, why) = match (state_dir, explicit, from_config) {
        (Some(_), Some(Backend::JetStream { .. }), _) => {
            return Err(Failure::new(
                "--state-dir applies only to the file backend; it cannot be combined with a jetstream store",
            ))
        }
        (Some(_), Some(Backend::File { .. }), _) => {
            return Err(Failure::new(
                "give the directory once: --state-dir DIR or --store file:DIR, not both",
            ))
        }
        (Some(_), None, Some((Backend::JetStream { .. }, why))) => {
            return Err(Failure::new(format!(
                "--state-dir applies only to the file backend, but {why} selects jetstream; drop one of them"
            )))
        }
        (Some(dir), None, _) => (
            Backend::File {
                dir: dir.to_path_buf(),
            },
            "--state-dir".to_owned(),
        ),
        // Given on the command line, or by FISK_ADMIN_STORE (clap reads
        // the variable as the flag's default).
        (None, Some(b), _) => (
            b,
            match std::env::var_os("FISK_ADMIN_STORE") {
                Some(_) if !std::env::args().any(|a| a == "--store" || a.starts_with("--store=")) => {
                    "FISK_ADMIN_STORE".to_owned()
                }
                _ => "--store".to_owned(),
            },
        ),
        (None, None, Some((b, why))) => (b, why),
        (None, None, None) => (
            Backend::File { dir: default_dir()? },
            format!("default ({}/fisk-ai/runs)", state_home()?.1),
        ),
    };
    Ok(Location {
        backend,
        why,
        nats_context,
    })
}
