//! The per-tool figures `stats RUN` and `stats --all` both print (SPEC 13):
//! the tools table and how a duration reads. A version-3 journal carries
//! no times: its durations read "untimed", never zero.

use crate::output::{cell, print_table, table, Style};
use journal::stats::{Count, ToolStats};
use std::io::{self, Write};

/// One row per tool: calls, what became of them, and their time; counts
/// with thousands separators, tab-separated fields into a pipe.
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
    // Into a pipe every value is whole.
    let max = |n: usize| if style.width.is_some() { n } else { usize::MAX };
    let mut untimed_calls: i128 = 0;
    for row in tools {
        let (total, mean) = times(row, style);
        untimed_calls += row.untimed.into();
        t.add_row(vec![
            // The tool's name is never cut.
            cell(&row.tool, usize::MAX),
            cell(&row.kinds.join(","), max(30)),
            style.count(row.calls),
            style.count(row.dispatched),
            style.count(row.undispatched),
            style.count(row.unanswered),
            style.count(row.errors),
            total,
            mean,
        ]);
    }
    print_table(out, t, style)?;
    // In a pipe the cells are figures alone: what they leave out is said
    // on standard error.
    if style.fields() && untimed_calls > 0 {
        style.footnote(
            out,
            &format!("(TOTAL TIME and MEAN TIME are seconds over the timed calls: {untimed_calls} call(s) untimed)"),
        )?;
    }
    Ok(())
}

/// A tool's total and mean time over its timed calls; "untimed" when none
/// is timed, and how many are not where some are. Into a pipe
/// ([`Style::fields`]) each is seconds alone ([`seconds`]), `-` when none is
/// timed.
pub fn times<N: Count + Into<i128>>(row: &ToolStats<N>, style: Style) -> (String, String) {
    let ns = u128::try_from(row.duration_ns.into()).unwrap_or(0);
    let timed = u128::try_from(row.timed.into()).unwrap_or(0);
    let untimed: i128 = row.untimed.into();
    if timed == 0 {
        let what = match (untimed, style.fields()) {
            (0, _) | (_, true) => "-".to_owned(),
            _ => "untimed".to_owned(),
        };
        return (what.clone(), what);
    }
    if style.fields() {
        return (seconds(ns), seconds(ns / timed));
    }
    let mut total = duration(ns);
    if untimed > 0 {
        total.push_str(&format!(" (+{} untimed)", row.untimed));
    }
    (total, duration(ns / timed))
}

/// A duration for a program: seconds as a plain decimal, exact to the
/// nanosecond (`4.87`, `3739350.812910595`, `0`), a figure awk sums.
pub fn seconds(ns: u128) -> String {
    const S: u128 = 1_000_000_000;
    match ns % S {
        0 => (ns / S).to_string(),
        frac => {
            let frac = format!("{frac:09}");
            format!("{}.{}", ns / S, frac.trim_end_matches('0'))
        }
    }
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
    use crate::output::Format;

    fn people() -> Style {
        Style {
            format: Format::Text,
            color: false,
            width: Some(100),
        }
    }

    fn pipe() -> Style {
        Style {
            format: Format::Text,
            color: false,
            width: None,
        }
    }

    #[test]
    fn seconds_are_exact_and_plain() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(4_870_000_000), "4.87");
        assert_eq!(seconds(3_739_350_812_910_595), "3739350.812910595");
        assert_eq!(seconds(1), "0.000000001");
    }

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
        assert_eq!(times(&row, people()), ("untimed".into(), "untimed".into()));
        assert_eq!(times(&row, pipe()), ("-".into(), "-".into()));
        let row = ToolStats {
            duration_ns: 3_000_000,
            timed: 2,
            untimed: 1,
            ..row
        };
        assert_eq!(
            times(&row, people()),
            ("3.0ms (+1 untimed)".into(), "1.5ms".into())
        );
        assert_eq!(times(&row, pipe()), ("0.003".into(), "0.0015".into()));
    }
}
