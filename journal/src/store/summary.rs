//! The `ls` summary of a run (SPEC 9): what both backends build from a
//! run's meta record and tail.

use crate::fold::{fold_with, FoldOptions};
use crate::record::{Payload, Record};
use crate::time::Time;

mod walk;

pub(crate) use walk::{at_rest, rest_step, TailWalk};

/// What `ls` shows for a run (SPEC 9, SPEC 11), built from the meta record
/// and the tail only. Serialised as SPEC 11's `ls --format json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// The run's id.
    pub run_id: String,
    /// SPEC 9 status; `corrupt` when the run could not be summarised.
    pub status: Listed,
    /// Where the run stands ([`crate::state`]): the model every write
    /// obeys, beside the agent's status.
    pub state: crate::state::State,
    /// The pending turn waits on deferred calls nobody has answered.
    pub waiting: bool,
    /// How many deferred calls wait for an answer.
    pub open_deferrals: usize,
    /// The calls the run was suspended for that wait on an operator's
    /// approval, which the agent's `waiting` does not count (the fold's
    /// `needs_approval`); `[]` when none.
    pub needs_approval: Vec<crate::fold::Gated>,
    /// The run is being written now (its lock is held, or SPEC 8's hold).
    pub live: bool,
    /// The journal's format version, where the meta record was read.
    pub version: Option<i64>,
    /// The agent's name, where recorded.
    pub agent: Option<String>,
    /// The model, where recorded.
    pub model: Option<String>,
    /// Who started the run, where recorded.
    pub caller: Option<String>,
    /// The last seq.
    pub records: Option<u64>,
    /// Stored size; `None` where the store cannot tell without reading the
    /// whole run (JetStream keeps no per-run size).
    pub bytes: Option<u64>,
    /// The first record's time.
    pub created: Option<Time>,
    /// The last record's `time`; else the file's mtime or the message's
    /// store time (set by the backend).
    pub updated: Option<Time>,
    /// The run's first prompt.
    pub prompt: Option<String>,
    /// Why the run ended as it did: the message of the terminal record the
    /// run is at (`provider: 529 overloaded`); `None` when the run is not
    /// at a terminal or its terminal has no message.
    pub message: Option<String>,
    /// The tokens the run has cost, totalled as a token budget counts them
    /// ([`crate::stats::Tokens::total`]: input, output and both cache
    /// tiers): the `summary.counters` a version-1 terminal carries, when
    /// no model response follows that terminal; else, when the tail read
    /// holds every model response of the run (it starts right after the
    /// meta record), their sum, as the agent's fold counts it. `None` when
    /// unknown: never a guess.
    pub total_tokens: Option<i128>,
    /// Why the run could not be summarised (`None` unless `corrupt`).
    pub problem: Option<String>,
    /// What gets past the problem, for the binary to word as a command.
    #[serde(skip)]
    pub remedy: Option<crate::Remedy>,
    /// The run could not be summarised because the store failed (the
    /// server gone, the disk full): not the run's fault
    /// ([`crate::Error::is_store_failure`]).
    #[serde(skip)]
    pub store_failed: bool,
    /// When the run ended: the time of the last terminal record when
    /// nothing follows it (not in `ls`'s document; `search` prints it).
    #[serde(skip)]
    pub ended: Option<Time>,
    /// Where the run ended in the store when it was summarised: its
    /// length and the stream sequence of its last message (JetStream; a
    /// run summarised from its tail). A whole-store read
    /// ([`Store::read_each`](crate::store::Store::read_each)) knows from it
    /// when each run is complete without asking again.
    #[serde(skip)]
    pub(crate) stream_end: Option<(u64, u64)>,
    /// What the state is derived from, beside `live` (kept so a backend
    /// that learns who holds the run, or that its tail is damaged, after
    /// the tail was folded can say so: [`Summary::set_live`]).
    #[serde(skip)]
    pub(crate) facts: Option<Facts>,
    /// Who holds the run, when `live`.
    #[serde(skip)]
    pub(crate) holder: Option<crate::state::Holder>,
}

