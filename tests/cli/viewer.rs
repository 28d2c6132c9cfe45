//! The transcript viewer in a real terminal (issue 15 item 6): each test
//! starts its own tmux server (a private socket) with a fixed size, types
//! keys with send-keys and reads the screen with capture-pane, polling
//! until the expected text appears or a timeout: no sleep is an assertion.
//! tmux is required: without it these tests fail and say so.

use crate::support::*;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// One tmux server with one pane running a shell.
pub struct Tmux {
    socket: String,
    _home: tempfile::TempDir,
}

impl Tmux {
    pub fn start(width: u16, height: u16) -> Tmux {
        let found = Command::new("tmux").arg("-V").output();
        assert!(
            found.is_ok_and(|o| o.status.success()),
            "tmux is not installed: the viewer tests drive a real terminal in tmux; \
             install it (apt-get install tmux; .ci/run does)"
        );
        let home = tempfile::tempdir().unwrap();
        let socket = format!(
            "fisk-viewer-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let shell = format!(
            "env -i PATH={} HOME={} TERM=screen NO_COLOR=1 PS1='PROMPT$ ' sh",
            std::env::var("PATH").unwrap_or_default(),
            s(home.path())
        );
        let t = Tmux {
            socket,
            _home: home,
        };
        let w = width.to_string();
        let h = height.to_string();
        t.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "v",
            "-x",
            &w,
            "-y",
            &h,
            &shell,
        ]);
        t.wait_for("the shell prompt", |screen| screen.contains("PROMPT$"));
        t
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "v"])
    }

    /// The screen with its attributes as escape sequences (`-e`).
    fn screen_raw(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-t", "v"])
    }

    fn alternate_on(&self) -> bool {
        self.tmux(&["display-message", "-p", "-t", "v", "#{alternate_on}"])
            .trim()
            == "1"
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "v", k]);
        }
    }

    pub fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "v", "-l", text]);
        self.tmux(&["send-keys", "-t", "v", "Enter"]);
    }

    /// Poll the screen until `ok` holds; fail with the last screen after 15s.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(40));
        }
    }

    /// Start the viewer on `run` in `store`, and wait for its first screen.
    fn view(&self, store: &Path, run: &str) -> String {
        let cmd = format!(
            "{} --state-dir {} show {run} --transcript",
            s(&bin()),
            s(store)
        );
        self.type_line(&cmd);
        self.wait_for("the viewer's first screen", |sc| {
            sc.contains("[prompt]") && sc.contains(&format!("{run} · block"))
        })
    }

    /// The viewer's pid: the pane shell's child.
    fn viewer_pid(&self) -> String {
        let pid = self.tmux(&["display-message", "-p", "-t", "v", "#{pane_pid}"]);
        let kids = Command::new("pgrep")
            .args(["-P", pid.trim()])
            .output()
            .unwrap();
        let child = String::from_utf8_lossy(&kids.stdout).trim().to_owned();
        assert!(!child.is_empty(), "no viewer process under the shell");
        child
    }

    /// Move the cursor down until its block's label contains `label`.
    fn cursor_to(&self, label: &str) -> String {
        for _ in 0..60 {
            let sc = self.screen();
            if cursor_row(&sc).is_some_and(|r| r.contains(label)) {
                return sc;
            }
            let before = self.screen();
            self.keys(&["j"]);
            self.wait_for("the cursor to move", |sc| sc != before);
        }
        panic!("the cursor never reached {label:?}:\n{}", self.screen());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The first row of the block under the cursor (marked `>` in the gutter).
fn cursor_row(screen: &str) -> Option<&str> {
    screen.lines().find(|l| l.starts_with('>'))
}

#[test]
fn viewer_folds_tool_output_by_default_and_z_opens_the_block() {
    let t = Tmux::start(80, 24);
    let first = t.view(&testdata("runs"), "tool-batch");
    let folded = first
        .lines()
        .find(|l| l.contains("[tool_result toolu_"))
        .unwrap_or_else(|| panic!("no tool result on the first screen:\n{first}"));
    assert!(folded.contains("z opens"), "not folded: {folded}");
    let sc = t.cursor_to("[tool_result toolu_");
    let row = cursor_row(&sc).unwrap().to_owned();
    assert!(row.contains("z opens"));
    t.keys(&["z"]);
    let open = t.wait_for("the block to open", |sc| {
        cursor_row(sc).is_some_and(|r| !r.contains("z opens"))
    });
    let mut rows = open.lines().skip_while(|l| !l.starts_with('>'));
    rows.next();
    assert!(
        rows.next().is_some_and(|l| l.starts_with('|')),
        "no body under the opened block:\n{open}"
    );
    t.keys(&["z"]);
    t.wait_for("the block to fold again", |sc| {
        cursor_row(sc).is_some_and(|r| r.contains("z opens"))
    });
}

#[test]
fn viewer_search_finds_a_word_inside_folded_output_and_opens_it() {
    let t = Tmux::start(80, 24);
    let first = t.view(&testdata("runs-v1"), "deferral-waiting");
    assert!(
        !first.contains("Expires: 2026-11-30"),
        "output not folded:\n{first}"
    );
    t.keys(&["/"]);
    // A regular expression as `search --match` takes: case matters
    // unless `(?i)`.
    t.tmux(&["send-keys", "-t", "v", "-l", "(?i)EXPIRES"]);
    t.wait_for("the search prompt", |sc| sc.contains("/(?i)EXPIRES"));
    t.keys(&["Enter"]);
    let sc = t.wait_for("the hit, opened", |sc| sc.contains("Expires: 2026-11-30"));
    assert!(
        cursor_row(&sc).is_some_and(|r| r.contains("[tool_result toolu_01c7yOlKNMQTQjdEmZXbs0Vk")),
        "the cursor is not on the hit:\n{sc}"
    );
    // `n` again finds the same single hit, wrapping round.
    t.keys(&["n"]);
    t.wait_for("the wrapped search", |sc| sc.contains("search wrapped"));
}

#[test]
fn viewer_q_leaves_the_alternate_screen_and_gives_the_shell_back() {
    let t = Tmux::start(80, 24);
    t.type_line("echo BEFORE-THE-VIEWER");
    t.wait_for("the echo", |sc| sc.contains("BEFORE-THE-VIEWER\nPROMPT$"));
    t.view(&testdata("agent-journals/v3"), "g-deferral-waiting");
    assert!(
        t.alternate_on(),
        "the viewer is not on the alternate screen"
    );
    t.keys(&["q"]);
    let sc = t.wait_for("the shell again", |sc| {
        !sc.contains("[prompt]") && sc.trim_end().ends_with("PROMPT$")
    });
    assert!(
        sc.contains("BEFORE-THE-VIEWER"),
        "the shell's screen is gone:\n{sc}"
    );
    assert!(!t.alternate_on(), "still on the alternate screen");
    // The command that answers the waiting call, left on the normal
    // screen, where the terminal wraps it and a paste takes it whole.
    // (Compared without white space: a row the terminal wraps at a space
    // loses it in the capture.)
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    let want = format!(
        "next:\n  fisk-admin --state-dir {} answer g-deferral-waiting tu_",
        s(&testdata("agent-journals/v3"))
    );
    assert!(
        squeeze(&sc).contains(&squeeze(&want)),
        "no answer command left:\n{sc}"
    );
    // The terminal is back in cooked mode: the shell reads a line.
    t.type_line("echo AFTER-$((40+2))");
    t.wait_for("the shell to run a command", |sc| sc.contains("AFTER-42"));
}

/// At 77 columns the folded tool result of deferral-waiting ends in the
/// `…` its label's end used to be split inside (issue 24 defect 1: a
/// panic, exit 101): it draws, `G` goes to the end, and `q` exits 0.
#[test]
fn viewer_draws_a_label_cut_at_77_columns_and_exits_0() {
    let t = Tmux::start(77, 24);
    let first = t.view(&testdata("runs"), "deferral-waiting");
    let folded = first
        .lines()
        .find(|l| l.contains("[tool_result toolu_"))
        .unwrap_or_else(|| panic!("no tool result on the first screen:\n{first}"));
    assert!(folded.contains("…  (3 lines, z opens)"), "{folded}");
    t.keys(&["G"]);
    t.wait_for("the end", |sc| sc.contains("[waiting on"));
    t.keys(&["q"]);
    // Typed only once the shell is back: keys that reach the viewer while
    // it is still leaving are the viewer's (a loaded machine lost them).
    t.wait_for("the shell again", |sc| {
        !sc.contains("[prompt]") && sc.trim_end().ends_with("PROMPT$")
    });
    t.type_line("echo EXIT-$?");
    // A line of its own: the typed command holds `EXIT-` too.
    let sc = t.wait_for("the exit status", |sc| sc.contains("\nEXIT-"));
    assert!(sc.contains("EXIT-0"), "{sc}");
    assert!(!sc.contains("panicked"), "{sc}");
}

/// A panic inside the viewer restores the terminal before the message
/// is printed: the shell's screen is back, cooked mode reads a line, and
/// the panic is said on the normal screen. (`!` panics in a debug build
/// when FISK_ADMIN_TEST_PANIC is set: the only way to reach the hook from
/// outside.)
#[test]
fn viewer_restores_the_terminal_when_it_panics() {
    let t = Tmux::start(80, 24);
    t.type_line("echo BEFORE-THE-PANIC; export FISK_ADMIN_TEST_PANIC=1");
    t.wait_for("the echo", |sc| sc.contains("BEFORE-THE-PANIC\nPROMPT$"));
    t.view(&testdata("agent-journals/v1"), "g-tool-batch");
    assert!(
        t.alternate_on(),
        "the viewer is not on the alternate screen"
    );
    t.keys(&["!"]);
    let sc = t.wait_for("the panic's message", |sc| {
        sc.contains("a panic the test asked for")
    });
    assert!(
        sc.contains("BEFORE-THE-PANIC"),
        "the shell's screen is gone:\n{sc}"
    );
    assert!(
        !sc.contains("[prompt]"),
        "the viewer's screen is left:\n{sc}"
    );
    assert!(!t.alternate_on(), "still on the alternate screen");
    t.type_line("echo AFTER-$((40+2))");
    t.wait_for("the shell to run a command", |sc| sc.contains("AFTER-42"));
}

#[test]
fn viewer_leaves_cleanly_on_sigterm() {
    let t = Tmux::start(80, 24);
    t.view(&testdata("agent-journals/v1"), "g-tool-batch");
    let child = t.viewer_pid();
    Command::new("kill")
        .args(["-TERM", &child])
        .status()
        .unwrap();
    t.wait_for("the shell again", |sc| {
        !sc.contains("[prompt]") && sc.trim_end().ends_with("PROMPT$")
    });
    assert!(!t.alternate_on());
}

/// A terminal that goes away (tmux killed, a window closed) must not leave
/// the viewer behind reading end-of-file in a loop at full CPU.
#[test]
fn viewer_ends_when_its_terminal_goes_away() {
    let t = Tmux::start(80, 24);
    t.view(&testdata("agent-journals/v1"), "g-tool-batch");
    let child = t.viewer_pid();
    t.tmux(&["kill-server"]);
    let proc_dir = std::path::PathBuf::from(format!("/proc/{child}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while proc_dir.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        !proc_dir.exists(),
        "viewer {child} still runs after its terminal went away"
    );
}

#[test]
fn viewer_never_lets_an_escape_sequence_from_a_tool_output_reach_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let meta = r#"{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"hostile","created":"2026-01-01T00:00:00Z","fingerprint":{"provider":"p","model":"m","system_hash":"","tools_hash":"","thinking_mode":"off","max_tokens":1,"max_iterations":1},"prompt":"look"}}"#;
    let assistant = r#"{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":{"role":"assistant","content":[{"tool_use":{"id":"toolu_x","name":"exec","input":{"command":"cat evil"}}}]},"in_tokens":1,"out_tokens":1}}"#;
    let result = serde_json::json!({
        "seq": 3,
        "protocol": "io.choria.fisk-ai.v1.session.tool_result",
        "tool_result": {"tool_use_id": "toolu_x", "result": {"tool_use_id": "toolu_x",
            "content": "MARKER \u{1b}]2;PWNED-TITLE\u{7}\u{1b}[31mREDTEXT\u{1b}[0m \u{1b}[2J\u{9b}5m after"}}
    });
    std::fs::write(
        dir.path().join("hostile.json"),
        format!("{meta}\n{assistant}\n{result}\n"),
    )
    .unwrap();
    let t = Tmux::start(100, 24);
    t.view(dir.path(), "hostile");
    t.keys(&["/"]);
    t.tmux(&["send-keys", "-t", "v", "-l", "REDTEXT"]);
    t.keys(&["Enter"]);
    let sc = t.wait_for("the hostile output, opened", |sc| sc.contains("after"));
    assert!(
        sc.contains("MARKER \\u{1b}]2;PWNED-TITLE\\u{7}\\u{1b}[31mREDTEXT"),
        "{sc}"
    );
    assert!(sc.contains("\\u{9b}5m"), "{sc}");
    assert!(sc.contains("[prompt]"), "the screen was cleared:\n{sc}");
    let raw = t.screen_raw();
    assert!(!raw.contains("\u{1b}[31m"), "red reached the pane:\n{raw}");
    let title = t.tmux(&["display-message", "-p", "-t", "v", "#{pane_title}"]);
    assert!(!title.contains("PWNED"), "the pane title was set: {title}");
}

#[test]
fn viewer_keeps_the_cursors_block_on_screen_across_resizes() {
    let t = Tmux::start(100, 30);
    t.view(&testdata("runs-v1"), "multi-iteration");
    for _ in 0..6 {
        let before = t.screen();
        t.keys(&["j"]);
        t.wait_for("the cursor to move", |sc| sc != before);
    }
    let sc = t.screen();
    let row = cursor_row(&sc).unwrap().to_owned();
    let label: String = row.chars().skip(13).take(12).collect();
    for (w, h) in [("40", "10"), ("150", "40"), ("80", "24")] {
        t.tmux(&["resize-window", "-t", "v", "-x", w, "-y", h]);
        let sc = t.wait_for("the resized screen", |sc| {
            sc.lines().count() <= h.parse::<usize>().unwrap()
                && sc
                    .lines()
                    .all(|l| l.chars().count() <= w.parse::<usize>().unwrap())
                && cursor_row(sc)
                    .is_some_and(|r| r.chars().skip(13).take(12).collect::<String>() == label)
        });
        assert!(sc.contains(" · block "), "no status bar at {w}x{h}:\n{sc}");
    }
}

/// b-12 in a real 80-column terminal: `ls` keeps each run on one screen
/// line (nothing wraps), and statuses are coloured there (without
/// NO_COLOR), with no colour under NO_COLOR.
#[test]
fn ls_in_an_80_column_terminal_keeps_runs_on_one_line_and_colours_statuses() {
    let store = store_copy("runs");
    let t = Tmux::start(80, 50);
    let ls = format!(
        "{} --state-dir {} ls --limit 12",
        s(&bin()),
        s(store.path())
    );
    t.type_line(&format!("env -u NO_COLOR {ls}; echo DONE-$((0+1))"));
    let screen = t.wait_for("ls to finish", |sc| sc.contains("\nDONE-1"));
    let out: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains(" RUN "))
        .take_while(|l| *l != "DONE-1")
        .collect();
    // Header, rule, 12 runs, the notes (what was left out, how a cut
    // cell is seen whole): a wrapped row would add lines.
    assert_eq!(out.len(), 16, "{screen}");
    assert!(
        out[1].starts_with("─") && out[1].chars().count() <= 80,
        "{screen}"
    );
    let raw = t.screen_raw();
    assert!(
        raw.contains("\u{1b}[3"),
        "statuses coloured on a terminal:\n{raw}"
    );
    t.type_line("clear");
    t.wait_for("a clear screen", |sc| !sc.contains("FIN11"));
    t.type_line(&format!("{ls}; echo DONE-$((0+2))"));
    t.wait_for("ls to finish", |sc| sc.contains("\nDONE-2"));
    let raw = t.screen_raw();
    let body: String = raw.lines().filter(|l| !l.contains("PROMPT$")).collect();
    assert!(!body.contains("\u{1b}[3"), "NO_COLOR honoured:\n{raw}");
}

