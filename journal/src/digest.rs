//! Lowercase hex, random hex and the SHA-256 of a journal's bodies: the one copy of
//! both, so that a store backend or `migrate` never reaches into another
//! module for a one-line helper.
//!
//! A run's digest is the SHA-256 over its record bodies, each followed by
//! `\n`: the bytes of its clean journal file, whichever store holds it.
//! `migrate` compares a copy with its source by it.
//!
//! Public API: [`random_hex`] (the binary names files with it) and
//! [`digest`]/[`hex`] (re-exported by `migrate`); the incremental hasher
//! stays inside the crate.

use sha2::{Digest, Sha256};

/// `bytes` as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` bytes from the kernel's random source, as hex: the one use of
/// `getrandom` (run ids, JetStream msg id nonces).
pub fn random_hex<const N: usize>() -> Result<String, getrandom::Error> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b)?;
    Ok(hex(&b))
}

/// SHA-256 over the bodies, each followed by `\n`, in hex.
pub fn digest<'a>(bodies: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Lines::default();
    for b in bodies {
        h.push(b);
    }
    h.finish()
}

/// [`digest`] fed one body at a time.
#[derive(Clone, Default)]
pub(crate) struct Lines {
    sha: Sha256,
}

impl Lines {
    /// Add `body` and its `\n`.
    pub fn push(&mut self, body: &[u8]) {
        self.sha.update(body);
        self.sha.update(b"\n");
    }

    /// The digest of the bodies pushed, in hex.
    pub fn finish(self) -> String {
        hex(self.sha.finalize().as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_the_sha256_of_the_clean_journal_bytes() {
        let mut h = Sha256::new();
        h.update(b"a\nb\n");
        let want: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(digest([&b"a"[..], &b"b"[..]]), want);
    }
}
