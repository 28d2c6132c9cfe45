//! `upgrade` (SPEC 12): a version-3 journal (the August 2026 agent) becomes
//! version 1 (the agent as it ships) by changing one byte of its meta
//! record, `"version":3` to `"version":1`, and nothing else: no times are
//! added, no record is re-encoded, every other byte stays.
//!
//! This module decides what to do with a journal's bytes; the backends
//! (`store::file::upgrade`, `store::jetstream::upgrade`) make the change
//! durable, each keeping the original first. A journal this module refuses
//! is never touched.
//!
//! Public API: the binary reports an upgrade's [`Outcome`]; the plan is the
//! stores' business and stays inside the crate.

use crate::record::{Payload, Record, VERSION, VERSION_AUGUST};
use crate::verify::{verify_bytes, Severity};

/// What `upgrade` will do with one journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Already version 1: left alone.
    Current,
    /// Version 3: the meta record becomes `meta`, the other records stay.
    Upgrade {
        /// The new meta record's bytes (no newline).
        meta: Vec<u8>,
        /// How many records the journal holds.
        records: usize,
    },
}

/// What an upgrade did (or, on a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The run is version 1 already; nothing was written.
    Current,
    /// A dry run: the run would be upgraded.
    Would {
        /// How many records the journal holds.
        records: usize,
    },
    /// Upgraded; the original is kept at `kept`.
    Upgraded {
        /// How many records the journal holds.
        records: usize,
        /// Where the original journal is kept.
        kept: std::path::PathBuf,
        /// A previous upgrade of this run was interrupted and is now done
        /// (JetStream: the run's last record is its tail again).
        resumed: bool,
    },
}

/// Decide what to do with a journal's bytes. Refuses (with the reason, for
/// the operator) anything that is not a whole, healthy journal of version
/// 1 or 3: an upgrade never rewrites a journal it cannot fully read.
pub(crate) fn plan(run: &str, bytes: &[u8]) -> Result<Plan, String> {
    // A version-1 run is left alone whatever else is true of it.
    let head = crate::lines::split(bytes)
        .next()
        .and_then(|l| Record::decode(l.bytes).ok());
    if let Some(Payload::Meta(m)) = head.and_then(|r| r.payload) {
        if m.version == VERSION {
            return Ok(Plan::Current);
        }
    }
    let report = verify_bytes(run, bytes, None);
    let problems: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error || f.code.is_tail())
        .map(|f| match f.line {
            Some(l) => format!("line {l}: {} ({})", f.message, f.code),
            None => format!("{} ({})", f.message, f.code),
        })
        .collect();
    if !problems.is_empty() {
        return Err(format!(
            "the journal is damaged, and upgrade only rewrites a whole, healthy journal: {}",
            problems.join("; ")
        ));
    }
    let mut lines = crate::lines::split(bytes);
    let first = lines
        .next()
        .ok_or_else(|| "the journal holds no records".to_owned())?;
    let records = 1 + lines.count();
    let meta = Record::decode(first.bytes).map_err(|e| format!("the meta record: {e}"))?;
    let version = match &meta.payload {
        Some(Payload::Meta(m)) => m.version,
        _ => return Err("the first record is not a meta record".into()),
    };
    match version {
        VERSION => Ok(Plan::Current),
        VERSION_AUGUST => Ok(Plan::Upgrade {
            meta: meta_as_current(first.bytes)?,
            records,
        }),
        v => Err(format!(
            "format version {v} is neither {VERSION_AUGUST} (which upgrade converts) nor {VERSION}"
        )),
    }
}

/// The meta record's bytes with its version 3 changed to 1, every other
/// byte kept. The change is found by position and then proven: the new
/// line must decode to the same JSON but for `meta.version`.
pub(crate) fn meta_as_current(line: &[u8]) -> Result<Vec<u8>, String> {
    let before: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("the meta record: {e}"))?;
    let mut want = before.clone();
    if let Some(v) = want.pointer_mut("/meta/version") {
        *v = serde_json::Value::from(VERSION);
    }
    crate::record::edit::replace_value(line, b"\"version\"", b"3", b"1", &want)
        .ok_or_else(|| "the meta record's `\"version\":3` could not be found to change".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(version: i64, prompt: &str) -> String {
        format!(
            r#"{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{{"version":{version},"run_id":"r","created":"2026-09-22T09:14:03Z","fingerprint":{{"provider":"p","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":1,"max_iterations":1}},"prompt":{prompt}}}}}"#
        )
    }

    #[test]
    fn only_the_version_byte_changes() {
        let line = meta(3, r#""say \"version\":3 please""#);
        let out = meta_as_current(line.as_bytes()).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out),
            meta(1, r#""say \"version\":3 please""#)
        );
        let diff = line
            .bytes()
            .zip(out.iter())
            .filter(|(a, b)| a != *b)
            .count();
        assert_eq!(diff, 1);
    }

    #[test]
    fn a_version_one_journal_is_left_alone_and_others_are_refused() {
        let v1 = format!("{}\n", meta(1, r#""x""#));
        assert_eq!(plan("r", v1.as_bytes()), Ok(Plan::Current));
        let v2 = format!("{}\n", meta(2, r#""x""#));
        assert!(plan("r", v2.as_bytes()).is_err());
        let torn = format!("{}\n{{\"seq\":2,", meta(3, r#""x""#));
        let refused = plan("r", torn.as_bytes());
        assert!(
            refused.as_ref().is_err_and(|e| e.contains("torn-tail")),
            "{refused:?}"
        );
    }
}
