//! Copying one run into the destination: compared first, then continued or
//! created, records appended as they are stored in the source.

use super::check::{after_verify, judge};
use super::report::{append_failed, changed_meanwhile, failed, Check, Copied, Outcome, RunReport};
use super::select::{read_source, Source};
use super::{Created, Cx, Options, Progress};
use crate::digest::digest;
use crate::error::{Error, Result};
use crate::lines::Tail;
use crate::record::Entry;
use crate::store::{Appender, Journal, Prefetched, Store};
use std::sync::atomic::Ordering;

/// How appending a run's records ended.
enum AppendEnd {
    /// Every record stored.
    Done,
    /// Some seqs were already there (skipped as duplicates).
    AlreadyThere,
    /// An append failed after `stored` records.
    Failed { error: Error, stored: u64 },
}

/// A writer for `run` in `store`: a new run when `create`, else continuing
/// the existing one.
pub fn dest_appender(store: &Store, run: &str, create: bool) -> Result<Box<dyn Appender>> {
    if create {
        store.create_appender(run)
    } else {
        store.open_appender(run)
    }
}

/// Copy one run: [`Copied::Ended`] when the run ends here (skipped,
/// conflict, failed, dry run), else the report and what the copy must be
/// verified against (the caller reads every copy back once all are made).
pub(super) fn copy_run(
    from: &Store,
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    pre: Option<Prefetched>,
) -> Copied {
    match read_source(from, run, opts, pre) {
        Ok(source) => write_dest(to, run, opts, progress, source),
        Err(rep) => Copied::Ended(rep),
    }
}

/// The report of a run handed to the creator, from how its creation ended
/// (`None`: it never ended, the creator failed). A run that already exists
/// is copied in place instead (compared, then continued); `dest` is what
/// the bulk read found there.
pub(super) fn after_create(
    cx: &Cx,
    mut rep: RunReport,
    check: Check,
    ended: Option<Created>,
    dest: Option<&(u64, String)>,
) -> Copied {
    let (from, to, opts, progress) = (cx.from, cx.to, cx.opts, cx.progress);
    let want = check.records as u64;
    match ended {
        Some(Created {
            stored: n,
            end: Ok(()),
        }) if n == want => {
            rep.appended = n;
            Copied::ToVerify(rep, check)
        }
        Some(Created {
            stored: n,
            end: Ok(()),
        }) => {
            rep.appended = n;
            Copied::Ended(changed_meanwhile(rep, 0, check.records))
        }
        // Refused at seq 1, nothing written: the run exists. Compare it
        // and continue it (the source is read again: its records went to
        // the creator). `dest`, what the bulk read found there, settles a
        // byte-identical prefix; anything else is read on its own, which
        // also says where it differs.
        Some(Created {
            stored: 0,
            end: Err(Error::Exists { .. } | Error::Live { .. }),
        }) => {
            let run = rep.run.clone();
            let source = match read_source(from, &run, opts, None) {
                Ok(src) => src,
                Err(rep) => return Copied::Ended(rep),
            };
            match dest {
                // The whole run, byte-identical: the bulk read verified it.
                Some((n, sha))
                    if *n == source.journal.entries.len() as u64
                        && holds_prefix(&source.journal, *n, sha) =>
                {
                    let mut rep = source.rep;
                    rep.already = *n;
                    let c = Check {
                        records: source.journal.entries.len(),
                        sha256: source.want,
                    };
                    let rep = judge(rep, c, source.journal.entries.len(), sha.clone());
                    Copied::Ended(after_verify(from, rep, opts))
                }
                Some((n, sha)) if holds_prefix(&source.journal, *n, sha) => {
                    let n = usize::try_from(*n).unwrap_or(usize::MAX);
                    continue_copy(to, &run, opts, progress, source, n, true)
                }
                _ => write_dest(to, &run, opts, progress, source),
            }
        }
        Some(Created {
            stored: n,
            end: Err(e),
        }) => {
            rep.appended = n;
            Copied::Ended(append_failed(rep, e, n))
        }
        None => Copied::Ended(rep.end(
            Outcome::Failed,
            "the JetStream writer stopped before this run was copied; re-run to continue",
        )),
    }
}

/// Copy a source run into `to`: compared first, then continued or created.
pub(super) fn write_dest(
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    source: Source,
) -> Copied {
    let Source {
        rep,
        journal: src,
        want,
    } = source;

    // The destination, read first: compared, then continued or created.
    let dest = match to.read(run) {
        Ok(j) => Some(j),
        Err(Error::NotFound { .. }) => None,
        Err(e @ Error::Corrupt { .. }) => {
            return Copied::Ended(rep.end(
                Outcome::Conflict,
                format!("the destination run cannot be read ({e}); it was left untouched"),
            ))
        }
        Err(e) => return Copied::Ended(failed(rep, e)),
    };
    let already = match &dest {
        Some(d) => match compare(&src, d) {
            Ok(n) => n,
            Err(why) => {
                return Copied::Ended(rep.end(
                    Outcome::Conflict,
                    format!("{why}; the destination was left untouched"),
                ))
            }
        },
        None => 0,
    };
    continue_copy(
        to,
        run,
        opts,
        progress,
        Source {
            rep,
            journal: src,
            want,
        },
        already,
        dest.is_some(),
    )
}