/// A summary's [`crate::state::Facts`], owned.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    terminal: Option<String>,
    rest: crate::fold::Rest,
    open_deferrals: usize,
    needs_approval: usize,
    damaged_tail: bool,
}

/// The last terminal record of `tail`.
fn last_terminal(tail: &[Record]) -> Option<&crate::record::Terminal> {
    tail.iter().rev().find_map(|r| match &r.payload {
        Some(Payload::Terminal(t)) => Some(t),
        _ => None,
    })
}

/// The total of a version-1 terminal's `summary.counters` (SPEC 1: zero
/// counters are omitted, so an absent one is 0); `None` without a summary.
/// Summed exactly in `i128`: four `i64` counters cannot overflow it.
fn counted_tokens(summary: Option<&serde_json::value::RawValue>) -> Option<i128> {
    #[derive(serde::Deserialize, Default)]
    struct Summary {
        #[serde(default)]
        counters: Option<Counters>,
    }
    #[derive(serde::Deserialize, Default)]
    struct Counters {
        in_tokens: Option<i64>,
        out_tokens: Option<i64>,
        cache_read_tokens: Option<i64>,
        cache_create_tokens: Option<i64>,
    }
    let s: Summary = serde_json::from_str(summary?.get()).ok()?;
    let c = s.counters.unwrap_or_default();
    Some(
        [
            c.in_tokens,
            c.out_tokens,
            c.cache_read_tokens,
            c.cache_create_tokens,
        ]
        .into_iter()
        .map(|n| i128::from(n.unwrap_or(0)))
        .sum(),
    )
}

/// A listed run's status: the fold's (SPEC 9), or `corrupt` when the run
/// could not be summarised.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(into = "String")]
#[non_exhaustive]
pub enum Listed {
    /// The fold's status.
    Run(crate::fold::Status),
    /// The run could not be summarised.
    Corrupt,
}

impl From<Listed> for String {
    fn from(s: Listed) -> String {
        s.to_string()
    }
}

impl std::fmt::Display for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Listed::Run(s) => s.fmt(f),
            Listed::Corrupt => f.write_str("corrupt"),
        }
    }
}

impl Summary {
    /// Summarise from the meta record and the records from the last
    /// assistant record onwards (or everything when there is none). The
    /// fold over just those records gives the same status, waiting and
    /// deferrals as a fold over the whole journal: nothing before the last
    /// assistant can leave a turn open, and any record after the last
    /// terminal is in the tail.
    // For tests (journal/tests/), not API: a front end reads `Store::summary`.
    #[doc(hidden)]
    pub fn from_tail(run: &str, meta: &Record, tail: &[Record]) -> Summary {
        let last = tail.last().unwrap_or(meta);
        let mut s = Summary {
            records: Some(last.seq),
            updated: last.time,
            ..Summary::unread(run)
        };
        if let Some(Payload::Meta(m)) = &meta.payload {
            s.version = Some(m.version);
            s.agent = Some(m.agent.clone()).filter(|a| !a.is_empty());
            s.caller = Some(m.caller.clone()).filter(|a| !a.is_empty());
            s.model = Some(m.fingerprint.model.clone());
            s.created = Some(m.created);
            s.prompt = Some(m.prompt.clone());
        }
        match fold_with(std::iter::once(meta).chain(tail), FoldOptions::inspect()) {
            Ok(st) => {
                s.ended = st.ended;
                if matches!(st.status, crate::fold::Status::Terminal(_)) {
                    s.message = last_terminal(tail)
                        .map(|t| t.message.clone())
                        .filter(|m| !m.is_empty());
                }
                s.facts = Some(Facts {
                    terminal: st.terminal.as_ref().map(|t| t.reason.clone()),
                    rest: st.rest,
                    open_deferrals: st.open_deferrals,
                    needs_approval: st.needs_approval.len(),
                    damaged_tail: false,
                });
                s.status = Listed::Run(st.status);
                s.waiting = st.waiting;
                s.open_deferrals = st.open_deferrals;
                s.needs_approval = st.needs_approval;
                s.settle(None);
            }
            Err(e) => {
                s.status = Listed::Corrupt;
                s.problem = Some(e.to_string());
                s.remedy = Some(crate::Remedy::Verify);
            }
        }
        // The tail starts at the last model response, so a terminal in it
        // has no response after it: its counters are the run's whole cost.
        // Counters below what the responses in the tail alone cost were
        // not written by the agent (a hand edit): unknown, not a guess.
        let seen: i128 = tail
            .iter()
            .filter_map(|r| match &r.payload {
                Some(Payload::Assistant(a)) => Some(
                    [
                        a.in_tokens,
                        a.out_tokens,
                        a.cache_read_tokens,
                        a.cache_create_tokens,
                    ]
                    .into_iter()
                    .map(i128::from)
                    .sum::<i128>(),
                ),
                _ => None,
            })
            .sum();
        // A tail that starts right after the meta record holds every
        // model response of the run: their sum is what the agent's fold
        // counts, the run's whole cost, terminal or none (a run of one
        // response, such as the corpus's `g-huge-integers`).
        let next = |seq: u64| seq.checked_add(1);
        let whole = tail.first().is_none_or(|r| next(meta.seq) == Some(r.seq))
            && tail.windows(2).all(|w| match w {
                [a, b] => next(a.seq) == Some(b.seq),
                _ => true,
            });
        s.total_tokens = last_terminal(tail)
            .and_then(|t| counted_tokens(t.summary.as_deref()))
            .filter(|n| *n >= seen)
            .or((whole && matches!(s.status, Listed::Run(_))).then_some(seen));
        s
    }

