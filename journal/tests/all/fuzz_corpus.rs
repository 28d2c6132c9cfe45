//! Replays every file of `fuzz/corpus/<target>/` through the entry point
//! its cargo-fuzz target drives (`fuzz/src/lib.rs`, shared by `#[path]`),
//! so what fuzzing found stays fixed on stable, where CI runs. Fuzzing
//! itself needs nightly: `bench/fuzz.sh`.

#[path = "../../../fuzz/src/lib.rs"]
mod entry;

use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "{}: the seed corpus is missing",
        dir.display()
    );
    files
}

fn replay(target: &str, run: fn(&[u8])) {
    for p in corpus(target) {
        let bytes = std::fs::read(&p).unwrap();
        if std::panic::catch_unwind(|| run(&bytes)).is_err() {
            panic!("{target}: {} panics", p.display());
        }
    }
}

#[test]
fn every_record_decode_corpus_line_decodes_or_fails_without_panicking() {
    replay("record_decode", entry::record_decode);
}

#[test]
fn every_lines_decode_corpus_file_splits_and_decodes_without_panicking() {
    replay("lines_decode", entry::lines_decode);
}

#[test]
fn every_verify_bytes_corpus_file_verifies_without_panicking() {
    replay("verify_bytes", entry::verify_bytes);
}
