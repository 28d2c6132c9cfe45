//! Races on JetStream (issue 18 item 4): a delete racing a writer leaves
//! the whole run or none of it, never records without their meta record;
//! two resumes of one run never both run its tool. Each race is tried 50 times and
//! every outcome is checked, not just that some try succeeded.

use crate::nats_support::NatsServer;
use crate::support::{s, turn, Fixture, Run};
use std::collections::BTreeMap;
use std::process::Child;
use std::time::{Duration, Instant};

const STREAM: &str = "SESSIONS";
const SUBJECT: &str = "fisk.sessions.>";
const TRIES: usize = 50;
/// Resumes started together on one crashed run.
const RESUMERS: usize = 4;

/// Point a runner fixture's agent file at the JetStream stream STREAM.
fn on_jetstream(f: &Fixture) {
    let agent = f.path("agent.yaml");
    let text = std::fs::read_to_string(&agent).unwrap().replace(
        "{backend: file, options: {directory: ./runs}}",
        &format!("{{backend: jetstream, options: {{stream: {STREAM}}}}}"),
    );
    std::fs::write(&agent, text).unwrap();
}

/// Every subject under `fisk.sessions.<run>.>` with its message count.
fn subjects_of(srv: &NatsServer, run: &str) -> BTreeMap<String, usize> {
    use futures_util::TryStreamExt;
    srv.with_js(async |j| {
        let st = j.get_stream(STREAM).await.unwrap();
        let subjects = st
            .info_with_subjects(format!("fisk.sessions.{run}.>"))
            .await
            .unwrap();
        subjects.try_collect().await.unwrap()
    })
}

/// The seqs the subjects of a run name (`_meta` is 1), sorted; panics on a
/// subject that names no record.
fn seqs_of(subjects: &BTreeMap<String, usize>) -> Vec<u64> {
    let mut seqs: Vec<u64> = subjects
        .keys()
        .map(|subject| match subject.rsplit('.').next().unwrap() {
            "_meta" => 1,
            n => n
                .parse()
                .unwrap_or_else(|_| panic!("{subject} names no record")),
        })
        .collect();
    seqs.sort();
    seqs
}

/// The highest `seq N:` a runner printed: the last record it was told was
/// stored.
fn last_step(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.split("seq ").nth(1))
        .filter_map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .filter_map(|n| n.parse().ok())
        .max()
        .unwrap_or(0)
}

fn wait(child: Child) -> Run {
    child.wait_with_output().unwrap().into()
}

/// The seqs of the lines of a kept journal (a file), in order.
fn kept_seqs(path: &str) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// `rm` racing `run` on one run, with the hold off (`--hold 0`: the
/// operator deletes a run in flight): the stream is left with the whole
/// run (the delete refused or too early) or none of it (the writer fenced
/// out, or already done), never records without their meta record; and
/// whatever the writer was told was stored is on the stream or in rm's
/// backup (issue 18 item 4: the writer went on after rm with records
/// 11-35 and no meta record, about one try in four).
#[test]
fn rm_racing_a_writer_leaves_the_whole_run_or_none_of_it() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let f = quick_writer();
    let mut bad = Vec::new();
    let mut seen = BTreeMap::<&str, usize>::new();
    let started = Instant::now();
    for i in 0..TRIES {
        let id = format!("w{i:02}");
        let writer = f
            .command(&[
                "--server",
                &srv.url,
                "run",
                "--agent",
                "agent.yaml",
                "--id",
                &id,
                "go",
            ])
            .spawn()
            .unwrap();
        // From before the run exists to after it ended, most tries while
        // it is being written.
        std::thread::sleep(Duration::from_millis((i as u64 * 7) % 160));
        let rm = f
            .command(&[
                "--server",
                &srv.url,
                "--store",
                "jetstream:SESSIONS",
                "--hold",
                "0",
                "rm",
                &id,
                "--yes",
                "-o",
                "json",
            ])
            .spawn()
            .unwrap();
        let (w, r) = (wait(writer), wait(rm));
        let left = subjects_of(&srv, &id);
        let stored = last_step(&w.stdout);
        let what = format!(
            "try {i}: writer {} {}{}\nrm {} {}{}\nleft {left:?}",
            w.code, w.stdout, w.stderr, r.code, r.stdout, r.stderr
        );
        match judge_rm(&w, &r, &left, stored) {
            Ok(outcome) => *seen.entry(outcome).or_default() += 1,
            Err(why) => bad.push(format!("{why}\n{what}")),
        }
    }
    eprintln!("{TRIES} tries in {:?}: {seen:?}", started.elapsed());
    assert!(
        bad.is_empty(),
        "{} of {TRIES} tries went wrong:\n{}",
        bad.len(),
        bad.join("\n\n")
    );
}

