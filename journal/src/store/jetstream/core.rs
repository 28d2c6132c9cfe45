//! The async core: [`Core`], a stream bound on one connection, whose every
//! method that talks to the server is `async` (the rest are pure: places,
//! errors, subjects). It holds no runtime and no facade type, so nothing
//! reachable from here can block on the runtime; the blocking facade
//! (`blocking.rs`) wraps it. The other files of this module add the jobs
//! (`read`, `bulk`, `append`, `chain`, `delete`, `upgrade`) as `impl Core`
//! blocks.

use super::check_config;
use super::config::prefix_of;
use super::conn::Conn;
use crate::error::{Error, Remedy, Result, Where};
use crate::id;
use crate::nats::Settings;
use async_nats::jetstream::stream;
use futures_util::TryStreamExt;
use std::sync::atomic::AtomicBool;

/// A bound JetStream session stream.
pub(super) struct Core {
    pub(super) conn: Conn,
    pub(super) stream: stream::Stream,
    pub(super) name: String,
    pub(super) prefix: String,
    pub(super) direct: bool,
    pub(super) config: stream::Config,
    pub(super) settings: Settings,
    /// Whether the server answers a direct get of a wildcard subject (in
    /// the request's body) and batched direct gets (`list.rs`): true with
    /// direct gets until it says otherwise.
    pub(super) direct_wildcards: AtomicBool,
    pub(super) batched_gets: AtomicBool,
    /// Connections besides `conn` that reads spread their direct gets
    /// over ([`reader`](Self::reader)), opened on first use.
    pub(super) readers: tokio::sync::OnceCell<Vec<async_nats::Client>>,
    /// How many connections that is, `conn` included
    /// ([`readers`](super::readers), read once when the store is opened).
    pub(super) lanes: usize,
}

impl Core {
    /// Connect and bind to `name` without checking the configuration
    /// beyond its subject ([`check`](Self::check) does the rest).
    pub(super) async fn bind(settings: &Settings, name: &str) -> Result<Core> {
        let conn = Conn::open(settings).await?;
        let mut stream = conn.stream(name).await?;
        let config = conn.info(&mut stream, name).await?.config.clone();
        let prefix = prefix_of(&config.subjects).ok_or_else(|| Error::Config {
            at: conn.at(name),
            message: format!(
                "subjects is {:?}: a session stream binds exactly one subject of the form PREFIX.>; fix: nats stream edit {name} --subjects 'PREFIX.>'",
                config.subjects
            ),
        })?;
        Ok(Core {
            direct: config.allow_direct,
            direct_wildcards: AtomicBool::new(config.allow_direct),
            batched_gets: AtomicBool::new(config.allow_direct),
            readers: tokio::sync::OnceCell::new(),
            lanes: super::readers(),
            conn,
            stream,
            name: name.to_owned(),
            prefix,
            config,
            settings: settings.clone(),
        })
    }

    /// The connection for the direct gets of lane `lane`: the server
    /// answers direct gets inline, in each connection's read loop, so the
    /// requests of one connection are served one after another; lanes
    /// spread them over [`readers`](super::readers) connections (`conn`
    /// and ones opened for reading on first use; `conn` when one cannot
    /// be opened).
    pub(super) async fn reader(&self, lane: usize) -> async_nats::Client {
        let n = self.lanes;
        if n <= 1 || lane.is_multiple_of(n) {
            return self.conn.js.client();
        }
        let extra = self
            .readers
            .get_or_init(|| async {
                let mut v = Vec::new();
                for _ in 1..n {
                    if let Ok(c) = super::conn::connect(&self.settings).await {
                        v.push(c);
                    }
                }
                v
            })
            .await;
        extra
            .get(lane % n - 1)
            .cloned()
            .unwrap_or_else(|| self.conn.js.client())
    }

    /// Refuse a stream that breaks SPEC 8, naming each setting; but for
    /// a sealed one, which is the stream to read and move off (issue
    /// 24.9): it is bound, and every write refuses it ([`writable`](Self::writable)).
    pub(super) fn check(&self) -> Result<()> {
        let mut problems = check_config(&self.config);
        problems.retain(|p| p.setting != "sealed");
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::Config {
            at: self.place(),
            message: format!(
                "the stream breaks the session-store rules (SPEC 8): {}",
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        })
    }

    /// Refused when the stream takes no writes: it is sealed (no append,
    /// purge or delete). A failure of the store as a whole for writing,
    /// so `migrate` into it stops at the first run.
    pub(super) fn writable(&self) -> Result<()> {
        if !self.config.sealed {
            return self.fences();
        }
        Err(Error::Sealed { at: self.place() })
    }

    /// Refused when the server is older than 2.11: it ignores the
    /// `Nats-Expected-Last-Subject-Sequence-Subject` header that names the
    /// subject every fence (SPEC 8) is checked on, the agent's wildcard one
    /// and fisk-admin's literal one alike, and checks the expected
    /// sequence against the published message's own subject instead: a
    /// create's fence no longer sees the run's other subjects, and every
    /// append after seq 1 is refused. No write is safe there; reads are.
    /// A version the server does not state, or states in a form not
    /// understood, is not refused (the fences then speak for themselves).
    fn fences(&self) -> Result<()> {
        let version = self.conn.version();
        if !super::conn::ignores_fence_subject(&version) {
            return Ok(());
        }
        Err(Error::Unavailable {
            at: self.place(),
            message: format!(
                "nats-server {} is older than 2.11: it ignores the Nats-Expected-Last-Subject-Sequence-Subject header that fences every write to a run (SPEC 8), so nothing is written to it; its runs can still be read, and copied off with migrate --from jetstream:{}. Upgrade the server to 2.11 or later to write",
                version.escape_debug(),
                self.name
            ),
        })
    }

