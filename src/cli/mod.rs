//! The whole command surface, in one place (CLI.md).

use crate::filter::parse_regex;
use crate::invocation::{Env, Invocation};
use crate::output::{ColorChoice, Format, Style};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod read;
mod write;

pub use read::*;
pub use write::*;

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

/// The command line as clap parses it and people read it: the derive's,
/// dressed with the grouped help, the examples and the synopses
/// (`crate::help`).
pub fn command() -> clap::Command {
    crate::help::dress(<Cli as clap::CommandFactory>::command())
}

impl Cli {
    /// What clap cannot say alone: `--json` (the agent's word, on `query`,
    /// `stats` and `search`) is `-o json`, and `--format markdown|html|jsonl`
    /// is `export`'s document (CLI.md), the same as its `--as`; any other
    /// command refuses those three.
    pub fn settle(mut self) -> Result<Cli, clap::Error> {
        use clap::error::ErrorKind;
        let fail =
            |kind, msg: String| Err(<Cli as clap::CommandFactory>::command().error(kind, msg));
        let json = match &self.command {
            Command::Query(a) => a.json,
            Command::Stats(a) => a.json,
            Command::Search(a) => a.json,
            _ => false,
        };
        if json {
            self.global.format = FormatArg::Json;
        }
        // `-o openmetrics`: ls's and inbox's gauges, text otherwise.
        if self.global.format == FormatArg::Openmetrics {
            match &mut self.command {
                Command::Ls(a) => a.openmetrics = true,
                Command::Inbox(a) => a.openmetrics = true,
                _ => {
                    return fail(
                        ErrorKind::InvalidValue,
                        "--format openmetrics is what ls and inbox print for a metrics scraper; this command prints text or json".into(),
                    )
                }
            }
            self.global.format = FormatArg::Text;
        }
        let doc = match self.global.format {
            FormatArg::Text | FormatArg::Json | FormatArg::Openmetrics => None,
            FormatArg::Markdown => Some(ExportFormat::Markdown),
            FormatArg::Html => Some(ExportFormat::Html),
            FormatArg::Jsonl => Some(ExportFormat::Jsonl),
        };
        match (&mut self.command, doc) {
            (Command::Export(a), Some(d)) => match a.doc_as {
                Some(given) if given != d => {
                    return fail(
                        ErrorKind::ArgumentConflict,
                        format!(
                            "--format {} and --as {} name two documents: give one",
                            d.word(),
                            given.word()
                        ),
                    )
                }
                _ => {
                    a.doc_as = Some(d);
                    self.global.format = FormatArg::Text;
                }
            },
            (Command::Export(a), None) if a.doc_as.is_none() => {
                return fail(
                    ErrorKind::MissingRequiredArgument,
                    "export writes a document: give --format markdown, html or jsonl (or --as)"
                        .into(),
                )
            }
            (_, Some(d)) => {
                return fail(
                    ErrorKind::InvalidValue,
                    format!(
                        "--format {} is a document export writes; this command prints text or json",
                        d.word()
                    ),
                )
            }
            _ => {}
        }
        Ok(self)
    }
}

/// `--format`: text or json for every command; markdown, html and jsonl
/// are `export`'s documents ([`Cli::settle`] moves them to its `--as`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// For people
    Text,
    /// For scripts
    Json,
    /// export only: Markdown for a ticket
    Markdown,
    /// export only: one self-contained HTML file
    Html,
    /// export only: the journal's lines
    Jsonl,
    /// ls and inbox only: gauges for node_exporter's textfile collector
    Openmetrics,
}

#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    // The environment variables below are read in one place
    // (`invocation::Env`), not by clap: a flag given on the command line must be
    // told from its variable, because the flag wins (`info` says which).
    /// File backend at DIR (default: $XDG_STATE_HOME/fisk-ai/runs)
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The store: file:DIR or jetstream:STREAM [env: FISK_ADMIN_STORE]
    #[arg(long, global = true, value_name = "URI")]
    pub store: Option<String>,
    /// An agent file whose harness.sessions block chooses the store
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The agent's root directory (its --root-dir): replaces the agent file's root_directory; the file store is DIR/runs unless the agent file names a directory
    #[arg(long, global = true, value_name = "DIR")]
    pub root_dir: Option<PathBuf>,
    /// A NATS context as the nats CLI stores it (~/.config/nats/context/NAME.json) [env: NATS_CONTEXT]
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// NATS server URL(s), comma-separated; overrides the context [env: NATS_URL]
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,
    /// NATS credentials file; overrides the context [env: NATS_CREDS]
    #[arg(long, global = true, value_name = "FILE")]
    pub creds: Option<PathBuf>,
    /// NATS user; overrides the context [env: NATS_USER]
    #[arg(long, global = true, value_name = "USER")]
    pub user: Option<String>,
    /// NATS password; overrides the context (visible to ps: prefer NATS_PASSWORD or --password-file) [env: NATS_PASSWORD]
    #[arg(long, global = true, value_name = "PASSWORD")]
    pub password: Option<String>,
    /// Read the NATS password from this file ("-": standard input)
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "password")]
    pub password_file: Option<PathBuf>,
    /// NATS token; overrides the context (visible to ps: prefer NATS_TOKEN or --token-file) [env: NATS_TOKEN]
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Read the NATS token from this file ("-": standard input)
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// Output for people (text) or scripts (json); export's document: markdown, html or jsonl
    #[arg(long, short = 'o', global = true, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// Colour: on a terminal only (auto, and not with NO_COLOR), always (for less -R), or never
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// No colour: the same as --color never (also NO_COLOR)
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Times in text in UTC (Z), one zone for every line, as journalctl --utc; default: each with the zone it was written in (JSON keeps them as written)
    #[arg(long, global = true)]
    pub utc: bool,
    /// JetStream: a run not at rest whose last record is younger than this is live. DURATION in Go's syntax, as the agent's hold: 300ms, 90s, 10m, 1.5h, 2h45m, 1d (0 for none)
    #[arg(long, global = true, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub hold: std::time::Duration,
}

