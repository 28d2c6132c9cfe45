//! The mutation sweep: every healthy journal of `testdata/runs/`, damaged
//! in many deterministic ways (see `mutate/mod.rs`), goes through every
//! public reading entry point of the crate — line splitting and the
//! torn-tail rule, record decoding (from bytes and from a value), the
//! schema check, the fold (strict, any version, up to a seq) and its JSON,
//! re-encoding, the tail summary `ls` uses, verify (bytes, file store,
//! JetStream messages), the file store's read, prefix read, digest,
//! listing and summaries, and the writer's scan. Each must return, Ok or
//! Err; none may panic (CLI.md: "the tool never panics on any journal
//! content"). A panic is caught and reported with the run, the mutation,
//! its position and where it panicked.
//!
//! `MUTATIONS_TRACE=1` prints each mutant before it runs: a stack overflow
//! aborts the process, and the last line printed names the mutant.

use crate::mutate;

use journal::fingerprint;
use journal::fold::{fold, fold_with, FoldOptions};
use journal::lines;
use journal::record::{Fingerprint, Kind, Payload, Record};
use journal::schema::SchemaSet;
use journal::store::file::{FileStore, LiveLocks};
use journal::store::jetstream::RunMessage;
use journal::store::{Store, Summary};
use journal::verify;
use mutate::{Mutant, Plan};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// While the sweep runs, the panic hook records instead of printing; rayon
/// workers panic on other threads, so this is global, not thread-local.
static SWEEPING: AtomicBool = AtomicBool::new(false);
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn install_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !SWEEPING.load(Ordering::SeqCst) {
            return default(info);
        }
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        if let Ok(mut last) = LAST_PANIC.lock() {
            last.get_or_insert(format!("{msg} at {at}"));
        }
    }));
}

struct Ctx {
    schemas: SchemaSet,
    /// A file store holding the one journal under test, rewritten per mutant.
    dir: tempfile::TempDir,
    locks: LiveLocks,
}

/// What `ls` does per run: the meta record and the records from the last
/// assistant onwards.
fn tail_summary(run: &str, records: &[Record]) {
    let Some((meta, rest)) = records.split_first() else {
        return;
    };
    let from = rest
        .iter()
        .rposition(|r| r.kind() == Some(Kind::Assistant))
        .unwrap_or(0);
    let _ = Summary::from_tail(run, meta, rest.get(from..).unwrap_or_default());
}

fn fold_every_way(records: &[Record]) {
    let mid = records.get(records.len() / 2).map(|r| r.seq);
    for any_version in [false, true] {
        for until_seq in [None, mid] {
            let opts = FoldOptions {
                any_version,
                until_seq,
            };
            let folded = fold_with(records.iter(), opts);
            if let (Ok(st), true, None) = (folded, any_version, until_seq) {
                // What `fold --format json` and `show --format json` print.
                let _ = serde_json::to_string_pretty(&st);
                let _ = serde_json::to_value(&st);
            }
        }
    }
    // By value, as `fold` and `verify` feed it; and the strict resume fold.
    let _ = fold_with(records.to_vec(), FoldOptions::default());
    let _ = fold(records.iter());
}

