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
pub mod repair;
pub mod resume;
pub mod rm;
pub mod run;
pub mod show;
pub mod verify;

use crate::cli::Global;
use crate::output::Style;
use journal::location::{self, Backend, Location};
use journal::store::file::FileStore;
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

impl From<journal::Error> for Failure {
    fn from(e: journal::Error) -> Failure {
        let exit = match e {
            journal::Error::Live { .. }
            | journal::Error::Refused { .. }
            | journal::Error::TornTail { .. }
            | journal::Error::Exists { .. } => 1,
            _ => 2,
        };
        Failure {
            exit,
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
            let mut diag = miette::MietteDiagnostic::new(f.message);
            if let Some(h) = f.help {
                diag = diag.with_help(h);
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

/// The store the global flags select. It must exist: reading commands
/// never create a store.
pub fn open_store(g: &Global) -> Result<Store, Failure> {
    store_at(locate(g)?, true)
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
    store_at(loc, must_exist)
}

fn store_at(loc: Location, must_exist: bool) -> Result<Store, Failure> {
    match loc.backend {
        Backend::File { dir } => {
            if must_exist && !dir.is_dir() {
                return Err(Failure::new(format!(
                    "store directory {} does not exist (chosen by {})",
                    dir.display(),
                    loc.why
                ))
                .help("pass --state-dir DIR or --store file:DIR to point at the runs directory"));
            }
            Ok(Store::File(FileStore::new(dir)))
        }
        Backend::JetStream { stream } => Err(Failure::new(format!(
            "the jetstream store {stream:?} (chosen by {}) is not supported by this build yet",
            loc.why
        ))),
    }
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
