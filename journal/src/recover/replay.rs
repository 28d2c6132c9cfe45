//! Replaying the items as the agent's fold takes them: what is kept,
//! what fisk-admin writes for a lost result, and what each hole costs.

use super::*;

/// What one item of the new journal is.
pub(super) enum Out {
    /// A record copied from item `from`.
    Copy { from: usize },
    /// A place a lost result may be answered (hole `hole`).
    Slot { hole: usize },
    /// A result fisk-admin writes.
    Made {
        call: String,
        tool: String,
        kind: String,
        dispatched: bool,
        why: String,
    },
}

/// What the replay knows of the turn open in the fold: its calls, which
/// have a result, which were deferred (with the deferral's kind and
/// dispatched), and the holes inside it.
#[derive(Default)]
pub(super) struct Turn {
    calls: Vec<(String, String)>,
    answered: HashSet<String>,
    deferred: HashMap<String, (String, bool)>,
    /// Holes inside the turn, by item index.
    holes: Vec<usize>,
}

impl Turn {
    /// The fold's open turn, with the holes the replay saw in it.
    fn of(open: Option<crate::fold::OpenTurn<'_>>, holes: Vec<usize>) -> Option<Turn> {
        let open = open?;
        Some(Turn {
            calls: open
                .message
                .blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse(t) => Some((t.id.clone(), t.name.clone())),
                    _ => None,
                })
                .collect(),
            answered: open.answered.iter().cloned().collect(),
            deferred: open
                .deferred
                .iter()
                .map(|d| (d.tool_use_id.clone(), (d.kind.clone(), d.dispatched)))
                .collect(),
            holes,
        })
    }
}

