//! Docs that are generated must be current: man pages and completions.

use crate::support::*;

#[test]
fn committed_man_pages_are_current() {
    let fresh = tempfile::tempdir().unwrap();
    let r = fisk(&["man", s(fresh.path())]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let committed = repo().join("man");
    let mut names: Vec<String> = std::fs::read_dir(fresh.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 5);
    for name in &names {
        let want = std::fs::read(fresh.path().join(name)).unwrap();
        let have = std::fs::read(committed.join(name)).unwrap_or_default();
        assert!(
            want == have,
            "man/{name} is stale or missing: run `cargo run -- man man` and commit the result"
        );
    }
    let mut stale = Vec::new();
    for e in std::fs::read_dir(&committed).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(&n) {
            stale.push(n);
        }
    }
    assert!(
        stale.is_empty(),
        "pages for commands that no longer exist: {stale:?}"
    );
}

#[test]
fn completions_are_generated_for_common_shells() {
    // Each shell's script registers the binary as its own completer (the
    // candidates come from `COMPLETE=<shell> fisk-admin -- ...`).
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = fisk(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(
            r.stdout.contains("COMPLETE") && r.stdout.contains("fisk-admin"),
            "{shell}: {}",
            r.stdout
        );
    }
    // The protocol itself, as fish speaks it: subcommands complete.
    let out = std::process::Command::new(bin())
        .args(["--", "fisk-admin", "verif"])
        .env("COMPLETE", "fish")
        .output()
        .unwrap();
    let got = String::from_utf8_lossy(&out.stdout);
    assert!(got.lines().any(|l| l.starts_with("verify")), "{got}");
}

/// What a real bash offers for the last word of `line` (words split at
/// single spaces), through the script `completions bash` prints, sourced
/// as a user sources it, with `fisk-admin` found on PATH: the shell
/// protocol end to end.
fn bash_complete(line: &str) -> Vec<String> {
    let bindir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(bin(), bindir.path().join("fisk-admin")).unwrap();
    let words: Vec<&str> = line.split(' ').collect();
    // Each word quoted, so that an empty last word (`answer RUN <TAB>`)
    // is a word of the array, as bash makes it.
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source <(fisk-admin completions bash) || exit 9
         COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9
         _clap_complete_fisk_admin fisk-admin '{}' '{}'
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "-c", &script])
        .env(
            "PATH",
            format!("{}:{}", s(bindir.path()), std::env::var("PATH").unwrap()),
        )
        .env_remove("NATS_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// b-28, the brief: completion is dynamic. The script `completions bash`
/// prints, sourced in a real bash, completes `show defer<TAB>` with the
/// run ids of the store the command line names, through the binary
/// itself; and a subcommand name still completes.
#[test]
fn bash_completion_offers_the_stores_run_ids() {
    let store = store_copy("runs");
    let complete = bash_complete;
    let d = s(store.path()).to_owned();
    let got = complete(&format!("fisk-admin --state-dir {d} show defer"));
    assert_eq!(
        got,
        [
            "deferral-answered",
            "deferral-answered-unresumed",
            "deferral-partly-answered",
            "deferral-waiting"
        ],
        "{got:?}"
    );
    let got = complete(&format!("fisk-admin --state-dir {d} rm tool"));
    assert_eq!(got, ["tool-batch"], "{got:?}");
    let got = complete("fisk-admin verif");
    assert!(got.iter().any(|c| c == "verify"), "{got:?}");
    // The store an agent file chooses (`--config`, `resume --agent`), under
    // its root directory, as the commands themselves choose it.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("runs")).unwrap();
    std::fs::copy(
        testdata("runs/tool-batch.json"),
        root.path().join("runs/tool-batch.json"),
    )
    .unwrap();
    let agent = root.path().join("agent.yaml");
    std::fs::write(
        &agent,
        format!(
            "llm: {{provider: script, model: m, script: t.jsonl}}\nroot_directory: {}\n",
            s(root.path())
        ),
    )
    .unwrap();
    let a = s(&agent).to_owned();
    let got = complete(&format!("fisk-admin --config {a} show tool"));
    assert_eq!(got, ["tool-batch"], "{got:?}");
    let got = complete(&format!("fisk-admin resume --agent {a} tool"));
    assert_eq!(got, ["tool-batch"], "{got:?}");
}

/// b-28: the example agent in examples/agent works as its comments say:
/// run, answer the deferral by hand, resume to the end.
#[test]
fn the_example_agent_runs_waits_and_resumes_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["agent.yaml", "turns.jsonl"] {
        std::fs::copy(repo().join("examples/agent").join(f), dir.path().join(f)).unwrap();
    }
    let run = |args: &[&str], stdin: Option<&[u8]>| {
        let out = std::process::Command::new(bin())
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .stdin(if stdin.is_some() {
                std::process::Stdio::piped()
            } else {
                std::process::Stdio::null()
            })
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = out;
        if let Some(b) = stdin {
            use std::io::Write;
            out.stdin.take().unwrap().write_all(b).unwrap();
        }
        out.wait_with_output().unwrap()
    };
    let r = run(
        &["run", "--agent", "agent.yaml", "--id", "ex", "check ORDERS"],
        None,
    );
    let said = String::from_utf8_lossy(&r.stdout);
    assert!(
        said.contains("waiting on toolu_ex_2") && said.contains("CHG-1042"),
        "{r:?}"
    );
    let a = run(
        &["--config", "agent.yaml", "answer", "ex"],
        Some(b"approved"),
    );
    assert!(a.status.success(), "{a:?}");
    let z = run(&["--config", "agent.yaml", "resume", "ex"], None);
    assert!(z.status.success(), "{z:?}");
    assert!(
        String::from_utf8_lossy(&z.stdout).contains("ended: completed"),
        "{z:?}"
    );
}

