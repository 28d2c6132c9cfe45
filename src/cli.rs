//! The whole command surface, in one place (CLI.md).

use crate::filter::parse_regex;
use crate::invocation::{Env, Invocation};
use crate::output::{ColorChoice, Format, Style};
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
    /// Check journals: parse, sequence, fold, ids, permissions, locks
    Verify(VerifyArgs),
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

#[derive(Args, Debug)]
pub struct LsArgs {
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    /// Sort order (newest first for times, largest first for size, tokens
    /// and records; a run whose figure is unknown comes last)
    #[arg(long, value_enum, default_value_t = SortKey::Updated)]
    pub sort: SortKey,
    /// The other way round (oldest or smallest first)
    #[arg(long)]
    pub reverse: bool,
    #[command(flatten)]
    pub limit: crate::filter::Limit,
    /// Also list what the agent's listing cannot see: on JetStream, runs
    /// whose messages have no meta record (as corrupt; lists every subject
    /// of the stream)
    #[arg(long)]
    pub all: bool,
    /// The text table's columns, in this order (comma-separated; `all` for
    /// every one); default: every one but caller
    #[arg(long, value_enum, value_delimiter = ',', value_name = "COLUMN")]
    pub columns: Vec<LsColumn>,
    /// List again every EVERY (default 2s) until Ctrl-C, as kubectl get -w: a terminal shows the listing anew each time; a pipe gets the rows that are new or changed
    #[arg(long, short = 'w', value_name = "EVERY", num_args = 0..=1, default_missing_value = "2s", value_parser = parse_duration)]
    pub watch: Option<std::time::Duration>,
    /// `-o openmetrics` (set by [`Cli::settle`]).
    #[arg(skip)]
    pub openmetrics: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    Updated,
    Created,
    /// Unknown on JetStream (then by run id, and ls says so)
    Size,
    /// Total tokens (in + out + cache read + cache create)
    Tokens,
    /// The number of records
    Records,
}

/// A column of `ls`'s text table (`--columns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LsColumn {
    /// Every column below, in this order
    All,
    Run,
    Status,
    /// Where the run stands (the run model beside the agent's status: ready, waiting-answer, damaged, ...)
    State,
    /// What the run waits on a person for (`resume` when a person acted and it is ready to go on)
    Waiting,
    /// A writer holds the run
    Live,
    /// The generation (meta.version)
    Ver,
    Agent,
    Model,
    Caller,
    /// The last seq
    Records,
    /// Total tokens, from a version-1 terminal's counters (`-`: unknown)
    Tokens,
    Size,
    Created,
    Updated,
    /// Why the run ended: its terminal's message
    Message,
    Prompt,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("conversation").args(["transcript", "follow"]).multiple(true))]
pub struct ShowArgs {
    #[command(flatten)]
    pub target: RunOrFile,
    /// The whole conversation: a full-screen viewer on a terminal (z/Z fold, / search, q quits), labelled lines otherwise
    #[arg(long)]
    pub transcript: bool,
    /// With --transcript: labelled line output even on a terminal (also NO_TUI)
    #[arg(long, requires = "conversation")]
    pub no_tui: bool,
    /// With --transcript in line mode (or --follow): show thinking blocks (also THINKING); folded to one line otherwise
    #[arg(long, requires = "conversation")]
    pub thinking: bool,
    /// With --transcript in line mode: print straight to the terminal, not through $PAGER (less -FRX when unset)
    #[arg(long, requires = "transcript")]
    pub no_pager: bool,
    /// With --transcript: the viewer opens on the first match of this regular expression (n/N for the others, as after /); line mode prints only the blocks that match, and the closing section
    #[arg(long, value_name = "RE", requires = "transcript", value_parser = parse_regex)]
    pub find: Option<regex::Regex>,
    /// The run as of this seq; a damaged run reads up to its first bad line when N is before it
    #[arg(long, value_name = "N", conflicts_with = "transcript")]
    pub until_seq: Option<u64>,
    /// Print the transcript's records as they are written (labelled lines,
    /// no pager) until the run reaches a terminal record, or Ctrl-C; with
    /// --transcript on a terminal, the viewer keeps to the end while its
    /// cursor is on the last block
    #[arg(long, conflicts_with = "until_seq")]
    pub follow: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Runs to check (default: every journal in the store)
    #[arg(
        conflicts_with = "file",
        add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids)
    )]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub file: FileArg,
    /// Exit 1 on warnings too
    #[arg(long)]
    pub strict: bool,
    /// Under each finding, the offending line (neutralised, cut to the width)
    #[arg(long)]
    pub details: bool,
    /// Skip the JSON Schema check of every record
    #[arg(long)]
    pub no_schema: bool,
    /// Check records against the schemas in DIR instead of the built-in ones
    #[arg(long, value_name = "DIR", conflicts_with = "no_schema")]
    pub schema_dir: Option<PathBuf>,
    /// Only errors and warnings, and the verdict: the same as --severity warning
    #[arg(long, short = 'q', conflicts_with = "severity")]
    pub quiet: bool,
    /// The lowest severity shown (the counts and the exit status still take every finding)
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub severity: Option<SeverityArg>,
}

