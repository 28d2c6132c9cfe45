//! The resolved invocation: what the global flags asked for, how output
//! looks, and what the environment says, read once in `main.rs` and passed down to every
//! command. Nothing below `main.rs`/`cli.rs` sees a clap type for the
//! global flags, so the modules that choose a store, print hints or
//! complete run ids depend on this module, not on the command surface
//! (which depends on them: the run-id completer hangs off its arguments).
//!
//! The flags are kept as typed: a printed next step repeats them
//! (`hint`), and `info` says which flag or variable chose what. A secret
//! named by `--password-file`/`--token-file` is not read here: it is read
//! only when a connection needs it (it may be standard input).

use crate::output::{Format, Style};
use std::path::PathBuf;
use std::time::Duration;

/// The global flags as given, and the environment variables that stand in
/// for some of them.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// `--state-dir DIR`.
    pub state_dir: Option<PathBuf>,
    /// `--store URI`.
    pub store: Option<String>,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--root-dir DIR`.
    pub root_dir: Option<PathBuf>,
    /// `--context NAME`.
    pub context: Option<String>,
    /// `--server URL`.
    pub server: Option<String>,
    /// `--creds FILE`.
    pub creds: Option<PathBuf>,
    /// `--user USER`.
    pub user: Option<String>,
    /// `--password PASSWORD`.
    pub password: Option<String>,
    /// `--password-file FILE`.
    pub password_file: Option<PathBuf>,
    /// `--token TOKEN`.
    pub token: Option<String>,
    /// `--token-file FILE`.
    pub token_file: Option<PathBuf>,
    /// `--hold DURATION` (SPEC 8).
    pub hold: Duration,
    /// How output looks: `-o`/`--json`, `--color`/`--no-color`/`NO_COLOR`
    /// and the terminal, and the width tables fit (`COLUMNS`).
    pub style: Style,
    /// The variables that stand in for flags.
    pub env: Env,
}

/// The variables that stand in for flags (`FISK_ADMIN_STORE`, and the
/// `nats` CLI's `NATS_URL`, `NATS_CREDS`, `NATS_USER`, `NATS_PASSWORD`,
/// `NATS_TOKEN`), each when set and not empty. They are read here only;
/// they count only where the flag was not given: a flag beats its variable.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub store: Option<String>,
    pub nats_url: Option<String>,
    pub nats_creds: Option<String>,
    pub nats_user: Option<String>,
    pub nats_password: Option<String>,
    pub nats_token: Option<String>,
    /// `FISK_ADMIN_OPERATOR`: who acts, for the audit log (`--operator`
    /// beats it).
    pub operator: Option<String>,
}

impl Env {
    /// The variables as the process has them now.
    pub fn read() -> Env {
        Env {
            store: env_value("FISK_ADMIN_STORE"),
            nats_url: env_value("NATS_URL"),
            nats_creds: env_value("NATS_CREDS"),
            nats_user: env_value("NATS_USER"),
            nats_password: env_value("NATS_PASSWORD"),
            nats_token: env_value("NATS_TOKEN"),
            operator: env_value("FISK_ADMIN_OPERATOR"),
        }
    }
}

/// A variable of the environment, when set and not empty.
fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// SPEC 8's default hold, the library's.
pub use journal::store::jetstream::DEFAULT_HOLD;

impl Invocation {
    /// The invocation of words typed so far with no parsed flags (completion,
    /// src/complete.rs): the store flags given, every other flag at its
    /// default, and the environment.
    pub fn typed(
        state_dir: Option<PathBuf>,
        store: Option<String>,
        config: Option<PathBuf>,
        root_dir: Option<PathBuf>,
    ) -> Invocation {
        Invocation {
            state_dir,
            store,
            config,
            root_dir,
            context: None,
            server: None,
            creds: None,
            user: None,
            password: None,
            password_file: None,
            token: None,
            token_file: None,
            hold: DEFAULT_HOLD,
            // Completion prints candidates, never a styled line.
            style: Style {
                format: Format::Text,
                color: false,
                width: None,
            },
            env: Env::read(),
        }
    }
}

/// An environment switch (`NO_TUI`, `THINKING`): set, not empty, and not
/// one of the words for "off".
pub fn env_on(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| {
        let v = v.to_string_lossy().trim().to_ascii_lowercase();
        !v.is_empty() && !["0", "false", "no", "off"].contains(&v.as_str())
    })
}
