//! The audit log through the store (issue 38; the entries are
//! [`crate::audit`]'s): where each backend keeps it, reading it back, and
//! the one way a write is logged, [`Store::audited`]: its intent stored
//! durably first (a write whose intent cannot be stored is not made), the
//! change, then its outcome.
//!
//! A store logs only when it was told who writes through it
//! ([`Store::with_actor`]): the binary tells every store it writes to; a
//! store opened only to read logs nothing and never creates a log.

use super::Store;
use crate::audit::{Actor, Digest, Ended, Entry, Kind, Seqs};
use crate::error::{Error, Result, Where};
use crate::time::Time;

/// A write about to be made, as its intent states it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The command's name (`answer`, `rm` ...).
    pub op: String,
    /// The run written.
    pub run: String,
    /// The run before (`None`: there is none).
    pub before: Option<Digest>,
    /// The run the write makes (`None`: none, it is removed).
    pub after: Option<Digest>,
    /// The seqs it stores.
    pub written: Option<Seqs>,
    /// The seqs it takes away.
    pub removed: Option<Seqs>,
    /// Anything else to say (where a backup is kept).
    pub detail: Option<String>,
}

/// One entry of a log as read back.
#[derive(Debug, Clone)]
pub struct Logged {
    /// Its place in the log, 1-based.
    pub position: u64,
    /// Its bytes as stored.
    pub raw: Vec<u8>,
    /// The entry, or why its bytes are none.
    pub entry: std::result::Result<Entry, String>,
    /// When the store stored it (JetStream's message time; a file keeps none).
    pub stored: Option<Time>,
    /// Where it is: a line of the log file, or a subject.
    pub at: Where,
}

impl Store {
    /// This store, every write through it logged as `actor`'s (on
    /// JetStream with the NATS user its connection authenticates as).
    pub fn with_actor(mut self, actor: Actor) -> Store {
        match &mut self {
            Store::File(f) => f.set_actor(Some(actor)),
            Store::JetStream(j) => j.set_actor(Some(actor)),
        }
        self
    }

    /// Who writes through this store, when it logs its writes.
    pub fn actor(&self) -> Option<&Actor> {
        match self {
            Store::File(f) => f.actor(),
            Store::JetStream(j) => j.actor(),
        }
    }

    /// Where the store's audit log is: the log file (file), or the stream
    /// (JetStream: subjects `<prefix>._audit.<n>`).
    pub fn audit_place(&self) -> Where {
        match self {
            Store::File(f) => Where::Path(f.audit_path()),
            Store::JetStream(j) => j.place(),
        }
    }

    /// The audit log, for people: "file /x/fisk-admin-audit.jsonl" or
    /// "subjects p._audit.> of stream S on nats://..".
    pub fn describe_audit(&self) -> String {
        match self {
            Store::File(f) => format!("file {}", crate::shell::shown(&f.audit_path())),
            Store::JetStream(j) => format!(
                "subjects {}.{}.> of {}",
                j.prefix(),
                crate::audit::TOKEN,
                j.describe()
            ),
        }
    }

    /// The audit log, every entry as stored, in order; empty when the
    /// store has none.
    pub fn audit_log(&self) -> Result<Vec<Logged>> {
        match self {
            Store::File(f) => {
                let Some(bytes) = f.audit_bytes()? else {
                    return Ok(Vec::new());
                };
                let path = f.audit_path();
                Ok(super::file::log_lines(&bytes)
                    .into_iter()
                    .enumerate()
                    .map(|(i, (offset, raw))| Logged {
                        position: i as u64 + 1,
                        raw: raw.to_vec(),
                        entry: Entry::decode(raw),
                        stored: None,
                        at: Where::Line {
                            path: path.clone(),
                            line: i + 1,
                            offset,
                        },
                    })
                    .collect())
            }
            Store::JetStream(j) => Ok(j
                .audit_read()?
                .into_iter()
                .enumerate()
                .map(|(i, m)| Logged {
                    position: i as u64 + 1,
                    entry: Entry::decode(&m.body),
                    raw: m.body,
                    stored: Some(m.stored),
                    at: Where::Subject(Box::new(crate::place::Subject {
                        stream: j.name().to_owned(),
                        server: j.server().to_owned(),
                        subject: m.subject,
                        position: i + 1,
                    })),
                })
                .collect()),
        }
    }