/// Step 3 and 4 of the module doc.
pub(super) fn replay(
    run: &str,
    items: &[Item],
    meta_at: usize,
    generation: Generation,
    now: Time,
) -> Result<Plan, String> {
    let mut out: Vec<Out> = Vec::new();
    let mut findings: Vec<Finding> = Vec::new();
    // What each hole turned out to cost: results written for it, records
    // dropped after it.
    let mut answered_at: HashMap<usize, Vec<String>> = HashMap::new();
    let mut orphans_after: HashMap<usize, Vec<u64>> = HashMap::new();
    let mut last_hole: Option<usize> = None;
    // What the agent's fold makes of the records kept so far: a record it
    // would refuse here is dropped (and said), every other one is kept.
    // Each is fed under a seq one above the last, as the new journal
    // numbers them.
    let Some(Item::Rec(meta)) = items.get(meta_at) else {
        return Err("the meta record is not where it was found".into());
    };
    let mut folder = crate::fold::Folder::new(&meta.record, crate::fold::FoldOptions::inspect())
        .map_err(|e| e.to_string())?;
    let mut fed: u64 = 1;
    // The holes inside the turn open in the fold.
    let mut holes: Vec<usize> = Vec::new();
    let mut assigned: HashMap<usize, (String, String, String, bool)> = HashMap::new();

    let close = |turn: Option<Turn>,
                 out: &mut Vec<Out>,
                 at_end: bool,
                 assigned: &mut HashMap<usize, (String, String, String, bool)>,
                 answered_at: &mut HashMap<usize, Vec<String>>,
                 findings: &mut Vec<Finding>,
                 line: usize| {
        let Some(t) = turn else { return };
        let mut open: Vec<&(String, String)> = t
            .calls
            .iter()
            .filter(|(id, _)| !t.answered.contains(id))
            .collect();
        let lost_kind = |h: usize| match items.get(h) {
            Some(Item::Hole(h)) if !h.harmless => Some(h.sniff.clone()),
            _ => None,
        };
        // A hole that was (or may have been) a result answers its call:
        // the call it names, else the next open one. A lost deferral
        // answers nothing: its call was waiting, not done.
        let mut free_holes = Vec::new();
        for h in &t.holes {
            let Some(s) = lost_kind(*h) else { continue };
            if !matches!(s.kind, None | Some("tool_result")) {
                continue;
            }
            if let Some(pos) = s
                .call
                .as_ref()
                .and_then(|c| open.iter().position(|(id, _)| id == c))
            {
                let (id, tool) = open.remove(pos);
                let (kind, dispatched) = t.deferred.get(id).cloned().unwrap_or_default();
                assigned.insert(*h, (id.clone(), tool.clone(), kind, dispatched));
            } else if s.call.is_none() {
                free_holes.push(*h);
            }
        }
        for h in free_holes {
            if open.is_empty() {
                break;
            }
            let (id, tool) = open.remove(0);
            let (kind, dispatched) = t.deferred.get(id).cloned().unwrap_or_default();
            assigned.insert(h, (id.clone(), tool.clone(), kind, dispatched));
        }
        for h in &t.holes {
            if let Some((id, _, _, _)) = assigned.get(h) {
                answered_at.entry(*h).or_default().push(id.clone());
            }
        }
        if at_end {
            // The run ends in this turn: a call with no hole for it is
            // pending, as a crash leaves it.
            return;
        }
        for (id, tool) in open {
            let (kind, dispatched) = t.deferred.get(id).cloned().unwrap_or_default();
            let why = "its turn is closed and no result for it was found".to_owned();
            findings.push(Finding {
                line,
                seq: None,
                damage: Damage::Unanswered,
                what: Some(format!("a call of {} ({})", shown(tool), shown(id))),
                bytes: 0,
                loses: "no result for it was found: it is answered with an error result saying so, and the run goes on".into(),
                harmless: false,
            });
            out.push(Out::Made {
                call: id.clone(),
                tool: tool.clone(),
                kind,
                dispatched,
                why,
            });
        }
    };

    for (i, item) in items.iter().enumerate() {
        let r = match item {
            Item::Gone => continue,
            Item::Hole(h) => {
                if matches!(h.damage, Damage::Split | Damage::Glued) {
                    continue;
                }
                last_hole = Some(i);
                if folder.open_turn().is_some() {
                    holes.push(i);
                    out.push(Out::Slot { hole: i });
                }
                continue;
            }
            Item::Rec(r) => r,
        };
        if i == meta_at {
            out.push(Out::Copy { from: i });
            continue;
        }
        let mut record = r.record.clone();
        record.seq = fed + 1;
        if let Err(e) = folder.check(&record) {
            let (why, damage) = match e {
                crate::fold::FoldError::NoOpenTurn { .. } => (
                    "no turn in the run asks for it (the assistant turn that did was lost); the agent refuses it there: dropped",
                    Damage::Orphan,
                ),
                crate::fold::FoldError::SecondMeta { .. } => {
                    ("a second meta record: dropped", Damage::Refused)
                }
                _ => (
                    "a record the agent cannot read (unknown protocol, not optional, or no payload): dropped",
                    Damage::Refused,
                ),
            };
            if let Some(h) = last_hole.filter(|_| damage == Damage::Orphan) {
                orphans_after.entry(h).or_default().push(r.record.seq);
            }
            findings.push(Finding {
                line: r.line,
                seq: Some(r.record.seq),
                damage,
                what: Some(describe(&r.record)),
                bytes: 0,
                loses: why.to_owned(),
                harmless: false,
            });
            continue;
        }
        // An assistant record opens the next turn and a user record ends
        // the conversation's turn: either closes the open one first.
        if matches!(
            r.record.payload,
            Some(Payload::Assistant(_) | Payload::User(_))
        ) {
            close(
                Turn::of(folder.open_turn(), std::mem::take(&mut holes)),
                &mut out,
                false,
                &mut assigned,
                &mut answered_at,
                &mut findings,
                r.line,
            );
        }
        folder.push(record).map_err(|e| e.to_string())?;
        fed += 1;
        out.push(Out::Copy { from: i });
    }
    let last_line = items
        .iter()
        .rev()
        .find_map(|i| match i {
            Item::Rec(r) => Some(r.line),
            Item::Hole(h) => Some(h.line),
            Item::Gone => None,
        })
        .unwrap_or(1);
    close(
        Turn::of(folder.open_turn(), holes),
        &mut out,
        true,
        &mut assigned,
        &mut answered_at,
        &mut findings,
        last_line,
    );

    // Number the new journal.
    let mut records = Vec::with_capacity(out.len());
    let mut renumbered = Vec::new();
    let mut made = Vec::new();
    let mut made_seq: HashMap<String, u64> = HashMap::new();
    let mut kept = 0u64;
    for o in out {
        let seq = records.len() as u64 + 1;
        let (call, tool, kind, dispatched, why) = match o {
            Out::Copy { from } => {
                let Some(Item::Rec(r)) = items.get(from) else {
                    continue;
                };
                let mut raw = r.raw.clone();
                if from == meta_at {
                    raw = with_run_id(&raw, &r.record, run)?;
                }
                if r.stored != seq {
                    raw = renumber(&raw, r, seq)?;
                    renumbered.push((r.stored, seq));
                }
                kept += 1;
                records.push(raw);
                continue;
            }
            Out::Slot { hole } => {
                let Some((call, tool, kind, dispatched)) = assigned.get(&hole).cloned() else {
                    continue;
                };
                let why = match items.get(hole) {
                    Some(Item::Hole(h)) => format!("its result was lost ({})", lost_where(h)),
                    _ => "its result was lost".to_owned(),
                };
                (call, tool, kind, dispatched, why)
            }
            Out::Made {
                call,
                tool,
                kind,
                dispatched,
                why,
            } => (call, tool, kind, dispatched, why),
        };
        records.push(lost_result(seq, &call, kind, dispatched, generation, now)?);
        made_seq.insert(call.clone(), seq);
        made.push(Made {
            seq,
            call,
            tool,
            why,
        });
    }

    // Now every hole's cost is known: say it.
    for (i, item) in items.iter().enumerate() {
        let Item::Hole(h) = item else { continue };
        let answered: Vec<(String, Option<u64>)> = answered_at
            .get(&i)
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| (shown(c).into_owned(), made_seq.get(c).copied()))
                    .collect()
            })
            .unwrap_or_default();
        let orphans = orphans_after.get(&i).cloned().unwrap_or_default();
        findings.push(hole_finding(h, &answered, &orphans));
    }
    Ok(Plan {
        records,
        findings,
        made,
        renumbered,
        kept,
        intact: 0,
        unreadable: items
            .iter()
            .filter_map(|i| match i {
                Item::Hole(h) if !h.bytes.is_empty() => Some([&h.bytes[..], b"\n"].concat()),
                _ => None,
            })
            .flatten()
            .collect(),
        version: 0,
    })
}

