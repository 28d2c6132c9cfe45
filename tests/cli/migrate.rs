//! `migrate` between file stores: what one run's failure does to the rest.

use crate::support::*;

/// Three healthy runs, copied with `--jobs 1` so the first one's failure
/// comes before the others are started.
fn migrate_three(prepare: impl Fn(&std::path::Path)) -> (i32, Vec<(String, String, String)>) {
    let src = tempfile::tempdir().expect("src");
    for run in ["all-counters", "approvals", "budget-terminal"] {
        std::fs::copy(
            testdata(&format!("runs/{run}.json")),
            src.path().join(format!("{run}.json")),
        )
        .expect("copy");
    }
    let dst = tempfile::tempdir().expect("dst");
    prepare(dst.path());
    let r = fisk(&[
        "migrate",
        "--from",
        &format!("file:{}", s(src.path())),
        "--to",
        &format!("file:{}", s(dst.path())),
        "--all",
        "--jobs",
        "1",
        "-o",
        "json",
    ]);
    let rows = r.json()["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|x| {
            (
                x["run"].as_str().unwrap_or("").to_owned(),
                x["result"].as_str().unwrap_or("").to_owned(),
                x["notes"].to_string(),
            )
        })
        .collect();
    (r.code, rows)
}

/// Issue 14 (review 2.2): a destination run with a symbolic link for its
/// lock, or a directory named like its journal, is that run's failure; it
/// used to mark every later healthy run "not attempted".
#[test]
fn a_run_the_destination_refuses_does_not_stop_the_other_runs() {
    let first_line = || {
        let text = std::fs::read_to_string(testdata("runs/all-counters.json")).expect("read");
        format!("{}\n", text.lines().next().unwrap_or_default())
    };
    let symlinked_lock = |d: &std::path::Path| {
        std::fs::write(d.join("all-counters.json"), first_line()).expect("write");
        std::os::unix::fs::symlink("/nonexistent/elsewhere", d.join("all-counters.lock"))
            .expect("symlink");
    };
    let directory_journal = |d: &std::path::Path| {
        std::fs::create_dir(d.join("all-counters.json")).expect("mkdir");
    };
    for (case, prepare) in [
        (
            "a symlinked lock",
            &symlinked_lock as &dyn Fn(&std::path::Path),
        ),
        ("a directory named like the journal", &directory_journal),
    ] {
        let (code, rows) = migrate_three(prepare);
        assert_ne!(code, 0, "{case}: the failed run makes the exit non-zero");
        assert_eq!(rows.len(), 3, "{case}: {rows:?}");
        for (run, result, note) in &rows {
            if run == "all-counters" {
                assert_eq!(result, "failed", "{case}: {note}");
                assert!(!note.contains("not attempted"), "{case}: {note}");
            } else {
                assert_eq!(result, "copied", "{case}: {run}: {note}");
            }
        }
    }
}
