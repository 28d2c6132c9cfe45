//! A journal read from a file named by its path, with no store: a journal
//! copied off a host (issue 27.5). The run id is its meta record's (the
//! file may have any name); it is read with the reader's rule, bounded
//! as every operator-named file is ([`crate::bounded::RECORDS`]), and a
//! fold refusal points at the file's line.

use crate::error::{Error, Result, Where};
use crate::fold::{FoldOptions, RunState};
use crate::lines;
use crate::record::Payload;
use crate::store::Journal;
use std::path::{Path, PathBuf};

/// A journal file outside any store, read whole.
#[derive(Debug)]
pub struct Loose {
    /// The file's path, as given.
    pub path: PathBuf,
    /// The run read (its `run` the meta record's run id, else the file's
    /// name without `.json`).
    pub journal: Journal,
}

impl Loose {
    /// Read the journal file at `path` with the reader's rule: a torn tail
    /// is dropped, a line that does not parse before it is an error naming
    /// the line.
    pub fn read(path: &Path) -> Result<Loose> {
        let bytes = crate::bounded::read_path(path, crate::bounded::RECORDS)
            .map_err(|e| Error::io(path, e))?;
        let (entries, tail) = lines::decode_all(&bytes).map_err(|bad| Error::Corrupt {
            run: stem(path),
            at: Where::Line {
                path: path.to_path_buf(),
                line: bad.line,
                offset: bad.offset,
            },
            message: format!("line does not parse: {}", bad.error),
        })?;
        let run = run_of(path, &bytes);
        Ok(Loose {
            path: path.to_path_buf(),
            journal: Journal {
                run,
                entries,
                tail,
                bytes: bytes.len() as u64,
            },
        })
    }

    /// The journal file's bytes exactly as stored, with its run id (the
    /// meta record's, else the file's name without `.json`): what a
    /// transcript indexes, nothing decoded but the first line.
    pub fn bytes(path: &Path) -> Result<(String, Vec<u8>)> {
        let bytes = crate::bounded::read_path(path, crate::bounded::RECORDS)
            .map_err(|e| Error::io(path, e))?;
        Ok((run_of(path, &bytes), bytes))
    }

    /// `verify` of the journal file at `path` (its content: a file outside
    /// a store has no mode or lock to check), however damaged it is.
    pub fn verify(
        path: &Path,
        check: Option<&dyn crate::verify::RecordCheck>,
    ) -> Result<crate::verify::Report> {
        let (run, bytes) = Loose::bytes(path)?;
        Ok(crate::verify::verify_bytes(&run, &bytes, check))
    }

    /// Fold the journal, a refusal pointing at the file's line.
    pub fn fold(&self, opts: FoldOptions) -> Result<RunState> {
        let j = &self.journal;
        crate::fold::fold_with(j.records(), opts).map_err(|source| Error::Fold {
            run: j.run.clone(),
            at: j.refused_at(&source).map(|e| Where::Line {
                path: self.path.clone(),
                line: e.line,
                offset: e.offset,
            }),
            source,
        })
    }
}

/// The run id of the journal `bytes` read from `path`: its meta record's,
/// else the file's name without `.json`.
pub(crate) fn run_of(path: &Path, bytes: &[u8]) -> String {
    let first = lines::split(bytes)
        .next()
        .and_then(|l| crate::record::Record::decode(l.bytes).ok());
    match first.and_then(|r| r.payload) {
        Some(Payload::Meta(m)) if !m.run_id.is_empty() => m.run_id,
        _ => stem(path),
    }
}

/// The file's name without `.json`: the run id when no meta record gives one.
fn stem(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    name.strip_suffix(".json").unwrap_or(&name).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_id_is_the_meta_records_and_a_fold_refusal_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("copied-off-host.jsonl");
        std::fs::copy("../testdata/runs-v1/tool-batch.json", &p).unwrap();
        let l = Loose::read(&p).unwrap();
        assert_eq!(l.journal.run, "tool-batch");
        assert_eq!(l.journal.last_seq(), 7);
        assert_eq!(l.fold(FoldOptions::default()).unwrap().run_id, "tool-batch");
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(
            b"{\"seq\":3,\"protocol\":\"io.choria.fisk-ai.v1.session.memory\",\"memory\":{}}\n",
        );
        std::fs::write(&p, &bytes).unwrap();
        let e = Loose::read(&p)
            .unwrap()
            .fold(FoldOptions::default())
            .unwrap_err();
        assert!(
            matches!(&e, Error::Fold { at: Some(Where::Line { path, line: 8, .. }), .. } if *path == p),
            "{e:?}"
        );
        std::fs::write(&p, b"{not json\n{\"seq\":1}\n").unwrap();
        assert!(matches!(Loose::read(&p), Err(Error::Corrupt { .. })));
    }
}
