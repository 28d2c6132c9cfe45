//! `recover` (issue 27.1, SPEC 6.1 "Recovering"): a table over the damage
//! kinds on journals the agent wrote, both generations, measuring records
//! kept against intact records (journal/FORMAT.md's table is these
//! figures); every result verifies without an error and folds; a dry run
//! writes nothing; in place keeps the original and `backups` lists it;
//! `--as` leaves the original untouched; a recovered run resumes; and the
//! same on JetStream.

use crate::nats_support::NatsServer;
use crate::support::*;
use crate::viewer::Tmux;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| l.iter().copied().chain([b'\n']))
        .collect()
}

/// A store holding `bytes` as run `r` (the meta record's id is another:
/// recover makes it the run's).
fn store_of(bytes: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let p = dir.path().join("r.json");
    std::fs::write(&p, bytes).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    dir
}

fn errors(store: &Path, run: &str) -> Vec<Value> {
    let r = fisk(&["--state-dir", s(store), "verify", run, "-o", "json"]);
    r.json_lines()
        .into_iter()
        .filter(|f| f.get("summary").is_none() && f["severity"] == "error")
        .collect()
}

fn agent(generation: &str, name: &str) -> Vec<u8> {
    std::fs::read(testdata(&format!(
        "agent-journals/{generation}/{name}.json"
    )))
    .unwrap()
}

/// The damage kinds of issue 27, each as a change to a journal's lines.
struct Case {
    kind: &'static str,
    journal: &'static str,
    damage: fn(&mut Vec<Vec<u8>>),
    kept: u64,
    intact: u64,
    made: usize,
    renumbered: usize,
    /// The agent reads the damaged journal whole (a gap in the seqs is no
    /// fold error): recover refuses it unless forced (issue 35).
    readable: bool,
}

const CASES: &[Case] = &[
    Case {
        kind: "garbage line (a tool result)",
        journal: "g-multi-iteration",
        damage: |l| l[4] = b"#### garbage ####".to_vec(),
        kept: 26,
        intact: 26,
        made: 1,
        renumbered: 0,
        readable: false,
    },
    Case {
        kind: "NUL block over lines 4 to 6",
        journal: "g-multi-iteration",
        damage: |l| {
            // Zeroed from byte 40 of line 4 to byte 40 of line 6, the
            // newlines between included: one line.
            let to = l[3].len() + 1 + l[4].len() + 1 + 40;
            let mut block = join(&l[3..6]);
            block.pop();
            block[40..to].fill(0);
            l.splice(3..6, [block]);
        },
        // Seq 7 (the result of lost seq 6) lands in the turn still open,
        // as the agent's fold takes it.
        kept: 24,
        intact: 24,
        made: 0,
        renumbered: 21,
        readable: false,
    },
    Case {
        kind: "line split in two",
        journal: "g-multi-iteration",
        damage: |l| {
            let tail = l[4].split_off(60);
            l.insert(5, tail);
        },
        kept: 27,
        intact: 27,
        made: 0,
        renumbered: 0,
        readable: false,
    },
    Case {
        kind: "two lines glued (newline lost)",
        journal: "g-multi-iteration",
        damage: |l| {
            let next = l.remove(5);
            l[4].extend_from_slice(&next);
        },
        kept: 27,
        intact: 27,
        made: 0,
        renumbered: 0,
        readable: false,
    },
    Case {
        kind: "duplicate seq (stored twice)",
        journal: "g-multi-iteration",
        damage: |l| {
            let again = l[6].clone();
            l.insert(7, again);
        },
        kept: 27,
        intact: 27,
        made: 0,
        renumbered: 0,
        readable: false,
    },
    Case {
        kind: "a record's own seq damaged (17 reads 97)",
        journal: "g-multi-iteration",
        damage: |l| {
            let line = String::from_utf8(l[16].clone()).unwrap();
            l[16] = line
                .replacen("{\"seq\":17,", "{\"seq\":97,", 1)
                .into_bytes();
        },
        kept: 27,
        intact: 27,
        made: 0,
        renumbered: 1,
        readable: false,
    },
    Case {
        kind: "missing seq (a tool result)",
        journal: "g-multi-iteration",
        damage: |l| {
            l.remove(4);
        },
        kept: 26,
        intact: 26,
        made: 1,
        renumbered: 0,
        readable: true,
    },
    Case {
        kind: "missing seq (an assistant turn)",
        journal: "g-multi-iteration",
        damage: |l| {
            l.remove(5);
        },
        // Its result lands in the turn still open, as the agent reads it.
        kept: 26,
        intact: 26,
        made: 0,
        renumbered: 21,
        readable: true,
    },
    Case {
        kind: "lost tool result (torn, its id readable)",
        journal: "g-tool-batch",
        damage: |l| l[2].truncate(150),
        kept: 5,
        intact: 5,
        made: 1,
        renumbered: 0,
        readable: false,
    },
    Case {
        kind: "lost assistant turn, two results after it",
        journal: "g-tool-batch",
        damage: |l| l[1] = vec![0; 64],
        kept: 3,
        intact: 5,
        made: 0,
        renumbered: 2,
        readable: false,
    },
    Case {
        kind: "one bad line in a journal of 11 records",
        journal: "g-all-counters",
        damage: |l| l[4] = b"\x00\x00\x00\x00 bad sector".to_vec(),
        kept: 10,
        intact: 10,
        made: 1,
        renumbered: 0,
        readable: false,
    },
];

