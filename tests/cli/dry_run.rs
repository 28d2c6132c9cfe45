//! Every command that writes takes `--dry-run` and `--yes` (issue 35), and
//! a dry run makes the checks the real command makes and writes nothing,
//! anywhere: the store, its backups and the state home are byte for byte
//! as they were (terraform's plan, `kubectl --dry-run=server`). Where the
//! real command refuses, so does its dry run, with the same exit status.
//! Both backends.

use crate::nats_support::NatsServer;
use crate::support::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `dir`, by path, with its bytes (symbolic links as
/// their target).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            let md = std::fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                todo.push(p);
            } else if md.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(p, t.to_string_lossy().as_bytes().to_vec());
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The first `tool_use` id of `run`'s pending batch that `approve` takes.
fn pending_call(f: &Fixture, run: &str) -> String {
    let fold = f.fold(run);
    let content = fold["pending"]["assistant"]["content"].as_array().unwrap();
    let answered: Vec<&str> = fold["pending"]["answered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    content
        .iter()
        .filter_map(|b| b["tool_use"]["id"].as_str())
        .find(|id| !answered.contains(id))
        .unwrap()
        .to_owned()
}

/// A store of runs in every state a write cares about, in the fixture's
/// `runs/`, and one the fixture's agent started and a person answered
/// (ready to resume, with the agent file it resumes with).
fn fixture() -> Fixture {
    let f = Fixture::new(&[
        turn("", &[("d1", "defer", serde_json::json!({"note": "ok?"}))]),
        turn("done", &[]),
    ]);
    assert_eq!(f.run("ready", "go").code, 0);
    let r = f.store(&["answer", "ready", "d1", "--content", "yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let copy = |from: &str, run: &str| {
        std::fs::copy(testdata(from).join(format!("{run}.json")), f.journal(run)).unwrap();
    };
    for run in [
        "deferral-waiting",
        "pending-batch",
        "open-no-terminal",
        "simple-completed",
        "tool-batch",
        "no-agent",
    ] {
        copy("runs-v1", run);
    }
    copy("damaged-v1", "torn-tail");
    copy("damaged-v1", "interior-corruption");
    // A version-3 run, for upgrade.
    let v3 = std::fs::read_to_string(testdata("runs").join("budget-terminal.json")).unwrap();
    std::fs::write(f.journal("budget-terminal"), v3).unwrap();
    private(&f.runs());
    f
}

/// The dry runs of every command that writes, each valid as the real
/// command would take it (the store and the state home untouched).
fn dry_runs(f: &Fixture, backup: &str) -> Vec<Vec<String>> {
    let call = pending_call(f, "pending-batch");
    let other = f.path("other");
    let to = format!("file:{}", s(&other));
    let from = format!("file:{}", s(&f.runs()));
    let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    vec![
        v(&["answer", "deferral-waiting", "--content", "x", "--dry-run"]),
        v(&["approve", "pending-batch", &call, "--dry-run"]),
        v(&["approve", "pending-batch", "--tool", "exec", "--dry-run"]),
        v(&["end", "open-no-terminal", "--dry-run"]),
        v(&["end", "--status", "open", "--prefix", "open-", "--dry-run"]),
        v(&["recover", "interior-corruption", "--dry-run"]),
        v(&["recover", "torn-tail", "--force", "--dry-run"]),
        v(&[
            "fork",
            "tool-batch",
            "--at-seq",
            "2",
            "--as",
            "forked",
            "--dry-run",
        ]),
        v(&["repair", "torn-tail", "--dry-run"]),
        v(&["rm", "simple-completed", "--dry-run"]),
        v(&["rm", "--status", "completed", "--dry-run"]),
        v(&["upgrade", "budget-terminal", "--dry-run"]),
        v(&["upgrade", "--all", "--dry-run"]),
        v(&["backups", "restore", backup, "--dry-run"]),
        v(&["backups", "prune", "--older-than", "0s", "--dry-run"]),
        v(&[
            "migrate",
            "--from",
            &from,
            "--to",
            &to,
            "simple-completed",
            "tool-batch",
            "--delete-source",
            "--dry-run",
        ]),
        v(&["resume", "ready", "--agent", "agent.yaml", "--dry-run"]),
    ]
}

#[test]
fn every_dry_run_writes_nothing_anywhere_on_the_file_backend() {
    let f = fixture();
    // A backup to restore: a real rm, before anything is compared.
    let r = f.store(&["-o", "json", "rm", "no-agent", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let backup = f.store(&["-o", "json", "backups"]).json()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for args in dry_runs(&f, &backup) {
        let before = tree(f.dir.path());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        // migrate names its stores itself.
        let run = |argv: &[&str]| match argv[0] {
            "migrate" => f.fisk(argv),
            _ => f.store(argv),
        };
        let r = run(&argv);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("would") || r.stdout.contains("dry run"),
            "{args:?}: {}",
            r.stdout
        );
        assert_eq!(tree(f.dir.path()), before, "{args:?} wrote something");
        // --yes is taken by every one of them too.
        let mut yes = argv.clone();
        yes.push("--yes");
        let r = run(&yes);
        assert_eq!(r.code, 0, "{yes:?}: {}", r.stderr);
        assert_eq!(tree(f.dir.path()), before, "{yes:?} wrote something");
    }
}

/// The dry run refuses what the real command refuses, with its exit
/// status and its message, and neither writes (issue 35.4: `end
/// --dry-run` listed a torn tail the real end refused; `approve --tool
/// --dry-run` wrote its record).
#[test]
fn a_dry_run_refuses_what_the_real_command_refuses() {
    let f = fixture();
    let refused: [&[&str]; 9] = [
        // Interior damage: repair refuses it (and names recover).
        &["repair", "interior-corruption"],
        // A person asked, or acted: named without --force.
        &["end", "deferral-waiting"],
        &["end", "ready"],
        &["rm", "ready"],
        // Damaged: end and answer need a whole journal.
        &["end", "torn-tail"],
        // The agent reads it whole: recover needs --force.
        &["recover", "tool-batch"],
        // A tool the run never called.
        &["approve", "pending-batch", "--tool", "nope"],
        // An ended run takes no approval.
        &["approve", "simple-completed", "--tool", "exec"],
        // A run waiting on an answer does not resume.
        &["resume", "deferral-waiting", "--agent", "agent.yaml"],
    ];
    for args in refused {
        let before = tree(f.dir.path());
        let mut dry = args.to_vec();
        dry.push("--dry-run");
        let d = f.store(&dry);
        assert_eq!(
            tree(f.dir.path()),
            before,
            "{args:?}: its dry run wrote something"
        );
        let mut real = args.to_vec();
        real.push("--yes");
        let r = f.store(&real);
        assert_eq!(d.code, r.code, "{args:?}: {}\n{}", d.stderr, r.stderr);
        assert!(d.code >= 1, "{args:?}: {}", d.stdout);
        // The same refusal, said the same way.
        let refusal = |e: &str| {
            let line = e.lines().next().unwrap_or("").to_owned();
            match line.find("nothing was written") {
                Some(i) => line[..i].to_owned(),
                None => line,
            }
        };
        assert_eq!(refusal(&d.stderr), refusal(&r.stderr), "{args:?}");
        // The real one wrote nothing either, but the run's lock file a
        // writer makes before it looks (resume takes the lock first).
        let mut after = tree(f.dir.path());
        after.retain(|p, b| {
            !(p.extension().is_some_and(|x| x == "lock") && b.is_empty() && !before.contains_key(p))
        });
        assert_eq!(after, before, "{args:?} wrote something");
    }
}

#[test]
fn every_dry_run_writes_nothing_anywhere_on_jetstream() {
    let srv = NatsServer::start();
    srv.spec_stream("DRY", "dry.>");
    srv.with_js(async |js| {
        let mut s = js.get_stream("DRY").await.unwrap();
        let mut config = s.info().await.unwrap().config.clone();
        config.allow_rollup = true;
        js.update_stream(config).await.unwrap();
    });
    let f = fixture();
    // The store, copied to the stream (the interior damage is not: a
    // stream holds whole messages).
    std::fs::remove_file(f.journal("interior-corruption")).unwrap();
    std::fs::remove_file(f.journal("torn-tail")).unwrap();
    let from = format!("file:{}", s(&f.runs()));
    let r = f.fisk(&[
        "--server",
        &srv.url,
        "migrate",
        "--from",
        &from,
        "--to",
        "jetstream:DRY",
        "--all",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let js = |args: &[&str]| {
        let mut all = vec![
            "--server",
            srv.url.as_str(),
            "--store",
            "jetstream:DRY",
            "--hold",
            "0",
        ];
        all.extend_from_slice(args);
        f.fisk(&all)
    };
    let r = js(&["-o", "json", "rm", "no-agent", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let backup = js(&["-o", "json", "backups"]).json()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let call = pending_call(&f, "pending-batch");
    let to = format!("file:{}", s(&f.path("other")));
    let stream = || {
        srv.with_js(async |js| {
            let mut s = js.get_stream("DRY").await.unwrap();
            let st = s.info().await.unwrap().state.clone();
            (st.messages, st.last_sequence)
        })
    };
    let cmds: [&[&str]; 12] = [
        &["answer", "deferral-waiting", "--content", "x", "--dry-run"],
        &["approve", "pending-batch", &call, "--dry-run"],
        &["end", "open-no-terminal", "--dry-run"],
        &["end", "--status", "open", "--prefix", "open-", "--dry-run"],
        &["recover", "tool-batch", "--force", "--dry-run"],
        &[
            "fork",
            "tool-batch",
            "--at-seq",
            "2",
            "--as",
            "forked",
            "--dry-run",
        ],
        &["rm", "simple-completed", "--dry-run"],
        &["upgrade", "budget-terminal", "--dry-run"],
        &["upgrade", "--all", "--dry-run"],
        &["backups", "restore", &backup, "--dry-run"],
        &["backups", "prune", "--older-than", "0s", "--dry-run"],
        &[
            "migrate",
            "--from",
            "jetstream:DRY",
            "--to",
            &to,
            "--all",
            "--delete-source",
            "--dry-run",
        ],
    ];
    for args in cmds {
        let (before, on_disk) = (stream(), tree(f.dir.path()));
        // migrate names its stores itself.
        let r = match args[0] {
            "migrate" => {
                let mut all = vec!["--server", srv.url.as_str(), "--hold", "0"];
                all.extend_from_slice(args);
                f.fisk(&all)
            }
            _ => js(args),
        };
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(stream(), before, "{args:?} wrote to the stream");
        assert_eq!(tree(f.dir.path()), on_disk, "{args:?} wrote to the disk");
    }
}
