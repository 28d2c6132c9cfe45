//! The arguments of the commands that write to a store, and of `run` and
//! `resume`.

use super::*;

/// The two flags every command that writes to a store takes, the same
/// everywhere (issue 35): a dry run makes every check the command makes
/// and writes nothing, anywhere; `--yes` answers the question a command
/// asks before it writes (a command that asks none takes it too).
#[derive(Args, Debug, Clone, Default)]
pub struct WriteArgs {
    /// Make every check the command makes and say what it would write; write nothing (the store and its backups stay byte for byte as they are)
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before writing (needed when standard input is not a terminal and the command asks)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Who is acting, for the audit log (default: FISK_ADMIN_OPERATOR, else $USER@host)
    #[arg(long, value_name = "NAME")]
    pub operator: Option<String>,
    /// Why, in your words, kept in the audit log beside what was written
    #[arg(long, value_name = "TEXT")]
    pub why: Option<String>,
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
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    /// Copy every run of the source
    #[arg(long)]
    pub all: bool,
    /// Copy the readable prefix of a run with interior corruption, and
    /// (JetStream) the records of a run without a meta record as they are
    /// stored (with --all: every such run)
    #[arg(long)]
    pub include_corrupt: bool,
    /// Copy runs that a writer holds now
    #[arg(long)]
    pub allow_live: bool,
    /// Delete each source run once its copy is verified (never one copied
    /// only up to a readable prefix)
    #[arg(long)]
    pub delete_source: bool,
    /// Convert version-3 runs (the August 2026 agent) to version 1 while copying
    #[arg(long)]
    pub upgrade: bool,
    /// Runs copied at once
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: u16,
    /// Print only the runs that were not copied, and the summary
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// JetStream: take a source run within its hold (SPEC 8), once its writer is known to be gone
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Subcommand, Debug)]
pub enum StreamCommand {
    /// Check a stream against the session-store rules
    Check(StreamCheckArgs),
    /// Create a stream with exactly the session-store configuration
    Create(StreamCreateArgs),
    /// Allow or forbid rollups on a stream (upgrade needs them; forbid them after)
    Edit(StreamEditArgs),
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("rollup").required(true)))]
pub struct StreamEditArgs {
    /// The stream name
    pub stream: String,
    /// Allow rollups, which upgrade needs to replace a record in place
    #[arg(long, group = "rollup")]
    pub allow_rollup: bool,
    /// Forbid rollups again, to keep every record write-once
    #[arg(long, group = "rollup")]
    pub no_allow_rollup: bool,
}

#[derive(Args, Debug)]
pub struct StreamCheckArgs {
    /// The stream name
    pub stream: String,
    /// Exit 1 on a warning too (memory storage, a limit that refuses appends, rollups allowed)
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args, Debug)]
pub struct StreamCreateArgs {
    /// The stream name
    pub stream: String,
    /// The one subject: a prefix and `.>`, quoted for the shell (which reads an unquoted > as a redirect), for example --subject 'fisk.sessions.>'
    #[arg(long, value_name = "SUBJECT")]
    pub subject: String,
    /// How many servers keep a copy (1 to 5; in a cluster, 3 survives the loss of one)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=5))]
    pub replicas: u8,
    /// Where the servers keep it: on disk, or in memory (lost on restart)
    #[arg(long, value_enum, default_value_t = Storage::File)]
    pub storage: Storage,
}

/// `stream create --storage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Storage {
    File,
    Memory,
}

