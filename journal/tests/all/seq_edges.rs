//! Issue 18 item 1: seq arithmetic at the edges of the range. A writer that
//! means to add a record (an answer, a claim) never produces one its own
//! checks reject, and never takes a skipped duplicate for success: at the
//! largest seq there is, nothing is written and it says so.

// A test crate: a panic is a failed test.

use journal::record::{Generation, Payload, ToolResult};
use journal::schema::SchemaSet;
use journal::store::file::FileStore;
use journal::store::Store;
use journal::verify::check_line;

const META: &str = r#"{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","time":"2026-12-01T08:25:39Z","meta":{"version":1,"run_id":"r","created":"2026-12-01T08:25:39Z","fingerprint":{"provider":"script","model":"demo-1","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":0,"max_iterations":0},"prompt":"p"}}"#;

fn answer() -> Payload {
    Payload::ToolResult(ToolResult {
        tool_use_id: "t1".into(),
        ..ToolResult::default()
    })
}

#[test]
fn an_append_at_every_edge_of_the_seq_range_is_valid_or_refused_with_nothing_written() {
    let set = SchemaSet::embedded().unwrap();
    let edges: [u64; 8] = [
        1,
        2,
        (i64::MAX as u64) - 1,
        i64::MAX as u64,
        (i64::MAX as u64) + 1,
        u64::MAX - 2,
        u64::MAX - 1,
        u64::MAX,
    ];
    for last in edges {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = format!("{META}\n");
        if last > 1 {
            bytes.push_str(&format!(
                r#"{{"seq":{last},"protocol":"io.choria.fisk-ai.v1.session.terminal","time":"2026-12-01T08:25:40Z","terminal":{{"reason":"suspended"}}}}"#
            ));
            bytes.push('\n');
        }
        let path = dir.path().join("r.json");
        std::fs::write(&path, &bytes).unwrap();
        let store = Store::File(FileStore::new(dir.path()));
        let mut app = store.open_appender("r").unwrap();
        assert_eq!(app.last_seq(), last);
        match app.append_next(answer(), Generation::Current) {
            Ok(record) => {
                assert_eq!(record.seq, last + 1, "last {last}");
                drop(app);
                let after = std::fs::read(&path).unwrap();
                assert!(
                    after.starts_with(bytes.as_bytes()),
                    "last {last}: only appended"
                );
                let line = after[bytes.len()..].strip_suffix(b"\n").unwrap();
                let c = check_line(line, Some(&set)).unwrap_or_else(|e| {
                    panic!("last {last}: the record written does not parse: {e}")
                });
                assert!(
                    c.violations.is_empty(),
                    "last {last}: its own schema rejects what it wrote: {:?}",
                    c.violations
                );
                assert_eq!(c.record.seq, last + 1);
            }
            Err(e) => {
                assert_eq!(last, u64::MAX, "refused below the top: {e}");
                assert!(e.to_string().contains("nothing was written"), "{e}");
                drop(app);
                assert_eq!(std::fs::read(&path).unwrap(), bytes.as_bytes(), "untouched");
            }
        }
    }
}

/// A token total past the int64 maximum is a `counter-overflow` warning at
/// the record where it happens (the agent's int64 wraps negative there),
/// not a silent saturation; a total just at the maximum is none.
#[test]
fn a_token_total_past_the_int64_maximum_is_a_finding_at_its_record() {
    let assistant = |seq: u64, tokens: i64| {
        format!(
            r#"{{"seq":{seq},"protocol":"io.choria.fisk-ai.v1.session.assistant","time":"2026-12-01T08:25:40Z","assistant":{{"iteration":{},"message":{{"role":"assistant","content":[{{"text":{{"text":"t"}}}}]}},"stop_reason":"end_turn","in_tokens":{tokens},"out_tokens":1}}}}"#,
            seq - 2
        )
    };
    for (second, want) in [(0i64, false), (1, true)] {
        let journal = format!(
            "{META}\n{}\n{}\n",
            assistant(2, i64::MAX),
            assistant(3, second)
        );
        let report = journal::verify::verify_bytes("r", journal.as_bytes(), None);
        let found: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.code == journal::verify::Code::CounterOverflow)
            .collect();
        match want {
            true => {
                assert_eq!(found.len(), 1, "{:?}", report.findings);
                assert_eq!(found[0].line, Some(3));
                assert!(
                    found[0].message.contains("in_tokens"),
                    "{}",
                    found[0].message
                );
            }
            false => assert!(found.is_empty(), "{found:?}"),
        }
    }
}
