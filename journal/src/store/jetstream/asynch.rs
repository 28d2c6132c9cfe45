//! The async store: [`AsyncJetStreamStore`] and [`AsyncJetStreamAppender`],
//! the public, async face of the core (`core.rs`'s `Core`, `append.rs`'s
//! `Writer`), as mini-redis publishes its `Client` beside the
//! `BlockingClient`. It exists for a host that already runs tokio (a web
//! front end, a bot): the blocking [`JetStreamStore`](super::JetStreamStore)
//! blocks on a runtime of its own in every method, which tokio refuses
//! inside another runtime.
//!
//! Which to use: inside async code, this one; it owns no runtime and every
//! method that talks to the server is an `async fn` run on the caller's
//! runtime (multi-thread or current-thread: the core never blocks on one).
//! Everywhere else (the `fisk-admin` binary, scripts, tests), the blocking
//! store, or [`Store`](crate::store::Store) over either backend. Both bind
//! the same way and read, summarise and append through the same core
//! calls, and decode with the same functions, so a run reads the same
//! through either. The connection belongs to the runtime it was made in:
//! connect inside the runtime that will use the store.
//!
//! Only the calls a front end needs are here (bind, list, read, summarise,
//! the hold, and a fenced appender); the store-wide jobs (`migrate`, `rm`,
//! `upgrade`, `verify`) stay on the blocking store.

use super::append::Writer;
use super::core::Core;
use super::RunMessage;
use crate::error::{Result, Where};
use crate::nats::Settings;
use crate::record::{Generation, Payload, Record};
use crate::store::appender::{already_stored, encoded, next_record};
use crate::store::{Journal, Summary};
use std::sync::Arc;
use std::time::Duration;

/// A bound JetStream session store, async: cheap to clone (the clones share
/// one connection), `Send` and `Sync`.
///
/// ```no_run
/// # async fn show() -> journal::Result<()> {
/// use journal::store::jetstream::AsyncJetStreamStore;
/// let settings = journal::nats::Settings {
///     servers: vec!["nats://127.0.0.1:4222".into()],
///     ..Default::default()
/// };
/// let store = AsyncJetStreamStore::connect(&settings, "SESSIONS").await?;
/// let runs = store.runs().await?;
/// for s in store.summaries(&runs).await {
///     if s.waits_on_person() {
///         println!("{} waits on a person", s.run_id);
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AsyncJetStreamStore {
    pub(super) core: Arc<Core>,
    /// SPEC 8's hold: a run not at rest whose last record is younger than
    /// this is live (zero: no hold).
    hold: Duration,
    /// Who writes through this store, for the audit log (issue 38).
    actor: Option<Arc<crate::audit::Actor>>,
}

impl AsyncJetStreamStore {
    /// Connect and bind to stream `name`, refusing a stream that breaks
    /// SPEC 8 (as [`JetStreamStore::connect`](super::JetStreamStore::connect)
    /// does), with SPEC 8's default hold.
    pub async fn connect(settings: &Settings, name: &str) -> Result<AsyncJetStreamStore> {
        let s = AsyncJetStreamStore::connect_unchecked(settings, name).await?;
        s.core.check()?;
        Ok(s)
    }

    /// Bind without checking the configuration beyond its subject.
    pub async fn connect_unchecked(settings: &Settings, name: &str) -> Result<AsyncJetStreamStore> {
        let core = Core::bind(settings, name).await?;
        Ok(AsyncJetStreamStore {
            core: Arc::new(core),
            hold: super::DEFAULT_HOLD,
            actor: None,
        })
    }

    /// This store, every write of the operations by hand through it
    /// ([`crate::ops::asynch`]) logged in the stream's audit log as
    /// `actor`'s (with the NATS user its connection authenticates as), as
    /// [`Store::with_actor`](crate::store::Store::with_actor) does.
    pub fn with_actor(mut self, mut actor: crate::audit::Actor) -> AsyncJetStreamStore {
        actor.nats_user = crate::nats::user_of(&self.core.settings);
        self.actor = Some(Arc::new(actor));
        self
    }

    /// Who writes through this store, when it logs its writes.
    pub fn actor(&self) -> Option<&crate::audit::Actor> {
        self.actor.as_deref()
    }

    /// The audit log's messages, in the log's order.
    pub async fn audit_read(&self) -> Result<Vec<super::LogMessage>> {
        self.core.audit_read().await
    }

    /// Make the write `plan` states by `change`, logged when this store
    /// logs its writes: the async shape of `Store::audited` (the intent,
    /// the change, the outcome).
    pub(crate) async fn audited<T>(
        &self,
        plan: &crate::store::Plan,
        change: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        use crate::store::custody::{closed, intent_of, outcome_of};
        let Some(actor) = self.actor.clone() else {
            return change.await;
        };
        let (intent, base) = intent_of(&actor, plan, self.place())?;
        self.core.writable()?;
        let mut make = |n: u64, prev: Option<String>| {
            crate::audit::Entry {
                n,
                prev,
                time: crate::time::Time::now(),
                ..intent.clone()
            }
            .encode()
        };
        self.core.audit_append(&mut make).await?;
        let changed = change.await;
        let outcome = outcome_of(base, plan, changed.as_ref().err());
        let mut make = |n: u64, prev: Option<String>| {
            crate::audit::Entry {
                n,
                prev,
                time: crate::time::Time::now(),
                ..outcome.clone()
            }
            .encode()
        };
        let logged = self.core.audit_append(&mut make).await;
        closed(plan, changed, logged, self.place())
    }

    /// This store with another hold (zero turns it off).
    pub fn with_hold(mut self, hold: Duration) -> AsyncJetStreamStore {
        self.hold = hold;
        self
    }

