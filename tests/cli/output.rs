//! How text output looks (issue 15 items 3, 4, 5): tables fit the
//! terminal and never pad a pipe, colour follows `--color` and NO_COLOR,
//! verify's one-line findings and closing table, and what `show` and
//! `fold` say about a run, a damaged one included.

use crate::support::*;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// `fisk-admin args` as [`fisk`] runs it, with `env` set on top (the
/// harness sets NO_COLOR=1; a value of `None` removes a variable).
fn fisk_env(args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.output().unwrap().into()
}

fn width(line: &str) -> usize {
    line.chars().count()
}

fn run_ids(store: &Path) -> Vec<String> {
    fisk(&["--state-dir", s(store), "ls", "-o", "json"])
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_owned())
        .collect()
}

/// b-12: at 80 columns every `ls` row is one line of at most 80
/// characters (the prompt cut first, then columns left out and named).
#[test]
fn ls_at_80_columns_keeps_each_run_on_one_line() {
    for dir in ["runs", "runs-v1", "damaged"] {
        let store = store_copy(dir);
        let r = fisk_env(
            &["--state-dir", s(store.path()), "ls"],
            &[("COLUMNS", Some("80"))],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        // The last line says how a cut prompt is seen whole (issue 39).
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        assert_eq!(
            lines.pop(),
            Some("(cut to fit: --columns run,status,message shows it whole)"),
            "{dir}: {}",
            r.stdout
        );
        for l in &lines {
            assert!(width(l) <= 80, "{dir}: {} columns: {l:?}", width(l));
        }
        let ids = run_ids(store.path());
        // Header, rule, one line per run, and the note naming what was left out.
        assert_eq!(lines.len(), ids.len() + 3, "{dir}:\n{}", r.stdout);
        assert!(lines[0].contains("RUN") && lines[0].contains("PROMPT"));
        assert!(lines.last().unwrap().starts_with("(too narrow for "));
        for l in &lines[2..lines.len() - 1] {
            let first = l.split_whitespace().next().unwrap();
            assert!(
                ids.iter()
                    .any(|id| id.starts_with(first.trim_end_matches('…'))),
                "{dir}: a row that is not a run: {l:?}"
            );
        }
        // Ids are never cut: each row starts with a whole one.
        for l in &lines[2..lines.len() - 1] {
            let first = l.split_whitespace().next().unwrap();
            assert!(ids.iter().any(|id| id == first), "{dir}: cut id {l:?}");
        }
        // Wide enough, nothing is left out.
        let wide = fisk_env(
            &["--state-dir", s(store.path()), "ls"],
            &[("COLUMNS", Some("1000"))],
        );
        assert!(!wide.stdout.contains("too narrow"), "{}", wide.stdout);
        // In a pipe: a header, then one line per run, tab-separated
        // fields, every value whole, no rule line.
        let pipe = fisk(&["--state-dir", s(store.path()), "ls"]);
        let rows: Vec<Vec<&str>> = pipe
            .stdout
            .lines()
            .map(|l| l.split('\t').collect())
            .collect();
        assert_eq!(rows.len(), ids.len() + 1, "{dir}:\n{}", pipe.stdout);
        assert_eq!(rows[0][0], "RUN");
        assert!(!pipe.stdout.contains('─'));
        for r in &rows {
            assert_eq!(r.len(), rows[0].len(), "{dir}: {r:?}");
            assert!(r.iter().all(|f| !f.is_empty()), "{dir}: {r:?}");
        }
        let mut piped: Vec<&str> = rows[1..].iter().map(|r| r[0]).collect();
        let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
        piped.sort();
        want.sort();
        assert_eq!(piped, want, "{dir}");
    }
}

/// search cuts its prompt column first too.
#[test]
fn search_at_80_columns_keeps_each_run_on_one_line() {
    let store = store_copy("runs");
    let r = fisk_env(
        &["--state-dir", s(store.path()), "search", "--match", "."],
        &[("COLUMNS", Some("80"))],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.lines().count() > 5, "{}", r.stdout);
    for l in r.stdout.lines() {
        assert!(width(l) <= 80, "{l:?}");
    }
}

/// b-12: in a pipe no line of any table ends in padding.
#[test]
fn no_line_ends_in_spaces_in_a_pipe() {
    let runs = store_copy("runs");
    let damaged = store_copy("damaged");
    let (r, d) = (s(runs.path()), s(damaged.path()));
    for args in [
        vec!["--state-dir", r, "ls"],
        vec!["--state-dir", r, "show", "deferral-waiting"],
        vec!["--state-dir", r, "show", "pending-batch"],
        vec!["--state-dir", r, "fold", "tool-batch"],
        vec!["--state-dir", r, "stats", "tool-batch"],
        vec!["--state-dir", r, "stats", "--all", "--by", "model,tool"],
        vec!["--state-dir", r, "search", "--match", "."],
        vec!["--state-dir", r, "validate"],
        vec!["--state-dir", d, "verify"],
    ] {
        let out = fisk(&args);
        assert!(out.code <= 1, "{args:?}: {}", out.stderr);
        assert!(!out.stdout.is_empty(), "{args:?}");
        for l in out.stdout.lines() {
            assert!(!l.ends_with(' '), "{args:?}: trailing spaces in {l:?}");
        }
    }
}

/// `--color always` colours a pipe (and outranks NO_COLOR); `never`,
/// `--no-color` and NO_COLOR with `auto` do not; `auto` does not colour a
/// pipe.
#[test]
fn color_follows_the_flag_and_no_color() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let ls = |extra: &[&str], env: &[(&str, Option<&str>)]| {
        let mut args = vec!["--state-dir", d];
        args.extend_from_slice(extra);
        fisk_env(&args, env).stdout
    };
    let esc = '\u{1b}';
    // The harness sets NO_COLOR=1: the flag wins over it.
    let always = ls(&["--color", "always", "ls"], &[]);
    assert!(
        always.contains("\u{1b}[38;5;"),
        "statuses coloured:\n{always}"
    );
    let verify = ls(&["--color", "always", "verify"], &[]);
    assert!(verify.contains("\u{1b}[31merror\u{1b}[0m[interior-corruption]"));
    for (extra, env) in [
        (vec!["--color", "never", "ls"], vec![("NO_COLOR", None)]),
        (vec!["--no-color", "ls"], vec![("NO_COLOR", None)]),
        (vec!["--color", "always", "--no-color", "ls"], vec![]),
        (vec!["ls"], vec![]),
        (vec!["--color", "auto", "verify"], vec![("NO_COLOR", None)]),
    ] {
        let out = ls(&extra, &env);
        assert!(!out.is_empty());
        assert!(!out.contains(esc), "{extra:?} {env:?} coloured:\n{out}");
    }
    assert_printable("colourless verify", &ls(&["verify"], &[]));
}

