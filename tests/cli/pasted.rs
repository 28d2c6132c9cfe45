//! Every command the tool prints, pasted (issue 23 item 1): an operator's
//! night is driven through the commands that print hints (run, show, the
//! transcript, answer, approve, resume and their refusals, verify and
//! repair on damaged runs), every printed command is collected (text lines
//! and JSON argv arrays) and run exactly as printed, with nothing on
//! standard input, as a paste into a script would. Afterwards no journal
//! may hold a placeholder as an answer, a new turn or an approved tool, and
//! no paste may have made a file named like one (a `<FILE>` redirect).

use crate::support::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Words a printed command must never make the tool store.
const PLACEHOLDERS: &[&str] = &[
    "TEXT",
    "ANSWER",
    "CONTENT",
    "NAME",
    "TOOL",
    "FILE",
    "PATH",
    "RUN",
    "PROMPT",
    "URI",
    "ID",
    "TOOL_USE_ID",
    "STREAM",
    "DIR",
];

fn exec(id: &'static str, cmd: &str) -> (&'static str, &'static str, Value) {
    (id, "exec", json!({"command": cmd}))
}

fn defer(id: &'static str, note: &str) -> (&'static str, &'static str, Value) {
    (id, "defer", json!({"note": note, "handle": "h-1"}))
}

/// The commands in a text output: every `fisk-admin ...` in backticks, and
/// every line that starts with one after a label (`next:`, `then:`,
/// `answer with:`, ...), each without the note on what it still needs.
fn text_commands(out: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, part) in out.split('`').enumerate() {
        if i % 2 == 1 && part.starts_with("fisk-admin ") {
            found.push(part.to_owned());
        }
    }
    for line in out.lines() {
        if line.contains('`') {
            continue;
        }
        if let Some(at) = line.find("fisk-admin ") {
            let before = &line[..at];
            // Only a command that stands alone after its label.
            if before.trim().is_empty() || before.trim_end().ends_with(':') {
                let cmd = &line[at..];
                let cmd = cmd.split("  (").next().unwrap_or(cmd).trim_end();
                found.push(cmd.to_owned());
            }
        }
    }
    found
}

/// Every `{argv, supply}` in a JSON document.
fn json_commands(v: &Value, found: &mut Vec<(Vec<String>, Vec<String>)>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::Array(argv)), Some(Value::Array(supply))) =
                (m.get("argv"), m.get("supply"))
            {
                found.push((
                    argv.iter()
                        .map(|a| a.as_str().unwrap().to_owned())
                        .collect(),
                    supply
                        .iter()
                        .map(|a| a.as_str().unwrap().to_owned())
                        .collect(),
                ));
            }
            m.values().for_each(|x| json_commands(x, found));
        }
        Value::Array(a) => a.iter().for_each(|x| json_commands(x, found)),
        _ => {}
    }
}

/// Every JSON document in an output (one document, or JSON lines).
fn json_docs(out: &str) -> Vec<Value> {
    match serde_json::from_str(out) {
        Ok(v) => vec![v],
        Err(_) => out
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    }
}

/// What a night's commands print, collected.
#[derive(Default)]
struct Printed {
    text: BTreeSet<String>,
    argv: BTreeSet<(Vec<String>, Vec<String>)>,
}

impl Printed {
    fn take(&mut self, r: &Run) {
        for out in [&r.stdout, &r.stderr] {
            self.text.extend(text_commands(out));
            let mut found = Vec::new();
            json_docs(out)
                .iter()
                .for_each(|d| json_commands(d, &mut found));
            self.argv.extend(found);
        }
    }
}

/// What a journal stores that an operator typed: answers' content, new
/// user turns' text, approved tools and call ids.
fn typed(f: &Fixture) -> Vec<String> {
    let mut typed = Vec::new();
    let Ok(dir) = std::fs::read_dir(f.runs()) else {
        return typed;
    };
    for e in dir {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap_or_default().lines() {
            let Ok(r) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let Some(c) = r.pointer("/tool_result/result/content") {
                typed.push(c.as_str().map_or(c.to_string(), str::to_owned));
            }
            if let Some(t) = r.pointer("/decision/tool") {
                typed.push(t.as_str().unwrap_or_default().to_owned());
            }
            if let Some(t) = r.pointer("/call_approval/tool_use_id") {
                typed.push(t.as_str().unwrap_or_default().to_owned());
            }
            if let Some(blocks) = r.pointer("/user/message/content").and_then(Value::as_array) {
                for b in blocks {
                    if let Some(t) = b.pointer("/text/text").and_then(Value::as_str) {
                        typed.push(t.to_owned());
                    }
                }
            }
        }
    }
    typed
}

