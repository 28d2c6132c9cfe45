//! The run model (`journal::state`, issue 35) proved against a model of
//! its own, the way redb tests against a reference: random sequences of
//! operations, seeded and reproducible from the seed, applied to a real
//! store (a directory; a stream on a real nats-server) and to a small
//! model that keeps each run as abstract events. The operations are the
//! agent's own append path as `run` and `resume` write it (a new run, a
//! resumed one), `answer`, `approve` (a call, a tool), `end` (named or by
//! filter, forced or not), `recover`, `fork`, `repair`, `rm` (named or by
//! filter), `backups restore` and `prune`, `upgrade`, a torn final line
//! (a crash mid-append, file backend) and a held lock (a live writer).
//!
//! After every step: the journal read back is the model's events (every
//! record a person wrote is still there, or in the run's backup); the
//! state `ls` reports (the tail), the state a whole read reports and the
//! model's state agree; the agent's status and waits (the fold, which the
//! shared corpus holds to the agent's own) agree with the model's; and
//! every write the table refuses was refused, leaving the store byte for
//! byte as it was, while every write it allows with valid arguments was
//! done.
//!
//! `MODEL_SEED` replays a failure (the seed is printed with it);
//! `MODEL_STEPS` runs longer than CI does.
// A test crate: a panic is a failed test.

use crate::nats_support;

use journal::fold::{fold_with, FoldOptions, Status};
use journal::ops;
use journal::record::{Generation, Payload, Record};
use journal::state::{Ask, State};
use journal::store::file::FileStore;
use journal::store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;

/// xorshift64*: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        match v.is_empty() {
            true => None,
            false => v.get(self.below(v.len())),
        }
    }
}

/// A record as the model keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ev {
    Meta,
    /// An assistant turn and its calls (id, tool).
    Turn(Vec<(String, String)>),
    /// A tool result; `person`: it answers a call the turn deferred (an
    /// answer by hand, or an error result recover wrote for one: the
    /// documented rule, FORMAT.md "Run states").
    Result {
        id: String,
        person: bool,
    },
    Deferred(String),
    /// A terminal, and the calls (id, tool) it names as needing an
    /// approval.
    Terminal {
        reason: String,
        gated: Vec<(String, String)>,
    },
    CallApproval(String),
    Decision(String),
    Claim,
}

#[derive(Clone, Debug)]
struct MRun {
    version: i64,
    evs: Vec<Ev>,
    /// A torn final line follows the records (file backend).
    torn: bool,
}

/// What the model says of a run: the state word, the agent's status and
/// how many deferrals wait.
#[derive(Debug, PartialEq, Eq)]
struct Says {
    state: &'static str,
    status: String,
    open_deferrals: usize,
}

impl MRun {
    fn last_turn(&self) -> Option<usize> {
        self.evs.iter().rposition(|e| matches!(e, Ev::Turn(_)))
    }

    /// The open turn's calls, and of them the answered, deferred and
    /// once-approved ids after the turn opened.
    fn pending(&self) -> Option<Pending> {
        let at = self.last_turn()?;
        let Ev::Turn(calls) = &self.evs[at] else {
            return None;
        };
        let mut p = Pending {
            calls: calls.clone(),
            ..Pending::default()
        };
        for e in &self.evs[at + 1..] {
            match e {
                Ev::Result { id, .. } => {
                    p.answered.insert(id.clone());
                }
                Ev::Deferred(id) => {
                    p.deferred.insert(id.clone());
                }
                _ => {}
            }
        }
        // A turn ends with every call answered (or by a user turn, which
        // this model does not write): then nothing is pending.
        if p.calls.iter().all(|(id, _)| p.answered.contains(id)) {
            return None;
        }
        Some(p)
    }

    /// One-shot approvals still live: after the last terminal.
    fn live_call_approvals(&self) -> BTreeSet<String> {
        let from = self
            .evs
            .iter()
            .rposition(|e| matches!(e, Ev::Terminal { .. }))
            .map_or(0, |i| i + 1);
        self.evs[from..]
            .iter()
            .filter_map(|e| match e {
                Ev::CallApproval(id) => Some(id.clone()),
                _ => None,
            })
            .collect()
    }

