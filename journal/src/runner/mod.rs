//! The minimal runner: `run` and `resume` (SPEC 2, 4, 5; CLI.md). It exists
//! so the write path is exercised end to end and so a suspended run can be
//! finished after a deferral was answered.
//!
//! Invariants:
//!
//! - Write order (SPEC 2): the assistant record is stored before any tool
//!   runs; each tool's result (or its `deferred` record) is stored the
//!   moment the tool completes. A crash therefore repeats at most the one
//!   tool in flight, and a clean suspend repeats nothing.
//! - A resume takes the run lock first (JetStream: the appender's fence,
//!   then SPEC 8's hold), folds what is stored, passes the gates (SPEC 4)
//!   and appends its `claim` before anything with effects (SPEC 5). Every
//!   later seq is `last_seq() + 1` read from the appender, which only
//!   advances once a record is durable.
//! - Before each tool runs, the appender is asked whether the run is
//!   still its own ([`Appender::check_held`]): a writer that was taken
//!   over (`--hold 0`, a hold that ran out during a long tool) stops
//!   before its next effect rather than at its next append, as the agent
//!   does.
//! - The pending batch is finished before the script continues: answered
//!   calls keep their results, calls neither answered nor deferred run
//!   (again), a deferred call never runs again.
//! - The model is the `script` provider: turn k of the turns file answers
//!   the k-th model call counted over the whole journal (`llm_calls`).
//! - Standing approvals: this runner is non-interactive and asks no one, so
//!   it never consults approvals. A tools drift therefore "drops" them in
//!   the only way that matters here: nothing in this run relies on them; the
//!   warning says so. (The journal's `decision` records stay; the fold
//!   keeps deriving them.)
//! - Budgets: `max_tokens` bounds in+out tokens summed over the whole run,
//!   `max_iterations` the number of model calls; both are checked before
//!   each model call, 0 means no limit, and a resume applies the budget of
//!   the agent file it was given.

mod tools;

use crate::agent::{AgentFile, ScriptTurn};
use crate::error::{Error, Remedy, Result};
use crate::fingerprint::{self, Class};
use crate::fold::{self, Pending, RunState};
use crate::record::{
    Block, Claim, Deferred, Fingerprint, Generation, Message, Meta, Payload, Reason, Terminal,
    ToolResult, ToolResultBlock, ToolUseBlock, User, VERSION,
};
use crate::store::{Appender, Store};
use crate::time::Time;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use tools::{defer_record, exec};

/// What the runner tells its caller as it goes (the binary prints these).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Something the operator should know: drift, dropped approvals.
    Warning(String),
    /// Progress: a record was stored.
    Step(String),
}

/// How a run or resume ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The run's id.
    pub run: String,
    /// The terminal record the run (or step) ended with.
    pub terminal: Terminal,
    /// Open deferrals when the run suspended waiting on a person.
    pub waiting_on: Vec<Deferred>,
    /// Gated calls it suspended for, waiting on an approval.
    pub needs_approval: Vec<Gated>,
    /// The last seq written.
    pub last_seq: u64,
}

/// A call to a gated tool the run holds no approval for (the fold reports
/// them; the runner makes them).
pub use crate::fold::Gated;

/// What lets a gated call run: a standing approval of its tool (a
/// `decision`) or a one-shot approval of the call (a `call_approval`).
#[derive(Debug, Clone, Default)]
struct Approvals {
    tools: BTreeSet<String>,
    calls: BTreeSet<String>,
}

impl Approvals {
    fn allow(&self, call: &ToolUseBlock) -> bool {
        self.tools.contains(&call.name) || self.calls.contains(&call.id)
    }
}

/// What a resume would do, as [`Runner::check_resume`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumable {
    /// The run's id.
    pub run: String,
    /// Its last seq now: the resume's claim would be the next.
    pub last_seq: u64,
    /// The iteration the resume's first model call would be.
    pub next_iteration: i64,
    /// The calls of the pending batch it would run first (id, tool).
    pub to_run: Vec<(String, String)>,
}

