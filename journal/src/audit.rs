//! The audit log's entries (issue 38, chain of custody): who changed which
//! run, when, how and why, written ahead of every write fisk-admin makes.
//! This module is the log's format and nothing else: an entry, its bytes,
//! the hash chain that links each entry to the one before, and the rule
//! that settles an intent nobody closed against the run as it is now.
//! Where the log is kept is the store's business (`store/custody.rs`);
//! reading it back, checking it and sealing runs is `custody`'s.
//!
//! The log lives beside the journals and is never a journal: on the file
//! backend the file [`LOG_FILE`] in the store directory (its name does not
//! end in `.json`, so neither the agent's listing nor this tool's takes it
//! for a run); on JetStream the subjects `<prefix>._audit.<n>` of the
//! sessions stream (`_audit` is no run id, so the agent's listing, which
//! reads `<prefix>.*._meta`, never meets them). journal/FORMAT.md,
//! "Chain of custody", has the whole account.
//!
//! A write is logged in two entries: an [`Kind::Intent`] stored durably
//! before anything of the run changes (a write whose intent cannot be
//! stored does not happen), then an [`Kind::Outcome`] once the change is
//! done or has failed. A process killed in between leaves an intent with
//! no outcome; [`settle`] says from the run itself whether the write
//! happened, never guessing: the intent carries the run's digest before
//! and the digest the write makes.

use crate::time::Time;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The audit log's file in a file store's directory.
pub const LOG_FILE: &str = "fisk-admin-audit.jsonl";

/// The subject token of the audit log under a stream's prefix: entry `n`
/// is on `<prefix>._audit.<n>`.
pub const TOKEN: &str = "_audit";

/// The most an operator's reason may take, in bytes.
pub const MAX_WHY: usize = 1024;

/// The most the command as run is kept to, in bytes (longer is cut and
/// says so): an entry must fit a message on a stream capped at SPEC 8's
/// 4096-byte floor.
pub const MAX_COMMAND: usize = 1024;

/// Who acts, and why: what every entry one invocation writes carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actor {
    /// The operator's name as given, else `$USER@host`.
    pub operator: String,
    /// The NATS user the connection authenticated as (JetStream), when
    /// the connection settings say.
    pub nats_user: Option<String>,
    /// The operator's reason, as given.
    pub why: Option<String>,
    /// The command as run, as shell words (secrets left out).
    pub command: String,
}

impl Actor {
    /// `$USER@host`, the operator when none is named: the login name
    /// (`USER`, else `LOGNAME`, else `unknown`) and the host's name.
    pub fn default_operator() -> String {
        let user = ["USER", "LOGNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| "unknown".to_owned());
        let host = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        format!("{user}@{host}")
    }

    /// `command` cut to [`MAX_COMMAND`] bytes on a character boundary,
    /// saying how long it was.
    pub fn cut_command(command: &str) -> String {
        if command.len() <= MAX_COMMAND {
            return command.to_owned();
        }
        let mut end = MAX_COMMAND;
        while !command.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}... ({} bytes in all)",
            command.get(..end).unwrap_or_default(),
            command.len()
        )
    }
}

/// A run's content as a digest: how many records it has and the SHA-256
/// of its journal as stored in the clean journal's form (the file's bytes;
/// on JetStream the record bodies, each followed by `\n`). The same run
/// has the same digest on both backends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    /// Records the reader reads.
    pub records: u64,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
}

impl Digest {
    /// The digest of `lines` (record bodies, no newlines) and, after them,
    /// `extra` bytes as stored (a torn final line), `records` counting the
    /// lines.
    pub fn of_lines<'a>(lines: impl IntoIterator<Item = &'a [u8]>, extra: &[u8]) -> Digest {
        let mut sha = Sha256::new();
        let mut records = 0u64;
        for l in lines {
            sha.update(l);
            sha.update(b"\n");
            records += 1;
        }
        sha.update(extra);
        Digest {
            records,
            sha256: crate::digest::hex(sha.finalize().as_slice()),
        }
    }

    /// This digest with `line` appended as the next record: what an append
    /// of one record makes of a clean journal. `None` when the digest was
    /// not made by [`Lines`] (its state is not known).
    pub fn after(lines: &Lines, line: &[u8]) -> Digest {
        let mut next = lines.clone();
        next.push(line);
        next.digest()
    }
}

/// A [`Digest`] made one record at a time, which can be extended: what an
/// append's intent states the run will be.
#[derive(Clone, Default)]
pub struct Lines {
    sha: Sha256,
    records: u64,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lines({} records)", self.records)
    }
}

impl PartialEq for Lines {
    fn eq(&self, other: &Lines) -> bool {
        self.digest() == other.digest()
    }
}

impl Eq for Lines {}