/// Every public reading entry point over one mutant (the `k`th).
fn exercise(ctx: &Ctx, run: &str, bytes: &[u8], k: usize) {
    // The reader's rule (as a prefix: past interior corruption too).
    let (entries, _, _) = lines::decode_prefix(bytes);
    let records: Vec<Record> = entries.iter().map(|e| e.record.clone()).collect();
    fold_every_way(&records);
    tail_summary(run, &records);
    for r in &records {
        let _ = r.encode();
    }
    // `diff RUN ...` compares the meta fingerprint.
    if let Some(Payload::Meta(m)) = records.first().and_then(|r| r.payload.as_ref()) {
        let _ = fingerprint::diff(&m.fingerprint, &Fingerprint::default());
        let _ = fingerprint::diff(&Fingerprint::default(), &m.fingerprint);
    }

    // verify over bytes with the schema check: every line that is JSON is
    // parsed to a value, validated (what `validate` does) and decoded from
    // that value.
    let _ = verify::verify_bytes(run, bytes, Some(&ctx.schemas));

    // The file store: the tail summary `ls` reads (its own windowed
    // reading) for every mutant.
    let path = ctx.dir.path().join(format!("{run}.json"));
    std::fs::write(&path, bytes).expect("write the mutant");
    let fs = FileStore::new(ctx.dir.path());
    let _ = fs.summary(run, &ctx.locks);

    // The other paths wrap the decoding above; every eighth mutant takes
    // them, so the sweep stays quick in a debug build.
    if k.is_multiple_of(8) {
        let _ = lines::decode_all(bytes);
        let _ = fs.digest(run);
        if let Ok((p, b)) = fs.read_bytes(run) {
            let _ = journal::store::file::scan(run, &p, &b);
        }
        let _ = journal::store::file::verify_file_run(&fs, run, &ctx.locks, None);
        if let Ok(listing) = fs.list() {
            let _ = journal::store::file::verify_store_dir(&fs, &listing);
        }
        let store = Store::File(fs);
        if let Ok(j) = store.read(run) {
            let _ = j.last_seq();
            let _ = fold_with(j.records(), FoldOptions::default());
        }
        if let Ok((j, _)) = store.read_prefix(run) {
            let _ = j.last_seq();
        }
        let _ = store.summaries();
        let _ = store.exists(run);
        let _ = store.is_live(run);
        // The same lines as JetStream messages: subjects by position, a
        // few of them not record subjects, stream order shuffled.
        let messages: Vec<RunMessage> = lines::split(bytes)
            .enumerate()
            .map(|(i, l)| RunMessage {
                subject: format!("fisk.{run}.{}", i + 1),
                subject_seq: (i % 7 != 6).then_some(i as u64 + 1),
                stream_seq: 100 - i as u64 % 100,
                body: l.bytes.to_vec(),
            })
            .collect();
        let _ = journal::store::jetstream::verify_jetstream_run(run, messages, None);
    }
    std::fs::remove_file(&path).expect("remove the mutant");
}

#[test]
fn no_mutant_of_a_healthy_journal_panics_a_reader() {
    install_hook();
    let trace = std::env::var_os("MUTATIONS_TRACE").is_some();
    let ctx = Ctx {
        schemas: SchemaSet::embedded().expect("embedded schemas"),
        dir: tempfile::tempdir().expect("tempdir"),
        locks: LiveLocks::snapshot(),
    };
    let small = Plan {
        flips: 48,
        truncations: 16,
        every_cut_in_last_line: false,
        inserts: 4,
        utf8: 2,
        seq_lines: 2,
        line_edits: 4,
        values: 3,
        hostile_all: true,
    };
    // The large run is read through ls's head-and-tail windows; each
    // mutant of it costs ~300 records, so fewer of them.
    let large = Plan {
        flips: 8,
        truncations: 4,
        inserts: 1,
        utf8: 0,
        seq_lines: 1,
        line_edits: 1,
        values: 1,
        ..small
    };
    // Every cut inside the last line: a write torn at any byte.
    let cut_everywhere = [
        "simple-completed",
        "tool-batch",
        "go-escapes",
        "deferral-waiting",
    ];

    let started = Instant::now();
    let mut failures: Vec<String> = Vec::new();
    let mut total = 0usize;
    for (i, (run, bytes)) in mutate::seeds().iter().enumerate() {
        let mut plan = if bytes.len() > 64 * 1024 {
            large
        } else {
            small
        };
        plan.every_cut_in_last_line = cut_everywhere.contains(&run.as_str());
        // The unmutated run first: a healthy journal must pass too.
        let mut all = vec![Mutant {
            run: run.clone(),
            what: "unmutated".into(),
            bytes: bytes.clone(),
        }];
        all.extend(mutate::mutants(run, bytes, plan, 0x5eed ^ i as u64));
        for m in all {
            total += 1;
            if trace {
                eprintln!("mutant: {} / {}", m.run, m.what);
            }
            SWEEPING.store(true, Ordering::SeqCst);
            let result = catch_unwind(AssertUnwindSafe(|| exercise(&ctx, &m.run, &m.bytes, total)));
            SWEEPING.store(false, Ordering::SeqCst);
            if result.is_err() {
                let why = LAST_PANIC
                    .lock()
                    .ok()
                    .and_then(|mut l| l.take())
                    .unwrap_or_else(|| "no panic message".into());
                failures.push(format!(
                    "run {} / {} ({} bytes): panicked: {why}",
                    m.run,
                    m.what,
                    m.bytes.len()
                ));
                // Leave no half-written mutant behind for the next one.
                let _ = std::fs::remove_file(ctx.dir.path().join(format!("{}.json", m.run)));
            }
        }
    }
    eprintln!(
        "mutation sweep: {total} mutants in {:.2?}",
        started.elapsed()
    );
    assert!(total > 3000, "only {total} mutants");
    assert!(
        failures.is_empty(),
        "{} of {total} mutants panicked a reader (the first 40 shown):\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
