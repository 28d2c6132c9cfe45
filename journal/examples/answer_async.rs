//! An async front end: a host that owns a tokio runtime (a web service, a
//! chat bot) lists the calls of a JetStream store that wait on a person's
//! answer, and answers one, with the library's async operations
//! (`journal::ops::asynch`) on the async store. No blocking call is made
//! inside the runtime: the checks are the pure functions the blocking
//! `answer` uses, the commit is the async store's.
//!
//! ```text
//! cargo run -p fisk-journal --example answer_async -- nats://127.0.0.1:4222 SESSIONS
//! cargo run -p fisk-journal --example answer_async -- nats://127.0.0.1:4222 SESSIONS RUN CALL_ID 'answer text'
//! ```
//!
//! Errors are printed plainly; the exit code is 1. CI runs it against a
//! real nats-server (journal/tests/all/examples.rs).

use journal::ops::{answer, asynch};
use journal::state::State;
use journal::store::jetstream::{AsyncJetStreamStore, DEFAULT_HOLD};
use journal::{fold_with, FoldOptions};
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The host's own runtime; the library starts none.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("answer_async: no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("answer_async: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &[String]) -> Result<(), Box<dyn Error>> {
    let usage =
        || journal::Error::Usage("usage: answer_async SERVER STREAM [RUN CALL_ID ANSWER]".into());
    let (server, stream) = match args {
        [server, stream, ..] => (server, stream),
        _ => return Err(usage().into()),
    };
    let settings = journal::nats::Settings {
        servers: vec![server.clone()],
        ..Default::default()
    };
    let store = AsyncJetStreamStore::connect(&settings, stream)
        .await?
        .with_hold(DEFAULT_HOLD);
    match args.get(2..).unwrap_or_default() {
        [] => list(&store).await,
        [run, call, text] => {
            let request = answer::Request {
                run,
                call: Some(call),
                is_error: false,
            };
            // Every check first (SPEC 6: the call waits on an answer, the
            // run is not live); then one record, refused if the run
            // changed in between.
            let checked = asynch::check_answer(&store, &request).await?;
            let written = asynch::commit_answer(&store, &checked, text.clone()).await?;
            println!(
                "answered {} in run {} (seq {})",
                journal::shell::text(call),
                journal::shell::text(run),
                written.seq
            );
            Ok(())
        }
        _ => Err(usage().into()),
    }
}

/// One line a call that waits on an answer: `RUN CALL_ID TOOL`.
async fn list(store: &AsyncJetStreamStore) -> Result<(), Box<dyn Error>> {
    for run in store.runs().await? {
        if asynch::state(store, &run).await? != State::WaitingAnswer {
            continue;
        }
        let journal = store.read(&run).await?;
        let st = fold_with(journal.records(), FoldOptions::inspect())?;
        for d in st.pending.iter().flat_map(|p| &p.open_deferrals) {
            // Journal text is untrusted: shown with its control
            // characters as visible escapes.
            let shown = journal::shell::text;
            println!(
                "{} {} {}",
                shown(&run),
                shown(&d.tool_use_id),
                shown(&d.tool_name)
            );
        }
    }
    Ok(())
}
