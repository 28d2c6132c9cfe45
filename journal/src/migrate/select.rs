//! Choosing the runs and reading each source run with migrate's checks:
//! the reader's rule, live runs, seqs 1..N, [`Lever`]s.

use super::report::{failed, Outcome, RunReport};
use super::{Lever, Options};
use crate::digest::digest;
use crate::error::{Error, Result};
use crate::lines::Tail;
use crate::record::Entry;
use crate::store::{Journal, Prefetched, Store};

/// The runs to copy: the named ones (checked) or every run of the source,
/// with `include_corrupt` those whose messages have no meta record too
/// (JetStream, `orphan-messages`), in id order.
pub fn select(from: &Store, named: &[String], include_corrupt: bool) -> Result<Vec<String>> {
    if named.is_empty() {
        let mut runs = from.runs()?;
        if include_corrupt {
            runs.extend(from.orphans()?.into_iter().map(|o| o.run));
            runs.sort();
        }
        return Ok(runs);
    }
    let mut runs = Vec::with_capacity(named.len());
    for r in named {
        crate::id::check(r)?;
        if !runs.contains(r) {
            runs.push(r.clone());
        }
    }
    Ok(runs)
}

/// A source run read and checked, ready to copy.
pub(super) struct Source {
    pub(super) rep: RunReport,
    pub(super) journal: Journal,
    /// SHA-256 over its bodies.
    pub(super) want: String,
}

/// Read and check the source run (the reader's rule, live runs, seqs
/// 1..N, [`Options::include_corrupt`]): `Err` with the final report when the run
/// ends here.
pub(super) fn read_source(
    from: &Store,
    run: &str,
    opts: &Options,
    pre: Option<Prefetched>,
) -> std::result::Result<Source, RunReport> {
    let rep = RunReport::new(run);
    let corrupt = (opts.named)(Lever::IncludeCorrupt);

    // The source: whether its writer is there, as the store can tell
    // (a lock for certain; SPEC 8's hold only suspects one, which matters
    // before a delete).
    if !opts.allow_live {
        match from.live_for_copy(run, opts.delete_source) {
            Ok(true) => {
                return Err(rep.end(
                    Outcome::SkippedLive,
                    format!("a writer holds the source run now; let it finish, or pass {} to copy what is stored", (opts.named)(Lever::AllowLive)),
                ))
            }
            Ok(false) => {}
            Err(e) => return Err(failed(rep, e)),
        }
    }
    let (mut src, stopped) = match from.journal_for_copy(run, pre, opts.include_corrupt, opts.cut) {
        Ok(x) => x,
        Err(e @ Error::Corrupt { .. }) => {
            return Err(rep.end(
                Outcome::SkippedCorrupt,
                format!("{e}; {corrupt} copies the readable prefix"),
            ))
        }
        Err(e) => return Err(failed(rep, e)),
    };
    let mut rep = rep;
    if let (Some(cut), true) = (
        opts.cut,
        src.entries.is_empty() && stopped.is_none() && matches!(src.tail, Tail::Clean),
    ) {
        return Err(rep.end(
            Outcome::SkippedLive,
            format!("created after the cut (stream sequence {cut}, when migrate started): the next migrate copies it"),
        ));
    }
    if let Some(why) = stopped {
        rep.partial = true;
        rep.prefix_only = true;
        rep.notes.push(format!(
            "source is corrupt ({why}): copied only its readable prefix ({corrupt})"
        ));
    }
    if let Tail::Torn {
        line, bytes, error, ..
    } = &src.tail
    {
        rep.partial = true;
        rep.notes.push(format!(
            "source torn tail dropped: line {line}, {} bytes ({error})",
            bytes.len()
        ));
    }
    if let Some(bad) = first_out_of_order(&src.entries) {
        let seq = src.entries.get(bad).map_or(0, |e| e.record.seq);
        let what = format!(
            "record {} has seq {seq}, not {}: the run's seqs are not 1..N",
            bad + 1,
            bad + 1
        );
        if !opts.include_corrupt {
            // No record before it: a run without its meta record
            // (`orphan-messages`), which the flag copies whole.
            if bad == 0 && matches!(from.orphan(run), Ok(Some(_))) {
                return Err(rep.end(
                    Outcome::SkippedCorrupt,
                    format!("{what}: it has no meta record (orphan-messages); {corrupt} copies its records as they are stored"),
                ));
            }
            return Err(rep.end(
                Outcome::SkippedCorrupt,
                format!("{what}; {corrupt} copies the records before it"),
            ));
        }
        src.entries.truncate(bad);
        rep.partial = true;
        rep.prefix_only = true;
        rep.notes.push(format!(
            "{what}: copied only the {bad} records before it ({corrupt})"
        ));
    }
    if src.entries.is_empty() {
        return Err(rep.end(
            Outcome::SkippedCorrupt,
            "the source run has no readable record; nothing to copy",
        ));
    }
    // A run the agent would refuse to read is not put where it looks
    // (a shared stream) without a word.
    if let Some(why) = agent_refuses(run, &src) {
        if !opts.include_corrupt {
            return Err(rep.end(
                Outcome::SkippedCorrupt,
                format!("{why}: the agent refuses this run; {corrupt} copies it anyway"),
            ));
        }
        rep.notes.push(format!(
            "{why}: copied although the agent refuses it ({corrupt})"
        ));
    }
    if opts.upgrade {
        upgrade_meta(&mut src, &mut rep, (opts.named)(Lever::Upgrade))?;
    }
    rep.records = src.entries.len() as u64;
    rep.bytes = src.entries.iter().map(|e| e.raw.len() as u64 + 1).sum();
    let want = digest(src.entries.iter().map(|e| e.raw.as_slice()));
    Ok(Source {
        rep,
        journal: src,
        want,
    })
}

