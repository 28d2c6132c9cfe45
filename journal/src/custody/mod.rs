//! Chain of custody (issue 38), read back: the audit log checked (every
//! entry links to the one before it; an intent with no outcome settled
//! from its run), and seals ([`seal`]): what a store held at a moment,
//! proven later against the store, a copy of it, or an exported run.
//!
//! The log's entries are [`crate::audit`]'s, kept by the store
//! ([`Store::audit_log`]); this module judges them and prints nothing.

pub mod key;
pub mod seal;

use crate::audit::{link, settle, Entry, Kind, Settled};
use crate::error::{Result, Where};
use crate::store::{Logged, Store};
use std::collections::HashMap;

/// Something wrong with the audit log itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The entry's place in the log, 1-based.
    pub position: u64,
    /// Where it is.
    pub at: Where,
    /// What is wrong, for a person.
    pub message: String,
}

/// A write whose intent has no outcome: the process was killed between
/// them (or the outcome could not be stored). Settled from the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dangling {
    /// The intent as stored.
    pub intent: Entry,
    /// Where it is.
    pub at: Where,
    /// What the run says the write did.
    pub settled: Settled,
}

/// The run's last write fisk-admin logged as done, and whether the run is
/// still what it made (records appended after it are the agent's: a run
/// that grew still holds it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// The outcome's intent.
    pub intent: Entry,
    /// The run now, against what the write made.
    pub settled: Settled,
}

/// What [`check_log`] found.
#[derive(Debug, Clone, Default)]
pub struct LogCheck {
    /// Entries in the log.
    pub entries: u64,
    /// The link of its last entry (what a seal records).
    pub head: Option<String>,
    /// Entries that do not read, or do not link.
    pub broken: Vec<Broken>,
    /// Intents with no outcome, settled.
    pub dangling: Vec<Dangling>,
    /// Per run, the last write logged as done, against the run now: only
    /// those the run no longer holds.
    pub changed_since: Vec<Since>,
}

/// The chain of `log`: each entry must read, be numbered by its place,
/// and name the link of the entry before it.
pub fn chain_breaks(log: &[Logged]) -> Vec<Broken> {
    let mut out = Vec::new();
    let mut prev: Option<String> = None;
    for l in log {
        let problem = match &l.entry {
            Err(e) => Some(format!("entry {} does not read as an audit entry ({e}): it was edited or damaged", l.position)),
            Ok(e) if e.n != l.position => Some(format!(
                "entry {} says it is entry {}: an entry before it was removed or added",
                l.position, e.n
            )),
            Ok(e) if e.prev != prev => Some(format!(
                "entry {} does not link to entry {} as stored: one of them was edited, or an entry between them removed",
                l.position,
                l.position.saturating_sub(1)
            )),
            Ok(_) => None,
        };
        if let Some(message) = problem {
            out.push(Broken {
                position: l.position,
                at: l.at.clone(),
                message,
            });
        }
        prev = Some(link(&l.raw));
    }
    out
}