/// `verify --severity`: the lowest severity of finding shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum SeverityArg {
    /// Errors only
    Error,
    /// Errors and warnings
    Warning,
    /// Every finding (the default)
    Info,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Runs to validate (default: every run in the store)
    #[arg(conflicts_with_all = ["all", "file"])]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    /// Validate every run in the store
    #[arg(long)]
    pub all: bool,
    /// Validate a JSON-lines file (or - for stdin) instead of a store
    #[arg(long, value_name = "PATH", conflicts_with = "all")]
    pub file: Option<PathBuf>,
    /// Validate against the schemas in DIR instead of the built-in ones
    #[arg(long, value_name = "DIR")]
    pub schema_dir: Option<PathBuf>,
}

/// `--file PATH`: a journal file read with no store, instead of a run.
#[derive(Args, Debug, Default)]
pub struct FileArg {
    /// Read the journal file at PATH (one copied off a host) instead of a run of the store; the run id is its meta record's
    #[arg(long, value_name = "PATH")]
    pub file: Option<std::path::PathBuf>,
}

/// A run of the store, or `--file PATH`: what an inspecting command reads.
#[derive(Args, Debug)]
pub struct RunOrFile {
    /// The run id (or --file, or --newest)
    #[arg(
        required_unless_present_any = ["file", "newest"],
        conflicts_with_all = ["file", "newest"],
        add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids)
    )]
    pub run: Option<String>,
    #[command(flatten)]
    pub file: FileArg,
    /// The run created last in the store, instead of a run id (show --newest --follow follows the run that started last)
    #[arg(long, conflicts_with = "file")]
    pub newest: bool,
}

