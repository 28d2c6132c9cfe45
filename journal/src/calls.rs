//! Every tool call of a run paired with what answered it (SPEC 13's `query`
//! document), and how long each took (for `stats`). Pure, as the fold is:
//! everything comes from the records handed in, and nothing is refused.
//!
//! The pairing is the agent's: a result answers the most recent call with
//! its tool_use id that has no answer yet (a call answered twice keeps the
//! first answer; a result that answers no call is passed over), and a
//! deferral attaches to that call too, once. A call is timed by the gap
//! ending at the record that finished its dispatch (its result, or its
//! deferral when it deferred: a hand-written answer arrives whenever a
//! person gives it and measures no tool) and starting at the record
//! journaled just before that one, when both carry a time.
//!
//! Public API: `query` pairs calls with their answers ([`pair`]), filters
//! them ([`Filter`]) and names a result's provider kind ([`result_kind`]).

use crate::record::{Block, Deferred, Payload, Record, ToolResult};
use crate::time::Time;
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// One tool call and its answer, as SPEC 13's `query` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// The iteration of the assistant record holding the call.
    pub iteration: i64,
    /// The `tool_use` block's id.
    pub tool_use_id: String,
    /// The tool called.
    pub tool: String,
    /// The input as journaled: `Some(None)` is Go's nil, which the agent
    /// journals, reads back and prints as `null` (a tool_use without an
    /// `input` key reads the same here); `None` once `--results-only` left
    /// it out, as the agent's query does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Option<Box<RawValue>>>,
    /// When the assistant record holding the call was journaled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<Time>,
    /// The deferral the call's tool wrote, when it deferred.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Deferred>,
    /// The result record that answered it, as journaled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<ToolResult>,
    /// When the result record was appended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_time: Option<Time>,
}

/// How long one call took: `ended` when a result or deferral finished its
/// dispatch, `took` (nanoseconds) when both ends of the gap carry a time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// A result or deferral finished the call's dispatch.
    pub ended: bool,
    /// Nanoseconds from the call's record to its end, when both carry a time.
    pub took: Option<u128>,
}

/// Every call in `records`, in the order made, and each one's timing.
pub fn pair<'a>(records: impl IntoIterator<Item = &'a Record>) -> (Vec<Call>, Vec<Timing>) {
    let mut calls: Vec<Call> = Vec::new();
    let mut timings: Vec<Timing> = Vec::new();
    // The unanswered calls per tool_use id, oldest first.
    let mut open: HashMap<String, Vec<usize>> = HashMap::new();
    let mut prev: Option<Time> = None;
    for r in records {
        let gap = |at: Option<Time>| Timing {
            ended: true,
            took: match (prev, at) {
                (Some(p), Some(a)) if a >= p => Some(a.nanos_since(&p)),
                _ => None,
            },
        };
        match &r.payload {
            Some(Payload::Assistant(a)) => {
                for b in a.message.blocks() {
                    let Block::ToolUse(u) = b else { continue };
                    open.entry(u.id.clone()).or_default().push(calls.len());
                    calls.push(Call {
                        iteration: a.iteration,
                        tool_use_id: u.id.clone(),
                        tool: u.name.clone(),
                        input: Some(u.input.clone()),
                        time: r.time,
                        deferred: None,
                        answer: None,
                        answer_time: None,
                    });
                    timings.push(Timing::default());
                }
            }
            Some(Payload::Deferred(d)) => {
                let latest = open.get(&d.tool_use_id).and_then(|v| v.last()).copied();
                if let Some(i) = latest {
                    let timing = gap(r.time);
                    if let (Some(c), Some(t)) = (calls.get_mut(i), timings.get_mut(i)) {
                        if c.deferred.is_none() {
                            c.deferred = Some(d.clone());
                            *t = timing;
                        }
                    }
                }
            }
            Some(Payload::ToolResult(res)) => {
                let timing = gap(r.time);
                if let Some(ids) = open.get_mut(&res.tool_use_id) {
                    if let Some(i) = ids.pop() {
                        if let (Some(c), Some(t)) = (calls.get_mut(i), timings.get_mut(i)) {
                            c.answer = Some(res.clone());
                            c.answer_time = r.time;
                            if c.deferred.is_none() {
                                *t = timing;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        prev = r.time;
    }
    (calls, timings)
}

/// Which calls `query` lists: every filter that is set must match.
#[derive(Debug, Default)]
pub struct Filter {
    /// Any of these tools, compared exactly; empty: every tool.
    pub tools: Vec<String>,
    /// Only calls of this iteration.
    pub iteration: Option<i64>,
    /// Only calls with an answer.
    pub answered: bool,
    /// Only calls whose answer is an error (so only answered ones).
    pub errors: bool,
    /// Calls whose raw input JSON matches.
    pub input: Option<regex::Regex>,
    /// Calls whose answer's content matches (so only answered ones).
    pub output: Option<regex::Regex>,
}

impl Filter {
    /// Whether `c` passes every filter that is set.
    pub fn matches(&self, c: &Call) -> bool {
        if !self.tools.is_empty() && !self.tools.contains(&c.tool) {
            return false;
        }
        if self.iteration.is_some_and(|i| i != c.iteration) {
            return false;
        }
        let answer = c.answer.as_ref();
        if (self.answered || self.errors || self.output.is_some()) && answer.is_none() {
            return false;
        }
        if self.errors && !answer.is_some_and(|a| a.result.is_error) {
            return false;
        }
        if let Some(re) = &self.input {
            // A nil input is matched as the `null` it is journaled and read
            // back as (Go's RawMessage of `null`); one already left out
            // matches against the empty text, as regexp.Match on a nil slice.
            let text = match &c.input {
                Some(i) => i.as_ref().map_or("null", |i| i.get()),
                None => "",
            };
            if !re.is_match(text) {
                return false;
            }
        }
        if let Some(re) = &self.output {
            if !answer.is_some_and(|a| re.is_match(&a.result.content)) {
                return false;
            }
        }
        true
    }
}

/// The agent's number for a kind token (its `toolkit.Kind`, the key of a
/// terminal summary's `tool_calls_by_kind`): `unknown` 0, `application`
/// 1, `builtin` 2, `remote` 3, `custom` 4, `mcp` 5; any other token is
/// `unknown`, as the agent reads it.
pub fn kind_number(token: &str) -> u8 {
    match token {
        "application" => 1,
        "builtin" => 2,
        "remote" => 3,
        "custom" => 4,
        "mcp" => 5,
        _ => 0,
    }
}

/// The kind token a result is counted under, and whether its call was
/// handed to its provider; `None` for a legacy result (no `kind`, not
/// `remote`), which cannot say whether the call ran. A token the agent does
/// not know counts as `unknown`, as the agent reads it.
pub fn result_kind(r: &ToolResult) -> (&'static str, Option<bool>) {
    let kind = match r.kind.as_str() {
        "" if r.remote => "remote",
        "application" => "application",
        "builtin" => "builtin",
        "remote" => "remote",
        "custom" => "custom",
        "mcp" => "mcp",
        _ => "unknown",
    };
    let dispatched = match (r.kind.is_empty(), r.remote) {
        (true, false) => None,
        (true, true) => Some(true),
        (false, _) => Some(r.dispatched),
    };
    (kind, dispatched)
}
