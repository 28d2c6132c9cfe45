//! One time rule (issue 23 item 2): every time argument is read one way
//! (local time unless a zone is given, never cut to midnight), a window
//! means the run's `created` in `ls`, `search` and `stats --all` alike,
//! `--active-since`/`--active-until` the last activity, and every duration
//! is Go's syntax.

use crate::support::*;
use std::collections::BTreeSet;
use std::path::Path;

/// `(run, created, updated)`: created as meta.created is written, updated
/// as the last record's time. In Paris (UTC+1 in November) 18:00 local is
/// 17:00Z.
const RUNS: &[(&str, &str, &str)] = &[
    ("early", "2026-11-30T16:59:00Z", "2026-11-30T20:00:00Z"),
    ("late", "2026-11-30T17:01:00Z", "2026-11-30T17:02:00Z"),
    // 17:01:30Z, written in India's offset.
    (
        "offset",
        "2026-11-30T22:31:30+05:30",
        "2026-11-30T17:05:00Z",
    ),
    ("evening", "2026-11-30T18:30:00Z", "2026-12-01T09:00:00Z"),
    ("before", "2026-11-29T10:00:00Z", "2026-11-30T19:00:00Z"),
    ("zero", "0001-01-01T00:00:00Z", "2026-11-30T12:00:00Z"),
];

fn journal(run: &str, created: &str, updated: &str) -> String {
    let meta = format!(
        r#"{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","time":"{created}","meta":{{"version":1,"run_id":"{run}","created":"{created}","fingerprint":{{"provider":"anthropic","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":100,"max_iterations":5}},"prompt":"prompt of {run}","agent":"ops"}}}}"#
    );
    let meta = meta.replace(
        r#""time":"0001-01-01T00:00:00Z""#,
        r#""time":"2026-11-30T11:00:00Z""#,
    );
    let end = format!(
        r#"{{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","time":"{updated}","terminal":{{"reason":"completed"}}}}"#
    );
    format!("{meta}\n{end}\n")
}

fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    for (run, created, updated) in RUNS {
        let p = dir.path().join(format!("{run}.json"));
        std::fs::write(&p, journal(run, created, updated)).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    }
    dir
}

fn at(dir: &Path, tz: &str, args: &[&str]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let mut all = vec!["--state-dir", s(dir)];
    all.extend_from_slice(args);
    fisk_env(home.path(), &all, &[("TZ", tz)], None)
}

fn set<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    ids.into_iter().map(str::to_owned).collect()
}

fn ids(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_owned())
        .collect()
}

