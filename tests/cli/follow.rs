//! `show RUN --follow` (issue 27.3): the line transcript of a run while
//! `run` writes it, on both backends, printing records before the run
//! ends and ending by itself at the terminal record; Ctrl-C; journals of
//! both generations appended to by hand, a line cut short waited on and a
//! bad whole line reported.

use crate::nats_support::NatsServer;
use crate::support::*;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A script whose tool calls each take a second: the run is written over
/// about three seconds, one record at a time.
fn slow() -> Fixture {
    let exec = |id: &str, cmd: &str| (id.to_owned(), json!({ "command": cmd }));
    let turns: Vec<String> = [
        ("looking", vec![exec("a", "sleep 1; echo one")]),
        ("", vec![exec("b", "sleep 1; echo two")]),
        ("all done", vec![]),
    ]
    .iter()
    .map(|(text, calls)| {
        let calls: Vec<(&str, &str, serde_json::Value)> = calls
            .iter()
            .map(|(id, input)| (id.as_str(), "exec", input.clone()))
            .collect();
        turn(text, &calls)
    })
    .collect();
    Fixture::new(&turns)
}

/// A process whose standard output is read a line at a time, each line
/// with the moment it came.
struct Reading {
    child: Child,
    lines: mpsc::Receiver<(Instant, String)>,
    got: Vec<(Instant, String)>,
}