/// Where a hole was, for a written record's reason.
pub(super) fn lost_where(h: &Hole) -> String {
    match h.damage {
        Damage::Missing => "no line holds its record".to_owned(),
        Damage::Nul => format!("line {} is a block of NUL bytes", h.line),
        _ => format!("line {} cannot be read", h.line),
    }
}

/// The finding for one hole, with what it cost.
pub(super) fn hole_finding(
    h: &Hole,
    answered: &[(String, Option<u64>)],
    orphans: &[u64],
) -> Finding {
    let what = match (h.sniff.kind, &h.sniff.call) {
        (Some(k), Some(c)) => Some(format!("{} for {}", kind_words(k), shown(c))),
        (Some(k), None) => Some(kind_words(k).to_owned()),
        (None, Some(c)) => Some(format!("a record about call {}", shown(c))),
        (None, None) => None,
    };
    let mut loses = if h.damage == Damage::Split {
        "a record split over two lines: joined again, nothing lost".to_owned()
    } else if h.damage == Damage::Glued {
        "several records on one line (a newline lost): each read, nothing lost".to_owned()
    } else if h.harmless {
        match h.seq {
            Some(s) => {
                format!("an unfinished copy of seq {s}, which is intact after it: nothing lost")
            }
            None => {
                "bytes between two consecutive records: no record is missing there, nothing lost"
                    .to_owned()
            }
        }
    } else if let (Some(from), Some(to)) = (h.seq, h.through) {
        format!("seqs {from} to {to}: no line holds them: lost")
    } else {
        let mut s = String::from("lost");
        match h.sniff.kind {
            _ if !answered.is_empty() => {}
            Some("user") => s.push_str("; the model never sees that message"),
            Some("terminal") => {
                s.push_str("; the run reads as ended by an earlier terminal, or as open")
            }
            Some("decision") | Some("call_approval") => {
                s.push_str("; the agent asks for that approval again")
            }
            Some("memory_revisions") => {
                s.push_str("; the memory revisions seen fall back to the earlier ones")
            }
            Some("claim") => s.push_str("; nothing in the run depends on it"),
            Some("deferred") => s.push_str(
                "; its call no longer waits on a person: answered with an error result if its turn closed, else pending (resume runs it again)",
            ),
            Some("tool_result") | None if orphans.is_empty() => s.push_str(
                "; if it was a result, its call has none: the run goes on from the records kept",
            ),
            _ => {}
        }
        s
    };
    for (call, seq) in answered {
        let at = seq.map_or_else(String::new, |s| format!(" (seq {s})"));
        loses.push_str(&format!(
            "; its call {call} is answered with an error result saying so{at}, and the run goes on"
        ));
    }
    if !orphans.is_empty() {
        let seqs: Vec<String> = orphans.iter().map(u64::to_string).collect();
        loses.push_str(&format!(
            "; {} record(s) after it belong to no turn and are dropped (seq {})",
            orphans.len(),
            seqs.join(", ")
        ));
        if h.sniff.kind.is_none() {
            loses.push_str(": it was most likely an assistant turn");
        }
    }
    Finding {
        line: h.line,
        seq: h.seq.or(h.sniff.seq),
        damage: h.damage,
        what,
        bytes: h.bytes.len() as u64,
        loses,
        harmless: h.harmless || matches!(h.damage, Damage::Split | Damage::Glued),
    }
}

