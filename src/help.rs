//! The help a person reads (issue 39, c-29, c-30): the commands grouped by
//! what an operator is doing (inspect, act on a run, housekeeping, stores),
//! as git and kubectl group theirs; EXAMPLES under each command's help and
//! in its man page; a synopsis with each option's value; and the
//! connection flags, shared by every command, left out of a command's
//! short help (`-h`; `--help` lists them).

use clap::Command;

/// The groups of the top-level help, in order, and the commands in each.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Inspect",
        &[
            "ls",
            "show",
            "inbox",
            "search",
            "stats",
            "query",
            "verify",
            "validate",
            "fold",
            "diff",
            "fingerprint",
            "info",
        ],
    ),
    (
        "Act on a run",
        &["answer", "approve", "resume", "run", "end", "fork"],
    ),
    (
        "Housekeeping",
        &["repair", "recover", "rm", "backups", "upgrade", "export"],
    ),
    ("Stores", &["migrate", "stream"]),
    ("This tool", &["completions", "man"]),
];

/// Each command's examples: what it is for (a `#` line), then the command,
/// each line short enough that clap never wraps it (a command stands alone
/// on its line, whole).
const EXAMPLES: &[(&str, &str)] = &[
    (
        "ls",
        "  # what failed last night, newest first
  fisk-admin ls --since yesterday --status error
  # the ten most expensive runs, into a program
  fisk-admin ls --sort tokens --limit 10 | cut -f1,11
  # watch the runs waiting on a person
  fisk-admin ls --waiting --watch",
    ),
    (
        "show",
        "  # where a run stands and what it waits on
  fisk-admin show r-425b0c1e
  # the whole conversation, opened on the first 529
  fisk-admin show r-425b0c1e --transcript --find '529|overloaded'
  # follow the run that started last
  fisk-admin show --newest --follow",
    ),
    (
        "inbox",
        "  # every call waiting on a person, oldest first
  fisk-admin inbox
  # those waiting more than an hour
  fisk-admin inbox --older-than 1h
  # gauges for node_exporter's textfile collector
  fisk-admin inbox -o openmetrics > /var/lib/node_exporter/fisk.prom",
    ),
    (
        "search",
        "  # runs whose tools printed a 529, most hits first
  fisk-admin search --match '529|overloaded' --role tool-output
  # what the model said about ORDERS last week
  fisk-admin search --since 7d --match ORDERS --role model --limit 5",
    ),
    (
        "stats",
        "  # what a run cost and where its time went
  fisk-admin stats r-425b0c1e
  # the night's cost per model, in money
  fisk-admin stats --all --since yesterday --by model --prices prices.yaml
  # the ten most expensive runs of the night
  fisk-admin stats --all --active-since 12h --by run --top 10",
    ),
    (
        "query",
        "  # the calls that failed
  fisk-admin query r-425b0c1e --errors
  # every exec and what it answered
  fisk-admin query r-425b0c1e --tool exec",
    ),
    (
        "verify",
        "  # errors and warnings only, with the command that fixes each run
  fisk-admin verify -q
  # one run, every finding with its line
  fisk-admin verify r-425b0c1e --details",
    ),
    (
        "validate",
        "  # every record against the schemas
  fisk-admin validate --all
  # a journal file copied off a host
  fisk-admin validate --file copy.json",
    ),
    (
        "fold",
        "  # the state a resume would start from
  fisk-admin fold r-425b0c1e
  # as of seq 12
  fisk-admin fold r-425b0c1e --until-seq 12",
    ),
    (
        "diff",
        "  # would this agent file resume the run?
  fisk-admin diff r-425b0c1e agent.yaml",
    ),
    (
        "fingerprint",
        "  # the fingerprint an agent file starts a run with
  fisk-admin fingerprint --agent agent.yaml > new.json",
    ),
    (
        "info",
        "  # which store, why, and whether its server answers
  fisk-admin info",
    ),
    (
        "answer",
        "  # answer a deferred call (it reads the answer from standard input)
  echo 'approved by security (SEC-7)' | fisk-admin answer r-425b0c1e toolu_ex_2
  # write it in the editor
  fisk-admin answer r-425b0c1e toolu_ex_2 --edit",
    ),
    (
        "approve",
        "  # approve one gated call
  fisk-admin approve r-425b0c1e toolu_ex_1
  # every call of these runs that waits on an approval
  fisk-admin approve r-425b0c1e r-7f1c2d9e --all-pending",
    ),
    (
        "resume",
        "  # go on from where the run stopped
  fisk-admin resume r-425b0c1e --agent agent.yaml",
    ),
    (
        "run",
        "  # start a run with the minimal runner
  fisk-admin run --agent agent.yaml 'check the ORDERS stream'",
    ),
    (
        "end",
        "  # what the crashed-run cleanup would end
  fisk-admin end --status open --older-than 1h --dry-run
  # end them, saying why
  fisk-admin end --status open --older-than 1h --message 'worker pool drained' --yes",
    ),
    (
        "fork",
        "  # retry from seq 400 as a new run
  fisk-admin fork long-audit --at-seq 400 --as long-audit-retry",
    ),
    (
        "repair",
        "  # what would be cut, then cut every torn tail, keeping the bytes
  fisk-admin repair --all --dry-run
  fisk-admin repair --all --yes",
    ),
    (
        "recover",
        "  # what recover would give back, then recover in place
  fisk-admin recover interior-corruption --dry-run
  fisk-admin recover interior-corruption --yes",
    ),
    (
        "rm",
        "  # the runs completed before December, listed only
  fisk-admin rm --status completed --until 2026-12-01 --dry-run
  # at most 50 of them, the longest inactive first
  fisk-admin rm --status completed --until 2026-12-01 --limit 50 --yes",
    ),
    (
        "backups",
        "  # the backups and the disk each holds
  fisk-admin backups
  # put a deleted run back (its newest rm backup)
  fisk-admin backups restore long-audit
  # free what rm kept a week ago or more
  fisk-admin backups prune --kind rm --older-than 7d --yes",
    ),
    (
        "upgrade",
        "  # what would be converted, then convert
  fisk-admin upgrade --all --dry-run
  fisk-admin upgrade --all --yes",
    ),
    (
        "export",
        "  # a ticket, secrets taken out
  fisk-admin export r-425b0c1e --format markdown --redact-preset all --out ticket.md
  # the journal, for a reproduction (checked to resume)
  fisk-admin export r-425b0c1e --format jsonl --out r-425b0c1e.json",
    ),
    (
        "migrate",
        "  # what would be copied, then copy to a stream
  fisk-admin --context prod migrate --from file:runs --to jetstream:FISK --all --dry-run
  fisk-admin --context prod migrate --from file:runs --to jetstream:FISK --all",
    ),
    (
        "stream",
        "  # check a stream against the session-store rules
  fisk-admin --context prod stream check FISK
  # create one that passes
  fisk-admin --context prod stream create FISK --subject 'fisk.sessions.>'",
    ),
    (
        "completions",
        "  # bash completion, run ids and call ids included
  source <(fisk-admin completions bash)",
    ),
    (
        "man",
        "  # the man pages, into the directory man
  fisk-admin man man",
    ),
];

