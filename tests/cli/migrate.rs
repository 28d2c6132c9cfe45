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

/// Runs the agent refuses (no meta record, another run's meta, a version
/// no agent reads) are reported and not copied unless --include-corrupt;
/// --quiet prints only what was not copied; a re-run that finds everything
/// complete says so.
#[test]
fn runs_the_agent_refuses_are_skipped_and_a_complete_rerun_says_so() {
    let src = store_copy("damaged");
    let dest = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(&dest.path().join("copy")));
    let from = format!("file:{}", s(src.path()));
    let runs = [
        "no-meta",
        "run-id-mismatch",
        "version-newer",
        "version-older",
    ];
    let mut args = vec![
        "migrate",
        "--from",
        from.as_str(),
        "--to",
        to.as_str(),
        "-o",
        "json",
    ];
    args.extend(runs);
    let r = fisk(&args);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let doc = r.json();
    for run in runs {
        let rep = doc["runs"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["run"] == run))
            .cloned()
            .unwrap_or_default();
        assert_eq!(rep["result"], "skipped-corrupt", "{run}: {rep}");
        let note = rep["notes"].to_string();
        assert!(
            note.contains("the agent refuses this run") && note.contains("--include-corrupt"),
            "{run}: {note}"
        );
        assert!(
            !dest
                .path()
                .join("copy")
                .join(format!("{run}.json"))
                .exists(),
            "{run} copied"
        );
    }
    // With --include-corrupt they are copied, and say why they are odd.
    let mut with = args.clone();
    with.push("--include-corrupt");
    let r = fisk(&with);
    let copied = r.json()["runs"]
        .as_array()
        .map(|a| a.iter().filter(|x| x["result"] == "copied").count())
        .unwrap_or(0);
    assert_eq!(copied, runs.len(), "{}", r.stdout);
    // A healthy store: --quiet prints the summary only; the re-run says
    // that everything was complete.
    let healthy = store_copy("runs");
    let hfrom = format!("file:{}", s(healthy.path()));
    let hto = format!("file:{}", s(&dest.path().join("healthy")));
    let r = fisk(&[
        "migrate", "--from", &hfrom, "--to", &hto, "--all", "--quiet",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stdout.contains("RESULT"),
        "no table when every run was copied:\n{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("runs copied and verified"),
        "{}",
        r.stdout
    );
    let r = fisk(&[
        "migrate", "--from", &hfrom, "--to", &hto, "--all", "--quiet",
    ]);
    assert!(
        r.stdout
            .contains("every run was complete at the destination already"),
        "{}",
        r.stdout
    );
}

/// Regression test for issue 18 ("`migrate` creates its destination
/// directory before refusing an invalid run id"): a bad argument is
/// refused before anything is created.
#[test]
fn migrate_refuses_an_invalid_run_id_before_it_creates_its_destination() {
    let src = store_copy("runs");
    let dest = tempfile::tempdir().expect("dest");
    let to = dest.path().join("new/runs");
    let r = fisk(&[
        "migrate",
        "--from",
        &format!("file:{}", s(src.path())),
        "--to",
        &format!("file:{}", s(&to)),
        "tool-batch",
        "../escape",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("invalid run id"), "{}", r.stderr);
    assert!(
        !dest.path().join("new").exists(),
        "the destination was created: {:?}",
        std::fs::read_dir(dest.path()).map(|d| d.count())
    );
}

/// A migrate that stores nothing (every run it was given is refused by
/// the source) leaves no destination directory behind.
#[test]
fn a_migrate_that_copies_nothing_leaves_no_destination_directory() {
    let src = store_copy("damaged");
    let dest = tempfile::tempdir().expect("dest");
    let to = dest.path().join("new/runs");
    let r = fisk(&[
        "migrate",
        "--from",
        &format!("file:{}", s(src.path())),
        "--to",
        &format!("file:{}", s(&to)),
        "interior-corruption",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(!dest.path().join("new").exists());
}

/// On a terminal `migrate` draws a progress bar on stderr (runs of all,
/// records, their rate, the time left) and clears it before the table; on
/// a pipe it draws nothing. The terminal is a real pty (`script`).
#[test]
fn migrate_shows_a_progress_bar_on_a_terminal_and_nothing_on_a_pipe() {
    let src = store_copy("runs");
    let dest = tempfile::tempdir().unwrap();
    let from = format!("file:{}", s(src.path()));
    let piped = fisk(&[
        "migrate",
        "--from",
        &from,
        "--to",
        &format!("file:{}", s(&dest.path().join("piped"))),
        "--all",
    ]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(
        !piped.stderr.contains("runs,") && !piped.stderr.contains('\r'),
        "nothing on a pipe: {:?}",
        piped.stderr
    );
    let typescript = dest.path().join("typescript");
    let cmd = format!(
        "{} migrate --from {from} --to file:{} --all",
        s(&bin()),
        s(&dest.path().join("tty"))
    );
    let out = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &cmd, s(&typescript)])
        .env("HOME", dest.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux runs the command on a pty");
    assert!(out.status.success(), "{out:?}");
    let seen = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    let total = std::fs::read_dir(src.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert!(
        seen.contains("migrate [") && seen.contains(&format!("/{total} runs, ")),
        "a bar with the runs: {seen}"
    );
    assert!(seen.contains("records/s") && seen.contains("ETA"), "{seen}");
    assert!(
        seen.contains("runs copied and verified") || seen.contains("RESULT"),
        "{seen}"
    );
}
