//! The subject layout: seq 1 (the meta record) on `<prefix>.<id>._meta`,
//! seq N on `<prefix>.<id>.<N>`; a token that is neither (a sign, a leading
//! zero, `1`) names no record. And a run's messages as stored (a delete's
//! tombstone told apart from a record), and in seq order as the lines of a
//! journal.

use super::core::Core;

/// How a delete's tombstone body starts (`delete.rs` publishes it). It is
/// not JSON, so no reader takes it for a record: the agent refuses the run
/// (it does not parse), fisk-admin drops it as a final body that does not
/// decode, and its writers refuse to open a run that ends on one.
pub(super) const TOMBSTONE: &[u8] = b"fisk-admin tombstone: ";

/// Whether a message body is a delete's tombstone.
pub fn is_tombstone(body: &[u8]) -> bool {
    body.starts_with(TOMBSTONE)
}

/// A message of a run as stored.
#[derive(Debug, Clone)]
pub struct RunMessage {
    /// The message's subject.
    pub subject: String,
    /// The record seq the subject names (`_meta` = 1), `None` when the
    /// subject is not a record subject.
    pub subject_seq: Option<u64>,
    /// The message's sequence in the stream.
    pub stream_seq: u64,
    /// The message's body, as stored.
    pub body: Vec<u8>,
}

/// Put a run's messages in seq order: by the record seq their subjects
/// name, messages on no record subject last, each in stream order. Seq
/// order is the subjects' order; stream order agrees for any run written
/// through the fence.
pub fn sort_by_seq(messages: &mut [RunMessage]) {
    messages.sort_by_key(|m| (m.subject_seq.unwrap_or(u64::MAX), m.stream_seq));
}

/// Keep only the messages stored at or before stream sequence `cut` (a
/// cut taken with `last_sequence`): the run as the stream held it then.
/// A run's records are stored in seq order, so what is kept is a prefix
/// of it; nothing when the run was created after the cut.
pub fn upto_cut(messages: &mut Vec<RunMessage>, cut: u64) {
    messages.retain(|m| m.stream_seq <= cut);
}

/// The bodies as the lines of a journal: each followed by `\n`.
pub fn as_lines<'a, I>(messages: I) -> Vec<u8>
where
    I: IntoIterator<Item = &'a RunMessage>,
    I::IntoIter: Clone,
{
    let messages = messages.into_iter();
    let mut bytes = Vec::with_capacity(messages.clone().map(|m| m.body.len() + 1).sum());
    for m in messages {
        bytes.extend_from_slice(&m.body);
        bytes.push(b'\n');
    }
    bytes
}

/// `<prefix>.<id>._meta` for seq 1, `<prefix>.<id>.<N>` otherwise.
pub fn subject(prefix: &str, run: &str, seq: u64) -> String {
    if seq <= 1 {
        format!("{prefix}.{run}._meta")
    } else {
        format!("{prefix}.{run}.{seq}")
    }
}

/// `_meta` is seq 1; `N` (no sign, no leading zero, at least 2) is seq N.
fn seq_of_token(token: &str) -> Option<u64> {
    if token == "_meta" {
        return Some(1);
    }
    if token.starts_with('0') || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok().filter(|n| *n >= 2)
}

impl Core {
    /// `<prefix>.<id>._meta` for seq 1, `<prefix>.<id>.<N>` otherwise.
    pub(super) fn subject(&self, run: &str, seq: u64) -> String {
        subject(&self.prefix, run, seq)
    }

    /// The run's seq for a subject of this stream, if it is a record subject.
    pub(super) fn parse_subject<'a>(&self, subject: &'a str) -> Option<(&'a str, Option<u64>)> {
        let rest = subject.strip_prefix(&self.prefix)?.strip_prefix('.')?;
        let (run, token) = rest.split_once('.')?;
        Some((run, seq_of_token(token)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_map_to_seqs() {
        assert_eq!(subject("p", "r", 1), "p.r._meta");
        assert_eq!(subject("p", "r", 12), "p.r.12");
        assert_eq!(seq_of_token("_meta"), Some(1));
        assert_eq!(seq_of_token("12"), Some(12));
        for bad in ["1", "012", "x", "", "-2", "+2"] {
            assert_eq!(seq_of_token(bad), None, "{bad:?}");
        }
    }
}
