//! The runtime and the connection: [`Rt`], the tokio runtime this backend
//! owns (the rest of the crate is synchronous) and the only way into it,
//! which the blocking facade holds and the async core never does; and
//! [`Conn`], the client and JetStream context built inside it, and the
//! error mapping of a stream lookup. Also the msg-id nonce, fresh for
//! every open.

use crate::error::{Error, Result, Where};
use crate::nats::{self, Settings, CLIENT_CAPACITY, CONNECT_TIMEOUT, REQUEST_TIMEOUT};
use async_nats::jetstream::{self, stream};
use std::future::Future;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How long a request is asked again (a record published again, a stream
/// looked up again) while the connection is up but no stream leader
/// answers (SPEC 8 on a replicated stream: its leader died and the
/// replicas elect another, which takes nats-server a few seconds, its
/// election timeout being 4 to 9). Only for a replicated stream: see
/// [`Ride`].
pub(super) const RIDE_THROUGH: Duration = Duration::from_secs(30);

/// A random nonce, fresh for every open (SPEC 8): JetStream de-duplicates by
/// msg id across the whole stream.
pub(super) fn new_nonce() -> Result<String> {
    crate::digest::random_hex::<12>().map_err(|e| Error::Unavailable {
        at: Where::Process,
        message: format!("no randomness for a JetStream msg id nonce: {e}"),
    })
}

/// The tokio runtime this backend owns: the one way from synchronous code
/// into the async core. Only the blocking facade (`blocking.rs`, and
/// `config.rs`'s two free functions) holds one; no core type does, so no
/// async code can block on it (tokio panics when that happens).
#[derive(Clone)]
pub(super) struct Rt(Arc<tokio::runtime::Runtime>);

impl Rt {
    pub(super) fn new() -> Result<Rt> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fisk-nats")
            .enable_all()
            .build()
            .map(|rt| Rt(Arc::new(rt)))
            .map_err(|e| Error::Unavailable {
                at: Where::Process,
                message: format!("cannot start the async runtime for JetStream: {e}"),
            })
    }

    /// Run `f` on this thread until it is done.
    pub(super) fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.0.block_on(f)
    }

    /// Run `f` as a task on the runtime's workers and wait for it: the
    /// caller's thread sleeps once instead of at every await (what makes
    /// many concurrent callers cheap). `Err` says why the task failed.
    pub(super) fn run_task<T, F>(&self, f: F) -> std::result::Result<T, String>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let handle = self.0.spawn(f);
        self.0
            .block_on(handle)
            .map_err(|e| format!("a JetStream task failed: {e}"))
    }

    /// Run the future `work` makes on a thread of its own, blocked on the
    /// runtime, while this thread hands every value it sends to `each`:
    /// the caller's code (`each`) never runs inside the runtime, so it may
    /// call the facade or block as it likes. `Err` when no thread could be
    /// started: then `work` did not run.
    pub(super) fn bridge<T, R, W, F>(&self, work: W, mut each: impl FnMut(T)) -> Result<R>
    where
        T: Send,
        R: Send,
        W: FnOnce(mpsc::Sender<T>) -> F + Send,
        F: Future<Output = R>,
    {
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let worker = std::thread::Builder::new()
                .name("fisk-nats-call".into())
                .spawn_scoped(s, move || self.0.block_on(work(tx)))
                .map_err(|e| Error::Unavailable {
                    at: Where::Process,
                    message: format!("cannot start a thread for JetStream: {e}"),
                })?;
            for v in rx {
                each(v);
            }
            match worker.join() {
                Ok(r) => Ok(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }
}

/// What a connection to one server is: shared by the core and its
/// writers. Every function here that talks to the server is async; this
/// type holds no runtime.
#[derive(Clone)]
pub(super) struct Conn {
    pub(super) js: jetstream::Context,
    pub(super) server: String,
    /// The JetStream API prefix (`$JS.API`, or the domain's or the one
    /// given): for the requests async-nats has no call for.
    pub(super) api: String,
    /// The crash seam: every request that changes the stream asks it
    /// first ([`Cut`]). Never armed outside the tests' sweep.
    pub(super) cut: Arc<Cut>,
}

/// The crash seam of the JetStream writers (FORMAT.md, "The crash sweep
/// on JetStream"), as `store/file/sim.rs` is the file backend's: every
/// request that changes the stream (a publish, a purge, a message delete)
/// is a step. Armed at step N, that step either never reaches the server
/// or reaches it and its answer is lost, and every later step fails
/// without reaching it: the stream is left exactly as a process killed
/// there leaves it. Reads are not steps (they change nothing). Unarmed,
/// it only counts.
#[derive(Debug, Default)]
pub(super) struct Cut {
    /// Steps taken so far.
    taken: std::sync::atomic::AtomicU64,
    /// The step the process dies at (0: never).
    at: std::sync::atomic::AtomicU64,
    /// Whether the step it dies at reaches the server.
    lands: std::sync::atomic::AtomicBool,
}

/// What a step of the stream may do ([`Cut::step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Go on as usual.
    Go,
    /// Do it, then fail as if the answer never came: the last step.
    LandThenDie,
    /// Fail without doing it: the process is dead.
    Dead,
}

