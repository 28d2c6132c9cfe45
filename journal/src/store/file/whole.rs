//! Opening and reading a whole journal file.
//!
//! Journals are read with plain `read`s, never mapped: a mapping faults
//! (SIGBUS, killing the process with no message) when the file is cut
//! while it is read, which `repair` does to a torn tail and which readers,
//! who never lock (SPEC 7), cannot exclude. A mapping measured no faster
//! (bench/RESULTS.md).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Open a journal to read it. The open does not block, so a FIFO in a
/// journal's place cannot hang it, and anything but a regular file is
/// refused ([`regular`]).
pub fn open(path: &Path) -> io::Result<File> {
    // Refused before the open too: opening a device can have effects of
    // its own. (The check on the open file below is the one that counts:
    // the name may change in between.)
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            not_a_journal(kind),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    regular(&file)?;
    Ok(file)
}

/// `Ok` when `file` is a regular file. A FIFO would block a read forever,
/// a device (a link to `/dev/zero`) never ends, and a directory is not a
/// journal whatever its name.
pub fn regular(file: &File) -> io::Result<()> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        not_a_journal(kind),
    ))
}

/// What an entry that is not a regular file is, and what to do about it.
pub(crate) fn not_a_journal(kind: std::fs::FileType) -> String {
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    };
    format!("is {what}, not a journal file; move it out of the store directory")
}

/// The file's bytes: as many as it held when this was called (a writer
/// appending meanwhile adds nothing to what is returned; a file cut
/// meanwhile returns what is left).
pub fn read(file: &mut File) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    let mut buf = Vec::new();
    let cap = usize::try_from(len).map_err(|_| too_large(len))?;
    buf.try_reserve_exact(cap).map_err(|_| too_large(len))?;
    file.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// A journal opened for writing, read whole after checking that it is a
/// regular file ([`regular`]).
pub(crate) fn read_regular(path: &Path, file: &mut File) -> crate::Result<Vec<u8>> {
    regular(file)
        .and_then(|()| read(file))
        .map_err(|e| crate::Error::io(path, e))
}

fn too_large(len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!("{len} bytes is more than this machine can hold in memory"),
    )
}
