//! Reading what an operator names (an agent file, a secret, a context, a
//! credentials file, a fingerprint, a journal to validate) with a bound on
//! its size: `/dev/zero`, a FIFO that never ends or a mistaken
//! multi-gigabyte file is refused once it passes the bound, never read
//! until memory runs out.
//!
//! Public API: the binary reads operator-named files through [`read`] and
//! [`read_path`] with the bounds [`SECRET`], [`SETTINGS`] and [`RECORDS`].

use std::io::{self, Read};
use std::path::Path;

/// A secret: a password, a token, an nkey seed.
pub const SECRET: u64 = 64 << 10;
/// A settings file: an agent file, a NATS context or credentials file, a
/// fingerprint, a schema.
pub const SETTINGS: u64 = 16 << 20;
/// A file of records: a turns file, a journal given to `validate --file`.
pub const RECORDS: u64 = 4 << 30;

/// At most `max` bytes of `r`; more is an error saying so.
pub fn read(r: impl Read, max: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than {} bytes, the most read here: is it the file meant?",
                max
            ),
        ));
    }
    Ok(buf)
}

/// At most `max` bytes of the file at `path`.
pub fn read_path(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read(std::fs::File::open(path)?, max)
}

/// At most `max` bytes of the file at `path`, as UTF-8 text.
pub(crate) fn read_string(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_path(path, max)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_stops_past_its_bound_and_says_so() {
        let e = read_path(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(e.to_string().contains("larger than 1024 bytes"), "{e}");
        assert_eq!(read(&b"abc"[..], 3).unwrap(), b"abc");
        assert!(read(&b"abcd"[..], 3).is_err());
    }
}