impl Cut {
    /// The next step's fate.
    pub(super) fn step(&self) -> Step {
        use std::sync::atomic::Ordering::SeqCst;
        let n = self.taken.fetch_add(1, SeqCst).saturating_add(1);
        let at = self.at.load(SeqCst);
        match at {
            0 => Step::Go,
            at if n < at => Step::Go,
            at if n == at && self.lands.load(SeqCst) => Step::LandThenDie,
            _ => Step::Dead,
        }
    }

    /// Die at step `at` (counted from now; 0: never), which reaches the
    /// server when `lands`.
    pub(super) fn arm(&self, at: u64, lands: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        self.taken.store(0, SeqCst);
        self.lands.store(lands, SeqCst);
        self.at.store(at, SeqCst);
    }

    /// Steps taken since the last [`arm`](Self::arm).
    pub(super) fn taken(&self) -> u64 {
        self.taken.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Conn {
    /// Connect. Inside the runtime: the context spawns its ack handler.
    pub(super) async fn open(settings: &Settings) -> Result<Conn> {
        let client = connect(settings).await?;
        Ok(Conn {
            js: jetstream_context(client, settings),
            server: settings.server_list(),
            api: api_prefix(settings),
            cut: Arc::default(),
        })
    }

    /// Whether the client is connected to a server now (not
    /// reconnecting).
    pub(super) fn connected(&self) -> bool {
        self.js.client().connection_state() == async_nats::connection::State::Connected
    }

    /// The version the server this client is connected to states (empty
    /// when it states none).
    pub(super) fn version(&self) -> String {
        self.js.client().server_info().version
    }

    /// Whether the server this client is connected to is in a cluster (its
    /// INFO names one: it has a cluster block). Only there can a stream
    /// lose its leader and elect another.
    fn clustered(&self) -> bool {
        self.js.client().server_info().cluster.is_some()
    }

    /// A ride through a stream leader's election, begun now: see [`Ride`].
    /// `replicas` is the stream's, when known: only a replicated stream
    /// elects a leader, wherever its server is (one reached through a leaf
    /// node, whose own server is in no cluster, included). Not known (the
    /// stream not yet looked up), the server decides: in a cluster or not.
    pub(super) fn ride(&self, replicas: Option<usize>) -> Ride<'_> {
        Ride {
            conn: self,
            until: tokio::time::Instant::now() + RIDE_THROUGH,
            elects: replicas.map_or_else(|| self.clustered(), |n| n > 1),
        }
    }

    pub(super) fn err(&self, stream: &str, message: String) -> Error {
        Error::Unavailable {
            at: self.at(stream),
            message,
        }
    }

    /// The stream `stream` on this connection's server.
    pub(super) fn at(&self, stream: &str) -> Where {
        Where::Stream {
            stream: stream.to_owned(),
            server: self.server.clone(),
        }
    }

    /// Publish `msg` on `subject` and wait for its ack. `None` when the
    /// connection took no message within the request timeout: a
    /// connection that is down stops taking messages once its buffer is
    /// full.
    pub(super) async fn publish(
        &self,
        subject: String,
        msg: jetstream::message::PublishMessage,
    ) -> Option<std::result::Result<jetstream::publish::PublishAck, jetstream::context::PublishError>>
    {
        let step = self.cut.step();
        if step == Step::Dead {
            return None;
        }
        let outcome =
            match tokio::time::timeout(nats::REQUEST_TIMEOUT, self.js.send_publish(subject, msg))
                .await
            {
                Ok(Ok(ack)) => Some(ack.await),
                Ok(Err(e)) => Some(Err(e)),
                Err(_) => None,
            };
        match step {
            Step::Go => outcome,
            _ => None,
        }
    }

    /// The stream's info, asked of the server now; a request that times
    /// out is asked again as long as the [`Ride`] allows, as
    /// [`stream`](Self::stream) asks (no leader answers during an
    /// election). A stream of one replica fails after the one request.
    pub(super) async fn info<'s>(
        &self,
        s: &'s mut stream::Stream,
        name: &str,
    ) -> Result<&'s stream::Info> {
        use async_nats::jetstream::context::RequestErrorKind;
        let ride = self.ride(Some(s.cached_info().config.num_replicas));
        let pause = Duration::from_millis(200);
        loop {
            match s.info().await {
                Ok(_) => break,
                Err(e) if e.kind() == RequestErrorKind::TimedOut && ride.again(pause) => {
                    tokio::time::sleep(pause).await;
                }
                Err(e) => return Err(self.err(name, format!("cannot read the stream's info: {e}"))),
            }
        }
        Ok(s.cached_info())
    }

    /// The stream's handle and configuration; a missing stream or a server
    /// without JetStream is a clear error.
    ///
    /// A request that times out is asked again as long as the [`Ride`]
    /// allows: a replicated stream whose leader died answers no info
    /// request until the replicas have elected another. A lone server's
    /// timeout fails after the one request (the stream's replicas are not
    /// known yet: the server not being in a cluster decides), and a server
    /// without JetStream has no responders and fails at once.
    pub(super) async fn stream(&self, name: &str) -> Result<stream::Stream> {
        let ride = self.ride(None);
        let pause = Duration::from_millis(200);
        loop {
            match self.js.get_stream(name).await {
                Err(e) if leaderless(&e) && ride.again(pause) => {
                    tokio::time::sleep(pause).await;
                }
                found => return self.found(name, found),
            }
        }
    }

    /// [`stream`](Self::stream)'s answer, its error mapped.
    fn found(
        &self,
        name: &str,
        found: std::result::Result<stream::Stream, jetstream::context::GetStreamError>,
    ) -> Result<stream::Stream> {
        match found {
            Ok(s) => Ok(s),
            Err(e) => {
                use async_nats::jetstream::context::GetStreamErrorKind as K;
                let text = e.to_string();
                let msg = match e.kind() {
                    K::JetStream(j) if j.error_code() == async_nats::jetstream::ErrorCode::STREAM_NOT_FOUND => {
                        return Err(Error::NoStream {
                            stream: name.to_owned(),
                            server: self.server.clone(),
                        })
                    }
                    K::Request => format!(
                        "no answer from JetStream: is JetStream enabled on this server (nats-server -js), is the domain or API prefix right, and (in a cluster) does the stream have a leader? ({text})"
                    ),
                    _ => format!("cannot look up the stream: {text}; is JetStream enabled on this server?"),
                };
                Err(self.err(name, msg))
            }
        }
    }
}

