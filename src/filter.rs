//! The run filters `ls`, `search` and `stats --all` share: by status,
//! waiting, live, agent, model, caller, time and prompt (SPEC 13). Each is
//! applied to a run's summary (its meta record and tail), so filtering
//! reads no more than `ls` does.

use clap::Args;
use journal::fold::Status;
use journal::record::Reason;
use journal::store::{Listed, Summary};
use journal::time::Time;

#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only runs whose id starts with one of these (comma-separated or repeated; the agent's listing filter: `w-` for its web channel's runs)
    #[arg(long, value_name = "PREFIX", value_delimiter = ',')]
    pub prefix: Vec<String>,
    /// Only runs with one of these statuses (comma-separated or repeated)
    #[arg(long, value_enum, value_name = "STATUS", value_delimiter = ',')]
    pub status: Vec<StatusFilter>,
    /// Only runs waiting on a person: deferred calls to answer or calls that need an approval
    #[arg(long)]
    pub waiting: bool,
    /// Only runs ready to resume: a person answered or approved what they waited on, and nobody resumed them yet (the same as --state ready)
    #[arg(long)]
    pub ready: bool,
    /// Only runs in one of these states (comma-separated or repeated): where a run stands, beside the agent's status (journal/FORMAT.md, "Run states")
    #[arg(long, value_enum, value_name = "STATE", value_delimiter = ',')]
    pub state: Vec<StateFilter>,
    /// Only runs a writer holds now
    #[arg(long)]
    pub live: bool,
    /// Only runs of this agent (exactly; runs that carry no agent are left out and counted)
    #[arg(long, visible_alias = "identity", value_name = "NAME")]
    pub agent: Option<String>,
    /// Only runs of this model (exactly)
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Only runs started by this caller (exactly)
    #[arg(long, value_name = "CALLER")]
    pub caller: Option<String>,
    /// Only runs created at or after this (meta.created; a zero created is before every time). WHEN: RFC 3339, a date (local midnight), a date and time (2026-11-30 18:00, T or a space, minutes or seconds; local time unless a zone is given, as Z, +01:00 or UTC), or a span ago (90m, 24h, 7d, 2w, -1h), or now, today, yesterday, tomorrow
    #[arg(long, value_name = "WHEN", value_parser = parse_when, allow_hyphen_values = true)]
    pub since: Option<Time>,
    /// Only runs created before this (meta.created; a run whose created is zero is kept, as the agent's search keeps it). WHEN as --since: local time unless a zone is given
    #[arg(long, value_name = "WHEN", value_parser = parse_when, allow_hyphen_values = true)]
    pub until: Option<Time>,
    /// Only runs whose last record (the last activity, UPDATED) is at or after this; runs whose last record has no time are left out. WHEN as --since: local time unless a zone is given
    #[arg(long, value_name = "WHEN", value_parser = parse_when, allow_hyphen_values = true)]
    pub active_since: Option<Time>,
    /// Only runs whose last record (the last activity, UPDATED) is before this; runs whose last record has no time are left out. WHEN as --since: local time unless a zone is given
    #[arg(long, value_name = "WHEN", value_parser = parse_when, allow_hyphen_values = true)]
    pub active_until: Option<Time>,
    /// Only runs whose prompt matches this regular expression
    #[arg(long = "match", value_name = "RE", value_parser = parse_regex)]
    pub matches: Option<regex::Regex>,
}

/// `--limit N`: the same on every listing (`ls`, `search`, `inbox`,
/// `stats --all`): at most N, taken after the command's own order. 0 is
/// refused (no listing of nothing; leave the flag out for every one).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct Limit {
    /// At most this many (after the command's order: ls's --sort, search's ranking, inbox's oldest first, stats --all's newest first)
    #[arg(long, value_name = "N", value_parser = parse_limit)]
    pub limit: Option<usize>,
}

impl Limit {
    /// Keep the first N of `items` (already in the command's order).
    pub fn apply<T>(&self, items: &mut Vec<T>) {
        if let Some(n) = self.limit {
            items.truncate(n);
        }
    }
}

