//! A second front end in a few dozen lines, on the crate's public API
//! only: the runs of a store that wait on a person (an open deferral, or a
//! call that needs approval), and an answer to one deferred call.
//!
//! ```text
//! cargo run -p fisk-journal --example inbox -- file:DIR
//! cargo run -p fisk-journal --example inbox -- jetstream:STREAM RUN CALL_ID 'answer text'
//! ```
//!
//! A JetStream store is reached with the nats CLI's selected context (or
//! nats://127.0.0.1:4222). Errors are printed plainly; the exit code is 1.
//! `cargo test -p fisk-journal --example inbox` runs it on a copy of the
//! testdata (its `[[example]]` entry has `test = true`).

use journal::ops::answer;
use journal::store::{Address, Store};
use std::error::Error;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// SPEC 8's hold, the agent's default: a JetStream run written to in the
/// last ten minutes and not at rest is taken as live, and not answered.
const HOLD: Duration = journal::store::jetstream::DEFAULT_HOLD;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("inbox: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String], out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    let usage = || journal::Error::Usage("usage: inbox STORE [RUN CALL_ID ANSWER]".into());
    let address = Address::parse(args.first().ok_or_else(usage)?)?;
    let settings = match address {
        Address::JetStream { .. } => journal::nats::resolve(&Default::default(), None)?,
        // A file store (or another backend) needs no NATS settings.
        _ => Default::default(),
    };
    let store = address.open(&settings, HOLD)?;
    match args.get(1..) {
        Some([]) => list(&store, out),
        Some([run, call, text]) => {
            let request = answer::Request {
                run,
                call: Some(call),
                is_error: false,
            };
            let written = answer::prepare(&store, &request)?.commit(text.clone())?;
            writeln!(out, "answered {call} in run {run} (seq {})", written.seq)?;
            Ok(())
        }
        _ => Err(usage().into()),
    }
}

/// One line per run that waits on a person: what it waits for.
fn list(store: &Store, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    for s in store.summaries()?.iter().filter(|s| s.waits_on_person()) {
        let approvals: Vec<&str> = s.needs_approval.iter().map(|g| g.tool.as_str()).collect();
        writeln!(
            out,
            "{}\topen deferrals: {}\tneeds approval: {}",
            s.run_id,
            s.open_deferrals,
            approvals.join(",")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::run;
    use std::path::Path;

    fn inbox(args: &[String]) -> Result<String, String> {
        let mut out = Vec::new();
        run(args, &mut out).map_err(|e| e.to_string())?;
        Ok(String::from_utf8(out).unwrap())
    }

    /// On a copy of testdata/agent-journals/v1: the waiting run is listed,
    /// and answering it appends exactly one `tool_result`, after which it
    /// waits no more and a second answer is refused.
    #[test]
    fn lists_the_waiting_runs_and_answers_one() {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/agent-journals/v1");
        let dir = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(&from).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
        }
        let store = format!("file:{}", dir.path().display());
        let listed = inbox(std::slice::from_ref(&store)).unwrap();
        assert!(
            listed.contains("g-deferral-waiting\topen deferrals: 1\t"),
            "{listed}"
        );

        let file = dir.path().join("g-deferral-waiting.json");
        let before = std::fs::read_to_string(&file).unwrap();
        let args = [&store, "g-deferral-waiting", "tu_d", "yes, go"].map(String::from);
        let said = inbox(&args).unwrap();
        assert!(
            said.starts_with("answered tu_d in run g-deferral-waiting"),
            "{said}"
        );
        let after = std::fs::read_to_string(&file).unwrap();
        let added = after.strip_prefix(&before).unwrap();
        assert_eq!(added.lines().count(), 1, "{added}");
        let record: serde_json::Value = serde_json::from_str(added).unwrap();
        assert_eq!(
            record["protocol"],
            "io.choria.fisk-ai.v1.session.tool_result"
        );
        assert_eq!(record["tool_result"]["result"]["content"], "yes, go");

        let listed = inbox(std::slice::from_ref(&store)).unwrap();
        assert!(!listed.contains("g-deferral-waiting"), "{listed}");
        let again = inbox(&args).unwrap_err();
        assert!(again.contains("already answered"), "{again}");
        assert!(inbox(&["s3:x".to_owned()]).is_err());
        assert!(inbox(&[]).unwrap_err().starts_with("usage:"));
    }
}