#[test]
fn every_damage_kind_on_both_generations_gives_a_run_that_verifies_and_folds() {
    for generation in ["v1", "v3"] {
        for case in CASES {
            let what = format!("{generation} {}", case.kind);
            let mut l = lines(&agent(generation, case.journal));
            (case.damage)(&mut l);
            let damaged = join(&l);
            let store = store_of(&damaged);
            let st = s(store.path());
            let mut args = vec!["--state-dir", st, "-o", "json", "recover", "r", "--yes"];
            if case.readable {
                // The agent reads it whole: refused, said why, unless forced.
                let r = fisk(&args);
                assert_eq!(r.code, 1, "{what}: {}", r.stderr);
                assert!(
                    r.stderr.contains("the agent reads it whole"),
                    "{what}: {}",
                    r.stderr
                );
                assert!(r.stderr.contains("--force"), "{what}: {}", r.stderr);
                assert_eq!(std::fs::read(store.path().join("r.json")).unwrap(), damaged);
                args.push("--force");
            }
            let r = fisk(&args);
            assert_eq!(r.code, 0, "{what}: {}", r.stderr);
            let doc = r.json();
            assert_eq!(doc["written"], true, "{what}: {doc}");
            assert_eq!(
                (doc["kept"].as_u64(), doc["intact"].as_u64()),
                (Some(case.kept), Some(case.intact)),
                "{what}: {doc:#}"
            );
            assert_eq!(doc["made"].as_array().unwrap().len(), case.made, "{what}");
            assert_eq!(
                doc["renumbered"].as_array().unwrap().len(),
                case.renumbered,
                "{what}"
            );
            assert_eq!(doc["version"], if generation == "v1" { 1 } else { 3 });
            crate::schema::assert_valid(
                &crate::schema::output_validator("recover.json"),
                &doc,
                &what,
            );
            // The original is kept byte for byte, and `backups` lists it.
            let backup = doc["backup"].as_str().unwrap();
            assert_eq!(std::fs::read(backup).unwrap(), damaged, "{what}");
            let listed = fisk(&["--state-dir", st, "-o", "json", "backups"]).json();
            let kinds: Vec<&Value> = listed
                .as_array()
                .unwrap()
                .iter()
                .map(|b| &b["kind"])
                .collect();
            assert!(
                !kinds.is_empty() && kinds.iter().all(|k| *k == "recover"),
                "{what}: {listed}"
            );
            assert!(
                errors(store.path(), "r").is_empty(),
                "{what}: {:?}",
                errors(store.path(), "r")
            );
            let fold = fisk(&["--state-dir", st, "fold", "r", "-o", "json"]);
            assert_eq!(fold.code, 0, "{what}: {}", fold.stderr);
            // Every record fisk-admin wrote says so.
            let new = std::fs::read(store.path().join("r.json")).unwrap();
            for m in doc["made"].as_array().unwrap() {
                let seq = m["seq"].as_u64().unwrap() as usize;
                let rec: Value = serde_json::from_slice(&lines(&new)[seq - 1]).unwrap();
                let res = &rec["tool_result"]["result"];
                assert_eq!(res["is_error"], true, "{what}");
                assert!(
                    res["content"].as_str().unwrap().contains("fisk-admin"),
                    "{what}"
                );
            }
            eprintln!("{what}: kept {} of {} intact", case.kept, case.intact);
        }
    }
}