/// What one try of [`rm_racing_a_writer_leaves_the_whole_run_or_none_of_it`]
/// ended with, or why that outcome is wrong.
fn judge_rm(
    w: &Run,
    r: &Run,
    left: &BTreeMap<String, usize>,
    stored: u64,
) -> Result<&'static str, String> {
    const TOTAL: u64 = 28;
    let check = |ok: bool, why: &str| if ok { Ok(()) } else { Err(why.to_owned()) };
    if r.code == 0 {
        // Deleted: nothing of the run is left, and the backup holds every
        // record the writer was told was stored.
        check(
            left.is_empty(),
            "rm succeeded but messages of the run are left",
        )?;
        check(!r.stderr.contains("warning"), "rm warned")?;
        let kept = r.json()[0]["kept"].as_str().unwrap_or_default().to_owned();
        let seqs = kept_seqs(&kept);
        check(
            seqs == (1..=seqs.len() as u64).collect::<Vec<_>>(),
            "the backup is not records 1..N",
        )?;
        check(
            seqs.len() as u64 >= stored,
            "a record the writer was told was stored is in neither place",
        )?;
        if w.code == 0 {
            check(
                seqs.len() as u64 == TOTAL,
                "the writer ended well but the backup lacks records",
            )?;
            return Ok("deleted after the run ended");
        }
        check(w.code == 1, "the writer's exit is not 1")?;
        check(
            w.stderr.contains("is being deleted"),
            "the writer is not told why it stopped",
        )?;
        return Ok("writer fenced out");
    }
    // Not deleted: the whole run is there, written to its end.
    check(w.code == 0, "nothing deleted, but the writer failed")?;
    check(
        seqs_of(left) == (1..=TOTAL).collect::<Vec<_>>(),
        "nothing deleted, but the run is not whole",
    )?;
    if r.code == 2 && r.stderr.contains("not found") {
        return Ok("rm before the run existed");
    }
    check(
        r.code == 1 && r.stderr.contains("appended to it while"),
        "rm failed without saying a writer was appending",
    )?;
    Ok("delete refused")
}

/// The fixture's turns for the writer of the delete races: 24 quick exec
/// calls, then the end: 28 records.
fn quick_writer() -> Fixture {
    let ids: Vec<String> = (0..24).map(|i| format!("e{i}")).collect();
    let calls: Vec<(&str, &str, serde_json::Value)> = ids
        .iter()
        .map(|id| (id.as_str(), "exec", serde_json::json!({"command": "true"})))
        .collect();
    let f = Fixture::new(&[turn("", &calls), turn("done", &[])]);
    on_jetstream(&f);
    f
}

