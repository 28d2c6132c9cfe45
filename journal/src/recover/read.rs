//! Reading a damaged journal into items: every line that decodes, what
//! can be salvaged of one that does not, seqs fixed and duplicates
//! dropped, the gaps marked.

use super::*;

/// Step 1 of the module doc.
pub(super) fn read_items(bytes: &[u8]) -> Vec<Item> {
    let lines: Vec<_> = crate::lines::split(bytes)
        .filter(|l| !l.bytes.iter().all(u8::is_ascii_whitespace))
        .collect();
    let mut items = Vec::new();
    let mut i = 0;
    while let Some(l) = lines.get(i) {
        i += 1;
        if let Ok(record) = Record::decode(l.bytes) {
            items.push(Item::Rec(Box::new(Rec {
                line: l.line,
                raw: l.bytes.to_vec(),
                stored: record.seq,
                record,
            })));
            continue;
        }
        // Split in two: this line and the next only decode together.
        if let Some(next) = lines.get(i) {
            if Record::decode(next.bytes).is_err() {
                let joined = [l.bytes, next.bytes].concat();
                if let Ok(record) = Record::decode(&joined) {
                    i += 1;
                    items.push(Item::Hole(Hole {
                        line: l.line,
                        damage: Damage::Split,
                        bytes: Vec::new(),
                        sniff: Sniff {
                            seq: Some(record.seq),
                            ..Sniff::default()
                        },
                        seq: None,
                        through: None,
                        harmless: true,
                    }));
                    items.push(Item::Rec(Box::new(Rec {
                        line: l.line,
                        raw: joined,
                        stored: record.seq,
                        record,
                    })));
                    continue;
                }
            }
        }
        salvage(l.line, l.bytes, &mut items);
    }
    items
}

/// The records inside a line that does not decode, and holes for the
/// bytes around them.
pub(super) fn salvage(line: usize, bytes: &[u8], items: &mut Vec<Item>) {
    let mut found: Vec<(usize, usize, Record)> = Vec::new();
    let mut from = 0;
    while from < bytes.len() {
        let Some(at) = memchr::memmem::find(bytes.get(from..).unwrap_or_default(), b"{\"seq\"")
        else {
            break;
        };
        let start = from + at;
        let rest = bytes.get(start..).unwrap_or_default();
        let mut values =
            serde_json::Deserializer::from_slice(rest).into_iter::<&serde_json::value::RawValue>();
        let whole = match values.next() {
            Some(Ok(v)) => {
                let end = start + v.get().len();
                bytes
                    .get(start..end)
                    .and_then(|b| Record::decode(b).ok())
                    .map(|r| (end, r))
            }
            _ => None,
        };
        match whole {
            Some((end, record)) => {
                found.push((start, end, record));
                from = end;
            }
            None => from = start + 1,
        }
    }
    let glued = found.len() > 1;
    let mut at = 0;
    let hole = |items: &mut Vec<Item>, piece: &[u8]| {
        if piece.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        items.push(Item::Hole(Hole {
            line,
            damage: match is_nul_block(piece) {
                true => Damage::Nul,
                false => Damage::Garbage,
            },
            bytes: piece.to_vec(),
            sniff: sniff(piece),
            seq: None,
            through: None,
            harmless: false,
        }));
    };
    for (start, end, record) in found {
        hole(items, bytes.get(at..start).unwrap_or_default());
        if glued && at == 0 {
            items.push(Item::Hole(Hole {
                line,
                damage: Damage::Glued,
                bytes: Vec::new(),
                sniff: Sniff::default(),
                seq: None,
                through: None,
                harmless: true,
            }));
        }
        items.push(Item::Rec(Box::new(Rec {
            line,
            raw: bytes.get(start..end).unwrap_or_default().to_vec(),
            stored: record.seq,
            record,
        })));
        at = end;
    }
    hole(items, bytes.get(at..).unwrap_or_default());
}

/// Whether damaged bytes are a block of NULs (a block of the file zeroed
/// by the disk or the file system after a crash): a run of at least 8
/// NULs, or NULs for at least half of them. A stray NUL in other bytes is
/// garbage like any other.
pub(super) fn is_nul_block(bytes: &[u8]) -> bool {
    let nuls = bytes.iter().filter(|b| **b == 0).count();
    let run = bytes.split(|b| *b != 0).map(<[u8]>::len).max().unwrap_or(0);
    nuls > 0 && (run >= 8 || 2 * nuls >= bytes.len())
}

