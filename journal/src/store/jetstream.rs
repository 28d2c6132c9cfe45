//! The JetStream backend (SPEC 8). The operator owns the stream: this module
//! binds to it, derives the subject prefix from its one `<prefix>.>`
//! subject and refuses a stream that breaks SPEC 8, naming the setting and
//! the fix.
//!
//! Layout: seq 1 (the meta record) on `<prefix>.<id>._meta`, seq N on
//! `<prefix>.<id>.<N>`; each message body is the record's bytes exactly as a
//! file line holds them, without the newline.
//!
//! The rest of the crate is synchronous, so this module owns a tokio
//! runtime and offers a blocking facade; work over many runs (listing,
//! summaries) runs concurrently inside one `block_on`, bounded.
//!
//! Appends are fenced on the previous record's literal subject (SPEC 8): the
//! publish of seq N carries `Nats-Expected-Last-Subject-Sequence` = the
//! stream sequence of record N-1 and
//! `Nats-Expected-Last-Subject-Sequence-Subject` = its subject; seq 1
//! expects its own subject to be empty. With one message per subject and
//! discard-new-per-subject this refuses exactly the writers the agent's
//! wildcard fence refuses, in constant time.

use super::{Journal, Summary};
use crate::error::{Error, Result};
use crate::fold::{check_append, Append};
use crate::id;
use crate::lines::Tail;
use crate::nats::{self, Settings};
use crate::record::{Entry, Kind, Record};
use async_nats::jetstream::message::StreamMessage;
use async_nats::jetstream::{self, stream};
use futures_util::{StreamExt, TryStreamExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

mod chain;
mod upgrade;

/// How many runs are read or summarised at once.
pub const CONCURRENCY: usize = 32;

/// Runs up to this many records are read by direct gets, longer ones by a
/// consumer.
const DIRECT_READ_MAX: u64 = 1000;

/// Messages asked for at a time by migrate's bulk reader.
const FETCH_BATCH: usize = 1000;

/// Bytes one pull request may bring (on top of its message count): what a
/// reader has in flight, whatever the size of the records. A message
/// larger than this is fetched on its own.
const FETCH_BYTES: usize = 8 << 20;

/// The header the literal fence names its subject with (async-nats has no
/// constant for it).
pub const EXPECTED_SUBJECT_HEADER: &str = "Nats-Expected-Last-Subject-Sequence-Subject";
const MSG_ID_HEADER: &str = "Nats-Msg-Id";

/// JetStream's error codes for a failed fence.
const WRONG_LAST_SEQUENCE: u64 = 10071;
const SUBJECT_FULL: u64 = 10077;
/// JetStream: the message is larger than the stream's max message size.
const MESSAGE_TOO_LARGE: u64 = 10054;

/// One way a stream's configuration breaks SPEC 8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The setting, as the stream's JSON configuration names it.
    pub setting: &'static str,
    pub found: String,
    pub required: String,
    /// What to run or change.
    pub fix: String,
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is {}, must be {}; fix: {}",
            self.setting, self.found, self.required, self.fix
        )
    }
}

/// The prefix of a stream bound to exactly one `<prefix>.>` subject.
pub fn prefix_of(subjects: &[String]) -> Option<String> {
    match subjects {
        [only] => {
            let p = only.strip_suffix(".>")?;
            let ok = !p.is_empty()
                && p.split('.').all(|t| {
                    !t.is_empty()
                        && t != "*"
                        && t != ">"
                        && !t.contains(|c: char| c.is_whitespace() || c == '*' || c == '>')
                });
            ok.then(|| p.to_owned())
        }
        _ => None,
    }
}

/// Check a stream's configuration against SPEC 8. Empty when it passes.
pub fn check_config(c: &stream::Config) -> Vec<ConfigProblem> {
    let name = &c.name;
    let mut out = Vec::new();
    let mut add = |setting, found: String, required: &str, fix: String| {
        out.push(ConfigProblem {
            setting,
            found,
            required: required.to_owned(),
            fix,
        })
    };
    if prefix_of(&c.subjects).is_none() {
        add(
            "subjects",
            format!("{:?}", c.subjects),
            "exactly one subject of the form PREFIX.> (e.g. fisk.sessions.>)",
            format!("nats stream edit {name} --subjects 'PREFIX.>' (one subject only)"),
        );
    }
    if c.max_messages_per_subject != 1 {
        add(
            "max_msgs_per_subject",
            c.max_messages_per_subject.to_string(),
            "1",
            format!("nats stream edit {name} --max-msgs-per-subject 1"),
        );
    }
    if c.discard != stream::DiscardPolicy::New {
        add(
            "discard",
            format!("{:?}", c.discard).to_lowercase(),
            "new",
            format!("nats stream edit {name} --discard new"),
        );
    }
    if !c.discard_new_per_subject {
        add(
            "discard_new_per_subject",
            "false".into(),
            "true",
            format!("nats stream edit {name} --discard-per-subject"),
        );
    }
    if !c.max_age.is_zero() {
        add(
            "max_age",
            format!("{:?}", c.max_age),
            "0 (unlimited): records must never expire",
            format!("set max_age to 0 (unlimited), e.g. nats stream edit {name} --max-age 0"),
        );
    }
    if c.max_message_size > 0 && c.max_message_size < 4096 {
        add(
            "max_msg_size",
            c.max_message_size.to_string(),
            "-1 (unlimited) or at least 4096",
            format!("nats stream edit {name} --max-msg-size -1"),
        );
    }
    if c.retention != stream::RetentionPolicy::Limits {
        add(
            "retention",
            format!("{:?}", c.retention).to_lowercase(),
            "limits: a work-queue or interest stream deletes records once consumed",
            format!("recreate the stream with retention limits (fisk-admin stream create {name} --subject 'PREFIX.>')"),
        );
    }
    if c.sealed {
        add(
            "sealed",
            "true".into(),
            "false: a sealed stream takes no appends",
            "use another stream; a sealed stream cannot be unsealed".into(),
        );
    }
    if c.mirror.is_some() {
        add(
            "mirror",
            "set".into(),
            "unset: a mirror takes no appends",
            "point fisk at the origin stream instead of its mirror".into(),
        );
    }
    out
}

/// Settings that do not break SPEC 8 but that the operator should know.
pub fn config_notes(c: &stream::Config) -> Vec<String> {
    let mut out = Vec::new();
    if !c.allow_direct {
        out.push(format!(
            "allow_direct is false: reads go to the stream leader (slower); nats stream edit {} --allow-direct",
            c.name
        ));
    }
    if c.deny_purge {
        out.push("deny_purge is true: runs cannot be deleted (rm, migrate --delete-source)".into());
    }
    out
}

/// The configuration `stream create` makes (SPEC 8, plus direct gets).
pub fn spec_config(name: &str, subject: &str) -> stream::Config {
    stream::Config {
        name: name.to_owned(),
        subjects: vec![subject.to_owned()],
        max_messages_per_subject: 1,
        discard: stream::DiscardPolicy::New,
        discard_new_per_subject: true,
        max_age: Duration::ZERO,
        max_message_size: -1,
        allow_direct: true,
        retention: stream::RetentionPolicy::Limits,
        storage: stream::StorageType::File,
        ..Default::default()
    }
}

/// A stream's name, prefix and configuration as found on the server.
#[derive(Debug, Clone)]
pub struct StreamReport {
    pub name: String,
    pub server: String,
    pub config: stream::Config,
    pub problems: Vec<ConfigProblem>,
    pub notes: Vec<String>,
    pub messages: u64,
    pub bytes: u64,
}

/// How much of a JetStream source [`JetStreamStore::stream_runs`] may hold,
/// in body bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadBudget {
    /// Runs still being read (interleaved with others in the stream):
    /// beyond this, the runs still open are given up (read on their own).
    pub open: u64,
    /// Runs handed over and not yet released by the caller: beyond this,
    /// reading pauses until the caller catches up.
    pub waiting: u64,
}

impl ReadBudget {
    /// No limit.
    pub const UNLIMITED: ReadBudget = ReadBudget {
        open: u64::MAX,
        waiting: u64::MAX,
    };
}

/// Take `bytes` off the count of source bytes [`JetStreamStore::stream_runs`]
/// holds (never below zero): the caller's side once it is done with a run.
pub fn release(held: &std::sync::atomic::AtomicU64, bytes: u64) {
    use std::sync::atomic::Ordering;
    let _ = held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
        Some(h.saturating_sub(bytes))
    });
}