    /// For messages: "stream S on nats://..".
    pub(super) fn describe(&self) -> String {
        format!("stream {} on {}", self.name, self.conn.server)
    }

    pub(super) fn server(&self) -> &str {
        &self.conn.server
    }

    /// The server or the connection failed a request: no answer, a
    /// timeout, a transport error, an error the server gave for a request
    /// it could not serve. `Error::Unavailable`, about the stream (and a
    /// run's subjects, when the request was for one run): a store-wide
    /// failure ([`Error::is_store_failure`]), on which `migrate` stops
    /// starting runs, since every further one would fail the same way.
    ///
    /// The rule for every error this backend makes: `err` (and the other
    /// `Unavailable`s: the runtime, a thread, randomness, the connection,
    /// a full stream, a subject another stream takes ([`overlap`](Self::overlap)))
    /// only for what is the store's and not one run's. What
    /// a run's own subjects or messages show is that run's, with its typed
    /// variant, and the next run is tried: a seq that would leave a gap
    /// (`Error::Gap`), a body that does not parse or a record missing
    /// ([`corrupt`](Self::corrupt): `Error::Corrupt` at the subject), a
    /// fence another writer or a delete holds (`Error::Live`,
    /// `Error::Exists`, `Error::Refused`), a record too large
    /// (`Error::Refused`), a run changed while copied
    /// (`Error::SourceChanged`).
    pub(super) fn err(&self, run: Option<&str>, message: String) -> Error {
        Error::Unavailable {
            at: match run {
                Some(r) => self.at_run(r),
                None => self.place(),
            },
            message,
        }
    }

    /// A request over many runs failed with `e`: what each of them gets.
    /// A store failure is each run's as it is (its place and words);
    /// anything else (an invalid id among them) is no verdict on the
    /// others: `None`, and each run is read on its own, which says what is
    /// wrong with it.
    pub(super) fn for_each_run(&self, e: &Error) -> Option<Error> {
        if !e.is_store_failure() {
            return None;
        }
        Some(match e {
            Error::Unavailable { at, message } => Error::Unavailable {
                at: at.clone(),
                message: message.clone(),
            },
            Error::NoStream { stream, server } => Error::NoStream {
                stream: stream.clone(),
                server: server.clone(),
            },
            other => self.err(None, other.to_string()),
        })
    }

    /// A message published on `subject` was stored in another stream:
    /// that stream's subjects (or a mapping, an import) take this run's
    /// subject. The store's fault, not the run's: in a stream bound to one
    /// `PREFIX.>`, what takes one run's subject usually takes them all, and
    /// going on would publish every further run's first record into a
    /// stream that is not ours, where stopping costs only a re-run.
    pub(super) fn overlap(&self, subject: &str, message: String) -> Error {
        Error::Unavailable {
            at: self.at_subject(subject.to_owned(), 0),
            message,
        }
    }

    /// What run `run` holds on `subject` (record `position` of it, 0 where
    /// not known) breaks it: its own corruption.
    pub(super) fn corrupt(
        &self,
        run: &str,
        subject: String,
        position: usize,
        message: String,
    ) -> Error {
        Error::Corrupt {
            run: run.to_owned(),
            at: self.at_subject(subject, position),
            message,
        }
    }

    /// The stream as a place.
    pub(super) fn place(&self) -> Where {
        self.conn.at(&self.name)
    }

    /// A run's subjects (`<prefix>.<run>.>`) in this stream.
    pub(super) fn at_run(&self, run: &str) -> Where {
        self.at_subject(format!("{}.{run}.>", self.prefix), 0)
    }

    /// Where record `seq` of `run` is stored: its subject.
    pub(super) fn at_record(&self, run: &str, seq: u64, position: usize) -> Where {
        self.at_subject(self.subject(run, seq), position)
    }

    /// One subject of this stream, the `position`th record of its run.
    pub(super) fn at_subject(&self, subject: String, position: usize) -> Where {
        Where::Subject(Box::new(crate::error::Subject {
            stream: self.name.clone(),
            server: self.conn.server.clone(),
            subject,
            position,
        }))
    }

    /// Valid run ids with a meta record, sorted.
    pub(super) async fn runs(&self) -> Result<Vec<String>> {
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
        // Grown by doubling: the spare would be held through every pass
        // over the runs (a whole-store read of 300,000 runs).
        Ok(crate::held::fit(runs))
    }

    pub(super) fn interrupted(&self, run: &str) -> Error {
        Error::refused_until(
            run,
            format!(
                "its last message on stream {} is its meta record, but record 2 exists: an upgrade was interrupted",
                self.name
            ),
            Remedy::Upgrade,
        )
    }

    pub(super) fn not_found(&self, run: &str) -> Error {
        Error::NotFound {
            run: run.to_owned(),
            at: self.at_run(run),
        }
    }

    pub(super) fn exists_error(&self, run: &str) -> Error {
        Error::Exists {
            run: run.to_owned(),
            at: self.place(),
        }
    }
}
