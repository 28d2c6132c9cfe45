//! One module per subcommand. Each exposes `run(args.., out) -> CmdResult`:
//! load, check, act, print.

pub mod answer;
pub mod completions;
pub mod diff;
pub mod fingerprint;
pub mod fold;
pub mod info;
pub mod ls;
pub mod man;
pub mod migrate;
pub mod repair;
pub mod resume;
pub mod rm;
pub mod run;
pub mod show;
pub mod stream;
pub mod upgrade;
pub mod validate;
pub mod verify;

use crate::cli::Global;
use crate::output::{sanitize, Style};
use journal::location::{self, Backend, Location};
use journal::store::file::FileStore;
use journal::store::jetstream::JetStreamStore;
use journal::store::Store;
use std::process::ExitCode;

/// Why a command did not do its job.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub help: Option<String>,
    /// 1: a refusal (the tool worked and said no); 2: it could not do its job.
    pub exit: u8,
    pub broken_pipe: bool,
}

impl Failure {
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            help: None,
            exit: 2,
            broken_pipe: false,
        }
    }
    pub fn refused(message: impl Into<String>) -> Failure {
        Failure {
            exit: 1,
            ..Failure::new(message)
        }
    }
    pub fn help(mut self, help: impl Into<String>) -> Failure {
        self.help = Some(help.into());
        self
    }
}

impl Failure {
    /// The exit status an error gives: 1 for a refusal (the tool worked and
    /// said no), 2 for anything that stopped it.
    pub fn exit_of(e: &journal::Error) -> u8 {
        match e {
            journal::Error::Live { .. }
            | journal::Error::Refused { .. }
            | journal::Error::TornTail { .. }
            | journal::Error::Exists { .. } => 1,
            _ => 2,
        }
    }
}