#[test]
fn every_printed_command_runs_as_printed_or_cannot_and_stores_no_placeholder() {
    // A run that defers (twice: `answer RUN` needs the id), one gated on
    // exec, one that completes, and a copy of every kind of damage.
    let f = Fixture::new(&[
        turn("", &[exec("x1", "true"), defer("d1", "sign off")]),
        turn("", &[defer("d2", "again"), defer("d3", "and again")]),
        turn("done", &[]),
    ]);
    let agent = std::fs::read_to_string(f.path("agent.yaml")).unwrap();
    std::fs::write(f.path("gated.yaml"), format!("{agent}gate: [exec]\n")).unwrap();
    std::fs::write(
        f.path("gturns.jsonl"),
        [
            turn("", &[exec("g1", "true"), exec("g2", "true")]),
            turn("done", &[]),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let gated = std::fs::read_to_string(f.path("gated.yaml"))
        .unwrap()
        .replace("turns.jsonl", "gturns.jsonl");
    std::fs::write(f.path("gated.yaml"), gated).unwrap();
    std::fs::write(f.path("dturns.jsonl"), turn("done", &[]) + "\n").unwrap();
    let done = agent.replace("turns.jsonl", "dturns.jsonl");
    std::fs::write(f.path("done.yaml"), done).unwrap();

    let mut printed = Printed::default();
    let mut night = |args: &[&str]| {
        let r = f.fisk(args);
        assert_ne!(r.code, 101, "{args:?} panicked: {}", r.stderr);
        printed.take(&r);
        r
    };
    for fmt in ["text", "json"] {
        let d = format!("d-{fmt}");
        let g = format!("g-{fmt}");
        let c = format!("c-{fmt}");
        night(&["-o", fmt, "run", "--agent", "agent.yaml", "--id", &d, "go"]);
        night(&["-o", fmt, "run", "--agent", "gated.yaml", "--id", &g, "go"]);
        night(&["-o", fmt, "run", "--agent", "done.yaml", "--id", &c, "go"]);
        // Where the runs stand, and the refusals an operator meets.
        for run in [&d, &g, &c] {
            night(&["--state-dir", "runs", "-o", fmt, "show", run]);
            night(&[
                "--state-dir",
                "runs",
                "show",
                run,
                "--transcript",
                "--no-tui",
            ]);
            night(&["--state-dir", "runs", "-o", fmt, "resume", run]);
            night(&["-o", fmt, "resume", run, "--agent", "agent.yaml"]);
            night(&["--state-dir", "runs", "-o", fmt, "answer", run]);
            night(&["--state-dir", "runs", "-o", fmt, "answer", run, "x1"]);
            night(&["--state-dir", "runs", "-o", fmt, "approve", run, "d1"]);
        }
        // An answer given, and its own hints.
        night(&[
            "--state-dir",
            "runs",
            "-o",
            fmt,
            "answer",
            &d,
            "d1",
            "--content",
            "ok",
        ]);
        night(&["--state-dir", "runs", "-o", fmt, "approve", &g, "g1"]);
        night(&["-o", fmt, "resume", &c, "--agent", "done.yaml"]);
    }
    // Damage: verify's fixes, repair's and show's help.
    let damaged = store_copy("damaged");
    let dd = s(damaged.path());
    for run in ["torn-tail", "interior-corruption", "seq-gap", "no-meta"] {
        night(&["--state-dir", dd, "show", run]);
        night(&["--state-dir", dd, "repair", run, "--dry-run"]);
    }
    night(&["--state-dir", dd, "verify"]);
    night(&["--state-dir", dd, "-o", "json", "verify"]);
    night(&["--state-dir", "runs", "show", "no-such-run"]);

    assert!(
        printed.text.len() >= 20 && printed.argv.len() >= 6,
        "too few commands collected to mean anything: {} text, {} argv",
        printed.text.len(),
        printed.argv.len()
    );
    let needs_input: Vec<&(Vec<String>, Vec<String>)> = printed
        .argv
        .iter()
        .filter(|(_, supply)| !supply.is_empty())
        .collect();
    assert!(
        !needs_input.is_empty(),
        "an answer's command says in JSON what it still needs"
    );

    // Pasted, each exactly as printed, with nothing on standard input.
    for line in &printed.text {
        let r = f.paste(line);
        assert_ne!(r.code, 101, "{line} panicked: {}", r.stderr);
        assert!(
            !r.stderr.contains("Usage:") || line.ends_with("--subject"),
            "{line}: printed, but the tool does not take it: {}",
            r.stderr
        );
        // It finds the store and the run it names (a hint without the
        // store flags reaches the default store instead).
        assert!(
            !r.stderr.contains(" not found at "),
            "{line}: printed, but pasted it finds no such run: {}",
            r.stderr
        );
    }
    for (argv, supply) in &printed.argv {
        let (first, rest) = argv.split_first().unwrap();
        assert_eq!(first, "fisk-admin");
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        let r = f.fisk(&rest);
        assert_ne!(r.code, 101, "{argv:?} panicked: {}", r.stderr);
        assert!(
            !r.stderr.contains("Usage:"),
            "{argv:?} ({supply:?}): printed, but the tool does not take it: {}",
            r.stderr
        );
        assert!(
            !r.stderr.contains(" not found at "),
            "{argv:?}: printed, but run as printed it finds no such run: {}",
            r.stderr
        );
    }

    // Nothing typed is a placeholder.
    for t in typed(&f) {
        assert!(
            !PLACEHOLDERS.contains(&t.trim()),
            "a pasted command stored the placeholder {t:?}"
        );
    }
    // No paste made a file (a redirect) beside the fixture's own.
    let made: Vec<String> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            ![
                "agent.yaml",
                "gated.yaml",
                "done.yaml",
                "turns.jsonl",
                "gturns.jsonl",
                "dturns.jsonl",
                "runs",
                "state",
                ".paste-bin",
                "salvaged",
            ]
            .contains(&n.as_str())
        })
        .collect();
    assert!(made.is_empty(), "pasted commands made files: {made:?}");
}
