//! Seals (issue 38): what every run of a store held at a moment, in a
//! document that proves later what did not change, after journald's
//! Forward Secure Sealing.
//!
//! For each run a seal records its record count and a SHA-256 chain over
//! its records as stored (link 0 is 32 zero bytes; link k is the SHA-256
//! of link k-1 followed by record k's bytes), the chain's head, and every
//! link cut to 16 bytes (`links`, base64): locators that name the first
//! record that differs, which a head alone cannot. The runs' lines, the
//! time, the audit log's length and last link, and the previous seal's
//! root are hashed into one root; an optional ed25519 signature signs the
//! root. Editing any of it changes the root, so a seal that was edited
//! says so, and a signature by another key says so.
//!
//! A stream is sealed as it was at one moment (issue 40), though agents
//! write to it while the seal reads: the cut (its last sequence, taken
//! before the runs are listed) is recorded and hashed into the root, and
//! every run is sealed as the stream held it at the cut; a run created
//! after it is left for the next seal.
//!
//! A record's bytes are the same in a journal file, on a stream and in an
//! exported journal (`export --format jsonl`), so a seal made of one is
//! checked against any copy of it: [`compare`] needs only the records.

use crate::audit::link;
use crate::error::{Error, Result};
use crate::store::Store;
use crate::time::Time;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;

/// The seal format's version.
pub const FORMAT: u32 = 1;

/// Bytes of each link a seal keeps as a locator.
const LOCATOR: usize = 16;

/// The audit log as a seal saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LogHead {
    /// Its entries.
    pub entries: u64,
    /// The link of its last entry (`None`: no log).
    pub head: Option<String>,
    /// The link of its first entry: which log it was (a migrated copy
    /// keeps a log of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
}

/// One run as sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sealed {
    /// Its records.
    pub records: u64,
    /// The last link of its chain, hex.
    pub head: String,
    /// Every link cut to 16 bytes, concatenated, base64.
    pub links: String,
}

/// A seal's signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signed {
    /// The public key that signed, hex.
    pub key: String,
    /// The ed25519 signature of the root, hex.
    pub sig: String,
}

/// A seal, as written to its file (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    /// The format's version ([`FORMAT`]).
    pub fisk_admin_seal: u32,
    /// The store sealed, for people.
    pub store: String,
    /// When it was sealed.
    pub time: Time,
    /// The previous seal's root (the seals form a chain): the last seal
    /// the store's audit log records.
    pub previous: Option<String>,
    /// The audit log as sealed.
    pub log: LogHead,
    /// A stream: the sequence it was sealed at (its last when the seal
    /// started); nothing stored after it is sealed. `None`: a file store,
    /// or a seal written before seals took a cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<u64>,
    /// Every run, by id.
    pub runs: BTreeMap<String, Sealed>,
    /// The root: SHA-256 of everything above, hex.
    pub root: String,
    /// The root signed, when a key was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signed>,
}

/// A run's records as stored: the journal's whole lines (a final line
/// without its `\n` is no record yet), or the stream's record bodies.
pub fn records_of(bytes: &[u8]) -> Vec<&[u8]> {
    bytes
        .split_inclusive(|c| *c == b'\n')
        .filter_map(|l| l.strip_suffix(b"\n"))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The chain over `records`: every link.
pub fn chain<'a>(records: impl IntoIterator<Item = &'a [u8]>) -> Vec<[u8; 32]> {
    let mut link = [0u8; 32];
    records
        .into_iter()
        .map(|r| {
            let mut h = Sha256::new();
            h.update(link);
            h.update(r);
            link = h.finalize().into();
            link
        })
        .collect()
}

impl Sealed {
    /// A run of `records` as sealed.
    pub fn of(records: &[&[u8]]) -> Sealed {
        let links = chain(records.iter().copied());
        let mut loc = Vec::with_capacity(links.len() * LOCATOR);
        for l in &links {
            loc.extend_from_slice(l.get(..LOCATOR).unwrap_or_default());
        }
        Sealed {
            records: records.len() as u64,
            head: crate::digest::hex(links.last().unwrap_or(&[0u8; 32])),
            links: base64::engine::general_purpose::STANDARD.encode(loc),
        }
    }