/// What damaged bytes say they were: the first `"seq":N`, protocol and
/// `"tool_use_id":"..."` among them (an id only of the characters ids
/// are made of, so nothing odd reaches a report).
pub(super) fn sniff(bytes: &[u8]) -> Sniff {
    let after =
        |key: &[u8]| memchr::memmem::find(bytes, key).and_then(|at| bytes.get(at + key.len()..));
    let seq = after(b"\"seq\":").and_then(|rest| {
        let digits: Vec<u8> = rest
            .iter()
            .copied()
            .take_while(u8::is_ascii_digit)
            .collect();
        std::str::from_utf8(&digits).ok()?.parse().ok()
    });
    let kind = after(crate::record::PROTOCOL_PREFIX.as_bytes()).and_then(|rest| {
        crate::record::Kind::ALL
            .into_iter()
            .find(|k| {
                rest.starts_with(k.key().as_bytes()) && rest.get(k.key().len()) == Some(&b'"')
            })
            .map(|k| k.key())
    });
    let call = after(b"\"tool_use_id\":\"").and_then(|rest| {
        let end = rest.iter().position(|c| *c == b'"')?;
        let id = std::str::from_utf8(rest.get(..end)?).ok()?;
        let ok = !id.is_empty()
            && id.len() <= 128
            && id
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        ok.then(|| id.to_owned())
    });
    Sniff { seq, kind, call }
}

/// Findings of consecutive missing seqs that cost nothing more than
/// themselves (no call answered, nothing dropped) said as one.
pub(super) fn merge_missing(findings: Vec<Finding>) -> Vec<Finding> {
    let plain = |f: &Finding| f.damage == Damage::Missing && f.loses.starts_with("lost; if it was");
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    // The plain missing seqs the last finding kept stands for.
    let mut run: Option<(u64, u64)> = None;
    for f in findings {
        if let (Some((from, to)), Some(seq)) = (run, f.seq) {
            if plain(&f) && Some(seq) == to.checked_add(1) {
                run = Some((from, seq));
                if let Some(last) = out.last_mut() {
                    last.loses = format!(
                        "seqs {from} to {seq}: no line holds them: lost; the run goes on from the records kept"
                    );
                }
                continue;
            }
        }
        run = match (plain(&f), f.seq) {
            (true, Some(s)) => Some((s, s)),
            _ => None,
        };
        out.push(f);
    }
    out
}

/// The most holes one gap of seqs becomes (see [`mark_gaps`]).
pub(super) const MAX_MISSING: usize = 1024;

/// A record whose own seq is damaged (a flipped digit, a NUL in it): a
/// record whose seq is not the next one, while the record after it holds
/// the seq after that next one, is the next one. (A real gap does not
/// close again; a record stored twice is followed by the next seq.)
pub(super) fn fix_seqs(items: &mut [Item], findings: &mut Vec<Finding>) {
    let recs: Vec<usize> = (0..items.len())
        .filter(|i| matches!(items.get(*i), Some(Item::Rec(_))))
        .collect();
    let seq_at = |items: &[Item], i: Option<&usize>| match i.and_then(|i| items.get(*i)) {
        Some(Item::Rec(r)) => Some(r.record.seq),
        _ => None,
    };
    let mut last = 0u64;
    for (k, i) in recs.iter().enumerate() {
        let after = seq_at(items, recs.get(k + 1));
        let Some(Item::Rec(r)) = items.get_mut(*i) else {
            continue;
        };
        let want = last.saturating_add(1);
        if r.record.seq != want && after.is_some() && after == want.checked_add(1) {
            findings.push(Finding {
                line: r.line,
                seq: Some(r.stored),
                damage: Damage::WrongSeq,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: format!(
                    "its seq reads {} where the records around it make it {want} (the seq itself is damaged): renumbered, nothing lost",
                    r.stored
                ),
                harmless: true,
            });
            r.record.seq = want;
        }
        last = last.max(r.record.seq);
    }
}

/// A record without its `time`: two stores of one record differ by it at
/// most (a retried write).
pub(super) fn same(a: &Record, b: &Record) -> bool {
    a.seq == b.seq
        && a.protocol == b.protocol
        && a.optional == b.optional
        && a.payload == b.payload
        && a.extra_keys == b.extra_keys
}

