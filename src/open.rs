//! Choosing and opening what a command reads: the store the global flags
//! (or an agent file, or a `--from`/`--to` URI) name, its NATS connection
//! settings, and the record schemas. Which setting chooses the store, and
//! why, is the binary's and is here; what a setting names, and opening it,
//! is the library's (`journal::store::Address`).

mod location;

pub use location::{parse_uri, Backend, Chosen, Location};

use crate::error::Failure;
use crate::invocation::Invocation;
use journal::store::file::{FileStore, MissingDirs};
use journal::store::jetstream::JetStreamStore;
use journal::store::Store;
use std::path::{Component, Path, PathBuf};

/// What the global flags and `FISK_ADMIN_STORE` ask for, with `agent` (the
/// runner's `--agent`) standing in for `--config` when given.
fn ask<'a>(
    g: &'a Invocation,
    env_store: Option<&'a str>,
    agent: Option<&'a Path>,
) -> location::Ask<'a> {
    location::Ask {
        state_dir: g.state_dir.as_deref(),
        store: g.store.as_deref(),
        agent: match (agent, &g.config) {
            (Some(a), _) => Some((a, "--agent")),
            (None, Some(c)) => Some((c.as_path(), "--config")),
            (None, None) => None,
        },
        root_dir: g.root_dir.as_deref(),
        env_store,
    }
}

/// The store the global flags select (or, with none, FISK_ADMIN_STORE).
pub fn locate(g: &Invocation) -> Result<Location, Failure> {
    locate_with_agent(g, None)
}

/// [`locate`] with `agent` (the runner's `--agent`) standing in for
/// `--config` when given: for completion, which reads the words typed so
/// far (src/complete.rs), and reports the flag that named the store.
pub fn locate_with_agent(g: &Invocation, agent: Option<&Path>) -> Result<Location, Failure> {
    location::resolve(&ask(g, g.env.store.as_deref(), agent))
}

/// The NATS context the `--config` agent file names, if any: for the
/// commands that take their store from elsewhere (`migrate`, `stream`).
pub fn config_context(g: &Invocation) -> Result<Option<String>, Failure> {
    Ok(match &g.config {
        Some(p) => location::nats_context(&location::load_agent(p)?),
        None => None,
    })
}

/// Where a connection setting given to this invocation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Flag(&'static str),
    Env(&'static str),
}

impl Source {
    /// `--server` or `NATS_URL (environment)`.
    pub fn describe(self) -> String {
        match self {
            Source::Flag(f) => f.to_owned(),
            Source::Env(v) => format!("{v} (environment)"),
        }
    }
}

/// The connection settings this invocation gives (flags, else their
/// variables), each with where it came from.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub server: Option<(String, Source)>,
    pub creds: Option<(PathBuf, Source)>,
    pub user: Option<(String, Source)>,
    pub password: Option<(String, Source)>,
    pub token: Option<(String, Source)>,
}

/// The connection settings from the flags and, for each one not given as a
/// flag, its variable (as the `nats` CLI reads them). A user given as a flag
/// is not mixed with a token from the environment, nor a token given as a
/// flag with a user and password from it: the flag's way of logging in wins.
pub fn given(g: &Invocation) -> Result<Given, Failure> {
    fn pick<T>(
        flag: Option<T>,
        name: &'static str,
        var: &'static str,
        env: &Option<String>,
        from_env: impl Fn(String) -> T,
    ) -> Option<(T, Source)> {
        match flag {
            Some(v) => Some((v, Source::Flag(name))),
            None => env.clone().map(|v| (from_env(v), Source::Env(var))),
        }
    }
    let e = &g.env;
    let password = match &g.password_file {
        Some(f) => Some((
            secret_from(f, "--password-file")?,
            Source::Flag("--password-file"),
        )),
        None => pick(
            g.password.clone(),
            "--password",
            "NATS_PASSWORD",
            &e.nats_password,
            |v| v,
        ),
    };
    let token = match &g.token_file {
        Some(f) => Some((
            secret_from(f, "--token-file")?,
            Source::Flag("--token-file"),
        )),
        None => pick(
            g.token.clone(),
            "--token",
            "NATS_TOKEN",
            &e.nats_token,
            |v| v,
        ),
    };
    let mut s = Given {
        server: pick(g.server.clone(), "--server", "NATS_URL", &e.nats_url, |v| v),
        creds: pick(
            g.creds.clone(),
            "--creds",
            "NATS_CREDS",
            &e.nats_creds,
            PathBuf::from,
        ),
        user: pick(g.user.clone(), "--user", "NATS_USER", &e.nats_user, |v| v),
        password,
        token,
    };
    let by_flag = |x: &Option<(String, Source)>| matches!(x, Some((_, Source::Flag(_))));
    let by_env = |x: &Option<(String, Source)>| matches!(x, Some((_, Source::Env(_))));
    if by_flag(&s.user) && by_env(&s.token) {
        s.token = None;
    }
    if by_flag(&s.token) {
        if by_env(&s.user) {
            s.user = None;
        }
        if by_env(&s.password) {
            s.password = None;
        }
    }
    Ok(s)
}