/// A run for [`JetStreamStore::create_runs`]: its index (for the caller),
/// id, and records (seq, body).
pub type NewRun = (usize, String, Vec<(u64, Vec<u8>)>);

/// A message of a run as stored.
#[derive(Debug, Clone)]
pub struct RunMessage {
    pub subject: String,
    /// The record seq the subject names (`_meta` = 1), `None` when the
    /// subject is not a record subject.
    pub subject_seq: Option<u64>,
    pub stream_seq: u64,
    pub body: Vec<u8>,
}

/// An ephemeral pull consumer for reading: no acks, everything from the
/// start, in memory. It is deleted when the read ends; the server drops it
/// 5 minutes after its last use should this process die first (long
/// enough for a bulk read paused while its copies catch up).
fn read_consumer_config(filter: String, filters: Vec<String>) -> jetstream::consumer::pull::Config {
    jetstream::consumer::pull::Config {
        filter_subject: filter,
        filter_subjects: filters,
        ack_policy: jetstream::consumer::AckPolicy::None,
        deliver_policy: jetstream::consumer::DeliverPolicy::All,
        inactive_threshold: Duration::from_secs(300),
        memory_storage: true,
        num_replicas: 1,
        ..Default::default()
    }
}

/// The batches of a pull consumer, each at most `max` messages and
/// [`FETCH_BYTES`] (so what is in flight is bounded by bytes, not only by
/// count), waiting at most the request timeout for them.
struct Pull<'a> {
    consumer: &'a jetstream::consumer::PullConsumer,
    max: usize,
    /// The next message alone is larger than a batch may be: it is asked
    /// for on its own, with no byte limit.
    alone: bool,
    /// Pulls in a row the consumer was not there to answer (503).
    unanswered: u32,
}

/// Pulls in a row a consumer may leave unanswered (503, no responders)
/// before the read fails. In a cluster a new consumer answers only once
/// its leader has started, a moment after it was created; the waits
/// between pulls grow by 20 ms each (about 5 s in all).
const UNANSWERED_PULLS: u32 = 22;

impl<'a> Pull<'a> {
    fn new(consumer: &'a jetstream::consumer::PullConsumer, max: usize) -> Pull<'a> {
        Pull {
            consumer,
            max,
            alone: false,
            unanswered: 0,
        }
    }

    /// The next batch: at most `max` of the `left` messages.
    async fn next(
        &mut self,
        left: u64,
    ) -> std::result::Result<jetstream::consumer::pull::Batch, jetstream::consumer::pull::BatchError>
    {
        if self.unanswered > 0 {
            tokio::time::sleep(Duration::from_millis(20 * u64::from(self.unanswered))).await;
        }
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(self.max);
        let fetch = self.consumer.fetch().expires(nats::REQUEST_TIMEOUT);
        let fetch = match std::mem::take(&mut self.alone) {
            true => fetch.max_messages(1),
            false => fetch.max_messages(want).max_bytes(FETCH_BYTES),
        };
        fetch.messages().await
    }

    /// Whether the error that ended a batch only ends the batch, and the
    /// read goes on with the next one. `got` messages came in the batch.
    /// async-nats reports the server's status only as text.
    ///
    /// - The batch is full (409 "Message Size Exceeds MaxBytes": the next
    ///   message would pass the byte limit). With nothing received, the
    ///   next message alone is larger than a batch: the next batch asks
    ///   for it alone.
    /// - Nothing answered the pull (503, no responders) and nothing came:
    ///   a new consumer in a cluster whose leader has not started yet.
    ///   The next pull waits a little, up to [`UNANSWERED_PULLS`] times.
    fn ended(&mut self, e: &(dyn std::error::Error + Send + Sync), got: u64) -> bool {
        let text = e.to_string();
        if text.contains("Message Size Exceeds MaxBytes") {
            self.alone |= got == 0;
            self.unanswered = 0;
            return true;
        }
        if got == 0 && text.contains("stream: 503") && self.unanswered < UNANSWERED_PULLS {
            self.unanswered += 1;
            return true;
        }
        false
    }

    /// Whether a batch that brought `got` messages is a stall: it brought
    /// nothing, and not for a message too large for a batch (which comes
    /// next on its own) nor for a consumer not answering yet (asked again).
    fn stalled(&mut self, got: u64) -> bool {
        if got > 0 {
            self.unanswered = 0;
            return false;
        }
        !self.alone && self.unanswered == 0
    }
}

/// A random nonce, fresh for every open (SPEC 8): JetStream de-duplicates by
/// msg id across the whole stream.
fn new_nonce() -> Result<String> {
    let mut b = [0u8; 12];
    getrandom::fill(&mut b).map_err(|e| Error::Store {
        context: "JetStream append".into(),
        message: format!("no randomness for the msg id nonce: {e}"),
    })?;
    Ok(crate::digest::hex(&b))
}

fn runtime() -> Result<Arc<tokio::runtime::Runtime>> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("fisk-nats")
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Store {
            context: "JetStream".into(),
            message: format!("cannot start the async runtime: {e}"),
        })
}

/// What a connection to one server is: shared by the store and appenders.
#[derive(Clone)]
struct Conn {
    rt: Arc<tokio::runtime::Runtime>,
    js: jetstream::Context,
    server: String,
}

impl Conn {
    fn open(settings: &Settings) -> Result<Conn> {
        let rt = runtime()?;
        let client = rt.block_on(nats::connect(settings))?;
        // The context spawns its ack handler: it must be built inside the runtime.
        let js = {
            let _inside = rt.enter();
            nats::jetstream(client, settings)
        };
        Ok(Conn {
            rt,
            js,
            server: settings.server_list(),
        })
    }

    fn err(&self, stream: &str, message: String) -> Error {
        Error::Store {
            context: format!("stream {stream} on {}", self.server),
            message,
        }
    }

    /// The stream's handle and configuration; a missing stream or a server
    /// without JetStream is a clear error.
    async fn stream(&self, name: &str) -> Result<stream::Stream> {
        match self.js.get_stream(name).await {
            Ok(s) => Ok(s),
            Err(e) => {
                use async_nats::jetstream::context::GetStreamErrorKind as K;
                let text = e.to_string();
                let msg = match e.kind() {
                    K::JetStream(j) if j.error_code() == async_nats::jetstream::ErrorCode::STREAM_NOT_FOUND => format!(
                        "stream {name} does not exist; create it with `fisk-admin stream create {name} --subject 'PREFIX.>'` (or ask the operator who owns it)"
                    ),
                    K::Request => format!(
                        "no answer from JetStream: is JetStream enabled on this server (nats-server -js), and is the domain or API prefix right? ({text})"
                    ),
                    _ => format!("cannot look up the stream: {text}; is JetStream enabled on this server?"),
                };
                Err(self.err(name, msg))
            }
        }
    }
}

/// A bound JetStream session store.
#[derive(Clone)]
pub struct JetStreamStore {
    conn: Conn,
    stream: stream::Stream,
    name: String,
    prefix: String,
    direct: bool,
    config: stream::Config,
    settings: Settings,
}

/// Look at a stream without binding to it (`stream check`, `verify`).
pub fn inspect(settings: &Settings, name: &str) -> Result<StreamReport> {
    let conn = Conn::open(settings)?;
    conn.rt.block_on(async {
        let mut s = conn.stream(name).await?;
        let info = s
            .info()
            .await
            .map_err(|e| conn.err(name, format!("cannot read the stream's info: {e}")))?;
        Ok(StreamReport {
            name: name.to_owned(),
            server: conn.server.clone(),
            problems: check_config(&info.config),
            notes: config_notes(&info.config),
            config: info.config.clone(),
            messages: info.state.messages,
            bytes: info.state.bytes,
        })
    })
}

/// Create a stream with exactly the SPEC 8 configuration. An existing stream
/// is never changed: one that already passes is reported as such (`Ok(false)`),
/// any other is refused.
pub fn create_stream(settings: &Settings, name: &str, subject: &str) -> Result<bool> {
    let want = spec_config(name, subject);
    if prefix_of(&want.subjects).is_none() {
        return Err(Error::Usage(format!(
            "subject {subject:?} is not of the form PREFIX.> (for example fisk.sessions.>)"
        )));
    }
    let conn = Conn::open(settings)?;
    conn.rt.block_on(async {
        if let Ok(mut s) = conn.js.get_stream(name).await {
            let info = s
                .info()
                .await
                .map_err(|e| conn.err(name, format!("cannot read the stream's info: {e}")))?;
            let problems = check_config(&info.config);
            if !problems.is_empty() {
                return Err(conn.err(name, format!(
                    "the stream exists with another configuration; fisk-admin does not change a stream it does not own: {}",
                    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                )));
            }
            if info.config.subjects != want.subjects {
                return Err(conn.err(
                    name,
                    format!(
                        "the stream exists with subjects {:?}, not {subject:?}; use that prefix or another stream name",
                        info.config.subjects
                    ),
                ));
            }
            return Ok(false);
        }
        conn.js
            .create_stream(want)
            .await
            .map_err(|e| conn.err(name, format!("cannot create the stream: {e}")))?;
        Ok(true)
    })
}

