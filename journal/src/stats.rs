//! What a run cost and where its time went (SPEC 13's `stats` document),
//! field for field as the agent derives it. Pure: no I/O, no refusal; a
//! record it does not read is passed over, and a run with no terminal
//! record is reported open (no `terminal`).
//!
//! Public API: `stats` builds a run's document ([`stats`]) and `stats --all`
//! adds them up ([`Totals`]); the widening to exact sums stays inside the
//! crate.

use crate::calls;
use crate::record::{Payload, Record};
use crate::time::Time;
use serde::Serialize;

/// A count in a statistics document: `i64` for one run, as the agent
/// counts (saturating, as the agent's figures cannot exceed it), and
/// `i128` for sums over many runs, which are exact: a total never
/// saturates, and never depends on the order runs were added in (with
/// negative counts in crafted journals, saturating sums did).
pub trait Count:
    Copy + Default + PartialEq + Eq + std::fmt::Debug + std::fmt::Display + Serialize
{
    /// `self + o`, saturating at the type's bounds.
    fn plus(self, o: Self) -> Self;
}

impl Count for i64 {
    fn plus(self, o: i64) -> i64 {
        self.saturating_add(o)
    }
}

impl Count for i128 {
    fn plus(self, o: i128) -> i128 {
        self.saturating_add(o)
    }
}

/// A token count by the tiers a provider reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens<N: Count = i64> {
    /// Input tokens billed.
    pub in_tokens: N,
    /// Output tokens billed.
    pub out_tokens: N,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: N,
    /// Input tokens written to the prompt cache.
    pub cache_create_tokens: N,
    /// Part of `out_tokens`, not on top of it.
    pub thinking_tokens: N,
}

impl<N: Count> Tokens<N> {
    /// What a token budget counts: input, output and both cache tiers.
    pub fn total(&self) -> N {
        self.in_tokens
            .plus(self.out_tokens)
            .plus(self.cache_read_tokens)
            .plus(self.cache_create_tokens)
    }

    /// Add `o`'s counts to these (saturating, as every [`Count`] adds).
    pub fn add(&mut self, o: &Tokens<N>) {
        self.in_tokens = self.in_tokens.plus(o.in_tokens);
        self.out_tokens = self.out_tokens.plus(o.out_tokens);
        self.cache_read_tokens = self.cache_read_tokens.plus(o.cache_read_tokens);
        self.cache_create_tokens = self.cache_create_tokens.plus(o.cache_create_tokens);
        self.thinking_tokens = self.thinking_tokens.plus(o.thinking_tokens);
    }
}

impl Tokens<i64> {
    /// The same counts, for an exact sum.
    pub(crate) fn widen(&self) -> Tokens<i128> {
        Tokens {
            in_tokens: self.in_tokens.into(),
            out_tokens: self.out_tokens.into(),
            cache_read_tokens: self.cache_read_tokens.into(),
            cache_create_tokens: self.cache_create_tokens.into(),
            thinking_tokens: self.thinking_tokens.into(),
        }
    }
}

/// One model response (one assistant record).
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    /// The iteration the response belongs to.
    pub iteration: i64,
    /// When its record was appended; `None` on a version-3 journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<Time>,
    /// What the response cost.
    pub tokens: Tokens,
}

/// A run's calls to one tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolStats<N: Count = i64> {
    /// The tool's name.
    pub tool: String,
    /// The kind tokens of the providers that answered, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// Calls of the tool.
    pub calls: N,
    /// Calls handed to their provider.
    pub dispatched: N,
    /// Answered without running (a kind is recorded, `dispatched` false).
    pub undispatched: N,
    /// Calls no result or deferral answered.
    pub unanswered: N,
    /// Calls answered with an error.
    pub errors: N,
    /// Total time of the timed calls.
    pub duration_ns: N,
    /// Calls whose duration is known (both ends carry a time).
    pub timed: N,
    /// Ended (a result or deferral) but not timed.
    pub untimed: N,
}

impl<N: Count> ToolStats<N> {
    /// Add another row for the same tool.
    pub fn add(&mut self, o: &ToolStats<N>) {
        for k in &o.kinds {
            if !self.kinds.contains(k) {
                self.kinds.push(k.clone());
            }
        }
        self.kinds.sort();
        let sum = |a: &mut N, b: N| *a = a.plus(b);
        sum(&mut self.calls, o.calls);
        sum(&mut self.dispatched, o.dispatched);
        sum(&mut self.undispatched, o.undispatched);
        sum(&mut self.unanswered, o.unanswered);
        sum(&mut self.errors, o.errors);
        sum(&mut self.duration_ns, o.duration_ns);
        sum(&mut self.timed, o.timed);
        sum(&mut self.untimed, o.untimed);
    }
}

