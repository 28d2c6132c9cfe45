//! The whole-store read (`Store::read_each`, issue 28) against the
//! run-by-run one (`Store::read_batch`) on a real nats-server: the same
//! journal, the same error, the same stats and the same search hit for
//! every run, healthy or damaged, of both journal generations, whether the
//! runs lie one after another in the stream or interleave (written
//! concurrently), and whatever the memory budget makes the pass give up.
// A test crate: a panic is a failed test.

use crate::nats_support;

use journal::search::{first_match, Scope};
use journal::store::jetstream::ReadBudget;
use journal::store::{Journal, Store, Summary};
use nats_support::NatsServer;
use std::collections::BTreeMap;
use std::path::Path;

/// A run to publish: its id, and its messages in publish order (the last
/// token of the subject, the body).
type Published = (String, Messages);

/// A run's messages: the last token of each subject, and the body.
type Messages = Vec<(String, Vec<u8>)>;

/// The journals of a testdata directory, each renamed `<tag><name>` (its
/// meta record's run id too), as record lines.
fn journals(dir: &str, tag: &str) -> Vec<(String, Vec<Vec<u8>>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let name = p.file_stem().unwrap().to_str().unwrap();
        let id = format!("{tag}{name}");
        let text = std::fs::read(&p).unwrap();
        let mut lines: Vec<Vec<u8>> = text
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        // The meta record names the run it is stored as.
        let meta = String::from_utf8(lines[0].clone()).unwrap();
        if let Some((head, rest)) = meta.split_once("\"run_id\":\"") {
            let tail = rest.split_once('"').map_or("", |(_, t)| t);
            lines[0] = format!("{head}\"run_id\":\"{id}\"{tail}").into_bytes();
        }
        out.push((id, lines));
    }
    assert!(out.len() >= 20, "{} holds too few journals", dir.display());
    out.sort();
    out
}

/// The subject token of record `k`.
fn token(k: usize) -> String {
    match k {
        1 => "_meta".to_owned(),
        k => k.to_string(),
    }
}

fn numbered(bodies: &[Vec<u8>]) -> Messages {
    bodies
        .iter()
        .enumerate()
        .map(|(i, b)| (token(i + 1), b.clone()))
        .collect()
}

/// `body` (a record line) with its seq set to `seq`.
fn with_seq(body: &[u8], seq: usize) -> Vec<u8> {
    let text = std::str::from_utf8(body).unwrap();
    let rest = text.split_once(',').unwrap().1;
    format!("{{\"seq\":{seq},{rest}").into_bytes()
}

/// Every testdata journal of both generations, and damaged runs of each
/// kind a stream can hold ([`DAMAGED`]), made from `tool-batch` (meta,
/// assistant, three results, assistant, terminal).
fn runs() -> Vec<Published> {
    let mut healthy = journals("testdata/runs", "");
    healthy.extend(journals("testdata/runs-v1", "v1-"));
    healthy.extend(journals("testdata/agent-journals/v1", "a1-"));
    healthy.extend(journals("testdata/agent-journals/v3", "a3-"));
    let batch = healthy
        .iter()
        .find(|(id, _)| id == "tool-batch")
        .unwrap()
        .1
        .clone();
    assert_eq!(batch.len(), 7);
    let mut runs: Vec<Published> = healthy
        .iter()
        .map(|(id, b)| (id.clone(), numbered(b)))
        .collect();
    let mut damaged = |id: &str, change: &dyn Fn(&mut Messages)| {
        let mut m = numbered(&batch);
        change(&mut m);
        runs.push((id.to_owned(), m));
    };
    // Messages on no record subject, inside the run and after it.
    damaged("stray-mid", &|m| {
        m.insert(3, ("junk".into(), b"{\"stray\":1}".to_vec()))
    });
    damaged("stray-last", &|m| {
        m.push(("junk".into(), b"{\"stray\":1}".to_vec()))
    });
    // A record lost inside the run, and records stored out of order.
    damaged("lost-mid", &|m| {
        m.remove(2);
    });
    damaged("out-of-order", &|m| m.swap(2, 3));
    // An upgrade interrupted between its two publishes: the meta record
    // is the last message, record 2 exists.
    damaged("upgrade-interrupted", &|m| m.rotate_left(1));
    // Records but no meta record.
    damaged("no-meta", &|m| {
        m.remove(0);
    });
    // Bodies that do not parse (inside: corruption; the last: dropped),
    // a meta record that does not, a subject holding another seq.
    damaged("bad-mid", &|m| m[3].1 = b"not json".to_vec());
    damaged("torn-last", &|m| m[6].1 = b"{\"seq\":7,".to_vec());
    damaged("bad-meta", &|m| m[0].1 = b"{\"seq\":1,".to_vec());
    damaged("seq-mismatch", &|m| m[4].1 = with_seq(&batch[4], 6));
    damaged("meta-only", &|m| m.truncate(1));
    for (id, _) in DAMAGED {
        assert!(id == "absent" || runs.iter().any(|(r, _)| r == id), "{id}");
    }
    runs
}