/// A protocol key in words.
pub(super) fn kind_words(key: &str) -> &'static str {
    match key {
        "meta" => "the meta record",
        "assistant" => "an assistant turn",
        "user" => "a user message",
        "tool_result" => "a tool result",
        "deferred" => "a deferral",
        "decision" => "a standing approval",
        "call_approval" => "an approval of one call",
        "memory_revisions" => "memory revisions",
        "terminal" => "a terminal record",
        "claim" => "a claim",
        _ => "a record",
    }
}

/// A record in words ("a tool result for toolu_01").
pub(super) fn describe(r: &Record) -> String {
    let key = r.kind().map_or("", |k| k.key());
    match &r.payload {
        Some(Payload::ToolResult(t)) => format!("a tool result for {}", shown(&t.tool_use_id)),
        Some(Payload::Deferred(d)) => format!("a deferral of {}", shown(&d.tool_use_id)),
        _ if key.is_empty() => format!("a record of protocol {}", shown(&r.protocol)),
        _ => kind_words(key).to_owned(),
    }
}

/// Untrusted text made safe for a report (the ops module's rule).
pub(super) fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    crate::shell::text(s)
}

/// `raw` with its seq made `seq`, every other byte kept; re-encoded only
/// when the seq cannot be found by position.
pub(super) fn renumber(raw: &[u8], rec: &Rec, seq: u64) -> Result<Vec<u8>, String> {
    let (old, new) = (rec.stored.to_string(), seq.to_string());
    // As every writer writes it, `seq` first: `{"seq":OLD` then `,` or `}`
    // is that key's value and nothing else (no JSON needs parsing, so a
    // record the decoder takes and serde_json does not, a lone surrogate
    // escape, is renumbered too).
    let head = [&b"{\"seq\":"[..], old.as_bytes()].concat();
    if let Some(rest) = raw.strip_prefix(head.as_slice()) {
        if matches!(rest.first(), Some(b',' | b'}')) {
            return Ok([&b"{\"seq\":"[..], new.as_bytes(), rest].concat());
        }
    }
    let record = &rec.record;
    let mut want: serde_json::Value =
        serde_json::from_slice(raw).map_err(|e| format!("seq {}: {e}", rec.stored))?;
    if let Some(v) = want.get_mut("seq") {
        *v = serde_json::Value::from(seq);
    }
    if let Some(b) =
        crate::record::edit::replace_value(raw, b"\"seq\"", old.as_bytes(), new.as_bytes(), &want)
    {
        return Ok(b);
    }
    let mut r = record.clone();
    r.seq = seq;
    r.encode()
        .ok_or_else(|| format!("seq {} cannot be renumbered", rec.stored))
}

/// The meta record with its `run_id` made `run` (unchanged when it is).
pub(super) fn with_run_id(raw: &[u8], record: &Record, run: &str) -> Result<Vec<u8>, String> {
    match &record.payload {
        Some(Payload::Meta(m)) if m.run_id != run => {
            crate::record::edit::meta_with_run_id(raw, &m.run_id, run)
        }
        _ => Ok(raw.to_vec()),
    }
}

/// The text of a result fisk-admin writes for a call whose result was lost.
pub const LOST_RESULT: &str = "[fisk-admin recover] The result of this tool call was lost to corruption in the run's journal and could not be recovered; the tool may or may not have run. This text was written by fisk-admin, not by the tool or the agent.";

/// The error result standing in for call `call`'s lost one.
pub(super) fn lost_result(
    seq: u64,
    call: &str,
    kind: String,
    dispatched: bool,
    generation: Generation,
    now: Time,
) -> Result<Vec<u8>, String> {
    let current = generation.stamps_time();
    // Version 1 writes `kind` on every result; a call never deferred was
    // not seen by any provider this journal names.
    let kind = match (current, kind.is_empty()) {
        (false, _) => String::new(),
        (true, true) => "unknown".to_owned(),
        (true, false) => kind,
    };
    let dispatched = current && dispatched;
    let mut r = Record::new(
        seq,
        Payload::ToolResult(ToolResult {
            tool_use_id: call.to_owned(),
            result: ToolResultBlock {
                tool_use_id: call.to_owned(),
                content: LOST_RESULT.to_owned(),
                is_error: true,
                ..ToolResultBlock::default()
            },
            remote: kind == "remote" && dispatched,
            kind,
            dispatched,
            ..ToolResult::default()
        }),
    );
    r.time = current.then_some(now);
    r.encode()
        .ok_or_else(|| format!("the result for {call} cannot be encoded"))
}
