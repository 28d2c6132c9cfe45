//! `stats RUN`: what a run cost and where its time went (SPEC 13). JSON is
//! the agent's Statistics document, field for field; text is read at a
//! glance: the frame, the budget used, tokens per response, one row per
//! tool. A version-3 journal carries no times: its durations read
//! "untimed", never zero.

use crate::cli::StatsArgs;
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{cell, json_pretty, print_table, sanitize, table, Format, Style};
use journal::stats::{stats, Count, Statistics, ToolStats};
use journal::time::Time;
use std::io::{self, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, a: StatsArgs, style: Style, out: &mut dyn Write) -> CmdResult {
    let store = open_store(g)?;
    let Some(run) = a.run.as_deref() else {
        return super::stats_all::run(&store, &a, style, out);
    };
    if a.filter.any() {
        return Err(Failure::new(
            "the run filters (--status, --agent, --since, ...) choose runs for --all; give a run id or --all, not both",
        ));
    }
    let journal = store.read(run)?;
    let s = stats(journal.records());
    match style.format {
        Format::Json => json_pretty(out, &s)?,
        Format::Text => render(out, run, &s, style)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut dyn Write, run: &str, s: &Statistics, style: Style) -> io::Result<()> {
    let text = |v: &str| match v {
        "" => "-".to_owned(),
        v => sanitize(v, false).into_owned(),
    };
    writeln!(out, "run        {}", sanitize(run, false))?;
    writeln!(
        out,
        "agent      {}   model {}   caller {}",
        text(&s.agent),
        text(&s.model),
        text(&s.caller)
    )?;
    let when = |t: Option<Time>| crate::output::time_cell(t.as_ref());
    writeln!(
        out,
        "created    {}   updated {}",
        when(s.created),
        when(s.updated)
    )?;
    let wall = s
        .wall_clock_ns()
        .map_or_else(|| "untimed".to_owned(), duration);
    writeln!(out, "wall clock {wall}")?;
    match s.terminal.as_str() {
        "" => writeln!(out, "ended      no (open)")?,
        reason => match s.ended {
            Some(at) => writeln!(out, "ended      {} at {}", text(reason), when(Some(at)))?,
            None => writeln!(out, "ended      {} (untimed)", text(reason))?,
        },
    }
    let of = |n: i64, max: i64| match max {
        0 => n.to_string(),
        m => format!("{n} of {m}"),
    };
    writeln!(out, "responses  {}", of(s.iterations, s.max_iterations))?;
    let total = s.tokens.total();
    let share = match s.max_tokens {
        0 => String::new(),
        m => format!(" ({:.1}% of the budget)", total as f64 * 100.0 / m as f64),
    };
    writeln!(
        out,
        "tokens     {}{share}: in {}, out {} (thinking {}), cache read {}, cache create {}",
        of(total, s.max_tokens),
        s.tokens.in_tokens,
        s.tokens.out_tokens,
        s.tokens.thinking_tokens,
        s.tokens.cache_read_tokens,
        s.tokens.cache_create_tokens
    )?;
    if !s.responses.is_empty() {
        writeln!(out)?;
        let mut t = table(&[
            "ITERATION",
            "TIME",
            "IN",
            "OUT",
            "THINKING",
            "CACHE READ",
            "CACHE CREATE",
            "TOTAL",
        ]);
        for r in &s.responses {
            t.add_row(vec![
                r.iteration.to_string(),
                when(r.time),
                r.tokens.in_tokens.to_string(),
                r.tokens.out_tokens.to_string(),
                r.tokens.thinking_tokens.to_string(),
                r.tokens.cache_read_tokens.to_string(),
                r.tokens.cache_create_tokens.to_string(),
                r.tokens.total().to_string(),
            ]);
        }
        print_table(out, t, style)?;
    }
    if !s.tools.is_empty() {
        writeln!(out)?;
        tools_table(out, &s.tools, style)?;
    }
    Ok(())
}

/// One row per tool: calls, what became of them, and their time.
pub fn tools_table<N: Count + Into<i128>>(
    out: &mut dyn Write,
    tools: &[ToolStats<N>],
    style: Style,
) -> io::Result<()> {
    let mut t = table(&[
        "TOOL",
        "KINDS",
        "CALLS",
        "DISPATCHED",
        "NOT RUN",
        "UNANSWERED",
        "ERRORS",
        "TOTAL TIME",
        "MEAN TIME",
    ]);
    for row in tools {
        let (total, mean) = times(row);
        t.add_row(vec![
            cell(&row.tool, 40),
            cell(&row.kinds.join(","), 30),
            row.calls.to_string(),
            row.dispatched.to_string(),
            row.undispatched.to_string(),
            row.unanswered.to_string(),
            row.errors.to_string(),
            total,
            mean,
        ]);
    }
    print_table(out, t, style)
}

/// A tool's total and mean time over its timed calls; "untimed" when none
/// is timed, and how many are not where some are.
pub fn times<N: Count + Into<i128>>(row: &ToolStats<N>) -> (String, String) {
    let ns = u128::try_from(row.duration_ns.into()).unwrap_or(0);
    let timed = u128::try_from(row.timed.into()).unwrap_or(0);
    let untimed: i128 = row.untimed.into();
    if timed == 0 {
        let what = match untimed {
            0 => "-".to_owned(),
            _ => "untimed".to_owned(),
        };
        return (what.clone(), what);
    }
    let mut total = duration(ns);
    if untimed > 0 {
        total.push_str(&format!(" (+{} untimed)", row.untimed));
    }
    (total, duration(ns / timed))
}

/// A duration for a person: `338µs`, `12.3ms`, `1.23s`, `4m07s`, `2h03m`.
pub fn duration(ns: u128) -> String {
    const US: u128 = 1_000;
    const MS: u128 = 1_000_000;
    const S: u128 = 1_000_000_000;
    match ns {
        n if n < US => format!("{n}ns"),
        n if n < MS => format!("{}µs", n / US),
        n if n < S => format!("{:.1}ms", n as f64 / MS as f64),
        n if n < 60 * S => format!("{:.2}s", n as f64 / S as f64),
        n if n < 3600 * S => format!("{}m{:02}s", n / (60 * S), (n / S) % 60),
        n => format!("{}h{:02}m", n / (3600 * S), (n / (60 * S)) % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(duration(999), "999ns");
        assert_eq!(duration(338_374), "338µs");
        assert_eq!(duration(12_340_000), "12.3ms");
        assert_eq!(duration(1_230_000_000), "1.23s");
        assert_eq!(duration(247 * 1_000_000_000), "4m07s");
        assert_eq!(duration(7_380 * 1_000_000_000), "2h03m");
    }

    #[test]
    fn a_tool_with_no_timed_call_reads_untimed_not_zero() {
        let row: ToolStats = ToolStats {
            tool: "t".into(),
            calls: 2,
            untimed: 2,
            ..ToolStats::default()
        };
        assert_eq!(times(&row), ("untimed".into(), "untimed".into()));
        let row = ToolStats {
            duration_ns: 3_000_000,
            timed: 2,
            untimed: 1,
            ..row
        };
        assert_eq!(times(&row), ("3.0ms (+1 untimed)".into(), "1.5ms".into()));
    }
}