    /// Append the entry `make` makes for its number and the link of the
    /// entry before it, durably. Returns its number and bytes.
    pub(crate) fn audit_append(
        &self,
        make: &mut (dyn FnMut(u64, Option<String>) -> Vec<u8> + Send),
    ) -> Result<(u64, Vec<u8>)> {
        match self {
            Store::File(f) => f.audit_append(make),
            Store::JetStream(j) => j.audit_append(make),
        }
    }

    /// Log `entry` (its number, link and time filled in here) when this
    /// store logs its writes: a seal, or entries carried from another
    /// store. `Ok(None)` when it does not.
    pub(crate) fn audit_note(&self, entry: Entry) -> Result<Option<(u64, Vec<u8>)>> {
        let Some(actor) = self.actor() else {
            return Ok(None);
        };
        let (operator, nats_user) = (actor.operator.clone(), actor.nats_user.clone());
        let mut make = |n: u64, prev: Option<String>| {
            Entry {
                n,
                prev,
                time: Time::now(),
                operator: Some(operator.clone()),
                nats_user: nats_user.clone(),
                ..entry.clone()
            }
            .encode()
        };
        self.audit_append(&mut make).map(Some)
    }

    /// The run's digest now (`None`: there is no run): its records as the
    /// reader reads them; a run the reader refuses (interior damage) as
    /// stored, one record a line.
    pub(crate) fn state_digest(&self, run: &str) -> Result<Option<Digest>> {
        match self.read(run) {
            Ok(j) => Ok(Some(Digest::of_lines(
                j.entries.iter().map(|e| e.raw.as_slice()),
                b"",
            ))),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(Error::Corrupt { .. } | Error::Fold { .. }) => {
                let raw = self.raw(run)?;
                Ok(Some(Digest::of_lines(
                    raw.split(|c| *c == b'\n').filter(|l| !l.is_empty()),
                    b"",
                )))
            }
            Err(e) => Err(e),
        }
    }