/// How to resume a run.
#[derive(Debug, Clone, Default)]
pub struct ResumeOptions {
    /// Resume even where the agent file changed the conversation (`--force`).
    pub force: bool,
    /// A new user turn (also what lets a completed run continue).
    pub prompt: Option<String>,
}

/// An agent ready to run: its file, its turns and its fingerprint.
pub struct Agent {
    /// The agent file.
    pub file: AgentFile,
    /// The scripted model answers (the turns file).
    pub turns: Vec<ScriptTurn>,
    /// The agent's fingerprint, recorded on the runs it starts.
    pub fingerprint: Fingerprint,
}

impl Agent {
    /// Load the agent file at `path`, its turns file, and fingerprint it.
    pub fn load(path: &std::path::Path) -> Result<Agent> {
        let file = AgentFile::load(path)?;
        file.check_runnable()?;
        let turns = crate::agent::load_turns(&file.script_path())?;
        let fingerprint = fingerprint::of_agent(&file);
        Ok(Agent {
            file,
            turns,
            fingerprint,
        })
    }
}

/// Where the run stands: what the next model call is.
#[derive(Debug, Clone, Copy)]
struct Pos {
    llm_calls: i64,
    next_iteration: i64,
    tokens: i64,
}

/// Runs an agent on a store: starts or resumes a run, writing each record as it happens.
pub struct Runner<'a> {
    /// The store the run is in.
    pub store: &'a Store,
    /// The agent that runs.
    pub agent: &'a Agent,
    /// Set by the first SIGINT/SIGTERM: finish the step, then suspend.
    pub stop: &'a AtomicBool,
    /// Told each step (record written, call made) as it happens.
    pub events: &'a mut dyn FnMut(Event),
}

/// A fresh run id: `r-` and 16 hex digits from the kernel's random source.
pub fn new_run_id() -> String {
    let hex = crate::digest::random_hex::<8>().unwrap_or_else(|_| {
        // No /dev/urandom: time and pid still make a collision unlikely,
        // and create_appender refuses an id that exists.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        crate::digest::hex(&(t ^ (u64::from(std::process::id()) << 32)).to_le_bytes())
    });
    format!("r-{hex}")
}

struct Writer {
    app: Box<dyn Appender>,
    /// The journal's generation: what its appends look like (SPEC 2).
    generation: Generation,
}

impl Writer {
    fn put(&mut self, payload: Payload) -> Result<u64> {
        Ok(self.app.append_next(payload, self.generation)?.seq)
    }
}

