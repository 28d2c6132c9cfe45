//! The whole command surface, in one place (CLI.md).

use crate::output::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "fisk-admin",
    version,
    about = "Offline administration and forensics for fisk agent session journals",
    long_about = "Offline administration and forensics for fisk agent session journals.\n\n\
        Exit status: 0 success, 1 findings or a refusal, 2 the tool could not do its job."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// File backend at DIR (default: $XDG_STATE_HOME/fisk-ai/runs)
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The store: file:DIR or jetstream:STREAM
    #[arg(long, global = true, value_name = "URI")]
    pub store: Option<String>,
    /// An agent file whose harness.sessions block chooses the store
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A NATS context as the nats CLI stores it (~/.config/nats/context/NAME.json)
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// NATS server URL(s), comma-separated; overrides the context
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,
    /// NATS credentials file; overrides the context
    #[arg(long, global = true, value_name = "FILE")]
    pub creds: Option<PathBuf>,
    /// NATS user; overrides the context
    #[arg(long, global = true, value_name = "USER")]
    pub user: Option<String>,
    /// NATS password; overrides the context
    #[arg(long, global = true, value_name = "PASSWORD")]
    pub password: Option<String>,
    /// NATS token; overrides the context
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Output for people (text) or scripts (json)
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// No colour (also NO_COLOR)
    #[arg(long, global = true)]
    pub no_color: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List runs: status, live, model, records, size, times, prompt
    Ls(LsArgs),
    /// Show a run: status, counters, fingerprint, pending batch, what it waits on
    Show(ShowArgs),
    /// Check journals: parse, sequence, fold, ids, permissions, locks
    Verify(VerifyArgs),
    /// Validate records against the JSON schemas
    Validate(ValidateArgs),
    /// Print a run's folded state (SPEC 3)
    Fold(FoldArgs),
    /// Which store would be used, and why
    Info,
    /// Copy runs between stores, byte-identical, resumable, verified
    Migrate(MigrateArgs),
    /// Check or create a JetStream stream for sessions (SPEC 8)
    #[command(subcommand)]
    Stream(StreamCommand),
    /// Print shell completions
    Completions(CompletionsArgs),
    /// Write man pages into a directory
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct LsArgs {
    /// Only runs with this status (waiting, open, completed, suspended, error, budget, max_iterations, corrupt)
    #[arg(long)]
    pub status: Vec<String>,
    /// Sort order (newest first for times, largest first for size)
    #[arg(long, value_enum, default_value_t = SortKey::Updated)]
    pub sort: SortKey,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    Updated,
    Created,
    Size,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The run id
    pub run: String,
    /// Print the whole conversation
    #[arg(long)]
    pub transcript: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Runs to check (default: every journal in the store)
    pub runs: Vec<String>,
    /// Exit 1 on warnings too
    #[arg(long)]
    pub strict: bool,
    /// Skip the JSON Schema check of every record
    #[arg(long)]
    pub no_schema: bool,
    /// Check records against the schemas in DIR instead of the built-in ones
    #[arg(long, value_name = "DIR", conflicts_with = "no_schema")]
    pub schema_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Runs to validate (default: every run in the store)
    #[arg(conflicts_with_all = ["all", "file"])]
    pub runs: Vec<String>,
    /// Validate every run in the store
    #[arg(long)]
    pub all: bool,
    /// Validate a JSON-lines file (or - for stdin) instead of a store
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Validate against the schemas in DIR instead of the built-in ones
    #[arg(long, value_name = "DIR")]
    pub schema_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct FoldArgs {
    /// The run id
    pub run: String,
    /// Fold only the records up to this seq
    #[arg(long, value_name = "N")]
    pub until_seq: Option<u64>,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write the pages into
    #[arg(default_value = "man")]
    pub dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The source store: file:DIR or jetstream:STREAM
    #[arg(long, value_name = "URI")]
    pub from: String,
    /// The destination store: file:DIR or jetstream:STREAM
    #[arg(long, value_name = "URI")]
    pub to: String,
    /// Runs to copy (or --all)
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub runs: Vec<String>,
    /// Copy every run of the source
    #[arg(long)]
    pub all: bool,
    /// Say what would be copied; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Copy the readable prefix of a run with interior corruption
    #[arg(long)]
    pub include_corrupt: bool,
    /// Copy runs that a writer holds now
    #[arg(long)]
    pub allow_live: bool,
    /// Delete each source run once its copy is verified
    #[arg(long)]
    pub delete_source: bool,
    /// Runs copied at once
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: u16,
}

#[derive(Subcommand, Debug)]
pub enum StreamCommand {
    /// Check a stream against the session-store rules (SPEC 8)
    Check(StreamCheckArgs),
    /// Create a stream with exactly the session-store configuration
    Create(StreamCreateArgs),
}

#[derive(Args, Debug)]
pub struct StreamCheckArgs {
    /// The stream name
    pub stream: String,
}

#[derive(Args, Debug)]
pub struct StreamCreateArgs {
    /// The stream name
    pub stream: String,
    /// The one subject, PREFIX.> (for example fisk.sessions.>)
    #[arg(long, value_name = "PREFIX.>")]
    pub subject: String,
}
