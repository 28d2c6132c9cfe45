//! What users of similar tools ask of `search` (issue 39): a role filter
//! (whose words: the operator's prompt, the model's, tool input, tool
//! output), hits ranked by count, exit 1 when nothing matches (grep), and
//! the command that opens each hit; and the same `--limit` on every
//! listing, `--prefix` as a list (d-26), `--limit 0` refused (d-15).

use crate::schema::{assert_valid, output_validator};
use crate::support::*;
use serde_json::json;

/// A store of three runs, each saying ORDERS in other words and numbers.
fn three() -> Fixture {
    let f = Fixture::new(&[]);
    // "prompt-run": the operator says it twice; the model never.
    f.write_turns(&[turn("done", &[])]);
    f.run("prompt-run", "ORDERS and ORDERS again");
    // "model-run": the model says it three times.
    f.write_turns(&[turn("ORDERS ORDERS ORDERS", &[])]);
    f.run("model-run", "look");
    // "tool-run": the model asks a tool about it; the tool prints it.
    f.write_turns(&[
        turn("", &[("t1", "exec", json!({"command": "echo ORDERS-ok"}))]),
        turn("done", &[]),
    ]);
    f.run("tool-run", "check");
    f
}

fn runs(r: &Run) -> Vec<(String, u64)> {
    r.json()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["run_id"].as_str().unwrap().to_owned(),
                x["matches"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn search_by_role_ranks_runs_by_their_matches_and_opens_each_hit() {
    let f = three();
    let search = |args: &[&str]| {
        let mut all = vec!["search", "--match", "ORDERS"];
        all.extend_from_slice(args);
        all.extend(["-o", "json"]);
        f.store(&all)
    };
    let by = |role: &str| runs(&search(&["--role", role]));
    assert_eq!(by("prompt"), [("prompt-run".to_owned(), 2)]);
    assert_eq!(by("model"), [("model-run".to_owned(), 3)]);
    assert_eq!(by("tool-input"), [("tool-run".to_owned(), 1)]);
    assert_eq!(by("tool-output"), [("tool-run".to_owned(), 1)]);
    // Several roles, ranked by count, most first.
    let all = search(&["--role", "prompt,model,tool-input,tool-output"]);
    assert_valid(
        &output_validator("search.json"),
        &all.json(),
        "search --role",
    );
    let ranked = runs(&all);
    // Ties newest first, as the agent lists: tool-run ran last.
    assert_eq!(
        ranked,
        [
            ("model-run".to_owned(), 3),
            ("tool-run".to_owned(), 2),
            ("prompt-run".to_owned(), 2)
        ]
    );
    // --limit keeps the first of that order.
    let top = runs(&search(&["--in", "all", "--limit", "1"]));
    assert_eq!(top, [("model-run".to_owned(), 3)]);
    // Each hit's command opens its transcript on the match: pasted, the
    // line output holds the matching blocks only.
    let doc = all.json();
    let open = &doc["runs"][0]["open"]["argv"];
    let argv: Vec<&str> = open
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        argv[argv.len() - 5..],
        ["show", "model-run", "--transcript", "--find", "ORDERS"]
    );
    let text = f.store(&["search", "--match", "ORDERS", "--role", "model"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let line = text.stdout.lines().nth(1).unwrap();
    let cmd = line.rsplit('\t').next().unwrap();
    assert!(
        cmd.ends_with("show model-run --transcript --find ORDERS"),
        "{line}"
    );
    let shown = f.paste(&format!("{cmd} --no-pager"));
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown.stdout.contains("ORDERS ORDERS ORDERS"),
        "{}",
        shown.stdout
    );
    assert!(
        !shown.stdout.contains("[prompt]"),
        "only the matching blocks: {}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("Where the run stands"),
        "{}",
        shown.stdout
    );
}

/// grep's convention: 1 when nothing matches, 0 when something does.
#[test]
fn search_exits_1_when_nothing_matches() {
    let f = three();
    let r = f.store(&["search", "--match", "NOWHERE", "--in", "all"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("no run matched"), "{}", r.stdout);
    let r = f.store(&["search", "--match", "ORDERS", "--in", "all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // --role needs a pattern.
    let r = f.store(&["search", "--role", "model"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// d-26: `--limit` on every listing, `--prefix` a list; d-15: `--limit 0`
/// is refused, not "no runs".
#[test]
fn every_listing_takes_limit_and_a_list_of_prefixes() {
    let f = three();
    for cmd in [
        &["ls"][..],
        &["search"],
        &["search", "--match", "ORDERS", "--in", "all"],
        &["inbox"],
        &["stats", "--all"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--limit", "2"]);
        let r = f.store(&args);
        assert!(r.code == 0 || cmd == ["inbox"], "{args:?}: {}", r.stderr);
        let mut args = cmd.to_vec();
        args.extend(["--limit", "0"]);
        let r = f.store(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert!(
            r.stderr.contains("0 would list nothing"),
            "{args:?}: {}",
            r.stderr
        );
    }
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        f.store(&all)
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&["ls", "--limit", "2"]).len(), 2);
    let mut two = ids(&["ls", "--prefix", "model-,tool-"]);
    two.sort();
    assert_eq!(two, ["model-run", "tool-run"]);
    let r = f.store(&[
        "search", "--prefix", "prompt-", "--prefix", "tool-", "-o", "json",
    ]);
    assert_eq!(r.json()["runs"].as_array().unwrap().len(), 2);
    let r = f.store(&["stats", "--all", "--limit", "1", "-o", "json"]);
    assert_eq!(r.json()["totals"]["runs"], 1);
}