    fn locators(&self) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.links)
            .unwrap_or_default()
    }
}

impl Seal {
    /// The root of this seal's contents (what it says; the `root` field
    /// is what it claims). The cut's line is hashed only when there is a
    /// cut, so a seal without one has the root it always had.
    pub fn compute_root(&self) -> String {
        let mut h = Sha256::new();
        h.update(format!("fisk-admin seal {}\n", self.fisk_admin_seal));
        h.update(format!("{}\n", self.time.to_rfc3339()));
        h.update(format!("{}\n", self.previous.as_deref().unwrap_or("-")));
        h.update(format!(
            "{} {} {}\n",
            self.log.entries,
            self.log.head.as_deref().unwrap_or("-"),
            self.log.first.as_deref().unwrap_or("-")
        ));
        if let Some(cut) = self.cut {
            h.update(format!("cut {cut}\n"));
        }
        for (run, s) in &self.runs {
            h.update(format!(
                "{run} {} {} {}\n",
                s.records,
                s.head,
                link(s.links.as_bytes())
            ));
        }
        crate::digest::hex(h.finalize().as_slice())
    }

    /// The seal's JSON, as written to its file.
    pub fn to_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).unwrap_or_default();
        v.push(b'\n');
        v
    }

    /// A seal read from `path`.
    pub fn read(path: &std::path::Path) -> Result<Seal> {
        let bytes = crate::bounded::read_path(path, crate::bounded::RECORDS)
            .map_err(|e| Error::io(path, e))?;
        let seal: Seal = serde_json::from_slice(&bytes).map_err(|e| Error::Config {
            at: crate::Where::Path(path.to_path_buf()),
            message: format!("not a seal fisk-admin wrote ({e})"),
        })?;
        // A later format may seal what this one cannot check: said, not
        // reported as an edited seal.
        if seal.fisk_admin_seal > FORMAT {
            return Err(Error::Config {
                at: crate::Where::Path(path.to_path_buf()),
                message: format!(
                    "a seal of format {}, newer than this fisk-admin reads (format {FORMAT} and \
                     older): check it with the fisk-admin that wrote it, or a newer one",
                    seal.fisk_admin_seal
                ),
            });
        }
        Ok(seal)
    }

    /// Write the seal to a new file at `path` (0600, fsynced; refused
    /// when `path` exists).
    pub fn write_new(&self, path: &std::path::Path) -> Result<()> {
        crate::durable::write_new(path, &self.to_json()).map_err(|e| Error::io(path, e))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::durable::sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(())
    }
}

/// Seal every run of `store` now, chained to the last seal its audit log
/// records, signed by `key` when given, and record it in the log (when
/// the store logs its writes). A stream is sealed as it was at its cut
/// ([`Store::cut`]).
pub fn seal(store: &Store, key: Option<&super::key::Key>) -> Result<Seal> {
    let log = store.audit_log()?;
    let previous = log.iter().rev().find_map(|l| match &l.entry {
        Ok(e) if e.kind == crate::audit::Kind::Seal => e.root.clone(),
        _ => None,
    });
    // The cut is taken before the runs are listed, so the listing holds
    // every run the stream held at the cut; a run listed that held
    // nothing then was created after it, and is left out.
    let cut = store.cut()?;
    let runs = store.runs()?;
    let sealed = read_all(store, &runs, cut);
    let mut out = BTreeMap::new();
    for (run, got) in runs.into_iter().zip(sealed) {
        if let Some(s) = got? {
            out.insert(run, s);
        }
    }
    let mut s = Seal {
        fisk_admin_seal: FORMAT,
        store: store.describe(),
        time: Time::now(),
        previous,
        log: LogHead {
            entries: log.len() as u64,
            head: log.last().map(|l| link(&l.raw)),
            first: log.first().map(|l| link(&l.raw)),
        },
        cut,
        runs: out,
        root: String::new(),
        signature: None,
    };
    s.root = s.compute_root();
    if let Some(k) = key {
        s.signature = k.sign(s.root.as_bytes()).map(|sig| Signed {
            key: k.public_hex(),
            sig,
        });
    }
    store.audit_note(crate::audit::Entry {
        kind: crate::audit::Kind::Seal,
        root: Some(s.root.clone()),
        runs: Some(s.runs.len() as u64),
        previous: s.previous.clone(),
        detail: detail(&s),
        ..Default::default()
    })?;
    Ok(s)
}

