//! Choosing the store and the connection (issue 23, items 4, 6 and 7): a
//! flag beats its variable, the agent file's root directory places the
//! file store as the agent does, `info` says what chose each setting, and
//! a run named by its journal's path gets the command that reads it.

use crate::support::{s, store_copy, Fixture};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// `fisk-admin ARGS` in `cwd`, with only `env` (and a home under `home`).
fn at(cwd: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> crate::support::Run {
    crate::support::command_in(home, args, env)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into()
}

fn info(cwd: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["info", "-o", "json"]);
    let r = at(cwd, home, &all, env);
    assert!(r.code <= 2, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {} {}", r.stdout, r.stderr))
}

fn real(p: &Path) -> String {
    s(&std::fs::canonicalize(p).unwrap()).to_owned()
}

#[test]
fn a_store_flag_beats_fisk_admin_store_and_the_variable_alone_is_named() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let store = store_copy("runs");
    let dir = s(store.path());
    let env = [("FISK_ADMIN_STORE", "file:/no/such/store")];
    // Was: "give the directory once: --state-dir DIR or --store file:DIR".
    let r = at(h, h, &["--state-dir", dir, "ls", "-o", "json"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.json().as_array().unwrap().len() > 10);
    let v = info(h, h, &["--state-dir", dir], &env);
    assert_eq!(v["why"], "--state-dir");
    assert_eq!(v["chosen_by"], "flag");
    assert_eq!(v["setting"], "--state-dir");
    // A variable a flag overrides is not even parsed.
    let bad = [("FISK_ADMIN_STORE", "nonsense")];
    let r = at(h, h, &["--state-dir", dir, "ls"], &bad);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let uri = format!("file:{dir}");
    let v = info(h, h, &["--store", &uri], &env);
    assert_eq!(
        (v["setting"].as_str(), v["location"].as_str()),
        (Some("--store"), Some(dir))
    );
    // --config beats it (the variable used to win silently).
    let agent = h.join("agent.yaml");
    std::fs::write(
        &agent,
        format!("harness:\n  sessions: {{backend: file, options: {{directory: {dir}}}}}\n"),
    )
    .unwrap();
    let v = info(h, h, &["--config", s(&agent)], &env);
    assert_eq!(v["location"], dir);
    assert_eq!(v["chosen_by"], "agent file");
    assert_eq!(v["setting"], "--config");
    // So does --root-dir.
    let v = info(h, h, &["--root-dir", dir], &env);
    assert_eq!(v["location"], s(&store.path().join("runs")));
    assert_eq!(v["setting"], "--root-dir");
    // With no flag the variable chooses, and says so.
    let v = info(h, h, &[], &env);
    assert_eq!(v["location"], "/no/such/store");
    assert_eq!(v["chosen_by"], "environment");
    assert_eq!(v["setting"], "FISK_ADMIN_STORE");
    let r = at(h, h, &["info"], &env);
    assert!(
        r.stdout
            .contains("chosen by: FISK_ADMIN_STORE (environment variable)"),
        "{}",
        r.stdout
    );
    // A variable the tool reads is not a flag: migrate and validate --file,
    // which refuse --store, run with it set.
    let dst = tempfile::tempdir().unwrap();
    let to = format!("file:{}", s(&dst.path().join("copy")));
    let from = format!("file:{dir}");
    let r = at(
        h,
        h,
        &["migrate", "--from", &from, "--to", &to, "tool-batch"],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let journal = store.path().join("tool-batch.json");
    let r = at(h, h, &["validate", "--file", s(&journal)], &env);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn connection_flags_beat_their_variables_and_info_says_where_each_came_from() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let js = ["--store", "jetstream:S"];
    // Nothing listens on ports 1 and 2: info reports, exit 2.
    let env = [
        ("NATS_URL", "nats://127.0.0.1:1"),
        ("NATS_USER", "env-user"),
        ("NATS_PASSWORD", "env-secret"),
    ];
    let mut a = js.to_vec();
    a.extend_from_slice(&["--server", "nats://127.0.0.1:2"]);
    let v = info(h, h, &a, &env);
    assert_eq!(v["server"], "nats://127.0.0.1:2");
    assert_eq!(v["connection"]["server"], "--server");
    assert_eq!(v["connection"]["user"], "NATS_USER (environment)");
    assert_eq!(v["connection"]["password"], "NATS_PASSWORD (environment)");
    // --password-file with NATS_PASSWORD set: the flag wins (was a clap
    // conflict with --password).
    let pw = h.join("pw");
    std::fs::write(&pw, "from-file\n").unwrap();
    let mut a = js.to_vec();
    a.extend_from_slice(&["--password-file", s(&pw)]);
    let v = info(h, h, &a, &env);
    assert_eq!(v["connection"]["password"], "--password-file");
    assert_eq!(v["connection"]["server"], "NATS_URL (environment)");
    // A token given as a flag is not mixed with the environment's user and
    // password, nor a user given as a flag with its token.
    let mut a = js.to_vec();
    a.extend_from_slice(&["--token", "t0k"]);
    let v = info(h, h, &a, &env);
    assert_eq!(v["connection"]["token"], "--token");
    assert!(
        v["connection"]["user"].is_null() && v["connection"]["password"].is_null(),
        "{v}"
    );
    let mut a = js.to_vec();
    a.extend_from_slice(&["--user", "ops"]);
    let v = info(h, h, &a, &[("NATS_TOKEN", "env-token")]);
    assert_eq!(v["connection"]["user"], "--user");
    assert!(v["connection"]["token"].is_null(), "{v}");
    // As the nats CLI: a context gives what no flag or variable does, and
    // NATS_URL overrides the context's server even when --context is a flag.
    let ctx = h.join("config/nats/context");
    std::fs::create_dir_all(&ctx).unwrap();
    std::fs::write(
        ctx.join("prod.json"),
        r#"{"url":"nats://127.0.0.1:3","user":"ctx-user","password":"ctx-pw"}"#,
    )
    .unwrap();
    let mut a = js.to_vec();
    a.extend_from_slice(&["--context", "prod"]);
    let v = info(h, h, &a, &[]);
    assert_eq!(v["server"], "nats://127.0.0.1:3");
    assert_eq!(v["connection"]["server"], "context prod");
    assert_eq!(v["connection"]["user"], "context prod");
    let v = info(h, h, &a, &[("NATS_URL", "nats://127.0.0.1:1")]);
    assert_eq!(v["server"], "nats://127.0.0.1:1");
    assert_eq!(v["connection"]["server"], "NATS_URL (environment)");
    assert_eq!(v["context"], "prod (--context)");
    let v = info(h, h, &js, &[]);
    assert_eq!(v["connection"]["server"], "default");
    // The text says the same, and no secret.
    let mut a = js.to_vec();
    a.push("info");
    let r = at(h, h, &a, &env);
    assert!(
        r.stdout
            .contains("server:    nats://127.0.0.1:1 (from NATS_URL (environment))")
            && r.stdout
                .contains("password:  from NATS_PASSWORD (environment)"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("env-secret") && !r.stderr.contains("env-secret"));
}

#[test]
fn help_names_each_variable_without_its_value() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let vars = [
        "FISK_ADMIN_STORE",
        "NATS_URL",
        "NATS_CREDS",
        "NATS_USER",
        "NATS_PASSWORD",
        "NATS_TOKEN",
    ];
    let env: Vec<(&str, &str)> = vars.iter().map(|v| (*v, "set-value")).collect();
    let r = at(h, h, &["--help"], &env);
    assert_eq!(r.code, 0);
    // Help wraps; read it as one line.
    let text = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for v in vars {
        assert!(text.contains(&format!("[env: {v}]")), "{v}: {text}");
    }
    assert!(
        !text.contains("set-value") && !text.contains("=]"),
        "{text}"
    );
    let r = at(h, h, &["--help"], &[]);
    assert!(!r.stdout.contains("=]"), "{}", r.stdout);
}

/// An agent file in `dir` with `body`.
fn agent(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    s(&p).to_owned()
}

#[test]
fn the_agent_files_root_directory_places_the_file_store_as_the_agent_does() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let root = h.join("srv");
    std::fs::create_dir_all(h.join("etc")).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    let etc = h.join("etc");
    let root_s = real(&root);
    let loc = |args: &[&str]| info(h, h, args, &[])["location"].clone();
    // No directory: <root>/runs.
    let a = agent(&etc, "a.yaml", &format!("root_directory: {root_s}\n"));
    assert_eq!(loc(&["--config", &a]), format!("{root_s}/runs"));
    let a = agent(
        &etc,
        "b.yaml",
        &format!("root_directory: {root_s}\nharness:\n  sessions: {{backend: file}}\n"),
    );
    assert_eq!(loc(&["--config", &a]), format!("{root_s}/runs"));
    // A relative directory under the root, not beside the file.
    let a = agent(
        &etc,
        "c.yaml",
        &format!(
            "root_directory: {root_s}\nharness:\n  sessions: {{backend: file, options: {{directory: ./journals}}}}\n"
        ),
    );
    let v = info(h, h, &["--config", &a], &[]);
    assert_eq!(v["location"], format!("{root_s}/journals"));
    assert_eq!(v["root_directory"], root_s);
    assert_eq!(v["root_from"], format!("root_directory in {a}"));
    // An absolute one as written.
    let a = agent(
        &etc,
        "d.yaml",
        &format!("root_directory: {root_s}\nharness:\n  sessions: {{backend: file, options: {{directory: /var/x}}}}\n"),
    );
    assert_eq!(loc(&["--config", &a]), "/var/x");
    // No root: a relative directory beside the file (CLI.md), no directory
    // the default.
    let a = agent(
        &etc,
        "e.yaml",
        "harness:\n  sessions: {backend: file, options: {directory: ./journals}}\n",
    );
    assert_eq!(loc(&["--config", &a]), format!("{}/journals", real(&etc)));
    let a = agent(&etc, "f.yaml", "llm: {model: m}\n");
    let v = info(h, h, &["--config", &a], &[]);
    assert_eq!(v["location"], s(&h.join("state/fisk-ai/runs")));
    assert!(v["root_directory"].is_null());
    // --root-dir replaces the file's root; relative, it is read from the
    // working directory.
    let other = h.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let c = etc.join("c.yaml");
    let v = info(h, h, &["--config", s(&c), "--root-dir", "other"], &[]);
    assert_eq!(v["location"], format!("{}/journals", real(&other)));
    assert_eq!(v["root_from"], "--root-dir");
    // Alone, it places the store at DIR/runs.
    assert_eq!(
        loc(&["--root-dir", "other"]),
        format!("{}/runs", real(&other))
    );
    // A store flag still wins over both.
    assert_eq!(loc(&["--config", s(&c), "--state-dir", "/x"]), "/x");
    // What the agent refuses is refused: a relative root_directory (unless
    // --root-dir replaces it), and a root that is not a directory.
    let a = agent(&etc, "g.yaml", "root_directory: srv/agent\n");
    let r = at(h, h, &["--config", &a, "info"], &[]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("root_directory")
            && r.stderr.contains("absolute")
            && r.stderr.contains("g.yaml"),
        "{}",
        r.stderr
    );
    assert_eq!(
        loc(&["--config", &a, "--root-dir", "other"]),
        format!("{}/runs", real(&other))
    );
    let a = agent(&etc, "h.yaml", &format!("root_directory: {root_s}/gone\n"));
    let r = at(h, h, &["--config", &a, "ls"], &[]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("does not exist") && r.stderr.contains("root_directory"),
        "{}",
        r.stderr
    );
    let r = at(h, h, &["--root-dir", &a, "ls"], &[]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--root-dir") && r.stderr.contains("not a directory"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_runner_and_the_readers_find_the_store_under_the_same_root() {
    let f = Fixture::new(&[crate::support::turn("done", &[])]);
    let root = f.path("root");
    std::fs::create_dir_all(&root).unwrap();
    let text = std::fs::read_to_string(f.path("agent.yaml")).unwrap();
    // The fixture's agent file with a root and no directory.
    let text = text.replace(
        "  sessions: {backend: file, options: {directory: ./runs}}\n",
        "  sessions: {backend: file}\n",
    ) + &format!("root_directory: {}\n", s(&root));
    std::fs::write(f.path("agent.yaml"), text).unwrap();
    let r = f.run("rooted-1", "hello");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(root.join("runs/rooted-1.json").is_file());
    assert!(!f.journal("rooted-1").exists());
    let r = f.fisk(&["--config", "agent.yaml", "show", "rooted-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // --root-dir moves both.
    let other = f.path("other");
    std::fs::create_dir_all(&other).unwrap();
    let r = f.fisk(&[
        "--root-dir",
        "other",
        "run",
        "--agent",
        "agent.yaml",
        "--id",
        "rooted-2",
        "hi",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(other.join("runs/rooted-2.json").is_file());
    let r = f.fisk(&["--root-dir", "other", "ls", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()[0]["run_id"], "rooted-2");
}

#[test]
fn a_run_given_as_its_journals_path_gets_the_command_that_reads_it() {
    let f = Fixture::new(&[]);
    let store = store_copy("runs");
    std::fs::rename(store.path(), f.path("t")).unwrap();
    for (args, want) in [
        (
            vec!["--state-dir", "t", "show", "t/deferral-waiting.json"],
            "`fisk-admin --state-dir t show deferral-waiting`",
        ),
        // No store flag, and the default store does not exist: the same.
        (
            vec!["show", "./t/deferral-waiting.json", "-o", "json"],
            "`fisk-admin --state-dir ./t show deferral-waiting -o json`",
        ),
        (
            vec!["--store", "file:elsewhere", "fold", "t/tool-batch.json"],
            "`fisk-admin --state-dir t fold tool-batch`",
        ),
    ] {
        let r = f.fisk(&args);
        assert_eq!(r.code, 2, "{args:?}");
        let Some(at) = r.stderr.find(want) else {
            panic!("{args:?}: {}", r.stderr);
        };
        assert!(!r.stderr.contains("pass --state-dir"), "{}", r.stderr);
        // Pasted, it works.
        let line = &r.stderr[at + 1..at + want.len() - 1];
        let pasted = f.paste(line);
        assert_eq!(pasted.code, 0, "{line}: {}", pasted.stderr);
    }
    // The store flags it replaces and any secret are left out.
    let r = f.fisk(&[
        "--password",
        "hunter2",
        "--config",
        "agent.yaml",
        "show",
        "t/tool-batch.json",
    ]);
    assert!(
        r.stderr
            .contains("`fisk-admin --state-dir t show tool-batch`")
            && !r.stderr.contains("hunter2"),
        "{}",
        r.stderr
    );
    // A path that is no journal gets no such help.
    let r = f.fisk(&["--state-dir", "t", "show", "t/nothing-here.json"]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains("read it with"), "{}", r.stderr);
}

#[test]
fn help_never_asks_for_a_flag_that_was_given_and_paths_are_said_once() {
    let f = Fixture::new(&[]);
    let r = f.fisk(&["--state-dir", "nope", "ls"]);
    assert_eq!(r.code, 2);
    assert!(
        !r.stderr.contains("pass --state-dir") && r.stderr.contains("working directory"),
        "{}",
        r.stderr
    );
    let r = f.fisk(&["--store", "file:nope", "ls"]);
    assert!(!r.stderr.contains("--store file:DIR"), "{}", r.stderr);
    // The agent file chose it: say to correct the file.
    let r = f.fisk(&["--config", "agent.yaml", "ls"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("agent.yaml (--config)") && r.stderr.contains("options.directory"),
        "{}",
        r.stderr
    );
    // `././runs` was the agent file's `./runs` beside `./agent.yaml`.
    std::fs::create_dir_all(f.runs()).unwrap();
    let r = f.fisk(&["--config", "./agent.yaml", "ls"]);
    assert!(
        !r.stdout.contains("././") && !r.stderr.contains("././"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stdout.contains("directory ./runs") || r.stderr.contains("directory ./runs"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    // The default: the rule, not the path a second time.
    let r = f.fisk(&["info"]);
    let dir = f.path("state/fisk-ai/runs");
    assert_eq!(r.stdout.matches(s(&dir)).count(), 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("chosen by: default, under $XDG_STATE_HOME"),
        "{}",
        r.stdout
    );
}
