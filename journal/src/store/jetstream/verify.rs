//! `verify`'s JetStream checks: the stream's configuration as findings,
//! runs without a meta record (`orphan-messages`), and each run's messages
//! (a subject that does not name its record's seq) before their bodies go
//! through the one line checker as the lines of a journal.

use super::subject::is_tombstone;
use super::{as_lines, sort_by_seq, ConfigProblem, Orphan, Pending, RunMessage};
use crate::record::Record;
use crate::verify::{file_finding, verify_bytes, Code, Finding, RecordCheck, Report};

/// Findings for a JetStream stream that breaks SPEC 8: one per setting.
pub fn stream_config_findings(stream: &str, problems: &[ConfigProblem]) -> Vec<Finding> {
    problems
        .iter()
        .map(|p| file_finding(stream, Code::StreamConfig, format!("stream {stream}: {p}")))
        .collect()
}

/// The report on a run whose messages have no meta record: one
/// `orphan-messages` finding (error: no agent lists or reads them, and the
/// records cannot be read as a run without their head), and no finding per
/// message, which would only say the same again.
pub fn orphan_report(prefix: &str, orphan: &Orphan) -> Report {
    let message = format!(
        "{}; their records can be copied out as they are stored, or the run deleted with a backup kept",
        orphan.describe(prefix)
    );
    Report {
        findings: vec![file_finding(&orphan.run, Code::OrphanMessages, message)],
        ..Report::default()
    }
}

/// The report on a run marked as half written (`whole.rs`; `mark`: the
/// mark, when it reads): one `write-interrupted` finding naming the
/// command that finishes it.
pub fn write_interrupted_report(run: &str, mark: Option<&Pending>) -> Report {
    Report {
        findings: vec![write_interrupted(run, mark)],
        ..Report::default()
    }
}

fn write_interrupted(run: &str, mark: Option<&Pending>) -> Finding {
    let (message, remedy) = match mark {
        Some(p) => (
            format!(
                "{}; or drop what was written with `fisk-admin rm {run}` (a backup is kept)",
                p.describe(run)
            ),
            match p.mark.staged {
                true => crate::Remedy::Recover,
                false => crate::Remedy::Again,
            },
        ),
        None => (
            format!(
                "run {run} is half written: messages on {run}._writing.> are what a fisk-admin write of the whole run leaves until it is finished, but its mark does not read; delete the run (`fisk-admin rm {run}`, a backup is kept)"
            ),
            crate::Remedy::Remove,
        ),
    };
    Finding {
        remedy: Some(remedy),
        ..file_finding(run, Code::WriteInterrupted, message)
    }
}

/// A run token on the stream's subjects that is not a valid run id
/// (SPEC 1.2): the agent cannot see it, as it cannot see a file so named.
pub fn invalid_id_report(prefix: &str, token: &str) -> Report {
    let message = format!(
        "messages on {prefix}.{token}.> name a run whose id is not a valid run id, so the agent cannot see it; fisk-admin reads and writes no such run"
    );
    Report {
        findings: vec![file_finding(token, Code::InvalidId, message)],
        ..Report::default()
    }
}

/// Verify a run read from JetStream: its bodies as the lines of a journal
/// (in seq order), plus a finding for each message whose subject does not
/// name the seq its record holds.
// For tests (journal/tests/), not API: a front end goes through `Store`.
#[doc(hidden)]
pub fn verify_jetstream_run(
    run: &str,
    messages: Vec<RunMessage>,
    check: Option<&dyn RecordCheck>,
) -> Report {
    verify_run_on(run, messages, check, true)
}