    /// The hold this store applies (SPEC 8).
    pub fn hold(&self) -> Duration {
        self.hold
    }

    /// The stream's name.
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// The subject prefix the stream binds (`<prefix>.>`).
    pub fn prefix(&self) -> &str {
        &self.core.prefix
    }

    /// The servers connected to, as given.
    pub fn server(&self) -> &str {
        self.core.server()
    }

    /// For messages: "stream S on nats://..".
    pub fn describe(&self) -> String {
        self.core.describe()
    }

    /// The stream as a place.
    pub fn place(&self) -> Where {
        self.core.place()
    }

    /// Valid run ids with a meta record, sorted.
    pub async fn runs(&self) -> Result<Vec<String>> {
        self.core.runs().await
    }

    /// Whether anything is stored under the run's subjects.
    pub async fn exists(&self, run: &str) -> Result<bool> {
        self.core.exists(run).await
    }

    /// Every message of the run in stream order, exactly as stored.
    pub async fn read_messages(&self, run: &str) -> Result<Vec<RunMessage>> {
        self.core.read_run(run, false).await
    }

    /// Read a run with the reader's rule, as
    /// [`JetStreamStore::read`](super::JetStreamStore::read) does.
    pub async fn read(&self, run: &str) -> Result<Journal> {
        let messages = self.read_messages(run).await?;
        self.core.decode_run(run, messages, false).map(|(j, _)| j)
    }

    /// Like [`read`](Self::read), but stop at the first message that
    /// breaks the run instead of failing: the readable prefix and why it
    /// stopped.
    pub async fn read_prefix(&self, run: &str) -> Result<(Journal, Option<String>)> {
        let messages = self.read_messages(run).await?;
        self.core.decode_run(run, messages, true)
    }

    /// Summarise a run (its `ls` row, SPEC 9) from its meta record and tail.
    pub async fn summary(&self, run: &str) -> Summary {
        self.core.summary(run, self.hold).await
    }

    /// Summaries of `runs`, concurrently (bounded), in the order given.
    pub async fn summaries(&self, runs: &[String]) -> Vec<Summary> {
        self.core.summaries(runs, self.hold).await
    }

    /// Refused (`Error::Held`) while the run is within the hold: for every
    /// write or delete (SPEC 8).
    pub async fn check_held(&self, run: &str) -> Result<()> {
        self.core.check_held(run, self.hold).await
    }

    /// A writer for a new run: its first append is seq 1 and fails when
    /// the run already exists.
    pub async fn create(&self, run: &str) -> Result<AsyncJetStreamAppender> {
        self.core.writable()?;
        let w = self.core.create(run).await?;
        Ok(AsyncJetStreamAppender { w })
    }

    /// A writer for an existing run, continuing after its last record.
    /// It does not check the hold: call [`check_held`](Self::check_held)
    /// first, as a command that writes must.
    ///
    /// The writer keeps SPEC 2 and 8 (seqs in order, one writer, the
    /// fence), not SPEC 6's rules of what a person may append (an answer
    /// only to an open deferral, an approval only to a call that waits on
    /// one), nor the audit log: a front end that answers, approves or ends
    /// a run goes through [`crate::ops::asynch`], which checks and logs.
    pub async fn open(&self, run: &str) -> Result<AsyncJetStreamAppender> {
        self.core.writable()?;
        let w = self.core.open(run).await?;
        Ok(AsyncJetStreamAppender { w })
    }
}

/// A fenced writer for one run (SPEC 8), async: publishes exactly as
/// [`JetStreamAppender`](super::JetStreamAppender) does (the same writer
/// underneath), so a second writer is refused alike. The nonce is fresh
/// for every open.
#[derive(Clone)]
pub struct AsyncJetStreamAppender {
    w: Writer,
}

impl AsyncJetStreamAppender {
    /// The run written.
    pub fn run(&self) -> &str {
        &self.w.run
    }

    /// The seq of the last durably stored record (0 for a new run).
    pub fn last_seq(&self) -> u64 {
        self.w.last_seq
    }

    /// Stream sequence of the last stored record.
    pub fn last_stream_seq(&self) -> u64 {
        self.w.last_stream_seq
    }

    /// This open's nonce: record N is published with msg id `<nonce>-<N>`.
    pub fn nonce(&self) -> &str {
        self.w.nonce()
    }

    /// Append bytes exactly as given (a copied record; no newline).
    /// `Ok(false)` for a seq at or below [`last_seq`](Self::last_seq) (a
    /// duplicate, skipped); a gap is an error.
    pub async fn append_raw(&mut self, seq: u64, raw: &[u8]) -> Result<bool> {
        self.w.append_raw(seq, raw).await
    }

    /// Append the record's canonical bytes, as
    /// [`Appender::append`](crate::store::Appender::append).
    pub async fn append(&mut self, record: &Record) -> Result<bool> {
        let raw = encoded(self.run(), record)?;
        self.append_raw(record.seq, &raw).await
    }

    /// Append a new record as the next seq of a journal of `generation`,
    /// as [`Appender::append_next`](crate::store::Appender::append_next):
    /// numbered and stamped alike, and refused when it would be skipped.
    pub async fn append_next(
        &mut self,
        payload: Payload,
        generation: Generation,
    ) -> Result<Record> {
        let record = next_record(self.run(), self.last_seq(), payload, generation)?;
        if self.append(&record).await? {
            Ok(record)
        } else {
            Err(already_stored(self.run(), record.seq))
        }
    }

    /// Whether this writer still holds the run, asked before an effect
    /// that cannot be taken back: `Error::Live` when another writer has
    /// stored a record since this one's last.
    pub async fn check_held(&self) -> Result<()> {
        self.w.check_held().await
    }
}