/// The damaged runs of [`runs`] (and a run never stored), each with
/// whether the one pass gives it up (its messages are not its records
/// 1..N in stream order): it is then read on its own.
const DAMAGED: [(&str, bool); 12] = [
    ("stray-mid", true),
    ("stray-last", true),
    ("lost-mid", true),
    ("out-of-order", true),
    ("upgrade-interrupted", true),
    ("no-meta", true),
    ("absent", true),
    ("bad-mid", false),
    ("torn-last", false),
    ("bad-meta", false),
    ("seq-mismatch", false),
    ("meta-only", false),
];

/// Publish `runs` under `prefix`: run after run, or (`interleaved`)
/// message-major, the k-th message of every run before any (k+1)-th, as
/// concurrent writers leave them.
fn publish(srv: &NatsServer, prefix: &str, runs: &[Published], interleaved: bool) {
    let mut msgs: Vec<(String, Vec<u8>)> = Vec::new();
    let subject = |id: &str, t: &str| format!("{prefix}.{id}.{t}");
    if interleaved {
        let longest = runs.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
        for k in 0..longest {
            for (id, m) in runs {
                if let Some((t, b)) = m.get(k) {
                    msgs.push((subject(id, t), b.clone()));
                }
            }
        }
    } else {
        for (id, m) in runs {
            msgs.extend(m.iter().map(|(t, b)| (subject(id, t), b.clone())));
        }
    }
    srv.with_js(async move |js| {
        // Sent one after another (stream order is publish order), the acks
        // awaited after each thousand (the client holds no more than a
        // few thousand acks outstanding: a publish past them waits).
        let mut acks = Vec::new();
        for (s, b) in msgs {
            acks.push(js.publish(s, b.into()).await.unwrap());
            if acks.len() == 1000 {
                for a in acks.drain(..) {
                    a.await.unwrap();
                }
            }
        }
        for a in acks {
            a.await.unwrap();
        }
    });
}

/// Everything a whole-store command takes from one run's read: the
/// journal (or the error) exactly, its stats, its first search hits.
fn seen(read: journal::Result<Journal>) -> String {
    match read {
        Ok(j) => {
            let stats = serde_json::to_string(&journal::stats::stats(j.records())).unwrap();
            let hits: Vec<_> = ["toolu", "(?i)done", "no such words"]
                .iter()
                .flat_map(|re| {
                    let re = regex::Regex::new(re).unwrap();
                    [Scope::All, Scope::Text, Scope::Tools]
                        .map(|s| format!("{:?}", first_match(j.records(), s, &re)))
                })
                .collect();
            format!("{j:?}\nstats {stats}\nhits {hits:?}")
        }
        Err(e) => format!("error {e:?}\n{e}"),
    }
}

/// `read_each` within `budget` against `read_batch`, run by run.
fn same_as_run_by_run(store: &Store, runs: &[&Summary], budget: ReadBudget, what: &str) {
    let ids: Vec<String> = runs.iter().map(|s| s.run_id.clone()).collect();
    let want: Vec<String> = store.read_batch(&ids).into_iter().map(seen).collect();
    let got = store.read_each_within(runs, budget, |_, j| seen(j));
    assert_eq!(got.len(), ids.len());
    for ((id, w), g) in ids.iter().zip(&want).zip(&got) {
        assert_eq!(g, w, "{what}, budget {budget:?}: run {id}");
    }
}