impl JetStreamStore {
    /// Connect and bind to `name`, refusing a stream that breaks SPEC 8.
    pub fn connect(settings: &Settings, name: &str) -> Result<JetStreamStore> {
        let s = JetStreamStore::connect_unchecked(settings, name)?;
        let problems = check_config(&s.config);
        if !problems.is_empty() {
            return Err(s.conn.err(
                name,
                format!(
                    "the stream breaks the session-store rules (SPEC 8): {}; `fisk-admin stream check {name}` lists every problem",
                    problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ));
        }
        Ok(s)
    }

    /// Bind without checking the configuration beyond its subject (verify
    /// reports the problems as findings instead).
    pub fn connect_unchecked(settings: &Settings, name: &str) -> Result<JetStreamStore> {
        let conn = Conn::open(settings)?;
        let (stream, config) = conn.rt.block_on(async {
            let mut s = conn.stream(name).await?;
            let info = s
                .info()
                .await
                .map_err(|e| conn.err(name, format!("cannot read the stream's info: {e}")))?;
            let config = info.config.clone();
            Ok::<_, Error>((s, config))
        })?;
        let prefix = prefix_of(&config.subjects).ok_or_else(|| {
            conn.err(
                name,
                format!(
                    "subjects is {:?}: a session stream binds exactly one subject of the form PREFIX.>; fix: nats stream edit {name} --subjects 'PREFIX.>'",
                    config.subjects
                ),
            )
        })?;
        Ok(JetStreamStore {
            direct: config.allow_direct,
            conn,
            stream,
            name: name.to_owned(),
            prefix,
            config,
            settings: settings.clone(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
    pub fn server(&self) -> &str {
        &self.conn.server
    }
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    pub fn config(&self) -> &stream::Config {
        &self.config
    }

    /// For messages: "stream S on nats://..".
    pub fn describe(&self) -> String {
        format!("stream {} on {}", self.name, self.conn.server)
    }

    fn err(&self, run: Option<&str>, message: String) -> Error {
        Error::Store {
            context: match run {
                Some(r) => format!("run {r} in stream {} on {}", self.name, self.conn.server),
                None => format!("stream {} on {}", self.name, self.conn.server),
            },
            message,
        }
    }

    /// `<prefix>.<id>._meta` for seq 1, `<prefix>.<id>.<N>` otherwise.
    pub fn subject(&self, run: &str, seq: u64) -> String {
        subject(&self.prefix, run, seq)
    }

    /// The run's seq for a subject of this stream, if it is a record subject.
    pub fn parse_subject<'a>(&self, subject: &'a str) -> Option<(&'a str, Option<u64>)> {
        let rest = subject.strip_prefix(&self.prefix)?.strip_prefix('.')?;
        let (run, token) = rest.split_once('.')?;
        Some((run, seq_of_token(token)))
    }

    /// Valid run ids with a meta record, sorted.
    pub fn runs(&self) -> Result<Vec<String>> {
        self.block_on(self.runs_async())
    }

    async fn runs_async(&self) -> Result<Vec<String>> {
        let filter = format!("{}.*._meta", self.prefix);
        let mut subjects = self
            .stream
            .info_with_subjects(&filter)
            .await
            .map_err(|e| self.err(None, format!("cannot list {filter}: {e}")))?;
        let mut runs = Vec::new();
        while let Some((subject, _count)) = subjects
            .try_next()
            .await
            .map_err(|e| self.err(None, format!("cannot list {filter}: {e}")))?
        {
            if let Some((run, Some(1))) = self.parse_subject(&subject) {
                if id::is_valid(run) {
                    runs.push(run.to_owned());
                }
            }
        }
        runs.sort();
        runs.dedup();
        Ok(runs)
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.conn.rt.block_on(f)
    }

    /// Run `f` as a task on the runtime's workers and wait for it: the
    /// caller's thread sleeps once instead of at every await (what makes
    /// many concurrent callers cheap).
    fn run_task<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        let handle = self.conn.rt.spawn(f);
        match self.conn.rt.block_on(handle) {
            Ok(r) => r,
            Err(e) => Err(self.err(None, format!("a JetStream task failed: {e}"))),
        }
    }

    /// The last message stored on `subject` (which may be a wildcard).
    async fn last_on(&self, subject: &str, wildcard: bool) -> Result<Option<StreamMessage>> {
        let run = self.parse_subject(subject).map(|(r, _)| r);
        if self.direct && !wildcard {
            use async_nats::jetstream::stream::DirectGetErrorKind as K;
            match self.stream.direct_get_last_for_subject(subject).await {
                Ok(m) => return Ok(Some(m)),
                Err(e) if e.kind() == K::NotFound => return Ok(None),
                // 503: no responder for direct gets; use the leader below.
                Err(e) if matches!(e.kind(), K::ErrorResponse(c, _) if c.as_u16() == 503) => {}
                Err(e) => {
                    return Err(self.err(run, format!("cannot read {subject}: {e}")));
                }
            }
        }
        use async_nats::jetstream::stream::LastRawMessageErrorKind as K;
        match self.stream.get_last_raw_message_by_subject(subject).await {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.kind() == K::NoMessageFound => Ok(None),
            Err(e) => Err(self.err(run, format!("cannot read {subject}: {e}"))),
        }
    }

    /// The run's last message (on `<prefix>.<id>.>`), `None` for no run.
    async fn last_of_run(&self, run: &str) -> Result<Option<StreamMessage>> {
        id::check(run)?;
        self.last_on(&format!("{}.{run}.>", self.prefix), true)
            .await
    }

    /// Whether a run's tail (its last message) is its meta record while
    /// record 2 exists: an upgrade interrupted between its two publishes
    /// (`upgrade.rs`). Then the tail's seq is not the run's length.
    async fn tail_behind(&self, run: &str, last_n: u64) -> Result<bool> {
        if last_n != 1 {
            return Ok(false);
        }
        Ok(self.last_on(&self.subject(run, 2), false).await?.is_some())
    }

    fn interrupted(&self, run: &str) -> Error {
        Error::Refused {
            run: run.to_owned(),
            message: format!(
                "its last message on stream {} is its meta record, but record 2 exists: an upgrade was interrupted; run `fisk-admin upgrade {run}` to finish it",
                self.name
            ),
        }
    }

    fn not_found(&self, run: &str) -> Error {
        Error::NotFound {
            run: run.to_owned(),
            path: PathBuf::from(format!(
                "stream {} ({}.{run}.>) on {}",
                self.name, self.prefix, self.conn.server
            )),
        }
    }

    pub fn exists(&self, run: &str) -> Result<bool> {
        Ok(self.block_on(self.last_of_run(run))?.is_some())
    }

    /// Every message of the run in stream order, exactly as stored.
    pub fn read_messages(&self, run: &str) -> Result<Vec<RunMessage>> {
        let (st, run) = (self.clone(), run.to_owned());
        self.run_task(async move { st.read_messages_async(&run).await })
    }

    async fn read_messages_async(&self, run: &str) -> Result<Vec<RunMessage>> {
        self.read_run(run, false).await
    }

    /// `complete`: read through a consumer, which also sees messages on
    /// subjects that are not record subjects (verify needs them).
    async fn read_run(&self, run: &str, complete: bool) -> Result<Vec<RunMessage>> {
        // The last message says whether the run exists and, for a run with
        // sane subjects, how long it is.
        let Some(last) = self.last_of_run(run).await? else {
            return Err(self.not_found(run));
        };
        let last_n = self.parse_subject(&last.subject).and_then(|(_, s)| s);
        match last_n {
            // Short runs: direct gets of every record subject, pipelined,
            // cost the server less than creating a consumer.
            Some(n) if !complete && self.direct && n <= DIRECT_READ_MAX => {
                if let Some(out) = self.read_direct(run, n, &last).await? {
                    return Ok(out);
                }
                self.read_consumer(run).await
            }
            _ => self.read_consumer(run).await,
        }
    }

    /// Records 1..=n by direct get; `None` when the run holds anything the
    /// subjects 1..=n do not account for (then a consumer reads it all).
    async fn read_direct(
        &self,
        run: &str,
        n: u64,
        last: &StreamMessage,
    ) -> Result<Option<Vec<RunMessage>>> {
        if self.tail_behind(run, n).await? {
            return Ok(None); // the consumer reads all of it
        }
        let gets = futures_util::stream::iter(1..n)
            .map(|k| {
                let subject = self.subject(run, k);
                async move { self.last_on(&subject, false).await.map(|m| (k, subject, m)) }
            })
            .buffered(64)
            .collect::<Vec<_>>()
            .await;
        let mut out = Vec::with_capacity(n as usize);
        for g in gets {
            let (k, subject, m) = g?;
            let Some(m) = m else {
                return Ok(None); // a gap: let the consumer see what is there
            };
            out.push(RunMessage {
                subject,
                subject_seq: Some(k),
                stream_seq: m.sequence,
                body: m.payload.to_vec(),
            });
        }
        out.push(RunMessage {
            subject: last.subject.to_string(),
            subject_seq: Some(n),
            stream_seq: last.sequence,
            body: last.payload.to_vec(),
        });
        // A message on a subject that is not a record subject is not seen
        // here; the reader's rule does not use it, and verify reads with a
        // consumer instead.
        Ok(Some(out))
    }

    async fn read_consumer(&self, run: &str) -> Result<Vec<RunMessage>> {
        id::check(run)?;
        let filter = format!("{}.{run}.>", self.prefix);
        // An ephemeral pull consumer without acks: its pending count at
        // creation is the run's message count, so the read knows where it
        // ends (a consumer on an empty filter would otherwise wait forever).
        let consumer = self
            .stream
            .create_consumer(read_consumer_config(filter.clone(), Vec::new()))
            .await
            .map_err(|e| self.err(Some(run), format!("cannot read {filter}: {e}")))?;
        let name = consumer.cached_info().name.clone();
        let count = consumer.cached_info().num_pending;
        let out = self.fetch_all(run, &filter, &consumer, count).await;
        // Consumers count against the stream's limits: never leave one behind.
        let _ = self.stream.delete_consumer(&name).await;
        let out = out?;
        if out.is_empty() {
            return Err(self.not_found(run));
        }
        Ok(out)
    }

    async fn fetch_all(
        &self,
        run: &str,
        filter: &str,
        consumer: &jetstream::consumer::PullConsumer,
        count: u64,
    ) -> Result<Vec<RunMessage>> {
        let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(1 << 16));
        let mut pull = Pull::new(consumer, 10_000);
        while (out.len() as u64) < count {
            let left = count - out.len() as u64;
            let mut batch = pull
                .next(left)
                .await
                .map_err(|e| self.err(Some(run), format!("cannot read {filter}: {e}")))?;
            let before = out.len();
            while let Some(m) = batch.next().await {
                let m = match m {
                    Ok(m) => m,
                    Err(e) if pull.ended(&*e, (out.len() - before) as u64) => break,
                    Err(e) => {
                        return Err(self.err(Some(run), format!("reading {filter} failed: {e}")))
                    }
                };
                let stream_seq = m.info().map(|i| i.stream_sequence).map_err(|e| {
                    self.err(
                        Some(run),
                        format!("a message without JetStream metadata: {e}"),
                    )
                })?;
                let subject = m.message.subject.to_string();
                let subject_seq = self.parse_subject(&subject).and_then(|(_, s)| s);
                out.push(RunMessage {
                    subject,
                    subject_seq,
                    stream_seq,
                    body: m.message.payload.to_vec(),
                });
            }
            if pull.stalled((out.len() - before) as u64) {
                return Err(self.err(
                    Some(run),
                    format!(
                        "reading {filter} stalled after {} of {count} messages (no message within {}s); is the server up? re-run to retry",
                        out.len(),
                        nats::REQUEST_TIMEOUT.as_secs()
                    ),
                ));
            }
        }
        Ok(out)
    }

    /// Read a run with the reader's rule. Messages are atomic, so there is no
    /// torn write; a final body that does not decode is still dropped (as a
    /// file's final line would be) and one before it is corruption.
    pub fn read(&self, run: &str) -> Result<Journal> {
        let messages = self.read_messages(run)?;
        self.decode_run(run, messages, false).map(|(j, _)| j)
    }

    /// Like [`read`](Self::read), but stop at the first message that breaks
    /// the run instead of failing: the readable prefix and why it stopped.
    pub fn read_prefix(&self, run: &str) -> Result<(Journal, Option<String>)> {
        let messages = self.read_messages(run)?;
        self.decode_run(run, messages, true)
    }

    fn decode_run(
        &self,
        run: &str,
        mut messages: Vec<RunMessage>,
        lenient: bool,
    ) -> Result<(Journal, Option<String>)> {
        // Seq order is the subjects' order; stream order agrees for any run
        // written through the fence.
        messages.sort_by_key(|m| (m.subject_seq.unwrap_or(u64::MAX), m.stream_seq));
        let bytes = messages.iter().map(|m| m.body.len() as u64 + 1).sum();
        let n = messages.len();
        let mut entries = Vec::with_capacity(n);
        let mut tail = Tail::Clean;
        let mut stopped = None;
        for (i, m) in messages.into_iter().enumerate() {
            let position = i + 1;
            let problem = match (m.subject_seq, Record::decode(&m.body)) {
                (Some(s), Ok(r)) if r.seq == s => {
                    entries.push(Entry {
                        line: position,
                        offset: 0,
                        raw: m.body,
                        record: r,
                    });
                    continue;
                }
                (None, _) => format!("subject {} is not a record subject", m.subject),
                (Some(s), Ok(r)) => format!("subject {} holds seq {}, not {s}", m.subject, r.seq),
                (Some(_), Err(e)) if position == n => {
                    tail = Tail::Torn {
                        line: position,
                        offset: 0,
                        terminated: true,
                        bytes: m.body,
                        error: e,
                    };
                    break;
                }
                (Some(_), Err(e)) => format!("the body on {} does not parse: {e}", m.subject),
            };
            if lenient {
                stopped = Some(format!("stopped at message {position}: {problem}"));
                break;
            }
            return Err(Error::Corrupt {
                run: run.to_owned(),
                path: PathBuf::from(format!("stream {} subject {}", self.name, m.subject)),
                line: position,
                offset: 0,
                message: problem,
            });
        }
        Ok((
            Journal {
                run: run.to_owned(),
                entries,
                tail,
                bytes,
            },
            stopped,
        ))
    }

    /// Summarise a run from its meta record and its tail (SPEC 9): the last
    /// message, then backwards by direct get to the last assistant record.
    pub fn summary(&self, run: &str) -> Summary {
        self.block_on(self.summary_async(run))
    }

    async fn summary_async(&self, run: &str) -> Summary {
        match self.summary_inner(run).await {
            Ok(s) => s,
            Err(e) => Summary::corrupt(run, e.to_string()),
        }
    }

    async fn summary_inner(&self, run: &str) -> Result<Summary> {
        let Some(last) = self.last_of_run(run).await? else {
            return Err(self.not_found(run));
        };
        let stored = crate::time::Time::from_system(system_time(&last));
        let last_n = self
            .parse_subject(&last.subject)
            .and_then(|(_, s)| s)
            .ok_or_else(|| {
                self.err(
                    Some(run),
                    format!(
                        "the last message is on {}, not a record subject",
                        last.subject
                    ),
                )
            })?;
        if self.tail_behind(run, last_n).await? {
            return Err(self.interrupted(run));
        }
        let decode = |m: &StreamMessage| {
            Record::decode(&m.payload).map_err(|e| {
                self.err(
                    Some(run),
                    format!("the body on {} does not parse: {e}", m.subject),
                )
            })
        };
        let meta = if last_n == 1 {
            decode(&last)?
        } else {
            let subject = self.subject(run, 1);
            match self.last_on(&subject, false).await? {
                Some(m) => decode(&m)?,
                None => return Err(self.err(Some(run), format!("no meta record on {subject}"))),
            }
        };
        let mut tail = Vec::new();
        let mut n = last_n;
        while n > 1 {
            let m = if n == last_n {
                last.clone()
            } else {
                let subject = self.subject(run, n);
                match self.last_on(&subject, false).await? {
                    Some(m) => m,
                    None => {
                        return Err(self.err(
                            Some(run),
                            format!("record {n} is missing ({subject}): records were lost"),
                        ))
                    }
                }
            };
            match decode(&m) {
                Ok(r) => {
                    let assistant = r.kind() == Some(Kind::Assistant);
                    tail.push(r);
                    if assistant {
                        break;
                    }
                }
                Err(_) if n == last_n => {} // as a torn tail: dropped
                Err(e) => return Err(e),
            }
            n -= 1;
        }
        tail.reverse();
        let mut s = Summary::from_tail(run, &meta, &tail);
        if let Some(p) = s.problem.as_mut() {
            *p = format!("stream {} run {run}: {p}", self.name);
        }
        // SPEC 9: the last record's time; an undated one, its store time.
        s.updated = s.updated.or(Some(stored));
        Ok(s)
    }

    /// Summaries of `runs`, concurrently (bounded), in the order given.
    pub fn summaries(&self, runs: &[String]) -> Vec<Summary> {
        self.block_on(async {
            futures_util::stream::iter(runs.iter())
                .map(|r| self.summary_async(r))
                .buffered(CONCURRENCY)
                .collect()
                .await
        })
    }

    /// Read many runs completely (every message on `<prefix>.<id>.>`),
    /// concurrently (bounded), in the order given.
    pub fn read_many(&self, runs: &[String]) -> Vec<Result<Vec<RunMessage>>> {
        self.block_on(async {
            futures_util::stream::iter(runs.iter())
                .map(|r| self.read_run(r, true))
                .buffered(CONCURRENCY)
                .collect()
                .await
        })
    }

    /// A writer for a new run: its first append is seq 1 and fails when the
    /// run already exists.
    pub fn create(&self, run: &str) -> Result<JetStreamAppender> {
        id::check(run)?;
        if self.block_on(self.last_of_run(run))?.is_some() {
            return Err(Error::Exists {
                run: run.to_owned(),
                location: self.describe(),
            });
        }
        self.appender(run, 0, 0)
    }

    /// A writer for a new run without looking first: the fence of its seq 1
    /// refuses it when anything is stored under the run's subjects
    /// (`Error::Exists` when the meta record is there, `Error::Live`
    /// otherwise). One round trip less than [`create`](Self::create).
    pub fn create_new(&self, run: &str) -> Result<JetStreamAppender> {
        id::check(run)?;
        self.appender(run, 0, 0)
    }

    /// Count and SHA-256 (over each body followed by `\n`) of each run, read
    /// back through one consumer (over the whole prefix when `records`, the
    /// records expected in these runs, are at least half the stream, else
    /// one per group of runs) instead of a read per run. `Ok(None)` for a run whose messages are not exactly its record
    /// subjects 1..N in stream order (absent, gaps, stray subjects, records
    /// rewritten out of order): the caller reads such a run on its own.
    /// The whole call fails when a group cannot be read.
    pub fn digests(&self, runs: &[String], records: u64) -> Vec<Result<Option<(u64, String)>>> {
        const GROUP: usize = 256;
        let st = self.clone();
        let runs_owned = runs.to_vec();
        let task = async move {
            // When these runs are most of the stream, one consumer over the
            // whole prefix costs the server least (no per-message filter
            // matching); otherwise one consumer per group of runs, filtered
            // to them, so other runs are not read.
            let mut stream = st.stream.clone();
            let total = stream
                .info()
                .await
                .map_err(|e| st.err(None, format!("cannot read the stream's info: {e}")))?
                .state
                .messages;
            let groups: Vec<Vec<String>> = if records.saturating_mul(2) >= total {
                vec![runs_owned]
            } else {
                runs_owned.chunks(GROUP).map(<[String]>::to_vec).collect()
            };
            let whole = groups.len() == 1 && records.saturating_mul(2) >= total;
            let done = futures_util::stream::iter(groups)
                .map(|g| {
                    let st = st.clone();
                    async move {
                        let n = g.len();
                        match st.digest_group(&g, whole).await {
                            Ok(v) => v.into_iter().map(Ok).collect::<Vec<_>>(),
                            Err(e) => (0..n).map(|_| Err(st.err(None, e.to_string()))).collect(),
                        }
                    }
                })
                .buffered(2)
                .collect::<Vec<_>>()
                .await;
            Ok(done.into_iter().flatten().collect::<Vec<_>>())
        };
        match self.run_task(task) {
            Ok(v) => v,
            Err(e) => runs
                .iter()
                .map(|_| Err(self.err(None, e.to_string())))
                .collect(),
        }
    }

    /// `whole`: read every message under the prefix (and keep only these
    /// runs'); else filter the consumer to these runs.
    async fn digest_group(
        &self,
        runs: &[String],
        whole: bool,
    ) -> Result<Vec<Option<(u64, String)>>> {
        struct Acc {
            next: u64,
            ok: bool,
            sha: crate::digest::Lines,
        }
        let mut acc: Vec<Acc> = runs
            .iter()
            .map(|_| Acc {
                next: 1,
                ok: true,
                sha: crate::digest::Lines::default(),
            })
            .collect();
        self.consume_group(runs, whole, "back", |i, s, _, m| {
            let Some(a) = acc.get_mut(i) else { return };
            if s == Some(a.next) {
                a.sha.push(&m.payload);
                a.next += 1;
            } else {
                a.ok = false;
            }
        })
        .await?;
        Ok(acc
            .into_iter()
            .map(|a| (a.ok && a.next > 1).then(|| (a.next - 1, a.sha.finish())))
            .collect())
    }

    /// Read these runs for copying, handing each to `deliver` (with its
    /// index in `runs`) as soon as all of it has been read, so that copies
    /// overlap the reading: each run's messages in seq order, or `None` for
    /// a run this read cannot vouch for (absent, gaps, stray subjects, or
    /// more interleaved with other runs than `budget` allows): the caller
    /// reads that one on its own. Every run is delivered exactly once.
    ///
    /// When these runs hold at least half the stream's messages, one
    /// consumer reads the whole prefix in a single pass (filtering costs
    /// the server more than reading the few other messages); otherwise one
    /// consumer per group of runs, filtered to them. Each run is complete
    /// at the stream sequence of its last message, looked up first.
    ///
    /// Memory: `held` counts the body bytes read and not yet released by
    /// the caller (who subtracts a delivered run's bytes when done with
    /// it). Reading pauses while the runs handed over and not yet released
    /// hold more than `budget.waiting`, and gives up the runs still open
    /// once their bytes exceed `budget.open`. So at most `open + waiting`
    /// is held, and one pull more may be in flight: at most 8 MiB, or one
    /// larger message.
    pub fn stream_runs(
        &self,
        runs: &[String],
        budget: ReadBudget,
        held: &std::sync::atomic::AtomicU64,
        mut deliver: impl FnMut(usize, Option<Vec<RunMessage>>),
    ) {
        let mut sent = vec![false; runs.len()];
        let mut give = |i: usize, m: Option<Vec<RunMessage>>| {
            if let Some(s) = sent.get_mut(i) {
                if !*s {
                    *s = true;
                    deliver(i, m);
                }
            }
        };
        // A failed pass is not reported here: the runs it did not deliver
        // are read run by run, which reports the store's failure per run.
        let _ = self.block_on(self.stream_pass(runs, budget, held, &mut give));
        for i in 0..runs.len() {
            give(i, None);
        }
    }

    /// The reading of [`stream_runs`](Self::stream_runs); runs it does not
    /// deliver are delivered `None` by the caller.
    async fn stream_pass(
        &self,
        runs: &[String],
        budget: ReadBudget,
        held: &std::sync::atomic::AtomicU64,
        give: &mut impl FnMut(usize, Option<Vec<RunMessage>>),
    ) -> Result<()> {
        use std::sync::atomic::Ordering;
        const GROUP: usize = 256;
        for r in runs {
            id::check(r)?;
        }
        // Each run's last message: its record count and the stream
        // sequence it ends at (only those are kept, not the message).
        let lasts = futures_util::stream::iter(runs.iter())
            .map(|r| async move {
                let last = self.last_of_run(r).await?;
                Ok::<_, Error>(last.and_then(|m| {
                    let n = self.parse_subject(&m.subject).and_then(|(_, s)| s)?;
                    Some((n, m.sequence))
                }))
            })
            .buffered(64)
            .collect::<Vec<_>>()
            .await;
        let mut ends: Vec<Option<(u64, u64)>> = Vec::with_capacity(runs.len());
        for (i, end) in lasts.into_iter().enumerate() {
            // A run whose lookup failed is read on its own (which reports
            // why), not the whole selection.
            let end = end.ok().flatten();
            if end.is_none() {
                give(i, None);
            }
            ends.push(end);
        }
        let expected: u64 = ends.iter().flatten().map(|(n, _)| n).sum();
        let total = self
            .stream
            .clone()
            .info()
            .await
            .map_err(|e| self.err(None, format!("cannot read the stream's info: {e}")))?
            .state
            .messages;
        let index: Vec<usize> = (0..runs.len())
            .filter(|i| ends.get(*i).is_some_and(Option::is_some))
            .collect();
        let whole = expected.saturating_mul(2) >= total;
        let groups: Vec<Vec<usize>> = if whole {
            vec![index]
        } else {
            index.chunks(GROUP).map(<[usize]>::to_vec).collect()
        };
        let release = |bytes: u64| release(held, bytes);
        for g in groups {
            let names: Vec<String> = g.iter().filter_map(|i| runs.get(*i).cloned()).collect();
            let mut at = std::collections::HashMap::with_capacity(g.len());
            for (k, i) in g.iter().enumerate() {
                if let Some(r) = runs.get(*i) {
                    at.insert(r.as_str(), k);
                }
            }
            // Per run of the group: messages so far (None once irregular)
            // and the bytes counted in `held` for it.
            let mut got: Vec<(Option<Vec<RunMessage>>, u64)> =
                g.iter().map(|_| (Some(Vec::new()), 0)).collect();
            let mut open = g.len();
            let mut incomplete = 0u64;
            let what = format!("{} runs ({}.<id>.>)", names.len(), self.prefix);
            let consumer = self.ephemeral_consumer(&names, whole, &what).await?;
            let name = consumer.cached_info().name.clone();
            let count = consumer.cached_info().num_pending;
            let read = async {
                let mut seen = 0u64;
                let mut pull = Pull::new(&consumer, FETCH_BATCH);
                while seen < count && open > 0 {
                    // Wait for the caller to release runs it was handed
                    // (what is held beyond the runs still open).
                    while held.load(Ordering::Relaxed).saturating_sub(incomplete) > budget.waiting {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                    let mut batch = pull
                        .next(count - seen)
                        .await
                        .map_err(|e| self.err(None, format!("cannot read {what}: {e}")))?;
                    let before = seen;
                    while let Some(m) = batch.next().await {
                        let m = match m {
                            Ok(m) => m,
                            Err(e) if pull.ended(&*e, seen - before) => break,
                            Err(e) => {
                                return Err(self.err(None, format!("reading {what} failed: {e}")))
                            }
                        };
                        seen += 1;
                        let Some((run, s)) = self.parse_subject(&m.message.subject) else {
                            continue;
                        };
                        let Some(k) = at.get(run).copied() else {
                            continue;
                        };
                        let (Some((slot, bytes)), Some(i)) = (got.get_mut(k), g.get(k).copied())
                        else {
                            continue;
                        };
                        let Some((n, end)) = ends.get(i).copied().flatten() else {
                            continue;
                        };
                        let stream_seq = m.info().map(|x| x.stream_sequence).unwrap_or(0);
                        if stream_seq > end {
                            continue; // stored after the lookup: not part of this copy
                        }
                        let next = slot.as_ref().map_or(0, |v| v.len() as u64 + 1);
                        match slot {
                            Some(v) if s == Some(next) => {
                                let len = m.message.payload.len() as u64;
                                held.fetch_add(len, Ordering::Relaxed);
                                incomplete += len;
                                *bytes += len;
                                v.push(RunMessage {
                                    subject: m.message.subject.to_string(),
                                    subject_seq: s,
                                    stream_seq,
                                    body: m.message.payload.to_vec(),
                                });
                            }
                            _ => *slot = None,
                        }
                        if stream_seq == end {
                            let done = slot.take().filter(|v| v.len() as u64 == n);
                            incomplete = incomplete.saturating_sub(*bytes);
                            if done.is_none() {
                                release(*bytes);
                            }
                            *bytes = 0;
                            open -= 1;
                            give(i, done);
                        }
                        if incomplete > budget.open {
                            // Too interleaved to finish within the budget:
                            // the rest is read run by run.
                            return Ok(());
                        }
                    }
                    if pull.stalled(seen - before) {
                        return Err(self.stalled(&what, seen, count));
                    }
                }
                Ok(())
            }
            .await;
            // Consumers count against the stream's limits: never leave one behind.
            let _ = self.stream.delete_consumer(&name).await;
            // What this pass did not finish is released (and read run by run).
            release(got.iter().map(|(_, b)| b).sum());
            read?;
        }
        Ok(())
    }

    /// A journal from messages read by [`stream_runs`](Self::stream_runs),
    /// decoded exactly as [`read`](Self::read) (or, `lenient`,
    /// [`read_prefix`](Self::read_prefix)) would.
    pub fn journal_from(
        &self,
        run: &str,
        messages: Vec<RunMessage>,
        lenient: bool,
    ) -> Result<(Journal, Option<String>)> {
        self.decode_run(run, messages, lenient)
    }

    /// Every message of these runs through one ephemeral consumer (over the
    /// whole prefix when `whole`), handing each to `visit` with the run's
    /// index, the subject's seq, and the stream sequence. The consumer is
    /// deleted afterwards whatever happens.
    async fn consume_group(
        &self,
        runs: &[String],
        whole: bool,
        purpose: &str,
        mut visit: impl FnMut(usize, Option<u64>, u64, &async_nats::Message),
    ) -> Result<()> {
        for r in runs {
            id::check(r)?;
        }
        let mut index = std::collections::HashMap::with_capacity(runs.len());
        for (i, r) in runs.iter().enumerate() {
            index.insert(r.as_str(), i);
        }
        let what = format!("{} runs ({}.<id>.>)", runs.len(), self.prefix);
        let verb = if purpose.is_empty() {
            "read".to_owned()
        } else {
            format!("read {purpose}")
        };
        let consumer = self.ephemeral_consumer(runs, whole, &what).await?;
        let name = consumer.cached_info().name.clone();
        let count = consumer.cached_info().num_pending;
        let read = async {
            let mut seen = 0u64;
            let mut pull = Pull::new(&consumer, 10_000);
            while seen < count {
                let mut batch = pull
                    .next(count - seen)
                    .await
                    .map_err(|e| self.err(None, format!("cannot {verb} {what}: {e}")))?;
                let before = seen;
                while let Some(m) = batch.next().await {
                    let m = match m {
                        Ok(m) => m,
                        Err(e) if pull.ended(&*e, seen - before) => break,
                        Err(e) => return Err(self.err(None, format!("reading {what} failed: {e}"))),
                    };
                    seen += 1;
                    let Some((run, s)) = self.parse_subject(&m.message.subject) else {
                        continue;
                    };
                    let Some(i) = index.get(run).copied() else {
                        continue;
                    };
                    let stream_seq = m.info().map(|i| i.stream_sequence).unwrap_or(0);
                    visit(i, s, stream_seq, &m.message);
                }
                if pull.stalled(seen - before) {
                    return Err(self.stalled(&what, seen, count));
                }
            }
            Ok(())
        }
        .await;
        // Consumers count against the stream's limits: never leave one behind.
        let _ = self.stream.delete_consumer(&name).await;
        read
    }

    /// An ephemeral pull consumer without acks over these runs (over the
    /// whole prefix when `whole`); its pending count at creation says where
    /// the read ends. The caller deletes it.
    async fn ephemeral_consumer(
        &self,
        runs: &[String],
        whole: bool,
        what: &str,
    ) -> Result<jetstream::consumer::PullConsumer> {
        let (filter, filters) = if whole {
            (format!("{}.>", self.prefix), Vec::new())
        } else {
            let f = runs.iter().map(|r| format!("{}.{r}.>", self.prefix));
            (String::new(), f.collect())
        };
        self.stream
            .create_consumer(read_consumer_config(filter, filters))
            .await
            .map_err(|e| self.err(None, format!("cannot read {what}: {e}")))
    }

    fn stalled(&self, what: &str, seen: u64, count: u64) -> Error {
        self.err(
            None,
            format!(
                "reading {what} stalled after {seen} of {count} messages (no message within {}s); is the server up? re-run to retry",
                nats::REQUEST_TIMEOUT.as_secs()
            ),
        )
    }

    /// A writer for an existing run, continuing after its last record.
    pub fn open(&self, run: &str) -> Result<JetStreamAppender> {
        let Some(last) = self.block_on(self.last_of_run(run))? else {
            return Err(self.not_found(run));
        };
        let n = self
            .parse_subject(&last.subject)
            .and_then(|(_, s)| s)
            .ok_or_else(|| {
                self.err(
                    Some(run),
                    format!(
                        "the last message is on {}, not a record subject; run `fisk-admin verify {run}`",
                        last.subject
                    ),
                )
            })?;
        if self.block_on(self.tail_behind(run, n))? {
            return Err(self.interrupted(run));
        }
        self.appender(run, n, last.sequence)
    }

    fn appender(
        &self,
        run: &str,
        last_seq: u64,
        last_stream_seq: u64,
    ) -> Result<JetStreamAppender> {
        Ok(JetStreamAppender {
            store: self.clone(),
            run: run.to_owned(),
            nonce: new_nonce()?,
            last_seq,
            last_stream_seq,
        })
    }

    /// Delete a copied run by purging `<prefix>.<id>.>` (no backup: its
    /// copy is verified), only when the run still ends at seq `last`;
    /// returns how many messages were removed. The purge is bounded by the stream sequence of that record,
    /// so a record appended meanwhile survives it.
    pub fn delete_copied(&self, run: &str, last: u64) -> Result<u64> {
        id::check(run)?;
        let filter = format!("{}.{run}.>", self.prefix);
        self.block_on(async {
            let Some(m) = self.last_of_run(run).await? else {
                return Err(self.not_found(run));
            };
            let have = self.parse_subject(&m.subject).and_then(|(_, s)| s);
            if have != Some(last) {
                return Err(super::file_write::grew(run, have.unwrap_or(0), last));
            }
            self.stream
                .purge()
                .filter(&filter)
                .sequence(m.sequence + 1)
                .await
                .map(|r| r.purged)
                .map_err(|e| self.err(Some(run), format!("cannot purge {filter}: {e}")))
        })
    }

    /// Delete a run (`rm`), keeping it: every message of the run is first
    /// written, in stream order and one line each (a file journal), to
    /// `<keep>/<run>.json`, fsynced; then exactly those messages are
    /// purged. A message stored meanwhile is not purged, and makes this an
    /// warning. Returns the messages purged, the file kept, and a warning
    /// when the run may not be gone entirely (once the purge is done, the
    /// backup is always reported).
    pub fn delete_keeping(
        &self,
        run: &str,
        keep: &std::path::Path,
    ) -> Result<(u64, PathBuf, Option<String>)> {
        id::check(run)?;
        let filter = format!("{}.{run}.>", self.prefix);
        self.block_on(async {
            let mut messages = self.read_run(run, true).await?;
            let upto = messages.iter().map(|m| m.stream_seq).max().unwrap_or(0);
            // The journal: the records in seq order, one line each. A
            // message on a subject that names no record (damage, a foreign
            // writer) goes beside it with its subject, so nothing is lost.
            messages.sort_by_key(|m| (m.subject_seq.unwrap_or(u64::MAX), m.stream_seq));
            let mut bytes = Vec::with_capacity(messages.iter().map(|m| m.body.len() + 1).sum());
            let mut others = Vec::new();
            for m in &messages {
                if m.subject_seq.is_some() {
                    bytes.extend_from_slice(&m.body);
                    bytes.push(b'\n');
                } else {
                    let line = serde_json::json!({
                        "subject": m.subject,
                        "stream_seq": m.stream_seq,
                        "body": String::from_utf8_lossy(&m.body),
                        "body_hex": crate::digest::hex(&m.body),
                    });
                    others.extend_from_slice(line.to_string().as_bytes());
                    others.push(b'\n');
                }
            }
            let kept = keep_new(keep, run, &bytes, &others)?;
            let purged = self
                .stream
                .purge()
                .filter(&filter)
                .sequence(upto + 1)
                .await
                .map(|r| r.purged)
                .map_err(|e| self.err(Some(run), format!("cannot purge {filter}: {e}")))?;
            let warning = match self.last_of_run(run).await {
                Ok(None) => None,
                Ok(Some(_)) => Some(format!(
                    "a writer stored more of run {run} while it was deleted: the messages saved were \
                     purged, the newer ones are still on the stream; run `fisk-admin rm {run}` again \
                     once the writer has stopped (its backup will hold them)"
                )),
                Err(e) => Some(format!(
                    "run {run} was purged, but whether anything was stored meanwhile could not be \
                     checked ({e}); run `fisk-admin ls` to see"
                )),
            };
            Ok((purged, kept, warning))
        })
    }
}

/// `bytes` as `<dir>/<run>.json` in a new directory `dir` = `<keep>-<N>`
/// (the first free N, none for the first), 0700, the file 0600, all
/// fsynced with every directory created on the way: a file store holding
/// the one run, which `migrate` copies back. `others` (messages on no
/// record subject, JSON lines), when any, go to `<dir>/<run>.other.jsonl`.
/// On failure nothing half-written is left behind.
fn keep_new(keep: &std::path::Path, run: &str, bytes: &[u8], others: &[u8]) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let sync = |d: &std::path::Path| {
        std::fs::File::open(d)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(d, e))
    };
    let parent = keep.parent().unwrap_or(std::path::Path::new("."));
    // Each missing ancestor, top down, fsynced into its own parent.
    let missing: Vec<&std::path::Path> = parent
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .collect();
    for d in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(d, e)),
        }
        if let Some(up) = d.parent() {
            sync(up)?;
        }
    }
    for n in 0..100 {
        let dir = match n {
            0 => keep.to_path_buf(),
            _ => PathBuf::from(format!("{}-{n}", keep.display())),
        };
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        }
        let file = dir.join(format!("{run}.json"));
        let other = dir.join(format!("{run}.other.jsonl"));
        let written = super::file_write::write_new(&file, bytes)
            .map_err(|e| Error::io(&file, e))
            .and_then(|()| match others.is_empty() {
                true => Ok(()),
                false => {
                    super::file_write::write_new(&other, others).map_err(|e| Error::io(&other, e))
                }
            })
            .and_then(|()| sync(&dir))
            .and_then(|()| sync(parent));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&file);
            let _ = std::fs::remove_file(&other);
            let _ = std::fs::remove_dir(&dir);
            return Err(e);
        }
        return Ok(file);
    }
    Err(Error::Store {
        context: keep.display().to_string(),
        message: "no free directory name for the backup; nothing was deleted".into(),
    })
}

