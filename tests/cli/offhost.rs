//! `--file PATH` (issue 27.5): a journal copied off a host, read with no
//! store, its run id from its meta record, on both generations; what each
//! command prints is what it prints for the same run of a store.

use crate::support::*;

/// A copy of `dir`'s `run` under another name, outside any store.
fn off_host(dir: &str, run: &str) -> (tempfile::TempDir, String) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("copied-off-host.jsonl");
    std::fs::copy(format!("testdata/{dir}/{run}.json"), &p).unwrap();
    let p = s(&p).to_owned();
    (t, p)
}

#[test]
fn show_fold_stats_query_export_and_the_transcript_read_a_file_as_they_read_the_run() {
    for dir in ["runs-v1", "runs"] {
        let run = "tool-batch";
        let (_t, file) = off_host(dir, run);
        let store = format!("testdata/{dir}");
        for cmd in [
            vec!["show", "-o", "json"],
            vec!["show", "--until-seq", "3", "-o", "json"],
            vec!["fold", "-o", "json"],
            vec!["fold", "--until-seq", "3", "-o", "json"],
            vec!["stats", "-o", "json"],
            vec!["stats"],
            vec!["query", "-o", "json"],
            vec!["query"],
            vec!["export", "--as", "markdown"],
            vec!["export", "--as", "html"],
            vec!["export", "--as", "jsonl"],
            vec!["show", "--transcript", "--no-tui", "--thinking"],
        ] {
            let mut from_store = vec!["--state-dir", &store];
            from_store.extend_from_slice(&cmd);
            from_store.push(run);
            let want = fisk(&from_store);
            assert_eq!(want.code, 0, "{dir} {cmd:?}: {}", want.stderr);
            let mut from_file = vec!["--state-dir", "/nonexistent"];
            from_file.extend_from_slice(&cmd);
            from_file.extend_from_slice(&["--file", &file]);
            let got = fisk(&from_file);
            assert_eq!(got.code, 0, "{dir} {cmd:?}: {}", got.stderr);
            // `show`'s `updated` of a run whose records carry no time
            // (version 3) is its file's mtime, as the file store says
            // (SPEC 9): the copy's own, not the store's.
            if cmd[0] == "show" && cmd.contains(&"json") && dir == "runs" {
                let strip = |t: &str| {
                    let mut v: serde_json::Value = serde_json::from_str(t).unwrap();
                    assert!(v["updated"].is_string(), "{v}");
                    v.as_object_mut().unwrap().remove("updated");
                    v
                };
                assert_eq!(strip(&got.stdout), strip(&want.stdout), "{dir} {cmd:?}");
                continue;
            }
            assert_eq!(got.stdout, want.stdout, "{dir} {cmd:?}");
        }
    }
}

#[test]
fn a_file_and_a_run_together_and_a_damaged_file_are_refused() {
    let (t, file) = off_host("runs-v1", "tool-batch");
    let r = fisk(&["fold", "tool-batch", "--file", &file]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let bad = t.path().join("bad.json");
    std::fs::write(&bad, b"{not json\n{\"seq\":1}\n").unwrap();
    let r = fisk(&["fold", "--file", s(&bad)]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
}

#[test]
fn verify_checks_a_file_with_no_store() {
    for (dir, warns) in [("runs-v1", 0), ("runs", 1)] {
        let (t, file) = off_host(dir, "tool-batch");
        let r = fisk(&[
            "--state-dir",
            "/nonexistent",
            "verify",
            "--file",
            &file,
            "-o",
            "json",
        ]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let lines = r.json_lines();
        let summary = lines.last().unwrap();
        assert_eq!(summary["summary"]["warnings"], warns, "{dir}: {}", r.stdout);
        assert_eq!(summary["summary"]["runs"], 1, "{dir}: {}", r.stdout);
        // A torn tail is found, and no store's fix is offered for it.
        let mut bytes = std::fs::read(&file).unwrap();
        bytes.extend_from_slice(b"{\"seq\":8,\"prot");
        let torn = t.path().join("torn.json");
        std::fs::write(&torn, &bytes).unwrap();
        let r = fisk(&["verify", "--file", s(&torn), "--strict"]);
        assert_eq!(r.code, 1, "{dir}: {}", r.stderr);
        assert!(r.stdout.contains("torn-tail"), "{}", r.stdout);
        assert!(!r.stdout.contains("fisk-admin"), "{}", r.stdout);
        let r = fisk(&["show", "--file", s(&torn)]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        assert!(r.stdout.contains("Run tool-batch"), "{}", r.stdout);
    }
}

#[test]
fn a_run_argument_that_is_a_file_gets_the_command_that_reads_it() {
    let (_t, file) = off_host("runs", "tool-batch");
    for cmd in ["show", "verify", "fold", "stats", "query"] {
        let r = fisk(&["--state-dir", "testdata/runs", cmd, &file]);
        assert_ne!(r.code, 0, "{cmd}");
        let want = format!("fisk-admin {cmd} --file {file}`");
        assert!(r.stderr.contains(&want), "{cmd}: {}", r.stderr);
        let r = fisk(&[cmd, "--file", &file]);
        assert_eq!(r.code, 0, "{cmd}: {}", r.stderr);
    }
    let r = fisk(&[
        "--state-dir",
        "testdata/runs",
        "export",
        &file,
        "--as",
        "jsonl",
    ]);
    assert_ne!(r.code, 0);
    let want = format!("fisk-admin export --file {file} --as jsonl`");
    assert!(r.stderr.contains(&want), "{}", r.stderr);
}

#[test]
fn a_file_transcript_names_no_store_command() {
    for dir in ["runs-v1", "runs"] {
        let (t, file) = off_host(dir, "deferral-waiting");
        let r = fisk(&["show", "--transcript", "--no-tui", "--file", &file]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        assert!(
            r.stdout.contains("Transcript of deferral-waiting"),
            "{dir}: {}",
            r.stdout
        );
        assert!(
            r.stdout
                .contains("answer it where run deferral-waiting is stored: this journal is a copy"),
            "{dir}: {}",
            r.stdout
        );
        assert!(
            !r.stdout.contains("fisk-admin answer"),
            "{dir}: {}",
            r.stdout
        );
        // A torn final line: shown, with no store's repair offered.
        let mut bytes = std::fs::read(&file).unwrap();
        bytes.extend_from_slice(b"{\"seq\":6,\"prot");
        let torn = t.path().join("torn.json");
        std::fs::write(&torn, &bytes).unwrap();
        let r = fisk(&["show", "--transcript", "--no-tui", "--file", s(&torn)]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        assert!(r.stdout.contains("[torn final line"), "{dir}: {}", r.stdout);
        assert!(
            r.stdout.contains("cut it from the copy by hand"),
            "{dir}: {}",
            r.stdout
        );
        assert!(
            !r.stdout.contains("fisk-admin repair"),
            "{dir}: {}",
            r.stdout
        );
    }
}