impl Lines {
    /// The digest of these records.
    pub fn of<'a>(lines: impl IntoIterator<Item = &'a [u8]>) -> Lines {
        let mut l = Lines::default();
        for line in lines {
            l.push(line);
        }
        l
    }

    /// Add one record's body (its `\n` is added).
    pub fn push(&mut self, line: &[u8]) {
        self.sha.update(line);
        self.sha.update(b"\n");
        self.records += 1;
    }

    /// The digest so far.
    pub fn digest(&self) -> Digest {
        Digest {
            records: self.records,
            sha256: crate::digest::hex(self.sha.clone().finalize().as_slice()),
        }
    }
}

/// Seqs `first..=last` of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seqs {
    /// The first seq.
    pub first: u64,
    /// The last seq.
    pub last: u64,
}

impl Seqs {
    /// `first..=last`, `None` when empty.
    pub fn range(first: u64, last: u64) -> Option<Seqs> {
        (first >= 1 && first <= last).then_some(Seqs { first, last })
    }
}

impl std::fmt::Display for Seqs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.first == self.last {
            true => write!(f, "{}", self.first),
            false => write!(f, "{}-{}", self.first, self.last),
        }
    }
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A write about to be made, stored before anything changes.
    #[default]
    Intent,
    /// How a write ended.
    Outcome,
    /// A seal made of the store (`seal`).
    Seal,
    /// An entry of another store's log, carried with a run `migrate`
    /// copied (the original line kept byte for byte).
    Carried,
}

impl Kind {
    /// The word stored.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Intent => "intent",
            Kind::Outcome => "outcome",
            Kind::Seal => "seal",
            Kind::Carried => "carried",
        }
    }
}

/// How a write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ended {
    /// The change was made.
    Done,
    /// The write failed; the error says how far it got.
    Failed,
}

/// One entry of the log, as stored: one JSON object on one line (file) or
/// in one message (JetStream). Fields that do not apply are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Entry {
    /// The entry's number in its log: 1, 2, 3 ... with no gap.
    pub n: u64,
    /// SHA-256 (hex) of the bytes of entry `n - 1` as stored; `None` for
    /// entry 1. Editing or removing an entry breaks the next one's link.
    #[serde(default)]
    pub prev: Option<String>,
    /// What the entry is.
    pub kind: Kind,
    /// When it was written (this machine's clock, UTC).
    pub time: Time,
    /// The write's id: an intent and its outcome share it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub write: String,
    /// The command's name (`answer`, `rm`, `migrate` ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The run written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Who: the operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Who, on JetStream: the NATS user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nats_user: Option<String>,
    /// The command as run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why, in the operator's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The run before the write (`None`: there was no run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Digest>,
    /// The run the write makes (intent) or made (outcome); `None`: no run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Digest>,
    /// There was no run before the write.
    #[serde(default, skip_serializing_if = "is_false")]
    pub absent_before: bool,
    /// There is no run after the write (it was removed).
    #[serde(default, skip_serializing_if = "is_false")]
    pub absent_after: bool,
    /// The seqs the write stores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<Seqs>,
    /// The seqs the write takes away (removed, or replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<Seqs>,
    /// What else there is to say about it (where a backup is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// An outcome's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Ended>,
    /// A failed outcome's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A seal's root (`custody::seal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// A seal's number of runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
    /// A seal's predecessor's root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
    /// A carried entry's store of origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// A carried entry's original line, byte for byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Entry {
    /// The entry's bytes as stored (no newline).
    pub fn encode(&self) -> Vec<u8> {
        // A struct of strings, numbers and options always serializes.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// An entry read back; the error says why it is none.
    pub fn decode(bytes: &[u8]) -> Result<Entry, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }

    /// The run's state before this write, as [`settle`] compares it:
    /// `Some(None)` for no run.
    fn was(&self) -> Option<Option<&Digest>> {
        match (&self.before, self.absent_before) {
            (Some(d), _) => Some(Some(d)),
            (None, true) => Some(None),
            (None, false) => None,
        }
    }

    /// The run's state the write makes, as [`settle`] compares it.
    fn makes(&self) -> Option<Option<&Digest>> {
        match (&self.after, self.absent_after) {
            (Some(d), _) => Some(Some(d)),
            (None, true) => Some(None),
            (None, false) => None,
        }
    }

    /// The entry carried inside this one (a [`Kind::Carried`]), decoded.
    pub fn carried(&self) -> Option<Entry> {
        self.original
            .as_deref()
            .and_then(|o| Entry::decode(o.as_bytes()).ok())
    }
}

/// The link an entry stored as `bytes` gives the next one: the SHA-256 of
/// its bytes, hex.
pub fn link(bytes: &[u8]) -> String {
    crate::digest::hex(Sha256::digest(bytes).as_slice())
}