/// The two streams of [`runs`] these tests read, and what each shows.
const STREAMS: [(&str, &str); 2] = [
    ("ONEBYONE", "runs one after another"),
    ("CONCURRENT", "interleaved runs"),
];

/// A server holding [`runs`] twice: run after run (`ONEBYONE`, `one.>`)
/// and interleaved as concurrent writers leave them (`CONCURRENT`,
/// `mix.>`).
fn both_streams() -> (NatsServer, Vec<Published>) {
    let srv = NatsServer::start();
    let runs = runs();
    srv.spec_stream("ONEBYONE", "one.>");
    srv.spec_stream("CONCURRENT", "mix.>");
    publish(&srv, "one", &runs, false);
    publish(&srv, "mix", &runs, true);
    (srv, runs)
}

/// The subject prefix of a stream of this test.
fn prefix(stream: &str) -> &'static str {
    match stream {
        "ONEBYONE" => "one",
        _ => "mix",
    }
}

#[test]
fn the_one_pass_reads_every_run_as_the_run_by_run_read_does() {
    let (srv, _) = both_streams();
    for (stream, what) in STREAMS {
        let js = srv.store(stream);
        let mut ids = js.runs().unwrap();
        assert!(!ids.contains(&"no-meta".to_owned()));
        assert!(ids.len() > 100, "{what}: {} runs", ids.len());
        // Named though not listed, absent, and named twice.
        ids.extend(["no-meta", "absent", "tool-batch", "bad-mid"].map(String::from));
        // The pass itself vouches for the healthy runs (and for those
        // whose damage is in a body: the decoding finds it, as the run's
        // own read does) and for no run whose messages are not its
        // records 1..N in order.
        let held = std::sync::atomic::AtomicU64::new(0);
        let mut vouched = BTreeMap::new();
        js.stream_runs(&ids, ReadBudget::UNLIMITED, &held, |i, m| {
            vouched.insert(ids[i].clone(), m.is_some());
        });
        for (id, by_pass) in &vouched {
            let want = !DAMAGED.contains(&(id.as_str(), true));
            // A run named twice is vouched for once; the other is read on
            // its own.
            if !["tool-batch", "bad-mid"].contains(&id.as_str()) {
                assert_eq!(*by_pass, want, "{what}: run {id}");
            }
        }
        let store = Store::JetStream(Box::new(js));
        // As the commands give them: the runs as listed (damaged ones
        // too, though the commands leave out what the listing could not
        // summarise), and the others as summarised when named.
        let mut listed = store.summaries().unwrap();
        listed.extend(ids[ids.len() - 4..].iter().map(|id| store.summary(id)));
        let runs: Vec<&Summary> = listed.iter().collect();
        for budget in [
            Store::READ_EACH,
            // Too little to hold one run open: runs are given up as they
            // interleave.
            ReadBudget {
                open: 3_000,
                waiting: 0,
            },
            // Nothing held: every run read on its own.
            ReadBudget {
                open: 0,
                waiting: 0,
            },
        ] {
            same_as_run_by_run(&store, &runs, budget, what);
        }
        // A few runs (the damaged ones, a small part of the stream): read
        // through a consumer filtered to them, not the whole stream.
        let few: Vec<&Summary> = runs
            .iter()
            .copied()
            .filter(|s| DAMAGED.iter().any(|(id, _)| *id == s.run_id))
            .collect();
        assert!(few.len() > DAMAGED.len(), "{what}: bad-mid twice");
        same_as_run_by_run(&store, &few, Store::READ_EACH, what);
        // And the damage reads as each kind should.
        let read = store.read_each(&runs, |_, j| j);
        let by_id: BTreeMap<&str, &journal::Result<Journal>> =
            runs.iter().map(|s| s.run_id.as_str()).zip(&read).collect();
        let error = |id: &str| match by_id[id] {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{what}: run {id} read"),
        };
        assert!(
            error("stray-mid").contains("not a record subject"),
            "{}",
            error("stray-mid")
        );
        assert!(
            error("bad-mid").contains("does not parse"),
            "{}",
            error("bad-mid")
        );
        assert!(
            error("seq-mismatch").contains("holds seq 6"),
            "{}",
            error("seq-mismatch")
        );
        assert!(error("absent").contains("not found"), "{}", error("absent"));
        match by_id["torn-last"] {
            Ok(j) => assert_eq!(j.entries.len(), 6, "{what}: the torn terminal is dropped"),
            Err(e) => panic!("{what}: torn-last: {e}"),
        }
        match by_id["a3-g-tool-batch"] {
            Ok(j) => assert!(j.entries.len() > 3, "{what}"),
            Err(e) => panic!("{what}: {e}"),
        }
        // A run stored to after it was listed is read as it was listed:
        // the pass ends each run where its summary says it ended.
        let before = by_id["simple-completed"].as_ref().unwrap().entries.len();
        let next = journal::store::jetstream::subject(
            prefix(stream),
            "simple-completed",
            before as u64 + 1,
        );
        srv.with_js(async move |js| {
            let body = format!("{{\"seq\":{},\"protocol\":\"x\"}}", before + 1);
            js.publish(next, body.into()).await.unwrap().await.unwrap();
        });
        let one = [listed
            .iter()
            .find(|s| s.run_id == "simple-completed")
            .unwrap()];
        let again = store.read_each(&one, |_, j| j.unwrap().entries.len());
        assert_eq!(again, [before], "{what}: read as listed");
        let now = store.read_batch(&["simple-completed".to_owned()]);
        assert_eq!(now[0].as_ref().unwrap().entries.len(), before + 1, "{what}");
    }
}