/// A `--limit`: a whole number of at least 1.
fn parse_limit(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => {
            Err("0 would list nothing: give 1 or more, or leave --limit out for every one".into())
        }
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// What `ls --status` selects: a run's status, or one of two
/// conditions beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFilter {
    /// No terminal record ends the journal
    Open,
    /// Ended: the model finished
    Completed,
    /// Ended: stopped by a signal or to wait on deferred calls; resume continues it
    Suspended,
    /// Ended in an error
    Error,
    /// Ended: the token budget was spent
    Budget,
    /// Ended: the iteration limit was reached
    #[value(name = "max_iterations")]
    MaxIterations,
    /// The run could not be summarised (the prompt column says why)
    Corrupt,
    /// A writer holds the run now
    Live,
    /// Waiting on a person (an answer or an approval): the same as --waiting (no longer a status of its own)
    Waiting,
}

/// What `--state` selects: one state of the run model
/// (`journal::state::State`), or `waiting` for either wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StateFilter {
    /// The agent cannot read it: recover rebuilds it
    Corrupt,
    /// A writer holds it now
    Live,
    /// Its final line is torn or lacks its newline: repair fixes it
    Damaged,
    /// Waits on a person's answer or approval
    Waiting,
    /// Waits on a person's answer to a deferred call
    WaitingAnswer,
    /// Waits on a person's approval of a gated call
    WaitingApproval,
    /// A person answered or approved what it waited on; resume goes on
    Ready,
    /// At rest, suspended; resume goes on
    Suspended,
    /// At rest, ended by its terminal (completed, error, budget, max_iterations)
    Ended,
    /// Crashed (or written by a writer this tool cannot see); resume goes on, end closes it
    Open,
}

impl StateFilter {
    /// Whether a run in `state` is selected.
    pub fn selects(self, state: &journal::state::State) -> bool {
        match self {
            StateFilter::Waiting => matches!(
                state,
                journal::state::State::WaitingAnswer | journal::state::State::WaitingApproval
            ),
            other => {
                let word = match other {
                    StateFilter::Corrupt => "corrupt",
                    StateFilter::Live => "live",
                    StateFilter::Damaged => "damaged",
                    StateFilter::WaitingAnswer => "waiting-answer",
                    StateFilter::WaitingApproval => "waiting-approval",
                    StateFilter::Ready => "ready",
                    StateFilter::Suspended => "suspended",
                    StateFilter::Ended => "ended",
                    StateFilter::Open | StateFilter::Waiting => "open",
                };
                state.word() == word
            }
        }
    }
}

/// The runs a selection by filter must leave to a person, for a bulk
/// write (`end`, `rm`, `upgrade`): those that hold a person's act (a
/// question asked, an answer or an approval given and not yet used), as
/// the run model's table says (`journal::state::protected`). Only naming
/// such a run, with `--force`, passes it.
pub fn leave_to_a_person(
    op: journal::state::Op,
    runs: Vec<Summary>,
) -> (Vec<Summary>, Vec<Summary>) {
    runs.into_iter()
        .partition(|s| !journal::state::protected(op, &s.state))
}

/// The line that says which runs a bulk write left to a person, and how
/// to take one anyway; `None` when it left none.
pub fn left_note(op: journal::state::Op, left: &[Summary]) -> Option<String> {
    if left.is_empty() {
        return None;
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for s in left {
        match counts.iter_mut().find(|(w, _)| *w == s.state.word()) {
            Some((_, n)) => *n += 1,
            None => counts.push((s.state.word(), 1)),
        }
    }
    let counts: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
    let ids: Vec<String> = left
        .iter()
        .map(|s| crate::output::sanitize(&s.run_id, false).into_owned())
        .collect();
    Some(format!(
        "left {} run(s) to a person ({}): a filter never takes a run that waits on a person or is ready to resume; {} takes one only when it is named, with --force: {}",
        left.len(),
        counts.join(", "),
        op.word(),
        ids.join(", ")
    ))
}

/// The most a compiled `--match` expression may take. The regex crate
/// matches in linear time, but a huge bounded repetition makes its lazy
/// DFA thrash and fall back to the slow engine: `.{0,5000}qqqqqq` took 171
/// s on a 1 MB journal with the crate's default 10 MiB limit, and is
/// refused under this one, while `.{0,1000}qqqqqq` (accepted) takes 18 ms
/// (docs/OUTPUT.md, "Regular expressions").
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A regular expression (RE2 syntax, as the agent's Go `regexp`), at most
/// [`REGEX_SIZE_LIMIT`] compiled.
pub fn parse_regex(s: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(s)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => format!(
                "{s:?} is too large to search with: compiled it exceeds 1 MiB, which would make a search of a large journal take minutes; use smaller repetition counts (e.g. .{{0,1000}} rather than .{{0,5000}})"
            ),
            e => format!("{s:?} is not a valid regular expression: {e}"),
        })
}

