//! The keys that sign seals (issue 38): ed25519, through the RustCrypto
//! `ed25519-dalek` crate. A key file is one line of text, so it can be
//! read, copied and compared by a person:
//!
//! ```text
//! fisk-admin-seal-key secret <64 hex digits: the 32-byte seed>
//! fisk-admin-seal-key public <64 hex digits: the 32-byte public key>
//! ```
//!
//! [`new_key`] writes the secret (0600, never over an existing file) and
//! the public key beside it (`<FILE>.pub`). Either file names the key a
//! seal must be signed by; only the secret signs.

use crate::error::{Error, Result};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use std::path::{Path, PathBuf};

const TAG: &str = "fisk-admin-seal-key";

/// A key as read from a file: the secret (which signs) or only the public key.
pub enum Key {
    /// A secret key: it signs, and its public key checks.
    Secret(SigningKey),
    /// A public key: it checks.
    Public(VerifyingKey),
}

impl Key {
    /// The public key, hex.
    pub fn public_hex(&self) -> String {
        crate::digest::hex(self.verifying().as_bytes())
    }

    fn verifying(&self) -> VerifyingKey {
        match self {
            Key::Secret(s) => s.verifying_key(),
            Key::Public(p) => *p,
        }
    }

    /// Sign `msg` (a secret key only).
    pub fn sign(&self, msg: &[u8]) -> Option<String> {
        match self {
            Key::Secret(s) => Some(crate::digest::hex(&s.sign(msg).to_bytes())),
            Key::Public(_) => None,
        }
    }
}

/// Whether `sig` (hex) is the signature of `msg` by the public key
/// `public` (hex).
pub fn verify(public: &str, msg: &[u8], sig: &str) -> bool {
    let (Some(pk), Some(sig)) = (unhex::<32>(public), unhex::<64>(sig)) else {
        return false;
    };
    let Ok(pk) = VerifyingKey::from_bytes(&pk) else {
        return false;
    };
    pk.verify(msg, &Signature::from_bytes(&sig)).is_ok()
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let b = s.as_bytes();
    if b.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        let pair = std::str::from_utf8(b.get(2 * i..2 * i + 2)?).ok()?;
        *o = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

fn bad(path: &Path, why: &str) -> Error {
    Error::Config {
        at: crate::Where::Path(path.to_path_buf()),
        message: format!("not a seal key: {why} (a key file is one line, `{TAG} secret HEX` or `{TAG} public HEX`)"),
    }
}

/// The key in `path` (a secret or a public key file).
pub fn load(path: &Path) -> Result<Key> {
    let bytes =
        crate::bounded::read_path(path, crate::bounded::SECRET).map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8(bytes).map_err(|_| bad(path, "it is not text"))?;
    let mut words = text.split_whitespace();
    if words.next() != Some(TAG) {
        return Err(bad(path, "it does not start with the tag"));
    }
    let kind = words.next();
    let hex = words.next().ok_or_else(|| bad(path, "no key"))?;
    let raw = unhex::<32>(hex).ok_or_else(|| bad(path, "the key is not 64 hex digits"))?;
    match kind {
        Some("secret") => Ok(Key::Secret(SigningKey::from_bytes(&raw))),
        Some("public") => VerifyingKey::from_bytes(&raw)
            .map(Key::Public)
            .map_err(|_| bad(path, "not a point of the curve")),
        _ => Err(bad(path, "neither secret nor public")),
    }
}

/// A new key: the secret written to `path` (0600, refused when `path`
/// exists) and its public key to `<path>.pub`. Returns the public key's
/// file.
pub fn new_key(path: &Path) -> Result<PathBuf> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| Error::Config {
        at: crate::Where::Process,
        message: format!("no randomness for a key: {e}"),
    })?;
    let key = SigningKey::from_bytes(&seed);
    let secret = format!("{TAG} secret {}\n", crate::digest::hex(&seed));
    let public = format!(
        "{TAG} public {}\n",
        crate::digest::hex(key.verifying_key().as_bytes())
    );
    let mut pub_path = path.as_os_str().to_owned();
    pub_path.push(".pub");
    let pub_path = PathBuf::from(pub_path);
    crate::durable::write_new(path, secret.as_bytes()).map_err(|e| Error::io(path, e))?;
    crate::durable::write_new(&pub_path, public.as_bytes()).map_err(|e| Error::io(&pub_path, e))?;
    Ok(pub_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_signs_and_its_public_key_checks_and_no_other_does() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("k");
        let pub_path = new_key(&path).unwrap();
        assert!(new_key(&path).is_err(), "never over an existing key");
        let secret = load(&path).unwrap();
        let public = load(&pub_path).unwrap();
        assert_eq!(secret.public_hex(), public.public_hex());
        let sig = secret.sign(b"root").unwrap();
        assert!(public.sign(b"root").is_none());
        assert!(verify(&public.public_hex(), b"root", &sig));
        assert!(!verify(&public.public_hex(), b"rooT", &sig));
        let other = d.path().join("other");
        new_key(&other).unwrap();
        assert!(!verify(&load(&other).unwrap().public_hex(), b"root", &sig));
        std::fs::write(d.path().join("bad"), "hello").unwrap();
        assert!(load(&d.path().join("bad")).is_err());
    }
}
