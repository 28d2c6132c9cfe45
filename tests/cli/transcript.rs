//! `show RUN --transcript` in line mode (issue 15 item 2): every block
//! labelled, seq and iteration on each record, tool JSON decoded and
//! indented, thinking only when asked for, JSON output unchanged.

use crate::support::*;
use std::process::{Command, Stdio};

/// `show RUN --transcript` (plus `extra`) on testdata `dir`, with `env`.
fn transcript(dir: &str, run: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let store = testdata(dir);
    let mut cmd = Command::new(bin());
    cmd.args(["--state-dir", s(&store), "show", run, "--transcript"])
        .args(extra)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r: Run = cmd.output().unwrap().into();
    assert_eq!(r.code, 0, "{dir}/{run}: {}", r.stderr);
    assert_printable(run, &r.stdout);
    r
}

fn has(r: &Run, want: &str) {
    assert!(
        r.stdout.contains(want),
        "missing {want:?} in:\n{}",
        r.stdout
    );
}

#[test]
fn line_mode_labels_every_kind_of_block_in_both_generations() {
    for dir in ["runs", "runs-v1"] {
        let r = transcript(dir, "tool-batch", &[], &[]);
        has(&r, "seq 1  [prompt]");
        has(&r, "seq 2  iteration 0  assistant  stop tool_use  tokens ");
        has(&r, "  [text]\n");
        has(&r, "  [tool_use exec toolu_");
        has(&r, "  [tool_result toolu_");
        has(
            &r,
            "Which of the three JetStream servers is furthest behind?",
        );

        let r = transcript(dir, "thinking-signature", &[], &[]);
        has(&r, "  [thinking] hidden: 1 line; --thinking shows it\n  [text]\n    Checking the server log around 03:00.");
        has(&r, "  [thinking] redacted (signature only)\n  [text]\n");
        assert!(
            !r.stdout.contains("The stall lines up"),
            "thinking shown without --thinking"
        );

        let r = transcript(dir, "deferral-answered", &[], &[]);
        has(&r, "  [tool_use defer toolu_");
        has(&r, "  [deferred toolu_");
        has(&r, "  [answer toolu_");
        has(&r, "[terminal suspended: waiting on 1 deferred call]");

        let r = transcript(dir, "approvals", &[], &[]);
        has(&r, ": standing, for the rest of the run]");
        has(&r, ": once]");

        let r = transcript(dir, "claim-mid-batch", &[], &[]);
        has(&r, "  [claim by fisk-admin resume");

        let r = transcript(dir, "provider-blocks", &[], &[]);
        has(&r, "  [provider openai.annotations]");
        has(&r, "Where the run stands\n  [run status: completed]");
    }
    let r = transcript("runs-v1", "error-terminal", &[], &[]);
    has(&r, " error");
    assert!(
        r.stdout
            .lines()
            .any(|l| l.contains("[tool_result toolu_") && l.contains(" error")),
        "{}",
        r.stdout
    );
    has(&r, "[terminal error");
}

#[test]
fn thinking_is_shown_with_the_flag_or_the_environment() {
    for (extra, env) in [
        (&["--thinking"][..], &[][..]),
        (&[][..], &[("THINKING", "1")][..]),
    ] {
        let r = transcript("runs", "thinking-signature", extra, env);
        has(
            &r,
            "  [thinking]\n    The stall lines up with the nightly compaction",
        );
        has(&r, "\n  [text]\n    Checking the server log around 03:00.");
    }
    let r = transcript("runs", "thinking-signature", &[], &[("THINKING", "0")]);
    assert!(!r.stdout.contains("The stall lines up"));
}

#[test]
fn tool_json_is_decoded_and_indented_without_go_escapes() {
    let r = transcript("runs", "go-escapes", &[], &[]);
    has(
        &r,
        "    {\n      \"command\": \"grep -rn '<script>' wiki/ && echo",
    );
    assert!(!r.stdout.contains("\\u003e") && !r.stdout.contains("\\u003c"));
    assert!(!r.stdout.contains("\\u0026"));
    has(&r, "\\u{1b}[31m");
}

#[test]
fn the_closing_section_gives_the_command_that_answers_each_deferral() {
    let store = testdata("runs-v1");
    let r = transcript("runs-v1", "deferral-waiting", &[], &[]);
    has(&r, "[waiting on toolu_01UKhS4K7g2wv63auxXVYqVE defer]");
    has(
        &r,
        &format!(
            "    answer it with:\n      fisk-admin --state-dir {} answer deferral-waiting toolu_01UKhS4K7g2wv63auxXVYqVE\n      # it reads the answer",
            s(&store)
        ),
    );
    has(&r, "[pending batch, iteration 0]");
}