/// The NATS connection settings from the global flags (or their
/// variables), the context they or the agent file name, and the defaults.
pub fn nats_settings(
    g: &Invocation,
    agent_context: Option<&str>,
) -> Result<journal::nats::Settings, Failure> {
    nats_settings_from(g, given(g)?, agent_context)
}

/// [`nats_settings`] from the settings [`given`] already read (a secret
/// on standard input can be read once).
pub fn nats_settings_from(
    g: &Invocation,
    s: Given,
    agent_context: Option<&str>,
) -> Result<journal::nats::Settings, Failure> {
    let o = journal::nats::Overrides {
        context: g.context.clone(),
        server: s.server.map(|(v, _)| v),
        creds: s.creds.map(|(v, _)| v),
        user: s.user.map(|(v, _)| v),
        password: s.password.map(|(v, _)| v),
        token: s.token.map(|(v, _)| v),
    };
    Ok(journal::nats::resolve(&o, agent_context)?)
}

/// A secret read from a file, or standard input for `-`: its first line,
/// without the line end. The secret itself never appears in an error.
fn secret_from(path: &Path, flag: &str) -> Result<String, Failure> {
    use journal::bounded::{read, SECRET};
    let bytes = if path == Path::new("-") {
        read(std::io::stdin().lock(), SECRET)
    } else {
        std::fs::File::open(path).and_then(|f| read(f, SECRET))
    };
    let text = bytes
        .and_then(|b| {
            String::from_utf8(b)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
        })
        .map_err(|e| {
            Failure::new(format!(
                "{flag} {}: cannot read it: {e}",
                crate::output::sanitize(&path.to_string_lossy(), false)
            ))
        })?;
    let secret = text.lines().next().unwrap_or("").to_owned();
    if secret.is_empty() {
        return Err(Failure::new(format!(
            "{flag} {}: the file is empty",
            crate::output::sanitize(&path.to_string_lossy(), false)
        )));
    }
    Ok(secret)
}

/// The help for a failure about a JetStream stream: what was being done
/// and where the connection settings come from.
pub fn stream_help(f: impl Into<Failure>, doing: &str) -> Failure {
    let mut f = f.into();
    // After what the error itself calls for.
    f.also.push(format!(
        "{doing}; connection settings come from --context, --server, --creds, --user, --password, --token"
    ));
    f
}

/// Open the store at `address` (the library's rules): a stream with this
/// invocation's connection settings and `agent_context`, read only for a
/// stream, and refused when it breaks SPEC 8; `why` says what chose it.
fn open_at(
    g: &Invocation,
    address: &Backend,
    agent_context: Option<&str>,
    why: &str,
) -> Result<Store, Failure> {
    let settings = match address {
        Backend::JetStream { .. } => nats_settings(g, agent_context)?,
        // A file store, or one that needs no NATS settings.
        _ => journal::nats::Settings::default(),
    };
    address.open(&settings, g.hold).map_err(|e| match address {
        Backend::JetStream { stream } => stream_help(
            e,
            &format!("the jetstream store {stream:?} was chosen by {why}"),
        ),
        _ => e.into(),
    })
}

/// The flags `g` with SPEC 8's hold off when `force` (a writer's
/// `--force`: its writer is known to be gone), for opening the store only:
/// hints keep `g`, so a printed next step does not inherit the override.
pub fn unheld(g: &Invocation, force: bool) -> Invocation {
    Invocation {
        hold: if force {
            std::time::Duration::ZERO
        } else {
            g.hold
        },
        ..g.clone()
    }
}

/// The store the global flags select. It must exist: reading commands
/// never create a store.
pub fn open_store(g: &Invocation) -> Result<Store, Failure> {
    store_at(g, locate(g)?, true)
}