/// b-13: one line per finding, `run:line:byte: severity[code]: message`,
/// parts left out when unknown; store-level findings name the store.
#[test]
fn verify_prints_one_line_per_finding() {
    let store = store_copy("damaged");
    let r = fisk(&["--state-dir", s(store.path()), "verify"]);
    assert_eq!(r.code, 1);
    let findings: Vec<Value> = fisk(&["--state-dir", s(store.path()), "verify", "-o", "json"])
        .json_lines()
        .into_iter()
        .filter(|f| f.get("code").is_some())
        .collect();
    let lines: Vec<&str> = r.stdout.lines().collect();
    for (f, l) in findings.iter().zip(&lines) {
        let mut at = f["run"].as_str().unwrap().to_owned();
        if let Some(n) = f["line"].as_u64() {
            at.push_str(&format!(":{n}"));
            if let Some(o) = f["offset"].as_u64() {
                at.push_str(&format!(":{o}"));
            }
        }
        let want = format!(
            "{at}: {}[{}]: {}",
            f["severity"].as_str().unwrap(),
            f["code"].as_str().unwrap(),
            f["message"].as_str().unwrap()
        );
        assert_eq!(*l, want);
    }
    assert!(lines.contains(&"empty-journal: error[empty-journal]: the journal holds no records"));
    assert!(
        lines.contains(&"seq-gap:4:1040: error[seq-gap]: seq 5 follows seq 3: 1 record(s) lost")
    );
}