/// `<prefix>.<id>._meta` for seq 1, `<prefix>.<id>.<N>` otherwise.
pub fn subject(prefix: &str, run: &str, seq: u64) -> String {
    if seq <= 1 {
        format!("{prefix}.{run}._meta")
    } else {
        format!("{prefix}.{run}.{seq}")
    }
}

/// `_meta` is seq 1; `N` (no sign, no leading zero, at least 2) is seq N.
fn seq_of_token(token: &str) -> Option<u64> {
    if token == "_meta" {
        return Some(1);
    }
    if token.starts_with('0') || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok().filter(|n| *n >= 2)
}

fn system_time(m: &StreamMessage) -> std::time::SystemTime {
    let nanos = m.time.unix_timestamp_nanos();
    let secs = nanos.div_euclid(1_000_000_000);
    let sub = nanos.rem_euclid(1_000_000_000) as u32;
    match u64::try_from(secs) {
        Ok(s) => std::time::UNIX_EPOCH + Duration::new(s, sub),
        Err(_) => std::time::UNIX_EPOCH,
    }
}

/// A fenced writer for one run (SPEC 8). The nonce is fresh for every open,
/// so a msg id never repeats across runs or opens.
#[derive(Clone)]
pub struct JetStreamAppender {
    store: JetStreamStore,
    run: String,
    nonce: String,
    last_seq: u64,
    /// Stream sequence of the record at `last_seq` (0 for a new run).
    last_stream_seq: u64,
}