#[test]
fn the_report_says_what_was_lost_in_plain_words() {
    let mut l = lines(&agent("v1", "g-tool-batch"));
    l[1] = vec![0; 64];
    let store = store_of(&join(&l));
    let r = fisk(&["--state-dir", s(store.path()), "recover", "r", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("would recover run r in place"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("3 of 5 intact records kept"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("2 record(s) after it belong to no turn and are dropped (seq 3, 4)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("renumbered (old seq -> new): 5-6 -> 2-3"),
        "{}",
        r.stdout
    );
    assert_printable("recover", &r.stdout);

    let mut l = lines(&agent("v3", "g-multi-iteration"));
    l[4] = b"garbage".to_vec();
    let store = store_of(&join(&l));
    let r = fisk(&["--state-dir", s(store.path()), "recover", "r", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("line 5, seq 5: garbage (7 bytes): lost; its call tu_01 is answered with an error result saying so (seq 5), and the run goes on"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("written by fisk-admin, not by the agent"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("verify r"), "{}", r.stdout);
    assert!(r.stdout.contains("resume r"), "{}", r.stdout);
}

#[test]
fn a_dry_run_a_pipe_without_yes_and_refusals_write_nothing() {
    let snapshot = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let mut l = lines(&agent("v1", "g-multi-iteration"));
    l[4] = b"garbage".to_vec();
    let store = store_of(&join(&l));
    let st = s(store.path());
    let before = snapshot(store.path());
    let r = fisk(&["--state-dir", st, "-o", "json", "recover", "r", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["written"], false);
    assert!(r.json()["backup"].is_null());
    // Standard input is not a terminal: no question, no write.
    let r = fisk_in(
        store.path(),
        &["--state-dir", st, "recover", "r"],
        Some(b"y\n"),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no terminal to ask on"), "{}", r.stderr);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    assert_eq!(snapshot(store.path()), before);

    // The meta record lost: refused, said why and what to do.
    let mut l = lines(&agent("v3", "g-multi-iteration"));
    l[0] = vec![0; 100];
    let store = store_of(&join(&l));
    let before = snapshot(store.path());
    let r = fisk(&["--state-dir", s(store.path()), "recover", "r", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("cannot be recovered"), "{}", r.stderr);
    assert!(r.stderr.contains("meta record"), "{}", r.stderr);
    assert!(r.stderr.contains("verify r"), "{}", r.stderr);
    assert_eq!(snapshot(store.path()), before);

    // A whole journal: the agent reads it, so recover refuses (issue 35);
    // forced, it finds nothing to recover; nothing written either way.
    let store = store_of(&agent("v1", "g-tool-batch"));
    let before = snapshot(store.path());
    let r = fisk(&["--state-dir", s(store.path()), "recover", "r", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("nothing to recover"), "{}", r.stderr);
    let r = fisk(&["--state-dir", s(store.path()), "recover", "r", "--dry-run"]);
    assert_eq!(r.code, 1, "a dry run makes the same check: {}", r.stderr);
    let r = fisk(&[
        "--state-dir",
        s(store.path()),
        "recover",
        "r",
        "--yes",
        "--force",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("nothing to recover"), "{}", r.stdout);
    assert_eq!(snapshot(store.path()), before);
}

#[test]
fn as_a_new_id_leaves_the_original_untouched() {
    for generation in ["v1", "v3"] {
        let mut l = lines(&agent(generation, "g-multi-iteration"));
        l[4] = b"#### garbage ####".to_vec();
        let damaged = join(&l);
        let store = store_of(&damaged);
        let st = s(store.path());
        let r = fisk(&[
            "--state-dir",
            st,
            "-o",
            "json",
            "recover",
            "r",
            "--as",
            "fixed",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc = r.json();
        assert_eq!(
            (doc["run"].as_str(), doc["in_place"].as_bool()),
            (Some("fixed"), Some(false))
        );
        assert!(doc["backup"].is_null());
        assert_eq!(std::fs::read(store.path().join("r.json")).unwrap(), damaged);
        assert!(errors(store.path(), "fixed").is_empty());
        let fold = fisk(&["--state-dir", st, "fold", "fixed", "-o", "json"]).json();
        assert_eq!(fold["run_id"], "fixed", "{fold}");
        let r = fisk(&["--state-dir", st, "recover", "r", "--as", "fixed"]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("already exists"), "{}", r.stderr);
    }
}

#[test]
fn a_live_run_is_refused() {
    let f = Fixture::new(&[turn("hi", &[])]);
    std::fs::create_dir_all(f.runs()).unwrap();
    let mut l = lines(&agent("v1", "g-multi-iteration"));
    l[4] = b"garbage".to_vec();
    let p = f.journal("r");
    std::fs::write(&p, join(&l)).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = f.bytes("r");
    let _lock = f.hold_lock("r");
    let r = f.store(&["recover", "r", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(f.bytes("r"), before);
}

#[test]
fn a_recovered_run_resumes() {
    let f = two_calls_then_done();
    let id = "batch";
    let r = f.run(id, "hello");
    assert_eq!(r.code, 0, "{}", r.stderr);
    // meta, assistant, result a, result b, assistant, terminal: keep up to
    // result b (a crash there) and lose result a to a bad sector.
    let mut l = lines(&f.bytes(id));
    l.truncate(4);
    l[2] = vec![0; 80];
    std::fs::write(f.journal(id), join(&l)).unwrap();
    let r = f.store(&["recover", id, "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("its call a is answered with an error result"),
        "{}",
        r.stdout
    );
    let r = f.resume(id, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(f.fold(id)["status"], "completed");
}

#[test]
fn recover_on_jetstream_on_both_generations() {
    const RUN: &str = "g-multi-iteration";
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    for (generation, stream, prefix) in [("v1", "V1", "v1"), ("v3", "V3", "v3")] {
        srv.spec_stream(stream, &format!("{prefix}.>"));
        let src = tempfile::tempdir().unwrap();
        let p = src.path().join("g-multi-iteration.json");
        std::fs::write(&p, agent(generation, "g-multi-iteration")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let from = format!("file:{}", s(src.path()));
        let to = format!("jetstream:{stream}");
        let copied = migrate_via(home.path(), &srv.url, &from, &to, &[RUN]);
        assert_eq!(copied.code, 0, "{}", copied.stderr);
        // Seq 5 (a result) garbage, seq 9 (another result) deleted.
        let (s5, s9) = (format!("{prefix}.{RUN}.5"), format!("{prefix}.{RUN}.9"));
        let stream_name = stream.to_owned();
        srv.with_js(async move |js| {
            let st = js.get_stream(&stream_name).await.unwrap();
            for subject in [&s5, &s9] {
                let m = st.get_last_raw_message_by_subject(subject).await.unwrap();
                st.delete_message(m.sequence).await.unwrap();
            }
            js.publish(s5, "\u{0}\u{0} not a record".into())
                .await
                .unwrap()
                .await
                .unwrap();
        });
        let args = |extra: &[&str]| {
            let mut a = vec![
                "--server",
                srv.url.as_str(),
                "--store",
                to.as_str(),
                "-o",
                "json",
                "recover",
                RUN,
            ];
            a.extend_from_slice(extra);
            a.into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        let run = |extra: &[&str]| {
            let a = args(extra);
            fisk_in(
                home.path(),
                &a.iter().map(String::as_str).collect::<Vec<_>>(),
                None,
            )
        };
        let dry = run(&["--dry-run", "--force"]);
        assert_eq!(dry.code, 0, "{}", dry.stderr);
        assert_eq!(dry.json()["written"], false);
        // Into a new run on the stream: the damaged one stays as it is.
        // The agent reads the run whole (the garbage stored last is a
        // torn tail to it, seq 9 a gap): recover takes it forced.
        let refused = run(&["--as", "fixed"]);
        assert_eq!(refused.code, 1, "{generation}: {}", refused.stderr);
        assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
        let copy = run(&["--as", "fixed", "--force"]);
        assert_eq!(copy.code, 0, "{generation}: {}", copy.stderr);
        assert_eq!(copy.json()["kept"], 25);
        let fold = fisk_in(
            home.path(),
            &[
                "--server", &srv.url, "--store", &to, "fold", "fixed", "-o", "json",
            ],
            None,
        );
        assert_eq!(fold.json()["status"], "completed", "{}", fold.stderr);
        // Damage stored last keeps the run from looking at rest (SPEC 8):
        // held, until the operator says its writer is gone.
        let held = run(&["--yes"]);
        assert_eq!(held.code, 1, "{generation}: {}", held.stderr);
        assert!(held.stderr.contains("--force"), "{}", held.stderr);
        let r = run(&["--yes", "--force"]);
        assert_eq!(r.code, 0, "{generation}: {}", r.stderr);
        let doc = r.json();
        assert_eq!(
            (doc["kept"].as_u64(), doc["intact"].as_u64()),
            (Some(25), Some(25)),
            "{doc:#}"
        );
        assert_eq!(doc["made"].as_array().unwrap().len(), 2, "{doc:#}");
        assert!(doc["renumbered"].as_array().unwrap().is_empty());
        let backup = doc["backup"].as_str().unwrap();
        assert!(backup.contains("/fisk-admin/recovered/"), "{backup}");
        let v = fisk_in(
            home.path(),
            &[
                "--server", &srv.url, "--store", &to, "verify", RUN, "-o", "json",
            ],
            None,
        );
        let errs: Vec<Value> = v
            .json_lines()
            .into_iter()
            .filter(|f| f.get("summary").is_none() && f["severity"] == "error")
            .collect();
        assert!(errs.is_empty(), "{generation}: {errs:?}");
        let fold = fisk_in(
            home.path(),
            &[
                "--server", &srv.url, "--store", &to, "fold", RUN, "-o", "json",
            ],
            None,
        );
        assert_eq!(fold.code, 0, "{}", fold.stderr);
        assert_eq!(fold.json()["status"], "completed", "{}", fold.stdout);
        let listed = fisk_in(
            home.path(),
            &[
                "--server", &srv.url, "--store", &to, "-o", "json", "backups",
            ],
            None,
        )
        .json();
        assert!(
            listed
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b["kind"] == "recover"),
            "{listed}"
        );
    }
}

#[test]
fn in_place_on_a_terminal_shows_the_plan_and_asks() {
    let mut l = lines(&agent("v1", "g-multi-iteration"));
    l[4] = b"garbage".to_vec();
    let damaged = join(&l);
    let store = store_of(&damaged);
    let t = Tmux::start(200, 50);
    let cmd = format!("{} --state-dir {} recover r", s(&bin()), s(store.path()));
    t.type_line(&cmd);
    t.wait_for("the question", |sc| {
        sc.contains("would recover run r in place")
            && sc
                .contains("recover run r in place (the damaged journal is kept as a backup)? [y/N]")
    });
    t.type_line("n");
    t.wait_for("the refusal", |sc| {
        sc.contains("not confirmed; nothing was changed")
    });
    assert_eq!(std::fs::read(store.path().join("r.json")).unwrap(), damaged);
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 1);
    t.type_line("clear");
    t.type_line(&cmd);
    t.wait_for("the question again", |sc| sc.contains("[y/N]"));
    t.type_line("y");
    t.wait_for("the recovery", |sc| sc.contains("recovered run r in place"));
    assert!(errors(store.path(), "r").is_empty());
    assert_ne!(std::fs::read(store.path().join("r.json")).unwrap(), damaged);
}

/// Issue 36.1: `recover` in place on JetStream killed (SIGKILL, a real
/// process) while it stages the new records, just after it purged the
/// old ones, and while it writes them again: the run is never gone.
/// `verify` names it with the command that finishes it, and that command
/// again finishes it; the run then verifies, folds and holds every record.
#[test]
fn a_recover_on_jetstream_killed_at_each_phase_keeps_the_run_and_again_finishes_it() {
    use std::time::{Duration, Instant};
    const RUN: &str = "big";
    let srv = NatsServer::start();
    let home = tempfile::tempdir().unwrap();
    // perf-large (303 records) with seq 40 garbage.
    let template = std::fs::read(testdata("runs/perf-large.json")).unwrap();
    let mut l = lines(
        &String::from_utf8(template)
            .unwrap()
            .replacen(
                "\"run_id\":\"perf-large\"",
                &format!("\"run_id\":\"{RUN}\""),
                1,
            )
            .into_bytes(),
    );
    let n = l.len() as u64;
    l[39] = b"\x00\x00 garbage".to_vec();
    // Each phase on a stream of its own: (stream, when to kill).
    // The stream holds n, then the fence, the mark and the stage (2n + 2),
    // then the old run is purged (n + 1), then the new records come
    // (2n + 1), then the mark and the stage go (n).
    type Phase = fn(u64, u64, bool) -> bool;
    let phases: [(&str, Phase); 3] = [
        // Staging: past the fence, the mark and some of the stage.
        ("STAGING", |n, now, _| now > n + 20),
        // The old records just purged.
        ("PURGED", |n, now, dropped| dropped && now <= n + 20),
        // Writing the new records on their subjects again.
        ("WRITING", |n, now, dropped| dropped && now > n + n / 2),
    ];
    for (stream, kill_when) in phases {
        let prefix = stream.to_lowercase();
        srv.spec_stream(stream, &format!("{prefix}.>"));
        let bodies = l.clone();
        let (p, r) = (prefix.clone(), RUN.to_owned());
        srv.with_js(async move |js| {
            for (seq, body) in (1u64..).zip(bodies) {
                let subject = journal::store::jetstream::subject(&p, &r, seq);
                js.publish(subject, body.into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        });
        let to = format!("jetstream:{stream}");
        let args = |extra: &[&'static str]| {
            let mut a = vec![
                "--server".to_owned(),
                srv.url.clone(),
                "--store".into(),
                to.clone(),
            ];
            a.extend(extra.iter().map(|s| (*s).to_owned()));
            a
        };
        let cmd = args(&["recover", RUN, "--yes", "--force"]);
        let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let mut child = command_in(home.path(), &cmd, &[])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        let (mut dropped, mut most) = (false, 0);
        loop {
            let now = srv.messages(stream);
            most = most.max(now);
            dropped |= now + 100 < most;
            if kill_when(n, now, dropped) {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "{stream}: recover finished before the kill ({now} messages)"
            );
            assert!(Instant::now() < deadline, "{stream}: no kill point");
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap(); // SIGKILL
        let _ = child.wait();
        srv.settled_messages(stream);
        // Named, with the command that finishes it.
        let a = args(&["verify", RUN, "-o", "json"]);
        let v = fisk_in(
            home.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        );
        assert_eq!(v.code, 1, "{stream}: {}", v.stderr);
        let named = v.json_lines().into_iter().any(|f| {
            f["code"] == "write-interrupted"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(&format!("fisk-admin recover {RUN}")))
        });
        assert!(named, "{stream}: {}", v.stdout);
        // Never "not found": show says what it is.
        let a = args(&["show", RUN]);
        let shown = fisk_in(
            home.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        );
        assert!(
            shown.stderr.contains("half written"),
            "{stream}: {}",
            shown.stderr
        );
        // The same command again finishes it.
        let a = args(&["recover", RUN, "--yes", "-o", "json"]);
        let again = fisk_in(
            home.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        );
        assert_eq!(again.code, 0, "{stream}: {}", again.stderr);
        let doc = again.json();
        assert_eq!(doc["resumed"], true, "{doc:#}");
        assert_eq!(doc["written"], true, "{doc:#}");
        let a = args(&["verify", RUN, "-o", "json"]);
        let v = fisk_in(
            home.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        );
        let errs: Vec<Value> = v
            .json_lines()
            .into_iter()
            .filter(|f| f.get("summary").is_none() && f["severity"] == "error")
            .collect();
        assert!(errs.is_empty(), "{stream}: {errs:?}");
        let a = args(&["fold", RUN, "-o", "json"]);
        let fold = fisk_in(
            home.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        );
        assert_eq!(fold.code, 0, "{stream}: {}", fold.stderr);
        assert_eq!(
            srv.messages(stream),
            n,
            "{stream}: nothing but the run is left"
        );
    }
}