/// Whether a stream lookup failed as it does while the stream has no
/// leader: timed out.
fn leaderless(e: &jetstream::context::GetStreamError) -> bool {
    use async_nats::jetstream::context::{GetStreamErrorKind, RequestErrorKind};
    let timed_out = std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<jetstream::context::RequestError>())
        .is_some_and(|r| r.kind() == RequestErrorKind::TimedOut);
    e.kind() == GetStreamErrorKind::Request && timed_out
}

/// A ride through a stream leader's election (issue 28): a request that
/// failed as one does while a replicated stream has no leader (timed out,
/// or no responders) is asked again, for up to [`RIDE_THROUGH`] from when
/// the ride began, but only while the connection is up (a connection that
/// is down has its own reconnect and timeout) and only when the stream is
/// replicated (or, before its configuration is known, when the server it
/// is connected to is in a cluster): a stream of one has no election to
/// wait for, so its timeout is its failure, reported after the one request
/// timeout ([`REQUEST_TIMEOUT`]) with the request's own error. Every
/// ride-through of this backend asks here.
pub(super) struct Ride<'c> {
    conn: &'c Conn,
    until: tokio::time::Instant,
    /// Whether the stream can be electing a leader at all.
    elects: bool,
}

impl Ride<'_> {
    /// Whether the ride has `pause` left (and a request after it).
    pub(super) fn left(&self, pause: Duration) -> bool {
        tokio::time::Instant::now() + pause <= self.until
    }

    /// Whether a request that failed as one does while a stream has no
    /// leader is asked again after `pause`: the stream can elect one (see
    /// [`Conn::ride`]), the connection is up, and the ride has that long
    /// left.
    pub(super) fn again(&self, pause: Duration) -> bool {
        self.elects && self.conn.connected() && self.left(pause)
    }
}

