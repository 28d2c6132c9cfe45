//! `seal` of a stream that agents write while it reads (issue 40): it
//! seals the stream as it was when it started, up to the cut it records
//! and says, as `migrate` copies it.

use crate::live::Writer;
use crate::nats_support::NatsServer;
use crate::support::*;

const STREAM: &str = "SEALING";
const PREFIX: &str = "fisk.sealing";

/// `seal` while a writer appends to the stream's runs and creates new
/// ones (issue 40): each sealed run is exactly its messages stored at or
/// before the seal's cut, no run created after the cut is in it, and
/// `verify --against` names the runs that grew after the cut `grew` and
/// those created after it `new`, none edited or truncated.
#[test]
fn a_seal_of_a_stream_being_written_holds_it_as_it_was_when_seal_started() {
    const RUNS: usize = 200;
    const FIRST: usize = 3;
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, &format!("{PREFIX}.>"));
    let ids: Vec<String> = (0..RUNS).map(|i| format!("live-{i:04}")).collect();
    // The writer: the rest of every run, a new run every few records, and
    // new runs once the rest is written, until told to stop.
    let writer = Writer::start(&srv, PREFIX, &ids, FIRST);
    let home = tempfile::tempdir().expect("home");
    let on = |args: &[&str]| {
        let flags = [
            "--server",
            srv.url.as_str(),
            "--store",
            &format!("jetstream:{STREAM}"),
        ];
        fisk_in(home.path(), &[&flags[..], args].concat(), None)
    };
    // Seal once the writer is under way.
    writer.wait_written(50);
    let path = home.path().join("seal.json");
    let r = on(&["-o", "json", "seal", "--out", s(&path)]);
    writer.stop();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let done = r.json();
    crate::schema::assert_valid(&crate::schema::output_validator("seal.json"), &done, "seal");
    let cut = done["cut"]
        .as_u64()
        .unwrap_or_else(|| panic!("no cut: {}", r.stdout));
    let seal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("the seal")).expect("seal JSON");
    assert_eq!(seal["cut"].as_u64(), Some(cut), "{seal}");
    let sealed = seal["runs"].as_object().expect("runs");
    assert_eq!(done["runs"].as_u64(), Some(sealed.len() as u64));
    // What the stream held at the cut, run by run, from each message's
    // stream sequence.
    let store = srv.store(STREAM);
    let runs = store.runs().expect("runs");
    let (mut grew, mut after) = (0, 0);
    for run in &runs {
        // In stream order, which is seq order: the writer appends each
        // run's records in order.
        let messages = store.read_all_messages(run).expect("read");
        let before: Vec<&[u8]> = messages
            .iter()
            .filter(|m| m.stream_seq <= cut)
            .map(|m| m.body.as_slice())
            .collect();
        if before.is_empty() {
            assert!(
                !sealed.contains_key(run),
                "{run}, created after the cut {cut}, is in the seal"
            );
            after += 1;
            continue;
        }
        let want = journal::custody::seal::Sealed::of(&before);
        let got = sealed
            .get(run)
            .unwrap_or_else(|| panic!("{run}, stored before the cut {cut}, is not in the seal"));
        assert_eq!(
            (got["records"].as_u64(), got["head"].as_str()),
            (Some(want.records), Some(want.head.as_str())),
            "{run}: not sealed as the stream held it at {cut}"
        );
        grew += usize::from(messages.len() > before.len());
    }
    assert_eq!(sealed.len(), runs.len() - after);
    // The writer wrote while seal read: runs grew after the cut, and new
    // runs were made after it.
    assert!(grew > 0, "no sealed run grew after the cut {cut}");
    assert!(after > 0, "no run was created after the cut {cut}");
    // Against the stream now: grew and new, nothing edited or truncated;
    // new runs are not as sealed, so the exit is 1.
    let r = on(&["-o", "json", "verify", "--against", s(&path)]);
    let schema = crate::schema::output_validator("verify-against.json");
    let mut lines = r.json_lines();
    for l in &lines {
        crate::schema::assert_valid(&schema, l, "verify --against");
    }
    let head = lines.pop().expect("the closing object");
    assert_eq!(head["seal"]["root_ok"], true, "{head}");
    assert!(head["seal"]["log"].is_null(), "{head}");
    assert_eq!(head["seal"]["cut"].as_u64(), Some(cut), "{head}");
    let count = |w: &str| lines.iter().filter(|v| v["verdict"] == w).count();
    assert_eq!(count("grew"), grew, "{}", r.stdout);
    assert_eq!(count("new"), after, "{}", r.stdout);
    assert_eq!(count("unchanged"), sealed.len() - grew, "{}", r.stdout);
    assert_eq!(lines.len(), runs.len(), "{}", r.stdout);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    // Said in words, and in the audit log.
    let again = home.path().join("again.json");
    let r = on(&["seal", "--out", s(&again)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("the store as it was when seal started: up to stream sequence "),
        "{}",
        r.stdout
    );
    let r = on(&["verify", "--against", s(&path)]);
    assert!(
        r.stdout
            .lines()
            .next()
            .is_some_and(|l| l.contains(", up to stream sequence ")),
        "{}",
        r.stdout
    );
    let log = on(&["-o", "json", "log"]).json();
    let first = log["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .rfind(|w| w["kind"] == "seal")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(
        first["detail"],
        format!("up to stream sequence {cut}"),
        "{first}"
    );
}
