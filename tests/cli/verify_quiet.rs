//! `verify --quiet` and `--severity` (issue 26): only what is asked for is
//! printed, the version-3 warnings summed up in one line with one
//! `upgrade`, the counts and the exit status unchanged.

use crate::schema::{assert_valid, output_validator};
use crate::support::*;

fn verify(store: &std::path::Path, args: &[&str]) -> Run {
    let mut all = vec!["--state-dir", s(store), "verify"];
    all.extend_from_slice(args);
    fisk(&all)
}

#[test]
fn quiet_prints_errors_and_warnings_and_sums_up_version_3() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let full = verify(store.path(), &[]);
    let quiet = verify(store.path(), &["--quiet"]);
    assert_eq!(quiet.code, full.code, "{}", quiet.stderr);
    assert_eq!(quiet.code, 1);
    // The verdict is the same line.
    assert_eq!(
        full.stdout.lines().last().unwrap().split(" in ").next(),
        quiet.stdout.lines().last().unwrap().split(" in ").next()
    );
    assert!(full.stdout.contains(": info["), "{}", full.stdout);
    assert!(!quiet.stdout.contains(": info["), "{}", quiet.stdout);
    assert!(!quiet.stdout.contains("warning[version-3]: format version 3 (the August 2026 agent): the current agent will not list or resume it "));
    let v3 = full.stdout.matches("warning[version-3]").count();
    assert!(v3 > 1);
    let line = quiet
        .stdout
        .lines()
        .find(|l| l.contains("[version-3]"))
        .unwrap();
    assert!(
        line.starts_with(&format!("{v3} run(s): warning[version-3]")),
        "{line}"
    );
    // The upgrade alone on its line under it; what it will refuse said
    // before it is pasted (issue 39, d-29: at b926494 the line offered
    // `upgrade --all` and 21 of the 23 were refused after).
    assert_eq!(
        steps(&quiet.stdout, &["upgrade them with"]),
        [format!("fisk-admin --state-dir {d} upgrade --all")]
    );
    assert!(
        line.contains("; 21 of them are damaged as well: upgrade refuses them"),
        "{line}"
    );
    let upgrade = format!("{d} upgrade");
    assert_eq!(
        quiet.stdout.matches(&upgrade).count(),
        1,
        "{}",
        quiet.stdout
    );
    // Every other error and warning line is there.
    for l in full.stdout.lines() {
        if (l.contains(": error[") || l.contains(": warning[")) && !l.contains("[version-3]") {
            assert!(quiet.stdout.contains(l), "{l} missing:\n{}", quiet.stdout);
        }
    }
    // A run's row names its own finding, never an upgrade, and never
    // chains one after a repair.
    let row = quiet
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some("duplicate-result"))
        .unwrap();
    assert!(
        row.contains("duplicate-result\t-") || row.trim_end().ends_with('-'),
        "{row}"
    );
    for l in quiet.stdout.lines().filter(|l| l.contains(" repair ")) {
        assert!(!l.contains("upgrade"), "{l}");
    }
}