/// `read_picked` (issue 40) over `store`: `pick` sees every run's
/// summary once, in the order `summaries` gives them, and each run it
/// picks reaches `visit` exactly once, with the value picked and read as
/// `read_batch` reads it; no other run is read.
fn picked_as_run_by_run(store: &Store, what: &str) {
    let listed: Vec<(String, String)> = store
        .summaries()
        .unwrap()
        .iter()
        .map(|s| (s.run_id.clone(), s.status.to_string()))
        .collect();
    assert!(listed.len() > 100, "{what}");
    let mut seen_by_pick = Vec::new();
    let visited = std::sync::Mutex::new(BTreeMap::new());
    store
        .read_picked(
            |s| {
                let n = seen_by_pick.len();
                seen_by_pick.push((s.run_id.clone(), s.status.to_string()));
                // Every other run, and every damaged one.
                let damaged = DAMAGED.iter().any(|(id, _)| *id == s.run_id);
                (n % 2 == 0 || damaged).then_some(n)
            },
            |run, n, j| {
                let before = visited
                    .lock()
                    .unwrap()
                    .insert(run.to_owned(), (*n, seen(j)));
                assert!(before.is_none(), "{what}: {run} visited twice");
            },
        )
        .unwrap();
    assert_eq!(seen_by_pick, listed, "{what}: pick sees the listing");
    let visited = visited.into_inner().unwrap();
    let want: Vec<String> = seen_by_pick
        .iter()
        .enumerate()
        .filter(|(n, (id, _))| n % 2 == 0 || DAMAGED.iter().any(|(d, _)| d == id))
        .map(|(_, (id, _))| id.clone())
        .collect();
    assert_eq!(
        visited.keys().cloned().collect::<Vec<_>>(),
        {
            let mut w = want.clone();
            w.sort();
            w
        },
        "{what}: the picked runs, each once"
    );
    let read = store.read_batch(&want);
    for (id, r) in want.iter().zip(read) {
        let (n, got) = &visited[id];
        assert_eq!(seen_by_pick[*n].0, *id, "{what}: {id} with its own value");
        assert_eq!(*got, seen(r), "{what}: run {id}");
    }
}

#[test]
fn read_picked_reads_the_runs_picked_from_the_listing_once_each() {
    let (srv, runs) = both_streams();
    for (stream, what) in STREAMS {
        let store = Store::JetStream(Box::new(srv.store(stream)));
        picked_as_run_by_run(&store, what);
    }
    let dir = file_store(&runs);
    picked_as_run_by_run(
        &Store::File(journal::store::file::FileStore::new(dir.path())),
        "a file store",
    );
}

