//! The arguments of the commands that only read a store.

use super::*;

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
    /// Who acted on the run last by hand, when and why, as the audit log says (not shown unless asked for)
    Acted,
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
    /// Check the runs against a seal (`seal`): each unchanged, grew, truncated, edited, removed or new; exit 1 on anything but unchanged or grew
    #[arg(long, value_name = "SEAL")]
    pub against: Option<PathBuf>,
    /// With --against: the key the seal must be signed by (its .pub file, or the key itself)
    #[arg(long, value_name = "FILE", requires = "against")]
    pub key: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct LogArgs {
    /// Only the entries about these runs (default: every entry)
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::complete::run_ids))]
    pub runs: Vec<String>,
    /// Only entries written since WHEN (RFC 3339, a date, or a span ago: 24h, 7d)
    #[arg(long, value_name = "WHEN", value_parser = crate::filter::parse_when)]
    pub since: Option<journal::time::Time>,
    /// Only the writes of this operator
    #[arg(long, value_name = "NAME")]
    pub operator: Option<String>,
    /// Only the writes of this command (answer, end, rm, migrate ...)
    #[arg(long, value_name = "NAME")]
    pub command: Option<String>,
    /// One line a write
    #[arg(long)]
    pub oneline: bool,
}

#[derive(Args, Debug)]
pub struct SealArgs {
    /// Write the seal to FILE (default: seal-<UTC time>.json here); never over an existing file
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Sign the seal with this key (made by --new-key)
    #[arg(long, value_name = "FILE", conflicts_with = "new_key")]
    pub key: Option<PathBuf>,
    /// Make a new signing key at FILE (its public key at FILE.pub) and seal with it
    #[arg(long, value_name = "FILE")]
    pub new_key: Option<PathBuf>,
    #[command(flatten)]
    pub write: crate::cli::WriteArgs,
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
