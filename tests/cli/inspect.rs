//! `stats` and `query` (SPEC 13) beyond the agent's documents, which
//! `reference.rs` checks: every filter, the text a person reads, bad flags.

use crate::support::*;

fn v1() -> String {
    testdata("agent-journals/v1").display().to_string()
}

fn v3() -> String {
    testdata("agent-journals/v3").display().to_string()
}

/// The tool_use ids `query` selects with `args`.
fn ids(dir: &str, run: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--state-dir", dir, "query", run, "-o", "json"];
    all.extend_from_slice(args);
    let r = fisk(&all);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.json()["calls"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["tool_use_id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_query_filter_selects_what_it_names() {
    let d = v1();
    let run = "g-all-counters";
    let every = ids(&d, run, &[]);
    assert_eq!(every.len(), 7, "{every:?}");
    assert_eq!(ids(&d, run, &["--tool", "a"]), ["tu_app"]);
    assert_eq!(
        ids(&d, run, &["--tool", "a", "--tool", "old"]),
        ["tu_app", "tu_legacy"]
    );
    assert_eq!(ids(&d, run, &["--iteration", "0"]), every);
    assert!(ids(&d, run, &["--iteration", "7"]).is_empty());
    assert_eq!(ids(&d, run, &["--errors"]), ["tu_den"]);
    assert_eq!(
        ids(
            &d,
            "g-parallel-out-of-order",
            &["--input-match", r#""cmd":"[bc]""#]
        ),
        ["tu_b", "tu_c"]
    );
    assert_eq!(
        ids(&d, "g-tool-batch", &["--output-match", "^ORDERS"]),
        ["toolu_01"]
    );
    // --results-only: only answered calls (a waiting deferral has none).
    assert!(ids(&d, "g-deferral-waiting", &["--results-only"]).is_empty());
    assert_eq!(ids(&d, "g-deferral-waiting", &[]).len(), 1);
    // --calls-only: the calls without their answers.
    let r = fisk(&[
        "--state-dir",
        &d,
        "query",
        "g-tool-batch",
        "--calls-only",
        "-o",
        "json",
    ]);
    let calls = r.json()["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 2);
    assert!(calls
        .iter()
        .all(|c| c.get("answer").is_none() && c.get("answer_time").is_none()));
    // No call matches: `calls` is `[]`, not null.
    let r = fisk(&["--state-dir", &d, "query", "g-meta-only", "-o", "json"]);
    assert_eq!(r.json()["calls"], serde_json::json!([]));
}

#[test]
fn a_bad_regex_or_flag_pair_is_refused_naming_the_flag() {
    let d = v1();
    let r = fisk(&[
        "--state-dir",
        &d,
        "query",
        "g-tool-batch",
        "--input-match",
        "(",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--input-match") && r.stderr.contains("not a valid regular expression"),
        "{}",
        r.stderr
    );
    let r = fisk(&[
        "--state-dir",
        &d,
        "query",
        "g-tool-batch",
        "--calls-only",
        "--results-only",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--calls-only"), "{}", r.stderr);
    let r = fisk(&["--state-dir", &d, "stats", "no-such-run"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("no-such-run")
            && r.stderr.contains(&format!("fisk-admin --state-dir {d} ls")),
        "{}",
        r.stderr
    );
}

#[test]
fn query_text_shows_each_call_with_its_input_decoded_and_its_answer() {
    let r = fisk(&["--state-dir", &v1(), "query", "g-go-escapes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The input as JSON decodes it: no Go escapes (\u003c, \u0026).
    assert!(
        r.stdout.contains(r#""cmd": "echo <x> && echo '&'""#),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("\\u003c"), "{}", r.stdout);
    assert!(
        r.stdout.contains("[iteration 0] sh&ll tu_<1>"),
        "{}",
        r.stdout
    );
    let r = fisk(&["--state-dir", &v1(), "query", "g-all-counters"]);
    assert!(
        r.stdout.contains("answer error (application, not run)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("(remote, dispatched)"), "{}", r.stdout);
    let r = fisk(&["--state-dir", &v1(), "query", "g-deferral-waiting"]);
    assert!(
        r.stdout
            .contains("deferred: waiting on change approval (handle CHG-1234)")
            && r.stdout.contains("answer: none yet (deferred)"),
        "{}",
        r.stdout
    );
}

#[test]
fn stats_text_reads_the_budget_and_tools_and_says_untimed_on_version_3() {
    // For people (a width): durations in the unit that fits.
    let home = tempfile::tempdir().unwrap();
    let people = |store: &str| {
        fisk_env(
            home.path(),
            &["--state-dir", store, "stats", "g-tool-batch"],
            &[("COLUMNS", "160")],
            None,
        )
    };
    let r = people(&v1());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for want in [
        "agent      nats-ops",
        "ended      completed at",
        "responses  2 of 20",
        "tokens     590 of 200000 (0.3% of the budget)",
        "stream_info",
        "338µs",
    ] {
        assert!(r.stdout.contains(want), "{want:?} in\n{}", r.stdout);
    }
    // Into a pipe the tools' times are seconds alone (issue 39, the pipe
    // rule).
    let r = fisk(&["--state-dir", &v1(), "stats", "g-tool-batch"]);
    assert!(r.stdout.contains("\t0.000338"), "{}", r.stdout);
    // The August agent wrote no times: durations read "untimed", never 0.
    let r = people(&v3());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("wall clock untimed"), "{}", r.stdout);
    let tool_rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("stream_"))
        .collect();
    assert_eq!(tool_rows.len(), 2, "{}", r.stdout);
    for row in tool_rows {
        assert!(row.contains("untimed") && !row.contains("0ns"), "{row}");
    }
}

#[test]
fn a_regular_expression_too_large_to_search_with_is_refused_not_run_for_minutes() {
    let store = store_copy("runs");
    let dir = s(store.path());
    for args in [
        vec!["search", "--match", ".{0,5000}qqqqqq", "--in", "all"],
        vec!["query", "tool-batch", "--output-match", ".{0,5000}qqqqqq"],
        vec!["ls", "--match", "(\\w+\\s*){0,400}zz"],
    ] {
        let mut all = vec!["--state-dir", dir];
        all.extend_from_slice(&args);
        let started = std::time::Instant::now();
        let r = fisk(&all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("too large to search with"),
            "{}",
            r.stderr
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
    // A bounded repetition of a sensible size is searched with.
    let r = fisk(&[
        "--state-dir",
        dir,
        "search",
        "--match",
        ".{0,1000}q",
        "--in",
        "all",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_bad_flag_value_is_echoed_neutralised_on_a_colour_terminal() {
    // On a terminal (a pty from script(1)) clap styles its errors; the
    // value typed must still not reach the terminal raw.
    let line = format!(
        "CLICOLOR_FORCE=1 {} ls --status \"$(printf 'x\\033]2;PWNED\\007y')\"",
        s(&bin())
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("invalid value"), "{out:?}");
    assert_eq!(o.status.code(), Some(2), "{out:?}");
    assert!(
        !out.contains("\u{1b}]2;PWNED"),
        "the escape reached the terminal: {out:?}"
    );
    assert!(!out.contains('\u{7}'), "{out:?}");
}

#[test]
fn stats_all_sums_exactly_never_saturating_and_never_by_run_order() {
    // Runs of one record each past the meta: an assistant record whose
    // out_tokens is i64's bound, either sign (a crafted journal).
    let dir = tempfile::tempdir().unwrap();
    let meta = |id: &str| {
        format!(
            r#"{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{{"version":1,"run_id":"{id}","created":"2026-11-30T10:00:00Z","fingerprint":{{"provider":"p","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":0,"max_iterations":0}},"prompt":"x"}}}}"#
        )
    };
    let turn = |n: i64| {
        format!(
            r#"{{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{{"iteration":0,"message":{{"role":"assistant","content":[{{"text":{{"text":"t"}}}}]}},"stop_reason":"end_turn","in_tokens":0,"out_tokens":{n}}}}}"#
        )
    };
    let write = |ids: &[(&str, i64)]| {
        for (id, n) in ids {
            std::fs::write(
                dir.path().join(format!("{id}.json")),
                format!("{}\n{}\n", meta(id), turn(*n)),
            )
            .unwrap();
        }
    };
    let totals = || {
        let r = fisk(&["--state-dir", s(dir.path()), "-o", "json", "stats", "--all"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        // Parsed exactly: serde_json's Value would read 2^64 as a float.
        let text = r.stdout;
        let at = text.rfind("\"totals\"").unwrap();
        let out = &text[at..];
        let n = out.find("\"out_tokens\":").unwrap() + "\"out_tokens\":".len();
        out[n..]
            .trim_start()
            .split(|c: char| c != '-' && !c.is_ascii_digit())
            .next()
            .unwrap()
            .to_owned()
    };
    // Two at the top: the sum is exact, past i64.
    write(&[("a", i64::MAX), ("b", i64::MAX)]);
    assert_eq!(totals(), (2 * i128::from(i64::MAX)).to_string());
    // Plus and minus the bound, in either order of ids: exactly 0 more.
    write(&[("c", i64::MIN + 1), ("d", i64::MAX), ("e", i64::MIN)]);
    let want = 2 * i128::from(i64::MAX)
        + i128::from(i64::MIN + 1)
        + i128::from(i64::MAX)
        + i128::from(i64::MIN);
    assert_eq!(totals(), want.to_string());
}

#[test]
fn what_an_operator_names_is_read_with_a_bound_never_until_memory_runs_out() {
    // /dev/zero never ends: each is refused quickly, naming the bound.
    for args in [
        vec![
            "--store",
            "jetstream:S",
            "--server",
            "nats://127.0.0.1:1",
            "--password-file",
            "/dev/zero",
            "ls",
        ],
        vec!["--config", "/dev/zero", "ls"],
    ] {
        let started = std::time::Instant::now();
        let r = fisk(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("the most read here"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{args:?}"
        );
    }
    // A fingerprint on standard input past its 16 MiB bound.
    let home = tempfile::tempdir().unwrap();
    let r = fisk_in(
        home.path(),
        &["diff", "-", "r1"],
        Some(&vec![b' '; 17 << 20]),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("the most read here"), "{}", r.stderr);
}

/// The expected query document of a reference run, exactly (keys and
/// `null`s kept: the corpus comparison elsewhere reads `null` as absent).
fn expected_query(g: &str, run: &str) -> serde_json::Value {
    let path = testdata(&format!("agent-journals/expected/{g}/{run}.json"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["query"].clone()
}

/// As the agent's query (issue 23.6): a nil tool input is printed
/// `"input": null`, not left out; `--results-only` leaves every call's
/// input out (and keeps the answered calls only). Checked key by key
/// against the agent's own documents for every reference run.
#[test]
fn query_prints_a_null_input_and_results_only_leaves_every_input_out() {
    let mut checked = 0;
    for (g, dir) in [("v1", v1()), ("v3", v3())] {
        let names = std::fs::read_dir(&dir).unwrap();
        for e in names {
            let path = e.unwrap().path();
            let run = path.file_stem().unwrap().to_string_lossy().into_owned();
            let want = expected_query(g, &run);
            let calls = |args: &[&str]| -> Vec<serde_json::Value> {
                let mut all = vec!["--state-dir", &dir, "query", &run, "-o", "json"];
                all.extend_from_slice(args);
                let r = fisk(&all);
                assert_eq!(r.code, 0, "{g}/{run}: {}", r.stderr);
                r.json()["calls"].as_array().cloned().unwrap_or_default()
            };
            let want_calls = want["calls"].as_array().cloned().unwrap_or_default();
            let got = calls(&[]);
            assert_eq!(got.len(), want_calls.len(), "{g}/{run}");
            for (a, b) in got.iter().zip(&want_calls) {
                assert_eq!(a.get("input"), b.get("input"), "{g}/{run}: {a} / {b}");
                checked += usize::from(b.get("input") == Some(&serde_json::Value::Null));
            }
            let answered: Vec<_> = want_calls
                .iter()
                .filter(|c| c.get("answer").is_some())
                .collect();
            let got = calls(&["--results-only"]);
            assert_eq!(got.len(), answered.len(), "{g}/{run}");
            for (a, b) in got.iter().zip(answered) {
                assert!(a.get("input").is_none(), "{g}/{run}: {a}");
                assert_eq!(a["tool_use_id"], b["tool_use_id"]);
                assert_eq!(a.get("answer"), b.get("answer"), "{g}/{run}");
            }
        }
    }
    assert!(checked >= 2, "null inputs checked: {checked}");
}

/// A crafted journal whose call's input is `null`: JSON says so, text
/// says `input: none`, and `--input-match null` selects it (the agent
/// matches the `null` it read back).
#[test]
fn a_crafted_null_input_is_printed_null_and_matched_as_null() {
    let store = store_copy("agent-journals/v1");
    let path = store.path().join("g-tool-batch.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let crafted = text.replace(r#""input":{"all":true}"#, r#""input":null"#);
    assert_ne!(crafted, text);
    std::fs::write(&path, crafted).unwrap();
    let d = store.path().display().to_string();
    let r = fisk(&["--state-dir", &d, "query", "g-tool-batch", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"input\": null"), "{}", r.stdout);
    assert_eq!(r.json()["calls"][0]["input"], serde_json::Value::Null);
    assert!(r.json()["calls"][0].get("input").is_some());
    assert_eq!(
        ids(&d, "g-tool-batch", &["--input-match", "^null$"]),
        ["toolu_01"]
    );
    let r = fisk(&["--state-dir", &d, "query", "g-tool-batch"]);
    assert!(r.stdout.contains("  input: none"), "{}", r.stdout);
    let r = fisk(&["--state-dir", &d, "query", "g-tool-batch", "--results-only"]);
    assert!(!r.stdout.contains("input"), "{}", r.stdout);
}

/// The agent's own words (issue 23.6): `list`, `view` and `delete` are
/// `ls`, `show` and `rm`, and print or do the same.
#[test]
fn list_view_and_delete_are_ls_show_and_rm() {
    let d = v1();
    for (alias, name, rest) in [
        ("list", "ls", &[][..]),
        ("view", "show", &["g-tool-batch"][..]),
    ] {
        let mut a = vec!["--state-dir", &d, alias];
        a.extend_from_slice(rest);
        let mut b = vec!["--state-dir", &d, name];
        b.extend_from_slice(rest);
        let (a, b) = (fisk(&a), fisk(&b));
        assert_eq!(a.code, 0, "{alias}: {}", a.stderr);
        assert_eq!(a.stdout, b.stdout, "{alias}");
    }
    let store = store_copy("agent-journals/v1");
    let dir = store.path().display().to_string();
    let r = fisk(&["--state-dir", &dir, "delete", "g-tool-batch", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!store.path().join("g-tool-batch.json").exists());
    // Compared without white space: help wraps at the terminal's width.
    let help: String = fisk(&["--help"]).stdout.split_whitespace().collect();
    for alias in ["list", "view", "delete"] {
        assert!(help.contains(&format!("[alias:{alias}]")), "{help}");
    }
}

/// `--json` on `query`, `stats` and `search` is `-o json`.
#[test]
fn json_is_format_json_on_query_stats_and_search() {
    let d = v1();
    for cmd in [
        &["query", "g-tool-batch"][..],
        &["stats", "g-tool-batch"][..],
        &["stats", "--all"][..],
        &["search"][..],
    ] {
        let mut a = vec!["--state-dir", d.as_str()];
        a.extend_from_slice(cmd);
        let mut b = a.clone();
        a.push("--json");
        b.extend_from_slice(&["-o", "json"]);
        let (a, b) = (fisk(&a), fisk(&b));
        assert_eq!(a.code, 0, "{cmd:?}: {}", a.stderr);
        assert!(
            a.stdout.trim_start().starts_with('{'),
            "{cmd:?}: {}",
            a.stdout
        );
        assert_eq!(a.json(), b.json(), "{cmd:?}");
    }
}

/// `search --identity` (the agent's flag) is `--agent`, runs that carry
/// no agent excluded and counted the same.
#[test]
fn search_identity_is_agent() {
    let d = v1();
    let a = fisk(&[
        "--state-dir",
        &d,
        "search",
        "--identity",
        "nats-ops",
        "-o",
        "json",
    ]);
    let b = fisk(&[
        "--state-dir",
        &d,
        "search",
        "--agent",
        "nats-ops",
        "-o",
        "json",
    ]);
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert_eq!(a.json(), b.json());
    assert!(
        a.json()["no_agent_excluded"].as_u64() > Some(0),
        "{}",
        a.stdout
    );
    let all = fisk(&["--state-dir", &d, "search", "-o", "json"]).json();
    assert!(
        a.json()["runs"].as_array().map(Vec::len) < all["runs"].as_array().map(Vec::len),
        "--identity selected nothing out"
    );
}

/// `--prefix P` (the agent's listing filter, `w-` for its web channel):
/// only runs whose id starts with P, in `ls`, `search` and `stats --all`.
#[test]
fn prefix_selects_the_runs_whose_id_starts_with_it() {
    let store = store_copy("agent-journals/v1");
    let dir = store.path().display().to_string();
    // A web channel's run: the same journal under a `w-` id.
    std::fs::copy(
        store.path().join("g-tool-batch.json"),
        store.path().join("w-tool-batch.json"),
    )
    .unwrap();
    let ids = |args: &[&str], key: &str| -> Vec<String> {
        let mut all = vec!["--state-dir", dir.as_str()];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let r = fisk(&all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let v = r.json();
        let list = if key.is_empty() { v } else { v[key].clone() };
        let mut out: Vec<String> = list
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["run_id"].as_str().map(str::to_owned))
            .collect();
        out.sort();
        out
    };
    assert_eq!(ids(&["ls", "--prefix", "w-"], ""), ["w-tool-batch"]);
    assert_eq!(ids(&["search", "--prefix", "w-"], "runs"), ["w-tool-batch"]);
    let g = ids(&["ls", "--prefix", "g-dec"], "");
    assert_eq!(g, ["g-decision-after-terminal", "g-decisions"]);
    assert!(ids(&["ls", "--prefix", "nothing-"], "").is_empty());
    let r = fisk(&[
        "--state-dir",
        &dir,
        "stats",
        "--all",
        "--prefix",
        "w-",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let one = fisk(&["--state-dir", &dir, "stats", "w-tool-batch", "-o", "json"]).json();
    assert_eq!(r.json()["totals"]["runs"], 1, "{}", r.stdout);
    assert!(one["tools"].is_array());
}
