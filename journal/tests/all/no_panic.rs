//! No input may panic the reader: random and mutated journals go through
//! decoding, the torn-tail rule, verify, the fold and the tail summary.

use journal::fold::{fold_with, FoldOptions};
use journal::record::Record;
use journal::store::Summary;

// The one xorshift generator of the test crates (deterministic, so a
// failure reproduces).
use crate::mutate;
use mutate::Rng;

const SNIPPETS: &[&str] = &[
    "null",
    "{}",
    "[]",
    "\"x\"",
    "-1",
    "18446744073709551616",
    "1e400",
    "true",
    "{\"text\":{\"text\":1}}",
    "{\"tool_use\":null}",
    "\"\\ud800\"",
    "\u{1b}[2J",
    "\n",
    "\"",
    ",\"seq\":0",
    "{\"a\":{\"b\":[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]}}",
    "\"io.choria.fisk-ai.v1.session.meta\"",
    "\"io.choria.fisk-ai.v1.session.tool_result\"",
];

fn corpus() -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    // Both generations: ours, and the agent's own journals.
    let mut out: Vec<Vec<u8>> = ["runs", "runs-v1", "agent-journals/v1", "agent-journals/v3"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(root.join(d))
                .map(|rd| {
                    rd.filter_map(|e| std::fs::read(e.ok()?.path()).ok())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "testdata/runs is the seed corpus");
    out
}

fn mutate(rng: &mut Rng, mut b: Vec<u8>) -> Vec<u8> {
    for _ in 0..1 + rng.below(6) {
        match rng.below(7) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            1 => {
                let n = rng.below(b.len() + 1);
                b.truncate(n);
            }
            2 => {
                let i = rng.below(b.len() + 1);
                let s = SNIPPETS[rng.below(SNIPPETS.len())].as_bytes();
                b.splice(i..i, s.iter().copied());
            }
            3 if !b.is_empty() => {
                let i = rng.below(b.len());
                let j = (i + rng.below(64)).min(b.len());
                b.drain(i..j);
            }
            4 => {
                let lines: Vec<&[u8]> = b.split(|c| *c == b'\n').collect();
                let mut l: Vec<Vec<u8>> = lines.iter().map(|x| x.to_vec()).collect();
                if l.len() > 1 {
                    let (i, j) = (rng.below(l.len()), rng.below(l.len()));
                    l.swap(i, j);
                }
                b = l.join(&b'\n');
            }
            5 => {
                let n = rng.below(200);
                b.extend((0..n).map(|_| rng.next() as u8));
            }
            _ => {
                // Replace a number with an extreme one.
                if let Some(i) = b.iter().position(|c| c.is_ascii_digit()) {
                    b.splice(i..i + 1, b"99999999999999999999".iter().copied());
                }
            }
        }
    }
    b
}

fn exercise(bytes: &[u8]) {
    let _ = journal::verify::verify_bytes("fuzz", bytes, None);
    for line in bytes.split(|b| *b == b'\n') {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
            let _ = Record::from_value(v);
        }
    }
    if let Ok((entries, _)) = journal::lines::decode_all(bytes) {
        let recs: Vec<&Record> = entries.iter().map(|e| &e.record).collect();
        for any_version in [false, true] {
            let opts = FoldOptions {
                any_version,
                until_seq: None,
            };
            if let Ok(st) = fold_with(recs.iter().copied(), opts) {
                let _ = serde_json::to_string(&st);
            }
        }
        if let Some((meta, rest)) = entries.split_first() {
            let tail: Vec<Record> = rest.iter().map(|e| e.record.clone()).collect();
            let _ = Summary::from_tail("fuzz", &meta.record, &tail);
        }
        for e in &entries {
            let _ = e.record.encode();
        }
    }
}

#[test]
fn mutated_journals_never_panic_the_reader() {
    let seeds = corpus();
    let mut rng = Rng(0x5eed_f15c);
    for _ in 0..3000 {
        let seed = seeds[rng.below(seeds.len())].clone();
        exercise(&mutate(&mut rng, seed));
    }
}

#[test]
fn random_bytes_never_panic_the_reader() {
    let mut rng = Rng(42);
    for _ in 0..2000 {
        let n = rng.below(512);
        let b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        exercise(&b);
    }
}

/// verify with a schema check decodes through a parsed value; the reader
/// decodes bytes. Both must judge every corpus line alike.
#[test]
fn decoding_from_a_value_agrees_with_decoding_bytes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut n = 0;
    for dir in [
        "runs",
        "damaged",
        "runs-v1",
        "damaged-v1",
        "agent-journals/v1",
        "agent-journals/v3",
    ] {
        for e in std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(bytes) = std::fs::read(e.path()) else {
                continue;
            };
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
                    continue;
                };
                let a = Record::decode(line);
                let b = Record::from_value_of(v, line);
                assert_eq!(a.is_ok(), b.is_ok(), "{}", String::from_utf8_lossy(line));
                if let (Ok(a), Ok(b)) = (a, b) {
                    assert_eq!(
                        (a.seq, &a.protocol, a.optional, a.time),
                        (b.seq, &b.protocol, b.optional, b.time)
                    );
                    assert_eq!(
                        a.payload.as_ref().map(|p| p.kind()),
                        b.payload.as_ref().map(|p| p.kind())
                    );
                    let mut ka = a.extra_keys.clone();
                    let mut kb = b.extra_keys.clone();
                    ka.sort();
                    kb.sort();
                    assert_eq!(ka, kb);
                }
                n += 1;
            }
        }
    }
    assert!(n > 500);
}

/// `recover`'s plan on a journal: never a panic; a plan made folds (the
/// agent would accept the run) and verifies without an error but for what
/// the agent reads anyway and recover keeps as it reads it (issue 35: a
/// key its closed schemas refuse, a field's schema).
fn recovers(what: &str, bytes: &[u8]) -> bool {
    let now = journal::time::Time::parse("2026-12-02T08:00:00Z").unwrap();
    let Ok(p) = journal::recover::plan("fuzz", bytes, now) else {
        return false;
    };
    let new = p.journal();
    let report = journal::verify::verify_bytes("fuzz", &new, None);
    let errors: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.severity == journal::verify::Severity::Error)
        .filter(|f| {
            !matches!(
                f.code,
                journal::verify::Code::ExtraPayload | journal::verify::Code::Schema
            )
        })
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
    let (entries, _) = journal::lines::decode_all(&new).unwrap();
    journal::fold(entries.iter().map(|e| &e.record)).unwrap();
    assert!(p.kept <= p.intact, "{what}");
    true
}

#[test]
fn mutated_journals_never_panic_recover_and_what_it_makes_verifies() {
    let seeds = corpus();
    let mut rng = Rng(0x7ec0_7e12);
    let mut made = 0;
    for i in 0..1500 {
        let seed = seeds[rng.below(seeds.len())].clone();
        let bytes = mutate(&mut rng, seed);
        made += usize::from(recovers(&format!("mutation {i}"), &bytes));
    }
    // A third leave a meta record to recover from (the others mutate
    // it, or start from a journal with none).
    assert!(made > 400, "{made}");
}

#[test]
fn every_damaged_journal_of_the_testdata_recovers_or_is_refused() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut made = 0;
    for dir in ["damaged", "damaged-v1"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let Ok(bytes) = std::fs::read(e.path()) else {
                continue;
            };
            made += usize::from(recovers(&e.path().display().to_string(), &bytes));
        }
    }
    assert!(made > 20, "{made}");
}
