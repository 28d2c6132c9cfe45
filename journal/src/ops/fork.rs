//! `fork` (SPEC 6.1, "Forking"): a new run made of a run's first N
//! records, to retry from a point. Records 2..N are copied byte for byte;
//! the meta record is the source's with its `run_id` changed and every
//! other byte kept, so the fork keeps the source's format version, times
//! and fingerprint. It is here, not in a front end, because what a fork
//! may be cut from is a rule: records 1..N must be whole and numbered
//! 1..N (what follows N may be damaged, it is not copied), and the new id
//! must be free. Cutting inside a batch leaves a pending batch, as a crash
//! there would; `resume` completes it.
//!
//! Every check is made before anything is written; the new run is then
//! written whole (`Store::create_marked`: on JetStream, marked until it is
//! whole, so a fork killed half way is never taken for a shorter run, and
//! the same fork again finishes it), and the source is only read.

use super::{refuse, Op, Why};
use crate::record::{Generation, Payload};
use crate::store::Store;
use crate::Result;

/// What to fork.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The source run's id.
    pub run: &'a str,
    /// The last seq the fork keeps (N).
    pub at_seq: u64,
    /// The new run's id.
    pub new_id: &'a str,
    /// Check everything and write nothing.
    pub dry_run: bool,
}

/// What a fork made (or, on a dry run, would make).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    /// The new run's id.
    pub run: String,
    /// The source run's id.
    pub from: String,
    /// How many records the new run holds (N).
    pub records: u64,
    /// The source's last seq.
    pub source_last: u64,
    /// The format version of both runs.
    pub version: i64,
    /// The fork ends inside a batch (a pending batch `resume` completes).
    pub pending: bool,
    /// The run was written (false on a dry run).
    pub written: bool,
    /// An earlier run of this fork was interrupted half way: this one
    /// finished it (or, on a dry run, would).
    pub resumed: bool,
}

/// Check the request, then (unless a dry run) write the new run.
pub fn fork(store: &Store, req: &Request) -> Result<Forked> {
    let run = req.run;
    crate::id::check(req.new_id)?;
    if req.at_seq == 0 {
        let last = store.read_until(run, 1)?.last_seq();
        return Err(out_of_range(run, 0, last));
    }
    // Records past N may be damaged: they are not copied.
    let journal = store.read_until(run, req.at_seq)?;
    let source_last = journal.last_seq();
    if req.at_seq > source_last {
        return Err(out_of_range(run, req.at_seq, source_last));
    }
    let kept: Vec<_> = journal
        .entries
        .iter()
        .take_while(|e| e.record.seq <= req.at_seq)
        .collect();
    // Records 1..N are exactly seqs 1..N, in order.
    let numbered = kept.len() as u64 == req.at_seq
        && kept.iter().zip(1u64..).all(|(e, seq)| e.record.seq == seq);
    if !numbered {
        return Err(refuse(Op::Fork, run, Why::NotWhole { seq: req.at_seq }));
    }
    let state = crate::fold(kept.iter().map(|e| &e.record))
        .map_err(|e| crate::Error::refused(run, format!("records 1..{}: {e}", req.at_seq)))?;
    if Generation::of(state.version).is_none() {
        return Err(refuse(
            Op::Fork,
            run,
            Why::NotWritable {
                version: state.version,
            },
        ));
    }
    let (first, rest) = kept.split_first().ok_or_else(|| out_of_range(run, 0, 0))?;
    let old_id = match &first.record.payload {
        Some(Payload::Meta(m)) => m.run_id.as_str(),
        _ => return Err(refuse(Op::Fork, run, Why::NotWhole { seq: 1 })),
    };
    let meta = crate::record::edit::meta_with_run_id(&first.raw, old_id, req.new_id)
        .map_err(|e| crate::Error::refused(run, e))?;
    // What the stream must allow, asked before anything (dry runs too).
    store.check_whole_write(req.new_id)?;
    let mut intent = crate::store::Intent {
        command: vec![
            "fork".into(),
            run.into(),
            "--at-seq".into(),
            req.at_seq.to_string(),
            "--as".into(),
            req.new_id.into(),
        ],
        at: crate::time::Time::now(),
    };
    // A fork of the same run, seq and id that was interrupted is finished;
    // any other half-written run of that id is refused, naming its command.
    let resumed = match store.pending(req.new_id)? {
        Some(p) if p.is_of(&intent) => {
            intent.at = p.began().unwrap_or(intent.at);
            true
        }
        Some(p) => return Err(p.refusal(req.new_id)),
        None if store.exists(req.new_id)? => {
            return Err(crate::Error::Exists {
                run: req.new_id.to_owned(),
                at: store.place(),
            })
        }
        None => false,
    };
    let mut forked = Forked {
        run: req.new_id.to_owned(),
        from: run.to_owned(),
        records: req.at_seq,
        source_last,
        version: state.version,
        pending: state.pending.is_some(),
        written: false,
        resumed,
    };
    if req.dry_run {
        return Ok(forked);
    }
    let mut records = Vec::with_capacity(kept.len());
    records.push((1, meta));
    records.extend(rest.iter().map(|e| (e.record.seq, e.raw.clone())));
    let plan = crate::store::Plan {
        op: Op::Fork.word().to_owned(),
        run: req.new_id.to_owned(),
        before: None,
        after: Some(crate::audit::Digest::of_lines(
            records.iter().map(|(_, r)| r.as_slice()),
            b"",
        )),
        written: crate::audit::Seqs::range(1, records.len() as u64),
        detail: Some(format!("forked from run {run} at seq {}", req.at_seq)),
        ..Default::default()
    };
    store.audited(&plan, || store.create_marked(req.new_id, records, &intent))?;
    forked.written = true;
    Ok(forked)
}