/// The global flags a command's short help (`-h`) leaves out: how to
/// reach a NATS server and how output looks, set once for every command
/// (`--help` lists them).
const QUIET_GLOBALS: &[&str] = &[
    "root_dir",
    "context",
    "server",
    "creds",
    "user",
    "password",
    "password_file",
    "token",
    "token_file",
    "hold",
    "color",
    "no_color",
    "utc",
];

/// The command line as people read it: `cmd` with the groups, the
/// examples, the synopses and the short helps.
pub fn dress(cmd: Command) -> Command {
    let mut listing = String::new();
    for (group, names) in GROUPS {
        listing.push_str(&format!("{group}:\n"));
        for name in *names {
            let sub = cmd.find_subcommand(name);
            let about = sub
                .and_then(|c| c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            let aliases: Vec<&str> = sub
                .map(|c| c.get_visible_aliases().collect())
                .unwrap_or_default();
            let alias = match aliases.as_slice() {
                [] => String::new(),
                a => format!(" [alias: {}]", a.join(", ")),
            };
            listing.push_str(&format!("  {name:<12} {about}{alias}\n"));
        }
        listing.push('\n');
    }
    let mut cmd = cmd
        .help_template(format!(
            "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{listing}Options:\n{{options}}\n{{after-help}}"
        ))
        .after_help(
            "`fisk-admin --help` lists the connection flags too; `fisk-admin COMMAND --help` gives a command's options and examples; `man fisk-admin` the environment, exit status and files.",
        );
    for name in QUIET_GLOBALS {
        cmd = cmd.mut_arg(*name, |a| a.hide_short_help(true));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    for name in names {
        let examples = EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, e)| *e);
        cmd = cmd.mut_subcommand(&name, |sub| {
            let usage = synopsis(&sub);
            let mut after = String::new();
            if let Some(e) = examples {
                after.push_str("Examples:\n");
                after.push_str(e);
                after.push_str("\n\n");
            }
            if let Some(old) = sub.get_after_help() {
                after.push_str(&old.to_string());
                after.push_str("\n\n");
            }
            after.push_str(
                "The store and connection flags (--state-dir, --store, --server, --context, ...) go before or after the command: `fisk-admin --help` lists them.",
            );
            sub.override_usage(usage).after_help(after)
        });
    }
    cmd
}

/// A command's synopsis with each option's value named (`[--content
/// <CONTENT>]`, where clap's says `[OPTIONS]` and a man page's a bare
/// `[--content]`), its own options only: the global ones are
/// `fisk-admin`'s.
fn synopsis(cmd: &Command) -> String {
    let mut line = format!("fisk-admin {}", cmd.get_name());
    for a in cmd.get_arguments() {
        if a.is_hide_set() || a.is_global_set() || a.is_positional() {
            continue;
        }
        let id = a.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let flag = match (a.get_long(), a.get_short()) {
            (Some(l), _) => format!("--{l}"),
            (None, Some(s)) => format!("-{s}"),
            (None, None) => continue,
        };
        let value = match (a.get_action().takes_values(), a.get_value_names()) {
            (true, Some(v)) => format!(" <{}>", v.join(" ")),
            (true, None) => format!(" <{}>", id.to_uppercase()),
            (false, _) => String::new(),
        };
        match a.is_required_set() {
            true => line.push_str(&format!(" {flag}{value}")),
            false => line.push_str(&format!(" [{flag}{value}]")),
        }
    }
    for a in cmd.get_positionals() {
        if a.is_hide_set() {
            continue;
        }
        let name = a
            .get_value_names()
            .map(|v| v.join(" "))
            .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
        let many = a.get_num_args().is_some_and(|n| n.max_values() > 1);
        let dots = if many { "..." } else { "" };
        match a.is_required_set() {
            true => line.push_str(&format!(" <{name}>{dots}")),
            false => line.push_str(&format!(" [{name}]{dots}")),
        }
    }
    match (cmd.has_subcommands(), cmd.is_subcommand_required_set()) {
        (true, true) => line.push_str(" <COMMAND>"),
        (true, false) => line.push_str(" [COMMAND]"),
        (false, _) => {}
    }
    line
}