/// Connect with `s`, bounded in time.
pub(super) async fn connect(s: &Settings) -> Result<async_nats::Client> {
    let servers = s.server_list();
    let fail = |message: String| Error::Unavailable {
        at: Where::Server(servers.clone()),
        message,
    };
    let mut opts = async_nats::ConnectOptions::new()
        .name("fisk-admin")
        .connection_timeout(CONNECT_TIMEOUT)
        .request_timeout(Some(REQUEST_TIMEOUT))
        // Reconnect through a brief outage, but a request still fails after
        // REQUEST_TIMEOUT, so no command hangs on a dead server.
        .max_reconnects(None)
        // Room for migrate's pipelined publishes (see CLIENT_CAPACITY).
        .client_capacity(CLIENT_CAPACITY);
    if let Some(c) = &s.creds {
        // Read here, bounded: async-nats would read any file whole.
        let text = crate::bounded::read_string(c, crate::bounded::SETTINGS)
            .map_err(|e| fail(format!("cannot read credentials file {}: {e}", c.display())))?;
        opts = opts
            .credentials(&text)
            .map_err(|e| fail(format!("cannot read credentials file {}: {e}", c.display())))?;
    } else if let Some(n) = &s.nkey {
        let seed =
            crate::bounded::read_string(n, crate::bounded::SECRET).map_err(|e| Error::io(n, e))?;
        opts = opts.nkey(seed.trim().to_owned());
    }
    if let Some(t) = &s.token {
        opts = opts.token(t.clone());
    } else if let Some(u) = &s.user {
        opts = opts.user_and_password(u.clone(), s.password.clone().unwrap_or_default());
    }
    if let (Some(cert), Some(key)) = (&s.cert, &s.key) {
        opts = opts.add_client_certificate(cert.clone(), key.clone());
    }
    if let Some(ca) = &s.ca {
        opts = opts.add_root_certificates(ca.clone());
    }
    if s.tls_first {
        opts = opts.tls_first();
    }
    let mut addrs = Vec::new();
    for u in &s.servers {
        let a: async_nats::ServerAddr = u
            .parse()
            .map_err(|e| fail(format!("server URL {u:?} is not valid: {e}")))?;
        addrs.push(a);
    }
    // The connect timeout applies per attempt; bound the whole connect too.
    let total = CONNECT_TIMEOUT * (addrs.len() as u32).max(1) + Duration::from_secs(1);
    match tokio::time::timeout(total, opts.connect(addrs)).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => {
            use async_nats::ConnectErrorKind as K;
            let hint = match e.kind() {
                K::AuthorizationViolation | K::Authentication => {
                    "the server refused the credentials (the user and password, token or creds file given)"
                }
                K::TimedOut | K::Io | K::Dns => {
                    "is the server running, and reachable at the URL given?"
                }
                K::Tls => "TLS setup failed: check the context's cert, key and ca",
                _ => "check the server URL, the credentials and the context",
            };
            Err(fail(format!("cannot connect: {e}; {hint}")))
        }
        Err(_) => Err(fail(format!(
            "cannot connect within {}s; is the server running and reachable?",
            total.as_secs()
        ))),
    }
}