/// Check the store's audit log: its chain, the intents nobody closed
/// (each settled from its run as it is now), and, for `runs` (every run
/// the log names when empty), whether each run still holds what its last
/// logged write made. Reads the runs the log names.
pub fn check_log(store: &Store, runs: &[String]) -> Result<LogCheck> {
    let log = store.audit_log()?;
    let mut check = LogCheck {
        entries: log.len() as u64,
        head: log.last().map(|l| link(&l.raw)),
        broken: chain_breaks(&log),
        ..LogCheck::default()
    };
    let wanted = |run: &str| runs.is_empty() || runs.iter().any(|r| r == run);
    // Intents in order; an outcome of the same write and run closes one
    // (a write of many runs, `migrate`, is closed by its outcome naming
    // no run).
    let mut open: Vec<(&Logged, &Entry)> = Vec::new();
    let mut closed: HashMap<(&str, Option<&str>), ()> = HashMap::new();
    let mut last_done: HashMap<&str, &Entry> = HashMap::new();
    let mut intents: HashMap<(&str, &str), &Entry> = HashMap::new();
    for l in &log {
        let Ok(e) = &l.entry else { continue };
        match e.kind {
            Kind::Intent => {
                open.push((l, e));
                if let Some(run) = e.run.as_deref() {
                    intents.insert((e.write.as_str(), run), e);
                }
            }
            Kind::Outcome => {
                closed.insert((e.write.as_str(), e.run.as_deref()), ());
                let (Some(run), Some(crate::audit::Ended::Done)) = (e.run.as_deref(), e.result)
                else {
                    continue;
                };
                // A single write: its intent says what it made; a write
                // of many runs: the outcome does.
                let made = intents.get(&(e.write.as_str(), run)).copied().unwrap_or(e);
                last_done.insert(run, made);
            }
            Kind::Seal | Kind::Carried => {}
        }
    }
    let mut reads: HashMap<String, Option<Vec<Vec<u8>>>> = HashMap::new();
    let mut now = |run: &str| -> Result<Option<Vec<Vec<u8>>>> {
        if let Some(r) = reads.get(run) {
            return Ok(r.clone());
        }
        let lines = match store.read_lines(run) {
            Ok(bytes) => Some(
                bytes
                    .split(|c| *c == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(<[u8]>::to_vec)
                    .collect(),
            ),
            Err(crate::Error::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        reads.insert(run.to_owned(), lines.clone());
        Ok(lines)
    };
    for (l, e) in open {
        if closed.contains_key(&(e.write.as_str(), e.run.as_deref())) {
            continue;
        }
        let Some(run) = e.run.as_deref() else {
            check.dangling.push(Dangling {
                intent: e.clone(),
                at: l.at.clone(),
                settled: Settled::Neither,
            });
            continue;
        };
        if !wanted(run) {
            continue;
        }
        let lines = now(run)?;
        check.dangling.push(Dangling {
            intent: e.clone(),
            at: l.at.clone(),
            settled: settle(e, lines.as_deref()),
        });
    }
    let mut last: Vec<(&str, &Entry)> = last_done.into_iter().collect();
    last.sort_by_key(|(r, _)| *r);
    for (run, e) in last {
        if !wanted(run) {
            continue;
        }
        let lines = now(run)?;
        let settled = settle(e, lines.as_deref());
        if !matches!(settled, Settled::Done { .. }) {
            check.changed_since.push(Since {
                intent: e.clone(),
                settled,
            });
        }
    }
    Ok(check)
}

/// The entries of `log` about `run`, as written here or carried with it
/// from another store (the carried entry decoded, with where it came
/// from).
pub fn about_run<'a>(
    log: &'a [Logged],
    run: &'a str,
) -> impl Iterator<Item = (&'a Logged, Entry)> + 'a {
    log.iter().filter_map(move |l| {
        let e = l.entry.as_ref().ok()?;
        match e.kind {
            Kind::Carried => {
                let inner = e.carried()?;
                (inner.run.as_deref() == Some(run)).then(|| {
                    let from = e.from.clone();
                    (l, Entry { from, ..inner })
                })
            }
            _ => (e.run.as_deref() == Some(run)).then(|| (l, e.clone())),
        }
    })
}

/// The audit log's findings for `verify` (issue 38): a broken chain
/// (`audit-chain`, named `audit log`), each intent nobody closed settled
/// from its run (`audit-intent`), and each run that is no longer what its
/// last logged write made of it (`audit-changed`). Nothing when the store
/// has no log.
pub fn findings(store: &Store, runs: &[String]) -> Result<crate::verify::Report> {
    use crate::verify::{Code, Finding};
    let check = check_log(store, runs)?;
    let place = |at: &Where| match at {
        Where::Line { line, offset, .. } => (Some(*line), Some(*offset)),
        _ => (None, None),
    };
    let finding = |run: &str, code: Code, at: Option<&Where>, message: String| {
        let (line, offset) = at.map_or((None, None), place);
        Finding {
            run: run.to_owned(),
            code,
            severity: code.severity(),
            line,
            offset,
            seq: None,
            message,
            excerpt: None,
            remedy: None,
        }
    };
    let mut out = Vec::new();
    for b in &check.broken {
        out.push(finding(
            "audit log",
            Code::AuditChain,
            Some(&b.at),
            format!("{} ({})", b.message, b.at),
        ));
    }
    for d in &check.dangling {
        let e = &d.intent;
        let what = describe(e);
        let run = e.run.as_deref().unwrap_or("audit log");
        let verdict = match &d.settled {
            Settled::Done { grew: 0 } => "the run shows it done".to_owned(),
            Settled::Done { grew } => {
                format!("the run shows it done, and {grew} record(s) stored after it")
            }
            Settled::NotDone { grew: 0 } => "the run shows it not done: it is as it was".to_owned(),
            Settled::NotDone { grew } => format!(
                "the run shows it not done: it is as it was, with {grew} record(s) another writer stored after"
            ),
            Settled::Neither if e.run.is_none() => {
                "a write of many runs: each run's own outcome says what it made".to_owned()
            }
            Settled::Neither => {
                "the run is neither as it was nor as the write makes it: changed since".to_owned()
            }
        };
        out.push(finding(
            run,
            Code::AuditIntent,
            Some(&d.at),
            format!("{what} was begun and never closed (killed before its outcome): {verdict}"),
        ));
    }
    for s in &check.changed_since {
        let run = s.intent.run.as_deref().unwrap_or_default();
        let now = match s.settled {
            Settled::NotDone { .. } => "is as it was before it",
            _ => "is neither what it made nor that with records appended",
        };
        out.push(finding(
            run,
            Code::AuditChanged,
            None,
            format!(
                "the last write the audit log records, {}, made {}; the run now {now}: it was changed by something that logs nothing",
                describe(&s.intent),
                match &s.intent.after {
                    Some(d) => format!("{} record(s), SHA-256 {}", d.records, d.sha256),
                    None => "no run (it removed it)".to_owned(),
                }
            ),
        ));
    }
    Ok(crate::verify::Report {
        findings: out,
        ..Default::default()
    })
}

/// "answer by alice at T" for a message.
pub fn describe(e: &Entry) -> String {
    format!(
        "{} by {} at {}",
        e.op.as_deref().unwrap_or("a write"),
        crate::shell::text(e.operator.as_deref().unwrap_or("someone")),
        e.time
    )
}

/// A write by hand to one run, as the audit log tells it: its intent and
/// outcome together (issue 38: what `show`, `inbox` and `ls` say beside
/// a run).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Act {
    /// The command (`answer`, `approve`, `end` ...).
    pub op: String,
    /// Who.
    pub operator: String,
    /// Who, on JetStream: the NATS user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nats_user: Option<String>,
    /// When (the store's time where it keeps one, else the intent's).
    pub time: crate::time::Time,
    /// Why, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The seqs it wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<crate::audit::Seqs>,
    /// Whether it was done (`None`: never closed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<crate::audit::Ended>,
    /// The store whose log it was carried from (migrate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<String>,
}

impl Act {
    /// "answered by alice at T: why" (the verb of its command).
    pub fn sentence(&self) -> String {
        let verb = match self.op.as_str() {
            "answer" => "answered",
            "approve" => "approved",
            "end" => "ended",
            "fork" => "forked",
            "recover" => "recovered",
            "repair" => "repaired",
            "upgrade" => "upgraded",
            "backups restore" => "restored",
            "rm" => "removed",
            other => other,
        };
        let mut s = format!(
            "{verb} by {} at {}",
            crate::shell::text(&self.operator),
            self.time
        );
        if let Some(n) = &self.nats_user {
            s.push_str(&format!(" (NATS user {})", crate::shell::text(n)));
        }
        if let Some(w) = &self.why {
            s.push_str(&format!(": {}", crate::shell::text(w)));
        }
        if self.result.is_none() {
            s.push_str(" (never closed: verify settles it)");
        }
        if let Some(f) = &self.carried_from {
            s.push_str(&format!(" (logged in {})", crate::shell::text(f)));
        }
        s
    }
}

/// The writes by hand the audit log records for `run` that made it what
/// it is, oldest first: not a failed one (it wrote nothing), nor a copy
/// (`migrate`: the run's content came with it, and so did the entries
/// of its own writes), nor a removal.
pub fn acts(log: &[Logged], run: &str) -> Vec<Act> {
    let mut out: Vec<(String, Act)> = Vec::new();
    for (l, e) in about_run(log, run) {
        let key = format!("{}|{}", e.write, e.from.as_deref().unwrap_or_default());
        let time = l.stored.filter(|_| e.from.is_none()).unwrap_or(e.time);
        match e.kind {
            Kind::Intent => out.push((
                key,
                Act {
                    op: e.op.clone().unwrap_or_default(),
                    operator: e.operator.clone().unwrap_or_default(),
                    nats_user: e.nats_user.clone(),
                    time,
                    why: e.why.clone(),
                    written: e.written,
                    result: None,
                    carried_from: e.from.clone(),
                },
            )),
            Kind::Outcome => match out.iter_mut().rev().find(|(k, _)| *k == key) {
                Some((_, a)) => a.result = e.result,
                // A write of many runs: its outcome for this run.
                None => out.push((
                    key,
                    Act {
                        op: e.op.clone().unwrap_or_default(),
                        operator: e.operator.clone().unwrap_or_default(),
                        nats_user: e.nats_user.clone(),
                        time,
                        why: None,
                        written: e.written,
                        result: e.result,
                        carried_from: e.from.clone(),
                    },
                )),
            },
            Kind::Seal | Kind::Carried => {}
        }
    }
    out.into_iter()
        .map(|(_, a)| a)
        .filter(|a| a.result != Some(crate::audit::Ended::Failed))
        .filter(|a| !matches!(a.op.as_str(), "migrate" | "rm" | "migrate --delete-source"))
        .collect()
}
