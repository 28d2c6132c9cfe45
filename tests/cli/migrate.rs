//! `migrate` between file stores, and from and into JetStream: what one
//! run's failure does to the rest.

use crate::nats_support::{publish_interleaved, NatsServer};
use crate::support::*;

/// The three healthy runs the tests below copy.
const THREE: [&str; 3] = ["all-counters", "approvals", "budget-terminal"];

/// Three healthy runs, copied with `--jobs 1` so the first one's failure
/// comes before the others are started.
fn migrate_three(prepare: impl Fn(&std::path::Path)) -> (i32, Vec<(String, String, String)>) {
    let src = tempfile::tempdir().expect("src");
    for run in THREE {
        std::fs::copy(
            testdata(&format!("runs/{run}.json")),
            src.path().join(format!("{run}.json")),
        )
        .expect("copy");
    }
    migrate_into_file(&[], &format!("file:{}", s(src.path())), prepare)
}

/// [`migrate_three`] from a JetStream stream holding the three runs.
fn migrate_three_from_jetstream(
    prepare: impl Fn(&std::path::Path),
) -> (i32, Vec<(String, String, String)>) {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let runs: Vec<(String, Vec<Vec<u8>>)> = THREE
        .iter()
        .map(|run| {
            let text = std::fs::read(testdata(&format!("runs/{run}.json"))).expect("read");
            let bodies = text
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect();
            (run.to_string(), bodies)
        })
        .collect();
    publish_interleaved(&srv, &runs);
    migrate_into_file(&["--server", &srv.url], "jetstream:SESSIONS", prepare)
}

/// `migrate --all --jobs 1 -o json` from `from` into a new file store
/// `prepare` set up first (`global`: flags before the command): the exit
/// status and each run's result and notes.
fn migrate_into_file(
    global: &[&str],
    from: &str,
    prepare: impl Fn(&std::path::Path),
) -> (i32, Vec<(String, String, String)>) {
    let dst = tempfile::tempdir().expect("dst");
    prepare(dst.path());
    let to = format!("file:{}", s(dst.path()));
    let mut args = global.to_vec();
    args.extend([
        "migrate", "--from", from, "--to", &to, "--all", "--jobs", "1", "-o", "json",
    ]);
    let r = fisk(&args);
    (r.code, rows(&r))
}

/// Each run's result and notes in a `migrate -o json` report.
fn rows(r: &Run) -> Vec<(String, String, String)> {
    r.json()["runs"]
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
        .collect()
}