/// What `--agent` left out for want of an agent, as the agent says it.
pub fn excluded_note(n: usize) -> String {
    match n {
        1 => "1 more run matched every other filter but carries no agent, so --agent left it out (it was journaled before the agent was recorded)".into(),
        n => format!("{n} more runs matched every other filter but carry no agent, so --agent left them out (they were journaled before the agent was recorded)"),
    }
}

/// A run a whole-store pass could not read, and why: counted and named,
/// never left out silently.
#[derive(Debug, serde::Serialize)]
pub struct Unreadable {
    pub run_id: String,
    pub problem: String,
    /// The store failed (the server gone, the disk full): not this run's
    /// fault, and the answer is not the store's.
    #[serde(skip)]
    pub store_failed: bool,
}

impl Unreadable {
    pub fn new(run: &str, e: &journal::Error) -> Unreadable {
        Unreadable {
            run_id: run.to_owned(),
            problem: e.to_string(),
            store_failed: e.is_store_failure(),
        }
    }

    /// `N run(s) unreadable, not DONE: a, b (...)` under a pass's output;
    /// `None` when every run was read.
    pub fn note(runs: &[Unreadable], done: &str) -> Option<String> {
        if runs.is_empty() {
            return None;
        }
        let names: Vec<String> = runs
            .iter()
            .map(|u| crate::output::sanitize(&u.run_id, false).into_owned())
            .collect();
        Some(format!(
            "{} run(s) unreadable, not {done}: {} (`fisk-admin verify RUN` says why)",
            names.len(),
            names.join(", ")
        ))
    }

    /// The exit status of a pass over many runs: 0 when it read what it
    /// selected (a corrupt run is named under the output, as `verify`
    /// reports it), 2 when a read failed because the store did: then the
    /// output is what could be read, not the store's answer.
    pub fn exit(runs: &[Unreadable]) -> std::process::ExitCode {
        match runs.iter().any(|u| u.store_failed) {
            true => std::process::ExitCode::from(2),
            false => std::process::ExitCode::SUCCESS,
        }
    }

    /// The run as unreadable when its summary already says it cannot be
    /// read (what [`split`](Self::split) takes off, one run at a time).
    pub fn of_summary(s: &Summary) -> Option<Unreadable> {
        (s.status == Listed::Corrupt).then(|| Unreadable {
            problem: s.problem.clone().unwrap_or_default(),
            store_failed: s.store_failed,
            run_id: s.run_id.clone(),
        })
    }

    /// Split off the runs whose summary already says they cannot be read.
    pub fn split(all: Vec<Summary>) -> (Vec<Summary>, Vec<Unreadable>) {
        let (ok, corrupt): (Vec<Summary>, Vec<Summary>) =
            all.into_iter().partition(|s| s.status != Listed::Corrupt);
        let bad = corrupt
            .into_iter()
            .map(|s| Unreadable {
                problem: s.problem.unwrap_or_default(),
                store_failed: s.store_failed,
                run_id: s.run_id,
            })
            .collect();
        (ok, bad)
    }
}

/// What a filter left out for want of an agent (the agent's
/// `no_agent_excluded`), beside what it selected.
#[derive(Debug, Default)]
pub struct Selected {
    pub runs: Vec<Summary>,
    pub no_agent_excluded: usize,
}

/// What the filters say of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Every set filter accepts it.
    Yes,
    /// A filter refuses it.
    No,
    /// It passes every filter but `--agent`, for want of an agent: left
    /// out and counted (the agent's `no_agent_excluded`).
    NoAgent,
}

impl FilterArgs {
    /// The summaries every set filter accepts, in the order given.
    pub fn select(&self, mut runs: Vec<Summary>) -> Selected {
        let mut no_agent_excluded = 0;
        // In place: a listing of 100,000 runs is not copied (issue 16).
        runs.retain(|s| match self.admits(s) {
            Admit::Yes => true,
            Admit::No => false,
            Admit::NoAgent => {
                no_agent_excluded += 1;
                false
            }
        });
        Selected {
            runs,
            no_agent_excluded,
        }
    }