/// b-14: the closing table names every run with an error or warning, its
/// worst finding and the command that fixes it, store flags included.
#[test]
fn verify_ends_with_the_runs_to_fix_and_their_commands() {
    let store = store_copy("damaged");
    let d = s(store.path());
    // The table for people (a terminal's width); a pipe gets its fields.
    let r = fisk_env(&["--state-dir", d, "verify"], &[("COLUMNS", Some("1000"))]);
    let table = r.stdout.split("\n\n").nth(1).expect("a closing table");
    let row = |run: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(run))
            .unwrap_or_else(|| panic!("no row for {run}:\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let cases = [
        // Every command its worst severity asks for, in order; a repair
        // is not followed by an upgrade (a store-wide decision).
        ("torn-tail", format!("torn-tail warning torn-tail fisk-admin --state-dir {d} repair torn-tail")),
        ("skipped-optional", format!("skipped-optional warning version-3 fisk-admin --state-dir {d} upgrade skipped-optional")),
        ("empty-journal", format!("empty-journal error empty-journal fisk-admin --state-dir {d} rm empty-journal")),
        ("interior-corruption", format!("interior-corruption error interior-corruption fisk-admin --state-dir {d} recover interior-corruption")),
        ("missing-payload", "missing-payload error missing-payload -".to_owned()),
        ("version-older", "version-older warning version-older -".to_owned()),
    ];
    for (run, want) in cases {
        assert_eq!(row(run), want);
    }
    // Only runs with an error or a warning; each once.
    assert!(!table.contains("orphan.lock"), "{table}");
    assert_eq!(table.matches("\n torn-tail ").count(), 1);
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.contains("error(s)") && last.contains("28 run(s)"),
        "{last}"
    );
    // The recover command it names works as printed: with no terminal to
    // ask on it refuses and changes nothing; with --yes added it
    // recovers, and the run then verifies without errors.
    let words: Vec<String> = row("interior-corruption")
        .split(' ')
        .skip(3)
        .map(str::to_owned)
        .collect();
    let journal = store.path().join("interior-corruption.json");
    let before = std::fs::read(&journal).unwrap();
    let pasted = |extra: &[&str]| {
        Command::new(bin())
            .args(&words[1..])
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let o = pasted(&[]);
    assert_eq!(o.status.code(), Some(1), "{words:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("pass --yes"));
    assert_eq!(std::fs::read(&journal).unwrap(), before, "nothing changed");
    let o = pasted(&["--yes"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{words:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = fisk(&["--state-dir", d, "verify", "interior-corruption"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

/// b-14: a clean store says so in one line (infos aside).
#[test]
fn verify_says_a_clean_store_is_clean() {
    let store = store_copy("runs-v1");
    let r = fisk(&["--state-dir", s(store.path()), "verify"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("ok: the store is clean: no errors or warnings ("),
        "{last}"
    );
    assert!(!r.stdout.contains("FIX"), "no table for a clean store");
    let one = fisk(&["--state-dir", s(store.path()), "verify", "tool-batch"]);
    assert!(
        one.stdout.starts_with("ok: the run named is clean"),
        "{}",
        one.stdout
    );
}

/// b-13: a store whose journals all have the same loose mode is one
/// finding with one chmod, in both outputs; one loose journal among tight
/// ones stays its own finding.
#[test]
fn journals_sharing_a_loose_mode_are_one_permissions_finding() {
    let store = store_copy("runs");
    for e in std::fs::read_dir(store.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    let d = s(store.path());
    let json = fisk(&["--state-dir", d, "verify", "-o", "json"]);
    let perms: Vec<Value> = json
        .json_lines()
        .into_iter()
        .filter(|f| f["code"] == "permissions")
        .collect();
    assert_eq!(perms.len(), 1, "{perms:?}");
    assert_eq!(perms[0]["run"], d);
    let n = run_ids(store.path()).len();
    assert_eq!(
        perms[0]["message"],
        format!("every journal in the store ({n}) is mode 0644: readable by group or others (chmod 600 {d}/*.json)")
    );
    let text = fisk_env(&["--state-dir", d, "verify"], &[("COLUMNS", Some("1000"))]).stdout;
    assert_eq!(text.matches("[permissions]").count(), 1, "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!(" {d} ")))
        .expect("a row for the store");
    assert!(
        row.trim_end().ends_with(&format!("chmod 600 {d}/*.json")),
        "{row}"
    );
    // The command fixes it.
    let o = Command::new("sh")
        .args(["-c", &format!("chmod 600 {d}/*.json")])
        .status()
        .unwrap();
    assert!(o.success());
    let after = fisk(&["--state-dir", d, "verify", "-o", "json"]);
    assert!(
        !after.stdout.contains("\"permissions\""),
        "{}",
        after.stdout
    );
    // Named runs are not the store: each keeps its own finding.
    std::fs::set_permissions(
        store.path().join("tool-batch.json"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    let one = fisk(&["--state-dir", d, "verify", "-o", "json"]);
    let perms: Vec<Value> = one
        .json_lines()
        .into_iter()
        .filter(|f| f["code"] == "permissions")
        .collect();
    assert_eq!(perms.len(), 1);
    assert_eq!(perms[0]["run"], "tool-batch");
    let text = fisk(&["--state-dir", d, "verify", "tool-batch"]).stdout;
    assert!(
        text.contains(&format!("chmod 600 {d}/tool-batch.json")),
        "{text}"
    );
}

/// b-13: a structural finding is not reported again as a `schema` echo
/// of the same record; other schema findings stay.
#[test]
fn a_structural_finding_has_no_schema_echo() {
    let store = store_copy("damaged");
    let r = fisk(&["--state-dir", s(store.path()), "verify", "-o", "json"]);
    let schema: Vec<Value> = r
        .json_lines()
        .into_iter()
        .filter(|f| f["code"] == "schema")
        .collect();
    for run in [
        "missing-payload",
        "missing-payload-null",
        "extra-payload",
        "meta-seq",
    ] {
        assert!(
            !schema.iter().any(|f| f["run"] == run),
            "{run} echoed: {schema:?}"
        );
    }
    // A schema violation on the same record about another key stays: a
    // reason no schema knows, beside the extra `claim`.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("damaged/extra-payload.json")).unwrap();
    let bad = text.replacen("\"reason\":\"completed\"", "\"reason\":\"vanished\"", 1);
    assert_ne!(bad, text);
    let path = dir.path().join("extra-payload.json");
    std::fs::write(&path, bad).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let r = fisk(&["--state-dir", s(dir.path()), "verify", "-o", "json"]);
    let on3: Vec<String> = r
        .json_lines()
        .iter()
        .filter(|f| f["line"] == 3)
        .map(|f| {
            format!(
                "{} {}",
                f["code"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(on3.len(), 2, "{on3:?}");
    assert!(on3[0].starts_with("extra-payload "), "{on3:?}");
    assert!(on3[1].starts_with("schema /terminal/reason: "), "{on3:?}");
}

/// b-13, JetStream: the line is the record's position, with no byte and
/// nothing that looks like a file; checked on the text a file store gives
/// for the same findings (the JetStream test drives the stream).
pub fn assert_verify_text_names_no_file(text: &str, run: &str) {
    let prefix = format!("{run}:1: warning[version-3]: ");
    assert!(
        text.lines().any(|l| l.starts_with(&prefix)),
        "no byte offset on JetStream:\n{text}"
    );
    assert!(
        !text.contains(".json"),
        "a file named on JetStream:\n{text}"
    );
}

/// Item 5: show has created and updated (with their offsets), the
/// version and generation, agent, caller and the budget used, on both
/// generations.
#[test]
fn show_has_times_generation_agent_caller_and_budget_on_both_generations() {
    for (dir, version, updated) in [
        (
            "runs-v1",
            "version:     1 (the agent as it ships)",
            "updated:     2026-11-04T09:02:22.649099598Z",
        ),
        (
            "runs",
            "version:     3 (the August 2026 agent",
            "(when it was last stored: its records carry no time)",
        ),
    ] {
        let store = store_copy(dir);
        let r = fisk(&["--state-dir", s(store.path()), "show", "deferral-waiting"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let o = &r.stdout;
        assert!(
            o.contains("  created:     2026-11-04T11:02:17.25+02:00\n"),
            "{dir}:\n{o}"
        );
        assert!(o.contains(updated), "{dir}:\n{o}");
        assert!(o.contains(version), "{dir}:\n{o}");
        assert!(o.contains("  agent:       "), "{dir}:\n{o}");
        assert!(o.contains("  caller:      "), "{dir}:\n{o}");
        assert!(
            o.contains("  budget used: 1360 of 200000 tokens, iterations 1 of 20\n"),
            "{dir}:\n{o}"
        );
        assert!(
            !o.contains("health:"),
            "a healthy run has no health line:\n{o}"
        );
        // b-12: the fingerprint no longer passes 80 columns.
        let fp = o
            .split("Fingerprint\n")
            .nth(1)
            .unwrap()
            .split("\n\n")
            .next()
            .unwrap();
        for l in fp.lines() {
            assert!(width(l) <= 80, "{dir}: {l:?}");
        }
    }
    let v1 = store_copy("runs-v1");
    let r = fisk(&["--state-dir", s(v1.path()), "show", "deferral-waiting"]);
    assert!(
        r.stdout.contains("  agent:       nats-ops\n"),
        "{}",
        r.stdout
    );
}

/// Item 5: a run verify finds an error in gets one health line naming the
/// worst finding and the command that fixes it.
#[test]
fn show_names_a_damaged_runs_worst_finding_and_its_fix() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let r = fisk(&["--state-dir", d, "show", "seq-gap"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let health: Vec<&str> = r.stdout.lines().filter(|l| l.contains("health:")).collect();
    assert_eq!(
        health,
        [format!("  health:      error[seq-gap] at line 4: seq 5 follows seq 3: 1 record(s) lost; fix: fisk-admin --state-dir {d} recover seq-gap")]
    );
    // A warning alone (a torn tail) is not a health line.
    let r = fisk(&["--state-dir", d, "show", "torn-tail"]);
    assert!(!r.stdout.contains("health:"), "{}", r.stdout);
}

/// b-16: a damaged run reads up to its first bad line when asked for a
/// seq before it, in show and fold; at or past it, it is refused as before.
#[test]
fn until_seq_before_the_damage_reads_a_damaged_run() {
    let store = store_copy("damaged");
    let d = s(store.path());
    // interior-corruption: lines 1-2 are fine, line 3 does not parse.
    let fold = fisk(&[
        "--state-dir",
        d,
        "fold",
        "interior-corruption",
        "--until-seq",
        "2",
    ]);
    assert_eq!(fold.code, 0, "{}", fold.stderr);
    let mut lines = fold.stdout.lines();
    assert_eq!(lines.next(), Some("Run interior-corruption as of seq 2"));
    assert_eq!(lines.next(), Some("  status:      open"));
    let json = fisk(&[
        "--state-dir",
        d,
        "fold",
        "interior-corruption",
        "--until-seq",
        "2",
        "-o",
        "json",
    ]);
    assert_eq!(json.code, 0);
    assert_eq!(json.json()["run_id"], "interior-corruption");
    let show = fisk(&[
        "--state-dir",
        d,
        "show",
        "interior-corruption",
        "--until-seq",
        "2",
    ]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(
        show.stdout
            .starts_with("Run interior-corruption as of seq 2\n"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout
            .contains("health:      error[interior-corruption] at line 3"),
        "{}",
        show.stdout
    );
    for args in [
        vec![
            "--state-dir",
            d,
            "fold",
            "interior-corruption",
            "--until-seq",
            "3",
        ],
        vec!["--state-dir", d, "fold", "interior-corruption"],
        vec![
            "--state-dir",
            d,
            "show",
            "interior-corruption",
            "--until-seq",
            "3",
        ],
    ] {
        let r = fisk(&args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.stderr.contains("interior-corruption.json:3:207"),
            "{}",
            r.stderr
        );
    }
    // fold says where it is, and when --until-seq is past the end.
    let healthy = store_copy("runs");
    let r = fisk(&[
        "--state-dir",
        s(healthy.path()),
        "fold",
        "tool-batch",
        "--until-seq",
        "500",
    ]);
    let first = r.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("Run tool-batch as of seq ")
            && first.ends_with("--until-seq 500 is past it)"),
        "{first}"
    );
    let r = fisk(&["--state-dir", s(healthy.path()), "fold", "tool-batch"]);
    assert!(r
        .stdout
        .lines()
        .next()
        .unwrap()
        .ends_with("(its last record)"));
}
