//! Run ids (SPEC 1.2). An id becomes a file name and a subject token, so it
//! is checked before it is used for either: this is also the path-traversal
//! defence.
//!
//! Public API: front ends check a run id before using it ([`check`],
//! [`is_valid`]); the length bound and the worker name stay inside the crate.

use crate::error::{Error, Result};

pub(crate) const MAX_ID_LEN: usize = 128;

/// Check `id` against `^[a-zA-Z0-9][a-zA-Z0-9_-]*$`, at most 128 bytes.
pub fn check(id: &str) -> Result<()> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > MAX_ID_LEN {
        Some("it is longer than 128 bytes")
    } else if !id.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric) {
        Some("it must start with a letter or digit")
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Some("only letters, digits, '_' and '-' are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Whether `id` passes [`check`].
pub fn is_valid(id: &str) -> bool {
    check(id).is_ok()
}

/// The worker name in `claim.by`, and in what a JetStream delete leaves
/// as its fence: this host and process.
pub(crate) fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("fisk-admin@{host} pid {}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_escape_the_store_are_refused() {
        for bad in [
            "", "../x", "a/b", ".hidden", "-x", "_x", "a b", "a.json", "é",
        ] {
            assert!(!is_valid(bad), "{bad:?} accepted");
        }
        assert!(!is_valid(&"a".repeat(129)));
        for good in ["a", "0", "run-1_x", &"a".repeat(128)] {
            assert!(is_valid(good), "{good:?} refused");
        }
    }
}
