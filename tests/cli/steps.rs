//! A printed command stands alone on its line (issue 39, d-22): the label
//! on the line above, what it still needs under it as a shell comment, so
//! a triple-click takes the command whole and a paste of the lines runs
//! it. And the transcript marks records lost to a gap in the seqs (d-27).

use crate::support::*;
use serde_json::json;

/// Every line of `out` that holds a command: it is the command alone (led
/// by spaces), never after a label or before prose on the same line.
fn assert_alone(what: &str, out: &str) {
    let mut seen = 0;
    for l in out.lines() {
        let Some(at) = l.find("fisk-admin ") else {
            continue;
        };
        if l.contains('`') {
            continue; // a command quoted in running text
        }
        assert!(
            l[..at].trim().is_empty(),
            "{what}: a label before the command: {l:?}\n{out}"
        );
        assert!(
            !l.contains("  ("),
            "{what}: prose after the command: {l:?}\n{out}"
        );
        seen += 1;
    }
    assert!(seen > 0, "{what}: no command in\n{out}");
}

fn deferring() -> Fixture {
    Fixture::new(&[
        turn(
            "",
            &[(
                "toolu_2",
                "defer",
                json!({"note": "sign-off", "handle": "SEC-7"}),
            )],
        ),
        turn("done", &[]),
    ])
}

#[test]
fn every_printed_step_is_a_command_alone_on_its_line() {
    let f = deferring();
    let r = f.run("r1", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_alone("run", &r.stdout);
    let next = steps(&r.stdout, &["next", "then"]);
    assert_eq!(next.len(), 2, "{}", r.stdout);
    assert!(next[0].ends_with(" answer r1 toolu_2") && next[1].contains(" resume r1"));
    // What the answer needs follows it as a comment: all of it pastes.
    assert!(
        r.stdout
            .contains(&format!("  {}\n  # it reads the answer", next[0])),
        "{}",
        r.stdout
    );
    let r = f.store(&["show", "r1"]);
    assert_alone("show", &r.stdout);
    let r = f.store(&["show", "r1", "--transcript", "--no-pager"]);
    assert_alone("show --transcript", &r.stdout);
    // The answer printed by the run, pasted with its comment line.
    let pasted = format!("{}\n  # it reads the answer from standard input", next[0]);
    let r = f.paste_stdin(&pasted, b"approved");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_alone("answer", &r.stdout);
    let resume = steps(&r.stdout, &["resume the run with"]);
    assert_eq!(resume.len(), 1, "{}", r.stdout);
    let r = f.store(&["show", "r1"]);
    assert_alone("show of a ready run", &r.stdout);
    assert_eq!(steps(&r.stdout, &["go on with"]).len(), 1, "{}", r.stdout);
}

#[test]
fn approve_prints_its_resume_alone_on_its_line() {
    let f = exec_then_done("true");
    f.gate_exec();
    let r = f.run("gate", "go");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_alone("run", &r.stdout);
    let r = f.store(&["approve", "gate", "t1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_alone("approve", &r.stdout);
    assert_eq!(steps(&r.stdout, &["next"]).len(), 1, "{}", r.stdout);
}

/// d-27: a record lost to a gap in the seqs is marked where it was, and
/// the closing section says the run lost it, as for an unreadable line
/// (at b926494 the transcript went from seq 3 to seq 5 and ended
/// "completed" with nothing said).
#[test]
fn a_gap_in_the_seqs_is_marked_in_the_transcript() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let r = fisk(&[
        "--state-dir",
        d,
        "show",
        "seq-gap",
        "--transcript",
        "--no-pager",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    let gap = out
        .find("[seq 4 missing: 1 record lost]")
        .unwrap_or_else(|| panic!("{out}"));
    let seq3 = out.find("seq 3").unwrap();
    let seq5 = out.find("seq 5").unwrap();
    assert!(seq3 < gap && gap < seq5, "{out}");
    let closing = out.find("Where the run stands").unwrap();
    let lost = out
        .find("[1 record(s) lost: the seqs have gaps, marked above]")
        .unwrap();
    assert!(lost > closing, "{out}");
    assert!(
        out.contains(&format!("fisk-admin --state-dir {d} verify seq-gap")),
        "{out}"
    );
    // A whole journal has no such mark.
    let r = fisk(&[
        "--state-dir",
        d,
        "show",
        "torn-tail",
        "--transcript",
        "--no-pager",
    ]);
    assert!(
        !r.stdout.contains("missing:") && !r.stdout.contains("lost"),
        "{}",
        r.stdout
    );
}

/// fork, recover and repair print their next commands the same way.
#[test]
fn fork_recover_and_repair_print_their_steps_alone_on_their_lines() {
    let store = store_copy("damaged");
    let d = s(store.path());
    let r = fisk(&["--state-dir", d, "repair", "seq-gap"]);
    assert_alone("repair", &r.stdout);
    assert_eq!(steps(&r.stdout, &["next"]).len(), 1, "{}", r.stdout);
    let r = fisk(&["--state-dir", d, "recover", "interior-corruption", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_alone("recover", &r.stdout);
    assert_eq!(
        steps(&r.stdout, &["verify it with", "resume it with"]).len(),
        2,
        "{}",
        r.stdout
    );
    let f = deferring();
    f.run("r1", "go");
    let r = f.store(&["fork", "r1", "--at-seq", "2", "--as", "r2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_alone("fork", &r.stdout);
    assert_eq!(
        steps(&r.stdout, &["see it with", "resume it with"]).len(),
        2,
        "{}",
        r.stdout
    );
}