/// Step 2: a record stored twice is kept once; an unfinished copy of a
/// record intact elsewhere loses nothing.
pub(super) fn dedupe(items: &mut [Item], findings: &mut Vec<Finding>) {
    // Per seq, the items holding a record of it (indices: no copies).
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
    for i in 0..items.len() {
        let Some(Item::Rec(r)) = items.get(i) else {
            continue;
        };
        let copies = seen.entry(r.record.seq).or_default();
        let again = copies.iter().any(|c| match items.get(*c) {
            Some(Item::Rec(c)) => same(&c.record, &r.record),
            _ => false,
        });
        if again {
            findings.push(Finding {
                line: r.line,
                seq: Some(r.record.seq),
                damage: Damage::Duplicate,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: "stored twice: the copy is dropped; nothing lost".into(),
                harmless: true,
            });
            if let Some(slot) = items.get_mut(i) {
                *slot = Item::Gone;
            }
        } else {
            copies.push(i);
        }
    }
    // A seq not above the one before it, and not a copy: kept, said.
    let mut last = 0u64;
    for item in items.iter() {
        let Item::Rec(r) = item else { continue };
        let seq = r.record.seq;
        if seq <= last {
            findings.push(Finding {
                line: r.line,
                seq: Some(seq),
                damage: Damage::Reused,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: format!(
                    "seq {seq} comes after seq {last} and is not a copy of what holds it (two writers?): kept in journal order, renumbered"
                ),
                harmless: false,
            });
        }
        last = last.max(seq);
    }
    let kinds: HashMap<u64, Vec<&'static str>> = seen
        .iter()
        .map(|(seq, at)| {
            let keys = at
                .iter()
                .filter_map(|i| match items.get(*i) {
                    Some(Item::Rec(r)) => r.record.kind().map(|k| k.key()),
                    _ => None,
                })
                .collect();
            (*seq, keys)
        })
        .collect();
    for item in items.iter_mut() {
        let Item::Hole(h) = item else { continue };
        let (Some(seq), Some(kind)) = (h.sniff.seq, h.sniff.kind) else {
            continue;
        };
        let whole = kinds.get(&seq).is_some_and(|k| k.contains(&kind));
        if whole && !h.bytes.is_empty() {
            h.harmless = true;
            h.seq = Some(seq);
        }
    }
}

/// The first record must be the meta record: its version and position.
pub(super) fn check_meta(items: &[Item]) -> Result<(i64, usize), Cannot> {
    let first = items
        .iter()
        .position(|i| matches!(i, Item::Rec(_)))
        .ok_or(Cannot::Empty)?;
    let line = |i: &Item| match i {
        Item::Rec(r) => r.line,
        Item::Hole(h) => h.line,
        Item::Gone => 1,
    };
    match items.get(first) {
        Some(Item::Rec(r)) if r.record.seq == 1 => match &r.record.payload {
            Some(Payload::Meta(m)) => Ok((m.version, first)),
            _ => Err(Cannot::NoMeta {
                line: items.first().map_or(1, line),
            }),
        },
        _ => Err(Cannot::NoMeta {
            line: items.first().map_or(1, line),
        }),
    }
}

/// Place the holes between intact records, and add one for each seq that
/// no line holds.
pub(super) fn mark_gaps(items: &mut Vec<Item>) {
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    let mut last = 0u64;
    let mut pending: Vec<Hole> = Vec::new();
    let place =
        |out: &mut Vec<Item>, pending: &mut Vec<Hole>, last: u64, next: Option<(u64, usize)>| {
            let first = last.saturating_add(1);
            let lost: Vec<u64> = match next {
                // At most MAX_MISSING holes for one gap: each stands for a
                // record that may have been a result; a longer gap is
                // said whole by its last hole.
                Some((n, _)) if n > first => (first..n).take(MAX_MISSING).collect(),
                Some(_) => Vec::new(),
                // After the last record: a hole holds the next seq (a torn tail).
                None => vec![first],
            };
            let through = match next {
                Some((n, _)) if n.saturating_sub(first) > MAX_MISSING as u64 => Some(n - 1),
                _ => None,
            };
            let mut free: Vec<u64> = lost.clone();
            for h in pending.iter_mut().filter(|h| !h.harmless) {
                let seq = h
                    .sniff
                    .seq
                    .filter(|s| free.contains(s))
                    .or_else(|| free.first().copied());
                match seq {
                    Some(s) => {
                        free.retain(|x| *x != s);
                        h.seq = Some(s);
                    }
                    // No seq is missing here: it held no record.
                    None => h.harmless = true,
                }
            }
            let line = next.map_or_else(|| pending.last().map_or(0, |h| h.line), |(_, l)| l);
            for h in pending.drain(..) {
                out.push(Item::Hole(h));
            }
            if next.is_some() {
                let count = free.len();
                for (k, seq) in free.into_iter().enumerate() {
                    out.push(Item::Hole(Hole {
                        line,
                        damage: Damage::Missing,
                        bytes: Vec::new(),
                        sniff: Sniff::default(),
                        seq: Some(seq),
                        through: through.filter(|_| k + 1 == count),
                        harmless: false,
                    }));
                }
            }
        };
    for item in items.drain(..) {
        match item {
            Item::Hole(h) if h.damage == Damage::Split || h.damage == Damage::Glued => {
                out.push(Item::Hole(h))
            }
            Item::Hole(h) => pending.push(h),
            Item::Rec(r) => {
                let seq = r.record.seq;
                if seq > last {
                    place(&mut out, &mut pending, last, Some((seq, r.line)));
                    last = seq;
                } else {
                    let next = last.saturating_add(1);
                    place(&mut out, &mut pending, last, Some((next, r.line)));
                }
                out.push(Item::Rec(r));
            }
            Item::Gone => out.push(Item::Gone),
        }
    }
    if !pending.is_empty() {
        place(&mut out, &mut pending, last, None);
    }
    *items = out;
}