/// `runs` as a file store: each a journal of its bodies in publish order
/// (a stray or misplaced record is then a damaged line of the file).
fn file_store(runs: &[Published]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    for (id, m) in runs {
        let mut text = Vec::new();
        for (_, b) in m {
            text.extend_from_slice(b);
            text.push(b'\n');
        }
        let path = dir.path().join(format!("{id}.json"));
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    dir
}

#[test]
fn a_file_store_reads_each_run_as_read_batch_does() {
    let dir = file_store(&runs());
    let store = Store::File(journal::store::file::FileStore::new(dir.path()));
    let mut listed = store.summaries().unwrap();
    assert!(listed.len() > 100);
    listed.extend(["absent", "bad-mid"].map(|id| store.summary(id)));
    let runs: Vec<&Summary> = listed.iter().collect();
    same_as_run_by_run(&store, &runs, Store::READ_EACH, "a file store");
}

#[test]
fn a_server_gone_after_the_listing_fails_each_run_at_once() {
    let mut srv = NatsServer::start();
    srv.spec_stream("GONE", "gone.>");
    publish(&srv, "gone", &runs(), false);
    let store = Store::JetStream(Box::new(srv.store("GONE")));
    let listed = store.summaries().unwrap();
    let listed: Vec<&Summary> = listed.iter().collect();
    assert!(listed.len() > 100);
    srv.stop();
    let started = std::time::Instant::now();
    let read = store.read_each(&listed, |_, j| j.map(|j| j.entries.len()));
    // The pass fails, the first run read on its own waits out its
    // timeout, and the others are given the same failure at once (not
    // each after a timeout of its own: minutes for these runs).
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
    for (s, r) in listed.iter().zip(&read) {
        match r {
            Err(e) => {
                assert!(e.is_store_failure(), "{}: {e}", s.run_id);
                assert!(e.to_string().contains(&s.run_id), "{}: {e}", s.run_id);
            }
            Ok(n) => panic!("{}: read {n} records from a server that is gone", s.run_id),
        }
    }
}

/// What `f` gives, and how many consumers the server made on `stream`
/// while it ran (its consumer-created advisories).
fn consumers_made<T>(srv: &NatsServer, stream: &str, f: impl FnOnce() -> T) -> (T, usize) {
    let subject = format!("$JS.EVENT.ADVISORY.CONSUMER.CREATED.{stream}.>");
    seen_on(srv, subject, f)
}

/// What `f` gives, and how many times it asked for `stream`'s info (a
/// plain subscriber sees the JetStream API's requests).
fn infos_asked<T>(srv: &NatsServer, stream: &str, f: impl FnOnce() -> T) -> (T, usize) {
    seen_on(srv, format!("$JS.API.STREAM.INFO.{stream}"), f)
}

/// What `f` gives, and how many messages were published on `subject`
/// while it ran.
fn seen_on<T>(srv: &NatsServer, subject: String, f: impl FnOnce() -> T) -> (T, usize) {
    use futures_util::StreamExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let url = srv.settings().servers[0].clone();
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let stopped = stop.clone();
    let counter = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let client = async_nats::connect(url).await.unwrap();
            let mut sub = client.subscribe(subject).await.unwrap();
            client.flush().await.unwrap();
            ready_tx.send(()).unwrap();
            let mut n = 0;
            while !stopped.load(Ordering::Relaxed) {
                let wait = std::time::Duration::from_millis(20);
                if let Ok(Some(_)) = tokio::time::timeout(wait, sub.next()).await {
                    n += 1;
                }
            }
            n
        })
    });
    ready_rx.recv().unwrap();
    let out = f();
    // Advisories are sent after the fact: time for the last to come.
    std::thread::sleep(std::time::Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    (out, counter.join().unwrap())
}