/// The store the global flags select, for `verify`: a JetStream stream
/// that breaks SPEC 8 is still bound (its problems become findings).
pub fn inspect_store(g: &Invocation) -> Result<Store, Failure> {
    let loc = locate(g)?;
    match loc.backend {
        Backend::JetStream { stream } => {
            let settings = nats_settings(g, loc.nats_context.as_deref())?;
            let store = JetStreamStore::connect_unchecked(&settings, &stream)
                .map_err(|e| stream_help(e, &format!("verifying jetstream stream {stream:?}")))?;
            Ok(Store::from(store))
        }
        _ => store_at(g, loc, true),
    }
}

/// The store for `run`/`resume`: a store flag wins; otherwise the agent
/// file's `harness.sessions` block and root directory (or the default)
/// choose, as `--config` would: the same resolution. `run` may create the
/// directory; `resume` needs it to exist.
pub fn agent_store(g: &Invocation, agent: &Path, must_exist: bool) -> Result<Store, Failure> {
    let loc = if g.state_dir.is_none() && g.store.is_none() && g.config.is_none() {
        location::resolve(&ask(g, None, Some(agent)))?
    } else {
        locate(g)?
    };
    store_at(g, loc, must_exist)
}

/// What to do about a store directory that is missing, by what chose it:
/// never "pass --state-dir" to someone who passed it.
fn missing_help(loc: &Location) -> String {
    // A run named by its journal's path: the command that reads it.
    if let Some(h) = crate::hint::for_run_path(std::env::args_os().skip(1)) {
        return h;
    }
    let cwd = std::env::current_dir()
        .map(|d| format!(" ({})", journal::shell::shown(&d)))
        .unwrap_or_default();
    let root = match &loc.root {
        Some(r) => format!(
            " under the root directory {} ({})",
            journal::shell::shown(&r.dir),
            r.from
        ),
        None => String::new(),
    };
    match &loc.chosen {
        Chosen::Flag(f @ ("--state-dir" | "--store")) => format!(
            "check the directory given to {f}: a relative one is read from the working directory{cwd}"
        ),
        Chosen::Flag(f) => format!(
            "{f} places the store{root}; check it, or name the runs directory with --state-dir DIR"
        ),
        Chosen::Env(v) => format!(
            "{v} names it: correct the variable, or pass --state-dir DIR or --store URI (a flag wins over it)"
        ),
        Chosen::AgentFile { path, flag } => format!(
            "the agent file {} ({flag}) places it{root}: correct harness.sessions.options.directory there, or pass --state-dir DIR (a flag wins over the agent file)",
            journal::shell::shown(path)
        ),
        Chosen::Default => "pass --state-dir DIR or --store file:DIR (or set FISK_ADMIN_STORE) to point at the runs directory".into(),
    }
}

fn store_at(g: &Invocation, loc: Location, must_exist: bool) -> Result<Store, Failure> {
    match loc.backend {
        Backend::File { ref dir } => {
            if must_exist && !dir.is_dir() {
                let what = match dir.exists() {
                    true => "is not a directory",
                    false => "does not exist",
                };
                return Err(Failure::new(format!(
                    "store directory {} {what} (chosen by {})",
                    journal::shell::shown(dir),
                    loc.why
                ))
                .help(missing_help(&loc)));
            }
            open_at(g, &loc.backend, None, &loc.why)
        }
        // JetStream, and any other backend: the agent's NATS context applies.
        _ => open_at(g, &loc.backend, loc.nats_context.as_deref(), &loc.why),
    }
}

/// What [`open_store_uri`] does when a file store's directory is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfMissing {
    /// Fail: the store must exist (a source).
    Fail,
    /// Create the directory (0700) and any missing parents (a destination).
    Create,
    /// Create nothing and read the store as empty (the destination of a
    /// dry run): every read of a run finds no journal. The path must still
    /// be one the directory could be created at.
    Empty,
}

/// A store named by a URI (`migrate --from/--to`); `missing` says what a
/// missing file directory means.
pub fn open_store_uri(g: &Invocation, uri: &str, missing: IfMissing) -> Result<Store, Failure> {
    let agent_context = config_context(g)?;
    let address = parse_uri(uri)?;
    if let Backend::File { dir } = &address {
        if !dir.is_dir() {
            match missing {
                IfMissing::Fail => {
                    return Err(Failure::new(format!(
                        "store directory {} does not exist ({uri})",
                        journal::shell::shown(dir)
                    )))
                }
                IfMissing::Create => FileStore::new(dir.clone()).ensure_dir()?,
                IfMissing::Empty => creatable(dir, uri)?,
            }
        }
    }
    open_at(g, &address, agent_context.as_deref(), uri)
}

