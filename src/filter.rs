//! The run filters `ls`, `search` and `stats --all` share: by status,
//! waiting, live, agent, model, caller, time and prompt (SPEC 13). Each is
//! applied to a run's summary (its meta record and tail), so filtering
//! reads no more than `ls` does.

use crate::cli::{parse_regex, StatusFilter};
use clap::Args;
use journal::fold::Status;
use journal::record::Reason;
use journal::store::{Listed, Summary};
use journal::time::Time;

#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only runs whose id starts with this (the agent's listing filter: `w-` for its web channel's runs)
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Only runs with one of these statuses (comma-separated or repeated)
    #[arg(long, value_enum, value_name = "STATUS", value_delimiter = ',')]
    pub status: Vec<StatusFilter>,
    /// Only runs waiting on deferred calls a person has to answer
    #[arg(long)]
    pub waiting: bool,
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
    /// Only runs at or after this: a duration ago (24h, 7d), a date (2026-11-30, local midnight) or RFC 3339
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub since: Option<Time>,
    /// Only runs before this (as --since)
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub until: Option<Time>,
    /// Only runs whose prompt matches this regular expression
    #[arg(long = "match", value_name = "RE", value_parser = parse_regex)]
    pub matches: Option<regex::Regex>,
}

/// A run a whole-store pass could not read, and why: counted and named,
/// never left out silently.
#[derive(Debug, serde::Serialize)]
pub struct Unreadable {
    pub run_id: String,
    pub problem: String,
}

impl Unreadable {
    pub fn new(run: &str, e: &journal::Error) -> Unreadable {
        Unreadable {
            run_id: run.to_owned(),
            problem: e.to_string(),
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

    /// Split off the runs whose summary already says they cannot be read.
    pub fn split(all: Vec<Summary>) -> (Vec<Summary>, Vec<Unreadable>) {
        let (ok, corrupt): (Vec<Summary>, Vec<Summary>) =
            all.into_iter().partition(|s| s.status != Listed::Corrupt);
        let bad = corrupt
            .into_iter()
            .map(|s| Unreadable {
                problem: s.problem.unwrap_or_default(),
                run_id: s.run_id,
            })
            .collect();
        (ok, bad)
    }
}

/// Which time `--since`/`--until` compare against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeOf {
    /// The last record's time (`ls`, `stats --all`).
    Updated,
    /// meta.created (`search`, as the agent's).
    Created,
}

/// What a filter left out for want of an agent (the agent's
/// `no_agent_excluded`), beside what it selected.
#[derive(Debug, Default)]
pub struct Selected {
    pub runs: Vec<Summary>,
    pub no_agent_excluded: usize,
}

impl FilterArgs {
    /// The summaries every set filter accepts, in the order given.
    pub fn select(&self, mut runs: Vec<Summary>, time: TimeOf) -> Selected {
        let mut no_agent_excluded = 0;
        // In place: a listing of 100,000 runs is not copied (issue 16).
        runs.retain(|s| {
            if !self.others(s, time) {
                return false;
            }
            let Some(want) = &self.agent else {
                return true;
            };
            match s.agent.as_deref() {
                None | Some("") => {
                    no_agent_excluded += 1;
                    false
                }
                Some(a) => a == want,
            }
        });
        Selected {
            runs,
            no_agent_excluded,
        }
    }

    /// Every filter but `--agent`.
    fn others(&self, s: &Summary, time: TimeOf) -> bool {
        if self
            .prefix
            .as_ref()
            .is_some_and(|p| !s.run_id.starts_with(p.as_str()))
        {
            return false;
        }
        if !self.status.is_empty() && !self.status.iter().any(|w| status_selects(*w, s)) {
            return false;
        }
        if (self.waiting && !s.waiting) || (self.live && !s.live) {
            return false;
        }
        let same = |want: &Option<String>, have: &Option<String>| match want {
            Some(w) => have.as_deref() == Some(w.as_str()),
            None => true,
        };
        if !same(&self.model, &s.model) || !same(&self.caller, &s.caller) {
            return false;
        }
        let at = match time {
            TimeOf::Updated => s.updated,
            TimeOf::Created => s.created.filter(|c| !c.is_zero()),
        };
        // A run with no time is outside any time bound.
        if self.since.is_some_and(|b| at.is_none_or(|t| t < b)) {
            return false;
        }
        if self.until.is_some_and(|b| at.is_none_or(|t| t >= b)) {
            return false;
        }
        if let Some(re) = &self.matches {
            if !re.is_match(s.prompt.as_deref().unwrap_or("")) {
                return false;
            }
        }
        true
    }

    /// Whether any filter is set (for saying why a listing is empty).
    pub fn any(&self) -> bool {
        self.prefix.is_some()
            || !self.status.is_empty()
            || self.waiting
            || self.live
            || self.agent.is_some()
            || self.model.is_some()
            || self.caller.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.matches.is_some()
    }
}

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
        StatusFilter::Waiting => s.waiting,
    }
}

/// A `--since`/`--until` value: RFC 3339 (as Go reads it), a date (local
/// midnight), or a duration counted back from now (`90m`, `24h`, `7d`,
/// `2w`), as the agent reads them.
pub fn parse_when(s: &str) -> Result<Time, String> {
    parse_when_at(s, jiff::Zoned::now())
}

fn parse_when_at(s: &str, now: jiff::Zoned) -> Result<Time, String> {
    let bad = || {
        format!(
            "{s:?} is not a time: give a duration ago such as 24h or 7d, a date such as 2026-11-30, or an RFC 3339 time"
        )
    };
    if let Ok(t) = Time::parse(s) {
        return Ok(t);
    }
    let instant = if let Ok(d) = s.parse::<jiff::civil::Date>() {
        d.to_zoned(now.time_zone().clone()).map_err(|_| bad())?
    } else {
        let span: jiff::Span = s.parse().map_err(|_| bad())?;
        if span.is_negative() {
            return Err(bad());
        }
        now.checked_sub(span).map_err(|_| bad())?
    };
    Ok(Time::from_system(std::time::SystemTime::from(
        instant.timestamp(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> jiff::Zoned {
        "2026-12-01T12:00:00+00:00[UTC]".parse().unwrap()
    }

    #[test]
    fn a_time_is_rfc3339_a_date_or_a_duration_ago() {
        let at = |s: &str| parse_when_at(s, now()).map(|t| t.to_rfc3339());
        assert_eq!(
            at("2026-11-30T08:00:00Z").as_deref(),
            Ok("2026-11-30T08:00:00Z")
        );
        assert_eq!(at("2026-11-30").as_deref(), Ok("2026-11-30T00:00:00Z"));
        assert_eq!(at("24h").as_deref(), Ok("2026-11-30T12:00:00Z"));
        assert_eq!(at("7d").as_deref(), Ok("2026-11-24T12:00:00Z"));
        assert_eq!(at("90m").as_deref(), Ok("2026-12-01T10:30:00Z"));
        for bad in ["yesterday", "", "-3h", "2026-13-01"] {
            let e = at(bad).unwrap_err();
            assert!(e.contains("is not a time"), "{bad}: {e}");
        }
    }
}
