//! Shared helpers: run the binary, make stores, parse JSON output.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fisk-admin"))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn testdata(rel: &str) -> PathBuf {
    repo().join("testdata").join(rel)
}

/// The result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))
            })
            .collect()
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Run `fisk-admin args...` with no terminal, no colour, a private HOME and
/// XDG dirs under `home`, and optional stdin.
pub fn fisk_in(home: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    fisk_env(home, args, &[], stdin)
}

/// `fisk-admin args...` prepared with no terminal, no colour, a private
/// HOME and XDG dirs under `home`, and `env` set as well; nothing else of
/// this process's environment but `PATH`.
pub fn command_in(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("NO_COLOR", "1")
        .envs(env.iter().copied());
    cmd
}

/// `fisk_in` with environment variables `env` set as well.
pub fn fisk_env(home: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Run {
    let mut cmd = command_in(home, args, env);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("spawn fisk-admin");
    if let Some(input) = stdin {
        feed(&mut child, input);
    }
    child.wait_with_output().expect("wait fisk-admin").into()
}

pub fn fisk(args: &[&str]) -> Run {
    let home = tempfile::tempdir().expect("tempdir");
    fisk_in(home.path(), args, None)
}

/// Copy a testdata state dir into a fresh temp dir with the modes a real
/// store has (0700 dir, 0600 journals); git does not keep them.
pub fn store_copy(rel: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = testdata(rel);
    for entry in std::fs::read_dir(&src).expect("read testdata dir") {
        let entry = entry.expect("entry");
        let from = entry.path();
        let to = tmp.path().join(entry.file_name());
        let ft = entry.file_type().expect("file type");
        if ft.is_symlink() {
            let target = std::fs::read_link(&from).expect("readlink");
            std::os::unix::fs::symlink(target, &to).expect("symlink");
        } else if ft.is_file() {
            std::fs::copy(&from, &to).expect("copy");
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o700))
        .expect("chmod dir");
    tmp
}

/// Give a store directory the modes a real store has: 0700, its files
/// 0600.
pub fn private(dir: &Path) {
    for e in std::fs::read_dir(dir).expect("read store dir") {
        let p = e.expect("entry").path();
        if p.is_file() {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod dir");
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A directory with an agent file (`agent.yaml`, store `./runs`) and a
/// turns file, for `run`/`resume` and the commands that change a store.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

/// One scripted turn: text and `exec`/`defer`/other calls `(id, name, input)`.
/// An agent whose first turn asks for two exec calls in one batch
/// (`echo one`, `echo two`) and whose second ends the run.
pub fn two_calls_then_done() -> Fixture {
    Fixture::new(&[
        turn(
            "looking",
            &[
                ("a", "exec", serde_json::json!({"command": "echo one"})),
                ("b", "exec", serde_json::json!({"command": "echo two"})),
            ],
        ),
        turn("all done", &[]),
    ])
}

/// An agent whose first turn asks for one exec call `t1` running
/// `command`, and whose second ends the run.
pub fn exec_then_done(command: &str) -> Fixture {
    Fixture::new(&[
        turn(
            "",
            &[("t1", "exec", serde_json::json!({ "command": command }))],
        ),
        turn("done", &[]),
    ])
}

pub fn turn(text: &str, calls: &[(&str, &str, serde_json::Value)]) -> String {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(serde_json::json!({"text": {"text": text}}));
    }
    for (id, name, input) in calls {
        content.push(serde_json::json!({"tool_use": {"id": id, "name": name, "input": input}}));
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    serde_json::json!({
        "message": {"role": "assistant", "content": content},
        "stop_reason": stop, "in_tokens": 100, "out_tokens": 20,
    })
    .to_string()
}

impl Fixture {
    /// `extra_llm` lines go under `llm:` (e.g. `reasoning_effort: high`).
    pub fn new(turns: &[String]) -> Fixture {
        let f = Fixture {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        f.write_turns(turns);
        f.write_agent("demo-1", "script", "", 200000, 20, "[exec, defer]");
        f
    }

    /// Gate exec: the runner suspends before an exec call until a person
    /// approves it (`gate: [exec]` in the agent file).
    pub fn gate_exec(&self) {
        let path = self.path("agent.yaml");
        let mut text = std::fs::read_to_string(&path).expect("agent.yaml");
        text.push_str("gate: [exec]\n");
        std::fs::write(path, text).expect("agent.yaml");
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write_turns(&self, turns: &[String]) {
        std::fs::write(self.path("turns.jsonl"), turns.join("\n") + "\n").expect("turns");
    }

    pub fn write_agent(
        &self,
        model: &str,
        provider: &str,
        extra_llm: &str,
        max_tokens: i64,
        max_iterations: i64,
        tools: &str,
    ) {
        self.write_agent_as(
            "agent.yaml",
            model,
            provider,
            extra_llm,
            max_tokens,
            max_iterations,
            tools,
        );
    }

    #[allow(clippy::too_many_arguments)]
    pub fn write_agent_as(
        &self,
        name: &str,
        model: &str,
        provider: &str,
        extra_llm: &str,
        max_tokens: i64,
        max_iterations: i64,
        tools: &str,
    ) {
        let text = format!(
            "llm:\n  provider: {provider}\n  model: {model}\n  script: turns.jsonl\n  thinking: off\n{extra_llm}  budget: {{max_tokens: {max_tokens}, max_iterations: {max_iterations}}}\nsystem: [\"You are a careful operator.\"]\ntools: {tools}\nharness:\n  sessions: {{backend: file, options: {{directory: ./runs}}}}\nnats_context: \"\"\n"
        );
        std::fs::write(self.path(name), text).expect("agent");
    }

    pub fn runs(&self) -> PathBuf {
        self.path("runs")
    }

    pub fn journal(&self, run: &str) -> PathBuf {
        self.runs().join(format!("{run}.json"))
    }

    pub fn bytes(&self, run: &str) -> Vec<u8> {
        std::fs::read(self.journal(run)).expect("read journal")
    }

    /// A command prepared to run in the fixture directory.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_STATE_HOME", self.path("state"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `sh -c line` with this build first on `PATH` as `fisk-admin`.
    fn paste_command(&self, line: &str) -> Command {
        let bin_dir = self.path(".paste-bin");
        let link = bin_dir.join("fisk-admin");
        if !link.exists() {
            std::fs::create_dir_all(&bin_dir).expect("paste bin dir");
            std::os::unix::fs::symlink(bin(), &link).expect("link fisk-admin");
        }
        let cmd = self.command(&[]);
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(line);
        sh.current_dir(self.dir.path()).env_clear();
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                sh.env(k, v);
            }
        }
        let path = std::env::var("PATH").unwrap_or_default();
        sh.env("PATH", format!("{}:{path}", bin_dir.display()));
        sh
    }

    /// A command line this tool printed for pasting, run by `sh` as an
    /// operator would paste it, with this build first on `PATH` as
    /// `fisk-admin` (so a `fisk-admin` inside an argument stays as
    /// printed), in the same environment as [`fisk`](Self::fisk), with no
    /// standard input.
    pub fn paste(&self, line: &str) -> Run {
        self.paste_command(line)
            .stdin(Stdio::null())
            .output()
            .expect("run sh")
            .into()
    }

    /// [`paste`](Self::paste) with `input` on standard input (what the
    /// operator pipes into a command that reads it).
    pub fn paste_stdin(&self, line: &str, input: &[u8]) -> Run {
        let mut child = self
            .paste_command(line)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sh");
        feed(&mut child, input);
        child.wait_with_output().expect("wait").into()
    }

    pub fn fisk(&self, args: &[&str]) -> Run {
        self.command(args).output().expect("run fisk-admin").into()
    }

    pub fn fisk_stdin(&self, args: &[&str], input: &[u8]) -> Run {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn fisk-admin");
        feed(&mut child, input);
        child.wait_with_output().expect("wait").into()
    }

    /// `fisk-admin --state-dir runs ARGS`.
    pub fn store(&self, args: &[&str]) -> Run {
        let runs = self.runs();
        let mut all = vec!["--state-dir", s(&runs)];
        all.extend_from_slice(args);
        self.fisk(&all)
    }

    pub fn run(&self, id: &str, prompt: &str) -> Run {
        self.fisk(&["run", "--agent", "agent.yaml", "--id", id, prompt])
    }

    pub fn resume(&self, id: &str, extra: &[&str]) -> Run {
        let mut all = vec!["resume", id, "--agent", "agent.yaml"];
        all.extend_from_slice(extra);
        self.fisk(&all)
    }

    /// The folded state (`fold --format json`).
    pub fn fold(&self, run: &str) -> serde_json::Value {
        let r = self.store(&["fold", run, "--format", "json"]);
        assert_eq!(r.code, 0, "fold failed: {}", r.stderr);
        r.json()
    }

    /// `verify --format json` findings of one run (the summary dropped).
    pub fn findings(&self, run: &str) -> Vec<serde_json::Value> {
        let r = self.store(&["verify", run, "--format", "json"]);
        r.json_lines()
            .into_iter()
            .filter(|v| v.get("summary").is_none())
            .collect()
    }

    /// Hold the run lock from this process, as a live writer would.
    pub fn hold_lock(&self, run: &str) -> std::fs::File {
        std::fs::create_dir_all(self.runs()).expect("runs dir");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.runs().join(format!("{run}.lock")))
            .expect("open lock");
        f.try_lock().expect("take lock");
        f
    }
}

/// Write `input` to the child's stdin and close it. A command may end
/// without reading its input (an error found first, e.g. a bad flag): the
/// pipe is then broken, and its exit code and output are what the test
/// checks, so that is not a failure of the test.
fn feed(child: &mut std::process::Child, input: &[u8]) {
    use std::io::Write;
    let mut s = child.stdin.take().expect("stdin");
    match s.write_all(input) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("cannot write the command's stdin: {e}"),
    }
}

/// Panics when `text` holds anything that could act on a terminal: a
/// control character other than `\n` and `\t` (so every escape sequence's
/// introducer, C1 included), or an invisible format character (bidi
/// overrides, zero-width space, tag characters).
pub fn assert_printable(what: &str, text: &str) {
    for c in text.chars() {
        let format = matches!(
            c,
            '\u{ad}' | '\u{61c}' | '\u{200b}' | '\u{200e}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}'
        );
        assert!(
            !(format || c.is_control() && c != '\n' && c != '\t'),
            "{what} printed {c:?} raw:\n{text}"
        );
    }
}

/// `migrate --from FROM --to TO RUNS...` (`--all` when `runs` is empty)
/// through the server at `url`, in `home`; it must succeed.
pub fn migrate_via(home: &Path, url: &str, from: &str, to: &str, runs: &[&str]) -> Run {
    let mut args = vec!["--server", url, "migrate", "--from", from, "--to", to];
    match runs {
        [] => args.push("--all"),
        _ => args.extend_from_slice(runs),
    }
    let r = fisk_in(home, &args, None);
    assert_eq!(
        r.code, 0,
        "migrate {from} -> {to}: {}{}",
        r.stdout, r.stderr
    );
    r
}

/// The commands an output prints as steps (issue 39, d-22): each label
/// (`next:`, `then:`, `go on with:`, ...) alone on its line, the command
/// alone on the lines under it, what it still needs as `# ...` comments.
pub fn steps(out: &str, labels: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut under = false;
    for l in out.lines() {
        let t = l.trim();
        if labels.iter().any(|label| t == format!("{label}:")) {
            under = true;
            continue;
        }
        if under && t.starts_with("fisk-admin ") {
            found.push(t.to_owned());
            continue;
        }
        if !t.starts_with('#') {
            under = false;
        }
    }
    found
}