    /// Who holds the run, as the backend found it: `live` and the state
    /// follow.
    pub(crate) fn set_live(&mut self, holder: Option<crate::state::Holder>) {
        self.live = holder.is_some();
        self.settle(holder);
    }

    /// The journal's tail is damaged (a torn or unterminated final line,
    /// which the tail walk dropped or read): the state says so.
    pub(crate) fn set_damaged_tail(&mut self) {
        if let Some(f) = self.facts.as_mut() {
            f.damaged_tail = true;
        }
        let holder = self.holder.take();
        self.settle(holder);
    }

    fn settle(&mut self, holder: Option<crate::state::Holder>) {
        self.state = match &self.facts {
            Some(f) => crate::state::State::of(
                &crate::state::Facts {
                    terminal: f.terminal.as_deref(),
                    rest: f.rest,
                    open_deferrals: f.open_deferrals,
                    needs_approval: f.needs_approval,
                    damaged_tail: f.damaged_tail,
                },
                holder.clone(),
            ),
            None => crate::state::State::Corrupt,
        };
        self.holder = holder;
    }

    /// The state with nobody holding the run: what a command that was
    /// told the writer is gone (`--force` past SPEC 8's hold) judges by.
    pub fn state_unheld(&self) -> crate::state::State {
        match &self.holder {
            Some(crate::state::Holder::Hold { .. }) => {
                let mut s = self.clone();
                s.settle(None);
                s.state
            }
            _ => self.state.clone(),
        }
    }

    /// The run waits on a person: on an answer to a deferred call (the
    /// agent's `waiting`) or on an approval.
    pub fn waits_on_person(&self) -> bool {
        self.waiting || !self.needs_approval.is_empty()
    }

    /// A run that could not be summarised, and why.
    pub fn corrupt(run: &str, e: &crate::Error) -> Summary {
        Summary {
            problem: Some(e.to_string()),
            remedy: crate::Remedy::of(e),
            store_failed: e.is_store_failure(),
            ..Summary::unread(run)
        }
    }

    pub(crate) fn unread(run: &str) -> Summary {
        Summary {
            run_id: run.to_owned(),
            status: Listed::Corrupt,
            state: crate::state::State::Corrupt,
            waiting: false,
            open_deferrals: 0,
            needs_approval: Vec::new(),
            live: false,
            version: None,
            agent: None,
            model: None,
            caller: None,
            records: None,
            bytes: None,
            created: None,
            updated: None,
            prompt: None,
            message: None,
            total_tokens: None,
            problem: None,
            remedy: None,
            store_failed: false,
            ended: None,
            stream_end: None,
            facts: None,
            holder: None,
        }
    }
}