impl Reading {
    fn spawn(mut cmd: Command) -> Reading {
        let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if tx.send((Instant::now(), l)).is_err() {
                    break;
                }
            }
        });
        Reading {
            child,
            lines: rx,
            got: Vec::new(),
        }
    }

    /// Wait (at most 20 s) for a line containing `needle`; when it came.
    fn wait_for(&mut self, needle: &str) -> Instant {
        let start = Instant::now();
        loop {
            if let Some((t, _)) = self.got.iter().find(|(_, l)| l.contains(needle)) {
                return *t;
            }
            let left = Duration::from_secs(20).saturating_sub(start.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.got.push(l),
                Err(_) => {
                    let _ = self.child.kill();
                    let mut err = String::new();
                    if let Some(mut e) = self.child.stderr.take() {
                        std::io::Read::read_to_string(&mut e, &mut err).unwrap();
                    }
                    panic!(
                        "{needle:?} never came; got:\n{}\nstderr: {err}",
                        self.text()
                    )
                }
            }
        }
    }

    /// Wait (at most 20 s) for the process to end by itself: its status,
    /// every line it printed, and its standard error.
    fn finish(mut self) -> (i32, String, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the follower did not end by itself; it printed:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.got.push(l);
        }
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
        }
        (status.code().unwrap_or(-1), self.text(), err)
    }

    fn text(&self) -> String {
        self.got.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    fn interrupt(&self) {
        let ok = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

/// Wait (at most 20 s) until `ready` holds.
fn until(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Follow the run `slow` that `run` is writing, with `store` flags: the
/// records come while the run goes on, the follower ends by itself at the
/// terminal, and what it printed is the transcript of the finished run.
/// The follower's standard error.
fn follows_a_run_being_written(f: &Fixture, store: &[&str], started: impl Fn() -> bool) -> String {
    let mut args = store.to_vec();
    args.extend_from_slice(&["run", "--agent", "agent.yaml", "--id", "slow", "go"]);
    let run = f.command(&args).spawn().unwrap();
    until("the run never stored its first record", started);
    let mut args = store.to_vec();
    args.extend_from_slice(&["show", "slow", "--follow"]);
    let mut follower = Reading::spawn(f.command(&args));
    let first = follower.wait_for("seq 2  iteration 0  assistant");
    let out: Run = run.wait_with_output().unwrap().into();
    let ended = Instant::now();
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Two tool calls of a second each came after the first turn.
    assert!(
        ended.duration_since(first) > Duration::from_millis(1500),
        "the first turn was printed only {:?} before the run ended",
        ended.duration_since(first)
    );
    let (code, printed, err) = follower.finish();
    assert_eq!(code, 0, "{err}\n{printed}");
    let mut args = store.to_vec();
    args.extend_from_slice(&["show", "slow", "--transcript", "--no-tui"]);
    let whole = f.fisk(&args);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert_eq!(printed, whole.stdout);
    assert!(printed.contains("[run status: completed]"), "{printed}");
    err
}

#[test]
fn a_run_being_written_is_printed_as_it_goes_and_the_follow_ends_at_its_terminal() {
    let f = slow();
    let journal = f.journal("slow");
    let err = follows_a_run_being_written(&f, &["--state-dir", "runs"], || journal.exists());
    // Its writer held the lock: nothing to say about an idle run.
    assert!(!err.contains("no writer holds"), "{err}");
}

#[test]
fn a_run_being_written_to_a_stream_is_followed_through_an_ordered_consumer() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let f = slow();
    let store = [
        "--server",
        srv.url.as_str(),
        "--store",
        "jetstream:SESSIONS",
    ];
    follows_a_run_being_written(&f, &store, || srv.messages("SESSIONS") > 0);
}

/// A store holding the first `keep` lines of `testdata/<dir>/<run>.json`;
/// the lines it does not hold.
fn part_of(dir: &str, run: &str, keep: usize) -> (Fixture, Vec<String>) {
    let f = Fixture::new(&[]);
    std::fs::create_dir_all(f.runs()).unwrap();
    let text = std::fs::read_to_string(testdata(&format!("{dir}/{run}.json"))).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let head: String = lines[..keep].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(f.journal(run), head).unwrap();
    (f, lines[keep..].to_vec())
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn follower(f: &Fixture, run: &str) -> Reading {
    let runs = f.runs();
    Reading::spawn(f.command(&["--state-dir", s(&runs), "show", run, "--follow"]))
}

#[test]
fn lines_written_by_hand_are_followed_a_line_cut_short_waited_on_in_both_generations() {
    for dir in ["runs-v1", "runs"] {
        let (f, rest) = part_of(dir, "simple-completed", 1);
        let journal = f.journal("simple-completed");
        let mut r = follower(&f, "simple-completed");
        r.wait_for("[prompt]");
        // The assistant record, then half of the terminal record: the half
        // is a write in progress, not a torn line.
        append(&journal, format!("{}\n", rest[0]).as_bytes());
        r.wait_for("iteration");
        let (head, tail) = rest[1].split_at(rest[1].len() / 2);
        append(&journal, head.as_bytes());
        std::thread::sleep(Duration::from_millis(600));
        assert!(
            r.child.try_wait().unwrap().is_none(),
            "{dir}: it ended early"
        );
        append(&journal, format!("{tail}\n").as_bytes());
        let (code, printed, err) = r.finish();
        assert_eq!(code, 0, "{dir}: {err}\n{printed}");
        assert!(!printed.contains("torn"), "{dir}: {printed}");
        let whole = f.store(&["show", "simple-completed", "--transcript", "--no-tui"]);
        assert_eq!(printed, whole.stdout, "{dir}");
    }
}

#[test]
fn a_bad_whole_line_ends_the_follow_naming_the_file_and_line() {
    for dir in ["runs-v1", "runs"] {
        let (f, _) = part_of(dir, "open-no-terminal", 3);
        let journal = f.journal("open-no-terminal");
        let mut r = follower(&f, "open-no-terminal");
        r.wait_for("seq 3");
        append(&journal, b"{not json\n");
        let (code, printed, err) = r.finish();
        assert_eq!(code, 2, "{dir}: {printed}");
        assert!(err.contains("open-no-terminal.json"), "{dir}: {err}");
        assert!(err.contains("line 4"), "{dir}: {err}");
    }
}

#[test]
fn a_journal_replaced_while_followed_is_said() {
    let (f, _) = part_of("runs-v1", "open-no-terminal", 3);
    let journal = f.journal("open-no-terminal");
    let mut r = follower(&f, "open-no-terminal");
    r.wait_for("seq 3");
    let new = f.runs().join("new.tmp");
    std::fs::copy(&journal, &new).unwrap();
    std::fs::rename(&new, &journal).unwrap();
    let (code, _, err) = r.finish();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("was replaced while it was followed"), "{err}");
}

#[test]
fn ctrl_c_ends_the_follow_of_a_run_that_goes_on() {
    for dir in ["runs-v1", "runs"] {
        let f = Fixture::new(&[]);
        std::fs::create_dir_all(f.runs()).unwrap();
        std::fs::copy(
            testdata(&format!("{dir}/open-no-terminal.json")),
            f.journal("open-no-terminal"),
        )
        .unwrap();
        let mut r = follower(&f, "open-no-terminal");
        r.wait_for("DLQ holds 5120 messages");
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            r.child.try_wait().unwrap().is_none(),
            "{dir}: it ended early"
        );
        r.interrupt();
        let (code, printed, err) = r.finish();
        assert_eq!(code, 130, "{dir}: {err}");
        // Nobody holds the run: the follower said so once.
        assert_eq!(
            err.matches("no writer holds run open-no-terminal now")
                .count(),
            1,
            "{dir}: {err}"
        );
        assert!(
            err.contains("stopped following run open-no-terminal"),
            "{dir}: {err}"
        );
        // No closing section: the run has not ended.
        assert!(
            !printed.contains("Where the run stands"),
            "{dir}: {printed}"
        );
    }
}

#[test]
fn a_run_that_has_ended_prints_its_transcript_and_ends() {
    for dir in ["runs-v1", "runs"] {
        let store = testdata(dir);
        let r = fisk(&["--state-dir", s(&store), "show", "tool-batch", "--follow"]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let whole = fisk(&[
            "--state-dir",
            s(&store),
            "show",
            "tool-batch",
            "--transcript",
            "--no-tui",
        ]);
        assert_eq!(r.stdout, whole.stdout, "{dir}");
        let r = fisk(&[
            "--state-dir",
            s(&store),
            "show",
            "tool-batch",
            "--follow",
            "-o",
            "json",
        ]);
        assert_eq!(r.code, 2, "{dir}: {}", r.stderr);
        assert!(r.stderr.contains("drop -o json"), "{dir}: {}", r.stderr);
    }
}

/// Publish `body` as record `seq` of `run` on the test stream's subjects.
fn publish(srv: &NatsServer, run: &str, seq: u64, body: &[u8]) {
    let subject = journal::store::jetstream::subject("fisk.sessions", run, seq);
    let body = body.to_vec();
    srv.with_js(async move |js| {
        js.publish(subject, body.into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
}

#[test]
fn records_published_to_a_stream_are_followed_in_both_generations() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let f = Fixture::new(&[]);
    let js = [
        "--server",
        srv.url.as_str(),
        "--store",
        "jetstream:SESSIONS",
    ];
    for (dir, run) in [("runs-v1", "g1"), ("runs", "g3")] {
        let text = std::fs::read_to_string(testdata(&format!("{dir}/simple-completed.json")))
            .unwrap()
            .replacen(
                "\"run_id\":\"simple-completed\"",
                &format!("\"run_id\":\"{run}\""),
                1,
            );
        let lines: Vec<&str> = text.lines().collect();
        publish(&srv, run, 1, lines[0].as_bytes());
        publish(&srv, run, 2, lines[1].as_bytes());
        let mut args = js.to_vec();
        args.extend_from_slice(&["show", run, "--follow"]);
        let mut r = Reading::spawn(f.command(&args));
        r.wait_for("iteration");
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            r.child.try_wait().unwrap().is_none(),
            "{dir}: it ended early"
        );
        publish(&srv, run, 3, lines[2].as_bytes());
        let (code, printed, err) = r.finish();
        assert_eq!(code, 0, "{dir}: {err}\n{printed}");
        let mut args = js.to_vec();
        args.extend_from_slice(&["show", run, "--transcript", "--no-tui"]);
        let whole = f.fisk(&args);
        assert_eq!(printed, whole.stdout, "{dir}");
        assert!(
            printed.contains("[run status: completed]"),
            "{dir}: {printed}"
        );
    }
    // A body that does not parse: the follow ends naming its subject.
    let text = std::fs::read_to_string(testdata("runs-v1/open-no-terminal.json")).unwrap();
    let meta = text.lines().next().unwrap().replacen(
        "\"run_id\":\"open-no-terminal\"",
        "\"run_id\":\"gbad\"",
        1,
    );
    publish(&srv, "gbad", 1, meta.as_bytes());
    let mut args = js.to_vec();
    args.extend_from_slice(&["show", "gbad", "--follow"]);
    let mut r = Reading::spawn(f.command(&args));
    r.wait_for("[prompt]");
    publish(&srv, "gbad", 2, b"{not json");
    let (code, _, err) = r.finish();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("fisk.sessions.gbad.2"), "{err}");
}

/// The status bar's `block C/N`: the cursor's block and how many there are.
fn block_of(screen: &str, run: &str) -> Option<(usize, usize)> {
    let bar = screen
        .lines()
        .find(|l| l.starts_with(&format!("{run} · block ")))?;
    let rest = bar.split(" · block ").nth(1)?;
    let (c, n) = rest.split_once('/')?;
    let n: String = n.chars().take_while(char::is_ascii_digit).collect();
    Some((c.parse().ok()?, n.parse().ok()?))
}

#[test]
fn the_viewer_follows_the_end_while_its_cursor_is_on_the_last_block() {
    let run = "simple-completed";
    let (f, rest) = part_of("runs-v1", run, 1);
    let journal = f.journal(run);
    let t = crate::viewer::Tmux::start(100, 30);
    t.type_line(&format!(
        "{} --state-dir {} show {run} --transcript --follow; echo \"exit=$?\"",
        s(&bin()),
        s(&f.runs())
    ));
    t.wait_for("the viewer's first screen", |sc| {
        sc.contains("[prompt]") && block_of(sc, run) == Some((1, 1))
    });
    // The cursor is on the last block: it moves to the new last one.
    append(&journal, format!("{}\n", rest[0]).as_bytes());
    let sc = t.wait_for("the new turn, under the cursor", |sc| {
        block_of(sc, run).is_some_and(|(c, n)| n > 1 && c == n)
    });
    assert!(sc.contains("[text]"), "{sc}");
    // Away from the end, the cursor stays where it is as blocks come.
    t.keys(&["g"]);
    t.wait_for("the cursor on the first block", |sc| {
        block_of(sc, run).is_some_and(|(c, _)| c == 1)
    });
    let (_, before) = block_of(&t.screen(), run).unwrap();
    append(&journal, format!("{}\n", rest[1]).as_bytes());
    t.wait_for(
        "the terminal and the closing section, the cursor kept",
        |sc| block_of(sc, run).is_some_and(|(c, n)| c == 1 && n > before),
    );
    t.keys(&["G"]);
    let sc = t.wait_for("the end", |sc| sc.contains("[run status: completed]"));
    assert!(sc.contains("[terminal completed]"), "{sc}");
    t.keys(&["q"]);
    t.wait_for("the viewer to leave with status 0", |sc| {
        sc.contains("exit=0")
    });
}

#[test]
fn a_journal_file_outside_a_store_is_followed_with_file() {
    for dir in ["runs-v1", "runs"] {
        let (f, rest) = part_of(dir, "simple-completed", 2);
        let copy = f.path("copied-off-host.jsonl");
        std::fs::rename(f.journal("simple-completed"), &copy).unwrap();
        let mut r = Reading::spawn(f.command(&["show", "--follow", "--file", s(&copy)]));
        r.wait_for("iteration");
        append(&copy, format!("{}\n", rest[0]).as_bytes());
        let (code, printed, err) = r.finish();
        assert_eq!(code, 0, "{dir}: {err}\n{printed}");
        let whole = f.fisk(&["show", "--transcript", "--no-tui", "--file", s(&copy)]);
        assert_eq!(whole.code, 0, "{dir}: {}", whole.stderr);
        assert_eq!(printed, whole.stdout, "{dir}");
        assert!(
            printed.starts_with("Transcript of simple-completed"),
            "{printed}"
        );
    }
}

#[test]
fn the_viewer_of_a_run_that_ends_waiting_prints_the_answer_command_when_it_leaves() {
    let run = "deferral-waiting";
    let (f, rest) = part_of("runs", run, 4);
    let t = crate::viewer::Tmux::start(100, 30);
    t.type_line(&format!(
        "{} --state-dir {} show {run} --transcript --follow",
        s(&bin()),
        s(&f.runs())
    ));
    t.wait_for("the viewer's first screen", |sc| sc.contains("[prompt]"));
    assert_eq!(rest.len(), 1);
    append(&f.journal(run), format!("{}\n", rest[0]).as_bytes());
    t.wait_for("the closing section", |sc| {
        sc.contains("[waiting on toolu_")
    });
    t.keys(&["q"]);
    let sc = t.wait_for("the answer command", |sc| sc.contains("next: "));
    assert!(sc.contains(&format!("answer {run} toolu_")), "{sc}");
}

#[test]
fn an_upgrade_while_following_ends_the_follow_saying_so_on_both_backends() {
    // File: the upgrade writes the journal anew and renames it over.
    let f = Fixture::new(&[]);
    std::fs::create_dir_all(f.runs()).unwrap();
    std::fs::copy(
        testdata("runs/open-no-terminal.json"),
        f.journal("open-no-terminal"),
    )
    .unwrap();
    let mut r = follower(&f, "open-no-terminal");
    r.wait_for("DLQ holds 5120 messages");
    let up = f.store(&["upgrade", "open-no-terminal"]);
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let (code, _, err) = r.finish();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("was replaced while it was followed"), "{err}");

    // JetStream: the upgrade stores the meta record again.
    let srv = NatsServer::start();
    srv.raw_stream(async_nats::jetstream::stream::Config {
        allow_rollup: true,
        ..journal::store::jetstream::spec_config("SESSIONS", "fisk.sessions.>")
    });
    let src = store_copy("runs");
    migrate_via(
        f.dir.path(),
        &srv.url,
        &format!("file:{}", s(src.path())),
        "jetstream:SESSIONS",
        &["open-no-terminal"],
    );
    let js = [
        "--server",
        srv.url.as_str(),
        "--store",
        "jetstream:SESSIONS",
    ];
    let mut args = js.to_vec();
    args.extend_from_slice(&["show", "open-no-terminal", "--follow"]);
    let mut r = Reading::spawn(f.command(&args));
    r.wait_for("DLQ holds 5120 messages");
    let mut args = js.to_vec();
    // The run was stored a moment ago: no hold, or it is live.
    args.extend_from_slice(&["--hold", "0s", "upgrade", "open-no-terminal"]);
    let up = f.fisk(&args);
    assert_eq!(up.code, 0, "{}{}", up.stdout, up.stderr);
    let (code, _, err) = r.finish();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("was stored again"), "{err}");
}