impl From<journal::Error> for Failure {
    fn from(e: journal::Error) -> Failure {
        Failure {
            exit: Failure::exit_of(&e),
            ..Failure::new(e.to_string())
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure {
            broken_pipe: e.kind() == std::io::ErrorKind::BrokenPipe,
            ..Failure::new(format!("writing output: {e}"))
        }
    }
}

pub type CmdResult = Result<ExitCode, Failure>;

/// Render a failure as `fisk-admin: message` (with help) on stderr.
pub fn finish(result: CmdResult, style: Style) -> ExitCode {
    match result {
        Ok(code) => code,
        // A closed pipe (`| head`) is not an error.
        Err(f) if f.broken_pipe => ExitCode::SUCCESS,
        Err(f) => {
            // Messages quote what they are about (a fingerprint field, a
            // server's error, a stream's subject): untrusted text.
            let mut diag = miette::MietteDiagnostic::new(sanitize(&f.message, true));
            if let Some(h) = f.help {
                diag = diag.with_help(sanitize(&h, true));
            }
            let handler = if style.color {
                miette::GraphicalReportHandler::new()
            } else {
                miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            };
            let mut text = String::new();
            if handler.render_report(&mut text, &diag).is_err() {
                text = diag.message.clone();
            }
            eprint!("fisk-admin: {}", text.trim_start());
            if !text.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(f.exit)
        }
    }
}

/// The store the global flags select.
pub fn locate(g: &Global) -> Result<Location, Failure> {
    Ok(location::resolve(
        g.state_dir.as_deref(),
        g.store.as_deref(),
        g.config.as_deref(),
    )?)
}

/// The NATS connection settings from the global flags, the context they or
/// the agent file name, and the defaults.
pub fn nats_settings(
    g: &Global,
    agent_context: Option<&str>,
) -> Result<journal::nats::Settings, Failure> {
    let o = journal::nats::Overrides {
        context: g.context.clone(),
        server: g.server.clone(),
        creds: g.creds.clone(),
        user: g.user.clone(),
        password: g.password.clone(),
        token: g.token.clone(),
    };
    Ok(journal::nats::resolve(&o, agent_context)?)
}

/// Bind to a JetStream stream, refusing one that breaks SPEC 8.
pub fn open_jetstream(
    g: &Global,
    stream: &str,
    agent_context: Option<&str>,
    why: &str,
) -> Result<JetStreamStore, Failure> {
    let settings = nats_settings(g, agent_context)?;
    JetStreamStore::connect(&settings, stream).map_err(|e| {
        Failure::from(e).help(format!(
            "the jetstream store {stream:?} was chosen by {why}; connection settings come from --context, --server, --creds, --user, --password, --token"
        ))
    })
}

/// The store the global flags select. It must exist: reading commands
/// never create a store.
pub fn open_store(g: &Global) -> Result<Store, Failure> {
    store_at(g, locate(g)?, true)
}

/// The store for `run`/`resume`: a store flag wins; otherwise the agent
/// file's `harness.sessions` block (or the default) chooses, as `--config`
/// would. `run` may create the directory; `resume` needs it to exist.
pub fn agent_store(
    g: &Global,
    agent: &std::path::Path,
    must_exist: bool,
) -> Result<Store, Failure> {
    let loc = if g.state_dir.is_none() && g.store.is_none() && g.config.is_none() {
        location::resolve(None, None, Some(agent))?
    } else {
        locate(g)?
    };
    store_at(g, loc, must_exist)
}

fn store_at(g: &Global, loc: Location, must_exist: bool) -> Result<Store, Failure> {
    match loc.backend {
        Backend::File { dir } => {
            if must_exist && !dir.is_dir() {
                let what = match dir.exists() {
                    true => "is not a directory",
                    false => "does not exist",
                };
                return Err(Failure::new(format!(
                    "store directory {} {what} (chosen by {})",
                    dir.display(),
                    loc.why
                ))
                .help("pass --state-dir DIR or --store file:DIR to point at the runs directory"));
            }
            Ok(Store::File(FileStore::new(dir)))
        }
        Backend::JetStream { stream } => Ok(Store::JetStream(Box::new(open_jetstream(
            g,
            &stream,
            loc.nats_context.as_deref(),
            &loc.why,
        )?))),
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
pub fn open_store_uri(g: &Global, uri: &str, missing: IfMissing) -> Result<Store, Failure> {
    let agent_context = match &g.config {
        Some(p) => Some(journal::agent::AgentFile::load(p)?.nats_context).filter(|c| !c.is_empty()),
        None => None,
    };
    match location::parse_uri(uri)? {
        Backend::File { dir } => {
            if !dir.is_dir() {
                match missing {
                    IfMissing::Fail => {
                        return Err(Failure::new(format!(
                            "store directory {} does not exist ({uri})",
                            dir.display()
                        )))
                    }
                    IfMissing::Create => {
                        use std::os::unix::fs::DirBuilderExt;
                        std::fs::DirBuilder::new()
                            .recursive(true)
                            .mode(0o700)
                            .create(&dir)
                            .map_err(|e| journal::Error::io(&dir, e))?;
                    }
                    IfMissing::Empty => creatable(&dir, uri)?,
                }
            }
            Ok(Store::File(FileStore::new(dir)))
        }
        Backend::JetStream { stream } => Ok(Store::JetStream(Box::new(open_jetstream(
            g,
            &stream,
            agent_context.as_deref(),
            uri,
        )?))),
    }
}

/// Refuse a missing store directory that could not be created because the
/// path itself, or the nearest of its parents that exists, is not a
/// directory: what creating it would fail on.
fn creatable(dir: &std::path::Path, uri: &str) -> Result<(), Failure> {
    let nearest = dir
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .find(|p| p.symlink_metadata().is_ok());
    match nearest {
        Some(p) if !p.is_dir() => Err(Failure::new(format!(
            "store directory {} cannot be created ({uri}): {} exists and is not a directory",
            dir.display(),
            p.display()
        ))),
        _ => Ok(()),
    }
}

/// The record schemas: built in, or from `--schema-dir`.
pub fn schemas(dir: Option<&std::path::Path>) -> Result<journal::schema::SchemaSet, Failure> {
    Ok(match dir {
        Some(d) => journal::schema::SchemaSet::from_dir(d)?,
        None => journal::schema::SchemaSet::embedded()?,
    })
}

/// SIGINT/SIGTERM: the first sets the returned flag (finish the step,
/// suspend); the second exits at once with status 130.
pub fn stop_flag() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, Failure> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal.
        flag::register_conditional_shutdown(sig, 130, std::sync::Arc::clone(&stop))
            .and_then(|_| flag::register(sig, std::sync::Arc::clone(&stop)))
            .map_err(|e| Failure::new(format!("installing signal handlers: {e}")))?;
    }
    Ok(stop)
}