impl JetStreamAppender {
    /// This open's nonce: record N is published with msg id `<nonce>-<N>`.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }
    pub fn msg_id(&self, seq: u64) -> String {
        format!("{}-{seq}", self.nonce)
    }
    /// Stream sequence of the last stored record.
    pub fn last_stream_seq(&self) -> u64 {
        self.last_stream_seq
    }

    /// Record `seq` as SPEC 8 publishes it: msg id `<nonce>-<seq>` and the
    /// fence, on the record before it (stored at stream sequence `prev`)
    /// or, for seq 1, on the whole run being empty.
    fn fenced(
        &self,
        seq: u64,
        prev: u64,
        body: bytes::Bytes,
    ) -> jetstream::message::PublishMessage {
        let st = &self.store;
        let msg = jetstream::message::PublishMessage::build()
            .payload(body)
            .message_id(self.msg_id(seq));
        if seq == 1 {
            // A new run: nothing may exist anywhere under the run's
            // subjects (the agent's wildcard fence, here on an empty run,
            // so constant cost). This is what makes a create safe without
            // looking first: a run that holds anything refuses it.
            msg.expected_last_subject_sequence(0).header(
                async_nats::HeaderName::from_static(EXPECTED_SUBJECT_HEADER),
                format!("{}.{}.>", st.prefix, self.run),
            )
        } else {
            msg.expected_last_subject_sequence(prev).header(
                async_nats::HeaderName::from_static(EXPECTED_SUBJECT_HEADER),
                st.subject(&self.run, seq - 1),
            )
        }
    }

