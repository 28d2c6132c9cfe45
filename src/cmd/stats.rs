//! `stats RUN`: what a run cost and where its time went (SPEC 13). JSON is
//! the agent's Statistics document, field for field; text is read at a
//! glance: the frame, the budget used, tokens per response, one row per
//! tool. A version-3 journal carries no times: its durations read
//! "untimed", never zero.

mod all;

use crate::cli::StatsArgs;
use crate::cost::{money, Cost, Prices};
use crate::error::{CmdResult, Failure};
use crate::invocation::Invocation;
use crate::open::open_store;
use crate::output::{json_pretty, print_table, sanitize, table, Format, Style};
use crate::render::stats::{duration, tools_table};
use journal::stats::{stats, Statistics};
use journal::time::Time;
use std::io::{self, Write};
use std::process::ExitCode;

pub fn run(g: &Invocation, a: StatsArgs, out: &mut dyn Write) -> CmdResult {
    let style = g.style;
    if a.all {
        return all::run(&open_store(g)?, &a, style, out);
    }
    if a.filter.any() {
        return Err(Failure::new(
            "the run filters (--status, --agent, --since, ...) choose runs for --all; give a run id or --all, not both",
        ));
    }
    let prices = a.prices.as_deref().map(Prices::load).transpose()?;
    let read = crate::runs::Read::open(g, a.run.as_deref(), a.file.file.as_deref(), None)?;
    let run = read.run();
    let s = stats(read.journal().records());
    // --prices: what it cost, or why that is unknown (exit 1).
    let cost = prices.as_ref().map(|p| {
        let mut c = Cost::default();
        c.add(p.of(&s.model, &s.tokens));
        c
    });
    match style.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Priced<'a> {
                #[serde(flatten)]
                s: &'a Statistics,
                #[serde(skip_serializing_if = "Option::is_none")]
                cost: Option<&'a Cost>,
            }
            json_pretty(
                out,
                &Priced {
                    s: &s,
                    cost: cost.as_ref(),
                },
            )?
        }
        Format::Text => {
            render(out, run, &s, style)?;
            if let (Some(c), Some(p)) = (&cost, &prices) {
                match c.incomplete(p) {
                    None => writeln!(out, "cost       {}", money(c.amount, p))?,
                    Some(_) => writeln!(
                        out,
                        "cost       unknown: {}",
                        c.unpriced
                            .iter()
                            .map(|w| sanitize(w, false).into_owned())
                            .collect::<Vec<_>>()
                            .join("; ")
                    )?,
                }
            }
        }
    }
    Ok(match cost.is_some_and(|c| !c.complete) {
        true => ExitCode::from(1),
        false => ExitCode::SUCCESS,
    })
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
                style.count(r.tokens.in_tokens),
                style.count(r.tokens.out_tokens),
                style.count(r.tokens.thinking_tokens),
                style.count(r.tokens.cache_read_tokens),
                style.count(r.tokens.cache_create_tokens),
                style.count(r.tokens.total()),
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
