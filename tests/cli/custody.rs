//! Chain of custody (issue 38), tried by someone who cheats: every write
//! leaves who, what and why in the store's audit log; a seal names each
//! way a run was changed after it (a one-byte edit, a record removed and
//! the rest renumbered, a cut tail, an older copy, a run removed); an
//! edited audit log, an edited seal and a seal signed with another key
//! are named too. Both backends: a directory, and a stream on a real
//! nats-server (the cheats there purge a subject and publish again, as an
//! operator with the stream's keys could).

use crate::nats_support::NatsServer;
use crate::support::*;
use std::path::{Path, PathBuf};

const WAITING: &str = "g-deferral-waiting";
const CRASHED: &str = "g-pending-crash";
const BATCH: &str = "g-tool-batch";

/// A store with three runs of the agent's own journals, on one backend.
struct Store {
    home: tempfile::TempDir,
    flags: Vec<String>,
    js: Option<(NatsServer, String)>,
}

impl Store {
    fn file() -> Store {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("runs");
        std::fs::create_dir(&dir).unwrap();
        for r in [WAITING, CRASHED, BATCH] {
            std::fs::copy(
                testdata(&format!("agent-journals/v1/{r}.json")),
                dir.join(format!("{r}.json")),
            )
            .unwrap();
        }
        private(&dir);
        let flags = vec!["--state-dir".into(), s(&dir).to_owned()];
        Store {
            home,
            flags,
            js: None,
        }
    }