/// The JetStream API prefix the context of [`jetstream_context`] uses.
fn api_prefix(s: &Settings) -> String {
    match (&s.jetstream_api_prefix, &s.jetstream_domain) {
        (Some(p), _) => p.clone(),
        (None, Some(d)) => format!("$JS.{d}.API"),
        (None, None) => "$JS.API".to_owned(),
    }
}

/// A JetStream context honouring the domain or API prefix.
pub(super) fn jetstream_context(
    client: async_nats::Client,
    s: &Settings,
) -> async_nats::jetstream::Context {
    use async_nats::jetstream::context::ContextBuilder;
    let b = ContextBuilder::new();
    let b = match (&s.jetstream_api_prefix, &s.jetstream_domain) {
        (Some(p), _) => b.api_prefix(p.clone()).timeout(REQUEST_TIMEOUT),
        (None, Some(d)) => b.domain(d.clone()).timeout(REQUEST_TIMEOUT),
        (None, None) => b.timeout(REQUEST_TIMEOUT),
    };
    b.backpressure_on_inflight(true).build(client)
}

/// The major, minor and patch number of a server version (`2.10.26`,
/// `v2.11.0-beta.1`), `None` for anything else.
fn version_numbers(version: &str) -> Option<(u64, u64, u64)> {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let mut next = || -> Option<u64> {
        let digits: String = parts
            .next()?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    Some((next()?, next()?, next().unwrap_or(0)))
}

/// Whether a server of `version` is older than 2.11, which ignores the
/// `Nats-Expected-Last-Subject-Sequence-Subject` header every SPEC 8 fence
/// names its subject with. A version not understood is not (the fences
/// then speak for themselves).
pub(super) fn ignores_fence_subject(version: &str) -> bool {
    version_numbers(version).is_some_and(|v| v < (2, 11, 0))
}

/// Whether a server of `version` is 2.11 before 2.11.7: in fisk-admin's
/// tests (issue 28) those let a new run's first record past its fence
/// (nothing stored on `<prefix>.<id>.>`) at times when a stray record was
/// already stored there; 2.11.7 and later refused it every time.
pub(super) fn wildcard_fence_unsure(version: &str) -> bool {
    version_numbers(version).is_some_and(|v| ((2, 11, 0)..(2, 11, 7)).contains(&v))
}

/// Whether a server of `version` is 2.12.7 to 2.12.9, whose filestore
/// could write a stale first-block index for a stream of one message per
/// subject and, recovering from it after a restart, not find messages
/// (nats-server PR #8254, fixed in 2.12.10).
pub(super) fn loses_last_blocks(version: &str) -> bool {
    version_numbers(version).is_some_and(|v| ((2, 12, 7)..(2, 12, 10)).contains(&v))
}

#[cfg(test)]
mod tests {
    use super::{ignores_fence_subject, loses_last_blocks, version_numbers, wildcard_fence_unsure};

    #[test]
    fn server_versions_are_read_and_placed() {
        assert_eq!(version_numbers("2.10.26"), Some((2, 10, 26)));
        assert_eq!(version_numbers("v2.11.0-beta.1"), Some((2, 11, 0)));
        assert_eq!(version_numbers("2.9"), Some((2, 9, 0)));
        assert_eq!(version_numbers(""), None);
        assert_eq!(version_numbers("dev"), None);
        assert!(ignores_fence_subject("2.10.26") && ignores_fence_subject("2.9.25"));
        assert!(!ignores_fence_subject("2.11.0") && !ignores_fence_subject("2.15.1"));
        assert!(!ignores_fence_subject("") && !ignores_fence_subject("main"));
        assert!(wildcard_fence_unsure("2.11.0") && wildcard_fence_unsure("2.11.6"));
        assert!(!wildcard_fence_unsure("2.11.7") && !wildcard_fence_unsure("2.12.0"));
        assert!(!wildcard_fence_unsure("2.10.26"));
        assert!(loses_last_blocks("2.12.7") && loses_last_blocks("v2.12.9"));
        assert!(!loses_last_blocks("2.12.6") && !loses_last_blocks("2.12.10"));
        assert!(!loses_last_blocks("2.14.1") && !loses_last_blocks("2.15.1"));
        assert!(!loses_last_blocks("") && !loses_last_blocks("2.11.7"));
    }
}
