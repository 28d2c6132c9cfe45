//! `repair` on the file backend: under the run lock, a torn final line is
//! cut (its bytes kept beside the journal first) or a missing final
//! newline added. Nothing else is ever changed.

use super::dir::{nofollow, open_error};
use super::{whole, FileStore};
use crate::error::{Error, Result};
use crate::lines::{self, Tail};
use crate::store::Repair;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

impl FileStore {
    /// Fix the tail only (see [`Repair`]); with `dry_run`, say what would be done.
    pub fn repair(&self, run: &str, dry_run: bool) -> Result<Repair> {
        let path = self.require(run)?;
        let _lock = self.lock_unless_dry(run, dry_run)?;
        let mut file = nofollow()
            .read(true)
            .write(!dry_run)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| open_error(&path, e))?;
        let bytes = whole::read_regular(&path, &mut file)?;
        let (entries, tail) = match lines::decode_all(&bytes) {
            Ok(x) => x,
            Err(bad) => {
                let after = lines::split(&bytes).filter(|l| l.line > bad.line).count();
                return Err(Error::Refused {
                    run: run.to_owned(),
                    message: format!(
                        "{} line {} (byte {}) does not parse ({}), and {after} line(s) follow it. \
                         repair only cuts a torn final line: cutting here would throw away the \
                         {after} intact record(s) after it, and dropping just this line would leave \
                         a hole in the sequence that resume could not fold. Nothing was changed. \
                         Run `fisk-admin verify {run}` for the full report and recover the line \
                         from a backup or by hand.",
                        path.display(),
                        bad.line,
                        bad.offset,
                        bad.error,
                    ),
                });
            }
        };
        let records = entries.len();
        match tail {
            Tail::Clean => Ok(Repair::Nothing { records }),
            Tail::Unterminated { line, .. } => {
                if !dry_run {
                    file.write_all(b"\n")
                        .and_then(|()| file.sync_data())
                        .map_err(|e| Error::io(&path, e))?;
                }
                Ok(Repair::AddedNewline { line, records })
            }
            Tail::Torn {
                line,
                offset,
                bytes: torn,
                terminated,
                ..
            } => {
                let len = torn.len() as u64 + u64::from(terminated);
                let backup = if dry_run {
                    None
                } else {
                    let saved = bytes.get(offset as usize..).unwrap_or_default();
                    let backup = self.save_backup(run, saved)?;
                    file.set_len(offset)
                        .and_then(|()| file.sync_all())
                        .map_err(|e| Error::io(&path, e))?;
                    Some(backup)
                };
                Ok(Repair::CutTorn {
                    line,
                    offset,
                    len,
                    backup,
                    records,
                })
            }
        }
    }

    /// Save cut bytes beside the journal: `<id>.torn-<UTC time>.bak`, 0600,
    /// fsynced with its directory entry before the journal is touched. The
    /// name does not end in `.json`, so no reader takes it for a journal.
    fn save_backup(&self, run: &str, bytes: &[u8]) -> Result<PathBuf> {
        self.keep_beside(run, "torn", |path| crate::durable::write_new(path, bytes))
    }
}