    /// Make the write `plan` states by `change`, logged when this store
    /// logs its writes: the intent first (when it cannot be stored the
    /// change is not made: [`Error::Audit`]), then the change, then its
    /// outcome (done, or failed with its error). A change made whose
    /// outcome cannot be stored is [`Error::Audit`] too, saying that the
    /// run was written: `verify` settles its intent from the run.
    pub(crate) fn audited<T>(&self, plan: &Plan, change: impl FnOnce() -> Result<T>) -> Result<T> {
        let Some(actor) = self.actor().cloned() else {
            return change();
        };
        let (intent, base) = intent_of(&actor, plan, self.audit_place())?;
        let mut make = |n: u64, prev: Option<String>| {
            Entry {
                n,
                prev,
                time: Time::now(),
                ..intent.clone()
            }
            .encode()
        };
        self.audit_append(&mut make)?;
        let changed = change();
        let outcome = outcome_of(base, plan, changed.as_ref().err());
        let mut make = |n: u64, prev: Option<String>| {
            Entry {
                n,
                prev,
                time: Time::now(),
                ..outcome.clone()
            }
            .encode()
        };
        let logged = self.audit_append(&mut make);
        closed(plan, changed, logged, self.audit_place())
    }
    /// Convert a version-3 run to version 1 (SPEC 12), keeping the original
    /// first: beside the journal (file), or as a file journal under the XDG
    /// state home (JetStream, where SPEC 8's `hold` applies unless `force`).
    ///
    /// A version-3 run is upgraded only as the run model's table lets it
    /// ([`crate::state`], asked as `ask`): one that waits on a person or is
    /// ready to resume only when named and forced, a damaged or corrupt one
    /// never. A dry run makes the same checks. Logged when this store logs
    /// its writes: the run before, and with its meta record's version 1.
    pub fn upgrade(
        &self,
        run: &str,
        dry_run: bool,
        hold: std::time::Duration,
        force: bool,
        ask: crate::state::Ask,
    ) -> Result<crate::upgrade::Outcome> {
        let as_is = || self.upgrade_as_is(run, dry_run, hold, force, ask);
        if dry_run || self.actor().is_none() {
            return as_is();
        }
        // Only an upgrade that will write is logged: one the checks refuse,
        // or a run left alone, writes nothing, to the log neither.
        match self.upgrade_as_is(run, true, hold, force, ask)? {
            crate::upgrade::Outcome::Would { .. } => {}
            _ => return as_is(),
        }
        // What the upgrade makes: the same records, the meta record's
        // version 1. A run it would refuse, or leave alone, writes nothing.
        let Ok(bytes) = self.raw(run) else {
            return as_is();
        };
        let lines: Vec<&[u8]> = bytes
            .split(|c| *c == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let Some(Ok(meta)) = lines.first().map(|m| crate::upgrade::meta_as_current(m)) else {
            return as_is();
        };
        let after = std::iter::once(meta.as_slice()).chain(lines.iter().skip(1).copied());
        let plan = Plan {
            op: crate::state::Op::Upgrade.word().to_owned(),
            run: run.to_owned(),
            before: Some(Digest::of_lines(lines.iter().copied(), b"")),
            after: Some(Digest::of_lines(after, b"")),
            written: Seqs::range(1, 1),
            removed: Seqs::range(1, 1),
            detail: Some("the meta record's version 3 made 1; the original kept".into()),
        };
        self.audited(&plan, as_is)
    }

    /// Fix a damaged tail (file backend: a torn final line or a missing
    /// final newline; JetStream: the fence an interrupted delete or
    /// recover left), under the run lock. Logged when this store logs its
    /// writes and there is something to fix: the records the reader reads
    /// stay what they were, the detail says what was done to the tail.
    pub fn repair(&self, run: &str, dry_run: bool) -> Result<super::Repair> {
        if dry_run || self.actor().is_none() {
            return self.repair_as_is(run, dry_run);
        }
        let what = match self.repair_as_is(run, true)? {
            n @ super::Repair::Nothing { .. } => return Ok(n),
            super::Repair::AddedNewline { line, .. } => {
                format!("the final record (line {line}) given its newline")
            }
            super::Repair::CutTorn {
                line, offset, len, ..
            } => {
                format!("a torn final line cut (line {line}, byte {offset}, {len} bytes), its bytes kept")
            }
            super::Repair::RemovedFence { subject, .. } => {
                format!("the fence {subject} of an interrupted delete or recover taken away")
            }
        };
        let now = self.state_digest(run)?;
        let plan = Plan {
            op: crate::state::Op::Repair.word().to_owned(),
            run: run.to_owned(),
            before: now.clone(),
            after: now,
            detail: Some(what),
            ..Plan::default()
        };
        self.audited(&plan, || self.repair_as_is(run, false))
    }
}

/// A write of many runs logged as one (`migrate`): one intent before
/// anything is written, one outcome per run written, one closing outcome.
#[derive(Debug, Clone)]
pub(crate) struct Batch {
    base: Entry,
}

impl Store {
    /// Log the intent of a write of many runs (`op`, what it is in
    /// `detail`): `None` when this store does not log its writes; an error
    /// when the intent cannot be stored (nothing may be written then).
    pub(crate) fn audit_begin(&self, op: &str, detail: String) -> Result<Option<Batch>> {
        let Some(actor) = self.actor().cloned() else {
            return Ok(None);
        };
        let base = new_write(&actor, op, self.audit_place())?;
        let intent = Entry {
            detail: Some(detail),
            ..intent_base(&actor, &base)
        };
        self.audit_note(intent)?;
        Ok(Some(Batch { base }))
    }