impl ToolStats<i64> {
    /// The same row, for an exact sum.
    pub(crate) fn widen(&self) -> ToolStats<i128> {
        ToolStats {
            tool: self.tool.clone(),
            kinds: self.kinds.clone(),
            calls: self.calls.into(),
            dispatched: self.dispatched.into(),
            undispatched: self.undispatched.into(),
            unanswered: self.unanswered.into(),
            errors: self.errors.into(),
            duration_ns: self.duration_ns.into(),
            timed: self.timed.into(),
            untimed: self.untimed.into(),
        }
    }
}

/// SPEC 13's Statistics document.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Statistics {
    /// The run's id.
    pub run_id: String,
    /// The agent that produced the run; empty when the meta record names none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub agent: String,
    /// The model of the run's fingerprint; empty when none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Who started the run; empty when not given.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub caller: String,
    /// meta.created, or the meta record's own time where that is zero.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<Time>,
    /// The time of the last record that carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<Time>,
    /// The last terminal's reason, when nothing follows it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub terminal: String,
    /// When the last terminal was appended, when nothing follows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<Time>,
    /// The model responses (assistant records) the run holds.
    pub iterations: i64,
    /// The fingerprint's iteration budget; 0 when unset.
    #[serde(skip_serializing_if = "is_zero")]
    pub max_iterations: i64,
    /// The fingerprint's token budget per call; 0 when unset.
    #[serde(skip_serializing_if = "is_zero")]
    pub max_tokens: i64,
    /// The tokens of every response, added up.
    pub tokens: Tokens,
    /// Every response, in journal order.
    pub responses: Vec<Response>,
    /// One row per tool called, by name.
    pub tools: Vec<ToolStats>,
    /// The time of the last dated record that is not a terminal: when the
    /// run last did something (beyond the agent: not in its document). A
    /// terminal only says when it ended, and one `fisk-admin end` writes
    /// may come days after the run crashed.
    #[serde(skip)]
    pub worked: Option<Time>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl Statistics {
    /// From the run's creation to its last dated record that is not a
    /// terminal (a run `end` closed days after it crashed counts to its
    /// last activity, not to the `end`); `None` when either end has no
    /// time (a version-3 journal is untimed).
    pub fn wall_clock_ns(&self) -> Option<u128> {
        match (self.created, self.worked.or(self.updated)) {
            (Some(c), Some(u)) if u >= c => Some(u.nanos_since(&c)),
            _ => None,
        }
    }
}

/// The statistics of a run from its records.
/// # Examples
///
/// ```
/// use journal::record::{Assistant, Meta, Payload, Record};
/// use journal::stats::stats;
///
/// let meta = Meta { run_id: "r1".into(), ..Meta::default() };
/// let reply = Assistant { iteration: 1, in_tokens: 10, out_tokens: 5, ..Assistant::default() };
/// let records = [
///     Record::new(1, Payload::Meta(meta)),
///     Record::new(2, Payload::Assistant(reply)),
/// ];
/// let s = stats(&records);
/// assert_eq!((s.run_id.as_str(), s.iterations), ("r1", 1));
/// assert_eq!(s.tokens.total(), 15);
/// assert_eq!(s.responses.len(), 1);
/// ```
pub fn stats<'a, I>(records: I) -> Statistics
where
    I: IntoIterator<Item = &'a Record>,
    I::IntoIter: Clone,
{
    let records = records.into_iter();
    let mut s = Statistics::default();
    // The last terminal's reason and time, and whether anything followed.
    let mut ending: Option<(String, Option<Time>)> = None;
    let mut reopened = false;
    for (i, r) in records.clone().enumerate() {
        if r.time.is_some() {
            s.updated = r.time;
            if !matches!(r.payload, Some(Payload::Terminal(_))) {
                s.worked = r.time;
            }
        }
        if ending.is_some() {
            reopened = true;
        }
        match &r.payload {
            Some(Payload::Meta(m)) if i == 0 => {
                s.run_id = m.run_id.clone();
                s.agent = m.agent.clone();
                s.model = m.fingerprint.model.clone();
                s.caller = m.caller.clone();
                s.created = Some(m.created).filter(|c| !c.is_zero()).or(r.time);
                s.max_iterations = m.fingerprint.max_iterations;
                s.max_tokens = m.fingerprint.max_tokens;
            }
            Some(Payload::Assistant(a)) => {
                let tokens = Tokens {
                    in_tokens: a.in_tokens,
                    out_tokens: a.out_tokens,
                    cache_read_tokens: a.cache_read_tokens,
                    cache_create_tokens: a.cache_create_tokens,
                    thinking_tokens: a.thinking_tokens,
                };
                s.iterations = s.iterations.saturating_add(1);
                s.tokens.add(&tokens);
                s.responses.push(Response {
                    iteration: a.iteration,
                    time: r.time,
                    tokens,
                });
            }
            Some(Payload::Terminal(t)) => {
                ending = Some((t.reason.clone(), r.time));
                reopened = false;
            }
            _ => {}
        }
    }
    if let (Some((reason, at)), false) = (ending, reopened) {
        s.terminal = reason;
        s.ended = at;
    }
    s.tools = tool_rows(records);
    s
}