    async fn publish(&self, seq: u64, raw: &[u8]) -> Result<u64> {
        self.publish_bytes(seq, bytes::Bytes::copy_from_slice(raw))
            .await
    }

    async fn publish_bytes(&self, seq: u64, raw: bytes::Bytes) -> Result<u64> {
        let st = &self.store;
        let raw_len = raw.len();
        let subject = st.subject(&self.run, seq);
        let msg = self.fenced(seq, self.last_stream_seq, raw);
        // Within the request timeout: a connection that is down stops
        // taking messages once its buffer is full.
        let sent = tokio::time::timeout(
            nats::REQUEST_TIMEOUT,
            st.conn.js.send_publish(subject.clone(), msg),
        )
        .await;
        let outcome = match sent {
            Ok(Ok(ack)) => ack.await,
            Ok(Err(e)) => Err(e),
            Err(_) => {
                return Err(st.err(
                    Some(&self.run),
                    format!(
                        "cannot publish seq {seq} to {}: the connection took no message for {}s; re-run to continue from the last stored record",
                        st.server(),
                        nats::REQUEST_TIMEOUT.as_secs()
                    ),
                ))
            }
        };
        match outcome {
            Ok(ack) if ack.stream == st.name => Ok(ack.sequence),
            Ok(ack) => Err(st.err(
                Some(&self.run),
                format!(
                    "seq {seq} was stored in stream {} instead of {}; the subjects overlap, check the stream configuration",
                    ack.stream, st.name
                ),
            )),
            Err(e) => {
                use async_nats::jetstream::context::PublishErrorKind as K;
                let code = std::error::Error::source(&e)
                    .and_then(|s| s.downcast_ref::<async_nats::jetstream::Error>())
                    .map(|j| j.error_code().0);
                let fenced = e.kind() == K::WrongLastSequence
                    || matches!(code, Some(WRONG_LAST_SEQUENCE | SUBJECT_FULL));
                // Whether refused or unanswered, the target subject says
                // what happened.
                let found = st.last_on(&subject, false).await;
                if let Ok(Some(m)) = &found {
                    let ours = m
                        .headers
                        .get(MSG_ID_HEADER)
                        .is_some_and(|v| v.as_str() == self.msg_id(seq));
                    if ours {
                        return Ok(m.sequence); // our write; only its ack was lost
                    }
                }
                // Too large for this stream or server: the record's
                // fault, not the store's (other runs go on).
                if e.kind() == K::MaxPayloadExceeded || code == Some(MESSAGE_TOO_LARGE) {
                    return Err(Error::Refused {
                        run: self.run.clone(),
                        message: format!(
                            "seq {seq} ({} bytes) is larger than stream {} on {} accepts ({e}); raise the stream's max message size (nats stream edit {} --max-msg-size) or the server's max_payload",
                            raw_len,
                            st.name,
                            st.server(),
                            st.name
                        ),
                    });
                }
                if fenced {
                    return Err(match found {
                        Ok(Some(_)) if seq == 1 => Error::Exists {
                            run: self.run.clone(),
                            location: st.describe(),
                        },
                        _ => Error::Live {
                            run: self.run.clone(),
                            holder: Some(format!(
                                "another writer appended to it in stream {} on {}: seq {seq} was refused by the fence",
                                st.name,
                                st.server()
                            )),
                        },
                    });
                }
                Err(st.err(
                    Some(&self.run),
                    format!(
                        "publishing seq {seq} on {subject} failed: {e}; nothing was adopted, re-run to continue from the last stored record"
                    ),
                ))
            }
        }
    }
}

