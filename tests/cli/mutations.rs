//! The mutation sweep through the real binary: a few hundred damaged
//! copies of the healthy runs (the same kinds of damage as the in-process
//! sweep, `journal/tests/mutations.rs`) in one store, read by every
//! reading command. None may panic (exit 101, "panicked" on stderr) or be
//! killed; text output must carry no raw control character (CLI.md:
//! "control characters and escape sequences are neutralised before
//! printing"); JSON output must parse; and the store must be byte for byte
//! what it was (CLI.md: the tool "never changes a journal it was only asked
//! to read").

#[path = "../../journal/tests/all/mutate/mod.rs"]
pub(crate) mod mutate;

use crate::support::*;
use mutate::{Mutant, Plan, Rng};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Mutex;

/// Mutants per healthy run, beside the one with every value hostile.
const PER_RUN: usize = 10;
/// Mutants also read one by one with `show`, `fold` and `validate` (and
/// pairs of them with `diff`).
const SAMPLED: usize = 54;

/// A stand-in run id of the final id's length, so naming a mutant after
/// it is made shifts no byte a mutation was placed at.
fn placeholder(run: &str) -> String {
    format!("{run}-mXX")
}

/// The mutants in the store: `(id, mutant)`, ids valid and unique.
fn build() -> Vec<(String, Mutant)> {
    let plan = Plan {
        flips: 3,
        truncations: 2,
        every_cut_in_last_line: false,
        inserts: 1,
        utf8: 1,
        seq_lines: 1,
        line_edits: 1,
        values: 1,
        hostile_all: true,
    };
    let mut rng = Rng(0xc11_5eed);
    let mut out = Vec::new();
    for (i, (run, bytes)) in mutate::seeds().iter().enumerate() {
        // meta.run_id names the id the mutant is stored under, so a
        // mismatch finding means the mutation reached the run id.
        let from = format!("\"run_id\":\"{run}\"");
        let to = format!("\"run_id\":\"{}\"", placeholder(run));
        let text = String::from_utf8_lossy(bytes).replacen(&from, &to, 1);
        let mut all = mutate::mutants(run, text.as_bytes(), plan, 0xc11 ^ i as u64);
        let hostile = all.pop().expect("the hostile-all mutant comes last");
        let mut chosen = vec![hostile];
        for _ in 0..PER_RUN {
            if all.is_empty() {
                break;
            }
            chosen.push(all.swap_remove(rng.below(all.len())));
        }
        // A few cuts inside the last line (a torn write) of every run.
        let last = mutate::lines(text.as_bytes()).last().map_or(0, |l| l.0);
        for _ in 0..2 {
            let p = last + rng.below(text.len() - last);
            chosen.push(Mutant {
                run: run.clone(),
                what: format!("truncate in last line @{p}"),
                bytes: text.as_bytes()[..p].to_vec(),
            });
        }
        for (k, mut m) in chosen.into_iter().enumerate() {
            let id = format!("{run}-m{k:02}");
            let ph = placeholder(run);
            if let Some(at) = m.bytes.windows(ph.len()).position(|w| w == ph.as_bytes()) {
                m.bytes[at..at + ph.len()].copy_from_slice(id.as_bytes());
            }
            out.push((id, m));
        }
    }
    out
}

/// Every file in the store: name -> (mode, bytes).
fn snapshot(dir: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    std::fs::read_dir(dir)
        .expect("read the store")
        .map(|e| {
            let e = e.expect("entry");
            let md = std::fs::symlink_metadata(e.path()).expect("metadata");
            let bytes = if md.is_file() {
                std::fs::read(e.path()).expect("read")
            } else {
                Vec::new()
            };
            (
                e.file_name().to_string_lossy().into_owned(),
                (md.permissions().mode(), bytes),
            )
        })
        .collect()
}

/// Whether a terminal would act on `c` or hide it: a control character
/// other than `\n` and `\t` (so every escape sequence's introducer, C1
/// included), or an invisible format character (bidi overrides, zero-width
/// space, tag characters). The same set as `support::assert_printable`,
/// as a test instead of an assertion so one sweep reports every case.
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{ad}' | '\u{61c}' | '\u{200b}' | '\u{200e}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}'
        )
}