#[derive(Args, Debug)]
pub struct AnswerArgs {
    /// The run id
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub run: String,
    /// The deferred call's tool_use id (may be left out when exactly one call waits)
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::answer_ids))]
    pub tool_use_id: Option<String>,
    /// The answer's text, stored exactly (else --content-file, else standard input; on a terminal it asks)
    #[arg(long, conflicts_with_all = ["content_file", "edit"])]
    pub content: Option<String>,
    /// Read the answer from this file (at most 256 KiB, UTF-8; one trailing newline dropped)
    #[arg(long, value_name = "PATH", conflicts_with = "edit")]
    pub content_file: Option<PathBuf>,
    /// Write the answer in $VISUAL or $EDITOR (else vi), as git commit does
    #[arg(long)]
    pub edit: bool,
    /// Mark the answer as an error result
    #[arg(long)]
    pub is_error: bool,
    /// JetStream: answer within the hold (SPEC 8), once its writer is known to be gone
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    /// The run id
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub run: String,
    /// The pending call to approve for one dispatch (with --all-pending: another run)
    #[arg(required_unless_present_any = ["tool", "all_pending"], conflicts_with = "tool")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::approve_ids))]
    pub tool_use_id: Option<String>,
    /// With --all-pending: more runs
    #[arg(value_name = "RUN", requires = "all_pending")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub more: Vec<String>,
    /// Approve every call of this tool for the rest of the run instead
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// Approve once every call of these runs that waits on an approval, after listing them and asking
    #[arg(long, conflicts_with = "tool")]
    pub all_pending: bool,
    /// JetStream: approve within the hold (SPEC 8), once its writer is known to be gone
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct InboxArgs {
    /// Which runs (as ls)
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    /// Only calls waiting longer than this. DURATION as --hold: 90s, 10m, 1.5h, 2h45m, 1d
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub older_than: Option<std::time::Duration>,
    #[command(flatten)]
    pub limit: crate::filter::Limit,
    /// List again every EVERY (default 2s) until Ctrl-C, as kubectl get -w: a terminal shows the inbox anew each time; a pipe gets the rows that are new or changed
    #[arg(long, short = 'w', value_name = "EVERY", num_args = 0..=1, default_missing_value = "2s", value_parser = parse_duration)]
    pub watch: Option<std::time::Duration>,
    /// `-o openmetrics` (set by [`Cli::settle`]).
    #[arg(skip)]
    pub openmetrics: bool,
}