impl super::Appender for JetStreamAppender {
    fn run(&self) -> &str {
        &self.run
    }

    fn last_seq(&self) -> u64 {
        self.last_seq
    }

    fn append_raw(&mut self, seq: u64, raw: &[u8]) -> Result<bool> {
        match check_append(self.last_seq, seq) {
            Append::Duplicate => return Ok(false),
            Append::Gap => {
                return Err(self.store.err(
                    Some(&self.run),
                    format!(
                        "seq {seq} does not follow the last stored seq {}: a gap",
                        self.last_seq
                    ),
                ))
            }
            Append::Next => {}
        }
        let stream_seq = self.store.block_on(self.publish(seq, raw))?;
        self.last_seq = seq;
        self.last_stream_seq = stream_seq;
        Ok(true)
    }

    fn append_batch(&mut self, records: Vec<(u64, Vec<u8>)>) -> (u64, Result<()>) {
        let mut me = self.clone();
        let task = async move {
            let records = records.into_iter().map(|(s, b)| (s, b.into())).collect();
            let (stored, result) = me.append_bytes(records).await;
            Ok((me, stored, result))
        };
        match self.store.run_task(task) {
            Ok((me, stored, result)) => {
                *self = me;
                (stored, result)
            }
            Err(e) => (0, Err(e)),
        }
    }
}