    fn jetstream() -> Store {
        let file = Store::file();
        let srv = NatsServer::start();
        srv.spec_stream("CUSTODY", "cust.s.>");
        let dir = file.home.path().join("runs");
        let to = ["--server", srv.url.as_str()];
        let r = fisk_in(
            file.home.path(),
            &[
                &to[..],
                &[
                    "migrate",
                    "--from",
                    &format!("file:{}", s(&dir)),
                    "--to",
                    "jetstream:CUSTODY",
                    "--all",
                ],
            ]
            .concat(),
            None,
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        // No hold: the runs were copied in a moment ago.
        let flags = vec![
            "--server".into(),
            srv.url.clone(),
            "--store".into(),
            "jetstream:CUSTODY".into(),
            "--hold".into(),
            "0".into(),
        ];
        Store {
            home: file.home,
            flags,
            js: Some((srv, "cust.s".into())),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut all: Vec<&str> = self.flags.iter().map(String::as_str).collect();
        all.extend_from_slice(args);
        fisk_in(self.home.path(), &all, None)
    }

    fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    fn path(&self, name: &str) -> PathBuf {
        self.home.path().join(name)
    }

    /// The run's records as stored.
    fn records(&self, run: &str) -> Vec<Vec<u8>> {
        let r = self.ok(&["export", run, "--format", "jsonl"]);
        r.stdout.lines().map(|l| l.as_bytes().to_vec()).collect()
    }

    /// Make the run hold exactly `records` (seqs as they say), as a
    /// cheat would: the file rewritten; the run's subjects purged and
    /// published again.
    fn replace(&self, run: &str, records: &[Vec<u8>]) {
        match &self.js {
            None => {
                let path = self.home.path().join("runs").join(format!("{run}.json"));
                let bytes: Vec<u8> = records
                    .iter()
                    .flat_map(|r| [&r[..], b"\n"].concat())
                    .collect();
                std::fs::write(path, bytes).unwrap();
            }
            Some((srv, prefix)) => {
                let subjects: Vec<String> = (1..=records.len() as u64)
                    .map(|s| journal::store::jetstream::subject(prefix, run, s))
                    .collect();
                let filter = format!("{prefix}.{run}.>");
                let bodies = records.to_vec();
                srv.with_js(async move |js| {
                    let stream = js.get_stream("CUSTODY").await.unwrap();
                    stream.purge().filter(filter).await.unwrap();
                    for (subject, body) in subjects.into_iter().zip(bodies) {
                        js.publish(subject, body.into())
                            .await
                            .unwrap()
                            .await
                            .unwrap();
                    }
                });
            }
        }
    }

    /// Take the audit log's last entry away, as a process killed before
    /// it stored it leaves the log.
    fn drop_last_log_entry(&self) {
        match &self.js {
            None => {
                let path = self.home.path().join("runs/fisk-admin-audit.jsonl");
                let text = std::fs::read_to_string(&path).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                let keep = lines[..lines.len() - 1].join("\n") + "\n";
                std::fs::write(path, keep).unwrap();
            }
            Some((srv, prefix)) => {
                let filter = format!("{prefix}._audit.>");
                srv.with_js(async move |js| {
                    let stream = js.get_stream("CUSTODY").await.unwrap();
                    let m = stream
                        .get_last_raw_message_by_subject(&filter)
                        .await
                        .unwrap();
                    stream.delete_message(m.sequence).await.unwrap();
                });
            }
        }
    }

    /// Edit entry `n` of the audit log with `edit`.
    fn edit_log(&self, n: usize, edit: impl Fn(&str) -> String) {
        match &self.js {
            None => {
                let path = self.home.path().join("runs/fisk-admin-audit.jsonl");
                let text = std::fs::read_to_string(&path).unwrap();
                let lines: Vec<String> = text
                    .lines()
                    .enumerate()
                    .map(|(i, l)| if i + 1 == n { edit(l) } else { l.to_owned() })
                    .collect();
                std::fs::write(path, lines.join("\n") + "\n").unwrap();
            }
            Some((srv, prefix)) => {
                let subject = format!("{prefix}._audit.{n}");
                let edit = &edit;
                srv.with_js(async move |js| {
                    let stream = js.get_stream("CUSTODY").await.unwrap();
                    let m = stream
                        .get_last_raw_message_by_subject(&subject)
                        .await
                        .unwrap();
                    let body = edit(std::str::from_utf8(&m.payload).unwrap());
                    stream.purge().filter(subject.clone()).await.unwrap();
                    js.publish(subject, body.into_bytes().into())
                        .await
                        .unwrap()
                        .await
                        .unwrap();
                });
            }
        }
    }
}

/// `verify --against` as JSON: each run's verdict, and the closing object.
fn against(
    st: &Store,
    seal: &Path,
    extra: &[&str],
) -> (i32, Vec<serde_json::Value>, serde_json::Value) {
    let mut args = vec!["-o", "json", "verify", "--against", s(seal)];
    args.extend_from_slice(extra);
    let r = st.run(&args);
    let schema = crate::schema::output_validator("verify-against.json");
    let mut lines = r.json_lines();
    for l in &lines {
        crate::schema::assert_valid(&schema, l, "verify --against");
    }
    let last = lines.pop().unwrap();
    (r.code, lines, last["seal"].clone())
}

fn verdict<'a>(runs: &'a [serde_json::Value], run: &str) -> &'a serde_json::Value {
    runs.iter().find(|v| v["run"] == run).unwrap()
}

fn both(test: impl Fn(Store)) {
    test(Store::file());
    test(Store::jetstream());
}