#[derive(Args, Debug)]
pub struct RepairArgs {
    /// The runs to repair
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    /// Every run in the store: each damaged tail repaired and reported, healthy journals left byte for byte as they are
    #[arg(long)]
    pub all: bool,
    /// JetStream: repair within the hold (SPEC 8), once its writer is known to be gone
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct RmArgs {
    /// The runs to delete (with filters: only those of them the filters select)
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    /// Only runs whose last activity (UPDATED) is more than this long ago (90m, 24h, 7d); runs whose last record has no time are left out
    #[arg(long, value_name = "DUR", value_parser = crate::filter::parse_span)]
    pub older_than: Option<std::time::Duration>,
    /// JetStream: delete within the hold (SPEC 8), once its writer is known to be gone
    #[arg(long)]
    pub force: bool,
    /// At most this many runs, the longest inactive first
    #[command(flatten)]
    pub limit: crate::filter::Limit,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct BackupsArgs {
    #[command(subcommand)]
    pub action: Option<BackupsCommand>,
}

#[derive(Subcommand, Debug)]
pub enum BackupsCommand {
    /// Put a deleted run back from its rm backup (repair and upgrade backups are refused)
    Restore(BackupsRestoreArgs),
    /// Remove backups kept before a time ago, or named; frees the disk they hold
    Prune(BackupsPruneArgs),
}

#[derive(Args, Debug)]
pub struct BackupsRestoreArgs {
    /// The backup, as `backups` lists it (ID column); or a run id: its rm backup (the newest, when it has several, as git stash pop takes the newest)
    pub id: String,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct BackupsPruneArgs {
    /// Backups to remove, as `backups` lists them (ID column)
    pub ids: Vec<String>,
    /// Remove the backups kept more than this long ago (90m, 24h, 7d; 0 for every backup)
    #[arg(long, value_name = "DUR", value_parser = crate::filter::parse_span)]
    pub older_than: Option<std::time::Duration>,
    /// Only backups kept by this command (comma-separated or repeated): rm, repair, upgrade, recover
    #[arg(long, value_enum, value_name = "KIND", value_delimiter = ',')]
    pub kind: Vec<BackupKind>,
    /// Only backups kept at or after this (WHEN as ls --since: RFC 3339, a date, a span ago, yesterday)
    #[arg(long, value_name = "WHEN", value_parser = crate::filter::parse_when, allow_hyphen_values = true)]
    pub since: Option<journal::time::Time>,
    /// Only backups of these runs (comma-separated or repeated)
    #[arg(long, value_name = "RUN", value_delimiter = ',')]
    pub run: Vec<String>,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// `backups prune --kind`: the command that kept a backup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackupKind {
    Rm,
    Repair,
    Upgrade,
    Recover,
}

impl BackupKind {
    /// The word `backups` lists it with.
    pub fn word(self) -> &'static str {
        match self {
            BackupKind::Rm => "rm",
            BackupKind::Repair => "repair",
            BackupKind::Upgrade => "upgrade",
            BackupKind::Recover => "recover",
        }
    }
}

#[derive(Args, Debug)]
pub struct UpgradeArgs {
    /// The runs to upgrade
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    /// Every run in the store (version-1 runs are left alone)
    #[arg(long)]
    pub all: bool,
    /// JetStream: upgrade a run within its hold (its writer is known to be gone)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Cutting inside a batch (after a batch's tool calls, before all their results) leaves the new run with a pending batch, as a crash there would: `resume` completes it."
)]
pub struct ForkArgs {
    /// The run to fork
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub run: String,
    /// The last record the new run keeps (1 to the run's last seq)
    #[arg(long, value_name = "N")]
    pub at_seq: u64,
    /// The new run's id
    #[arg(long = "as", value_name = "NEW_ID")]
    pub new_id: String,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Every intact record is kept (byte for byte; a record whose seq must change has only its seq rewritten). A call whose result was lost is answered with an error result fisk-admin writes, saying so; results whose assistant turn was lost are dropped. In place, the damaged original is kept as a backup (and the bytes that could not be read beside it): `backups` lists them. A run whose meta record is lost cannot be recovered. The damage kinds and what each costs: journal/FORMAT.md."
)]
pub struct RecoverArgs {
    /// The damaged run
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub run: String,
    /// Write the recovered run under this new id, leaving the damaged one as it is
    #[arg(long = "as", value_name = "NEW_ID")]
    pub new_id: Option<String>,
    /// Recover a journal the agent reads whole all the same (it has no interior damage: repair fixes a damaged tail; recover can change what a resume does); JetStream: recover in place within the hold (SPEC 8), once its writer is known to be gone (damage stored last keeps a run from looking at rest)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Args, Debug)]
pub struct EndArgs {
    /// The runs to end (or select them with the filters below: only open runs are selected)
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    /// Only runs whose last record (the last activity) is older than this. DURATION as --hold: 90m, 24h, 7d
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub older_than: Option<std::time::Duration>,
    /// The reason the terminal record gives (the agent's own; suspended leaves the run resumable)
    #[arg(long, value_enum, default_value_t = EndReason::Error)]
    pub reason: EndReason,
    /// The terminal record's message, stored exactly as given (without it: "ended by fisk-admin end: no writer finished the run"; '' for none)
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,
    /// The same as --force (kept for scripts written before it): end a named run that waits on a person
    #[arg(long, hide = true)]
    pub even_if_waiting: bool,
    /// End a named run that waits on a person or is ready to resume (what they were asked, or gave, is dropped; a filter never selects such a run); JetStream: end within the hold (SPEC 8), once its writer is known to be gone
    #[arg(long)]
    pub force: bool,
    /// At most this many runs, the longest inactive first
    #[command(flatten)]
    pub limit: crate::filter::Limit,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// `end --reason`: the agent's five terminal reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EndReason {
    /// The run finished
    Completed,
    /// Stopped; resume continues it
    Suspended,
    /// Ended in an error (the default)
    Error,
    /// The token budget was spent
    Budget,
    /// The iteration limit was reached
    #[value(name = "max_iterations")]
    MaxIterations,
}

#[derive(Args, Debug)]
pub struct FingerprintArgs {
    /// The agent file (YAML)
    #[arg(long, value_name = "FILE")]
    pub agent: PathBuf,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The run's side: a run id, or a fingerprint JSON file (`-` for stdin)
    pub a: String,
    /// The resume's side: a run id, or a fingerprint JSON file (`-` for stdin)
    pub b: String,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The agent file (YAML); its harness.sessions block picks the store unless a store flag does
    #[arg(long, value_name = "FILE")]
    pub agent: PathBuf,
    /// The run id to use (default: a fresh random one)
    #[arg(long, value_name = "RUN")]
    pub id: Option<String>,
    /// The prompt
    pub prompt: String,
}

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// The run id
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub run: String,
    /// The agent file the run was started with (default: the one given with --config; on a terminal it asks)
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
    /// Continue despite blocking drift (model, system prompt, thinking, reasoning effort)
    #[arg(long)]
    pub force: bool,
    /// Add a new user turn (also continues a completed run); `-` reads it from standard input, or asks on a terminal
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    #[command(flatten)]
    pub write: WriteArgs,
}
