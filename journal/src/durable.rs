//! The two durable-file primitives every writer shares, whatever the
//! backend: a new file written and fsynced (never replacing one, never
//! through a link), and a directory fsynced so the names in it last. A
//! leaf: the file backend, JetStream's backups and `upgrade` all use these.
//!
//! Crate-internal: only the stores and `upgrade` write durable files.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A new file (never replacing one, never through a symbolic link)
/// holding `bytes`, 0600, fsynced. The caller fsyncs its directory.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// fsync a directory: the names created or removed in it are durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}