/// The directories opening the store `uri` names would create (a file
/// store's missing directory and parents; none for a stream), to remove
/// again if nothing is stored in them.
pub fn missing_dirs(uri: &str) -> Result<MissingDirs, Failure> {
    Ok(match parse_uri(uri)? {
        Backend::File { dir } => FileStore::new(dir).missing_dirs(),
        // JetStream, and any other backend: no directories.
        _ => MissingDirs::default(),
    })
}

/// Refuse a missing store directory that could not be created because the
/// path itself, or the nearest of its parents that exists, is not a
/// directory: what creating it would fail on.
fn creatable(dir: &Path, uri: &str) -> Result<(), Failure> {
    let nearest = dir
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .find(|p| p.symlink_metadata().is_ok());
    match nearest {
        Some(p) if !p.is_dir() => Err(Failure::new(format!(
            "store directory {} cannot be created ({uri}): {} exists and is not a directory",
            journal::shell::shown(dir),
            journal::shell::shown(p)
        ))),
        _ => Ok(()),
    }
}

/// Refuse to copy a store onto itself. File stores are compared by their
/// directory, not by how the URI spells it (`file:dst`, `file:./dst`, an
/// absolute path, a symlink): copying a directory onto itself finds every
/// run complete, and `--delete-source` would then delete the only copy.
pub fn same_store(from: &str, to: &str) -> Result<(), Failure> {
    match (parse_uri(from)?, parse_uri(to)?) {
        (Backend::File { dir: a }, Backend::File { dir: b }) => {
            let (a, b) = (canonical_dir(&a), canonical_dir(&b));
            match (a, b) {
                (Some(a), Some(b)) if a == b => Err(Failure::new(format!(
                    "--from {from} and --to {to} are the same store (the same directory, {}): nothing to copy",
                    a.display()
                ))),
                _ => Ok(()),
            }
        }
        (Backend::JetStream { stream: a }, Backend::JetStream { stream: b }) if a == b => {
            Err(Failure::new(format!(
                "--from and --to are the same store ({from}): nothing to copy"
            )))
        }
        _ => Ok(()),
    }
}

/// The directory `dir` names, with symlinks, `.` and `..` resolved as
/// creating it and then opening it would resolve them. Component by
/// component: a path that exists is canonicalised; one that does not (a
/// destination a migrate would create) is extended by name, or loses its
/// last name on `..`. `None` only when the working directory cannot be
/// read.
pub fn canonical_dir(dir: &Path) -> Option<PathBuf> {
    let abs = std::env::current_dir().ok()?.join(dir);
    let mut key = PathBuf::new();
    for c in abs.components() {
        let next = key.join(c);
        match next.canonicalize() {
            Ok(real) => key = real,
            Err(_) => match c {
                Component::ParentDir => {
                    key.pop();
                }
                Component::Normal(_) => key = next,
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            },
        }
    }
    Some(key)
}

/// The record schemas: built in, or from `--schema-dir`.
pub fn schemas(dir: Option<&Path>) -> Result<journal::schema::SchemaSet, Failure> {
    Ok(match dir {
        Some(d) => journal::schema::SchemaSet::from_dir(d)?,
        None => journal::schema::SchemaSet::embedded()?,
    })
}

#[cfg(test)]
mod tests {
    use super::canonical_dir;

    #[test]
    fn a_missing_directory_is_keyed_by_its_canonical_parent_and_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, tmp.path().join("link")).unwrap();
        let key = |rel: &str| canonical_dir(&tmp.path().join(rel)).unwrap();
        let want = real.canonicalize().unwrap().join("new");
        assert_eq!(key("real/new"), want);
        assert_eq!(key("link/new"), want);
        assert_eq!(key("./link/./new/"), want);
        assert_eq!(key("gone/../link/new"), want);
        assert_eq!(
            key("link/new/deeper"),
            want.join("deeper"),
            "several missing components"
        );
        assert_ne!(key("link/new"), key("link/other"));
        assert_eq!(key("link"), real.canonicalize().unwrap());
    }
}