/// Crashed runs for the resume race, on the stream: `n` runs `c00`...,
/// each a meta record and an assistant record whose one exec call
/// (`e1`) was in flight when its writer died, stamped a year earlier (so
/// no hold covers them), the call appending a line to `count-<run>.txt`.
fn crashed_runs(srv: &NatsServer, f: &Fixture, n: usize) {
    // The template: the writer kills itself inside the call.
    let call = "if [ -e crash ]; then kill -9 $PPID; fi; echo ran >> count-TRY.txt; sleep 0.1";
    f.write_turns(&[
        turn(
            "",
            &[("e1", "exec", serde_json::json!({ "command": call }))],
        ),
        turn("done", &[]),
    ]);
    let file_agent = f.path("file-agent.yaml");
    let text = std::fs::read_to_string(f.path("agent.yaml")).unwrap();
    std::fs::write(
        &file_agent,
        text.replace(
            &format!("{{backend: jetstream, options: {{stream: {STREAM}}}}}"),
            "{backend: file, options: {directory: ./tmpl}}",
        ),
    )
    .unwrap();
    std::fs::write(f.path("crash"), "").unwrap();
    let r = f.fisk(&["run", "--agent", "file-agent.yaml", "--id", "tmpl", "go"]);
    assert_ne!(
        r.code, 0,
        "the template run crashes: {}{}",
        r.stdout, r.stderr
    );
    std::fs::remove_file(f.path("crash")).unwrap();
    let bytes = std::fs::read_to_string(f.path("tmpl/tmpl.json")).unwrap();
    assert_eq!(bytes.lines().count(), 2, "{bytes}");
    let year = &bytes[bytes.find("\"time\":\"").unwrap() + 8..][..4];
    let old = (year.parse::<u32>().unwrap() - 1).to_string();
    let src = tempfile::tempdir().unwrap();
    for i in 0..n {
        let id = format!("c{i:02}");
        let body = bytes
            .replace("tmpl", &id)
            .replace("count-TRY", &format!("count-{id}"))
            .replace(&format!("\"{year}-"), &format!("\"{old}-"));
        std::fs::write(src.path().join(format!("{id}.json")), body).unwrap();
    }
    let r = f.fisk(&[
        "--server",
        &srv.url,
        "migrate",
        "--from",
        &format!("file:{}", s(src.path())),
        "--to",
        "jetstream:SESSIONS",
        "--all",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// `resume`s of one crashed run started together (four, a fraction of a
/// millisecond apart, by a step that changes from try to try): its
/// in-flight tool runs exactly once more, by one of them; every other one
/// stops before running any tool (its claim refused by the fence, or the
/// hold seeing the winner's claim, or the run already ended), and the run
/// holds one claim, one result and its end (issue 18 item 4: a second
/// resume's claim landed while the first was inside the tool, which then
/// ran three times for one crash, 2 of 5 trials; this test went wrong in
/// 9 and 10 of 50 tries before the fix).
#[test]
fn racing_resumes_of_one_crashed_run_run_its_tool_once() {
    let srv = NatsServer::start();
    srv.spec_stream(STREAM, SUBJECT);
    let f = Fixture::new(&[]);
    on_jetstream(&f);
    crashed_runs(&srv, &f, TRIES);
    let (mut bad, mut seen) = (Vec::new(), BTreeMap::<String, usize>::new());
    let started = Instant::now();
    for i in 0..TRIES {
        let id = format!("c{i:02}");
        let resume = || {
            f.command(&["--server", &srv.url, "resume", &id, "--agent", "agent.yaml"])
                .spawn()
                .unwrap()
        };
        let mut children = Vec::new();
        for k in 0..RESUMERS {
            if k > 0 {
                std::thread::sleep(Duration::from_micros(700 * (i as u64 % 8)));
            }
            children.push(resume());
        }
        let runs: Vec<Run> = children.into_iter().map(wait).collect();
        let ran = std::fs::read_to_string(f.path(&format!("count-{id}.txt"))).unwrap_or_default();
        let left = subjects_of(&srv, &id);
        let st = f.fisk(&[
            "--server",
            &srv.url,
            "--store",
            "jetstream:SESSIONS",
            "fold",
            &id,
            "-o",
            "json",
        ]);
        let said: Vec<String> = runs
            .iter()
            .map(|r| format!("{} {}{}", r.code, r.stdout, r.stderr))
            .collect();
        let what = format!("try {i}: ran {ran:?}\n{}\nleft {left:?}", said.join("\n"));
        match judge_resumes(&runs, &ran, &left, &st) {
            Ok(outcome) => *seen.entry(outcome).or_default() += 1,
            Err(why) => bad.push(format!("{why}\n{what}")),
        }
    }
    eprintln!("{TRIES} tries in {:?}: {seen:?}", started.elapsed());
    assert!(
        bad.is_empty(),
        "{} of {TRIES} tries went wrong:\n{}",
        bad.len(),
        bad.join("\n\n")
    );
}

/// How the resumes that lost one try of the resume race stopped, or why
/// that try went wrong.
fn judge_resumes(
    runs: &[Run],
    ran: &str,
    left: &BTreeMap<String, usize>,
    st: &Run,
) -> Result<String, String> {
    let check = |ok: bool, why: &str| if ok { Ok(()) } else { Err(why.to_owned()) };
    check(
        ran == "ran\n",
        "the in-flight tool did not run exactly once more",
    )?;
    let won: Vec<&Run> = runs.iter().filter(|r| r.code == 0).collect();
    check(won.len() == 1, "not exactly one resume ended well")?;
    check(
        won[0].stdout.contains("ended: completed"),
        "the winner did not complete",
    )?;
    // meta, assistant, claim, result, assistant, terminal.
    check(
        seqs_of(left) == (1..=6).collect::<Vec<_>>(),
        "the run is not its 6 records",
    )?;
    check(st.code == 0, "the run does not fold")?;
    let doc = st.json();
    check(
        doc["terminal"]["reason"] == "completed",
        "the run did not end completed",
    )?;
    check(doc["counters"]["tool_calls"] == 1, "more than one result")?;
    let mut how = std::collections::BTreeSet::new();
    for lost in runs.iter().filter(|r| r.code != 0) {
        check(
            lost.code == 1,
            "a resume that lost did not stop with exit 1",
        )?;
        check(
            !lost.stdout.contains("done"),
            "a resume that lost ran a tool",
        )?;
        let said = &lost.stderr;
        how.insert(if said.contains("within the") && said.contains("hold") {
            "held: it saw a claim"
        } else if said.contains("another writer") {
            "its claim refused by the fence"
        } else if said.contains("is completed") {
            "after the end"
        } else {
            return Err("a resume that lost stopped without saying why".into());
        });
    }
    Ok(how.into_iter().collect::<Vec<_>>().join(", "))
}
