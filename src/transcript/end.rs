//! The closing section of a transcript: where the run stands, the pending
//! batch, and each open deferral with the command that answers it. Built
//! from the meta record and the tail back to the last `assistant` record,
//! as `ls` builds a run's status (SPEC 9): the viewer never folds the
//! whole journal.

use super::shown::lines;
use super::shown::Shown;
use crate::hint;
use crate::invocation::Invocation;
use crate::output::{cell, sanitize};
use journal::fold::{fold_with, FoldOptions};
use journal::lines::split;
use journal::record::{Block, Payload, Record};

/// The command that answers the deferred call `id`.
fn answer_command(g: &Invocation, run: &str, id: &str) -> String {
    hint::command(g, &["answer", run, id])
}

/// The closing section: its blocks, and the commands that answer each call
/// the run waits on, for the viewer to print on the normal screen when it
/// leaves: there the terminal wraps a long line itself and a paste takes it
/// whole (a line the viewer wraps is pasted broken).
pub struct Closing {
    pub blocks: Vec<Shown>,
    pub next: Vec<String>,
}

/// The closing section for the journal in `bytes`.
pub fn closing(g: &Invocation, run: &str, bytes: &[u8]) -> Closing {
    let mut next = Vec::new();
    let blocks = blocks(g, run, bytes, None, &mut next);
    Closing { blocks, next }
}

/// The closing section for a journal file read with no store (`--file
/// PATH`): a copy, so no command answers its calls here; the check names
/// the file.
pub fn closing_file(g: &Invocation, run: &str, bytes: &[u8], path: &std::path::Path) -> Closing {
    let mut next = Vec::new();
    let blocks = blocks(g, run, bytes, Some(path), &mut next);
    Closing { blocks, next }
}

/// The blocks; the answer commands are pushed to `next` as they are made
/// (never read back from the blocks: a note is the journal's text).
/// `file`: the journal is that file, outside any store.
fn blocks(
    g: &Invocation,
    run: &str,
    bytes: &[u8],
    file: Option<&std::path::Path>,
    next: &mut Vec<String>,
) -> Vec<Shown> {
    let verify = match file {
        Some(p) => hint::on_file(&["verify"], p),
        None => hint::command(g, &["verify", run]),
    };
    let mut lines_rev: Vec<&[u8]> = split(bytes)
        .map(|l| l.bytes)
        .filter(|b| !b.iter().all(u8::is_ascii_whitespace))
        .collect();
    let meta = lines_rev.first().and_then(|b| Record::decode(b).ok());
    lines_rev.reverse();
    let mut tail = Vec::new();
    for b in lines_rev.iter().take(lines_rev.len().saturating_sub(1)) {
        let Ok(r) = Record::decode(b) else { continue };
        let assistant = matches!(r.payload, Some(Payload::Assistant(_)));
        tail.push(r);
        if assistant {
            break;
        }
    }
    tail.reverse();
    let Some(meta) = meta else {
        return vec![Shown::new(
            "[no meta record: the run cannot be folded]".into(),
            vec![format!("check it: {verify}")],
        )];
    };
    let st = match fold_with(std::iter::once(&meta).chain(&tail), FoldOptions::inspect()) {
        Ok(st) => st,
        Err(e) => {
            return vec![Shown::new(
                "[the fold refuses this journal]".into(),
                vec![
                    sanitize(&e.to_string(), false).into_owned(),
                    format!("check it: {verify}"),
                ],
            )]
        }
    };
    let mut out = Vec::new();
    let mut status = format!("[run status: {}", sanitize(&st.status.to_string(), false));
    if st.waiting {
        status.push_str(&format!(
            ", waiting on {} deferred call(s)",
            st.open_deferrals
        ));
    }
    status.push(']');
    out.push(Shown::new(status, Vec::new()));
    let Some(p) = &st.pending else {
        return out;
    };
    let mut batch = Vec::new();
    for b in p.assistant.blocks() {
        if let Block::ToolUse(u) = b {
            let state = if p.answered.contains(&u.id) {
                "answered"
            } else if p.open_deferrals.iter().any(|d| d.tool_use_id == u.id) {
                "deferred, waiting for an answer"
            } else if p.deferred.iter().any(|d| d.tool_use_id == u.id) {
                "deferred"
            } else {
                "not run (runs again on resume)"
            };
            batch.push(format!(
                "{}  {}  {state}",
                cell(&u.id, 80),
                cell(&u.name, 40)
            ));
        }
    }
    out.push(Shown::new(
        format!("[pending batch, iteration {}]", p.iteration),
        batch,
    ));
    for d in &p.open_deferrals {
        let mut body = Vec::new();
        let mut at = None;
        if !d.note.is_empty() {
            body.extend(lines(&format!("note: {}", d.note)));
        }
        if !d.handle.is_empty() {
            body.extend(lines(&format!("handle: {}", d.handle)));
        }
        if file.is_some() {
            body.push(format!(
                "answer it where run {} is stored: this journal is a copy",
                sanitize(run, false)
            ));
        } else {
            // The command alone on its line, what it reads under it.
            let cmd = answer_command(g, run, &d.tool_use_id);
            body.push("answer it with:".to_owned());
            at = Some(body.len());
            body.push(format!("  {cmd}"));
            next.push(cmd);
            body.push(format!("  # {}", hint::Need::Answer.says()));
        }
        let shown = Shown::new(
            format!(
                "[waiting on {} {}]",
                cell(&d.tool_use_id, 80),
                cell(&d.tool_name, 40)
            ),
            body,
        );
        out.push(match at {
            Some(k) => shown.command(k),
            None => shown,
        });
    }
    out
}
