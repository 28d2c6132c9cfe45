//! The differential test of decoding against Go's `encoding/json` (issue
//! 18 item 2): every line of the agent's own journals, and mutants of them,
//! each with the verdict Go gives it written down from Go's documented
//! behaviour (encoding/json's Unmarshal: "invalid UTF-8 or invalid UTF-16
//! surrogate pairs are not treated as an error ... replaced by U+FFFD";
//! duplicate keys: the last one wins; scanner.go `maxNestingDepth =
//! 10000`; a number into an integer field must be an integer literal,
//! strconv.ParseInt/ParseUint of its text). The readers, `verify` and
//! `validate` all decode through `verify::check_line` / `Record::decode`,
//! so one verdict covers them.

use crate::gojson::scan::{scan, Note, MAX_DEPTH, SCHEMA_DEPTH};
use crate::record::{Block, Payload, Record};
use crate::schema::SchemaSet;
use crate::verify::{check_line, check_line_scanned};
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// The reader's record and verify's are the same: equal, or equal as JSON
/// values (verify's record re-serialises raw fields with keys sorted,
/// `Record::from_value`; a raw value, such as a tool input, keeps a key
/// given twice as written when nothing else on the line needs settling, as
/// Go's `json.RawMessage` does, and holds the last one when the line was
/// scanned: read as JSON, both are the last value).
fn agree(a: &Record, b: &Record) -> bool {
    let value = |r: &Record| {
        r.encode()
            .and_then(|e| serde_json::from_slice::<serde_json::Value>(&e).ok())
    };
    a == b || value(a).is_some_and(|v| Some(v) == value(b))
}

fn agent_lines() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for gen in ["v1", "v3"] {
        let dir = testdata().join("agent-journals").join(gen);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            for (i, l) in bytes.split(|b| *b == b'\n').enumerate() {
                if !l.is_empty() {
                    out.push((format!("{}:{}", f.display(), i + 1), l.to_vec()));
                }
            }
        }
    }
    assert!(out.len() > 200, "the agent's journals are the reference");
    out
}

#[test]
fn every_line_the_agent_wrote_reads_unchanged_with_nothing_to_note() {
    let set = SchemaSet::embedded().unwrap();
    for (at, line) in agent_lines() {
        let s = scan(&line).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(
            matches!(s.bytes, std::borrow::Cow::Borrowed(_)),
            "{at}: rewritten"
        );
        assert!(s.notes.is_empty(), "{at}: {:?}", s.notes);
        let c = check_line(&line, Some(&set)).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(agree(&Record::decode(&line).unwrap(), &c.record), "{at}");
        same_as_scanned(&at, &line, &set);
    }
}

/// The schema check's fast path (one pass, refused at a repeated key) says
/// of `line` exactly what scanning it whole says: the same refusal, or the
/// same record, warnings and violations.
fn same_as_scanned(name: &str, line: &[u8], set: &SchemaSet) {
    let fast = check_line(line, Some(set));
    let slow = check_line_scanned(line, set);
    match (&fast, &slow) {
        (Ok(a), Ok(b)) => {
            assert!(agree(&a.record, &b.record), "{name}: the records differ");
            assert_eq!(format!("{:?}", a.notes), format!("{:?}", b.notes), "{name}");
            assert_eq!(
                format!("{:?}", a.violations),
                format!("{:?}", b.violations),
                "{name}"
            );
        }
        (Err(_), Err(_)) => {}
        _ => panic!("{name}: the fast path says {fast:?}, the scan {slow:?}"),
    }
}