/// The audit entry's detail: the cut and the key, whichever there are.
fn detail(s: &Seal) -> Option<String> {
    let said: Vec<String> = [
        s.cut.map(|c| format!("up to stream sequence {c}")),
        s.signature
            .as_ref()
            .map(|g| format!("signed by key {}", g.key)),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// Every run of `runs` read and sealed as it was at `cut`, in parallel,
/// in order; `None` for a run that held nothing at the cut (created
/// after it).
fn read_all(store: &Store, runs: &[String], cut: Option<u64>) -> Vec<Result<Option<Sealed>>> {
    use rayon::prelude::*;
    runs.par_iter()
        .map(|r| {
            let bytes = store.read_lines_at(r, cut)?;
            let records = records_of(&bytes);
            Ok((cut.is_none() || !records.is_empty()).then(|| Sealed::of(&records)))
        })
        .collect()
}

/// What a run is against its seal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Exactly as sealed.
    Unchanged,
    /// As sealed, and records appended after (normal for a live run).
    Grew {
        /// Records now.
        records: u64,
    },
    /// The sealed records are there but the last ones are missing.
    Truncated {
        /// Records now.
        records: u64,
    },
    /// A record differs from the sealed one (or is missing inside).
    Edited {
        /// The first record that differs: its seq as stored now.
        seq: u64,
        /// Its place in the run, 1-based.
        record: u64,
        /// The byte offset of its line in the journal.
        offset: u64,
        /// Records now.
        records: u64,
    },
    /// In the seal, not in the store.
    Removed,
    /// In the store, not in the seal.
    New {
        /// Records now.
        records: u64,
    },
}

impl Verdict {
    /// The word `verify --against` prints.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Unchanged => "unchanged",
            Verdict::Grew { .. } => "grew",
            Verdict::Truncated { .. } => "truncated",
            Verdict::Edited { .. } => "edited",
            Verdict::Removed => "removed",
            Verdict::New { .. } => "new",
        }
    }

    /// Whether the seal stands for this run: unchanged, or grown.
    pub fn holds(&self) -> bool {
        matches!(self, Verdict::Unchanged | Verdict::Grew { .. })
    }
}

/// A run's records now against the run as sealed.
pub fn compare(sealed: &Sealed, now: &[&[u8]]) -> Verdict {
    let links = chain(now.iter().copied());
    let records = now.len() as u64;
    let n = usize::try_from(sealed.records).unwrap_or(usize::MAX);
    let head_matches = n > 0
        && links
            .get(n - 1)
            .is_some_and(|l| crate::digest::hex(l) == sealed.head);
    if head_matches || (n == 0 && sealed.head == crate::digest::hex(&[0u8; 32])) {
        return match records == sealed.records {
            true => Verdict::Unchanged,
            false => Verdict::Grew { records },
        };
    }
    let loc = sealed.locators();
    let first_differs = links
        .iter()
        .take(n)
        .enumerate()
        .find(|(k, l)| loc.get(k * LOCATOR..(k + 1) * LOCATOR) != l.get(..LOCATOR));
    let edited = |k: usize| {
        let line = now.get(k).copied().unwrap_or_default();
        Verdict::Edited {
            seq: crate::record::Record::decode(line).map_or(k as u64 + 1, |r| r.seq),
            record: k as u64 + 1,
            offset: now.iter().take(k).map(|l| l.len() as u64 + 1).sum(),
            records,
        }
    };
    match first_differs {
        Some((k, _)) => edited(k),
        // Every record there is as sealed: the tail was cut.
        None if records < sealed.records => Verdict::Truncated { records },
        // Locators all match but the head does not: the last sealed record.
        None => edited(n.saturating_sub(1)),
    }
}