/// The first character a terminal would act on, with the start of its
/// line and what surrounds it, if any.
fn raw_control(text: &str) -> Option<String> {
    // Not `lines()`: it would hide a `\r` before a `\n`.
    text.split('\n').find_map(|line| {
        let (at, c) = line.char_indices().find(|&(_, c)| acts_on_terminal(c))?;
        let start: String = line.chars().take(60).collect();
        let around: String = line[at..].chars().take(60).collect();
        Some(format!("{c:?} in line {start:?}, at {around:?}"))
    })
}

/// Whether `text` is one JSON document. Parsed into `IgnoredAny`, which
/// has no nesting limit: a tool input of 10,000 nested arrays is printed
/// verbatim, and that is valid JSON a `Value` could not hold.
fn json_error(text: &str) -> Option<serde_json::Error> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).err()
}

/// What is wrong with one command's run (empty when nothing is).
fn problems(args: &[String], r: &Run) -> Vec<String> {
    let mut out = Vec::new();
    if !(0..=2).contains(&r.code) {
        out.push(format!(
            "exit code {} (101 is a panic, -1 a signal)",
            r.code
        ));
    }
    if r.stderr.contains("panicked") {
        out.push(format!("a panic: {}", r.stderr.trim()));
    }
    if let Some(c) = raw_control(&r.stderr) {
        out.push(format!("stderr prints raw {c}"));
    }
    let json = args
        .windows(2)
        .any(|w| w[0] == "--format" && w[1] == "json");
    let lines = matches!(
        args.first().map(String::as_str),
        Some("verify" | "validate")
    );
    if !json {
        if let Some(c) = raw_control(&r.stdout) {
            out.push(format!("stdout prints raw {c}"));
        }
    } else if lines {
        for l in r.stdout.lines() {
            if let Some(e) = json_error(l) {
                out.push(format!("stdout line is not JSON ({e}): {l:.200}"));
                break;
            }
        }
    } else if r.code == 0 || !r.stdout.is_empty() {
        if let Some(e) = json_error(&r.stdout) {
            out.push(format!("stdout is not JSON ({e}): {:.200}", r.stdout));
        }
    }
    out
}