/// The viewer and line mode on JetStream: the same first screen, folding
/// and output as on files (they read through the same Store API).
#[test]
fn viewer_and_line_mode_read_a_jetstream_run_as_a_file_one() {
    let srv = crate::nats_support::NatsServer::start();
    srv.spec_stream("VIEW", "view.>");
    let home = tempfile::tempdir().unwrap();
    let from = format!("file:{}", s(&testdata("runs")));
    let r = crate::support::fisk_in(
        home.path(),
        &[
            "--server",
            &srv.url,
            "migrate",
            "--from",
            &from,
            "--to",
            "jetstream:VIEW",
            "tool-batch",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Line mode: byte for byte what the file store gives.
    let on_js = crate::support::fisk_in(
        home.path(),
        &[
            "--server",
            &srv.url,
            "--store",
            "jetstream:VIEW",
            "show",
            "tool-batch",
            "--transcript",
            "--no-tui",
        ],
        None,
    );
    let on_file = crate::support::fisk_in(
        home.path(),
        &[
            "--state-dir",
            s(&testdata("runs")),
            "show",
            "tool-batch",
            "--transcript",
            "--no-tui",
        ],
        None,
    );
    assert_eq!(on_js.code, 0, "{}", on_js.stderr);
    let body = |t: &str| {
        t.lines()
            .skip(1)
            .take_while(|l| !l.starts_with("Where the run stands"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        body(&on_js.stdout).contains("[tool_result toolu_"),
        "{}",
        on_js.stdout
    );
    assert_eq!(body(&on_js.stdout), body(&on_file.stdout));
    // The viewer in a real terminal.
    let t = Tmux::start(80, 24);
    let cmd = format!(
        "{} --server {} --store jetstream:VIEW show tool-batch --transcript",
        s(&bin()),
        srv.url
    );
    t.type_line(&cmd);
    t.wait_for("the viewer's first screen on JetStream", |sc| {
        sc.contains("[prompt]") && sc.contains("tool-batch · block")
    });
    let sc = t.cursor_to("[tool_result toolu_");
    assert!(
        cursor_row(&sc).is_some_and(|r| r.contains("z opens")),
        "{sc}"
    );
    t.keys(&["z"]);
    t.wait_for("the block to open", |sc| {
        cursor_row(sc).is_some_and(|r| !r.contains("z opens"))
    });
    t.keys(&["q"]);
    t.wait_for("the shell again", |sc| sc.trim_end().ends_with("PROMPT$"));
    assert!(!t.alternate_on());
}

/// Line mode on a terminal goes through $PAGER; --no-pager prints straight.
#[test]
fn line_mode_on_a_terminal_goes_through_the_pager_unless_no_pager() {
    let t = Tmux::start(100, 30);
    let out = tempfile::tempdir().unwrap();
    let paged = out.path().join("paged.txt");
    let cmd = format!(
        "PAGER='cat > {}' {} --state-dir {} show tool-batch --transcript --no-tui; echo FIN$((10+1))",
        s(&paged),
        s(&bin()),
        s(&testdata("runs"))
    );
    t.type_line(&cmd);
    t.wait_for("the first command to end", |sc| sc.contains("FIN11"));
    let text = std::fs::read_to_string(&paged).unwrap_or_default();
    assert!(
        text.contains("[tool_use exec toolu_"),
        "the pager got: {text:?}"
    );
    let cmd = format!(
        "PAGER='cat > {}.2' {} --state-dir {} show tool-batch --transcript --no-tui --no-pager; echo FIN$((20+2))",
        s(&paged),
        s(&bin()),
        s(&testdata("runs"))
    );
    t.type_line(&cmd);
    t.wait_for("the second command to end", |sc| sc.contains("FIN22"));
    assert!(
        !out.path().join("paged.txt.2").exists(),
        "--no-pager still paged"
    );
}

/// exec's result as the runner journals it (journal/src/runner/tools.rs):
/// three lines of stdout, a line of stderr holding a colour escape, exit 1.
fn exec_result() -> serde_json::Value {
    serde_json::json!({
        "stdout": "NAME    MESSAGES\nORDERS  10\nEVENTS  3\n",
        "stderr": "warn: \u{1b}[31mstale\u{1b}[0m\n",
        "exit_status": 1,
    })
}

/// A store holding the agent's g-tool-batch of generation `gen` whose
/// first result is exec's result `exec` (a JSON document in the result's
/// content string, as exec's result is journaled).
pub fn exec_store(gen: &str, exec: &serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(testdata(&format!("agent-journals/{gen}/g-tool-batch.json")))
            .unwrap();
    let content = serde_json::to_string(&exec.to_string()).unwrap();
    let replaced = text.replace(
        r#""content":"ORDERS\nEVENTS""#,
        &format!("\"content\":{content}"),
    );
    assert_ne!(replaced, text, "{gen}: the result to replace is gone");
    std::fs::write(dir.path().join("g-tool-batch.json"), replaced).unwrap();
    dir
}

/// The status bar: the screen's last line.
fn status_bar(screen: &str) -> &str {
    screen.trim_end().lines().last().unwrap_or_default()
}

/// The first row of `screen` holding `text`.
fn row_with<'a>(screen: &'a str, text: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no row with {text:?}:\n{screen}"))
}

/// `?` shows the keys; `leave` (any key) goes back to the transcript of
/// `run`, the cursor where it was (block 1).
fn help_and_back(t: &Tmux, leave: &str, run: &str) {
    t.keys(&["?"]);
    let help = t.wait_for("the help screen", |sc| {
        sc.contains("Keys of the transcript viewer")
    });
    assert!(help.contains("C-d  C-u"), "{help}");
    t.keys(&[leave]);
    t.wait_for("the transcript again", |sc| {
        sc.contains(&format!("{run} · block 1/"))
    });
}

/// The text of a screen row, past the gutter.
fn text_of(row: &str) -> String {
    row.chars().skip(13).collect()
}

/// Issue 27 section 6 in a real terminal, in both generations: exec's
/// output as lines (folded: its first line), `?` help, `<n>G`, `C-d` and
/// `C-u`, and a regex search with its match count.
#[test]
fn viewer_keys_and_exec_output_in_a_real_terminal_in_both_generations() {
    for gen in ["v1", "v3"] {
        let store = exec_store(gen, &exec_result());
        let t = Tmux::start(100, 14);
        let first = t.view(store.path(), "g-tool-batch");
        let folded = row_with(&first, "[tool_result toolu_01");
        assert!(
            folded.contains(" exit 1]  NAME    MESSAGES  (6 lines, z opens)"),
            "{gen}: {folded}"
        );
        help_and_back(&t, "x", "g-tool-batch");

        t.keys(&["4", "G"]);
        t.wait_for("block 4", |sc| status_bar(sc).contains("block 4/"));
        t.keys(&["g"]);
        t.wait_for("block 1", |sc| status_bar(sc).contains("block 1/"));

        // Half a screen (13 rows of blocks: 6) down and back up.
        t.keys(&["Z"]);
        let open = t.wait_for("every block open", |sc| {
            status_bar(sc).contains("every block open")
        });
        let rows: Vec<&str> = open.lines().collect();
        t.keys(&["C-d"]);
        let down = t.wait_for("half a screen down", |sc| {
            sc.lines().next().map(text_of) == Some(text_of(rows[6]))
        });
        assert_ne!(down, open);
        t.keys(&["C-u"]);
        t.wait_for("half a screen up", |sc| {
            sc.lines().next().map(text_of) == Some(text_of(rows[0]))
        });
        t.keys(&["Z"]);
        t.wait_for("folded again", |sc| sc.contains("z opens"));

        // A regex (a literal search would find nothing), into the folded
        // exec output: opened, on the matching line, counted.
        t.keys(&["/"]);
        t.tmux(&["send-keys", "-t", "v", "-l", "ORDERS +[0-9]+$"]);
        t.keys(&["Enter"]);
        let sc = t.wait_for("the match", |sc| status_bar(sc).contains("match 1/1"));
        assert!(sc.contains("    ORDERS  10"), "{gen}:\n{sc}");
        assert!(
            sc.contains("    warn: \\u{1b}[31mstale"),
            "{gen}: stderr not shown neutralised:\n{sc}"
        );
        assert!(
            cursor_row(&sc).is_some_and(|r| r.contains("[tool_result toolu_01")),
            "{gen}:\n{sc}"
        );
        assert!(
            !t.screen_raw().contains("\u{1b}[31m"),
            "{gen}: red reached the pane"
        );
        // Several matches: counted, n and N step through them.
        t.keys(&["g", "/"]);
        t.tmux(&["send-keys", "-t", "v", "-l", "toolu_0[12]"]);
        t.keys(&["Enter"]);
        t.wait_for("the first of 4", |sc| status_bar(sc).contains("match 1/4"));
        t.keys(&["n"]);
        t.wait_for("the second of 4", |sc| status_bar(sc).contains("match 2/4"));
        t.keys(&["2", "n"]);
        t.wait_for("the fourth of 4", |sc| status_bar(sc).contains("match 4/4"));
        t.keys(&["n"]);
        t.wait_for("wrapped to the first", |sc| {
            status_bar(sc).contains("match 1/4, search wrapped")
        });
        t.keys(&["q"]);
        t.wait_for("the shell again", |sc| sc.trim_end().ends_with("PROMPT$"));
    }
}

/// The same on JetStream, with a run the runner made (its exec ran a real
/// command): the output's lines, `?`, `<n>G` and a counted regex search.
#[test]
fn viewer_keys_and_exec_output_on_jetstream() {
    let f = Fixture::new(&[
        turn(
            "",
            &[(
                "toolu_e1",
                "exec",
                serde_json::json!({"command": "printf 'NAME    MESSAGES\\nORDERS  10\\n'; echo warn >&2; exit 1"}),
            )],
        ),
        turn("done", &[]),
    ]);
    let r = f.run("exec-run", "count the streams");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let srv = crate::nats_support::NatsServer::start();
    srv.spec_stream("VIEWX", "viewx.>");
    let from = format!("file:{}", s(&f.runs()));
    migrate_via(
        f.dir.path(),
        &srv.url,
        &from,
        "jetstream:VIEWX",
        &["exec-run"],
    );
    let t = Tmux::start(100, 24);
    t.type_line(&format!(
        "{} --server {} --store jetstream:VIEWX show exec-run --transcript",
        s(&bin()),
        srv.url
    ));
    let first = t.wait_for("the viewer's first screen on JetStream", |sc| {
        sc.contains("[prompt]") && sc.contains("exec-run · block")
    });
    let folded = row_with(&first, "[tool_result toolu_e1");
    assert!(
        folded.contains(" error builtin exit 1]  NAME    MESSAGES  (5 lines, z opens)"),
        "{folded}"
    );
    help_and_back(&t, "Space", "exec-run");
    t.keys(&["3", "G"]);
    t.wait_for("block 3", |sc| status_bar(sc).contains("block 3/"));
    t.keys(&["/"]);
    t.tmux(&["send-keys", "-t", "v", "-l", "^ +ORDERS +[0-9]+$"]);
    t.keys(&["Enter"]);
    let sc = t.wait_for("the match", |sc| status_bar(sc).contains("match 1/1"));
    assert!(sc.contains("    ORDERS  10"), "{sc}");
    assert!(
        sc.contains("  stderr:\n") || sc.contains("  stderr:"),
        "{sc}"
    );
    t.keys(&["q"]);
    t.wait_for("the shell again", |sc| sc.trim_end().ends_with("PROMPT$"));
}

/// `--color always` in line mode on a terminal: through the pager
/// (`PAGER=less` with an operator's `LESS` that lacks -R: it is told -R), the
/// labels show in colour in the pane and none of the output's own escape
/// sequences reaches it.
#[test]
fn line_mode_color_always_through_less_shows_colour_and_no_journal_escape() {
    let store = exec_store(
        "v3",
        &serde_json::json!({
            "stdout": "MARK \u{1b}]2;PWNED-TITLE\u{7}\u{1b}[31mREDTEXT\u{1b}[0m\nok\n",
            "stderr": "",
            "exit_status": 1,
        }),
    );
    let t = Tmux::start(100, 20);
    t.type_line(&format!(
        "PAGER=less LESS=X {} --color always --state-dir {} show g-tool-batch --transcript --no-tui; echo FIN$((1+2))",
        s(&bin()),
        s(store.path())
    ));
    // Longer than the pane: less waits at its prompt.
    t.wait_for("less's first screen", |sc| {
        sc.contains("Transcript of g-tool-batch") && sc.trim_end().ends_with(':')
    });
    t.keys(&["G"]);
    let sc = t.wait_for("the end in less", |sc| {
        sc.contains("[run status: completed]")
    });
    assert!(
        sc.contains("MARK \\u{1b}]2;PWNED-TITLE\\u{7}\\u{1b}[31mREDTEXT"),
        "{sc}"
    );
    assert!(
        !sc.contains("ESC["),
        "colour codes shown as text (no -R):\n{sc}"
    );
    let raw = t.screen_raw();
    assert!(
        raw.contains("\u{1b}[32m"),
        "no green label in the pane:\n{raw}"
    );
    assert!(
        raw.contains("\u{1b}[34m"),
        "no blue label in the pane:\n{raw}"
    );
    assert!(
        !raw.contains("\u{1b}[31m"),
        "the output's red reached the pane:\n{raw}"
    );
    let title = t.tmux(&["display-message", "-p", "-t", "v", "#{pane_title}"]);
    assert!(!title.contains("PWNED"), "the pane title was set: {title}");
    t.keys(&["q"]);
    t.wait_for("the shell again", |sc| sc.contains("FIN3"));
}

/// Issue 39, d-13: at 80 columns the closing section's answer command,
/// longer than a row, is cut at its spaces with a shell continuation:
/// the rows copied off the screen are the one command (at b926494 it was
/// cut mid-token: `... answer r-425b… to` / `olu_ex_2`).
#[test]
fn viewer_never_breaks_the_answer_command_inside_a_word() {
    let t = Tmux::start(80, 24);
    // A store path long enough that the command needs three rows.
    let dir = tempfile::tempdir().unwrap();
    let store = dir
        .path()
        .join("a-store-directory-with-a-rather-long-name-for-the-night");
    std::fs::create_dir(&store).unwrap();
    std::fs::copy(
        testdata("runs-v1/deferral-waiting.json"),
        store.join("deferral-waiting.json"),
    )
    .unwrap();
    t.view(&store, "deferral-waiting");
    t.keys(&["G"]);
    let sc = t.wait_for("the closing section", |sc| sc.contains("answer it with:"));
    let rows: Vec<&str> = sc.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("answer it with:"))
        .unwrap();
    // What a shell reads of the rows: a `\` at a row's end joins it to
    // the next; the gutter (13 columns) is not the command's.
    let mut joined = String::new();
    for r in &rows[at + 1..] {
        assert!(r.chars().count() <= 80, "{r:?}");
        let text = r.get(13..).unwrap_or_default();
        if text.trim().starts_with('#') || text.trim().is_empty() {
            break;
        }
        match text.trim_end().strip_suffix('\\') {
            Some(part) => joined.push_str(part),
            None => {
                joined.push_str(text);
                break;
            }
        }
    }
    let words: Vec<&str> = joined.split_whitespace().collect();
    // Only a word wider than a row is cut (here the store's path, which
    // the shell joins back: its rest starts the next row).
    for r in &rows[at + 1..at + 3] {
        assert!(!r.contains("toolu_01UKhS4K7g2wv63auxXVYqVE\\"), "{sc}");
    }
    let want = format!(
        "{} --state-dir {} answer deferral-waiting toolu_01UKhS4K7g2wv63auxXVYqVE",
        "fisk-admin",
        s(&store)
    );
    assert_eq!(words.join(" "), want, "{sc}");
}