/// serde_json's raw-value token key is an ordinary key for Go: both paths
/// read it as one, on a line that takes the fast path and on one that a
/// repeated key sends to the scan.
#[test]
fn a_key_serde_json_reserves_is_an_ordinary_key_on_both_paths() {
    let set = SchemaSet::embedded().unwrap();
    let top = r#"{"$serde_json::private::RawValue":"{\"seq\":3}"}"#;
    let base = String::from_utf8(assistant("{}", "hi")).unwrap();
    let nested = base.replacen(
        r#""in_tokens":100"#,
        r#""x":{"$serde_json::private::RawValue":"nope"},"in_tokens":100"#,
        1,
    );
    let repeated = nested.replacen(r#""in_tokens":100"#, r#""in_tokens":1,"in_tokens":100"#, 1);
    for (name, line) in [
        ("top", top.to_owned()),
        ("nested", nested),
        ("repeated", repeated),
    ] {
        same_as_scanned(name, line.as_bytes(), &set);
        let slow = check_line_scanned(line.as_bytes(), &set);
        if let Ok(c) = &slow {
            assert_ne!(c.record.seq, 3, "{name}: the token was read as raw JSON");
            assert!(
                c.violations
                    .iter()
                    .all(|v| !v.message.contains("could not be checked")),
                "{name}: {:?}",
                c.violations
            );
        }
    }
}

/// Every line of the fuzz corpora (each file of record_decode, each line
/// of verify_bytes' and lines_decode's) through both paths.
#[test]
fn the_schema_checks_fast_path_says_what_the_whole_scan_says() {
    let set = SchemaSet::embedded().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut n = 0;
    for target in ["record_decode", "verify_bytes", "lines_decode"] {
        for e in std::fs::read_dir(root.join(target)).unwrap() {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            let name = p.display().to_string();
            same_as_scanned(&name, &bytes, &set);
            for line in bytes.split(|b| *b == b'\n') {
                same_as_scanned(&name, line, &set);
                n += 1;
            }
        }
    }
    assert!(n > 500, "only {n} lines: the corpus is missing");
}

/// An assistant record of the agent's shape with one text and one tool_use
/// block; `input` is the tool input's JSON text.
fn assistant(input: &str, text: &str) -> Vec<u8> {
    format!(
        concat!(
            r#"{{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","time":"2026-12-01T08:25:39Z","#,
            r#""assistant":{{"iteration":0,"message":{{"role":"assistant","content":[{{"text":{{"text":"{}"}}}},"#,
            r#"{{"tool_use":{{"id":"tu_1","name":"exec","input":{}}}}}]}},"stop_reason":"tool_use","in_tokens":100,"out_tokens":20}}}}"#
        ),
        text, input
    )
    .into_bytes()
}

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

fn text_of(r: &Record) -> &str {
    match &r.payload {
        Some(Payload::Assistant(a)) => match a.message.content.as_deref().and_then(<[_]>::first) {
            Some(Block::Text(t)) => &t.text,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

enum Go {
    /// Unmarshal succeeds; the check holds what it read.
    Reads(fn(&Record), &'static [&'static str]),
    /// Unmarshal fails.
    Refuses,
}

#[test]
fn mutants_get_the_verdict_go_gives_them() {
    let set = SchemaSet::embedded().unwrap();
    // The depth of the tool input's own first level in `assistant`: record
    // 1, assistant 2, message 3, content 4, block 5, tool_use 6, input 7.
    let input_at = 7;
    let base = String::from_utf8(assistant("{}", "hi")).unwrap();
    let mut cases: Vec<(&str, Vec<u8>, Go)> = vec![
        (
            "seq given twice: the last wins",
            base.replacen(r#"{"seq":2,"#, r#"{"seq":9,"seq":2,"#, 1)
                .into_bytes(),
            Go::Reads(|r| assert_eq!(r.seq, 2), &["duplicate-key"]),
        ),
        (
            "a payload field given twice",
            base.replacen(r#""in_tokens":100"#, r#""in_tokens":"x","in_tokens":7"#, 1)
                .into_bytes(),
            Go::Reads(
                |r| match &r.payload {
                    Some(Payload::Assistant(a)) => assert_eq!(a.in_tokens, 7),
                    p => panic!("{p:?}"),
                },
                &["duplicate-key"],
            ),
        ),
        (
            "the payload given twice: the last copy is read",
            base.replacen(
                r#","assistant":{"#,
                r#","assistant":{"iteration":5},"assistant":{"#,
                1,
            )
            .into_bytes(),
            Go::Reads(
                |r| match &r.payload {
                    Some(Payload::Assistant(a)) => {
                        assert_eq!((a.iteration, a.in_tokens), (0, 100));
                        assert!(r.extra_keys.is_empty(), "{:?}", r.extra_keys);
                    }
                    p => panic!("{p:?}"),
                },
                &["duplicate-key"],
            ),
        ),
        (
            "a block's key given twice",
            base.replacen(
                r#"{"text":{"text":"hi"}}"#,
                r#"{"text":{"text":"no"},"text":{"text":"hi"}}"#,
                1,
            )
            .into_bytes(),
            Go::Reads(|r| assert_eq!(text_of(r), "hi"), &["duplicate-key"]),
        ),
        (
            "an unknown payload field given twice",
            base.replacen(r#""iteration":0"#, r#""x":1,"iteration":0,"x":[2]"#, 1)
                .into_bytes(),
            Go::Reads(|_| {}, &["duplicate-key"]),
        ),
        (
            "a duplicate key inside a tool input",
            assistant(r#"{"a":1,"a":2}"#, "hi"),
            Go::Reads(|_| {}, &["duplicate-key"]),
        ),
        (
            "a lone high surrogate",
            assistant("{}", r"x\ud800y"),
            Go::Reads(|r| assert_eq!(text_of(r), "x\u{fffd}y"), &["invalid-utf8"]),
        ),
        (
            "a lone low surrogate, and a pair",
            assistant("{}", r"\udc00\ud83d\ude00"),
            Go::Reads(|r| assert_eq!(text_of(r), "\u{fffd}😀"), &["invalid-utf8"]),
        ),
        (
            "a tool input 200 levels deep (the schema check must not fail)",
            assistant(&nested(200), "hi"),
            Go::Reads(|_| {}, &[]),
        ),
        (
            "nesting exactly at Go's limit",
            assistant(&nested(MAX_DEPTH - input_at + 1), "hi"),
            Go::Reads(|_| {}, &[]),
        ),
        (
            "one level past Go's limit",
            assistant(&nested(MAX_DEPTH - input_at + 2), "hi"),
            Go::Refuses,
        ),
        (
            "a million levels",
            assistant(&nested(1_000_000), "hi"),
            Go::Refuses,
        ),
        (
            "seq 1.0 (ParseUint of \"1.0\" fails)",
            base.replacen(r#""seq":2"#, r#""seq":2.0"#, 1).into_bytes(),
            Go::Refuses,
        ),
        (
            "seq 2e0",
            base.replacen(r#""seq":2"#, r#""seq":2e0"#, 1).into_bytes(),
            Go::Refuses,
        ),
        (
            "seq -2",
            base.replacen(r#""seq":2"#, r#""seq":-2"#, 1).into_bytes(),
            Go::Refuses,
        ),
        (
            "seq -0 (ParseUint of \"-0\" fails)",
            base.replacen(r#""seq":2"#, r#""seq":-0"#, 1).into_bytes(),
            Go::Refuses,
        ),
        (
            "seq 2^64",
            base.replacen(r#""seq":2"#, r#""seq":18446744073709551616"#, 1)
                .into_bytes(),
            Go::Refuses,
        ),
        (
            "in_tokens 1.5",
            base.replacen(r#""in_tokens":100"#, r#""in_tokens":1.5"#, 1)
                .into_bytes(),
            Go::Refuses,
        ),
        (
            "in_tokens 2^63",
            base.replacen(
                r#""in_tokens":100"#,
                r#""in_tokens":9223372036854775808"#,
                1,
            )
            .into_bytes(),
            Go::Refuses,
        ),
        (
            "a trailing comma",
            base.replacen(r#""out_tokens":20"#, r#""out_tokens":20,"#, 1)
                .into_bytes(),
            Go::Refuses,
        ),
        (
            "a leading zero",
            base.replacen(r#""in_tokens":100"#, r#""in_tokens":0100"#, 1)
                .into_bytes(),
            Go::Refuses,
        ),
        (
            "a raw tab inside a string",
            assistant("{}", "a\tb"),
            Go::Refuses,
        ),
        (
            "NaN in a tool input",
            assistant(r#"{"x":NaN}"#, "hi"),
            Go::Refuses,
        ),
        (
            "a byte order mark before the record",
            [&b"\xef\xbb\xbf"[..], base.as_bytes()].concat(),
            Go::Refuses,
        ),
        (
            "whitespace around the record",
            format!(" \t{base}\r").into_bytes(),
            Go::Reads(|r| assert_eq!(r.seq, 2), &[]),
        ),
        (
            "a second value after the record",
            format!("{base} {{}}").into_bytes(),
            Go::Refuses,
        ),
    ];
    // Invalid UTF-8 inside a string: one U+FFFD per byte as DecodeRune steps.
    let mut bad = assistant("{}", "x@@y");
    let at = bad.windows(2).position(|w| w == b"@@").unwrap();
    bad.splice(at..at + 2, [0xE2, 0x80]);
    cases.push((
        "invalid UTF-8 in a string",
        bad,
        Go::Reads(
            |r| assert_eq!(text_of(r), "x\u{fffd}\u{fffd}y"),
            &["invalid-utf8"],
        ),
    ));
    // Outside a string an invalid byte is a syntax error.
    let mut outside = base.clone().into_bytes();
    let at = outside.windows(4).position(|w| w == b":100").unwrap();
    outside.insert(at + 1, 0xFF);
    cases.push(("an invalid byte outside a string", outside, Go::Refuses));

    for (name, line, go) in cases {
        same_as_scanned(name, &line, &set);
        let checked = check_line(&line, Some(&set));
        let decoded = Record::decode(&line);
        // The readers' fast path gives what the scanner's path gives.
        let slow = scan(&line).map(|s| Record::decode_scanned(&s.bytes));
        match (&decoded, &slow) {
            (Ok(a), Ok(Ok(b))) => assert!(agree(a, b), "{name}: the fast path differs"),
            (Err(_), Err(_) | Ok(Err(_))) => {}
            _ => panic!("{name}: the fast path says {decoded:?}, the scanner {slow:?}"),
        }
        match go {
            Go::Reads(holds, notes) => {
                let c = checked.unwrap_or_else(|e| panic!("{name}: refused: {e}"));
                let r = decoded.unwrap_or_else(|e| panic!("{name}: the reader refused: {e}"));
                assert!(
                    agree(&r, &c.record),
                    "{name}: verify and the readers disagree"
                );
                holds(&r);
                assert!(
                    c.violations.is_empty(),
                    "{name}: schema: {:?}",
                    c.violations
                );
                let codes: Vec<&str> = c
                    .notes
                    .iter()
                    .map(|n| match n {
                        Note::DuplicateKey { .. } => "duplicate-key",
                        _ => "invalid-utf8",
                    })
                    .collect();
                assert_eq!(codes, notes, "{name}");
                // verify --no-schema takes the readers' fast path: the same
                // record and the same warnings.
                let plain = check_line(&line, None)
                    .unwrap_or_else(|e| panic!("{name}: refused without schemas: {e}"));
                assert!(agree(&plain.record, &c.record), "{name}");
                let mut a: Vec<String> = plain.notes.iter().map(|n| n.to_string()).collect();
                let mut b: Vec<String> = c.notes.iter().map(|n| n.to_string()).collect();
                a.sort();
                b.sort();
                assert_eq!(a, b, "{name}: --no-schema warns otherwise");
            }
            Go::Refuses => {
                assert!(checked.is_err(), "{name}: verify accepted it");
                assert!(
                    check_line(&line, None).is_err(),
                    "{name}: --no-schema accepted it"
                );
                assert!(decoded.is_err(), "{name}: the reader accepted it");
            }
        }
    }
}

/// The deepest instance level any schema in schemas/v1 constrains, found by
/// walking every keyword that descends into the instance and following
/// `$ref`s across files. A cycle would mean no bound at all.
#[test]
fn no_schema_constrains_a_value_as_deep_as_the_schema_check_cuts() {
    use serde_json::Value;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/v1");
    let files: std::collections::BTreeMap<String, Value> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap(),
            )
        })
        .collect();
    fn resolve<'a>(
        files: &'a std::collections::BTreeMap<String, Value>,
        file: &str,
        r: &str,
    ) -> (String, &'a Value) {
        let (f, ptr) = r.split_once('#').unwrap_or((r, ""));
        let f = if f.is_empty() { file } else { f };
        let doc = &files[f];
        (
            f.to_owned(),
            doc.pointer(ptr).unwrap_or_else(|| panic!("{f}#{ptr}")),
        )
    }
    fn walk(
        files: &std::collections::BTreeMap<String, Value>,
        file: &str,
        s: &Value,
        depth: usize,
        refs: &mut Vec<String>,
    ) -> usize {
        let Value::Object(m) = s else { return 0 };
        let mut deepest = if m
            .keys()
            .any(|k| !k.starts_with('$') && k != "description" && k != "title")
        {
            depth
        } else {
            0
        };
        for (k, v) in m {
            let below = |v: &Value, d: usize, refs: &mut Vec<String>| walk(files, file, v, d, refs);
            let got = match k.as_str() {
                "properties" | "patternProperties" => v
                    .as_object()
                    .map(|o| {
                        o.values()
                            .map(|x| below(x, depth + 1, refs))
                            .max()
                            .unwrap_or(0)
                    })
                    .unwrap_or(0),
                "additionalProperties"
                | "unevaluatedProperties"
                | "items"
                | "unevaluatedItems"
                | "contains" => below(v, depth + 1, refs),
                "prefixItems" => v
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| below(x, depth + 1, refs))
                            .max()
                            .unwrap_or(0)
                    })
                    .unwrap_or(0),
                "allOf" | "anyOf" | "oneOf" => v
                    .as_array()
                    .map(|a| a.iter().map(|x| below(x, depth, refs)).max().unwrap_or(0))
                    .unwrap_or(0),
                "not" | "if" | "then" | "else" | "propertyNames" => below(v, depth, refs),
                "$ref" => {
                    let r = v.as_str().unwrap();
                    let (f, target) = resolve(files, file, r);
                    let key = format!("{f}#{}", r.split_once('#').map_or("", |x| x.1));
                    assert!(
                        !refs.contains(&key),
                        "a $ref cycle through {key}: no depth bound"
                    );
                    refs.push(key);
                    let d = walk(files, &f, target, depth, refs);
                    refs.pop();
                    d
                }
                _ => 0,
            };
            deepest = deepest.max(got);
        }
        deepest
    }
    let mut deepest = 0;
    for (name, doc) in &files {
        deepest = deepest.max(walk(&files, name, doc, 1, &mut Vec::new()));
    }
    assert!(
        deepest >= 6,
        "the walk reaches the content blocks ({deepest})"
    );
    assert!(
        deepest < SCHEMA_DEPTH,
        "a schema constrains level {deepest}; the schema check cuts at {SCHEMA_DEPTH}"
    );
}