/// Issue 14 (review 2.2): a destination run with a symbolic link for its
/// lock, or a directory named like its journal, is that run's failure; it
/// used to mark every later healthy run "not attempted". From a file store
/// and from a JetStream stream alike.
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
    type Prepare<'a> = &'a dyn Fn(&std::path::Path);
    type Migrate = fn(Prepare) -> (i32, Vec<(String, String, String)>);
    let sources: [(&str, Migrate); 2] = [
        ("file", |p| migrate_three(p)),
        ("jetstream", |p| migrate_three_from_jetstream(p)),
    ];
    for (from, migrate) in sources {
        for (case, prepare) in [
            ("a symlinked lock", &symlinked_lock as Prepare),
            ("a directory named like the journal", &directory_journal),
        ] {
            let case = format!("from {from}, {case}");
            let (code, rows) = migrate(prepare);
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
}

/// The same on a JetStream destination: a run whose subjects the server
/// maps into another stream (its records would be stored there, not in
/// the destination) fails on its own, as a fault of its subject's
/// configuration; it used to count as the store failing, and every run
/// not yet started was "not attempted".
#[test]
fn a_subject_another_stream_takes_stops_the_migrate_before_it_spreads() {
    let conf = tempfile::tempdir().expect("conf");
    let path = conf.path().join("nats.conf");
    std::fs::write(
        &path,
        "mappings = {\n  \"fisk.sessions.all-counters.*\": \"elsewhere.all-counters.{{wildcard(1)}}\"\n}\n",
    )
    .expect("write nats.conf");
    let srv = NatsServer::start_with(&["-c", s(&path)]);
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    srv.spec_stream("ELSEWHERE", "elsewhere.>");
    // Every testdata run (fewer than migrate lists the destination for);
    // all-counters sorts first, so with one job the others come after it.
    let src = store_copy("runs");
    let from = format!("file:{}", s(src.path()));
    let r = fisk(&[
        "--server",
        &srv.url,
        "migrate",
        "--from",
        &from,
        "--to",
        "jetstream:SESSIONS",
        "--all",
        "--jobs",
        "1",
        "-o",
        "json",
    ]);
    let rows = rows(&r);
    assert_ne!(r.code, 0, "the failed run makes the exit non-zero");
    assert!(rows.len() > 20, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(rows.first().map(|x| x.0.as_str()), Some("all-counters"));
    // A mapping that takes one run's subject may take them all: the first
    // such record stops the copy (a store failure), and no later run's
    // record is published into the stream that is not ours.
    for (run, result, note) in &rows {
        if run == "all-counters" {
            assert_eq!(result, "failed", "{note}");
            assert!(
                note.contains("ELSEWHERE") && note.contains("overlap"),
                "{note}"
            );
            assert!(!note.contains("not attempted"), "{note}");
        } else {
            assert!(
                result == "copied" || note.contains("not attempted"),
                "{run}: {result} {note}"
            );
        }
    }
    assert!(
        rows.iter()
            .any(|(_, _, note)| note.contains("not attempted")),
        "the runs after it are not started"
    );
    assert_eq!(srv.messages("ELSEWHERE"), 1, "one stray record, no more");
    let dest = srv.store("SESSIONS");
    let stored = dest.runs().expect("runs");
    assert!(!stored.iter().any(|x| x == "all-counters"), "{stored:?}");
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
    assert!(r.stdout.contains(" copied and verified; "), "{}", r.stdout);
    let r = fisk(&[
        "migrate", "--from", &hfrom, "--to", &hto, "--all", "--quiet",
    ]);
    assert!(
        r.stdout
            .contains("every run selected was complete at the destination already"),
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
        seen.contains(" copied and verified; ") || seen.contains("RESULT"),
        "{seen}"
    );
}

/// Issue 39, d-14 (c-26): migrate says what it did, each count as what it
/// is: a dry run what it would append, a rerun what was complete already
/// (at b926494 "nothing was copied" then "27 of 27 runs copied"), and a
/// deletion of the sources even with --quiet.
#[test]
fn migrate_says_what_it_would_append_what_was_complete_and_what_it_deleted() {
    let src = store_copy("runs-v1");
    let dst = tempfile::tempdir().unwrap();
    let from = format!("file:{}", s(src.path()));
    let to = format!("file:{}", s(dst.path()));
    let total: u64 = std::fs::read_dir(src.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap().lines().count() as u64)
        .sum();
    let r = fisk(&[
        "migrate",
        "--from",
        &from,
        "--to",
        &to,
        "--all",
        "--dry-run",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let last = r.stdout.lines().last().unwrap();
    assert!(last.contains(" runs would be copied, appending "), "{last}");
    let appended: u64 = last
        .split("appending ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(appended > 0 && appended <= total, "{appended} of {total}");
    assert!(last.contains("dry run, nothing was written"), "{last}");
    let r = fisk(&["migrate", "--from", &from, "--to", &to, "--all", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = fisk(&[
        "migrate",
        "--from",
        &from,
        "--to",
        &to,
        "--all",
        "--delete-source",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("every run selected was complete at the destination already (")
            && r.stdout.contains("): nothing was copied; "),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("copied and verified"), "{}", r.stdout);
    assert!(
        r.stdout.contains(" source run(s) deleted from "),
        "{}",
        r.stdout
    );
}

/// `migrate` from a stream a writer appends to while it copies (issue 40):
/// it copies the stream as it was when it started, up to the sequence it
/// says, and nothing stored after it (records appended to a run it copies,
/// runs created meanwhile); a second migrate copies the rest.
#[test]
fn migrate_from_a_stream_being_written_copies_it_as_it_was_when_it_started() {
    const STREAM: &str = "LIVE";
    const PREFIX: &str = "fisk.live";
    const RUNS: usize = 300;
    const FIRST: usize = 4;
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, &format!("{PREFIX}.>"));
    let ids: Vec<String> = (0..RUNS).map(|i| format!("live-{i:04}")).collect();
    // Each run's first records before migrate starts; the writer: the
    // rest of every run, and new runs, until told to stop.
    let writer = crate::live::Writer::start(&srv, PREFIX, &ids, FIRST);
    let to = tempfile::tempdir().expect("to");
    let dest = format!("file:{}", s(to.path()));
    let home = tempfile::tempdir().expect("home");
    let js = format!("jetstream:{STREAM}");
    let migrate = |args: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "migrate",
            "--from",
            &js,
            "--to",
            &dest,
        ];
        all.extend_from_slice(args);
        fisk_in(home.path(), &all, None)
    };
    let r = migrate(&["--all", "--allow-live", "--format", "json"]);
    writer.stop();
    let j = r.json();
    let cut = j["cut"]
        .as_u64()
        .unwrap_or_else(|| panic!("no cut: {}", r.stdout));
    // What the stream held, run by run, with each message's sequence.
    let store = srv.store(STREAM);
    let mut grew = 0;
    let mut runs = store.runs().expect("runs");
    runs.sort();
    for run in &runs {
        let messages = store.read_all_messages(run).expect("read");
        let before: Vec<&[u8]> = messages
            .iter()
            .filter(|m| m.stream_seq <= cut)
            .map(|m| m.body.as_slice())
            .collect();
        let copied = std::fs::read(to.path().join(format!("{run}.json")));
        if before.is_empty() {
            assert!(copied.is_err(), "{run}, created after the cut, was copied");
            continue;
        }
        let want: Vec<u8> = before
            .iter()
            .flat_map(|b| b.iter().copied().chain([b'\n']))
            .collect();
        assert_eq!(
            copied.ok(),
            Some(want),
            "{run}: not the stream as it was at {cut}"
        );
        grew += usize::from(messages.len() > before.len());
    }
    // The writer wrote while migrate copied: runs it copied grew after
    // the cut, and new runs were made after it.
    let made_after = runs.iter().filter(|r| r.starts_with("new-")).count();
    assert!(
        grew > 0,
        "no copied run grew after the cut {cut}: the writer did not overlap"
    );
    let text = r.stdout.clone();
    assert!(j["summary"]["appended"].as_u64().unwrap_or(0) > 0, "{text}");
    // Said in words too: under the table, so on stderr into a pipe (the
    // pipe rule: a table for a program has no footnote).
    let again = migrate(&["--all", "--allow-live"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert!(
        again
            .stderr
            .contains("the source as it was when migrate started: up to stream sequence "),
        "{}{}",
        again.stdout,
        again.stderr
    );
    // The second migrate copied the rest: every run whole.
    for run in &runs {
        let messages = store.read_all_messages(run).expect("read");
        let want: Vec<u8> = messages
            .iter()
            .flat_map(|m| m.body.iter().copied().chain([b'\n']))
            .collect();
        let copied = std::fs::read(to.path().join(format!("{run}.json"))).ok();
        assert_eq!(
            copied,
            Some(want),
            "{run}: not copied whole by the second migrate ({made_after} made after the first cut)"
        );
    }
}
