//! Lines the agent reads other than as written (issue 18 item 2), through
//! the binary: every command reads them as Go does, `verify` warns, and
//! what is copied is the bytes as written. The verdicts themselves are in
//! journal/tests/go_decode.rs.

use crate::support::*;
use serde_json::Value;

const RUN: &str = "g-all-counters";

/// A store holding the agent's `g-all-counters` with `edit` applied to
/// its bytes.
fn store_with(edit: impl FnOnce(Vec<u8>) -> Vec<u8>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata("agent-journals/v1").join(format!("{RUN}.json"));
    let bytes = edit(std::fs::read(src).unwrap());
    let path = dir.path().join(format!("{RUN}.json"));
    std::fs::write(&path, bytes).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

fn replace(bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{} not in the journal", String::from_utf8_lossy(from)));
    [&bytes[..at], to, &bytes[at + from.len()..]].concat()
}

fn findings(store: &tempfile::TempDir) -> (i32, Vec<Value>) {
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "verify",
        "--format",
        "json",
        RUN,
    ]);
    let lines = r.json_lines();
    (
        r.code,
        lines
            .into_iter()
            .filter(|l| l.get("summary").is_none())
            .collect(),
    )
}

/// `fold RUN --format json`, as text.
fn fold_text(store: &tempfile::TempDir) -> Run {
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "fold",
        RUN,
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "fold: {}", r.stderr);
    r
}

fn fold(store: &tempfile::TempDir) -> Value {
    fold_text(store).json()
}

#[test]
fn a_duplicate_key_is_read_last_wins_by_every_command_and_verify_warns_naming_it() {
    let plain = store_with(|b| b);
    let dup = store_with(|b| {
        replace(
            b,
            br#""in_tokens":100,"#,
            br#""in_tokens":"x","in_tokens":100,"#,
        )
    });
    let (code, found) = findings(&dup);
    assert_eq!(code, 0, "a warning only: {found:?}");
    let codes: Vec<&str> = found.iter().filter_map(|f| f["code"].as_str()).collect();
    assert_eq!(codes, ["duplicate-key"], "{found:?}");
    assert_eq!(found[0]["line"], 2);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("\"in_tokens\""),
        "{found:?}"
    );
    assert_eq!(fold(&dup), fold(&plain), "the last value is the one read");
    for cmd in [
        &["show", RUN][..],
        &["stats", RUN],
        &["query", RUN],
        &["ls"],
    ] {
        let args: Vec<&str> = ["--state-dir", s(dup.path())]
            .into_iter()
            .chain(cmd.iter().copied())
            .collect();
        let r = fisk(&args);
        assert_eq!(r.code, 0, "{cmd:?}: {}{}", r.stdout, r.stderr);
        assert!(
            !r.stdout.contains("does not parse"),
            "{cmd:?}: {}",
            r.stdout
        );
    }
    let v = fisk(&["--state-dir", s(dup.path()), "validate", RUN]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}

#[test]
fn invalid_utf8_is_read_as_replacement_and_copied_as_written() {
    let bad = store_with(|b| {
        replace(
            b,
            b"\"prompt\":\"every counter\"",
            b"\"prompt\":\"every\xe2\x80 counter\"",
        )
    });
    let (code, found) = findings(&bad);
    assert_eq!(code, 0, "{found:?}");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "invalid-utf8");
    assert_eq!(found[0]["line"], 1);
    assert!(
        found[0]["message"].as_str().unwrap().contains("2 bytes"),
        "{found:?}"
    );
    // Go steps one byte at a time: two U+FFFD for the cut sequence.
    assert_eq!(fold(&bad)["prompt"], "every\u{fffd}\u{fffd} counter");
    let dest = tempfile::tempdir().unwrap();
    let to = dest.path().join("copy");
    let r = fisk(&[
        "migrate",
        "--from",
        &format!("file:{}", s(bad.path())),
        "--to",
        &format!("file:{}", s(&to)),
        RUN,
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read(to.join(format!("{RUN}.json"))).unwrap(),
        std::fs::read(bad.path().join(format!("{RUN}.json"))).unwrap(),
        "the copy holds the bytes as written"
    );
}

#[test]
fn nesting_go_accepts_passes_verify_and_validate_and_deeper_does_not_parse() {
    let deep = |n: usize| {
        let input = format!("{}1{}", "[".repeat(n), "]".repeat(n));
        store_with(move |b| {
            replace(
                b,
                br#""name":"a","input":{}"#,
                format!(r#""name":"a","input":{input}"#).as_bytes(),
            )
        })
    };
    // The tool input sits at level 7 of its record.
    for n in [200, 10_000 - 6] {
        let store = deep(n);
        let (code, found) = findings(&store);
        assert_eq!(code, 0, "{n} levels: {found:?}");
        assert!(found.is_empty(), "{n} levels: {found:?}");
        let v = fisk(&["--state-dir", s(store.path()), "validate", RUN]);
        assert_eq!(v.code, 0, "{n} levels: {}{}", v.stdout, v.stderr);
        // (Too deep for the test's own JSON parser: read as text.)
        let f = fold_text(&store);
        assert!(f.stdout.contains(&format!("\"run_id\": \"{RUN}\"")));
    }
    let store = deep(10_000 - 5);
    let (code, found) = findings(&store);
    assert_eq!(code, 1, "{found:?}");
    assert_eq!(found[0]["code"], "interior-corruption", "{found:?}");
    assert_eq!(found[0]["line"], 2);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("exceeded max depth"),
        "{found:?}"
    );
    let show = fisk(&["--state-dir", s(store.path()), "fold", RUN]);
    assert_ne!(show.code, 0, "a reader refuses it too");
}

#[test]
fn validate_refuses_an_integer_written_as_a_float_as_the_readers_do() {
    let store = store_with(|b| replace(b, br#"{"seq":2,"#, br#"{"seq":2.0,"#));
    let v = fisk(&[
        "--state-dir",
        s(store.path()),
        "validate",
        RUN,
        "--format",
        "json",
    ]);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    let rows = v.json_lines();
    assert!(
        rows.iter().any(|r| r["line"] == 2
            && r["message"]
                .as_str()
                .is_some_and(|m| m.contains("the agent cannot read this record"))),
        "{}",
        v.stdout
    );
    let (code, found) = findings(&store);
    assert_eq!(code, 1);
    assert_eq!(found[0]["code"], "interior-corruption", "{found:?}");
}
