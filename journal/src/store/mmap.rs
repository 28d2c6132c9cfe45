//! Reading a whole journal into memory: memory-mapped when it is large, a
//! plain `read` otherwise or when mapping fails.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Read;
use std::ops::Deref;

/// Below this size a `read` is as fast as a mapping and has no caveats.
const MAP_THRESHOLD: u64 = 256 * 1024;

pub enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// The file's bytes as of now.
pub fn read(file: &mut File) -> std::io::Result<Bytes> {
    let len = file.metadata()?.len();
    if len >= MAP_THRESHOLD {
        // SAFETY: the mapping is read-only and private to this process. The
        // contract of the store is that journals are append-only: a writer
        // only ever adds bytes past the end we mapped, which does not change
        // the mapped range. The one exception is `repair`, which truncates a
        // torn tail under the run lock; a reader racing it could fault on
        // the cut page. Operators run `repair` on a stopped run, and the
        // torn bytes are a few hundred at most, so the window is tiny; the
        // plain-read fallback below is used whenever mapping fails.
        if let Ok(m) = unsafe { memmap2::MmapOptions::new().len(len as usize).map(&*file) } {
            return Ok(Bytes::Mapped(m));
        }
    }
    let mut buf = Vec::with_capacity(len as usize);
    file.read_to_end(&mut buf)?;
    Ok(Bytes::Owned(buf))
}