fn out_of_range(run: &str, seq: u64, last: u64) -> crate::Error {
    refuse(Op::Fork, run, Why::OutOfRange { seq, last })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Address;
    use crate::Error;

    fn store_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Store) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            let p = dir.path().join(format!("{name}.json"));
            std::fs::write(&p, bytes).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let store = Address::File {
            dir: dir.path().to_path_buf(),
        }
        .open(&Default::default(), std::time::Duration::ZERO)
        .unwrap();
        (dir, store)
    }

    const V1: &[u8] = include_bytes!("../../../testdata/agent-journals/v1/g-deferral-waiting.json");
    const V3: &[u8] = include_bytes!("../../../testdata/agent-journals/v3/g-deferral-waiting.json");

    fn req<'a>(at_seq: u64, new_id: &'a str) -> Request<'a> {
        Request {
            run: "src",
            at_seq,
            new_id,
            dry_run: false,
        }
    }

    fn lines(b: &[u8]) -> Vec<&[u8]> {
        b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).collect()
    }

    #[test]
    fn a_fork_copies_records_two_to_n_and_renames_the_meta_record() {
        for source in [V1, V3] {
            let (dir, store) = store_with(&[("src", source)]);
            let forked = fork(&store, &req(3, "new")).unwrap();
            assert!(forked.written);
            assert_eq!(forked.records, 3);
            let made = std::fs::read(dir.path().join("new.json")).unwrap();
            let (src, new) = (lines(source), lines(&made));
            assert_eq!(new.len(), 3);
            assert_eq!(new.get(1..), src.get(1..3));
            let want = String::from_utf8_lossy(src[0])
                .replace("\"run_id\":\"g-deferral-waiting\"", "\"run_id\":\"new\"");
            assert_eq!(String::from_utf8_lossy(new[0]), want);
            // The original is untouched; the fork reads as a run.
            assert_eq!(std::fs::read(dir.path().join("src.json")).unwrap(), source);
            let st = crate::fold(store.read("new").unwrap().records()).unwrap();
            assert_eq!(st.run_id, "new");
            assert_eq!(forked.version, st.version);
        }
    }

    #[test]
    fn refusals_write_nothing() {
        let (dir, store) = store_with(&[("src", V1), ("taken", V3)]);
        let last = store.read("src").unwrap().last_seq();
        for (n, id) in [(0, "new"), (last + 1, "new")] {
            let e = fork(&store, &req(n, id)).unwrap_err();
            assert!(
                matches!(&e, Error::Refused(r) if matches!(r.why, Why::OutOfRange { .. })),
                "{e:?}"
            );
        }
        assert!(fork(&store, &req(2, "bad id")).is_err());
        assert!(matches!(
            fork(&store, &req(2, "taken")),
            Err(Error::Exists { .. })
        ));
        let dry = fork(
            &store,
            &Request {
                dry_run: true,
                ..req(last, "new")
            },
        )
        .unwrap();
        assert!(!dry.written);
        assert!(!dir.path().join("new.json").exists());
    }

    #[test]
    fn damage_past_n_is_left_behind_and_damage_before_it_refused() {
        let mut broken = V1.to_vec();
        // A damaged last record: records before it fork.
        let last_nl = broken.len() - 1;
        let start = broken[..last_nl].iter().rposition(|c| *c == b'\n').unwrap() + 1;
        broken.splice(start..last_nl, b"{not json".iter().copied());
        broken.extend_from_slice(b"{\"seq\":99}\n");
        let (_dir, store) = store_with(&[("src", &broken)]);
        assert!(fork(&store, &req(2, "ok")).is_ok());
        let n = lines(&broken).len() as u64 - 1;
        assert!(fork(&store, &req(n, "no")).is_err());
    }
}