    /// Whether the filters select one run: what [`select`](Self::select)
    /// decides for each, for a pass that looks at one summary at a time
    /// and keeps none it does not need (issue 40).
    pub fn admits(&self, s: &Summary) -> Admit {
        if !self.others(s) {
            return Admit::No;
        }
        let Some(want) = &self.agent else {
            return Admit::Yes;
        };
        match s.agent.as_deref() {
            None | Some("") => Admit::NoAgent,
            Some(a) if a == want => Admit::Yes,
            Some(_) => Admit::No,
        }
    }

    /// Every filter but `--agent`.
    fn others(&self, s: &Summary) -> bool {
        if !self.prefix.is_empty() && !self.prefix.iter().any(|p| s.run_id.starts_with(p.as_str()))
        {
            return false;
        }
        if !self.status.is_empty() && !self.status.iter().any(|w| status_selects(*w, s)) {
            return false;
        }
        if (self.waiting && !s.waits_on_person()) || (self.live && !s.live) {
            return false;
        }
        if self.ready && s.state != journal::state::State::Ready {
            return false;
        }
        if !self.state.is_empty() && !self.state.iter().any(|w| w.selects(&s.state)) {
            return false;
        }
        let same = |want: &Option<String>, have: &Option<String>| match want {
            Some(w) => have.as_deref() == Some(w.as_str()),
            None => true,
        };
        if !same(&self.model, &s.model) || !same(&self.caller, &s.caller) {
            return false;
        }
        // The agent's rule (runstate.SearchFilter): a window compares
        // meta.created as an instant, a zero created being 0001-01-01 (so
        // before every --since, and kept by every --until); a bound that is
        // itself the zero time is no bound.
        if !window(s.created, self.since, self.until) {
            return false;
        }
        if !window(s.updated, self.active_since, self.active_until) {
            return false;
        }
        if let Some(re) = &self.matches {
            if !re.is_match(s.prompt.as_deref().unwrap_or("")) {
                return false;
            }
        }
        true
    }

    /// For `--agent`, `--model` and `--caller` values no run of `all`
    /// has: what the store holds that is close (`did you mean`, c-34),
    /// one clause each; empty when every value names some run.
    pub fn near_misses(&self, all: &[Summary]) -> Vec<String> {
        let mut held = Held::default();
        for s in all {
            self.note_values(&mut held, s);
        }
        self.near_misses_of(&held)
    }

    /// Note what `s` holds of the fields this filter names (`--agent`,
    /// `--model`, `--caller`), for [`near_misses_of`](Self::near_misses_of)
    /// once every run was seen: the values, not the runs, are kept.
    pub fn note_values(&self, held: &mut Held, s: &Summary) {
        for (i, (_, want, get)) in self.named_fields().into_iter().enumerate() {
            if want.is_none() {
                continue;
            }
            if let (Some(v), Some(set)) = (get(s).filter(|v| !v.is_empty()), held.0.get_mut(i)) {
                if !set.contains(v) {
                    set.insert(v.to_owned());
                }
            }
        }
    }

