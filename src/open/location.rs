//! Which store the flags name: `--state-dir`, `--store`, `--config` (or a
//! runner's `--agent`), `--root-dir`, then `FISK_ADMIN_STORE`, then the
//! default, and why, so `info` can tell the operator. A flag given on the
//! command line beats the variable. Which setting wins is decided here;
//! what a URI, an agent file or the default names is the library's
//! (`journal::store::Address`). Pure but for reading the agent file and
//! checking its root directory: it opens nothing.

use crate::error::Failure;
use journal::agent::{AgentFile, Root};
use std::path::{Path, PathBuf};

/// The store a setting names: the library's address (its rules for a URI,
/// an agent file and the default are there).
pub use journal::store::Address as Backend;

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
    Ok(Backend::parse(uri)?)
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
        (Some(_), Some(Backend::File { .. })) => {
            return Err(Failure::new(
                "give the directory once: --state-dir DIR or --store file:DIR, not both",
            ))
        }
        // JetStream (or any other backend): not a directory.
        (Some(_), Some(_)) => {
            return Err(Failure::new(
                "--state-dir applies only to the file backend; it cannot be combined with a jetstream store",
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
                let chose = Backend::from_agent(a, ask.root_dir)?;
                root = chose.root;
                (
                    chose.address,
                    chose.why,
                    Chosen::AgentFile {
                        path: path.to_path_buf(),
                        flag,
                    },
                )
            }
            (_, _, Some(_)) => {
                root = journal::agent::root(ask.root_dir, None)?;
                let store = match &root {
                    Some(r) => Backend::File {
                        dir: r.dir.join("runs"),
                    },
                    None => Backend::default_store()?.0,
                };
                (
                    store,
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
                None => {
                    let (store, base) = Backend::default_store()?;
                    (store, format!("default, {base}"), Chosen::Default)
                }
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
