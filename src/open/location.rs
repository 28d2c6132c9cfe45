//! Which store the flags name: `--state-dir`, `--store`, `--config` (or a
//! runner's `--agent`), `--root-dir`, then `FISK_ADMIN_STORE`, then the
//! default, and why, so `info` can tell the operator. A flag given on the
//! command line beats the variable. Pure but for reading the agent file and
//! checking its root directory: it opens nothing.

use crate::error::Failure;
use journal::agent::{AgentFile, Root};
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
    /// The setting that chose it.
    pub chosen: Chosen,
    /// The agent's root directory, when it placed the store.
    pub root: Option<Root>,
    /// The NATS context named by the agent file, if any.
    pub nats_context: Option<String>,
}

/// The setting that chose the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// A flag on the command line: `--state-dir`, `--store`, `--root-dir`.
    Flag(&'static str),
    /// An environment variable: `FISK_ADMIN_STORE`.
    Env(&'static str),
    /// The agent file a flag (`--config`, `--agent`) named.
    AgentFile { path: PathBuf, flag: &'static str },
    /// Nothing was given.
    Default,
}

impl Chosen {
    /// `flag`, `environment`, `agent file` or `default`: for `info`.
    pub fn kind(&self) -> &'static str {
        match self {
            Chosen::Flag(_) => "flag",
            Chosen::Env(_) => "environment",
            Chosen::AgentFile { .. } => "agent file",
            Chosen::Default => "default",
        }
    }

    /// The flag or variable, when one chose the store.
    pub fn setting(&self) -> Option<&'static str> {
        match self {
            Chosen::Flag(f) | Chosen::Env(f) | Chosen::AgentFile { flag: f, .. } => Some(f),
            Chosen::Default => None,
        }
    }
}

/// What the command line and the environment say about the store.
#[derive(Debug, Clone, Default)]
pub struct Ask<'a> {
    pub state_dir: Option<&'a Path>,
    pub store: Option<&'a str>,
    /// The agent file, and the flag that named it (`--config`, `--agent`).
    pub agent: Option<(&'a Path, &'static str)>,
    pub root_dir: Option<&'a Path>,
    /// `FISK_ADMIN_STORE`, when set and not empty.
    pub env_store: Option<&'a str>,
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
        Ok(Backend::File {
            dir: journal::agent::tidy(Path::new(dir)),
        })
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

/// The store an agent file chooses, as the agent would: its
/// `harness.sessions` block, placed by the root directory; a file that
/// names no store means the agent's default (`<root>/runs` under a root).
fn from_agent(a: &AgentFile, root: Option<&Root>) -> Result<(Backend, String), Failure> {
    let shown = journal::shell::shown(&a.path);
    let backend = a.harness.sessions.as_ref().map(|s| s.backend.as_str());
    match backend {
        None | Some("" | "file") => {
            // The root has its own line in `info` and its own help.
            let dir = a.file_store_dir(root);
            let why = match (&dir, backend) {
                (Some(_), Some(_)) => format!("harness.sessions in {shown}"),
                (Some(_), None) => {
                    format!("{shown}: no harness.sessions, so the root directory's runs")
                }
                (None, Some(_)) => format!(
                    "harness.sessions in {shown}: no directory, so the default, {}",
                    default_base()?
                ),
                (None, None) => format!(
                    "{shown}: no harness.sessions, so the default, {}",
                    default_base()?
                ),
            };
            let dir = dir.map_or_else(default_dir, Ok)?;
            Ok((Backend::File { dir }, why))
        }
        Some("jetstream") => {
            let stream = a
                .harness
                .sessions
                .as_ref()
                .map(|s| s.options.stream.clone())
                .unwrap_or_default();
            if stream.is_empty() {
                return Err(config_error(
                    a,
                    "harness.sessions.backend is jetstream but options.stream is empty; name the stream",
                ));
            }
            Ok((
                Backend::JetStream { stream },
                format!("harness.sessions in {shown}"),
            ))
        }
        Some(other) => Err(config_error(
            a,
            &format!("harness.sessions.backend {other:?} is not known: use file or jetstream"),
        )),
    }
}