impl Global {
    /// The resolved invocation (src/invocation.rs): these flags, the output
    /// style they and the terminal give, and the environment variables
    /// that stand in for some of them, read now.
    pub fn resolve(self) -> Invocation {
        crate::output::show_utc(self.utc);
        Invocation {
            state_dir: self.state_dir,
            store: self.store,
            config: self.config,
            root_dir: self.root_dir,
            context: self.context,
            server: self.server,
            creds: self.creds,
            user: self.user,
            password: self.password,
            password_file: self.password_file,
            token: self.token,
            token_file: self.token_file,
            hold: self.hold,
            style: Style {
                // Export's documents were moved to its --as ([`Cli::settle`]).
                format: match self.format {
                    FormatArg::Json => Format::Json,
                    _ => Format::Text,
                },
                color: crate::output::want_color(self.color, self.no_color),
                width: crate::output::table_width(),
            },
            env: Env::read(),
        }
    }
}

/// Every duration argument (`--hold`, and any later one): Go's duration
/// syntax as the agent's `hold` setting reads it (`300ms`, `1.5h`, `2h45m`)
/// plus `d`; a bare number other than `0` and a negative one are refused
/// ([`journal::time::parse_duration`]).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    journal::time::parse_duration(s).map_err(|e| e.0)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List runs: status, live, model, records, size, times, prompt
    #[command(visible_alias = "list")]
    Ls(LsArgs),
    /// Show a run: status, counters, fingerprint, pending batch, what it waits on
    #[command(visible_alias = "view")]
    Show(ShowArgs),
    /// Check journals: parse, sequence, fold, ids, permissions, locks, the audit log; or against a seal
    Verify(VerifyArgs),
    /// The audit log: who wrote what to which run, when and why, newest first
    Log(LogArgs),
    /// Seal the store: every run's record count and chain of hashes under one root, optionally signed
    Seal(SealArgs),
    /// Validate records against the JSON schemas
    Validate(ValidateArgs),
    /// Print a run's folded state
    Fold(FoldArgs),
    /// What a run cost and where its time went: tokens per response, per-tool calls and times
    Stats(StatsArgs),
    /// A run's tool calls, each with its input and the answer it got
    Query(QueryArgs),
    /// Find runs across the store by agent, model, caller, status, time, prompt or anything in their transcript
    Search(SearchArgs),
    /// Answer a deferred tool call by hand (it prints the resume that goes on)
    Answer(AnswerArgs),
    /// Approve a gated call once, or a tool for the rest of the run (it prints the resume that goes on)
    Approve(ApproveArgs),
    /// Every call waiting on a person across the store (answers and approvals), oldest first, with the command that acts on each
    Inbox(InboxArgs),
    /// Fix a damaged tail: cut a torn final line (kept in a backup) or add a missing final newline
    Repair(RepairArgs),
    /// Delete runs (journal and lock), keeping a backup of each; refuses live runs
    #[command(visible_alias = "delete")]
    Rm(RmArgs),
    /// Convert version-3 runs (the August 2026 agent) to version 1, keeping the originals
    Upgrade(UpgradeArgs),
    /// Close open runs that crashed and will never resume with a terminal record the agent reads (its "terminate"); refuses live runs and runs waiting on a person
    End(EndArgs),
    /// A new run of a run's first N records, to retry from a point (the meta record with the new id, records 2..N byte-identical; the original untouched)
    Fork(ForkArgs),
    /// The most a journal with interior damage can give back, as a run the agent accepts: says what was lost and what fisk-admin had to write; the damaged original kept
    Recover(RecoverArgs),
    /// The backups rm, repair, upgrade and recover keep: list them with the disk each holds, restore one, prune old ones
    Backups(BackupsArgs),
    /// A run for a ticket or a review: Markdown, one self-contained HTML file, or a journal (--as; --redact replaces matches everywhere)
    Export(ExportArgs),
    /// Print the fingerprint an agent file would start a run with (JSON, for diff)
    Fingerprint(FingerprintArgs),
    /// Compare two fingerprints and say what a resume would do
    Diff(DiffArgs),
    /// Start a run with the minimal runner (script provider, exec and defer tools)
    Run(RunArgs),
    /// Resume a run: gates, claim, finish the pending batch, continue the script
    Resume(ResumeArgs),
    /// Which store would be used, and why
    Info,
    /// Copy runs between stores, byte-identical, resumable, verified
    Migrate(MigrateArgs),
    /// Check or create a JetStream stream for sessions
    #[command(subcommand)]
    Stream(StreamCommand),
    /// Print shell completions
    Completions(CompletionsArgs),
    /// Write man pages into a directory
    Man(ManArgs),
}

#[cfg(test)]
mod tests {
    use crate::invocation::DEFAULT_HOLD;
    use clap::Parser;

    #[test]
    fn the_default_hold_is_the_one_the_command_line_declares() {
        let g = super::Cli::parse_from(["fisk-admin", "info"]).global;
        assert_eq!(g.resolve().hold, DEFAULT_HOLD);
    }
}