impl RunOrFile {
    /// `--newest`: the run the store created last (by `meta.created`,
    /// then the last activity), as its id.
    pub fn settle(
        &mut self,
        g: &crate::invocation::Invocation,
    ) -> Result<(), crate::error::Failure> {
        if !self.newest {
            return Ok(());
        }
        let store = crate::open::open_store(g)?;
        let newest = store
            .summaries()?
            .into_iter()
            .filter(|s| s.status != journal::store::Listed::Corrupt)
            .max_by(|a, b| {
                a.created
                    .cmp(&b.created)
                    .then(a.updated.cmp(&b.updated))
                    .then(b.run_id.cmp(&a.run_id))
            })
            .ok_or_else(|| {
                crate::error::Failure::new(format!(
                    "--newest: no run in {}",
                    crate::output::sanitize(&store.describe(), false)
                ))
            })?;
        eprintln!(
            "fisk-admin: note: the newest run is {}",
            crate::output::sanitize(&newest.run_id, false)
        );
        self.run = Some(newest.run_id);
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub target: RunOrFile,
    /// The document: markdown, html (one file, no script, no network) or
    /// jsonl (the journal); the same as --format markdown|html|jsonl
    #[arg(long = "as", value_enum, value_name = "FORMAT")]
    pub doc_as: Option<ExportFormat>,
    /// Replace each match of this regular expression in every string of
    /// the run, keys included, by [redacted] (ids and tool names alike
    /// everywhere, so the jsonl still folds); a match in the journal's
    /// structure (times, field names, numbers) or the document's own words
    /// is refused, and so is a pattern that can match the empty string
    /// (repeatable)
    #[arg(long, value_name = "REGEX")]
    pub redact: Vec<String>,
    /// Redact what an agent's tools typically print (comma-separated or
    /// repeated): tokens (bearer tokens, GitHub, Slack, API keys, JWTs,
    /// NATS seeds), keys (AWS access keys, private key blocks, key=value
    /// secrets), url-passwords (the password in user:password@host), or
    /// all of them; with --redact's own patterns
    #[arg(long, value_enum, value_name = "PRESET", value_delimiter = ',')]
    pub redact_preset: Vec<RedactPreset>,
    /// Write to this file (mode 0600, whole or not at all; an existing file
    /// is refused) instead of stdout, where a terminal gets jsonl with the
    /// characters it would act on escaped
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

/// `export --redact-preset`: the secrets an agent's tools typically print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RedactPreset {
    /// Bearer tokens, GitHub and Slack tokens, sk- API keys, JWTs, NATS nkey seeds
    Tokens,
    /// AWS access key ids, PEM private key blocks, key=value and key: value secrets
    Keys,
    /// The password of a URL's user:password@
    UrlPasswords,
    /// Every preset above
    All,
}

impl RedactPreset {
    /// Its patterns (each matches at least one character, never the
    /// replacement `[redacted]`).
    pub fn patterns(self) -> Vec<&'static str> {
        const TOKENS: [&str; 6] = [
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
            r"\bgh[pousr]_[A-Za-z0-9]{20,}",
            r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
            r"\bsk-[A-Za-z0-9_-]{16,}",
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            r"\bS[UOACNPX][A-Z2-7]{50,}",
        ];
        const KEYS: [&str; 3] = [
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            r#"(?i)\b(?:api[_-]?key|secret|access[_-]?token|password|passwd|pwd)\b\s*[:=]\s*[^\s"',;]+"#,
        ];
        const URL: [&str; 1] = [r"://[^\s/:@]+:[^\s/@]+@"];
        match self {
            RedactPreset::Tokens => TOKENS.to_vec(),
            RedactPreset::Keys => KEYS.to_vec(),
            RedactPreset::UrlPasswords => URL.to_vec(),
            RedactPreset::All => TOKENS.iter().chain(&KEYS).chain(&URL).copied().collect(),
        }
    }
}

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Markdown for a ticket, thinking and tool calls folded in <details>
    Markdown,
    /// One self-contained HTML file
    Html,
    /// The journal's lines, to share a reproduction
    Jsonl,
}

impl ExportFormat {
    /// The word the flags take.
    pub fn word(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "markdown",
            ExportFormat::Html => "html",
            ExportFormat::Jsonl => "jsonl",
        }
    }
}

#[derive(Args, Debug)]
pub struct FoldArgs {
    #[command(flatten)]
    pub target: RunOrFile,
    /// Fold only the records up to this seq
    #[arg(long, value_name = "N")]
    pub until_seq: Option<u64>,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The run id (or --all, or --file)
    #[arg(required_unless_present_any = ["all", "file"], conflicts_with_all = ["all", "file"])]
    pub run: Option<String>,
    #[command(flatten)]
    pub file: FileArg,
    /// Add up every run the filters select, in parallel
    #[arg(long, conflicts_with = "file")]
    pub all: bool,
    /// With --all: group by these (comma-separated or repeated); tool lists each group's tools
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "KEY",
        requires = "all"
    )]
    pub by: Vec<GroupBy>,
    /// With --all: order the groups by this, largest first (default: by
    /// key; tokens with --top)
    #[arg(long, value_enum, requires = "all")]
    pub sort: Option<StatsSort>,
    /// With --all: only the first N groups after sorting (the total still
    /// counts every run)
    #[arg(long, value_name = "N", requires = "all")]
    pub top: Option<usize>,
    /// With --all: which runs (as ls)
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    /// With --all: only the N runs most recently active of those selected
    #[command(flatten)]
    pub limit: crate::filter::Limit,
    /// What the runs cost in money, from this price file (YAML: `models:` each with `input`, `output`, `cache_read`, `cache_create` per million tokens; `currency:` optional). A sum with a run whose model has no price is never printed as a total: the models are named and stats exits 1
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// The same as -o json (the agent's flag)
    #[arg(long)]
    pub json: bool,
}