/// Where the default store is, as a rule rather than the path (which
/// `info` and the errors show beside it): `under $XDG_STATE_HOME` or
/// `under ~/.local/state (...)`.
fn default_base() -> Result<String, Failure> {
    Ok(match state_home()?.1 {
        "$XDG_STATE_HOME" => "under $XDG_STATE_HOME".to_owned(),
        other => format!("under {other} (XDG_STATE_HOME is not set to an absolute path)"),
    })
}

/// The agent file `--config` or `--agent` names.
pub fn load_agent(path: &Path) -> Result<AgentFile, Failure> {
    AgentFile::load(path)
        .map_err(|e| Failure::from(e).help("check the path given to --config or --agent"))
}

/// Resolve the store: a store flag (`--state-dir`, `--store`), else the
/// agent file (`--config`/`--agent`), else `--root-dir` (`DIR/runs`), else
/// `FISK_ADMIN_STORE`, else the default. The variable is read only when no
/// flag says where the store is.
pub fn resolve(ask: &Ask) -> Result<Location, Failure> {
    let agent = ask.agent.map(|(p, _)| load_agent(p)).transpose()?;
    let nats_context = agent.as_ref().and_then(nats_context);
    let explicit = ask.store.map(parse_uri).transpose()?;
    // The agent file's choice only matters when no store flag is given;
    // a jetstream one still refuses --state-dir (below).
    let agent_backend = agent
        .as_ref()
        .and_then(|a| a.harness.sessions.as_ref())
        .map(|s| s.backend.as_str());
    let mut root = None;
    let (backend, why, chosen) = match (ask.state_dir, explicit) {
        (Some(_), Some(Backend::JetStream { .. })) => {
            return Err(Failure::new(
                "--state-dir applies only to the file backend; it cannot be combined with a jetstream store",
            ))
        }
        (Some(_), Some(Backend::File { .. })) => {
            return Err(Failure::new(
                "give the directory once: --state-dir DIR or --store file:DIR, not both",
            ))
        }
        (Some(_), None) if agent_backend == Some("jetstream") => {
            let shown = agent
                .as_ref()
                .map(|a| journal::shell::shown(&a.path))
                .unwrap_or_default();
            return Err(Failure::new(format!(
                "--state-dir applies only to the file backend, but harness.sessions in {shown} selects jetstream; drop one of them"
            )));
        }
        (Some(dir), None) => (
            Backend::File {
                dir: journal::agent::tidy(dir),
            },
            "--state-dir".to_owned(),
            Chosen::Flag("--state-dir"),
        ),
        (None, Some(b)) => (b, "--store".to_owned(), Chosen::Flag("--store")),
        (None, None) => match (&agent, ask.agent, ask.root_dir) {
            (Some(a), Some((path, flag)), _) => {
                root = journal::agent::root(ask.root_dir, Some(a))?;
                let (b, why) = from_agent(a, root.as_ref())?;
                (
                    b,
                    why,
                    Chosen::AgentFile {
                        path: path.to_path_buf(),
                        flag,
                    },
                )
            }
            (_, _, Some(_)) => {
                root = journal::agent::root(ask.root_dir, None)?;
                let dir = root
                    .as_ref()
                    .map(|r| r.dir.join("runs"))
                    .map_or_else(default_dir, Ok)?;
                (
                    Backend::File { dir },
                    "--root-dir (its runs directory)".to_owned(),
                    Chosen::Flag("--root-dir"),
                )
            }
            _ => match ask.env_store {
                Some(uri) => (
                    parse_uri(uri).map_err(|f| {
                        f.help("FISK_ADMIN_STORE holds it: correct the variable, or pass --state-dir DIR or --store URI (a flag wins over it)")
                    })?,
                    "FISK_ADMIN_STORE".to_owned(),
                    Chosen::Env("FISK_ADMIN_STORE"),
                ),
                None => (
                    Backend::File { dir: default_dir()? },
                    format!("default, {}", default_base()?),
                    Chosen::Default,
                ),
            },
        },
    };
    Ok(Location {
        backend,
        why,
        chosen,
        root,
        nats_context,
    })
}