    fn decisions(&self) -> BTreeSet<String> {
        self.evs
            .iter()
            .filter_map(|e| match e {
                Ev::Decision(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    /// The calls waiting on an approval: named by the last terminal, a
    /// `suspended` one written while the open turn was open; no result,
    /// deferral, live one-shot approval, or decision for the tool.
    fn gated(&self) -> Vec<String> {
        let (Some(p), Some(turn)) = (self.pending(), self.last_turn()) else {
            return Vec::new();
        };
        let Some(t) = self
            .evs
            .iter()
            .rposition(|e| matches!(e, Ev::Terminal { .. }))
        else {
            return Vec::new();
        };
        let Ev::Terminal { reason, gated } = &self.evs[t] else {
            return Vec::new();
        };
        if t < turn || reason != "suspended" {
            return Vec::new();
        }
        let (once, decided) = (self.live_call_approvals(), self.decisions());
        p.calls
            .iter()
            .filter(|(id, tool)| {
                gated.iter().any(|(g, t)| g == id && t == tool)
                    && !p.answered.contains(id)
                    && !p.deferred.contains(id)
                    && !once.contains(id)
                    && !decided.contains(tool)
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    fn open_deferrals(&self) -> Vec<String> {
        self.pending().map_or_else(Vec::new, |p| {
            p.deferred
                .iter()
                .filter(|d| !p.answered.contains(*d))
                .cloned()
                .collect()
        })
    }

    /// The model's own reading of where the run stands (FORMAT.md, "Run
    /// states"), written apart from the library's.
    fn says(&self) -> Says {
        let status = match self.evs.last() {
            Some(Ev::Terminal { reason, .. }) => reason.clone(),
            _ => "open".to_owned(),
        };
        let open = self.open_deferrals();
        let state = if self.torn {
            "damaged"
        } else if !open.is_empty() {
            "waiting-answer"
        } else if !self.gated().is_empty() {
            "waiting-approval"
        } else {
            // The records after the agent's last step.
            let mut acted = false;
            let mut stop = None;
            for e in self.evs.iter().rev() {
                match e {
                    Ev::Result { person, .. } => acted |= *person,
                    Ev::CallApproval(_) | Ev::Decision(_) => acted = true,
                    other => {
                        stop = Some(other);
                        break;
                    }
                }
            }
            let terminal = match stop {
                Some(Ev::Terminal { reason, .. }) => Some(reason.as_str()),
                _ => None,
            };
            match (acted, terminal) {
                (true, Some("completed")) => "ended",
                (true, _) => "ready",
                (false, Some("suspended")) => "suspended",
                (false, Some(_)) => "ended",
                (false, None) => "open",
            }
        };
        Says {
            state,
            status,
            open_deferrals: open.len(),
        }
    }

    /// The person's records: answers by id, approvals by id or tool.
    fn persons(&self) -> Vec<Ev> {
        self.evs
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Ev::Result { person: true, .. } | Ev::CallApproval(_) | Ev::Decision(_)
                )
            })
            .cloned()
            .collect()
    }
}

#[derive(Default)]
struct Pending {
    calls: Vec<(String, String)>,
    answered: BTreeSet<String>,
    deferred: BTreeSet<String>,
}

/// The model: runs by id, and the runs `rm` kept (by backup id).
#[derive(Default)]
struct Model {
    runs: BTreeMap<String, MRun>,
    removed: BTreeMap<String, (String, MRun)>,
    next_id: u64,
    /// What the steps did: (operation, outcome) -> count, and the states
    /// the runs were seen in.
    tally: BTreeMap<String, usize>,
}

impl Model {
    fn count(&mut self, what: &str) {
        *self.tally.entry(what.to_owned()).or_default() += 1;
    }
}

/// The backend under test.
struct Under {
    store: Store,
    /// The store directory (file backend): for torn tails and locks.
    dir: Option<std::path::PathBuf>,
}

impl Under {
    fn file(&self) -> Option<&FileStore> {
        match &self.store {
            Store::File(f) => Some(f),
            _ => None,
        }
    }
}

const P: &str = "io.choria.fisk-ai.v1.session.";

fn record(seq: u64, kind: &str, body: &str) -> Record {
    let line = format!(r#"{{"seq":{seq},"protocol":"{P}{kind}","{kind}":{body}}}"#);
    Record::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn payload(kind: &str, body: &str) -> Payload {
    record(1, kind, body).payload.unwrap()
}

fn generation(v: i64) -> Generation {
    match v {
        3 => Generation::August,
        _ => Generation::Current,
    }
}

/// Append `evs` to `run` (created when `create`) through the library's
/// appender, as the agent's runner writes them.
fn append(u: &Under, run: &str, version: i64, evs: &[Ev], create: bool) {
    let mut app = match create {
        true => u.store.create_appender(run).unwrap(),
        false => u.store.open_appender(run).unwrap(),
    };
    let g = generation(version);
    for e in evs {
        let p = match e {
            Ev::Meta => payload(
                "meta",
                &format!(
                    r#"{{"version":{version},"run_id":"{run}","created":"2026-12-01T10:00:00Z","fingerprint":{{"provider":"anthropic","model":"m","system_hash":"s","tools_hash":"t","thinking_mode":"off","max_tokens":1000,"max_iterations":30}},"prompt":"go"}}"#
                ),
            ),
            Ev::Turn(calls) => {
                let blocks: Vec<String> = calls
                    .iter()
                    .map(|(id, tool)| {
                        format!(r#"{{"tool_use":{{"id":"{id}","name":"{tool}","input":{{}}}}}}"#)
                    })
                    .collect();
                let stop = if calls.is_empty() {
                    "end_turn"
                } else {
                    "tool_use"
                };
                payload(
                    "assistant",
                    &format!(
                        r#"{{"iteration":0,"message":{{"role":"assistant","content":[{{"text":{{"text":"t"}}}}{}{}]}},"stop_reason":"{stop}","in_tokens":10,"out_tokens":5}}"#,
                        if blocks.is_empty() { "" } else { "," },
                        blocks.join(",")
                    ),
                )
            }
            Ev::Result { id, person } => payload(
                "tool_result",
                &format!(
                    r#"{{"tool_use_id":"{id}","result":{{"tool_use_id":"{id}","content":"{}"}},"kind":"builtin","dispatched":true}}"#,
                    if *person { "by hand" } else { "ran" }
                ),
            ),
            Ev::Deferred(id) => payload(
                "deferred",
                &format!(
                    r#"{{"tool_use_id":"{id}","tool_name":"ask","kind":"builtin","dispatched":true}}"#
                ),
            ),
            Ev::Terminal { reason, gated } => {
                let named: Vec<String> =
                    gated.iter().map(|(id, t)| format!("{id} ({t})")).collect();
                let message = match named.is_empty() {
                    true => String::new(),
                    false => format!(r#","message":"needs approval: {}""#, named.join(", ")),
                };
                payload("terminal", &format!(r#"{{"reason":"{reason}"{message}}}"#))
            }
            Ev::CallApproval(id) => payload(
                "call_approval",
                &format!(r#"{{"tool_use_id":"{id}","tool_name":"x"}}"#),
            ),
            Ev::Decision(t) => payload("decision", &format!(r#"{{"tool":"{t}"}}"#)),
            Ev::Claim => payload(
                "claim",
                r#"{"by":"model","claimed":"2026-12-01T10:00:00Z"}"#,
            ),
        };
        app.append_next(p, g).unwrap();
    }
}

/// The run's records read back as the model's events: a result is a
/// person's when the open turn deferred its call.
fn read_back(u: &Under, run: &str) -> Option<(i64, Vec<Ev>, bool)> {
    let journal = match u.store.read(run) {
        Ok(j) => j,
        Err(journal::Error::NotFound { .. }) => return None,
        Err(e) => panic!("{run}: {e}"),
    };
    let mut version = 0;
    let mut evs = Vec::new();
    let mut deferred: BTreeSet<String> = BTreeSet::new();
    for r in journal.records() {
        let e = match &r.payload {
            Some(Payload::Meta(meta)) => {
                version = meta.version;
                Ev::Meta
            }
            Some(Payload::Assistant(a)) => {
                deferred.clear();
                Ev::Turn(
                    a.message
                        .blocks()
                        .iter()
                        .filter_map(|b| match b {
                            journal::record::Block::ToolUse(t) => {
                                Some((t.id.clone(), t.name.clone()))
                            }
                            _ => None,
                        })
                        .collect(),
                )
            }
            Some(Payload::ToolResult(t)) => Ev::Result {
                id: t.tool_use_id.clone(),
                person: deferred.contains(&t.tool_use_id),
            },
            Some(Payload::Deferred(d)) => {
                deferred.insert(d.tool_use_id.clone());
                Ev::Deferred(d.tool_use_id.clone())
            }
            Some(Payload::Terminal(t)) => Ev::Terminal {
                reason: t.reason.clone(),
                gated: t
                    .message
                    .strip_prefix("needs approval: ")
                    .map(|l| {
                        l.split(", ")
                            .filter_map(|g| g.strip_suffix(')')?.split_once(" ("))
                            .map(|(id, t)| (id.to_owned(), t.to_owned()))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            Some(Payload::CallApproval(c)) => Ev::CallApproval(c.tool_use_id.clone()),
            Some(Payload::Decision(d)) => Ev::Decision(d.tool.clone()),
            Some(Payload::Claim(_)) => Ev::Claim,
            other => panic!("{run}: a record the model never writes: {other:?}"),
        };
        evs.push(e);
    }
    Some((version, evs, !journal.tail.is_clean()))
}

/// Everything of run `run` a write could change: its stored bytes (file
/// backend: every file of its name, its journal, lock and backups), and
/// the store's backups.
fn snapshot(u: &Under, run: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    if let Some(dir) = &u.dir {
        let mine = format!("{run}.");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(&mine) {
                out.push((name, std::fs::read(&p).unwrap_or_default()));
            }
        }
    } else if let Ok(j) = u.store.read(run) {
        let bytes = j
            .entries
            .iter()
            .flat_map(|e| e.raw.iter().copied().chain([b'\n']))
            .collect();
        out.push((run.to_owned(), bytes));
    }
    for b in ops::backups::list(&u.store).unwrap() {
        out.push((format!("backup {}", b.id), b.bytes.to_le_bytes().to_vec()));
    }
    out.sort();
    out
}

/// How a step ended against what the table says of it.
fn expect_refused(
    what: &str,
    r: &journal::Result<()>,
    before: &[(String, Vec<u8>)],
    u: &Under,
    run: &str,
) {
    assert!(r.is_err(), "{what}: the table refuses it, and it was done");
    assert_eq!(
        snapshot(u, run),
        before,
        "{what}: refused, and the store changed"
    );
}

/// The checks after a step: journal, states, fold and model agree, for
/// the runs `only` names (every run when `None`).
fn check(u: &Under, m: &Model, ctx: &str, only: Option<&BTreeSet<String>>) {
    let listed = u.store.runs().unwrap();
    let modelled: Vec<String> = m.runs.keys().cloned().collect();
    assert_eq!(listed, modelled, "{ctx}: the runs");
    for (run, mr) in &m.runs {
        if only.is_some_and(|o| !o.contains(run)) {
            continue;
        }
        let (version, evs, torn) = read_back(u, run).unwrap_or_else(|| panic!("{ctx}: {run} gone"));
        assert_eq!(version, mr.version, "{ctx}: {run} version");
        assert_eq!(evs, mr.evs, "{ctx}: {run}: the journal is not the model's");
        assert_eq!(torn, mr.torn, "{ctx}: {run} tail");
        let says = mr.says();
        let summary = u.store.summary(run);
        assert_eq!(
            summary.state.word(),
            says.state,
            "{ctx}: {run}: ls's state; {evs:?}"
        );
        let whole = u.store.state(run).unwrap();
        assert_eq!(
            whole.word(),
            says.state,
            "{ctx}: {run}: a whole read's state"
        );
        let journal = u.store.read(run).unwrap();
        let st = fold_with(journal.records(), FoldOptions::inspect()).unwrap();
        let status = match &st.status {
            Status::Open => "open".to_owned(),
            Status::Terminal(r) => r.as_str().to_owned(),
            _ => "?".to_owned(),
        };
        assert_eq!(status, says.status, "{ctx}: {run}: the agent's status");
        assert_eq!(
            st.open_deferrals, says.open_deferrals,
            "{ctx}: {run}: open deferrals"
        );
        assert_eq!(
            st.needs_approval.len(),
            mr.gated().len(),
            "{ctx}: {run}: calls waiting on an approval"
        );
    }
    // What rm kept: every run removed, a person's records included, is in
    // its backup byte for byte as the model has it.
    let backups = ops::backups::list(&u.store).unwrap();
    for (id, (run, _)) in &m.removed {
        assert!(
            backups.iter().any(|b| &b.id == id && &b.run == run),
            "{ctx}: the backup of {run} ({id}) is gone"
        );
    }
}

/// One step: an operation chosen at random, applied to the store and the
/// model; the runs it may have changed.
fn step(u: &Under, m: &mut Model, rng: &mut Rng, ctx: &str) -> BTreeSet<String> {
    let runs: Vec<String> = m.runs.keys().cloned().collect();
    let choice = rng.below(100);
    if runs.is_empty() || choice < 12 {
        m.count("start");
        return BTreeSet::from([start(u, m, rng)]);
    }
    let run = rng.pick(&runs).unwrap().clone();
    let mut touched = BTreeSet::from([run.clone()]);
    let says = m.runs[&run].says();
    let op = match choice {
        12..=24 => "resume",
        25..=36 => "answer",
        37..=46 => "approve",
        47..=56 => "end",
        57..=62 => "rm",
        63..=67 => "restore",
        68..=70 => "prune",
        71..=76 => "upgrade",
        77..=80 => "recover",
        81..=84 => "fork",
        85..=88 => "repair",
        89..=93 => "tear",
        _ => "lock",
    };
    m.count(&format!("{op} on {}", says.state));
    let before = snapshot(u, &run);
    let named = Ask::NAMED;
    let protected = matches!(says.state, "waiting-answer" | "waiting-approval" | "ready");
    match choice {
        12..=24 => resume(u, m, rng, &run),
        25..=36 => {
            // answer: an open deferral when there is one, else a call
            // that is none (refused).
            let open = m.runs[&run].open_deferrals();
            let call = match rng.pick(&open) {
                Some(c) if rng.chance(85) => c.clone(),
                _ => "zz".to_owned(),
            };
            let req = ops::answer::Request {
                run: &run,
                call: Some(&call),
                is_error: false,
            };
            let r = ops::answer::prepare(&u.store, &req).and_then(|p| p.commit("by hand".into()));
            let valid = says.state == "waiting-answer" && open.contains(&call);
            match valid {
                true => {
                    r.unwrap_or_else(|e| panic!("{ctx}: answer {run} {call}: {e}"));
                    m.runs.get_mut(&run).unwrap().evs.push(Ev::Result {
                        id: call,
                        person: true,
                    });
                }
                false => expect_refused(
                    &format!("{ctx}: answer {run} {call}"),
                    &r.map(|_| ()),
                    &before,
                    u,
                    &run,
                ),
            }
        }
        37..=46 => {
            // approve: a gated call, or a call of the open turn still to
            // run, or a tool the run called; the table's `no` cells must
            // refuse (an ended, damaged run).
            let mr = &m.runs[&run];
            let gated = mr.gated();
            let to_run: Vec<(String, String)> = mr.pending().map_or_else(Vec::new, |p| {
                p.calls
                    .iter()
                    .filter(|(id, _)| !p.answered.contains(id) && !p.deferred.contains(id))
                    .cloned()
                    .collect()
            });
            let tool_wise = rng.chance(30);
            let (by_tool, name) = match (tool_wise, rng.pick(&to_run)) {
                (false, Some((id, _))) => {
                    let id = gated
                        .first()
                        .cloned()
                        .filter(|_| rng.chance(70))
                        .unwrap_or(id.clone());
                    (false, id)
                }
                (true, Some((_, tool))) => (true, tool.clone()),
                (_, None) => (true, "t1".to_owned()),
            };
            let (target, ev) = match by_tool {
                false => (
                    ops::approve::Target::Call(&name),
                    Ev::CallApproval(name.clone()),
                ),
                true => (
                    ops::approve::Target::Tool(&name),
                    Ev::Decision(name.clone()),
                ),
            };
            let r = ops::approve::approve(&u.store, &ops::approve::Request { run: &run, target });
            let what = format!("{ctx}: approve {run} {ev:?} in state {}", says.state);
            match (&r, says.state) {
                (_, "ended" | "damaged") => expect_refused(&what, &r.map(|_| ()), &before, u, &run),
                // Gated and waiting on its approval: the table allows it.
                (Err(e), "waiting-approval") if matches!(&ev, Ev::CallApproval(id) if gated.contains(id)) =>
                {
                    panic!("{what}: {e}")
                }
                (Ok(_), _) => m.runs.get_mut(&run).unwrap().evs.push(ev),
                (Err(_), _) => assert_eq!(
                    snapshot(u, &run),
                    before,
                    "{what}: refused, and the store changed"
                ),
            }
        }
        47..=56 => {
            // end: named (forced or not) or as a filter selects (never
            // forced past a person's act).
            let by_filter = rng.chance(40);
            let force = rng.chance(40);
            let reason = journal::record::Reason::Error;
            let req = ops::end::Request {
                run: &run,
                reason: &reason,
                message: None,
                named: !by_filter,
                force,
                seen: None,
            };
            let r = ops::end::prepare(&u.store, &req)
                .and_then(|p| p.commit())
                .map(|_| ());
            let allowed = match says.state {
                "open" => true,
                "waiting-answer" | "waiting-approval" | "ready" => !by_filter && force,
                _ => false,
            };
            let what = format!(
                "{ctx}: end {run} (filter {by_filter}, force {force}) in state {}",
                says.state
            );
            match allowed {
                true => {
                    r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    m.runs.get_mut(&run).unwrap().evs.push(Ev::Terminal {
                        reason: "error".into(),
                        gated: Vec::new(),
                    });
                }
                false => expect_refused(&what, &r, &before, u, &run),
            }
        }
        57..=62 => {
            // rm: named or by filter.
            let by_filter = rng.chance(50);
            let force = rng.chance(40);
            let ask = Ask {
                named: !by_filter,
                force,
            };
            let r = ops::remove::delete_each(
                &u.store,
                std::slice::from_ref(&run),
                ask,
                &Default::default(),
            )
            .pop()
            .unwrap()
            .1;
            let what = format!(
                "{ctx}: rm {run} (filter {by_filter}, force {force}) in state {}",
                says.state
            );
            match !protected || (!by_filter && force) {
                true => {
                    let deleted = r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    let kept = deleted.kept.unwrap();
                    let id = ops::backups::list(&u.store)
                        .unwrap()
                        .into_iter()
                        .find(|b| b.path == kept || b.path == kept.parent().unwrap())
                        .unwrap_or_else(|| panic!("{what}: its backup is not listed"))
                        .id;
                    let mr = m.runs.remove(&run).unwrap();
                    m.removed.insert(id, (run, mr));
                }
                false => expect_refused(&what, &r.map(|_| ()), &before, u, &run),
            }
        }
        63..=67 => {
            // backups restore: a run rm kept, back where no run of its id is.
            let ids: Vec<String> = m.removed.keys().cloned().collect();
            let Some(id) = rng.pick(&ids).cloned() else {
                return touched;
            };
            let (run, _) = m.removed[&id].clone();
            let r = ops::backups::restore(&u.store, &id).map(|_| ());
            let what = format!("{ctx}: restore {id}");
            match m.runs.contains_key(&run) {
                false => {
                    r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    let (run, mr) = m.removed.remove(&id).unwrap();
                    touched.insert(run.clone());
                    m.runs.insert(run, mr);
                }
                true => expect_refused(&what, &r, &before, u, &run),
            }
        }
        68..=70 => {
            // backups prune: one backup, whatever it is.
            let all = ops::backups::list(&u.store).unwrap();
            let Some(b) = rng.pick(&all).cloned() else {
                return touched;
            };
            ops::backups::prune(&u.store, vec![b.clone()], false).unwrap();
            m.removed.remove(&b.id);
        }
        71..=76 => {
            // upgrade: a version-3 run, named or as --all selects it.
            let by_filter = rng.chance(50);
            let force = rng.chance(40);
            let ask = Ask {
                named: !by_filter,
                force,
            };
            let r = u
                .store
                .upgrade(&run, false, std::time::Duration::ZERO, false, ask);
            let what = format!(
                "{ctx}: upgrade {run} (filter {by_filter}, force {force}) in state {}",
                says.state
            );
            let mr = m.runs.get_mut(&run).unwrap();
            let left_to_a_person = protected && (by_filter || !force);
            match (mr.version, left_to_a_person, says.state) {
                (1, _, _) => assert!(
                    matches!(r, Ok(journal::upgrade::Outcome::Current)),
                    "{what}: {r:?}"
                ),
                (_, true, _) | (_, _, "damaged") => {
                    expect_refused(&what, &r.map(|_| ()), &before, u, &run)
                }
                _ => {
                    r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    mr.version = 1;
                }
            }
        }
        77..=80 => {
            // recover: the agent reads every run here whole, so it is
            // refused unless forced; forced, every record is kept (a torn
            // tail may give a lost result an error result).
            let force = rng.chance(50);
            let req = ops::recover::Request {
                run: &run,
                new_id: None,
                dry_run: false,
                force,
            };
            let r = ops::recover::recover(&u.store, &req);
            let what = format!(
                "{ctx}: recover {run} (force {force}) in state {}",
                says.state
            );
            match force {
                false => expect_refused(&what, &r.map(|_| ()), &before, u, &run),
                true => {
                    let done = r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    // Every record the agent read is kept, and at most the
                    // lost result of a torn tail is added.
                    let (_, evs, torn) = read_back(u, &run).unwrap();
                    assert!(!torn, "{what}");
                    let mr = m.runs.get_mut(&run).unwrap();
                    assert!(evs.starts_with(&mr.evs), "{what}: {evs:?}");
                    assert!(evs.len() <= mr.evs.len() + 1, "{what}: {evs:?}");
                    assert_eq!(done.plan.made.len(), evs.len() - mr.evs.len(), "{what}");
                    mr.evs = evs;
                    mr.torn = false;
                    // The damaged journal went to a backup of its own kind.
                }
            }
        }
        81..=84 => {
            // fork: a new run of the first N records.
            let n = m.runs[&run].evs.len() as u64;
            let at = 1 + rng.below(n as usize) as u64;
            m.next_id += 1;
            let new_id = format!("f{}", m.next_id);
            let req = ops::fork::Request {
                run: &run,
                at_seq: at,
                new_id: &new_id,
                dry_run: false,
            };
            ops::fork::fork(&u.store, &req)
                .unwrap_or_else(|e| panic!("{ctx}: fork {run} at {at}: {e}"));
            let mut mr = m.runs[&run].clone();
            mr.evs.truncate(at as usize);
            mr.torn = false;
            touched.insert(new_id.clone());
            m.runs.insert(new_id, mr);
        }
        85..=88 => {
            // repair: a torn tail cut (its bytes kept); nothing else to do.
            let r = u.store.repair(&run, false);
            let what = format!("{ctx}: repair {run} in state {}", says.state);
            let done = r.unwrap_or_else(|e| panic!("{what}: {e}"));
            let mr = m.runs.get_mut(&run).unwrap();
            match mr.torn {
                true => {
                    assert!(
                        matches!(done, journal::store::Repair::CutTorn { .. }),
                        "{what}: {done:?}"
                    );
                    mr.torn = false;
                }
                false => assert!(
                    matches!(done, journal::store::Repair::Nothing { .. }),
                    "{what}: {done:?}"
                ),
            }
        }
        89..=93 => {
            // A crash mid-append leaves a torn final line (file backend; a
            // JetStream record is a whole message).
            let (Some(dir), false) = (&u.dir, m.runs[&run].torn) else {
                return touched;
            };
            let seq = m.runs[&run].evs.len() + 1;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(dir.join(format!("{run}.json")))
                .unwrap();
            use std::io::Write;
            write!(f, r#"{{"seq":{seq},"protocol":"io.choria.fi"#).unwrap();
            m.runs.get_mut(&run).unwrap().torn = true;
        }
        _ => {
            // A writer holds the run (its lock, file backend): every write
            // is refused, and the run reads live.
            let Some(f) = u.file() else { return touched };
            let Ok(lock) = f.lock(&run) else {
                return touched;
            };
            // The lock file is the writer's own.
            let before = snapshot(u, &run);
            assert!(
                matches!(u.store.summary(&run).state, State::Live(_)),
                "{ctx}: {run} locked and not live"
            );
            let reason = journal::record::Reason::Error;
            let tries: Vec<(&str, journal::Result<()>)> = vec![
                (
                    "end",
                    ops::end::end(
                        &u.store,
                        &ops::end::Request {
                            run: &run,
                            reason: &reason,
                            message: None,
                            named: true,
                            force: true,
                            seen: None,
                        },
                    )
                    .map(|_| ()),
                ),
                (
                    "rm",
                    ops::remove::delete_each(
                        &u.store,
                        std::slice::from_ref(&run),
                        Ask {
                            named: true,
                            force: true,
                        },
                        &Default::default(),
                    )
                    .pop()
                    .unwrap()
                    .1
                    .map(|_| ()),
                ),
                // No call named: what is wrong with a call named says
                // more than the state, and would be said first.
                ("answer", {
                    ops::answer::prepare(
                        &u.store,
                        &ops::answer::Request {
                            run: &run,
                            call: None,
                            is_error: false,
                        },
                    )
                    .map(|_| ())
                }),
                ("repair", u.store.repair(&run, false).map(|_| ())),
            ];
            for (what, r) in tries {
                let e = r.expect_err(&format!("{ctx}: {what} {run} while locked"));
                assert!(
                    matches!(e, journal::Error::Live { .. }),
                    "{ctx}: {what} {run}: {e}"
                );
            }
            drop(lock);
            assert_eq!(snapshot(u, &run), before, "{ctx}: a locked run changed");
        }
    }
    let _ = named;
    touched
}

/// The agent starts a run: meta, a turn of one to three calls, each
/// answered by its tool, deferred, or left (gated or crashed), then a
/// terminal as the runner would write it, or none (a crash).
fn start(u: &Under, m: &mut Model, rng: &mut Rng) -> String {
    m.next_id += 1;
    let run = format!("r{}", m.next_id);
    let version = if rng.chance(30) { 3 } else { 1 };
    let mut evs = vec![Ev::Meta];
    turn(m, rng, &mut evs, &BTreeSet::new());
    append(u, &run, version, &evs, true);
    m.runs.insert(
        run.clone(),
        MRun {
            version,
            evs,
            torn: false,
        },
    );
    run
}

/// One turn of the agent, appended to `evs`: its calls, what became of
/// each, and how the turn ended.
fn turn(m: &mut Model, rng: &mut Rng, evs: &mut Vec<Ev>, decided: &BTreeSet<String>) {
    let n = rng.below(4);
    let calls: Vec<(String, String)> = (0..n)
        .map(|_| {
            m.next_id += 1;
            (format!("c{}", m.next_id), format!("t{}", 1 + rng.below(3)))
        })
        .collect();
    evs.push(Ev::Turn(calls.clone()));
    let (mut deferred, mut left) = (Vec::new(), Vec::new());
    for (id, tool) in &calls {
        match rng.below(3) {
            0 => evs.push(Ev::Result {
                id: id.clone(),
                person: false,
            }),
            1 => {
                evs.push(Ev::Deferred(id.clone()));
                deferred.push(id.clone());
            }
            _ => left.push((id.clone(), tool.clone())),
        }
    }
    let reason = match (deferred.is_empty(), left.is_empty(), rng.below(10)) {
        // A crash: no terminal at all.
        (_, _, 0) => return,
        (true, true, 1) => "error",
        (true, true, _) => "completed",
        _ => "suspended",
    };
    // The runner names the calls it suspended for at their gate (never a
    // tool the run holds a standing approval of).
    let gated = match reason == "suspended" && rng.chance(60) {
        true => left
            .iter()
            .filter(|(_, t)| !decided.contains(t))
            .cloned()
            .collect(),
        false => Vec::new(),
    };
    evs.push(Ev::Terminal {
        reason: reason.into(),
        gated,
    });
}

/// The agent resumes a run it may resume (the table's `resume` row: not
/// while a person is asked, not a damaged one, not a completed one with
/// nothing new): a claim, the calls still to run run, then a new turn.
fn resume(u: &Under, m: &mut Model, rng: &mut Rng, run: &str) {
    let mr = &m.runs[run];
    let state = mr.says().state;
    let completed =
        matches!(mr.evs.last(), Some(Ev::Terminal { reason, .. }) if reason == "completed");
    if !matches!(state, "ready" | "suspended" | "open" | "ended") || mr.torn || completed {
        return;
    }
    let mut evs = vec![Ev::Claim];
    if let Some(p) = mr.pending() {
        for (id, _) in &p.calls {
            if !p.answered.contains(id) && !p.deferred.contains(id) {
                evs.push(Ev::Result {
                    id: id.clone(),
                    person: false,
                });
            }
        }
    }
    let decided = mr.decisions();
    let version = mr.version;
    let mut more = Vec::new();
    turn(m, rng, &mut more, &decided);
    evs.extend(more);
    append(u, run, version, &evs, false);
    m.runs.get_mut(run).unwrap().evs.extend(evs);
}

fn run_model(u: &Under, seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let mut m = Model::default();
    for i in 0..steps {
        let ctx = format!("seed {seed}, step {i}");
        let touched = step(u, &mut m, &mut rng, &ctx);
        // Every run now and then, and at the end; the runs a step touched
        // after each.
        let all = i % 100 == 99 || i + 1 == steps;
        check(u, &m, &ctx, (!all).then_some(&touched));
    }
    let persons: usize = m.runs.values().map(|r| r.persons().len()).sum();
    eprintln!(
        "seed {seed}: {steps} steps, {} runs, {} removed, {persons} person's records standing",
        m.runs.len(),
        m.removed.len()
    );
    for (what, n) in &m.tally {
        eprintln!("  {n:6}  {what}");
    }
}

fn seed_and_steps(default_steps: usize) -> (u64, usize) {
    let seed = std::env::var("MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(7, |d| d.as_nanos() as u64)
                | 1
        });
    let steps = std::env::var("MODEL_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_steps);
    (seed, steps)
}

#[test]
fn the_file_store_agrees_with_the_model_step_for_step() {
    let (seed, steps) = seed_and_steps(3000);
    eprintln!("MODEL_SEED={seed} MODEL_STEPS={steps}");
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("runs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let u = Under {
        store: Store::File(FileStore::new(&dir)),
        dir: Some(dir),
    };
    run_model(&u, seed, steps);
}

#[test]
fn a_jetstream_store_agrees_with_the_model_step_for_step() {
    let (seed, steps) = seed_and_steps(1000);
    eprintln!("MODEL_SEED={seed} MODEL_STEPS={steps}");
    let srv = nats_support::NatsServer::start();
    srv.spec_stream("MODEL", "model.>");
    // rm and upgrade keep their backups under the XDG state home, and
    // upgrade rewrites a meta record in place (rollups).
    nats_support::state_home();
    srv.with_js(async |js| {
        let mut s = js.get_stream("MODEL").await.unwrap();
        let mut config = s.info().await.unwrap().config.clone();
        config.allow_rollup = true;
        js.update_stream(config).await.unwrap();
    });
    let u = Under {
        // No hold: no other writer is at these runs (the file test holds
        // locks for the live state).
        store: Store::JetStream(Box::new(
            srv.store("MODEL").with_hold(std::time::Duration::ZERO),
        )),
        dir: None,
    };
    run_model(&u, seed, steps);
}
