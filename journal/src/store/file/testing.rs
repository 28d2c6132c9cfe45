//! What the file backend's unit tests share.

use crate::record::{Payload, Record, Terminal};
use std::path::Path;

pub(super) fn rec(seq: u64) -> Record {
    Record::new(
        seq,
        Payload::Terminal(Terminal {
            reason: "suspended".into(),
            message: format!("r{seq}"),
            ..Terminal::default()
        }),
    )
}

pub(super) fn raw(seq: u64) -> (u64, Vec<u8>) {
    (seq, rec(seq).encode().unwrap())
}

pub(super) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