/// What `stats --all --by` groups on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// The run's model
    Model,
    /// The agent that ran it
    Agent,
    /// Each tool (a table of tools per group)
    Tool,
    /// The day it was created (UTC)
    Day,
    /// Each run (its id)
    Run,
    /// The run's status, as ls shows it
    Status,
    /// meta.caller
    Caller,
}

/// What `stats --all --sort` orders the groups by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsSort {
    /// The group keys, in order
    Key,
    /// Total tokens (in + out + cache read + cache create)
    Tokens,
    /// How many runs
    Runs,
    /// How many model responses
    Responses,
    /// Wall clock
    Wall,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    /// Where --match looks: the prompt (as the agent), the text the model and user wrote, tool inputs and results, or all of it
    #[arg(long = "in", value_enum, value_name = "WHERE", default_value_t = SearchIn::Prompt, conflicts_with = "role")]
    pub within: SearchIn,
    /// Whose words --match looks in (comma-separated or repeated): the operator's prompt and turns, the model's text and thinking, tool input (and deferral notes), tool output (and answers)
    #[arg(
        long,
        value_enum,
        value_name = "ROLE",
        value_delimiter = ',',
        requires = "matches"
    )]
    pub role: Vec<SearchRole>,
    #[command(flatten)]
    pub limit: crate::filter::Limit,
    /// The same as -o json (the agent's flag)
    #[arg(long)]
    pub json: bool,
}

/// Whose words `search --role` looks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchRole {
    /// The operator: the run's prompt and every user turn
    Prompt,
    /// The model's text and thinking
    Model,
    /// Each tool call's input, and a deferred call's note
    ToolInput,
    /// Every tool result, answers given by hand included
    ToolOutput,
}

/// Where `search --match` looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchIn {
    /// The run's prompt
    Prompt,
    /// Text and thinking blocks of every turn
    Text,
    /// Tool inputs, tool results and deferral notes
    Tools,
    /// Everything above, and terminal messages
    All,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    #[command(flatten)]
    pub target: RunOrFile,
    /// Only calls to this tool (repeat for several)
    #[arg(long, value_name = "NAME")]
    pub tool: Vec<String>,
    /// Only calls made at this loop iteration
    #[arg(long, value_name = "N")]
    pub iteration: Option<i64>,
    /// Only calls whose answer is an error
    #[arg(long)]
    pub errors: bool,
    /// The calls without their answers
    #[arg(long, conflicts_with = "results_only")]
    pub calls_only: bool,
    /// Only calls that have an answer, without their input
    #[arg(long)]
    pub results_only: bool,
    /// Only calls whose input JSON matches this regular expression
    #[arg(long, value_name = "RE", value_parser = parse_regex)]
    pub input_match: Option<regex::Regex>,
    /// Only calls whose answer's content matches this regular expression
    #[arg(long, value_name = "RE", value_parser = parse_regex)]
    pub output_match: Option<regex::Regex>,
    /// The same as -o json (the agent's flag)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write the pages into (created when missing; nothing
    /// is written without one)
    pub dir: PathBuf,
}

/// The two flags every command that writes to a store takes, the same
/// everywhere (issue 35): a dry run makes every check the command makes
/// and writes nothing, anywhere; `--yes` answers the question a command
/// asks before it writes (a command that asks none takes it too).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct WriteArgs {
    /// Make every check the command makes and say what it would write; write nothing (the store and its backups stay byte for byte as they are)
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before writing (needed when standard input is not a terminal and the command asks)
    #[arg(long, short = 'y')]
    pub yes: bool,
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