/// [`verify_jetstream_run`] on a stream that allows purges or not
/// (`purges`): where it does not, the fence of a delete or recover cannot
/// be finished by either, and `repair` takes it away instead.
pub(crate) fn verify_run_on(
    run: &str,
    messages: Vec<RunMessage>,
    check: Option<&dyn RecordCheck>,
    purges: bool,
) -> Report {
    // A mark and a stage (`whole.rs`) are no records of the run: one
    // finding says what they are.
    let writing = format!(".{run}._writing.");
    let (marked, rest): (Vec<RunMessage>, Vec<RunMessage>) = messages
        .into_iter()
        .partition(|m| m.subject_seq.is_none() && m.subject.contains(&writing));
    let mut messages = rest;
    let pending = match marked.is_empty() {
        true => None,
        false => Some(
            marked
                .iter()
                .find(|m| m.subject.ends_with("._writing.intent"))
                .and_then(|m| Pending::parse(&m.body, m.stream_seq)),
        ),
    };
    sort_by_seq(&mut messages);
    let ordered = messages;
    let buf = as_lines(&ordered);
    let mut pre = Vec::new();
    for (i, m) in ordered.iter().enumerate() {
        let seq = Record::decode(&m.body).ok().map(|r| r.seq);
        let problem = match (m.subject_seq, seq) {
            (None, _) => Some(format!(
                "message {} is on subject {}, which is not a record subject (_meta or a seq >= 2)",
                i + 1,
                m.subject
            )),
            (Some(want), Some(got)) if want != got => Some(format!(
                "the record on subject {} holds seq {got}, not {want}",
                m.subject
            )),
            _ => None,
        };
        if let Some(message) = problem {
            pre.push(Finding {
                line: Some(i + 1),
                seq,
                excerpt: Some(crate::verify::excerpt(&m.body)),
                ..file_finding(run, Code::SubjectMismatch, message)
            });
        }
    }
    let mut report = verify_bytes(run, &buf, check);
    // Offsets into a message stream mean nothing: the line is the position.
    for f in &mut report.findings {
        f.offset = None;
    }
    // The fence of an interrupted delete is a final body that does not
    // parse, but no repair is what it needs: deleting again finishes it.
    let fences: Vec<usize> = ordered
        .iter()
        .enumerate()
        .filter(|(_, m)| is_tombstone(&m.body))
        .map(|(i, _)| i + 1)
        .collect();
    for f in &mut report.findings {
        if f.code == Code::GarbageFinalLine && f.line.is_some_and(|l| fences.contains(&l)) {
            let recover = f
                .line
                .and_then(|l| ordered.get(l.wrapping_sub(1)))
                .is_some_and(|m| is_recover_fence(&m.body));
            (f.message, f.remedy) = match (purges, recover) {
                (true, true) => ("the final message is the fence of an interrupted recover: readers drop it and no writer can append after it; recovering the run again finishes it (`repair` takes the fence away instead, and keeps the run as it is)".into(), Some(crate::Remedy::Recover)),
                (true, false) => ("the final message is the fence of an interrupted delete: readers drop it and no writer can append after it; deleting the run again finishes it (`repair` takes the fence away instead, and keeps the run)".into(), Some(crate::Remedy::Remove)),
                (false, _) => ("the final message is the fence of a delete or recover that could not finish: the stream denies purges (deny_purge), which both need, and no writer can append after the fence; `repair` takes it away and the run is as it was".into(), Some(crate::Remedy::Repair)),
            };
        }
    }
    if let Some(mark) = pending {
        pre.push(write_interrupted(run, mark.as_ref()));
    }
    pre.append(&mut report.findings);
    report.findings = pre;
    if let Some(f) = tail_behind(run, &ordered) {
        report.findings.push(f);
    }
    report
}

/// The finding for a run whose tail (the record stored last, which the
/// agent and the appenders take for the run's last seq and fence on) is
/// not its last record: an upgrade interrupted between its two publishes
/// (`upgrade.rs`) leaves the new meta record there. `upgrade RUN`
/// finishes it. `messages` in seq order.
fn tail_behind(run: &str, messages: &[RunMessage]) -> Option<Finding> {
    let records = messages.iter().filter(|m| m.subject_seq.is_some());
    let tail = records.clone().max_by_key(|m| m.stream_seq)?;
    let tail_seq = tail.subject_seq?;
    let last = records.filter_map(|m| m.subject_seq).max()?;
    if tail_seq >= last {
        return None;
    }
    let why = match tail_seq {
        1 => "an upgrade was interrupted between its two publishes".to_owned(),
        n => format!("record {n} was stored after record {last}"),
    };
    let message = format!(
        "the run's last stored message is record {tail_seq} ({}), not its last record {last}: {why}; readers here call the run corrupt and every writer (the agent's too) refuses it until the upgrade is finished",
        tail.subject
    );
    let line = messages
        .iter()
        .position(|m| std::ptr::eq(m, tail))
        .map(|i| i + 1);
    Some(Finding {
        line,
        seq: Some(tail_seq),
        ..file_finding(run, Code::UpgradeInterrupted, message)
    })
}

/// Whether a tombstone is `recover`'s (`delete.rs` words it so).
fn is_recover_fence(body: &[u8]) -> bool {
    body.windows(b"is being recovered".len())
        .any(|w| w == b"is being recovered")
}