/// What `ls`, `search` and `stats --all` select with `window`; asserts
/// the three agree, and returns the runs.
fn selected(dir: &Path, tz: &str, window: &[&str]) -> BTreeSet<String> {
    let run = |cmd: &[&str]| {
        let mut args = cmd.to_vec();
        args.extend_from_slice(window);
        args.extend(["-o", "json"]);
        let r = at(dir, tz, &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.json()
    };
    let ls = ids(&run(&["ls"]));
    let search = ids(&run(&["search"])["runs"]);
    assert_eq!(ls, search, "ls and search with {window:?} in {tz}");
    let stats = run(&["stats", "--all"]);
    assert_eq!(
        stats["totals"]["runs"].as_u64(),
        Some(ls.len() as u64),
        "stats --all with {window:?} in {tz}: {stats}"
    );
    ls
}

#[test]
fn a_date_and_time_is_local_to_the_minute_never_midnight() {
    let dir = store();
    let d = dir.path();
    // The issue's case: 18:00 in Paris is 17:00Z, so the runs created
    // after it (17:01Z, 17:01:30Z written as +05:30, 18:30Z), not the day.
    let after_17z = set(["late", "offset", "evening"]);
    for when in [
        "2026-11-30 18:00",
        "2026-11-30T18:00",
        "2026-11-30T18:00:00",
    ] {
        assert_eq!(
            selected(d, "Europe/Paris", &["--since", when]),
            after_17z,
            "{when}"
        );
        // Local time is the TZ's: in UTC the same words are an hour later.
        assert_eq!(
            selected(d, "UTC", &["--since", when]),
            set(["evening"]),
            "{when}"
        );
    }
    // A zone given wins over the local one.
    for when in [
        "2026-11-30T17:00Z",
        "2026-11-30 18:00 +01:00",
        "2026-11-30 12:00 America/New_York",
    ] {
        assert_eq!(
            selected(d, "Asia/Tokyo", &["--since", when]),
            after_17z,
            "{when}"
        );
    }
    // A date alone is local midnight.
    assert_eq!(
        selected(d, "Europe/Paris", &["--since", "2026-11-30"]),
        set(["early", "late", "offset", "evening"])
    );
    // --until keeps the zero created, as the agent's search does.
    assert_eq!(
        selected(d, "Europe/Paris", &["--until", "2026-11-30 18:00"]),
        set(["early", "before", "zero"])
    );
    assert_eq!(
        selected(
            d,
            "UTC",
            &[
                "--since",
                "2026-11-30 17:00",
                "--until",
                "2026-11-30 17:01:30"
            ]
        ),
        set(["late"])
    );
    // The zero time is no bound.
    assert_eq!(
        selected(d, "UTC", &["--since", "0001-01-01T00:00:00Z"]).len(),
        RUNS.len()
    );
}

#[test]
fn active_since_and_until_select_by_the_last_activity() {
    let dir = store();
    let d = dir.path();
    assert_eq!(
        selected(d, "UTC", &["--active-since", "2026-11-30 19:00"]),
        set(["early", "evening", "before"])
    );
    assert_eq!(
        selected(d, "UTC", &["--active-until", "2026-11-30 17:05"]),
        set(["late", "zero"])
    );
    // Both windows together: created after 17:00Z, active before 18:00Z.
    assert_eq!(
        selected(
            d,
            "Europe/Paris",
            &[
                "--since",
                "2026-11-30 18:00",
                "--active-until",
                "2026-11-30 19:00"
            ]
        ),
        set(["late", "offset"])
    );
    // The helps say what each compares.
    let r = at(d, "UTC", &["ls", "--help"]);
    for want in [
        "Only runs created at or after this (meta.created",
        "Only runs created before this (meta.created",
        "Only runs whose last record (the last activity, UPDATED) is at or after this",
        "local time unless a zone is given",
    ] {
        assert!(
            r.stdout.contains(want),
            "ls --help lacks {want:?}:\n{}",
            r.stdout
        );
    }
    for cmd in ["search", "stats"] {
        let r = at(d, "UTC", &[cmd, "--help"]);
        assert!(r.stdout.contains("--active-since"), "{cmd}: {}", r.stdout);
        assert!(
            r.stdout.contains("Only runs created at or after this"),
            "{cmd}"
        );
    }
}

#[test]
fn a_time_argument_that_is_no_form_exits_2_naming_the_forms() {
    let dir = store();
    for flag in ["--since", "--until", "--active-since", "--active-until"] {
        for bad in [
            "2026-11-30 18",
            "2026-11-30 18:00 junk",
            "yesterdays",
            "10",
            "--3h",
        ] {
            let arg = format!("{flag}={bad}");
            let r = at(dir.path(), "UTC", &["ls", &arg]);
            assert_eq!(r.code, 2, "{flag} {bad}: {}", r.stderr);
            assert!(
                r.stderr.contains(flag)
                    && r.stderr.contains("is not a time")
                    && r.stderr.contains("RFC 3339")
                    && r.stderr.contains("local time unless a zone follows")
                    && r.stderr.contains("90m, 24h, 7d, 2w"),
                "{flag} {bad}: {}",
                r.stderr
            );
        }
    }
}

#[test]
fn text_output_shows_times_with_their_zone_and_a_zero_time_as_a_dash() {
    let dir = store();
    let d = dir.path();
    let r = at(d, "UTC", &["ls"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let row = |run: &str| {
        r.stdout
            .lines()
            // Into a pipe, ls's fields are tab-separated.
            .find(|l| l.split_whitespace().next() == Some(run))
            .unwrap_or_else(|| panic!("no row for {run}:\n{}", r.stdout))
            .to_owned()
    };
    // CREATED then UPDATED, next to each other.
    let cells = |line: &str, a: &str, b: &str| {
        let w: Vec<&str> = line.split_whitespace().collect();
        w.windows(2).any(|p| p == [a, b])
    };
    assert!(
        cells(&row("late"), "2026-11-30T17:01:00Z", "2026-11-30T17:02:00Z"),
        "{}",
        row("late")
    );
    assert!(
        row("offset").contains("2026-11-30T22:31:30+05:30"),
        "{}",
        row("offset")
    );
    let zero = row("zero");
    assert!(!zero.contains("0001-01-01"), "{zero}");
    assert!(cells(&zero, "-", "2026-11-30T12:00:00Z"), "{zero}");
    // search shows CREATED with a window, in the same form.
    let r = at(d, "UTC", &["search", "--until", "2026-11-30 18:00"]);
    let zero = r
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some("zero"))
        .unwrap_or("");
    assert!(cells(zero, "-", "2026-11-30T12:00:00Z"), "{}", r.stdout);
    assert!(!r.stdout.contains("0001-01-01"), "{}", r.stdout);
    // stats RUN: to the second, with the zone as written.
    let r = at(d, "UTC", &["stats", "offset"]);
    assert!(
        r.stdout
            .contains("created    2026-11-30T22:31:30+05:30   updated 2026-11-30T17:05:00Z")
            && r.stdout
                .contains("ended      completed at 2026-11-30T17:05:00Z"),
        "{}",
        r.stdout
    );
    // JSON keeps the times as journaled.
    let r = at(d, "UTC", &["ls", "-o", "json"]);
    let v = r.json();
    let offset = v
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["run_id"] == "offset")
        .unwrap();
    assert_eq!(offset["created"], "2026-11-30T22:31:30+05:30");
}

#[test]
fn a_duration_is_gos_syntax_a_bare_number_and_a_negative_one_refused() {
    let dir = store();
    let d = dir.path();
    for bad in ["10", "-5m", "10x", "1h30"] {
        let arg = format!("--hold={bad}");
        let r = at(d, "UTC", &[&arg, "ls"]);
        assert_eq!(r.code, 2, "--hold {bad}: {}", r.stderr);
        assert!(r.stderr.contains("--hold"), "{}", r.stderr);
    }
    let r = at(d, "UTC", &["--hold", "10", "ls"]);
    assert!(
        r.stderr
            .contains("has no unit: say which, as 10s, 10m or 10h"),
        "{}",
        r.stderr
    );
    let r = at(d, "UTC", &["--hold=-5m", "ls"]);
    assert!(r.stderr.contains("is negative"), "{}", r.stderr);
    for good in ["0", "300ms", "1.5h", "2h45m", "1d", "90s"] {
        let r = at(d, "UTC", &["--hold", good, "ls"]);
        assert_eq!(r.code, 0, "--hold {good}: {}", r.stderr);
    }
}

#[test]
fn a_printed_command_carries_the_hold_in_a_form_that_reads_back() {
    // A run without its meta record: ls names the command that says why,
    // with this invocation's flags.
    let dir = store();
    std::fs::write(
        dir.path().join("broken.json"),
        journal("broken", "2026-11-30T10:00:00Z", "2026-11-30T10:00:01Z")
            .lines()
            .nth(1)
            .unwrap()
            .to_owned()
            + "\n",
    )
    .unwrap();
    let hint = |hold: &str| {
        let r = at(dir.path(), "UTC", &["--hold", hold, "ls", "-o", "json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = r.json();
        let broken = v
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["run_id"] == "broken")
            .unwrap()
            .clone();
        broken["problem"].as_str().unwrap().to_owned()
    };
    // Under a second is not rounded to 0 (which would mean no hold).
    assert!(
        hint("250ms").contains(" --hold 0.25s verify broken"),
        "{}",
        hint("250ms")
    );
    assert!(
        hint("1500ms").contains(" --hold 1.5s "),
        "{}",
        hint("1500ms")
    );
    assert!(
        hint("2h45m").contains(" --hold 9900s "),
        "{}",
        hint("2h45m")
    );
    // The default is left out, however it was written.
    for default in ["10m", "600000ms"] {
        assert!(!hint(default).contains("--hold"), "{}", hint(default));
    }
}

/// A store whose runs were created at these offsets (seconds) from `base`,
/// each named by its offset.
fn store_at(base: u64, offsets: &[(&str, i64)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (run, off) in offsets {
        let secs = base.checked_add_signed(*off).unwrap();
        let t = journal::time::Time::from_system(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
        )
        .to_rfc3339();
        std::fs::write(dir.path().join(format!("{run}.json")), journal(run, &t, &t)).unwrap();
    }
    dir
}

/// Issue 39, d-18: journalctl's `yesterday`, `today` and `-1h` are times
/// (at b926494 `--since yesterday` exited 2: "is not a time").
#[test]
fn since_yesterday_today_and_minus_an_hour_are_journalctl_words() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let today = now - now % 86_400;
    let dir = store_at(
        today,
        &[
            ("before-yesterday", -86_400 - 60),
            ("yesterday", -86_400 + 60),
            ("today", 60),
        ],
    );
    let d = dir.path();
    let just_now = store_at(now, &[("two-hours-ago", -7_200), ("a-minute-ago", -60)]);
    // The runs created today may be in the future of a test run just after
    // midnight: the window has no upper bound, so they are selected anyway.
    assert_eq!(
        selected(d, "UTC", &["--since", "yesterday"]),
        set(["yesterday", "today"])
    );
    assert_eq!(selected(d, "UTC", &["--since", "today"]), set(["today"]));
    assert_eq!(
        selected(d, "UTC", &["--until", "yesterday"]),
        set(["before-yesterday"])
    );
    assert_eq!(
        selected(just_now.path(), "UTC", &["--since", "-1h"]),
        set(["a-minute-ago"])
    );
    assert_eq!(
        selected(just_now.path(), "UTC", &["--since", "1h"]),
        set(["a-minute-ago"]),
        "-1h and 1h are the same span ago"
    );
    // A word that is not journalctl's is still refused, naming the words.
    let r = at(d, "UTC", &["ls", "--since", "last-week"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("yesterday"), "{}", r.stderr);
}

/// Issue 39, c-18: `--utc` shows every time of a listing in one zone,
/// as journalctl --utc does (by default each is shown with the zone it
/// was written in); the instants are the same, and JSON is unchanged.
#[test]
fn utc_shows_every_time_in_one_zone() {
    let dir = store();
    let d = dir.path();
    let mine = at(
        d,
        "UTC",
        &["ls", "--prefix", "offset", "--columns", "run,created"],
    );
    assert!(
        mine.stdout.contains("offset\t2026-11-30T22:31:30+05:30"),
        "{}",
        mine.stdout
    );
    let utc = at(
        d,
        "UTC",
        &[
            "ls",
            "--prefix",
            "offset",
            "--columns",
            "run,created",
            "--utc",
        ],
    );
    assert!(
        utc.stdout.contains("offset\t2026-11-30T17:01:30Z"),
        "{}",
        utc.stdout
    );
    let json = at(
        d,
        "UTC",
        &["ls", "--prefix", "offset", "--utc", "-o", "json"],
    )
    .json();
    assert_eq!(json[0]["created"], "2026-11-30T22:31:30+05:30");
}