    /// Log what a write of many runs did to one of them: `after` the run
    /// as written, or the error it failed with.
    pub(crate) fn audit_each(
        &self,
        batch: &Batch,
        run: &str,
        done: std::result::Result<Digest, String>,
        detail: Option<String>,
    ) -> Result<()> {
        let outcome = Entry {
            kind: Kind::Outcome,
            run: Some(run.to_owned()),
            result: Some(match done.is_ok() {
                true => Ended::Done,
                false => Ended::Failed,
            }),
            written: done.as_ref().ok().and_then(|d| Seqs::range(1, d.records)),
            error: done.as_ref().err().cloned(),
            after: done.ok(),
            detail,
            ..batch.base.clone()
        };
        self.audit_note(outcome).map(|_| ())
    }

    /// Close a write of many runs: `runs` of them written.
    pub(crate) fn audit_end(&self, batch: &Batch, detail: String) -> Result<()> {
        let outcome = Entry {
            kind: Kind::Outcome,
            result: Some(Ended::Done),
            detail: Some(detail),
            ..batch.base.clone()
        };
        self.audit_note(outcome).map(|_| ())
    }
}

/// The intent of the write `plan` by `actor` (a new write id), and the
/// fields its outcome shares with it; `at` names the log in an error.
pub(crate) fn intent_of(actor: &Actor, plan: &Plan, at: Where) -> Result<(Entry, Entry)> {
    let base = Entry {
        run: Some(plan.run.clone()),
        ..new_write(actor, &plan.op, at)?
    };
    let intent = Entry {
        before: plan.before.clone(),
        after: plan.after.clone(),
        absent_before: plan.before.is_none(),
        absent_after: plan.after.is_none(),
        written: plan.written,
        removed: plan.removed,
        detail: plan.detail.clone(),
        ..intent_base(actor, &base)
    };
    Ok((intent, base))
}

/// The fields every entry of a new write by `actor` shares: a new write
/// id, the operation and who made it; `at` names the log in an error.
fn new_write(actor: &Actor, op: &str, at: Where) -> Result<Entry> {
    let write = crate::digest::random_hex::<8>().map_err(|e| Error::Audit {
        at,
        message: format!("no randomness for the write's id: {e}; nothing was written"),
    })?;
    Ok(Entry {
        write,
        op: Some(op.to_owned()),
        operator: Some(actor.operator.clone()),
        nats_user: actor.nats_user.clone(),
        ..Entry::default()
    })
}

/// The intent of the write `base` begins: the command as run and why.
fn intent_base(actor: &Actor, base: &Entry) -> Entry {
    Entry {
        kind: Kind::Intent,
        command: Some(Actor::cut_command(&actor.command)),
        why: actor.why.clone(),
        ..base.clone()
    }
}

/// The outcome of the write `plan` whose intent shares `base`: done, or
/// failed with `failed`.
pub(crate) fn outcome_of(base: Entry, plan: &Plan, failed: Option<&Error>) -> Entry {
    Entry {
        kind: Kind::Outcome,
        result: Some(match failed {
            None => Ended::Done,
            Some(_) => Ended::Failed,
        }),
        error: failed.map(ToString::to_string),
        after: failed.is_none().then(|| plan.after.clone()).flatten(),
        absent_after: failed.is_none() && plan.after.is_none(),
        ..base
    }
}

/// How a logged write ends: the change's result, unless the change was
/// made and its outcome could not be logged (then an error saying so).
pub(crate) fn closed<T>(
    plan: &Plan,
    changed: Result<T>,
    logged: Result<(u64, Vec<u8>)>,
    at: Where,
) -> Result<T> {
    match (changed, logged) {
        (Ok(t), Ok(_)) => Ok(t),
        (Ok(_), Err(e)) => Err(Error::Audit {
            at,
            message: format!(
                "run {} was written ({}), but the outcome could not be logged ({e}); verify settles its intent from the run",
                crate::shell::text(&plan.run),
                plan.op
            ),
        }),
        (Err(e), _) => Err(e),
    }
}