/// The seal's own standing: its root against its contents, and its
/// signature against the key it must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The root matches the contents (nothing in the seal was edited).
    pub root_ok: bool,
    /// `None`: not signed; `Some(true)`: signed, the signature good.
    pub signed: Option<bool>,
    /// The key it is signed by, hex.
    pub signed_by: Option<String>,
    /// A key was given, and the seal is not signed by it.
    pub other_key: bool,
}

impl Standing {
    /// Whether the seal can be trusted as it is.
    pub fn ok(&self) -> bool {
        self.root_ok && self.signed != Some(false) && !self.other_key
    }
}

/// Check a seal against itself and, when given, the key it must be
/// signed by.
pub fn standing(seal: &Seal, key: Option<&super::key::Key>) -> Standing {
    let root_ok = seal.compute_root() == seal.root;
    let signed = seal
        .signature
        .as_ref()
        .map(|s| super::key::verify(&s.key, seal.root.as_bytes(), &s.sig));
    let signed_by = seal.signature.as_ref().map(|s| s.key.clone());
    let other_key = key.is_some_and(|k| signed_by.as_deref() != Some(k.public_hex().as_str()));
    Standing {
        root_ok,
        signed,
        signed_by,
        other_key,
    }
}

/// One run's verdict against a seal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunVerdict {
    /// The run's id.
    pub run: String,
    /// What it is.
    pub verdict: Verdict,
    /// Records as sealed (`None`: not in the seal).
    pub sealed: Option<u64>,
}

/// Every run of `store` (only `runs` when given) against `seal`: sealed
/// runs the store no longer holds are removed, runs not in the seal new.
pub fn against_store(seal: &Seal, store: &Store, runs: &[String]) -> Result<Vec<RunVerdict>> {
    let have = match runs.is_empty() {
        true => store.runs()?,
        false => runs.to_vec(),
    };
    let mut names: Vec<String> = have.clone();
    if runs.is_empty() {
        names.extend(seal.runs.keys().filter(|r| !have.contains(r)).cloned());
        names.sort();
    }
    use rayon::prelude::*;
    names
        .par_iter()
        .map(|run| {
            let sealed = seal.runs.get(run);
            let bytes = match store.read_lines(run) {
                Ok(b) => Some(b),
                Err(Error::NotFound { .. }) => None,
                Err(e) => return Err(e),
            };
            Ok(against(run, sealed, bytes.as_deref()))
        })
        .collect()
}

/// One run (`bytes`: its journal as stored, `None`: absent) against its
/// sealed form (`None`: not in the seal).
pub fn against(run: &str, sealed: Option<&Sealed>, bytes: Option<&[u8]>) -> RunVerdict {
    let verdict = match (sealed, bytes) {
        (Some(_), None) => Verdict::Removed,
        (None, b) => Verdict::New {
            records: b.map_or(0, |b| records_of(b).len() as u64),
        },
        (Some(s), Some(b)) => compare(s, &records_of(b)),
    };
    RunVerdict {
        run: run.to_owned(),
        verdict,
        sealed: sealed.map(|s| s.records),
    }
}

/// How a store's audit log stands against the log a seal saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogCheck {
    /// The sealed part is there as sealed (or the seal saw no log).
    Holds,
    /// Not the sealed log but a log of its own, whose entries say its
    /// runs were carried in from another store (a `migrate`d copy): the
    /// sealed log is checked on the sealed store. Says so in words.
    Own(String),
    /// The sealed part was changed: what differs.
    Broken(String),
}