#[test]
fn a_few_runs_of_many_are_read_by_batched_gets_without_a_consumer() {
    let (srv, _) = both_streams();
    for (stream, what) in STREAMS {
        let store = Store::JetStream(Box::new(srv.store(stream)));
        let listed = store.summaries().unwrap();
        let healthy: Vec<&Summary> = listed
            .iter()
            .filter(|s| !DAMAGED.iter().any(|(id, _)| *id == s.run_id))
            .collect();
        // A few healthy runs, a small part of the stream: every one comes
        // whole from batched gets, and no consumer is made.
        let few: Vec<&Summary> = healthy.iter().step_by(9).copied().collect();
        assert!(few.len() > 10, "{what}: {} runs", few.len());
        let (read, made) = consumers_made(&srv, stream, || {
            store.read_each(&few, |_, j| j.map(|j| j.entries.len()))
        });
        assert_eq!(made, 0, "{what}: a few runs read through a consumer");
        for (s, r) in few.iter().zip(&read) {
            assert!(matches!(r, Ok(n) if *n > 0), "{what}: {}: {r:?}", s.run_id);
        }
        same_as_run_by_run(&store, &few, Store::READ_EACH, what);
        // Every run, the whole stream: one consumer over the prefix (so
        // the count above would have seen one), and the damaged runs on
        // their own.
        let all: Vec<&Summary> = healthy.to_vec();
        let ((_, made), infos) = infos_asked(&srv, stream, || {
            consumers_made(&srv, stream, || store.read_each(&all, |_, j| j.is_ok()))
        });
        assert_eq!(made, 1, "{what}: the whole prefix through one consumer");
        // One look at the stream's size chooses between gets and a
        // consumer, and the consumer's grouping.
        assert_eq!(infos, 1, "{what}: the stream's info asked {infos} times");
    }
}

#[test]
fn runs_longer_or_heavier_than_one_batched_answer_are_read_whole() {
    let srv = NatsServer::start();
    srv.spec_stream("BIG", "big.>");
    let runs = runs();
    let batch: Vec<Vec<u8>> = runs
        .iter()
        .find(|(id, _)| id == "tool-batch")
        .unwrap()
        .1
        .iter()
        .map(|(_, b)| b.clone())
        .collect();
    // Other runs, so these are a small part of the stream.
    let mut all: Vec<Published> = Vec::new();
    for tag in ["f1-", "f2-", "f3-", "f4-", "f5-"] {
        all.extend(runs.iter().map(|(id, m)| (format!("{tag}{id}"), m.clone())));
    }
    // Longer than one answer holds (1,024 messages): read on its own.
    let mut long = vec![batch[0].clone()];
    long.extend((2..=1_100).map(|seq| with_seq(&batch[2], seq)));
    all.push(("long".into(), numbered(&long)));
    // Heavier than one answer brings (8 MiB): asked again for the rest.
    let pad = "x".repeat(150_000);
    for k in 0..10 {
        let heavy: Vec<Vec<u8>> = batch
            .iter()
            .map(|b| {
                let text = std::str::from_utf8(b).unwrap();
                let rest = text.strip_prefix('{').unwrap();
                format!("{{\"pad\":\"{pad}\",{rest}").into_bytes()
            })
            .collect();
        all.push((format!("heavy-{k}"), numbered(&heavy)));
    }
    publish(&srv, "big", &all, true);
    let store = Store::JetStream(Box::new(srv.store("BIG")));
    let listed = store.summaries().unwrap();
    let pick = |f: &dyn Fn(&str) -> bool| -> Vec<&Summary> {
        listed.iter().filter(|s| f(&s.run_id)).collect()
    };
    let heavy = pick(&|id| id.starts_with("heavy-"));
    assert_eq!(heavy.len(), 10);
    let (read, made) = consumers_made(&srv, "BIG", || {
        store.read_each(&heavy, |_, j| j.map(|j| j.entries.len()))
    });
    assert_eq!(made, 0, "heavy runs read through a consumer");
    assert!(read.iter().all(|r| matches!(r, Ok(7))), "{read:?}");
    same_as_run_by_run(&store, &heavy, Store::READ_EACH, "heavy runs");
    let long_and_few = pick(&|id| id == "long" || id.starts_with("f1-a3-"));
    assert!(long_and_few.len() > 3);
    same_as_run_by_run(&store, &long_and_few, Store::READ_EACH, "a long run");
    let read = store.read_each(&pick(&|id| id == "long"), |_, j| j.map(|j| j.entries.len()));
    assert!(matches!(read[..], [Ok(1_100)]), "{read:?}");
}
