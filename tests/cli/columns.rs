//! Costs and reasons at a glance (issue 26, section 2): `ls` shows the
//! agent, why a run ended and its total tokens, sorts by tokens and
//! records; `stats --all` groups by run, status and caller, sorts and
//! keeps the top N, sums exactly and separates thousands; at 80 columns
//! ids, model names and figures are whole; into a pipe, tab-separated.

use crate::schema::{assert_valid, output_validator};
use crate::support::*;
use serde_json::Value;
use std::process::{Command, Stdio};

fn v1() -> tempfile::TempDir {
    store_copy("runs-v1")
}

/// `fisk-admin args` with `COLUMNS` set (a terminal's width, in a pipe).
fn at_columns(cols: &str, args: &[&str]) -> Run {
    let home = tempfile::tempdir().unwrap();
    Command::new(bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("NO_COLOR", "1")
        .env("COLUMNS", cols)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
        .into()
}

fn by_id(doc: &Value) -> std::collections::BTreeMap<String, Value> {
    doc.as_array()
        .unwrap()
        .iter()
        .map(|r| (r["run_id"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

/// What `stats` folds a run's tokens to, as a budget counts them (in,
/// out and both cache tiers).
fn folded_total(store: &str, id: &str) -> i64 {
    let st = fisk(&["--state-dir", store, "stats", id, "-o", "json"]).json();
    let t = &st["tokens"];
    [
        "in_tokens",
        "out_tokens",
        "cache_read_tokens",
        "cache_create_tokens",
    ]
    .iter()
    .map(|k| t[k].as_i64().unwrap())
    .sum()
}

/// The terminal's message for a run that ended with one; the total
/// tokens of a version-1 terminal's counters, the same total `stats`
/// folds; unknown (null) on version 3 and where the counters were edited
/// below what the responses cost.
#[test]
fn ls_says_why_a_run_ended_and_what_it_cost() {
    let store = v1();
    let d = s(store.path());
    let ls = fisk(&["--state-dir", d, "ls", "-o", "json"]);
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    assert_valid(&output_validator("ls.json"), &ls.json(), "ls");
    let runs = by_id(&ls.json());
    let error = &runs["error-terminal"];
    assert_eq!(error["status"], "error");
    assert_eq!(
        error["message"],
        "anthropic: 529 overloaded_error after 5 retries"
    );
    assert_eq!(runs["simple-completed"]["message"], Value::Null);
    assert_eq!(runs["open-no-terminal"]["total_tokens"], Value::Null);
    assert_eq!(runs["summary-stale"]["total_tokens"], Value::Null);
    for (id, r) in &runs {
        let Some(n) = r["total_tokens"].as_i64() else {
            continue;
        };
        assert_eq!(n, folded_total(d, id), "{id}: ls's total is stats' total");
    }
    // Version 3 carries no counters: a figure is unknown (never 0) unless
    // the tail ls reads holds every response, and then it is the fold's.
    let v3 = store_copy("runs");
    let d3 = s(v3.path());
    let ls = fisk(&["--state-dir", d3, "ls", "-o", "json"]);
    assert_valid(&output_validator("ls.json"), &ls.json(), "ls v3");
    let mut unknown = Vec::new();
    for r in ls.json().as_array().unwrap() {
        let id = r["run_id"].as_str().unwrap();
        match r["total_tokens"].as_i64() {
            None => unknown.push(id.to_owned()),
            Some(n) => assert_eq!(n, folded_total(d3, id), "{id}"),
        }
    }
    assert!(!unknown.is_empty());
    let text = fisk(&["--state-dir", d3, "ls"]);
    let header: Vec<&str> = text.stdout.lines().next().unwrap().split('\t').collect();
    let tokens = header.iter().position(|h| *h == "TOKENS").unwrap();
    for l in text.stdout.lines().skip(1) {
        if unknown.iter().any(|u| l.starts_with(&format!("{u}\t"))) {
            assert_eq!(l.split('\t').nth(tokens), Some("-"), "{l}");
        }
    }
}

/// `--sort tokens`: largest first, the unknown last and counted;
/// `--reverse` turns the known round and leaves the unknown last.
/// `--sort records` likewise. Thousands are separated in text.
#[test]
fn ls_sorts_by_tokens_and_records_with_the_unknown_last() {
    let store = v1();
    let d = s(store.path());
    let ls = |extra: &[&str]| {
        let mut a = vec!["--state-dir", d, "ls"];
        a.extend_from_slice(extra);
        fisk(&a)
    };
    let json = ls(&["--sort", "tokens", "-o", "json"]);
    assert!(
        json.stderr.contains("tokens are unknown"),
        "{}",
        json.stderr
    );
    let figures: Vec<Option<i64>> = json
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total_tokens"].as_i64())
        .collect();
    let known: Vec<i64> = figures.iter().flatten().copied().collect();
    let unknown = figures.len() - known.len();
    assert!(unknown > 0 && known.len() > 5);
    assert!(known.windows(2).all(|w| w[0] >= w[1]), "{known:?}");
    assert!(figures[known.len()..].iter().all(Option::is_none));
    let rev = ls(&["--sort", "tokens", "--reverse", "-o", "json"]).json();
    let rev: Vec<Option<i64>> = rev
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total_tokens"].as_i64())
        .collect();
    let mut want = known.clone();
    want.reverse();
    assert_eq!(rev.iter().flatten().copied().collect::<Vec<_>>(), want);
    assert!(rev[known.len()..].iter().all(Option::is_none));
    // Into a pipe the table is for a program: plain integers, and the
    // note under it on standard error (issue 39, d-16, d-24).
    let text = ls(&["--sort", "tokens"]);
    assert!(
        text.stderr
            .contains(&format!("({unknown} runs' tokens are unknown")),
        "{}",
        text.stderr
    );
    assert!(
        !text.stdout.contains("tokens are unknown"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("\t213830\t"), "{}", text.stdout);
    // For people, thousands are separated and the note is under the table.
    let wide = at_columns("400", &["--state-dir", d, "ls", "--sort", "tokens"]);
    assert!(wide.stdout.contains(" 213,830 "), "{}", wide.stdout);
    assert!(
        wide.stdout
            .contains(&format!("({unknown} runs' tokens are unknown")),
        "{}",
        wide.stdout
    );
    let recs = ls(&["--sort", "records", "-o", "json"]).json();
    let recs: Vec<i64> = recs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["records"].as_i64().unwrap())
        .collect();
    assert!(recs.windows(2).all(|w| w[0] >= w[1]), "{recs:?}");
}

/// `--columns` picks the columns and their order; `all` adds CALLER.
#[test]
fn ls_columns_are_chosen_in_order() {
    let store = v1();
    let d = s(store.path());
    let r = fisk(&["--state-dir", d, "ls", "--columns", "tokens,run,message"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().next(), Some("TOKENS\tRUN\tMESSAGE"));
    let row = r
        .stdout
        .lines()
        .find(|l| l.contains("\terror-terminal\t"))
        .unwrap();
    assert_eq!(
        row,
        "650\terror-terminal\tanthropic: 529 overloaded_error after 5 retries"
    );
    let all = fisk(&["--state-dir", d, "ls", "--columns", "all"]);
    let header = all.stdout.lines().next().unwrap().to_owned();
    assert!(header.contains("\tCALLER\t"), "{header}");
    let default = fisk(&["--state-dir", d, "ls"]);
    let header = default.stdout.lines().next().unwrap();
    assert_eq!(
        header,
        "RUN\tSTATUS\tSTATE\tWAITING\tLIVE\tVER\tAGENT\tMODEL\tRECORDS\tTOKENS\tSIZE\tCREATED\tUPDATED\tMESSAGE\tPROMPT"
    );
}

/// At 80 columns ids, model names and figures are whole (columns are
/// left out and named instead): `stats --all --by model` and `ls`.
#[test]
fn at_80_columns_ids_models_and_figures_are_never_cut() {
    let store = v1();
    let d = s(store.path());
    let models = [
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "gpt-5-mini",
        "demo-1",
    ];
    let r = at_columns("80", &["--state-dir", d, "stats", "--all", "--by", "model"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let table: Vec<&str> = r.stdout.split("\n\n").next().unwrap().lines().collect();
    for l in &table {
        assert!(l.chars().count() <= 80, "{l:?}");
        assert!(!l.contains('…'), "a cut value: {l:?}");
    }
    for m in models {
        assert!(
            table.iter().any(|l| l.starts_with(&format!(" {m} "))),
            "{m}"
        );
    }
    assert!(r.stdout.contains("(too narrow for "), "{}", r.stdout);
    // ls, with every column asked for: ids and figures whole.
    let ids: Vec<String> = by_id(&fisk(&["--state-dir", d, "ls", "-o", "json"]).json())
        .into_keys()
        .collect();
    let r = at_columns("80", &["--state-dir", d, "ls", "--columns", "all"]);
    for l in r.stdout.lines().skip(2) {
        assert!(l.chars().count() <= 80, "{l:?}");
        if l.starts_with('(') {
            continue;
        }
        let first = l.split_whitespace().next().unwrap();
        assert!(ids.iter().any(|i| i == first), "a cut id: {l:?}");
    }
}

/// `stats --all --by run|status|caller`, `--sort` and `--top`: the most
/// expensive runs first, the total still over every run; the JSON
/// document valid and saying how many groups were left out.
#[test]
fn stats_groups_by_run_status_and_caller_sorted_and_cut_to_the_top() {
    let store = v1();
    let d = s(store.path());
    let all = output_validator("stats-all.json");
    let json = |args: &[&str]| {
        let mut a = vec!["--state-dir", d, "-o", "json", "stats", "--all"];
        a.extend_from_slice(args);
        let r = fisk(&a);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_valid(&all, &r.json(), &format!("{args:?}"));
        r.json()
    };
    let every = json(&["--by", "run"]);
    let n = every["groups"].as_array().unwrap().len();
    assert_eq!(Some(n as u64), every["totals"]["runs"].as_u64());
    let top = json(&["--by", "run", "--sort", "tokens", "--top", "3"]);
    let groups = top["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!(top["groups_left_out"], n as u64 - 3);
    assert_eq!(top["totals"], every["totals"], "the total counts every run");
    let tokens: Vec<f64> = groups
        .iter()
        .map(|g| g["total_tokens"].as_f64().unwrap())
        .collect();
    assert!(tokens.windows(2).all(|w| w[0] >= w[1]), "{tokens:?}");
    assert_eq!(groups[0]["run"], "all-counters");
    // --top alone sorts by tokens.
    assert_eq!(
        json(&["--by", "run", "--top", "3"])["groups"],
        top["groups"]
    );
    assert!(json(&["--by", "run"]).get("groups_left_out").is_none());
    let status = json(&["--by", "status", "--sort", "runs"]);
    let g = status["groups"].as_array().unwrap();
    assert_eq!(g[0]["status"], "completed");
    let runs: Vec<u64> = g.iter().map(|g| g["runs"].as_u64().unwrap()).collect();
    assert!(runs.windows(2).all(|w| w[0] >= w[1]), "{runs:?}");
    let caller = json(&["--by", "caller"]);
    assert!(caller["groups"][0].get("caller").is_some(), "{caller}");
    // Text: the keys and figures tab-separated into a pipe, thousands
    // separated, the cut said.
    let r = fisk(&[
        "--state-dir",
        d,
        "stats",
        "--all",
        "--by",
        "run",
        "--sort",
        "tokens",
        "--top",
        "2",
    ]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("RUN\tRUNS\tRESPONSES\tTOKENS\t"),
        "{}",
        r.stdout
    );
    assert!(
        lines[2].starts_with("perf-large\t1\t61\t213830\t"),
        "{}",
        r.stdout
    );
    assert!(lines[3].starts_with("total\t"), "{}", r.stdout);
    // Issue 39, c-27: the text has every counter JSON has (THINKING was
    // left out), and its RESPONSES are JSON's iterations.
    let header: Vec<&str> = lines[0].split('\t').collect();
    let total: Vec<&str> = lines[3].split('\t').collect();
    let col = |name: &str| {
        let i = header.iter().position(|h| *h == name);
        let i = i.unwrap_or_else(|| panic!("no {name} column: {}", r.stdout));
        total[i].to_owned()
    };
    let sums = json(&[]);
    let g = &sums["groups"][0];
    assert_eq!(col("THINKING"), g["tokens"]["thinking_tokens"].to_string());
    assert_ne!(col("THINKING"), "0", "{}", r.stdout);
    assert_eq!(col("RESPONSES"), g["iterations"].to_string());
    assert!(
        r.stderr.contains(&format!(
            "(the first 2 of {n} groups; the total counts every run)"
        )),
        "{}",
        r.stderr
    );
}

/// The sums of issue 24 are exact: a wall clock past i64's nanoseconds
/// is not `2562047h47m` (i64::MAX ns) nor 9223372036854775807 in JSON,
/// and tokens past i64 are summed, with separators in text.
#[test]
fn stats_all_never_saturates_the_wall_clock_or_the_tokens() {
    let dir = tempfile::tempdir().unwrap();
    for id in ["a", "b"] {
        let lines = [
            format!(
                r#"{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","time":"0001-01-01T00:00:01Z","meta":{{"version":1,"run_id":"{id}","created":"0001-01-01T00:00:01Z","fingerprint":{{"provider":"p","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":0,"max_iterations":0}},"prompt":"x","agent":"a"}}}}"#
            ),
            r#"{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","time":"9999-12-31T23:59:59Z","assistant":{"iteration":0,"message":{"role":"assistant","content":[{"text":{"text":"t"}}]},"stop_reason":"end_turn","in_tokens":9223372036854775807,"out_tokens":9223372036854775807}}"#.to_owned(),
            r#"{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.terminal","time":"9999-12-31T23:59:59Z","terminal":{"reason":"error","message":"provider: 529 overloaded","summary":{"turns":1,"context_tokens":1,"counters":{"llm_calls":1,"in_tokens":9223372036854775807,"out_tokens":9223372036854775807}}}}"#.to_owned(),
        ];
        let p = dir.path().join(format!("{id}.json"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    }
    let d = s(dir.path());
    let r = fisk(&["--state-dir", d, "-o", "json", "stats", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_valid(
        &output_validator("stats-all.json"),
        &r.json(),
        "stats --all",
    );
    // Read as text: serde_json's Value would read past u64 as a float.
    let at = r.stdout.rfind("\"totals\"").unwrap();
    let totals = &r.stdout[at..];
    let each = 9999 * 365 * 86_400_i128; // at least this many seconds a run
    let wall: i128 = field(totals, "wall_clock_ns").parse().unwrap();
    assert!(wall > 2 * each * 1_000_000_000, "{wall}");
    assert!(!r.stdout.contains("9223372036854775807"), "{}", r.stdout);
    let tokens = 4 * i128::from(i64::MAX);
    assert_eq!(field(totals, "total_tokens"), tokens.to_string());
    let text = fisk(&["--state-dir", d, "stats", "--all"]);
    assert!(!text.stdout.contains("2562047h47m"), "{}", text.stdout);
    assert!(
        text.stdout.contains("\t36893488147419103228\t"),
        "{}",
        text.stdout
    );
    // ls: the message and each run's exact total.
    let ls = fisk(&["--state-dir", d, "ls", "--columns", "run,tokens,message"]);
    assert!(
        ls.stdout
            .contains("a\t18446744073709551614\tprovider: 529 overloaded\n"),
        "{}",
        ls.stdout
    );
}

fn field<'a>(json: &'a str, name: &str) -> &'a str {
    let key = format!("\"{name}\":");
    let n = json.find(&key).unwrap() + key.len();
    json[n..]
        .trim_start()
        .split(|c: char| c != '-' && !c.is_ascii_digit())
        .next()
        .unwrap()
}

/// On JetStream the same figures as on files, and `--sort size` says the
/// stream keeps no per-run size instead of silently sorting by id.
#[test]
fn on_jetstream_ls_has_the_same_figures_and_says_size_is_unknown() {
    let srv = crate::nats_support::NatsServer::start();
    srv.spec_stream("COLS", "cols.>");
    let home = tempfile::tempdir().unwrap();
    let src = v1();
    let from = format!("file:{}", s(src.path()));
    migrate_via(home.path(), &srv.url, &from, "jetstream:COLS", &[]);
    let js = |args: &[&str]| {
        let mut all = vec!["--server", srv.url.as_str(), "--store", "jetstream:COLS"];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    let pick = |doc: &Value| -> Vec<(String, Value, Value)> {
        by_id(doc)
            .into_iter()
            .map(|(k, v)| (k, v["message"].clone(), v["total_tokens"].clone()))
            .collect()
    };
    let on_js = js(&["ls", "-o", "json"]);
    assert_eq!(on_js.code, 0, "{}", on_js.stderr);
    let on_file = fisk(&["--state-dir", s(src.path()), "ls", "-o", "json"]);
    assert_eq!(pick(&on_js.json()), pick(&on_file.json()));
    let sized = js(&["ls", "--sort", "size"]);
    assert!(
        sized
            .stderr
            .contains("(the store keeps no per-run size (JetStream): sorted by run id)"),
        "{}",
        sized.stderr
    );
    let sized = js(&["ls", "--sort", "size", "-o", "json"]);
    assert!(sized.stderr.contains("no per-run size"), "{}", sized.stderr);
    let top = [
        "-o",
        "json",
        "stats",
        "--all",
        "--by",
        "run,status",
        "--top",
        "4",
    ];
    let by = js(&top);
    let mut on_file = vec!["--state-dir", s(src.path())];
    on_file.extend_from_slice(&top);
    let file = fisk(&on_file);
    assert_eq!(by.json(), file.json());
}

/// In a real 80-column terminal (tmux): `stats --all --by model` shows
/// every model whole and no row wraps.
#[test]
fn in_an_80_column_terminal_model_names_are_whole() {
    let store = v1();
    let t = crate::viewer::Tmux::start(80, 40);
    t.type_line(&format!(
        "{} --state-dir {} stats --all --by model; echo DONE-$((0+1))",
        s(&bin()),
        s(store.path())
    ));
    let screen = t.wait_for("stats to finish", |sc| sc.contains("\nDONE-1"));
    let table: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains(" MODEL "))
        .take_while(|l| !l.is_empty() && !l.starts_with('('))
        .collect();
    // Header, rule, 4 models, the total.
    assert_eq!(table.len(), 7, "{screen}");
    for m in [
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "gpt-5-mini",
        "demo-1",
    ] {
        assert!(
            table.iter().any(|l| l.starts_with(&format!(" {m} "))),
            "{screen}"
        );
    }
    assert!(!screen.contains("claud…"), "{screen}");
}

/// verify's closing table at 80 columns: the run ids whole, and FIX, the
/// column the table exists for, never left out: where it does not fit
/// beside the others its commands go under the table, one a line, in the
/// rows' order (issue 39, d-2: at b926494 the table said "(too narrow for
/// FIX)" and nothing said what to run).
#[test]
fn verify_at_80_columns_keeps_run_ids_whole_and_every_fix() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let r = at_columns("80", &["--state-dir", d, "verify", "-q"]);
    let table = r.stdout.split("\n\n").nth(1).expect("a closing table");
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .filter(|l| l.starts_with(' ') && !l.starts_with("  "))
        .collect();
    assert!(rows.len() > 5, "{table}");
    for l in table
        .lines()
        .filter(|l| l.starts_with([' ', '─', '(']) && !l.starts_with("  "))
    {
        assert!(l.chars().count() <= 80, "{l:?}");
    }
    for l in &rows {
        let id = l.split_whitespace().next().unwrap();
        assert!(!id.ends_with('…'), "a cut id: {l:?}");
    }
    assert!(!table.contains("too narrow for FIX"), "{table}");
    // The fixes a wide terminal shows beside the rows, in the same order.
    let wide = at_columns("1000", &["--state-dir", d, "verify", "-q"]);
    let wide_table = wide.stdout.split("\n\n").nth(1).unwrap();
    let fixes: Vec<String> = wide_table
        .lines()
        .skip(2)
        .filter_map(|l| {
            l.split("   ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .nth(3)
        })
        .filter(|f| *f != "-")
        .map(str::to_owned)
        .collect();
    assert!(fixes.len() > 5, "{wide_table}");
    let (_, under) = table
        .split_once("FIX (too wide to stand beside the rows), in the rows' order:\n")
        .expect("the fixes under the table");
    let under: Vec<String> = under
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_owned())
        .collect();
    assert_eq!(under, fixes, "{table}");
    // Each is a command alone on its line, whole, to paste.
    assert!(under
        .iter()
        .any(|f| f.ends_with(&format!("--state-dir {d} repair torn-tail"))));
}

/// Counters as the agent counts them (issue 39): the corpus's
/// `g-huge-integers` has one response and a terminal without counters;
/// its total is that response's (4.6e18, the most of the corpus), so
/// `ls --sort tokens` lists it first, the same total `stats` folds (at
/// b926494 it was "unknown" and listed last).
#[test]
fn a_run_whose_every_response_is_read_has_its_tokens_counted_and_sorted_first() {
    let store = store_copy("agent-journals/v1");
    let d = s(store.path());
    let ls = fisk(&["--state-dir", d, "ls", "--sort", "tokens", "-o", "json"]);
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    let first = &ls.json()[0];
    assert_eq!(first["run_id"], "g-huge-integers", "{first}");
    let st = fisk(&["--state-dir", d, "stats", "g-huge-integers", "-o", "json"]).json();
    let t = &st["tokens"];
    let folded: i128 = [
        "in_tokens",
        "out_tokens",
        "cache_read_tokens",
        "cache_create_tokens",
    ]
    .iter()
    .map(|k| i128::from(t[k].as_i64().unwrap()))
    .sum();
    assert_eq!(first["total_tokens"].as_i64().map(i128::from), Some(folded));
    let text = fisk(&[
        "--state-dir",
        d,
        "ls",
        "--sort",
        "tokens",
        "--columns",
        "run,tokens",
    ]);
    let second = text.stdout.lines().nth(1).unwrap();
    assert_eq!(second, format!("g-huge-integers\t{folded}"));
}

/// Issue 39, d-8: listing failures, why each ended is what is read: at
/// 80 and 140 columns MESSAGE stands whole and PROMPT goes first (at
/// b926494 `anthropic: 529 …` was cut at 140 and MESSAGE left out at 80);
/// a listing that cuts a cell says how to see it whole.
#[test]
fn a_failure_listing_keeps_why_each_run_ended_whole() {
    let store = v1();
    let d = s(store.path());
    let want = "anthropic: 529 overloaded_error after 5 retries";
    for cols in ["80", "140"] {
        let r = at_columns(cols, &["--state-dir", d, "ls", "--status", "error"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let row = r
            .stdout
            .lines()
            .find(|l| l.starts_with(" error-terminal "))
            .unwrap();
        assert!(row.trim_end().ends_with(want), "{cols}: {}", r.stdout);
        assert!(
            r.stdout
                .lines()
                .all(|l| l.chars().count() <= cols.parse().unwrap() || l.starts_with('(')),
            "{cols}: {}",
            r.stdout
        );
    }
    // Any other listing cuts the prompt first, and says so.
    let r = at_columns("100", &["--state-dir", d, "ls"]);
    assert!(r.stdout.contains("…"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("(cut to fit: --columns run,status,message shows it whole)"),
        "{}",
        r.stdout
    );
}
