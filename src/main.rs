//! fisk-admin: parse, resolve the invocation, dispatch, turn errors into
//! exit codes. Nothing else.
//!
//! The modules depend on each other in this order, each only on those
//! above it (no circles; a command never imports another, but for
//! `approve`'s use of `answer`, which is moving into the library):
//! - `output`: the terminal's rules: styles, tables, neutralised text
//! - `invocation`: the resolved global flags, output style and environment
//! - `hint`: the next command to run, repeating the invocation's flags
//! - `error`: failures, their help, exit codes
//! - `ask`: the editor prompt of `answer` and `resume`; the yes-or-no question of `end`
//! - `signal`: Ctrl-C as a stop flag for `run` and `resume`
//! - `runs`: one run folded as `show` and `fold` fold it
//! - `filter`: the run filters of `ls`, `search` and `stats --all`
//! - `cost`: what runs cost, from the operator's price file (`stats --prices`)
//! - `metrics`: the gauges `ls` and `inbox` print for a metrics scraper
//! - `watch`: a listing again and again (`ls --watch`, `inbox --watch`)
//! - `open`: which store, and opening it (`open::location` chooses)
//! - `complete`: run-id completion, choosing the store through `open`
//! - `transcript`: a run's blocks indexed and shown, for `show --transcript`
//! - `view`: the full-screen viewer of those blocks
//! - `render`: text renderers more than one command uses
//! - `help`: the grouped command list, examples and synopses people read
//! - `cli`: the clap surface (run-id completion and run filters hang off it)
//! - `cmd`: one module per subcommand
//! - `main`: builds the [`invocation::Invocation`] from [`cli::Cli`] and dispatches
#![forbid(unsafe_code)]

mod ask;
mod audit;
mod batch;
mod cli;
mod cmd;
mod complete;
mod cost;
mod error;
mod filter;
mod help;
mod hint;
mod invocation;
mod metrics;
mod near;
mod open;
mod output;
mod render;
mod runs;
mod signal;
mod transcript;
mod view;
mod watch;

use std::io::Write;

// Decoding a journal allocates a string per field; mimalloc makes that
// measurably cheaper than the system allocator (bench/RESULTS.md). Built
// with its `no_thp` feature (Cargo.toml): asked for transparent huge
// pages, it made RSS grow in 2 MiB steps, about twice what is used.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::process::ExitCode;

fn main() -> ExitCode {
    // `COMPLETE=bash fisk-admin` (and each shell's own): the dynamic
    // completion's protocol, run ids included (src/complete.rs).
    clap_complete::CompleteEnv::with_factory(cli::command).complete();
    let parsed = cli::command()
        .try_get_matches()
        .and_then(|m| <cli::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => match cli.settle() {
            Ok(cli) => cli,
            Err(e) => return usage_error(e),
        },
        Err(e) => return usage_error(e),
    };
    // The global flags, the output style and the variables that stand in
    // for flags, resolved once: every command, hint and error below takes
    // this, not clap's structs.
    let g = &cli.global.resolve();
    // The worker threads start here, where failing to start them (a tight
    // `ulimit -v` or thread limit) is an error; left to the first parallel
    // loop, rayon panics instead. A failed start cannot be retried.
    if let Err(e) = rayon::ThreadPoolBuilder::new().build_global() {
        let why = error::Failure::new(format!("cannot start worker threads: {e}"))
            .help("raise the limits on this process's memory or threads (ulimit -v, ulimit -u)");
        return error::finish(Err(why), g);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        cli::Command::Ls(a) => cmd::ls::run(g, a, &mut out),
        cli::Command::Show(a) => cmd::show::run(g, a, &mut out),
        cli::Command::Verify(a) => cmd::verify::run(g, a, &mut out),
        cli::Command::Log(a) => cmd::log::run(g, a, &mut out),
        cli::Command::Seal(a) => cmd::seal::run(g, a, &mut out),
        cli::Command::Validate(a) => cmd::validate::run(g, a, &mut out),
        cli::Command::Fold(a) => cmd::fold::run(g, a, &mut out),
        cli::Command::Stats(a) => cmd::stats::run(g, a, &mut out),
        cli::Command::Query(a) => cmd::query::run(g, a, &mut out),
        cli::Command::Search(a) => cmd::search::run(g, a, &mut out),
        cli::Command::Answer(a) => cmd::answer::run(g, a, &mut out),
        cli::Command::Approve(a) => cmd::approve::run(g, a, &mut out),
        cli::Command::Inbox(a) => cmd::inbox::run(g, a, &mut out),
        cli::Command::Repair(a) => cmd::repair::run(g, a, &mut out),
        cli::Command::Rm(a) => cmd::rm::run(g, a, &mut out),
        cli::Command::Upgrade(a) => cmd::upgrade::run(g, a, &mut out),
        cli::Command::End(a) => cmd::end::run(g, a, &mut out),
        cli::Command::Fork(a) => cmd::fork::run(g, a, &mut out),
        cli::Command::Recover(a) => cmd::recover::run(g, a, &mut out),
        cli::Command::Backups(a) => cmd::backups::run(g, a, &mut out),
        cli::Command::Export(a) => cmd::export::run(g, a, &mut out),
        cli::Command::Fingerprint(a) => cmd::fingerprint::run(a, &mut out),
        cli::Command::Diff(a) => cmd::diff::run(g, a, &mut out),
        cli::Command::Run(a) => cmd::run::run(g, a, &mut out),
        cli::Command::Resume(a) => cmd::resume::run(g, a, &mut out),
        cli::Command::Info => cmd::info::run(g, &mut out),
        cli::Command::Migrate(a) => cmd::migrate::run(g, a, &mut out),
        cli::Command::Stream(a) => cmd::stream::run(g, a, &mut out),
        cli::Command::Completions(a) => cmd::completions::run(a, &mut out),
        cli::Command::Man(a) => cmd::man::run(a, &mut out),
    };
    error::finish(result, g)
}

/// A command line clap refuses. Help and the version go out as clap prints
/// them (our own text); an error quotes what was typed, which may hold
/// escape sequences (`--status $'\e]2;...'`), so it is printed plain with
/// every control character neutralised, never styled raw.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    let text = e.render().to_string();
    let _ = write!(std::io::stderr(), "{}", output::sanitize(&text, true));
    ExitCode::from(2)
}
