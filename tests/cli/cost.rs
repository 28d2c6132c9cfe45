//! What users of similar tools ask for (issue 39): what runs cost in
//! money, from prices the operator keeps in a file, in `stats` and `stats
//! --all --by`; never a partial total shown as complete: the unpriced
//! models are named and stats exits 1 (agentsview's rule).

use crate::schema::{assert_valid, output_validator};
use crate::support::*;

fn prices(dir: &std::path::Path, body: &str) -> std::path::PathBuf {
    let p = dir.join("prices.yaml");
    std::fs::write(&p, body).unwrap();
    p
}

const SONNET: &str =
    "currency: USD\nmodels:\n  claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_create: 3.75}\n";

#[test]
fn stats_prices_each_group_and_never_shows_a_partial_total() {
    let home = tempfile::tempdir().unwrap();
    let p = prices(home.path(), SONNET);
    let td = testdata("runs-v1");
    let d = s(&td);
    let run = |args: &[&str]| {
        let mut all = vec!["--state-dir", d, "stats"];
        all.extend_from_slice(args);
        all.extend(["--prices", s(&p)]);
        fisk_in(home.path(), &all, None)
    };
    // Only runs of a priced model: a whole total, exit 0.
    let r = run(&["--all", "--model", "claude-sonnet-4-5", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = r.json();
    assert_valid(
        &output_validator("stats-all.json"),
        &doc,
        "stats --all --prices",
    );
    let cost = &doc["cost"];
    assert_eq!(cost["complete"], true, "{cost}");
    // The figure is the tokens at the prices: computed here again.
    let t = &doc["totals"]["tokens"];
    let n = |k: &str| t[k].as_f64().unwrap();
    let want = (n("in_tokens") * 3.0
        + n("out_tokens") * 15.0
        + n("cache_read_tokens") * 0.3
        + n("cache_create_tokens") * 3.75)
        / 1e6;
    assert!(
        (cost["amount"].as_f64().unwrap() - want).abs() < 1e-9,
        "{cost} {want}"
    );
    // Every model: the groups of priced models have their cost, the
    // others `-`; the total is not whole, said, and exit 1.
    let r = run(&["--all", "--by", "model"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let header: Vec<&str> = r.stdout.lines().next().unwrap().split('\t').collect();
    let at = header.iter().position(|h| *h == "COST").unwrap();
    for l in r.stdout.lines().skip(1).take_while(|l| l.contains('\t')) {
        let cells: Vec<&str> = l.split('\t').collect();
        match cells[0] {
            "claude-sonnet-4-5" => assert!(cells[at].ends_with(" USD"), "{l}"),
            _ => assert_eq!(cells[at], "-", "{l}"),
        }
    }
    assert!(
        r.stderr.contains("the cost is not whole")
            && r.stderr.contains("\"gpt-5-mini\"")
            && r.stderr.contains("which is not the total"),
        "{}",
        r.stderr
    );
    let j = run(&["--all", "--by", "model", "-o", "json"]);
    assert_eq!(j.code, 1);
    assert_valid(
        &output_validator("stats-all.json"),
        &j.json(),
        "stats --all --by model --prices",
    );
    assert_eq!(j.json()["cost"]["complete"], false);
    // One run: its cost, or why it has none (exit 1).
    let r = run(&["perf-large"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("cost       ") && l.ends_with(" USD")),
        "{}",
        r.stdout
    );
    let j = run(&["perf-large", "-o", "json"]);
    assert_valid(
        &output_validator("stats.json"),
        &j.json(),
        "stats RUN --prices",
    );
    let r = run(&["chat-followups"]);
    let gpt = fisk(&["--state-dir", d, "stats", "chat-followups", "-o", "json"]).json();
    if gpt["model"] != "claude-sonnet-4-5" {
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert!(
            r.stdout.contains("cost       unknown: no price for model"),
            "{}",
            r.stdout
        );
    }
    // Without --prices the documents are as they were.
    let plain = fisk(&["--state-dir", d, "stats", "--all", "-o", "json"]).json();
    assert!(plain.get("cost").is_none());
}

#[test]
fn a_price_file_that_is_not_one_is_refused_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let td = testdata("runs-v1");
    let d = s(&td);
    for bad in [
        "models: {a: {input: -1, output: 1}}",
        "models: {a: {input: 1}}",
        "nonsense: 1",
    ] {
        let p = prices(home.path(), bad);
        let r = fisk_in(
            home.path(),
            &["--state-dir", d, "stats", "--all", "--prices", s(&p)],
            None,
        );
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        // The file named, and what a price file holds (not clap's
        // "unexpected argument", as at b926494).
        assert!(
            r.stderr.contains(&format!("--prices {}", s(&p))),
            "{bad}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("per million tokens"),
            "{bad}: {}",
            r.stderr
        );
    }
}