/// A stream subject ends in `>`, which bash reads as a redirect when it is
/// not quoted (issue 23.7): help, README and the man pages write it quoted,
/// and no value name carries a `>`.
#[test]
fn a_subject_with_a_greater_than_is_always_written_quoted() {
    let help = fisk(&["stream", "create", "-h"]).stdout;
    assert!(help.contains("--subject <SUBJECT>"), "{help}");
    assert!(help.contains("--subject 'fisk.sessions.>'"), "{help}");
    let mut texts = vec![("stream create -h".to_owned(), help)];
    texts.push((
        "README.md".into(),
        std::fs::read_to_string(repo().join("README.md")).unwrap(),
    ));
    for e in std::fs::read_dir(repo().join("man")).unwrap() {
        let p = e.unwrap().path();
        texts.push((
            p.display().to_string(),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    for (name, text) in texts {
        for (i, _) in text.match_indices(".>") {
            // Only a subject given to --subject: `--subject X.>` unquoted.
            let before = &text[..i];
            let word_start = before.rfind([' ', '`', '<', '\n']).map_or(0, |p| p + 1);
            let flag = before[..word_start].trim_end();
            if flag.ends_with("--subject") {
                assert!(
                    before[word_start..].starts_with('\''),
                    "{name}: an unquoted subject at byte {i}: {}",
                    &text[word_start.saturating_sub(20)..(i + 2).min(text.len())]
                );
            }
        }
        assert!(!text.contains("<PREFIX.>>"), "{name}");
    }
}

/// Issue 39, c-29 and c-30: the help groups the commands by what an
/// operator is doing, every command's help and man page has examples
/// (each a command that parses), a synopsis names each option's value, a
/// command's short help leaves the connection flags out, and `man` writes
/// nothing without a directory (at b926494: one flat list of 29, no
/// EXAMPLES anywhere, `[--content]`, `completions -h` listing --password,
/// and `man` writing ./man).
#[test]
fn help_is_grouped_with_examples_and_synopses_name_their_values() {
    let top = fisk(&["--help"]);
    for group in ["Inspect:", "Act on a run:", "Housekeeping:", "Stores:"] {
        assert!(
            top.stdout.contains(&format!("\n{group}\n")),
            "{group}: {}",
            top.stdout
        );
    }
    assert!(!top.stdout.contains("\nCommands:\n"), "{}", top.stdout);
    let names: Vec<String> = top
        .stdout
        .lines()
        .take_while(|l| *l != "Options:")
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    assert!(names.len() >= 28, "{names:?}");
    for name in &names {
        let h = fisk(&[name, "--help"]);
        assert_eq!(h.code, 0, "{name}");
        let (_, examples) = h
            .stdout
            .split_once("Examples:\n")
            .unwrap_or_else(|| panic!("{name}: no examples:\n{}", h.stdout));
        // Each example is a comment, then a command that parses.
        let cmds: Vec<&str> = examples
            .lines()
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .filter(|l| !l.starts_with('#'))
            .collect();
        assert!(!cmds.is_empty(), "{name}");
        for c in cmds {
            // The fisk-admin of a pipeline, without a redirection.
            let c = c
                .split(" | ")
                .map(str::trim)
                .find(|p| p.starts_with("fisk-admin "))
                .unwrap_or(c);
            // A command substitution: the command inside.
            let c = c
                .strip_prefix("source <(")
                .and_then(|c| c.strip_suffix(')'))
                .unwrap_or(c);
            let c = c.split(" > ").next().unwrap();
            let words: Vec<String> = shell_words(c);
            assert_eq!(words[0], "fisk-admin", "{name}: {c}");
            // Parsed as clap parses it (the run may not exist; a usage
            // error is exit 2 with "Usage:" or "error:" from clap).
            let r = fisk(
                &words[1..]
                    .iter()
                    .map(String::as_str)
                    .chain(["--help"])
                    .collect::<Vec<_>>(),
            );
            assert_eq!(r.code, 0, "{name}: {c} does not parse: {}", r.stderr);
        }
        let page =
            std::fs::read_to_string(repo().join(format!("man/fisk-admin-{name}.1"))).unwrap();
        assert!(page.contains(".SH EXAMPLES"), "{name}");
    }
    let page = std::fs::read_to_string(repo().join("man/fisk-admin-answer.1")).unwrap();
    assert!(page.contains("[\\-\\-content <CONTENT>]"), "{page}");
    let short = fisk(&["completions", "-h"]);
    assert!(!short.stdout.contains("--password"), "{}", short.stdout);
    assert!(fisk(&["completions", "--help"])
        .stdout
        .contains("--password"));
    let r = fisk(&["man"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
}

/// The words of a simple command line (single quotes only).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Issue 39, c-33: through the script a user sources (bash),
/// `answer RUN <TAB>` offers the calls waiting on an answer, `approve RUN
/// <TAB>` those waiting on an approval, and the run ids of a JetStream
/// store complete through the connection the words name (at b926494: `--`
/// and nothing).
#[test]
fn completion_offers_waiting_calls_and_jetstream_run_ids() {
    // With an empty word, the flags are offered too: the values alone.
    let complete = |line: &str| -> Vec<String> {
        bash_complete(line)
            .into_iter()
            .filter(|c| !c.starts_with('-'))
            .collect()
    };
    let store = store_copy("runs-v1");
    let d = s(store.path()).to_owned();
    let got = complete(&format!(
        "fisk-admin --state-dir {d} answer deferral-waiting "
    ));
    assert_eq!(got, ["toolu_01UKhS4K7g2wv63auxXVYqVE"], "{got:?}");
    let got = complete(&format!(
        "fisk-admin --state-dir {d} approve deferral-waiting "
    ));
    assert!(got.is_empty(), "no approval waits: {got:?}");
    // A run the runner suspended on a gated call: its call is offered to
    // approve, not to answer.
    let f = exec_then_done("true");
    f.gate_exec();
    let r = f.fisk(&["run", "--agent", "agent.yaml", "--id", "gate", "go"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let runs = s(&f.runs()).to_owned();
    let got = complete(&format!("fisk-admin --state-dir {runs} approve gate "));
    assert_eq!(got, ["t1"], "{got:?}");
    let got = complete(&format!("fisk-admin --state-dir {runs} answer gate "));
    assert!(got.is_empty(), "no answer waits: {got:?}");
    // JetStream: the run ids through the server the words name.
    let srv = crate::nats_support::NatsServer::start();
    srv.spec_stream("FISK", "fisk.sessions.>");
    let home = tempfile::tempdir().unwrap();
    migrate_via(
        home.path(),
        &srv.url,
        &format!("file:{d}"),
        "jetstream:FISK",
        &["deferral-waiting", "tool-batch"],
    );
    let js = format!("fisk-admin --store jetstream:FISK --server {}", srv.url);
    let got = complete(&format!("{js} show defer"));
    assert_eq!(got, ["deferral-waiting"], "{got:?}");
    let got = complete(&format!("{js} answer deferral-waiting "));
    assert_eq!(got, ["toolu_01UKhS4K7g2wv63auxXVYqVE"], "{got:?}");
    // A server that is not there: nothing offered, and soon (bounded).
    let started = std::time::Instant::now();
    let got = complete("fisk-admin --store jetstream:FISK --server nats://127.0.0.1:9 show defer");
    assert!(got.is_empty(), "{got:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "completion waited {:?} on a server that is not there",
        started.elapsed()
    );
}