impl JetStreamAppender {
    /// [`Appender::append_batch`](super::Appender::append_batch), awaited
    /// on the caller's task: each record fenced on the one before it.
    async fn append_bytes(&mut self, records: Vec<(u64, bytes::Bytes)>) -> (u64, Result<()>) {
        let mut stored = 0;
        for (seq, raw) in records {
            match check_append(self.last_seq, seq) {
                Append::Duplicate => continue,
                Append::Gap => {
                    let e = self.store.err(
                        Some(&self.run),
                        format!(
                            "seq {seq} does not follow the last stored seq {}: a gap",
                            self.last_seq
                        ),
                    );
                    return (stored, Err(e));
                }
                Append::Next => {}
            }
            match self.publish_bytes(seq, raw).await {
                Ok(stream_seq) => {
                    self.last_seq = seq;
                    self.last_stream_seq = stream_seq;
                    stored += 1;
                }
                Err(e) => return (stored, Err(e)),
            }
        }
        (stored, Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_comes_from_the_one_wildcard_subject() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            prefix_of(&s(&["fisk.sessions.>"])).as_deref(),
            Some("fisk.sessions")
        );
        assert_eq!(prefix_of(&s(&["a.>"])).as_deref(), Some("a"));
        for bad in [&["a.>", "b.>"][..], &["a.*"], &[">"], &["a.*.>"], &[]] {
            assert_eq!(prefix_of(&s(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn subjects_map_to_seqs() {
        assert_eq!(subject("p", "r", 1), "p.r._meta");
        assert_eq!(subject("p", "r", 12), "p.r.12");
        assert_eq!(seq_of_token("_meta"), Some(1));
        assert_eq!(seq_of_token("12"), Some(12));
        for bad in ["1", "012", "x", "", "-2", "+2"] {
            assert_eq!(seq_of_token(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_spec_config_passes_its_own_check() {
        assert!(check_config(&spec_config("S", "fisk.s.>")).is_empty());
        let mut c = spec_config("S", "fisk.s.>");
        c.max_messages_per_subject = 0;
        c.discard = stream::DiscardPolicy::Old;
        c.discard_new_per_subject = false;
        c.max_age = Duration::from_secs(60);
        c.max_message_size = 100;
        let settings: Vec<_> = check_config(&c).iter().map(|p| p.setting).collect();
        assert_eq!(
            settings,
            [
                "max_msgs_per_subject",
                "discard",
                "discard_new_per_subject",
                "max_age",
                "max_msg_size"
            ]
        );
    }
}