/// `log` (a store's audit log) against the log `seal` saw: its sealed
/// part unbroken and as sealed. A log whose chain holds but starts
/// elsewhere is a copy's own when it records runs carried in, else the
/// sealed log replaced.
pub fn log_against(seal: &Seal, log: &[crate::store::Logged]) -> LogCheck {
    let n = usize::try_from(seal.log.entries).unwrap_or(usize::MAX);
    if n == 0 {
        return LogCheck::Holds;
    }
    if log.is_empty() {
        return LogCheck::Broken(format!("the audit log is gone: the seal saw {n} entries"));
    }
    let sealed_part = log.get(..n.min(log.len())).unwrap_or_default();
    if let Some(b) = super::chain_breaks(sealed_part).first() {
        return LogCheck::Broken(format!("{} (sealed part of the log)", b.message));
    }
    let first = log.first().map(|l| link(&l.raw));
    if seal.log.first.is_some() && first != seal.log.first {
        let from: std::collections::BTreeSet<String> = log
            .iter()
            .filter_map(|l| match &l.entry {
                Ok(e) if e.kind == crate::audit::Kind::Carried => e.from.clone(),
                _ => None,
            })
            .collect();
        return match from.is_empty() {
            true => LogCheck::Broken(
                "entry 1 is not the sealed log's first entry: the log was replaced".into(),
            ),
            false => LogCheck::Own(format!(
                "not checked here: this store's audit log is its own (its runs were carried in from {}); the sealed log is checked on the sealed store ({})",
                from.into_iter().collect::<Vec<_>>().join(", "),
                seal.store
            )),
        };
    }
    if log.len() < n {
        return LogCheck::Broken(format!(
            "the audit log holds {} entries; the seal saw {n}: entries were removed",
            log.len()
        ));
    }
    let head = log.get(n - 1).map(|l| link(&l.raw));
    match head == seal.log.head {
        true => LogCheck::Holds,
        false => LogCheck::Broken(format!(
            "entry {n}, the last the seal saw, differs from the sealed one: the log was edited"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: usize, body: usize) -> Vec<u8> {
        format!("{{\"seq\":{seq},\"protocol\":\"x{body}\"}}").into_bytes()
    }

    fn recs(n: usize) -> Vec<Vec<u8>> {
        (1..=n).map(|s| rec(s, s)).collect()
    }

    fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
        v.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn each_way_a_run_can_differ_from_its_seal_is_named() {
        let r = recs(5);
        let sealed = Sealed::of(&refs(&r));
        assert_eq!(compare(&sealed, &refs(&r)), Verdict::Unchanged);
        let mut more = r.clone();
        more.push(b"{\"seq\":6}".to_vec());
        assert_eq!(compare(&sealed, &refs(&more)), Verdict::Grew { records: 6 });
        assert_eq!(
            compare(&sealed, &refs(&r[..3])),
            Verdict::Truncated { records: 3 }
        );
        // One byte of record 3.
        let mut edited = r.clone();
        let at = edited[2].len() - 3;
        edited[2][at] = b'y';
        let offset = (r[0].len() + r[1].len() + 2) as u64;
        assert_eq!(
            compare(&sealed, &refs(&edited)),
            Verdict::Edited {
                seq: 3,
                record: 3,
                offset,
                records: 5
            }
        );
        // Record 2 removed and the rest renumbered.
        let cut: Vec<Vec<u8>> = [1, 3, 4, 5]
            .iter()
            .enumerate()
            .map(|(i, body)| rec(i + 1, *body))
            .collect();
        assert!(matches!(
            compare(&sealed, &refs(&cut)),
            Verdict::Edited { record: 2, .. }
        ));
        assert_eq!(
            against("x", None, Some(b"a\nb\n")).verdict,
            Verdict::New { records: 2 }
        );
        assert_eq!(against("x", Some(&sealed), None).verdict, Verdict::Removed);
    }

    #[test]
    fn a_seal_edited_anywhere_no_longer_matches_its_root() {
        let r = recs(3);
        let mut s = Seal {
            fisk_admin_seal: FORMAT,
            store: "directory /x".into(),
            time: Time::parse("2026-12-01T08:00:00Z").unwrap(),
            previous: None,
            log: LogHead::default(),
            cut: None,
            runs: BTreeMap::from([("a".to_owned(), Sealed::of(&refs(&r)))]),
            root: String::new(),
            signature: None,
        };
        s.root = s.compute_root();
        assert!(standing(&s, None).ok());
        let mut e = s.clone();
        e.runs.get_mut("a").unwrap().records = 2;
        assert!(!standing(&e, None).root_ok);
        let mut e = s.clone();
        e.runs.get_mut("a").unwrap().links = Sealed::of(&refs(&r[..2])).links;
        assert!(!standing(&e, None).root_ok);
        let mut e = s.clone();
        e.time = Time::parse("2026-12-02T08:00:00Z").unwrap();
        assert!(!standing(&e, None).root_ok);
        // A stream's cut is sealed too: changed, added or taken away.
        let mut c = s.clone();
        c.cut = Some(41);
        assert!(!standing(&c, None).root_ok);
        c.root = c.compute_root();
        assert!(standing(&c, None).ok());
        let mut e = c.clone();
        e.cut = Some(40);
        assert!(!standing(&e, None).root_ok);
        let mut e = c.clone();
        e.cut = None;
        assert!(!standing(&e, None).root_ok);
    }

    #[test]
    fn a_seal_of_a_later_format_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Seal {
            fisk_admin_seal: FORMAT + 1,
            store: "directory /x".into(),
            time: Time::parse("2026-12-01T08:00:00Z").unwrap(),
            previous: None,
            log: LogHead::default(),
            cut: None,
            runs: BTreeMap::new(),
            root: String::new(),
            signature: None,
        };
        s.root = s.compute_root();
        let later = dir.path().join("later.seal");
        s.write_new(&later).unwrap();
        let e = Seal::read(&later).unwrap_err().to_string();
        assert!(e.contains("a seal of format 2, newer than this"), "{e}");
        assert!(e.contains("later.seal"), "{e}");
        s.fisk_admin_seal = FORMAT;
        s.root = s.compute_root();
        let now = dir.path().join("now.seal");
        s.write_new(&now).unwrap();
        assert_eq!(Seal::read(&now).unwrap(), s);
    }

    /// A seal written before seals took a cut (issue 40), byte for byte
    /// as fisk-admin wrote it then, with its root computed then: it still
    /// reads and stands.
    #[test]
    fn a_seal_written_before_seals_took_a_cut_still_stands() {
        const OLD: &str = r#"{
  "fisk_admin_seal": 1,
  "store": "directory /x",
  "time": "2026-12-01T08:00:00Z",
  "previous": "abababababababababababababababababababababababababababababababab",
  "log": {
    "entries": 2,
    "head": "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
    "first": "efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef"
  },
  "runs": {
    "a": {
      "records": 3,
      "head": "071edcdb5f7022d9aa7d43b948607a47db34fb6496709577b70ea282c85bdf9d",
      "links": "tskMpLovcm12Uop1IxQaCwQnj3TTTRC1sD+pBkttQnEHHtzbX3Ai2ap9Q7lIYHpH"
    },
    "b": {
      "records": 1,
      "head": "b6c90ca4ba2f726d76528a7523141a0b896627cd4d7c85e3cbc7d269acc04e7b",
      "links": "tskMpLovcm12Uop1IxQaCw=="
    }
  },
  "root": "24dc81aeef3bcaf7df7d9dba79c5b96b0e8a92d3dcfd597e963881dc98e4c958"
}
"#;
        let s: Seal = serde_json::from_str(OLD).unwrap();
        assert_eq!(s.cut, None);
        assert!(standing(&s, None).ok());
        // Written again, it is the same bytes: no cut key appears.
        assert_eq!(String::from_utf8(s.to_json()).unwrap(), OLD);
        let r = recs(3);
        assert_eq!(compare(&s.runs["a"], &refs(&r)), Verdict::Unchanged);
    }
}