/// What a write the log announced did to its run, told from the run as it
/// is now ([`settle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The run is what the write makes (records may have been appended
    /// after it since: `grew` says how many).
    Done {
        /// Records stored after the write's own.
        grew: u64,
    },
    /// The run is as it was before the write (records may have been
    /// appended by another writer since).
    NotDone {
        /// Records stored after what the write found.
        grew: u64,
    },
    /// The run is neither: it was changed since by something else.
    Neither,
}

/// What the write an intent announced did, told from the run now: `now`
/// is the run's records (`None`: no run). Only digests decide: the run
/// holds what the write makes as its first records (done), or what the
/// write found (not done), or neither.
pub fn settle(intent: &Entry, now: Option<&[Vec<u8>]>) -> Settled {
    let holds = |d: Option<&Digest>| -> Option<u64> {
        match (d, now) {
            (None, None) => Some(0),
            (Some(d), Some(lines)) => {
                let k = usize::try_from(d.records).ok()?;
                let head = lines.get(..k)?;
                let got = Digest::of_lines(head.iter().map(Vec::as_slice), b"");
                (got.sha256 == d.sha256).then(|| (lines.len() - k) as u64)
            }
            _ => None,
        }
    };
    if let Some(grew) = intent.makes().and_then(holds) {
        return Settled::Done { grew };
    }
    if let Some(grew) = intent.was().and_then(holds) {
        return Settled::NotDone { grew };
    }
    Settled::Neither
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: u64) -> Vec<Vec<u8>> {
        (1..=n)
            .map(|s| format!("{{\"seq\":{s}}}").into_bytes())
            .collect()
    }

    fn digest(l: &[Vec<u8>]) -> Digest {
        Digest::of_lines(l.iter().map(Vec::as_slice), b"")
    }

    #[test]
    fn an_entry_reads_back_as_written_and_leaves_out_what_does_not_apply() {
        let e = Entry {
            n: 3,
            prev: Some(link(b"x")),
            kind: Kind::Intent,
            time: Time::parse("2026-12-01T08:00:00Z").unwrap(),
            write: "w1".into(),
            op: Some("answer".into()),
            run: Some("r".into()),
            before: Some(digest(&lines(2))),
            after: Some(digest(&lines(3))),
            written: Seqs::range(3, 3),
            ..Entry::default()
        };
        let bytes = e.encode();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            !text.contains("nats_user") && !text.contains("absent"),
            "{text}"
        );
        assert_eq!(Entry::decode(&bytes).unwrap(), e);
    }

    #[test]
    fn a_digest_extended_by_a_record_is_the_digest_of_the_longer_run() {
        let l = lines(4);
        let head = Lines::of(l[..3].iter().map(Vec::as_slice));
        assert_eq!(Digest::after(&head, &l[3]), digest(&l));
        assert_eq!(head.digest(), digest(&l[..3]));
    }

    #[test]
    fn an_intent_is_settled_by_the_run_alone() {
        let l = lines(5);
        let intent = Entry {
            before: Some(digest(&l[..3])),
            after: Some(digest(&l[..4])),
            ..Entry::default()
        };
        assert_eq!(settle(&intent, Some(&l[..4])), Settled::Done { grew: 0 });
        assert_eq!(settle(&intent, Some(&l)), Settled::Done { grew: 1 });
        assert_eq!(settle(&intent, Some(&l[..3])), Settled::NotDone { grew: 0 });
        let mut other = l[..3].to_vec();
        other.push(b"{\"seq\":4,\"other\":1}".to_vec());
        assert_eq!(settle(&intent, Some(&other)), Settled::NotDone { grew: 1 });
        assert_eq!(settle(&intent, Some(&l[..2])), Settled::Neither);
        assert_eq!(settle(&intent, None), Settled::Neither);
        // A removal: done when the run is gone.
        let rm = Entry {
            before: Some(digest(&l)),
            absent_after: true,
            ..Entry::default()
        };
        assert_eq!(settle(&rm, None), Settled::Done { grew: 0 });
        assert_eq!(settle(&rm, Some(&l)), Settled::NotDone { grew: 0 });
        // A creation: not done while there is no run.
        let fork = Entry {
            absent_before: true,
            after: Some(digest(&l[..2])),
            ..Entry::default()
        };
        assert_eq!(settle(&fork, None), Settled::NotDone { grew: 0 });
        assert_eq!(settle(&fork, Some(&l[..2])), Settled::Done { grew: 0 });
    }

    #[test]
    fn a_long_command_is_cut_and_says_how_long_it_was() {
        let long = "é".repeat(MAX_COMMAND);
        let cut = Actor::cut_command(&long);
        assert!(cut.len() < MAX_COMMAND + 40, "{}", cut.len());
        assert!(cut.ends_with(&format!("({} bytes in all)", long.len())));
    }
}