/// The per-tool rows, sorted by tool name.
fn tool_rows<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<ToolStats> {
    let (calls, timings) = calls::pair(records);
    let mut rows: std::collections::BTreeMap<String, ToolStats> = Default::default();
    for (c, t) in calls.iter().zip(&timings) {
        let row = rows.entry(c.tool.clone()).or_insert_with(|| ToolStats {
            tool: c.tool.clone(),
            ..ToolStats::default()
        });
        row.calls = row.calls.saturating_add(1);
        match (t.took, t.ended) {
            (Some(ns), _) => {
                row.duration_ns = row
                    .duration_ns
                    .saturating_add(i64::try_from(ns).unwrap_or(i64::MAX));
                row.timed = row.timed.saturating_add(1);
            }
            (None, true) => row.untimed = row.untimed.saturating_add(1),
            (None, false) => {}
        }
        let Some(answer) = &c.answer else {
            row.unanswered = row.unanswered.saturating_add(1);
            continue;
        };
        let (kind, dispatched) = calls::result_kind(answer);
        if !row.kinds.iter().any(|k| k == kind) {
            row.kinds.push(kind.to_owned());
            row.kinds.sort();
        }
        if answer.result.is_error {
            row.errors = row.errors.saturating_add(1);
        }
        match dispatched {
            Some(true) => row.dispatched = row.dispatched.saturating_add(1),
            Some(false) => row.undispatched = row.undispatched.saturating_add(1),
            None => {}
        }
    }
    rows.into_values().collect()
}

/// Statistics added up over many runs (`stats --all`): memory grows with
/// the tools seen, not the runs. Every sum is exact ([`Count`] for
/// `i128`): 2^64 runs of counts at i64's bounds still fit.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    /// The runs added up.
    pub runs: u64,
    /// Their iterations, added up.
    pub iterations: i128,
    /// Their tokens, added up.
    pub tokens: Tokens<i128>,
    /// What the token budget counts: input, output, both cache tiers.
    pub total_tokens: i128,
    /// Wall clock summed over the runs that have one.
    pub wall_clock_ns: i128,
    /// Runs with no wall clock (no time on one end: version 3).
    pub untimed_runs: u64,
    /// One row per tool, by name.
    #[serde(serialize_with = "rows")]
    pub tools: std::collections::BTreeMap<String, ToolStats<i128>>,
}

fn rows<S: serde::Serializer>(
    m: &std::collections::BTreeMap<String, ToolStats<i128>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.values())
}

impl Totals {
    /// Add one run.
    pub fn add(&mut self, s: &Statistics) {
        self.runs += 1;
        self.iterations = self.iterations.plus(s.iterations.into());
        self.tokens.add(&s.tokens.widen());
        self.total_tokens = self.tokens.total();
        match s.wall_clock_ns() {
            Some(ns) => {
                let ns = i128::try_from(ns).unwrap_or(i128::MAX);
                self.wall_clock_ns = self.wall_clock_ns.plus(ns);
            }
            None => self.untimed_runs += 1,
        }
        for t in &s.tools {
            self.add_tool(&t.widen());
        }
    }

    fn add_tool(&mut self, t: &ToolStats<i128>) {
        self.tools
            .entry(t.tool.clone())
            .or_insert_with(|| ToolStats {
                tool: t.tool.clone(),
                ..ToolStats::default()
            })
            .add(t);
    }

    /// Add another set of totals (the parallel reduce).
    pub fn merge(&mut self, o: &Totals) {
        self.runs += o.runs;
        self.iterations = self.iterations.plus(o.iterations);
        self.tokens.add(&o.tokens);
        self.total_tokens = self.tokens.total();
        self.wall_clock_ns = self.wall_clock_ns.plus(o.wall_clock_ns);
        self.untimed_runs += o.untimed_runs;
        for t in o.tools.values() {
            self.add_tool(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_runs_and_merge_alike() {
        let run = |tool: &str, calls: i64, out: i64| Statistics {
            iterations: 1,
            tokens: Tokens {
                out_tokens: out,
                ..Tokens::default()
            },
            tools: vec![ToolStats {
                tool: tool.into(),
                kinds: vec!["builtin".into()],
                calls,
                ..ToolStats::default()
            }],
            ..Statistics::default()
        };
        let mut one = Totals::default();
        for s in [run("exec", 2, 10), run("defer", 1, 5), run("exec", 3, 1)] {
            one.add(&s);
        }
        let (mut a, mut b) = (Totals::default(), Totals::default());
        a.add(&run("exec", 2, 10));
        b.add(&run("defer", 1, 5));
        b.add(&run("exec", 3, 1));
        a.merge(&b);
        for t in [&one, &a] {
            assert_eq!(
                (t.runs, t.iterations, t.total_tokens, t.untimed_runs),
                (3, 3, 16, 3)
            );
            let exec = t.tools.get("exec").map(|r| r.calls);
            assert_eq!(exec, Some(5));
            assert_eq!(t.tools.keys().collect::<Vec<_>>(), ["defer", "exec"]);
        }
    }
}
