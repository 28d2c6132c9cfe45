//! `ls -o openmetrics` and `inbox -o openmetrics`: the store's runs by
//! state and what waits on a person, as gauges for node_exporter's
//! textfile collector (the Prometheus text format, ended by OpenMetrics'
//! `# EOF`, which Prometheus reads as a comment), so an operator can be
//! paged when a call has waited an hour:
//! `fisk_wait_oldest_seconds > 3600`. Every state is written, 0 when no
//! run is in it, so a series never disappears. Labels carry the store
//! (`file:DIR` or `jetstream:STREAM`), escaped as the format says.

use journal::ops::inbox::{Item, Waits};
use journal::state::State;
use journal::store::{Store, Summary};
use journal::time::Time;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Runs counted by the word of where they stand.
pub type States = BTreeMap<&'static str, u64>;

/// What the gauges say of the runs `select` chooses in `store`: their
/// count by state and the calls waiting in them, in one pass over the
/// store that counts each chosen run as its summary is made and reads the
/// waiting ones (`inbox_of`), so a page of 300,000 runs holds counts and
/// the waiting calls, not a summary a run (issue 40).
pub fn gather(
    store: &Store,
    mut select: impl FnMut(&Summary) -> bool,
) -> journal::Result<(States, Vec<Item>)> {
    let mut states = States::new();
    let found = journal::ops::inbox::inbox_of(store, |s| {
        let yes = select(s);
        if yes {
            *states.entry(s.state.word()).or_default() += 1;
        }
        yes
    })?;
    Ok((states, found.items))
}

/// `s` as a label value: `\`, `"` and a newline escaped.
fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Write the gauges: runs by state (`states`), calls waiting by what they
/// wait on, runs ready to resume, and the oldest wait in seconds (0 when
/// nothing waits), each labelled with `store`.
pub fn write(
    out: &mut dyn Write,
    store: &str,
    states: &States,
    items: &[Item],
    now: Time,
) -> io::Result<()> {
    let store = label(store);
    writeln!(
        out,
        "# HELP fisk_runs Runs in the store by where they stand (journal/FORMAT.md, run states)."
    )?;
    writeln!(out, "# TYPE fisk_runs gauge")?;
    for word in State::WORDS {
        let n = states.get(word).copied().unwrap_or(0);
        writeln!(out, "fisk_runs{{store=\"{store}\",state=\"{word}\"}} {n}")?;
    }
    writeln!(
        out,
        "# HELP fisk_calls_waiting Calls waiting on a person: an answer to a deferred call, or an approval."
    )?;
    writeln!(out, "# TYPE fisk_calls_waiting gauge")?;
    for (word, waits) in [("answer", Waits::Answer), ("approval", Waits::Approval)] {
        let n = items.iter().filter(|i| i.waits == waits).count();
        writeln!(
            out,
            "fisk_calls_waiting{{store=\"{store}\",waits=\"{word}\"}} {n}"
        )?;
    }
    let oldest = items
        .iter()
        .filter_map(|i| i.since)
        .map(|t| now.nanos_since(&t) / 1_000_000_000)
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "# HELP fisk_wait_oldest_seconds How long the call that has waited longest on a person has waited (0 when none waits)."
    )?;
    writeln!(out, "# TYPE fisk_wait_oldest_seconds gauge")?;
    writeln!(
        out,
        "fisk_wait_oldest_seconds{{store=\"{store}\"}} {oldest}"
    )?;
    writeln!(out, "# EOF")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_value_is_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