#[test]
fn reading_commands_never_panic_leak_control_characters_or_write_on_damaged_journals() {
    let store = tempfile::tempdir().expect("tempdir");
    let dir = store.path();
    let mutants = build();
    for (id, m) in &mutants {
        let p = dir.join(format!("{id}.json"));
        std::fs::write(&p, &m.bytes).expect("write mutant");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    // Damage to the store itself: file names that are not ids, holding
    // escape sequences and bytes that are not UTF-8 (verify names them).
    use std::os::unix::ffi::OsStrExt;
    for name in [
        &b"\x1b[2J\x1b[31mred.json"[..],
        b"tab\there\rcr.json",
        b"del\x7f\xc2\x9b6n.json",
        b"\xff\xfe.json",
        b"\x1b]0;title\x07.lock",
    ] {
        let p = dir.join(std::ffi::OsStr::from_bytes(name));
        std::fs::write(&p, &mutants[0].1.bytes).expect("write a badly named file");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod dir");
    let before = snapshot(dir);
    let by_id: BTreeMap<&str, &Mutant> = mutants.iter().map(|(id, m)| (id.as_str(), m)).collect();

    // The whole store once per listing command, then a sample one by one.
    let mut jobs: Vec<Vec<String>> = [
        &["ls"][..],
        &["ls", "--format", "json"],
        &["verify"],
        &["verify", "--format", "json"],
        &["validate"],
        &["validate", "--format", "json"],
    ]
    .iter()
    .map(|a| a.iter().map(|s| s.to_string()).collect())
    .collect();
    // Every mutant with all its values hostile (each run prints different
    // fields), the huge, nested and hostile single values, then the rest
    // spread evenly.
    let group = |m: &Mutant| {
        if m.what.starts_with("every string value") {
            0
        } else if m.what.contains("value ->") {
            1
        } else {
            2
        }
    };
    let ids = |g: usize| -> Vec<&str> {
        mutants
            .iter()
            .filter(|(_, m)| group(m) == g)
            .map(|(id, _)| id.as_str())
            .collect()
    };
    let (hostile, values, others) = (ids(0), ids(1), ids(2));
    let values_wanted = (SAMPLED - hostile.len()) / 2;
    let others_wanted = SAMPLED - hostile.len() - values_wanted.min(values.len());
    let every = |v: &[&str], n: usize| (v.len() / n.max(1)).max(1);
    let sample: Vec<&str> = hostile
        .iter()
        .copied()
        .chain(
            values
                .iter()
                .copied()
                .step_by(every(&values, values_wanted))
                .take(values_wanted),
        )
        .chain(
            others
                .iter()
                .copied()
                .step_by(every(&others, others_wanted))
                .take(others_wanted),
        )
        .collect();
    assert!(sample.len() <= SAMPLED && hostile.len() < SAMPLED);
    for &id in &sample {
        for a in [
            &["show", id][..],
            &["show", id, "--transcript"],
            &["fold", id],
            &["fold", id, "--format", "json"],
            &["validate", id],
        ] {
            jobs.push(a.iter().map(|s| s.to_string()).collect());
        }
    }
    // `diff` reads two runs' meta fingerprints.
    for pair in sample.windows(2).take(12) {
        jobs.push(vec!["diff".into(), pair[0].into(), pair[1].into()]);
    }
    assert!(mutants.len() >= 250, "only {} mutants", mutants.len());
    assert!(jobs.len() <= 300, "{} processes", jobs.len());

    let home = tempfile::tempdir().expect("home");
    let failures = Mutex::new(Vec::new());
    let codes = Mutex::new(BTreeMap::<String, [usize; 3]>::new());
    let next = Mutex::new(jobs.iter());
    std::thread::scope(|sc| {
        for _ in 0..4 {
            sc.spawn(|| loop {
                let Some(args) = next.lock().expect("jobs").next() else {
                    break;
                };
                let mut all = vec!["--state-dir", s(dir)];
                all.extend(args.iter().map(String::as_str));
                let r = fisk_in(home.path(), &all, None);
                if let Ok(code) = usize::try_from(r.code) {
                    let key = args.first().cloned().unwrap_or_default();
                    if let Some(n) = codes
                        .lock()
                        .expect("codes")
                        .entry(key)
                        .or_default()
                        .get_mut(code)
                    {
                        *n += 1;
                    }
                }
                let found = problems(args, &r);
                if found.is_empty() {
                    continue;
                }
                let what = args
                    .get(1)
                    .and_then(|id| by_id.get(id.as_str()))
                    .map(|m| format!(" (mutant of {}: {})", m.run, m.what))
                    .unwrap_or_default();
                failures.lock().expect("failures").push(format!(
                    "fisk-admin {}{what}:\n  {}",
                    args.join(" "),
                    found.join("\n  ")
                ));
            });
        }
    });
    eprintln!(
        "{} mutants, {} commands; exit codes [0, 1, 2] by command: {:?}",
        mutants.len(),
        jobs.len(),
        codes.into_inner().expect("codes")
    );
    let failures = failures.into_inner().expect("failures");
    assert!(
        failures.is_empty(),
        "{} of {} commands over {} mutants went wrong:\n{}",
        failures.len(),
        jobs.len(),
        mutants.len(),
        failures.join("\n")
    );
    let after = snapshot(dir);
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(
        changed.is_empty(),
        "reading commands changed the store: {changed:?}"
    );
}

/// The sweep's judge itself: it must see what it is looking for.
#[test]
fn the_sweep_flags_panics_raw_controls_and_broken_json() {
    let run = |code, stdout: &str, stderr: &str| Run {
        code,
        stdout: stdout.into(),
        stderr: stderr.into(),
    };
    let text = ["show".to_string(), "x".into()];
    let json = [
        "fold".to_string(),
        "x".into(),
        "--format".into(),
        "json".into(),
    ];
    let lines = ["verify".to_string(), "--format".into(), "json".into()];
    assert!(problems(&text, &run(0, "ok\n\tindented\n", "")).is_empty());
    assert!(problems(&json, &run(0, "{\"a\": \"\\u001b\"}", "")).is_empty());
    for bad in [
        "\u{1b}[31m",
        "\u{7f}",
        "\u{0}",
        "a\rb",
        "\u{9b}2J",
        "\u{7}",
        "\u{202e}",
    ] {
        assert!(
            !problems(&text, &run(0, bad, "")).is_empty(),
            "{bad:?} on stdout"
        );
        assert!(
            !problems(&json, &run(2, "", bad)).is_empty(),
            "{bad:?} on stderr"
        );
    }
    assert!(!problems(&text, &run(101, "", "")).is_empty());
    assert!(!problems(&text, &run(-1, "", "")).is_empty());
    assert!(!problems(&text, &run(2, "", "thread 'main' panicked at src/x.rs:1:1")).is_empty());
    assert!(!problems(&json, &run(0, "{", "")).is_empty());
    assert!(!problems(&lines, &run(1, "{}\nnot json\n", "")).is_empty());
}