#[test]
fn severity_error_shows_only_errors_and_json_filters_the_same() {
    let store = store_copy("damaged");
    let r = verify(store.path(), &["--severity", "error"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains(": error["));
    assert!(!r.stdout.contains(": warning["), "{}", r.stdout);
    assert!(!r.stdout.contains("[version-3]"), "{}", r.stdout);
    assert!(
        !r.stdout.contains(" warning "),
        "no warning row: {}",
        r.stdout
    );
    // JSON: every finding by default, the filtered ones with a filter;
    // the summary counts them all either way.
    let all = verify(store.path(), &["-o", "json"]).json_lines();
    let v = output_validator("verify.json");
    for (args, keep) in [
        (&["--quiet"][..], &["error", "warning"][..]),
        (&["--severity", "error"][..], &["error"][..]),
        (
            &["--severity", "info"][..],
            &["error", "warning", "info"][..],
        ),
    ] {
        let mut a = vec!["-o", "json"];
        a.extend_from_slice(args);
        let got = verify(store.path(), &a).json_lines();
        for l in &got {
            assert_valid(&v, l, "verify line");
        }
        let want: Vec<&serde_json::Value> = all
            .iter()
            .filter(|f| {
                f.get("summary").is_some() || keep.contains(&f["severity"].as_str().unwrap_or(""))
            })
            .collect();
        let got_findings: Vec<&serde_json::Value> = got.iter().collect();
        assert_eq!(got_findings.len(), want.len(), "{args:?}");
        let last = got.last().unwrap();
        assert_eq!(
            last["summary"]["infos"],
            all.last().unwrap()["summary"]["infos"]
        );
    }
}

#[test]
fn quiet_on_a_clean_store_says_what_it_left_out() {
    let store = store_copy("runs-v1");
    let r = verify(store.path(), &["--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let full = verify(store.path(), &[]);
    if full.stdout.contains(": info[") {
        assert!(
            r.stdout
                .contains("info finding(s) not shown (--severity info shows them)"),
            "{}",
            r.stdout
        );
    }
    assert!(
        r.stdout.starts_with("ok: the store is clean"),
        "{}",
        r.stdout
    );
    // --quiet and --severity together: clap says no.
    let r = verify(store.path(), &["--quiet", "--severity", "error"]);
    assert_eq!(r.code, 2);
}

/// Issue 39, d-23 and c-31: verify's JSON carries what its text does:
/// each finding's fix and the runs to fix (the closing table), and a run's
/// findings come in line order (at b926494 `fold:2:456` came before
/// `fold:1:0`, and JSON had no fix at all).
#[test]
fn verify_json_carries_each_fix_and_the_runs_to_fix_in_line_order() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let r = verify(store.path(), &["-o", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = output_validator("verify.json");
    let lines = r.json_lines();
    for l in &lines {
        assert_valid(&v, l, "verify line");
    }
    let by_run = |run: &str| -> Vec<&serde_json::Value> {
        lines.iter().filter(|l| l["run"] == run).collect()
    };
    let torn = by_run("torn-tail");
    let fix = torn.iter().find(|f| f["code"] == "torn-tail").unwrap()["fix"].clone();
    assert_eq!(fix, format!("fisk-admin --state-dir {d} repair torn-tail"));
    // In line order within a run.
    let fold: Vec<u64> = by_run("fold")
        .iter()
        .filter_map(|f| f["line"].as_u64())
        .collect();
    assert!(fold.windows(2).all(|w| w[0] <= w[1]), "{fold:?}");
    // The closing table's rows, in the summary.
    let summary = &lines.last().unwrap()["summary"];
    let rows = summary["runs_to_fix"].as_array().unwrap();
    let row = rows.iter().find(|r| r["run"] == "torn-tail").unwrap();
    assert_eq!(row["worst"], "warning");
    assert_eq!(row["finding"], "torn-tail");
    assert_eq!(row["fix"][0], fix);
    let rec = rows
        .iter()
        .find(|r| r["run"] == "interior-corruption")
        .unwrap();
    assert!(rec["fix"][0]
        .as_str()
        .unwrap()
        .ends_with(" recover interior-corruption"));
    // A second meta record: recover alone (it drops the copy and keeps a
    // backup), not `migrate ... && recover` (c-31); pasted, it fixes the
    // run.
    let dup = rows.iter().find(|r| r["run"] == "duplicate-meta").unwrap();
    assert_eq!(
        dup["fix"],
        serde_json::json!([format!("fisk-admin --state-dir {d} recover duplicate-meta")]),
        "{dup}"
    );
    let bindir = bin().parent().unwrap().to_owned();
    let pasted = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{} --yes", dup["fix"][0].as_str().unwrap()))
        .env(
            "PATH",
            format!("{}:{}", s(&bindir), std::env::var("PATH").unwrap()),
        )
        .env("XDG_STATE_HOME", store.path())
        .output()
        .unwrap();
    assert!(pasted.status.success(), "{pasted:?}");
    let after = verify(store.path(), &["duplicate-meta", "-o", "json"]).json_lines();
    assert!(!after.iter().any(|f| f["severity"] == "error"), "{after:?}");
    // The text, in line order too; a duplicate result says what it costs.
    let text = verify(store.path(), &["fold", "duplicate-result"]);
    let at = |needle: &str| {
        text.stdout
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}: {}", text.stdout))
    };
    assert!(at("fold:1:0:") < at("fold:2:"), "{}", text.stdout);
    assert!(
        text.stdout.contains("a resume sends both to the model"),
        "{}",
        text.stdout
    );
}