impl Runner<'_> {
    fn warn(&mut self, s: String) {
        (self.events)(Event::Warning(s));
    }
    fn step(&mut self, s: String) {
        (self.events)(Event::Step(s));
    }

    /// Start a new run with `prompt` under `id` (a fresh id when `None`).
    pub fn start(&mut self, prompt: &str, id: Option<&str>) -> Result<Outcome> {
        let id = id.map_or_else(new_run_id, str::to_owned);
        let app = self.store.create_appender(&id)?;
        let mut w = Writer {
            app,
            generation: Generation::Current,
        };
        w.put(Payload::Meta(Meta {
            version: VERSION,
            run_id: id.clone(),
            created: Time::now(),
            fingerprint: self.agent.fingerprint.clone(),
            prompt: prompt.to_owned(),
            agent: self.agent.file.agent.clone().unwrap_or_default(),
            ..Meta::default()
        }))?;
        self.step(format!("run {id} started"));
        let pos = Pos {
            llm_calls: 0,
            next_iteration: 0,
            tokens: 0,
        };
        self.drive(&mut w, &id, pos, None, &Approvals::default())
    }

    /// What a resume of `run` would do, every gate checked and nothing
    /// written, no lock taken (a dry run): the same gates as
    /// [`resume`](Self::resume), on the run as it is now.
    pub fn check_resume(&mut self, run: &str, opts: &ResumeOptions) -> Result<Resumable> {
        self.store.check_writable(run)?;
        let journal = self.store.read(run)?;
        if !journal.tail.is_clean() {
            // The appender refuses a damaged tail; so does the dry run.
            return Err(Error::refused_until(
                run,
                "its journal's tail is damaged (a torn final line, or a final record without its newline); nothing was written",
                Remedy::Repair,
            ));
        }
        let st = self
            .store
            .fold(run, &journal, fold::FoldOptions::default())?;
        self.gates(run, &st, opts)?;
        let to_run = st.pending.as_ref().map_or_else(Vec::new, |p| {
            p.assistant
                .tool_use_ids()
                .filter_map(|id| st.call(id).to_run().map(|t| (id.to_owned(), t.to_owned())))
                .collect()
        });
        Ok(Resumable {
            run: run.to_owned(),
            last_seq: journal.last_seq(),
            next_iteration: st.next_iteration,
            to_run,
        })
    }

    /// Resume `run`: lock, fold, gates, claim, finish the batch, continue.
    pub fn resume(&mut self, run: &str, opts: &ResumeOptions) -> Result<Outcome> {
        // The appender first: its fence is the run's last record as it
        // stands now, and the claim is appended on it. JetStream has no
        // lock, so SPEC 8's hold then refuses a run in flight, judged on
        // a tail no older than that fence; the gates judge the run as read
        // after it. Whatever another writer stores after the fence was
        // taken (its own claim) refuses this one's claim, so of two
        // resumes one claims and the other stops before any tool.
        let app = self.store.open_appender(run)?;
        self.store.check_hold(run)?;
        let journal = self.store.read(run)?;
        let st = self
            .store
            .fold(run, &journal, fold::FoldOptions::default())?;
        let approvals = self.gates(run, &st, opts)?;
        let refuse = |message: String| Error::refused(run, message);
        // SPEC 5: the claim lands before anything with effects, and every
        // later seq follows the claim's.
        let generation = st.generation.ok_or_else(|| {
            refuse(format!(
                "is format version {}, which no agent resumes",
                st.version
            ))
        })?;
        let mut w = Writer { app, generation };
        let seq = w.put(Payload::Claim(Claim {
            by: crate::id::worker_name(),
            claimed: Time::now(),
            ..Claim::default()
        }))?;
        self.step(format!("run {run} claimed at seq {seq}"));
        if let Some(p) = &opts.prompt {
            w.put(Payload::User(User {
                message: Message::user(vec![Block::text(p.clone())]),
                ..User::default()
            }))?;
        }
        let c = &st.counters;
        let pos = Pos {
            llm_calls: c.llm_calls,
            next_iteration: st.next_iteration,
            tokens: c.in_tokens.saturating_add(c.out_tokens),
        };
        // The model's final answer stored, its `completed` terminal not
        // (the writer died in between): the run is done, no model call.
        let answered = opts.prompt.is_none()
            && st.pending.is_none()
            && st.messages.last().is_some_and(|m| m.role == "assistant");
        if answered {
            return self.end(&mut w, run, Reason::Completed, String::new(), Vec::new());
        }
        self.drive(&mut w, run, pos, st.pending.as_ref(), &approvals)
    }

    /// SPEC 4's gates, in SPEC's order, on the run as folded (`st`): a
    /// completed run with nothing new, open deferrals, the interactive
    /// flag, provider and blocking drift, then the calls still to run that
    /// this runner's gate holds and no approval lets through. The
    /// approvals the resume then runs with.
    fn gates(&mut self, run: &str, st: &RunState, opts: &ResumeOptions) -> Result<Approvals> {
        let refuse = |message: String| Error::refused(run, message);
        if st.run_id != run {
            return Err(Error::refused_until(
                run,
                format!(
                    "meta.run_id is {:?}, not the id it is stored under",
                    st.run_id
                ),
                Remedy::Verify,
            ));
        }
        // Gate 1: a completed run with nothing new.
        // Completed with nothing new: the last terminal says completed (a
        // claim or a decision after it reopens the run but brings nothing
        // to do), nothing is pending and the model had the last word.
        let nothing_new =
            st.pending.is_none() && st.messages.last().is_some_and(|m| m.role == "assistant");
        if st.completed && nothing_new && opts.prompt.is_none() {
            return Err(Error::refused_until(
                run,
                "is completed and there is nothing new to do",
                Remedy::NewTurn,
            ));
        }
        // Gate 2: waiting on open deferrals (SPEC 4): refused before
        // anything is written, so a retry loop cannot bloat the journal
        // with a claim and a new suspension each time.
        if let Some(p) = st.pending.as_ref().filter(|p| !p.open_deferrals.is_empty()) {
            let ids: Vec<String> = p
                .open_deferrals
                .iter()
                .map(|d| format!("{} ({})", d.tool_use_id, d.tool_name))
                .collect();
            return Err(Error::refused_for_calls(
                run,
                format!(
                    "waits on {} deferred call(s) nobody has answered: {}; nothing was written",
                    ids.len(),
                    ids.join(", ")
                ),
                Some(Remedy::Answer),
                p.open_deferrals
                    .iter()
                    .map(|d| d.tool_use_id.clone())
                    .collect(),
            ));
        }
        // Gate 3: the interactive flag.
        if st.interactive {
            return Err(refuse(
                "was started interactive, and this runner is not: resume it with the fisk agent"
                    .into(),
            ));
        }
        // Gates 4 and 5: provider, then blocking drift.
        let d = fingerprint::diff(&st.fingerprint, &self.agent.fingerprint);
        let describe = |c: &fingerprint::Change| match (&c.from, &c.to) {
            (Some(a), Some(b)) => format!("{} {a} -> {b}", c.field),
            _ => format!("{} changed", c.field),
        };
        if let Some(c) = d.changes.iter().find(|c| c.class == Class::Hard) {
            return Err(refuse(format!(
                "the agent file changes the provider ({}); a run never changes provider, forced or not",
                describe(c)
            )));
        }
        let blocking: Vec<String> = d
            .changes
            .iter()
            .filter(|c| c.class == Class::Blocking)
            .map(describe)
            .collect();
        if !blocking.is_empty() {
            if !opts.force {
                return Err(Error::refused_until(
                    run,
                    format!(
                        "the agent file differs in a way that changes the conversation ({}); fix the agent file",
                        blocking.join(", ")
                    ),
                    Remedy::Force,
                ));
            }
            self.warn(format!(
                "forced: continuing despite {}",
                blocking.join(", ")
            ));
        }
        let tools_changed = d.changes.iter().any(|c| c.class == Class::Tools);
        let approvals = Approvals {
            // A tools drift drops the standing approvals (SPEC 4).
            tools: match tools_changed {
                true => BTreeSet::new(),
                false => st.approvals.iter().cloned().collect(),
            },
            calls: st
                .call_approvals
                .iter()
                .map(|a| a.tool_use_id.clone())
                .collect(),
        };
        // Waiting on an approval: refused before anything is written, as
        // a wait on a deferral is.
        let unapproved = self.unapproved(st, &approvals);
        if !unapproved.is_empty() {
            return Err(Error::refused_for_calls(
                run,
                format!(
                    "needs approval: {}; nothing was written",
                    gated_list(&unapproved)
                ),
                Some(Remedy::Approve),
                unapproved.iter().map(|c| c.tool_use_id.clone()).collect(),
            ));
        }
        if tools_changed {
            self.warn(format!(
                "the tools changed since the run started; its standing approvals ({}) are dropped for this run",
                st.approvals.len()
            ));
        }
        for c in d.changes.iter().filter(|c| c.class == Class::Budget) {
            self.warn(format!(
                "budget changed: {}; the new budget applies",
                describe(c)
            ));
        }
        if opts.prompt.is_some() && st.pending.is_some() {
            return Err(refuse(
                "has a pending tool batch; resume it once with no new prompt to finish that batch, then add the new turn"
                    .into(),
            ));
        }
        Ok(approvals)
    }

    /// The calls of a pending batch that still have to run, are gated, and
    /// hold no approval.
    /// Which calls still run is the fold's answer ([`RunState::call`]);
    /// whether they may is this runner's (its gate, and the approvals a
    /// tools drift leaves).
    fn unapproved(&self, st: &RunState, approvals: &Approvals) -> Vec<Gated> {
        let Some(p) = &st.pending else {
            return Vec::new();
        };
        p.assistant
            .blocks()
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse(c) => Some(c),
                _ => None,
            })
            .filter(|c| st.call(&c.id).to_run().is_some())
            .filter(|c| self.gated(c) && !approvals.allow(c))
            .map(|c| Gated {
                tool_use_id: c.id.clone(),
                tool: c.name.clone(),
            })
            .collect()
    }

    fn gated(&self, call: &ToolUseBlock) -> bool {
        self.agent.file.gate.contains(&call.name) && self.agent.file.tools.contains(&call.name)
    }

    fn end(
        &mut self,
        w: &mut Writer,
        run: &str,
        reason: Reason,
        message: String,
        waiting_on: Vec<Deferred>,
    ) -> Result<Outcome> {
        let terminal = Terminal::new(reason, message);
        let seq = w.put(Payload::Terminal(terminal.clone()))?;
        Ok(Outcome {
            run: run.to_owned(),
            terminal,
            waiting_on,
            needs_approval: Vec::new(),
            last_seq: seq,
        })
    }

    fn drive(
        &mut self,
        w: &mut Writer,
        run: &str,
        mut pos: Pos,
        pending: Option<&Pending>,
        approvals: &Approvals,
    ) -> Result<Outcome> {
        if let Some(p) = pending {
            let deferred: BTreeSet<String> =
                p.deferred.iter().map(|d| d.tool_use_id.clone()).collect();
            let done = Done {
                answered: &p.answered,
                deferred: &deferred,
                open: &p.open_deferrals,
            };
            if let Some(o) = self.batch(w, run, &p.assistant, &done, approvals)? {
                return Ok(o);
            }
        }
        let budget = &self.agent.file.llm.budget;
        let (max_tokens, max_iterations) = (budget.max_tokens, budget.max_iterations);
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return self.end(
                    w,
                    run,
                    Reason::Suspended,
                    "interrupted by a signal".into(),
                    Vec::new(),
                );
            }
            if max_iterations > 0 && pos.next_iteration >= max_iterations {
                return self.end(
                    w,
                    run,
                    Reason::MaxIterations,
                    format!("reached max_iterations {max_iterations}"),
                    Vec::new(),
                );
            }
            if max_tokens > 0 && pos.tokens >= max_tokens {
                return self.end(
                    w,
                    run,
                    Reason::Budget,
                    format!("used {} of max_tokens {max_tokens}", pos.tokens),
                    Vec::new(),
                );
            }
            let Some(turn) = usize::try_from(pos.llm_calls)
                .ok()
                .and_then(|k| self.agent.turns.get(k))
            else {
                let message = format!(
                    "the turns file {} has no turn for model call {} (it has {})",
                    self.agent.file.script_path().display(),
                    pos.llm_calls + 1,
                    self.agent.turns.len()
                );
                return self.end(w, run, Reason::Error, message, Vec::new());
            };
            let seq = w.put(Payload::Assistant(crate::record::Assistant {
                iteration: pos.next_iteration,
                message: turn.message.clone(),
                stop_reason: turn.stop_reason.clone(),
                in_tokens: turn.in_tokens,
                out_tokens: turn.out_tokens,
                ..Default::default()
            }))?;
            self.step(format!(
                "seq {seq}: model call {} (iteration {})",
                pos.llm_calls + 1,
                pos.next_iteration
            ));
            pos.llm_calls += 1;
            pos.next_iteration += 1;
            pos.tokens = pos
                .tokens
                .saturating_add(turn.in_tokens)
                .saturating_add(turn.out_tokens);
            if !turn.has_tool_use() {
                return self.end(w, run, Reason::Completed, String::new(), Vec::new());
            }
            let none = BTreeSet::new();
            let done = Done {
                answered: &none,
                deferred: &none,
                open: &[],
            };
            if let Some(o) = self.batch(w, run, &turn.message, &done, approvals)? {
                return Ok(o);
            }
        }
    }

    /// Run the calls of a batch that have neither a result nor a deferral.
    /// `Some` when the run must stop here (a signal, or deferrals open).
    fn batch(
        &mut self,
        w: &mut Writer,
        run: &str,
        message: &Message,
        done: &Done,
        approvals: &Approvals,
    ) -> Result<Option<Outcome>> {
        let Done {
            answered,
            deferred,
            open,
        } = *done;
        let mut waiting: Vec<Deferred> = open.to_vec();
        let mut gated: Vec<Gated> = Vec::new();
        for block in message.blocks() {
            let Block::ToolUse(call) = block else {
                continue;
            };
            if answered.contains(&call.id) || deferred.contains(&call.id) {
                continue;
            }
            if self.stop.load(Ordering::SeqCst) {
                return self
                    .end(
                        w,
                        run,
                        Reason::Suspended,
                        "interrupted by a signal".into(),
                        Vec::new(),
                    )
                    .map(Some);
            }
            let available = self.agent.file.tools.contains(&call.name);
            // A gated call without an approval is not run: the rest of the
            // batch is, then the run suspends for it.
            if self.gated(call) && !approvals.allow(call) {
                self.step(format!("{} ({}) needs approval", call.id, call.name));
                gated.push(Gated {
                    tool_use_id: call.id.clone(),
                    tool: call.name.clone(),
                });
                continue;
            }
            match call.name.as_str() {
                "defer" if available => {
                    let d = defer_record(call);
                    let seq = w.put(Payload::Deferred(d.clone()))?;
                    self.step(format!("seq {seq}: {} deferred", call.id));
                    waiting.push(d);
                }
                name => {
                    if name == "exec" && available {
                        w.app.check_held()?;
                    }
                    // CLI.md: `builtin` for the runner's own tools (dispatched
                    // when they ran), `unknown` for a tool it does not have.
                    let (result, kind, dispatched) = match name {
                        "exec" if available => (exec(call), "builtin", true),
                        _ => (
                            ToolResultBlock {
                                tool_use_id: call.id.clone(),
                                content: format!(
                                    "unknown tool {:?}: this agent has no such tool",
                                    call.name
                                ),
                                is_error: true,
                                ..ToolResultBlock::default()
                            },
                            "unknown",
                            false,
                        ),
                    };
                    let seq = w.put(Payload::ToolResult(ToolResult {
                        tool_use_id: call.id.clone(),
                        result,
                        kind: kind.into(),
                        dispatched,
                        ..ToolResult::default()
                    }))?;
                    self.step(format!("seq {seq}: {} ({}) done", call.id, call.name));
                }
            }
        }
        if waiting.is_empty() && gated.is_empty() {
            return Ok(None);
        }
        waiting.sort_by(|a, b| a.tool_use_id.cmp(&b.tool_use_id));
        let names: Vec<String> = waiting
            .iter()
            .map(|d| {
                if d.note.is_empty() {
                    d.tool_use_id.clone()
                } else {
                    format!("{} ({})", d.tool_use_id, d.note)
                }
            })
            .collect();
        let mut parts = Vec::new();
        if !gated.is_empty() {
            parts.push(format!("needs approval: {}", gated_list(&gated)));
        }
        if !names.is_empty() {
            parts.push(format!("waiting on deferred call(s): {}", names.join(", ")));
        }
        let mut o = self.end(w, run, Reason::Suspended, parts.join("; "), waiting)?;
        o.needs_approval = gated;
        Ok(Some(o))
    }
}

/// What of a batch is already settled: the calls with a result, the calls
/// deferred, and the deferrals still open.
#[derive(Clone, Copy)]
struct Done<'b> {
    answered: &'b BTreeSet<String>,
    deferred: &'b BTreeSet<String>,
    open: &'b [Deferred],
}

/// `ID (TOOL), ...`, as the suspension message and the refusal name them.
fn gated_list(g: &[Gated]) -> String {
    g.iter()
        .map(|c| format!("{} ({})", c.tool_use_id, c.tool))
        .collect::<Vec<_>>()
        .join(", ")
}
