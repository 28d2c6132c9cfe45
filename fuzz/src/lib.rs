//! The three fuzzed entry points, written once: the cargo-fuzz targets in
//! `fuzz_targets/` call them, and `journal/tests/fuzz_corpus.rs` (by
//! `#[path]`) replays every corpus file through them on stable. Each must
//! not panic on any input; the few properties checked hold by construction.

/// One line through the record decoder; a record that decodes also
/// re-encodes without panicking.
pub fn record_decode(line: &[u8]) {
    if let Ok(record) = journal::record::Record::decode(line) {
        let _ = record.encode();
    }
}

/// Journal bytes through the line splitter and the torn-tail rule.
pub fn lines_decode(bytes: &[u8]) {
    // The lines cover the buffer exactly, in order.
    let mut rebuilt = Vec::with_capacity(bytes.len());
    for (i, l) in journal::lines::split(bytes).enumerate() {
        assert_eq!(l.line, i + 1, "lines are numbered from 1");
        assert_eq!(l.offset, rebuilt.len() as u64, "line {} offset", l.line);
        rebuilt.extend_from_slice(l.bytes);
        if l.terminated {
            rebuilt.push(b'\n');
        }
    }
    assert_eq!(rebuilt, bytes, "split loses or adds bytes");
    // decode_all is decode_prefix that fails on an interior line.
    let (prefix, tail, interior) = journal::lines::decode_prefix(bytes);
    match (journal::lines::decode_all(bytes), interior) {
        (Ok((entries, all_tail)), None) => {
            assert_eq!(entries.len(), prefix.len());
            assert_eq!(all_tail, tail);
        }
        (Err(bad), Some(at)) => assert_eq!((bad.line, bad.offset), (at.line, at.offset)),
        (all, at) => panic!("decode_all {all:?} disagrees with decode_prefix {at:?}"),
    }
}

/// Journal bytes through `verify` with no schema.
pub fn verify_bytes(bytes: &[u8]) {
    let _ = journal::verify::verify_bytes("fuzz", bytes, None);
}