/// The rest of [`write_dest`] once the destination is known to hold the
/// source's first `already` records, byte-identical (`exists`: it holds
/// the run at all).
pub(super) fn continue_copy(
    to: &Store,
    run: &str,
    opts: &Options,
    progress: &Progress,
    source: Source,
    already: usize,
    exists: bool,
) -> Copied {
    let Source {
        mut rep,
        journal: mut src,
        want,
    } = source;
    rep.already = already as u64;
    if opts.dry_run {
        return Copied::Ended(if already == src.entries.len() {
            rep.end(Outcome::Complete, "")
        } else {
            let note = if already > 0 {
                format!("would continue after seq {already}")
            } else {
                String::new()
            };
            rep.end(Outcome::WouldCopy, note)
        });
    }

    // Copy what is missing, logged first (issue 38).
    let n = src.entries.len();
    if already < n {
        if let Err(e) = progress.batch.open(to) {
            return Copied::Ended(failed(rep, e));
        }
    }
    let appended = if !exists {
        // A new run is written whole, as its store writes one best.
        let batch = batch_of(std::mem::take(&mut src.entries), 0);
        let want_n = batch.len() as u64;
        counted(to.create_whole(run, batch), want_n, &mut rep, progress)
    } else if already < n {
        let mut app = match dest_appender(to, run, !exists) {
            Ok(a) => a,
            Err(e) => return Copied::Ended(failed(rep, e)),
        };
        if app.last_seq() != already as u64 {
            return Copied::Ended(rep.end(
                Outcome::Conflict,
                format!(
                    "the destination changed while migrating (it now ends at seq {}, was {already}); re-run to compare again",
                    app.last_seq()
                ),
            ));
        }
        let batch = batch_of(std::mem::take(&mut src.entries), already);
        append_from(app.as_mut(), batch, &mut rep, progress)
    } else {
        AppendEnd::Done
    };
    match appended {
        AppendEnd::Done => {}
        AppendEnd::Failed { error, stored } => {
            return Copied::Ended(append_failed(rep, error, stored))
        }
        AppendEnd::AlreadyThere => return Copied::Ended(changed_meanwhile(rep, already, n)),
    }
    let check = Check {
        records: n,
        sha256: want,
    };
    Copied::ToVerify(rep, check)
}

/// Append `batch` (the source's records after the first `already`: see
/// [`batch_of`]), counting them in the report.
fn append_from(
    app: &mut dyn Appender,
    batch: Vec<(u64, Vec<u8>)>,
    rep: &mut RunReport,
    progress: &Progress,
) -> AppendEnd {
    let want_n = batch.len() as u64;
    counted(app.append_batch(batch), want_n, rep, progress)
}

/// Count what an append of `want_n` records stored (see [`append_from`]).
fn counted(
    (stored, result): (u64, Result<()>),
    want_n: u64,
    rep: &mut RunReport,
    progress: &Progress,
) -> AppendEnd {
    rep.appended += stored;
    progress.records.fetch_add(stored, Ordering::Relaxed);
    match result {
        Err(error) => AppendEnd::Failed { error, stored },
        Ok(()) if stored != want_n => AppendEnd::AlreadyThere,
        Ok(()) => AppendEnd::Done,
    }
}

/// The records of `entries` after the first `already`, as appended.
pub(super) fn batch_of(entries: Vec<Entry>, already: usize) -> Vec<(u64, Vec<u8>)> {
    entries
        .into_iter()
        .skip(already)
        .map(|e| (e.record.seq, e.raw))
        .collect()
}

/// Whether the first `n` records of `src` have digest `sha` (a
/// destination holding `n` records with that digest holds them).
fn holds_prefix(src: &Journal, n: u64, sha: &str) -> bool {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    match src.entries.get(..n) {
        Some(head) => digest(head.iter().map(|e| e.raw.as_slice())) == sha,
        None => false,
    }
}

/// How many records of `src` the destination already holds, byte-identical,
/// or why it is a different run.
fn compare(src: &Journal, dest: &Journal) -> std::result::Result<usize, String> {
    if let Tail::Torn { line, .. } = &dest.tail {
        return Err(format!(
            "the destination run has a torn tail at line {line}; repair it first"
        ));
    }
    if dest.entries.len() > src.entries.len() {
        return Err(format!(
            "the destination run has {} records, the source only {}",
            dest.entries.len(),
            src.entries.len()
        ));
    }
    for (i, (d, s)) in dest.entries.iter().zip(&src.entries).enumerate() {
        if d.raw != s.raw {
            return Err(format!(
                "the destination run differs from the source at record {} (seq {})",
                i + 1,
                s.record.seq
            ));
        }
    }
    Ok(dest.entries.len())
}