    /// The fields a did-you-mean compares, with the flag that names each.
    fn named_fields(&self) -> [(&'static str, &Option<String>, Field); 3] {
        [
            ("--agent", &self.agent, |s| s.agent.as_deref()),
            ("--model", &self.model, |s| s.model.as_deref()),
            ("--caller", &self.caller, |s| s.caller.as_deref()),
        ]
    }

    /// [`near_misses`](Self::near_misses) from the values
    /// [`note_values`](Self::note_values) kept.
    pub fn near_misses_of(&self, held: &Held) -> Vec<String> {
        let mut out = Vec::new();
        for (i, (flag, want, _)) in self.named_fields().into_iter().enumerate() {
            let Some(want) = want else { continue };
            let have: Vec<&str> = held
                .0
                .get(i)
                .map(|set| set.iter().map(String::as_str).collect())
                .unwrap_or_default();
            if have.contains(&want.as_str()) {
                continue;
            }
            let mut close: Vec<(usize, &str)> = have
                .iter()
                .map(|h| {
                    (
                        crate::near::distance(&want.to_lowercase(), &h.to_lowercase()),
                        *h,
                    )
                })
                .filter(|(d, h)| {
                    *d <= want.chars().count().max(3) / 3
                        || h.to_lowercase().contains(&want.to_lowercase())
                        || want.to_lowercase().contains(&h.to_lowercase())
                })
                .collect();
            close.sort();
            let shown = |v: &str| crate::output::sanitize(v, false).into_owned();
            let clause = match close.as_slice() {
                [] => format!(
                    "{flag} {} matches no run (the store has {})",
                    shown(want),
                    match have.len() {
                        0 => "none".to_owned(),
                        n if n <= 6 => have.iter().map(|h| shown(h)).collect::<Vec<_>>().join(", "),
                        n => format!("{n} others"),
                    }
                ),
                c => format!(
                    "{flag} {} matches no run: did you mean {}?",
                    shown(want),
                    c.iter()
                        .take(3)
                        .map(|(_, h)| shown(h))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            out.push(clause);
        }
        out
    }

    /// Whether any filter is set (for saying why a listing is empty).
    pub fn any(&self) -> bool {
        !self.prefix.is_empty()
            || !self.status.is_empty()
            || self.waiting
            || self.ready
            || !self.state.is_empty()
            || self.live
            || self.agent.is_some()
            || self.model.is_some()
            || self.caller.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.active_since.is_some()
            || self.active_until.is_some()
            || self.matches.is_some()
    }
}

/// A field of a run's summary a filter compares.
type Field = fn(&Summary) -> Option<&str>;

/// The values of the fields a filter names that a store's runs hold (one
/// set per field of [`FilterArgs::named_fields`]), gathered a run at a
/// time: what a did-you-mean needs of a listing that keeps only what it
/// prints (issue 40).
#[derive(Debug, Default)]
pub struct Held([std::collections::BTreeSet<String>; 3]);

/// Whether `--status want` lists the run.
pub fn status_selects(want: StatusFilter, s: &Summary) -> bool {
    let ended = |reason: Reason| s.status == Listed::Run(Status::Terminal(reason));
    match want {
        StatusFilter::Open => s.status == Listed::Run(Status::Open),
        StatusFilter::Completed => ended(Reason::Completed),
        StatusFilter::Suspended => ended(Reason::Suspended),
        StatusFilter::Error => ended(Reason::Error),
        StatusFilter::Budget => ended(Reason::Budget),
        StatusFilter::MaxIterations => ended(Reason::MaxIterations),
        StatusFilter::Corrupt => s.status == Listed::Corrupt,
        StatusFilter::Live => s.live,
        // `waiting` is not a status since the agent's rule (SPEC 9); it is
        // still understood here as --waiting.
        StatusFilter::Waiting => s.waits_on_person(),
    }
}

/// A time argument (every `--since`, `--until` and the like): the one
/// rule, [`journal::time::parse_when`].
pub fn parse_when(s: &str) -> Result<Time, String> {
    journal::time::parse_when(s).map_err(|e| e.0)
}

/// Whether `at` is within `[since, until)`. A zero bound is no bound (the
/// agent's `--since 0001-01-01T00:00:00Z` selects every run); a run with no
/// such time at all (no meta record, or no time on its last record) is
/// outside any other bound.
fn window(at: Option<Time>, since: Option<Time>, until: Option<Time>) -> bool {
    let since = since.filter(|b| !b.is_zero());
    let until = until.filter(|b| !b.is_zero());
    if since.is_none() && until.is_none() {
        return true;
    }
    let Some(at) = at else {
        return false;
    };
    since.is_none_or(|b| at >= b) && until.is_none_or(|b| at < b)
}

/// A span argument (`--older-than`): the one rule,
/// [`journal::time::parse_duration`].
pub fn parse_span(s: &str) -> Result<std::time::Duration, String> {
    journal::time::parse_duration(s).map_err(|e| e.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_over_many_runs_exits_2_only_when_the_store_failed() {
        let server_gone = journal::Error::Unavailable {
            at: journal::Where::Server("nats://127.0.0.1:4222".into()),
            message: "no answer".into(),
        };
        let corrupt = journal::store::Summary::corrupt(
            "r2",
            &journal::Error::Config {
                at: journal::Where::Path("/s/r2.json".into()),
                message: "bad".into(),
            },
        );
        let (_, mut bad) = Unreadable::split(vec![corrupt]);
        assert_eq!(Unreadable::exit(&bad), std::process::ExitCode::SUCCESS);
        // A summary the server could not give, and a read it could not.
        let (_, gone) =
            Unreadable::split(vec![journal::store::Summary::corrupt("r3", &server_gone)]);
        assert_eq!(Unreadable::exit(&gone), std::process::ExitCode::from(2));
        bad.push(Unreadable::new("r1", &server_gone));
        assert_eq!(Unreadable::exit(&bad), std::process::ExitCode::from(2));
    }
}
