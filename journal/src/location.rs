//! Choosing the store: `--state-dir`, `--store`, `--config` or the default,
//! and remembering why, so `info` can tell the operator.

use crate::agent::AgentFile;
use crate::error::{Error, Result};
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

/// Parse `file:DIR` or `jetstream:STREAM`.
pub fn parse_uri(uri: &str) -> Result<Backend> {
    if let Some(dir) = uri.strip_prefix("file:") {
        // The URL form names a local path after `//` (`file:///var/...`);
        // anything else there (`file://`, `file://host/...`) is not a
        // directory here.
        let dir = match dir.strip_prefix("//") {
            Some(path) if path.starts_with('/') => path,
            Some(_) => {
                return Err(Error::Usage(format!(
                    "store {uri:?}: file: takes a local directory, e.g. file:/var/lib/fisk-ai/runs or file:///var/lib/fisk-ai/runs"
                )))
            }
            None => dir,
        };
        if dir.is_empty() {
            return Err(Error::Usage(format!(
                "store {uri:?}: file: needs a directory, e.g. file:/var/lib/fisk-ai/runs"
            )));
        }
        Ok(Backend::File { dir: dir.into() })
    } else if let Some(stream) = uri.strip_prefix("jetstream:") {
        if stream.is_empty() || stream.contains(['.', '*', '>', ' ', '/', '\\']) {
            return Err(Error::Usage(format!(
                "store {uri:?}: jetstream: needs a stream name (no '.', '*', '>', spaces or slashes)"
            )));
        }
        Ok(Backend::JetStream {
            stream: stream.to_owned(),
        })
    } else {
        Err(Error::Usage(format!(
            "store {uri:?} is not understood: use file:DIR or jetstream:STREAM"
        )))
    }
}

/// Resolve the store from the global flags.
pub fn resolve(
    state_dir: Option<&Path>,
    store: Option<&str>,
    config: Option<&Path>,
) -> Result<Location> {
    let agent = config.map(AgentFile::load).transpose()?;
    let nats_context = agent
        .as_ref()
        .map(|a| a.nats_context.clone())
        .filter(|c| !c.is_empty());
    let from_config = match &agent {
        Some(a) => match &a.harness.sessions {
            Some(s) => match s.backend.as_str() {
                "" | "file" => Some((
                    Backend::File {
                        dir: if s.options.directory.is_empty() {
                            crate::store::file::default_dir()?
                        } else {
                            a.resolve(&s.options.directory)
                        },
                    },
                    format!("harness.sessions in {}", a.path.display()),
                )),
                "jetstream" => {
                    if s.options.stream.is_empty() {
                        return Err(Error::Config {
                            path: a.path.clone(),
                            message: "harness.sessions.backend is jetstream but options.stream is empty; name the stream".into(),
                        });
                    }
                    Some((
                        Backend::JetStream {
                            stream: s.options.stream.clone(),
                        },
                        format!("harness.sessions in {}", a.path.display()),
                    ))
                }
                other => {
                    return Err(Error::Config {
                        path: a.path.clone(),
                        message: format!(
                            "harness.sessions.backend {other:?} is not known: use file or jetstream"
                        ),
                    })
                }
            },
            None => None,
        },
        None => None,
    };
    let explicit = store.map(parse_uri).transpose()?;
    let (backend, why) = match (state_dir, explicit, from_config) {
        (Some(_), Some(Backend::JetStream { .. }), _) => {
            return Err(Error::Usage(
                "--state-dir applies only to the file backend; it cannot be combined with a jetstream store".into(),
            ))
        }
        (Some(_), Some(Backend::File { .. }), _) => {
            return Err(Error::Usage(
                "give the directory once: --state-dir DIR or --store file:DIR, not both".into(),
            ))
        }
        (Some(_), None, Some((Backend::JetStream { .. }, why))) => {
            return Err(Error::Usage(format!(
                "--state-dir applies only to the file backend, but {why} selects jetstream; drop one of them"
            )))
        }
        (Some(dir), None, _) => (
            Backend::File {
                dir: dir.to_path_buf(),
            },
            "--state-dir".to_owned(),
        ),
        (None, Some(b), _) => (b, "--store".to_owned()),
        (None, None, Some((b, why))) => (b, why),
        (None, None, None) => (
            Backend::File {
                dir: crate::store::file::default_dir()?,
            },
            format!("default ({}/fisk-ai/runs)", crate::store::file::state_home()?.1),
        ),
    };
    Ok(Location {
        backend,
        why,
        nats_context,
    })
}