#[test]
fn the_viewer_follows_a_run_on_a_stream() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let run = "simple-completed";
    let text = std::fs::read_to_string(testdata(&format!("runs/{run}.json"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    publish(&srv, run, 1, lines[0].as_bytes());
    let t = crate::viewer::Tmux::start(100, 30);
    t.type_line(&format!(
        "{} --server {} --store jetstream:SESSIONS show {run} --transcript --follow; echo \"exit=$?\"",
        s(&bin()),
        srv.url
    ));
    t.wait_for("the viewer's first screen", |sc| {
        sc.contains("[prompt]") && block_of(sc, run) == Some((1, 1))
    });
    publish(&srv, run, 2, lines[1].as_bytes());
    t.wait_for("the new turn, under the cursor", |sc| {
        block_of(sc, run).is_some_and(|(c, n)| n > 1 && c == n)
    });
    publish(&srv, run, 3, lines[2].as_bytes());
    let sc = t.wait_for("the end, under the cursor", |sc| {
        sc.contains("[run status: completed]") && block_of(sc, run).is_some_and(|(c, n)| c == n)
    });
    assert!(sc.contains("[terminal completed]"), "{sc}");
    t.keys(&["q"]);
    t.wait_for("the viewer to leave with status 0", |sc| {
        sc.contains("exit=0")
    });
}

/// Issue 36: the viewer following a run on a stream says on its status
/// bar that the server does not answer, and that it answers again, as the
/// line transcript says it on standard error; then it goes on.
#[test]
fn the_viewer_says_when_the_server_is_gone_and_back() {
    let mut srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let run = "simple-completed";
    let text = std::fs::read_to_string(testdata(&format!("runs/{run}.json"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    publish(&srv, run, 1, lines[0].as_bytes());
    let t = crate::viewer::Tmux::start(100, 30);
    t.type_line(&format!(
        "{} --server {} --store jetstream:SESSIONS show {run} --transcript --follow; echo \"exit=$?\"",
        s(&bin()),
        srv.url
    ));
    t.wait_for("the viewer's first screen", |sc| {
        sc.contains("[prompt]") && block_of(sc, run) == Some((1, 1))
    });
    srv.stop();
    t.wait_for("the status bar saying the server does not answer", |sc| {
        sc.contains("waiting for the server")
    });
    srv.restart();
    t.wait_for("the status bar saying it answers again", |sc| {
        sc.contains("the server answers again")
    });
    publish(&srv, run, 2, lines[1].as_bytes());
    publish(&srv, run, 3, lines[2].as_bytes());
    t.wait_for("the end, under the cursor", |sc| {
        sc.contains("[run status: completed]") && block_of(sc, run).is_some_and(|(c, n)| c == n)
    });
    t.keys(&["q"]);
    t.wait_for("the viewer to leave with status 0", |sc| {
        sc.contains("exit=0")
    });
}

/// A follower whose standard error is read a line at a time too.
struct Watched {
    reading: Reading,
    errors: mpsc::Receiver<String>,
    said: Vec<String>,
}

impl Watched {
    fn spawn(cmd: Command) -> Watched {
        let mut reading = Reading::spawn(cmd);
        let err = reading.child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Watched {
            reading,
            errors: rx,
            said: Vec::new(),
        }
    }

    /// Wait (at most `secs`) for standard error to say `needle` in a line
    /// not seen before; how long it took.
    fn says(&mut self, needle: &str, secs: u64) -> Duration {
        let start = Instant::now();
        let from = self.said.len();
        loop {
            if self.said.iter().skip(from).any(|l| l.contains(needle)) {
                return start.elapsed();
            }
            let left = Duration::from_secs(secs).saturating_sub(start.elapsed());
            match self.errors.recv_timeout(left) {
                Ok(l) => self.said.push(l),
                Err(_) => {
                    let _ = self.reading.child.kill();
                    panic!(
                        "stderr never said {needle:?} within {secs}s; it said:\n{}\nstdout:\n{}",
                        self.said.join("\n"),
                        self.reading.text()
                    )
                }
            }
        }
    }

    /// Wait for the process to end: its status and standard output.
    fn finish(mut self) -> (i32, String, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.reading.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the follower did not end; it printed:\n{}",
                self.reading.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(l) = self.reading.lines.recv_timeout(Duration::from_secs(2)) {
            self.reading.got.push(l);
        }
        while let Ok(l) = self.errors.recv_timeout(Duration::from_millis(500)) {
            self.said.push(l);
        }
        (
            status.code().unwrap_or(-1),
            self.reading.text(),
            self.said.join("\n"),
        )
    }
}

/// Issue 36.5: `show --follow` on JetStream used to wait in silence when
/// the server froze or died or the stream was deleted, and to fail with
/// "consumer not found" once the server was back. Now it says the server
/// does not answer within a few seconds, goes on once it does (a frozen
/// one thawed, a killed one restarted), and ends saying so when the
/// stream is deleted.
#[test]
fn a_follow_on_jetstream_says_when_the_server_is_gone_and_goes_on_when_it_is_back() {
    let mut srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let f = Fixture::new(&[]);
    let text = std::fs::read_to_string(testdata("runs-v1/tool-batch.json")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 5);
    for (i, line) in lines.iter().take(2).enumerate() {
        publish(&srv, "tb", i as u64 + 1, line.as_bytes());
    }
    let mut w = follow_run(&f, &srv, "tb");
    w.reading.wait_for("iteration");
    // Frozen: said within about one timeout, then gone on from.
    {
        let _frozen = srv.freeze();
        let took = w.says("waiting for the server", 20);
        eprintln!("frozen: said after {took:?}");
        assert!(took < Duration::from_secs(9), "{took:?}");
    }
    w.says("the server answers again", 20);
    publish(&srv, "tb", 3, lines[2].as_bytes());
    // Killed and restarted (the same store): gone on from, no "consumer
    // not found".
    srv.stop();
    let took = w.says("waiting for the server", 20);
    eprintln!("killed: said after {took:?}");
    srv.restart();
    w.says("the server answers again", 30);
    for (i, line) in lines.iter().enumerate().skip(3) {
        publish(&srv, "tb", i as u64 + 1, line.as_bytes());
    }
    let (code, printed, said) = w.finish();
    assert_eq!(code, 0, "{said}\n{printed}");
    assert!(!said.contains("consumer not found"), "{said}");
    let whole = f.fisk(&[
        "--server",
        &srv.url,
        "--store",
        "jetstream:SESSIONS",
        "show",
        "tb",
        "--transcript",
        "--no-tui",
    ]);
    assert_eq!(printed, whole.stdout);
    // The stream deleted under a follow: it ends, saying so.
    publish(&srv, "open", 1, lines[0].as_bytes());
    publish(&srv, "open", 2, lines[1].as_bytes());
    let mut w = follow_run(&f, &srv, "open");
    w.reading.wait_for("iteration");
    srv.with_js(async |js| {
        js.delete_stream("SESSIONS").await.unwrap();
    });
    let (code, _, said) = w.finish();
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("stream SESSIONS was deleted while the run was followed"),
        "{said}"
    );
}

fn follow_run(f: &Fixture, srv: &NatsServer, run: &str) -> Watched {
    Watched::spawn(f.command(&[
        "--server",
        &srv.url,
        "--store",
        "jetstream:SESSIONS",
        "show",
        run,
        "--follow",
    ]))
}