/// Why the agent would refuse `src` (verify's code and what it found), if
/// it would: its first record is not a meta record at seq 1, the meta
/// record names another run, or its version is one no agent reads.
fn agent_refuses(run: &str, src: &crate::store::Journal) -> Option<String> {
    use crate::record::{Payload, VERSION, VERSION_AUGUST};
    let first = src.entries.first()?;
    match &first.record.payload {
        Some(Payload::Meta(m)) if first.record.seq == 1 => {
            if m.run_id != run {
                Some(format!("run-id-mismatch (meta.run_id is {:?})", m.run_id))
            } else if m.version > VERSION_AUGUST {
                Some(format!("version-newer (format version {})", m.version))
            } else if m.version != VERSION && m.version != VERSION_AUGUST {
                Some(format!("version-older (format version {})", m.version))
            } else {
                None
            }
        }
        Some(Payload::Meta(_)) => Some(format!(
            "meta-seq (the meta record has seq {})",
            first.record.seq
        )),
        _ => Some("no-meta (the first record is not a meta record)".into()),
    }
}

/// [`Options::upgrade`]: a version-3 source is copied as version 1, its meta
/// record's version the only byte that differs; the copy is verified
/// against the upgraded bytes. Other versions are copied as they are.
fn upgrade_meta(
    src: &mut Journal,
    rep: &mut RunReport,
    upgrade: &str,
) -> std::result::Result<(), RunReport> {
    use crate::record::{Payload, VERSION, VERSION_AUGUST};
    let Some(first) = src.entries.first_mut() else {
        return Ok(());
    };
    let Some(Payload::Meta(m)) = first.record.payload.as_mut() else {
        return Ok(());
    };
    if m.version != VERSION_AUGUST {
        return Ok(());
    }
    match crate::upgrade::meta_as_current(&first.raw) {
        Ok(raw) => {
            first.raw = raw;
            m.version = VERSION;
            rep.notes.push(format!(
                "upgraded while copying: version 3 -> 1 ({upgrade})"
            ));
            Ok(())
        }
        Err(e) => Err(rep.clone().end(
            Outcome::SkippedCorrupt,
            format!("{upgrade} cannot convert it: {e}"),
        )),
    }
}

/// The index of the first entry whose seq is not its position.
fn first_out_of_order(entries: &[Entry]) -> Option<usize> {
    entries
        .iter()
        .enumerate()
        .find(|(i, e)| e.record.seq != *i as u64 + 1)
        .map(|(i, _)| i)
}