#[test]
fn the_agents_own_journals_read_in_line_mode_in_both_generations() {
    for dir in ["agent-journals/v1", "agent-journals/v3"] {
        for entry in std::fs::read_dir(testdata(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let Some(run) = name.strip_suffix(".json") else {
                continue;
            };
            let r = transcript(dir, run, &[], &[]);
            has(&r, "[prompt]");
            has(&r, "Where the run stands");
        }
    }
}

#[test]
fn transcript_json_output_is_the_show_document_unchanged() {
    let store = store_copy("runs");
    let d = s(store.path());
    let plain = fisk(&["--state-dir", d, "show", "tool-batch", "--format", "json"]);
    let with = fisk(&[
        "--state-dir",
        d,
        "show",
        "tool-batch",
        "--transcript",
        "--format",
        "json",
    ]);
    assert_eq!(plain.code, 0);
    assert_eq!(plain.stdout, with.stdout);
}

#[test]
fn an_unreadable_interior_line_is_marked_in_place_and_named_at_the_end() {
    let store = testdata("damaged");
    let r = transcript("damaged", "interior-corruption", &[], &[]);
    has(&r, "\n[unreadable line 3 (byte 757)]\n");
    has(&r, "seq 5  iteration 1  assistant");
    has(
        &r,
        &format!(
            "[readers refuse this journal: 1 line(s) marked above, the first at line 3]\n    the status below is read from the tail; fisk-admin --state-dir {} verify interior-corruption says more",
            s(&store)
        ),
    );
}

#[test]
fn a_pager_that_cannot_run_is_said_and_the_transcript_printed_without_it() {
    let store = store_copy("runs");
    let t = crate::viewer::Tmux::start(160, 120);
    t.type_line(&format!(
        "PAGER=no-such-pager-here {} --state-dir {} show deferral-waiting --transcript --no-tui; echo exit:$?",
        s(&bin()),
        s(store.path())
    ));
    let screen = t.wait_for("the transcript and the exit status", |sc| {
        sc.lines().any(|l| l.starts_with("exit:"))
    });
    assert!(
        screen.contains("the pager (no-such-pager-here) names no program here"),
        "{screen}"
    );
    assert!(screen.contains("[deferred"), "{screen}");
    assert!(screen.lines().any(|l| l == "exit:0"), "{screen}");
}

/// exec's result with escape sequences of its own: a title, a colour, a
/// C1 CSI.
fn hostile_exec() -> serde_json::Value {
    serde_json::json!({
        "stdout": "MARK \u{1b}]2;PWNED\u{7}\u{1b}[31mREDTEXT\u{1b}[0m \u{9b}5m\nok\n",
        "stderr": "",
        "exit_status": 1,
    })
}

/// The escape sequences line mode's colour writes: `ESC[1m` (bold),
/// `ESC[1;3Nm` (bold, a colour), `ESC[0m`.
fn ours() -> regex::Regex {
    regex::Regex::new("\x1b\\[(?:1|0|1;3[1-6])m").unwrap()
}

/// `--color always` colours line mode even into a pipe (labels as the
/// viewer colours them, headings bold), in both generations, and the only
/// escape sequences are those: the output's own are neutralised. Without
/// it a pipe gets none.
#[test]
fn color_always_colours_line_mode_and_passes_no_journal_escape() {
    for gen in ["v1", "v3"] {
        let store = crate::viewer::exec_store(gen, &hostile_exec());
        let home = tempfile::tempdir().unwrap();
        let args = [
            "--state-dir",
            s(store.path()),
            "show",
            "g-tool-batch",
            "--transcript",
        ];
        let plain = fisk_env(home.path(), &args, &[("NO_COLOR", "1")], None);
        assert_eq!(plain.code, 0, "{}", plain.stderr);
        assert_printable(gen, &plain.stdout);
        assert!(
            plain
                .stdout
                .contains("MARK \\u{1b}]2;PWNED\\u{7}\\u{1b}[31mREDTEXT"),
            "{gen}:\n{}",
            plain.stdout
        );
        let mut colour = args.to_vec();
        colour.extend(["--color", "always"]);
        let r = fisk_env(home.path(), &colour, &[("NO_COLOR", "1")], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let codes = ours().find_iter(&r.stdout).count();
        assert!(codes > 10, "{gen}: {}", r.stdout);
        assert_eq!(
            r.stdout.matches('\u{1b}').count(),
            codes,
            "{gen}: an escape sequence not ours:\n{}",
            r.stdout
        );
        assert!(
            r.stdout.contains("\u{1b}[1;32m[tool_result toolu_01"),
            "{gen}: {}",
            r.stdout
        );
        assert!(r
            .stdout
            .contains("\u{1b}[1;36m[tool_use stream_ls toolu_01]\u{1b}[0m"));
        assert!(r.stdout.contains("\u{1b}[1mWhere the run stands\u{1b}[0m"));
        // The colour codes taken out, the text is the plain output's.
        assert_eq!(ours().replace_all(&r.stdout, ""), plain.stdout, "{gen}");
    }
}