#[test]
fn every_write_is_logged_with_who_what_and_why_and_read_back_newest_first() {
    both(|st| {
        st.ok(&[
            "answer",
            WAITING,
            "--content",
            "ok",
            "--operator",
            "alice",
            "--why",
            "CHG-7",
        ]);
        st.ok(&["end", CRASHED, "--yes", "--operator", "bob"]);
        let log = st.ok(&["-o", "json", "log"]).json();
        crate::schema::assert_valid(&crate::schema::output_validator("log.json"), &log, "log");
        let writes = log["writes"].as_array().unwrap();
        let mine: Vec<_> = writes
            .iter()
            .filter(|w| w["run"] != serde_json::Value::Null)
            .collect();
        assert_eq!(mine[0]["op"], "end", "{log}");
        assert_eq!(mine[0]["operator"], "bob");
        assert_eq!(mine[1]["op"], "answer");
        assert_eq!(mine[1]["operator"], "alice");
        assert_eq!(mine[1]["why"], "CHG-7");
        assert_eq!(mine[1]["result"], "done");
        assert_eq!(mine[1]["written"]["first"], 5);
        assert!(mine[1]["command"]
            .as_str()
            .unwrap()
            .contains("--content '(2 bytes)'"));
        // The after digest is the run's records now.
        assert_eq!(mine[1]["after"]["records"], 5);
        let one = st.ok(&["log", WAITING, "--oneline"]);
        assert!(
            one.stdout
                .contains("answer g-deferral-waiting by alice done: CHG-7"),
            "{}",
            one.stdout
        );
        let ops = |args: &[&str]| -> Vec<String> {
            let v = st.ok(&[&["-o", "json", "log"][..], args].concat()).json();
            v["writes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["op"].as_str().unwrap_or("").to_owned())
                .collect()
        };
        assert_eq!(ops(&["--command", "end"]), ["end"]);
        let recent = ops(&["--since", "1h"]);
        assert_eq!(recent[..2], ["end", "answer"], "{recent:?}");
        assert!(ops(&["--since", "2999-01-01T00:00:00Z"]).is_empty());
        let filtered = st.ok(&["-o", "json", "log", "--operator", "bob"]).json();
        assert!(filtered["writes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["operator"] == "bob"));
        // The agent's listing never takes the log for a run.
        let ls = st.ok(&["-o", "json", "ls"]).json();
        assert_eq!(ls.as_array().unwrap().len(), 3, "{ls}");
        let v = st.run(&["verify"]);
        assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    });
}

#[test]
fn a_reading_command_never_creates_a_log() {
    let st = Store::file();
    for args in [&["ls"][..], &["verify"], &["log"], &["show", WAITING]] {
        st.run(args);
    }
    st.ok(&["answer", WAITING, "--content", "x", "--dry-run"]);
    assert!(!st.path("runs/fisk-admin-audit.jsonl").exists());
}

#[test]
fn a_seal_names_each_way_a_run_was_changed_after_it() {
    both(|st| {
        let seal = st.path("seal.json");
        let made = st.ok(&["-o", "json", "seal", "--out", s(&seal)]).json();
        crate::schema::assert_valid(&crate::schema::output_validator("seal.json"), &made, "seal");
        assert_eq!(made["runs"], 3);
        let (code, runs, head) = against(&st, &seal, &[]);
        assert_eq!(code, 0, "{runs:?} {head}");
        assert!(runs
            .iter()
            .all(|v| v["verdict"] == "unchanged" && v["attested_from"] == head["time"]));
        // In words: the seal vouches from its time on, not before.
        let t = st.ok(&["verify", "--against", s(&seal)]);
        let when = head["time"].as_str().unwrap();
        assert!(
            t.stdout.contains(&format!(
                "ok: 3 unchanged (attested from {when}: the seal says nothing of before)"
            )),
            "{}",
            t.stdout
        );
        // Grew: an answer after the seal is normal.
        st.ok(&["answer", WAITING, "--content", "ok"]);
        let (code, runs, _) = against(&st, &seal, &[]);
        assert_eq!(code, 0);
        assert_eq!(verdict(&runs, WAITING)["verdict"], "grew");
        // One byte of record 3 of the batch.
        let mut recs = st.records(BATCH);
        let orig = recs.clone();
        let at = recs[2].len() - 5;
        recs[2][at] = if recs[2][at] == b'a' { b'b' } else { b'a' };
        st.replace(BATCH, &recs);
        let (code, runs, _) = against(&st, &seal, &[]);
        assert_eq!(code, 1);
        let v = verdict(&runs, BATCH);
        assert_eq!(v["verdict"], "edited", "{v}");
        assert_eq!(v["seq"], 3);
        let offset = orig[0].len() + orig[1].len() + 2;
        assert_eq!(v["offset"], offset as u64);
        // Record 2 removed, the rest renumbered.
        let mut renumbered = vec![orig[0].clone()];
        for (i, r) in orig.iter().enumerate().skip(2) {
            let text = String::from_utf8(r.clone()).unwrap();
            let seq = format!("\"seq\":{}", i + 1);
            renumbered.push(text.replacen(&seq, &format!("\"seq\":{i}"), 1).into_bytes());
        }
        st.replace(BATCH, &renumbered);
        let (_, runs, _) = against(&st, &seal, &[]);
        let v = verdict(&runs, BATCH);
        assert_eq!(
            (v["verdict"].as_str(), v["record"].as_u64()),
            (Some("edited"), Some(2)),
            "{v}"
        );
        // The tail cut.
        st.replace(BATCH, &orig[..4]);
        let (_, runs, _) = against(&st, &seal, &[]);
        let v = verdict(&runs, BATCH);
        assert_eq!(
            (v["verdict"].as_str(), v["records"].as_u64()),
            (Some("truncated"), Some(4))
        );
        // Put back as sealed: unchanged again.
        st.replace(BATCH, &orig);
        let (_, runs, _) = against(&st, &seal, &[]);
        assert_eq!(verdict(&runs, BATCH)["verdict"], "unchanged");
        // Removed, and a new run.
        st.ok(&["rm", CRASHED, "--yes"]);
        st.ok(&["fork", BATCH, "--at-seq", "2", "--as", "forked"]);
        let (code, runs, _) = against(&st, &seal, &[]);
        assert_eq!(code, 1);
        assert_eq!(verdict(&runs, CRASHED)["verdict"], "removed");
        assert_eq!(verdict(&runs, "forked")["verdict"], "new");
        // The text says it in words.
        let t = st.run(&["verify", "--against", s(&seal)]);
        assert!(
            t.stdout.contains("g-pending-crash: removed"),
            "{}",
            t.stdout
        );
        assert!(t.stdout.contains("NOT AS SEALED"), "{}", t.stdout);
    });
}

#[test]
fn a_run_replaced_by_an_older_copy_is_named_by_the_seal_and_by_the_audit_log() {
    both(|st| {
        let before = st.records(WAITING);
        st.ok(&["answer", WAITING, "--content", "ok", "--operator", "alice"]);
        let seal = st.path("seal.json");
        st.ok(&["seal", "--out", s(&seal)]);
        st.replace(WAITING, &before);
        let (code, runs, _) = against(&st, &seal, &[]);
        assert_eq!(code, 1);
        assert_eq!(verdict(&runs, WAITING)["verdict"], "truncated");
        // No seal needed to see it: the log's last write is gone.
        let v = st.run(&["-o", "json", "verify", WAITING]);
        let changed: Vec<_> = v
            .json_lines()
            .into_iter()
            .filter(|f| f["code"] == "audit-changed")
            .collect();
        assert_eq!(changed.len(), 1, "{}", v.stdout);
        assert!(changed[0]["message"]
            .as_str()
            .unwrap()
            .contains("answer by alice"));
    });
}

#[test]
fn an_edited_audit_log_is_named_by_verify_and_by_the_seal() {
    both(|st| {
        st.ok(&["answer", WAITING, "--content", "ok", "--operator", "alice"]);
        let seal = st.path("seal.json");
        st.ok(&["seal", "--out", s(&seal)]);
        assert_eq!(st.run(&["verify"]).code, 0);
        // Entry 1 back-dated by a century (on the stream it is the
        // migrate's that made the store).
        st.edit_log(1, |l| l.replacen("\"time\":\"20", "\"time\":\"19", 1));
        let v = st.run(&["-o", "json", "verify"]);
        assert_eq!(v.code, 1);
        let broken: Vec<_> = v
            .json_lines()
            .into_iter()
            .filter(|f| f["code"] == "audit-chain")
            .collect();
        assert_eq!(broken.len(), 1, "{}", v.stdout);
        assert!(broken[0]["message"]
            .as_str()
            .unwrap()
            .contains("entry 2 does not link to entry 1"));
        let (code, _, head) = against(&st, &seal, &[]);
        assert_eq!(code, 1);
        assert!(head["log"].as_str().unwrap().contains("entry 2"), "{head}");
    });
}

#[test]
fn an_edited_seal_and_a_seal_signed_with_another_key_are_named() {
    both(|st| {
        let seal = st.path("seal.json");
        let key = st.path("key");
        st.ok(&["seal", "--out", s(&seal), "--new-key", s(&key)]);
        let public = st.path("key.pub");
        let (code, _, head) = against(&st, &seal, &["--key", s(&public)]);
        assert_eq!(code, 0, "{head}");
        assert_eq!(head["signed"], true);
        // Another key.
        let other = st.path("other");
        st.ok(&[
            "seal",
            "--out",
            s(&st.path("seal2.json")),
            "--new-key",
            s(&other),
        ]);
        let (code, _, head) = against(&st, &seal, &["--key", s(&st.path("other.pub"))]);
        assert_eq!(code, 1);
        assert_eq!(head["other_key"], true, "{head}");
        // The seal edited: a run's count lowered to hide a cut.
        let text = std::fs::read_to_string(&seal).unwrap();
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        doc["runs"][BATCH]["records"] = 5.into();
        std::fs::write(&seal, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        let (code, _, head) = against(&st, &seal, &[]);
        assert_eq!(code, 1);
        assert_eq!(head["root_ok"], false, "{head}");
        let t = st.run(&["verify", "--against", s(&seal)]);
        assert!(t.stdout.contains("the seal was edited"), "{}", t.stdout);
        // The second seal chains to the first.
        let second: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(st.path("seal2.json")).unwrap()).unwrap();
        let first: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(second["previous"], first["root"]);
    });
}

#[test]
fn a_seal_travels_to_a_migrated_copy_and_an_exported_journal() {
    let st = Store::file();
    st.ok(&["answer", WAITING, "--content", "ok", "--operator", "alice"]);
    let seal = st.path("seal.json");
    st.ok(&["seal", "--out", s(&seal)]);
    // An exported run, checked on its own.
    let out = st.path("batch.jsonl");
    st.ok(&["export", BATCH, "--format", "jsonl", "--out", s(&out)]);
    let (code, runs, _) = against(&st, &seal, &["--file", s(&out)]);
    assert_eq!(code, 0);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["verdict"], "unchanged");
    // A copy on a stream.
    let srv = NatsServer::start();
    srv.spec_stream("COPY", "copy.s.>");
    let dir = st.path("runs");
    let js = ["--server", srv.url.as_str()];
    let r = fisk_in(
        st.home.path(),
        &[
            &js[..],
            &[
                "migrate",
                "--from",
                &format!("file:{}", s(&dir)),
                "--to",
                "jetstream:COPY",
                "--all",
            ],
        ]
        .concat(),
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = fisk_in(
        st.home.path(),
        &[
            &js[..],
            &[
                "--store",
                "jetstream:COPY",
                "-o",
                "json",
                "verify",
                "--against",
                s(&seal),
            ],
        ]
        .concat(),
        None,
    );
    let lines = r.json_lines();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        lines[..3].iter().all(|v| v["verdict"] == "unchanged"),
        "{}",
        r.stdout
    );
    assert!(lines[3]["seal"]["log_own"].is_string(), "{}", r.stdout);
    // The copy carries the runs' history: the migrate itself, here.
    let log = fisk_in(
        st.home.path(),
        &[
            &js[..],
            &["--store", "jetstream:COPY", "-o", "json", "log", BATCH],
        ]
        .concat(),
        None,
    )
    .json();
    assert!(
        log["writes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["op"] == "migrate"),
        "{log}"
    );
    let log = fisk_in(
        st.home.path(),
        &[
            &js[..],
            &["--store", "jetstream:COPY", "-o", "json", "log", WAITING],
        ]
        .concat(),
        None,
    )
    .json();
    assert!(
        log["writes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["op"] == "answer"
                && w["operator"] == "alice"
                && w["carried_from"].is_string()),
        "{log}"
    );
}

#[test]
fn show_inbox_ls_and_export_say_who_acted_on_a_run() {
    both(|st| {
        st.ok(&[
            "answer",
            WAITING,
            "--content",
            "ok",
            "--operator",
            "alice",
            "--why",
            "CHG-7",
        ]);
        let show = st.ok(&["show", WAITING]);
        assert!(
            show.stdout.contains("seq 5: answered by alice at ") && show.stdout.contains(": CHG-7"),
            "{}",
            show.stdout
        );
        // Beside the record it wrote, in the transcript.
        let t = st.ok(&["show", WAITING, "--transcript", "--no-tui"]);
        let at = t.stdout.find("[answer ").unwrap();
        let next = &t.stdout[at..];
        assert!(
            next.lines().nth(1).unwrap().contains("answered by alice"),
            "{next}"
        );
        // The run is ready to resume: inbox and ls say who made it so.
        let inbox = st.ok(&["-o", "json", "inbox"]).json();
        let ready = inbox["ready"].as_array().unwrap();
        let r = ready.iter().find(|r| r["run"] == WAITING).unwrap();
        assert_eq!(r["acted"]["operator"], "alice", "{inbox}");
        assert_eq!(r["acted"]["why"], "CHG-7");
        let text = st.ok(&["inbox"]);
        assert!(
            text.stdout.contains("(answered by alice at "),
            "{}",
            text.stdout
        );
        let ls = st.ok(&["ls", "--columns", "run,acted"]);
        let row = ls.stdout.lines().find(|l| l.starts_with(WAITING)).unwrap();
        assert!(row.contains("answered by alice"), "{}", ls.stdout);
        // export carries the run's entries (the journal export stays the
        // records alone).
        let md = st.ok(&["export", WAITING, "--format", "markdown"]);
        assert!(md.stdout.contains("by hand: answer"), "{}", md.stdout);
        assert!(md.stdout.contains("answered by alice"));
        let red = st.ok(&[
            "export", WAITING, "--format", "markdown", "--redact", "alice",
        ]);
        assert!(!red.stdout.contains("alice"));
        let jsonl = st.ok(&["export", WAITING, "--format", "jsonl"]);
        assert_eq!(jsonl.stdout.lines().count(), 5);
    });
}

#[test]
fn a_write_killed_between_its_intent_and_its_outcome_is_settled_from_the_run() {
    both(|st| {
        let before = st.records(WAITING);
        st.ok(&["answer", WAITING, "--content", "ok", "--operator", "alice"]);
        let entries = |st: &Store| {
            st.ok(&["-o", "json", "log"]).json()["writes"]
                .as_array()
                .unwrap()
                .len()
        };
        let n = entries(&st);
        assert!(n >= 1);
        // The outcome lost (the process killed before it was stored).
        st.drop_last_log_entry();
        let v = st.run(&["-o", "json", "verify", WAITING]);
        let open: Vec<_> = v
            .json_lines()
            .into_iter()
            .filter(|f| f["code"] == "audit-intent")
            .collect();
        assert_eq!(open.len(), 1, "{}", v.stdout);
        let m = open[0]["message"].as_str().unwrap();
        assert!(
            m.contains("answer by alice") && m.contains("the run shows it done"),
            "{m}"
        );
        // The record lost too (killed before it was stored): not done.
        st.replace(WAITING, &before);
        let v = st.run(&["-o", "json", "verify", WAITING]);
        let m = v
            .json_lines()
            .into_iter()
            .find(|f| f["code"] == "audit-intent")
            .unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(m.contains("the run shows it not done"), "{m}");
        let log = st.ok(&["log", WAITING, "--oneline"]);
        assert!(log.stdout.contains("not closed"), "{}", log.stdout);
    });
}

impl Store {
    /// The three runs on a stream, published as they are with no
    /// fisk-admin command (so no write of it logged): a store that never
    /// had an audit log.
    fn published() -> Store {
        let file = Store::file();
        let srv = NatsServer::start();
        srv.spec_stream("CUSTODY", "cust.s.>");
        let mut bodies = Vec::new();
        for r in [WAITING, CRASHED, BATCH] {
            let text = std::fs::read(file.path(&format!("runs/{r}.json"))).unwrap();
            for (i, line) in text
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .enumerate()
            {
                let subject = journal::store::jetstream::subject("cust.s", r, i as u64 + 1);
                bodies.push((subject, line.to_vec()));
            }
        }
        srv.with_js(async move |js| {
            for (subject, body) in bodies {
                js.publish(subject, body.into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        });
        let flags = vec![
            "--server".into(),
            srv.url.clone(),
            "--store".into(),
            "jetstream:CUSTODY".into(),
            "--hold".into(),
            "0".into(),
        ];
        Store {
            home: file.home,
            flags,
            js: Some((srv, "cust.s".into())),
        }
    }

    /// The stream's messages, and how many of them are the audit log's.
    fn stream_messages(&self) -> (u64, u64) {
        let (srv, prefix) = self.js.as_ref().unwrap();
        let filter = format!("{prefix}._audit.>");
        srv.with_js(async move |js| {
            use futures_util::TryStreamExt;
            let mut s = js.get_stream("CUSTODY").await.unwrap();
            let all = s.info().await.unwrap().state.messages;
            let log: Vec<(String, usize)> = s
                .info_with_subjects(filter)
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            (all, log.iter().map(|(_, n)| *n as u64).sum())
        })
    }
}

/// Every reading command, and the writing ones run dry; `seal` is the
/// seal of another store with the same runs (a seal is itself logged).
fn reading_commands(seal: &Path) -> Vec<Vec<String>> {
    let seal = s(seal);
    [
        &["ls"][..],
        &["-o", "json", "ls"],
        &["inbox"],
        &["verify"],
        &["log"],
        &["log", WAITING, "--oneline"],
        &["show", WAITING],
        &["show", WAITING, "--transcript", "--no-tui"],
        &["export", WAITING, "--format", "jsonl"],
        &["export", WAITING, "--format", "markdown"],
        &["stats", WAITING],
        &["fold", WAITING],
        &["seal", "--dry-run"],
        &["verify", "--against", seal],
        &["answer", WAITING, "--content", "x", "--dry-run"],
        &["end", CRASHED, "--dry-run"],
        &["rm", CRASHED, "--dry-run"],
    ]
    .iter()
    .map(|a| a.iter().map(|x| (*x).to_owned()).collect())
    .collect()
}

#[test]
fn a_reading_command_never_creates_a_log_on_either_backend() {
    let other = Store::file();
    let seal = other.path("seal.json");
    other.ok(&["seal", "--out", s(&seal)]);
    // A directory: nothing but the runs, before and after.
    let st = Store::file();
    let names = |st: &Store| {
        let mut v: Vec<String> = std::fs::read_dir(st.path("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = names(&st);
    for args in reading_commands(&seal) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = st.run(&a);
        assert!(r.code == 0 || r.code == 1, "{args:?}: {}", r.stderr);
    }
    assert_eq!(names(&st), before);
    assert!(!st.path("runs/fisk-admin-audit.jsonl").exists());
    // A stream: not one message more, and no log subject.
    let st = Store::published();
    let before = st.stream_messages();
    assert_eq!(before.1, 0);
    for args in reading_commands(&seal) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = st.run(&a);
        assert!(r.code == 0 || r.code == 1, "{args:?}: {}", r.stderr);
    }
    assert_eq!(st.stream_messages(), before);
    // The first write makes it: intent and outcome.
    st.ok(&["answer", WAITING, "--content", "ok"]);
    assert_eq!(st.stream_messages(), (before.0 + 3, 2));
}

#[test]
fn every_entry_on_a_stream_names_the_nats_user_the_connection_authenticated_as() {
    let file = Store::file();
    let srv = NatsServer::start_with(&["--user", "ops", "--pass", "s3cret"]);
    let auth = [
        "--server",
        srv.url.as_str(),
        "--user",
        "ops",
        "--password",
        "s3cret",
    ];
    let run = |args: &[&str]| {
        let r = fisk_in(file.home.path(), &[&auth[..], args].concat(), None);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        r
    };
    run(&["stream", "create", "AUTH", "--subject", "auth.s.>"]);
    let dir = file.path("runs");
    let from = format!("file:{}", s(&dir));
    run(&[
        "migrate",
        "--from",
        &from,
        "--to",
        "jetstream:AUTH",
        "--all",
    ]);
    let on = ["--store", "jetstream:AUTH", "--hold", "0"];
    run(&[
        &on[..],
        &["answer", WAITING, "--content", "ok", "--operator", "alice"],
    ]
    .concat());
    let log = run(&[&on[..], &["-o", "json", "log"]].concat()).json();
    let writes = log["writes"].as_array().unwrap();
    assert!(writes.iter().any(|w| w["op"] == "migrate"), "{log}");
    let answer = writes.iter().find(|w| w["op"] == "answer").unwrap();
    assert_eq!(answer["operator"], "alice", "{log}");
    for w in writes {
        assert_eq!(w["nats_user"], "ops", "{w}");
    }
    let text = run(&[&on[..], &["log", WAITING]].concat());
    assert!(text.stdout.contains("NATS user: ops"), "{}", text.stdout);
    // On the file backend there is no NATS user to name.
    file.ok(&["answer", WAITING, "--content", "ok"]);
    let log = file.ok(&["-o", "json", "log"]).json();
    assert!(log["writes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["nats_user"].is_null()));
}

#[test]
fn a_seal_and_the_log_travel_from_a_stream_to_a_directory() {
    let st = Store::jetstream();
    st.ok(&[
        "answer",
        WAITING,
        "--content",
        "ok",
        "--operator",
        "alice",
        "--why",
        "CHG-7",
    ]);
    let seal = st.path("seal.json");
    st.ok(&["seal", "--out", s(&seal)]);
    // An exported run, checked on its own.
    let out = st.path("waiting.jsonl");
    st.ok(&["export", WAITING, "--format", "jsonl", "--out", s(&out)]);
    let (code, runs, _) = against(&st, &seal, &["--file", s(&out)]);
    assert_eq!((code, runs.len()), (0, 1));
    assert_eq!(runs[0]["verdict"], "unchanged");
    // A copy in a directory.
    let copy = st.path("copy");
    let to = format!("file:{}", s(&copy));
    let url = st.js.as_ref().unwrap().0.url.clone();
    let r = fisk_in(
        st.home.path(),
        &[
            "--server",
            &url,
            "migrate",
            "--from",
            "jetstream:CUSTODY",
            "--to",
            &to,
            "--all",
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let on_copy = |args: &[&str]| {
        fisk_in(
            st.home.path(),
            &[&["--state-dir", s(&copy)][..], args].concat(),
            None,
        )
    };
    let r = on_copy(&["-o", "json", "verify", "--against", s(&seal)]);
    let mut lines = r.json_lines();
    let head = lines.pop().unwrap();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(lines.len(), 3);
    assert!(
        lines.iter().all(|v| v["verdict"] == "unchanged"),
        "{}",
        r.stdout
    );
    // The copy's log is its own, and says where its runs came from.
    assert!(head["seal"]["log"].is_null(), "{head}");
    assert!(
        head["seal"]["log_own"]
            .as_str()
            .unwrap()
            .contains("carried in from"),
        "{head}"
    );
    // alice's answer travelled with the run.
    let log = on_copy(&["-o", "json", "log", WAITING]).json();
    let carried = log["writes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["op"] == "answer")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(carried["operator"], "alice");
    assert_eq!(carried["why"], "CHG-7");
    assert!(
        carried["carried_from"]
            .as_str()
            .unwrap()
            .contains("CUSTODY"),
        "{carried}"
    );
    // The copy edited is named as the stream would be.
    let path = copy.join(format!("{BATCH}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"seq\":3", "\"seq\":3 ", 1)).unwrap();
    let r = on_copy(&["-o", "json", "verify", "--against", s(&seal)]);
    assert_eq!(r.code, 1);
    let lines = r.json_lines();
    assert_eq!(verdict(&lines, BATCH)["verdict"], "edited", "{}", r.stdout);
}
