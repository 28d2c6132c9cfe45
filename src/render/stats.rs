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
    for row in tools {
        let (total, mean) = times(row);
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
