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
//!
//! The module is split by job: `config` (the stream policy, pure),
//! `conn` (the runtime and the connection), `subject` (the subject
//! layout), `read` (single runs and summaries), `pull` (the one
//! pull-consumer drain), `bulk` (migrate's many-run reads), `append` (the
//! fenced writer), `chain` (the pipelined create), `delete` (`rm` and
//! migrate's delete) and `upgrade`.

use crate::error::{Error, Remedy, Result, Where};
use crate::id;
use crate::nats::Settings;
use async_nats::jetstream::stream;
use futures_util::TryStreamExt;

mod append;
mod bulk;
mod chain;
mod config;
mod conn;
mod delete;
mod pull;
mod read;
mod subject;
mod upgrade;
mod verify;

pub use append::{JetStreamAppender, EXPECTED_SUBJECT_HEADER};
pub use bulk::{release, ReadBudget};
pub use chain::{new_runs, NewRun, NewRunReceiver, NewRunSender};
pub use config::{
    check_config, config_notes, create_stream, inspect, prefix_of, spec_config, ConfigProblem,
    StreamReport,
};
pub use subject::{as_lines, sort_by_seq, subject, RunMessage};
pub use verify::{stream_config_findings, verify_jetstream_run};

use conn::Conn;

/// How many runs are read or summarised at once.
pub const CONCURRENCY: usize = 32;

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

impl JetStreamStore {
    /// Connect and bind to `name`, refusing a stream that breaks SPEC 8.
    pub fn connect(settings: &Settings, name: &str) -> Result<JetStreamStore> {
        let s = JetStreamStore::connect_unchecked(settings, name)?;
        let problems = check_config(&s.config);
        if !problems.is_empty() {
            return Err(Error::Config {
                at: s.conn.at(name),
                message: format!(
                    "the stream breaks the session-store rules (SPEC 8): {}",
                    problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            });
        }
        Ok(s)
    }

    /// Bind without checking the configuration beyond its subject (verify
    /// reports the problems as findings instead).
    pub fn connect_unchecked(settings: &Settings, name: &str) -> Result<JetStreamStore> {
        let conn = Conn::open(settings)?;
        let (stream, config) = conn.rt.block_on(async {
            let mut s = conn.stream(name).await?;
            let config = conn.info(&mut s, name).await?.config.clone();
            Ok::<_, Error>((s, config))
        })?;
        let prefix = prefix_of(&config.subjects).ok_or_else(|| Error::Config {
            at: conn.at(name),
            message: format!(
                "subjects is {:?}: a session stream binds exactly one subject of the form PREFIX.>; fix: nats stream edit {name} --subjects 'PREFIX.>'",
                config.subjects
            ),
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

    /// The server failed a request: about the stream (and a run's
    /// subjects, when it was about one run).
    fn err(&self, run: Option<&str>, message: String) -> Error {
        Error::Unavailable {
            at: match run {
                Some(r) => self.at_run(r),
                None => self.conn.at(&self.name),
            },
            message,
        }
    }

    /// The stream as a place.
    pub fn place(&self) -> Where {
        self.conn.at(&self.name)
    }

    /// A run's subjects (`<prefix>.<run>.>`) in this stream.
    fn at_run(&self, run: &str) -> Where {
        self.at_subject(format!("{}.{run}.>", self.prefix), 0)
    }

    /// Where record `seq` of `run` is stored: its subject.
    pub fn at_record(&self, run: &str, seq: u64, position: usize) -> Where {
        self.at_subject(self.subject(run, seq), position)
    }

    /// One subject of this stream, the `position`th record of its run.
    fn at_subject(&self, subject: String, position: usize) -> Where {
        Where::Subject(Box::new(crate::error::Subject {
            stream: self.name.clone(),
            server: self.conn.server.clone(),
            subject,
            position,
        }))
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

    fn interrupted(&self, run: &str) -> Error {
        Error::refused_until(
            run,
            format!(
                "its last message on stream {} is its meta record, but record 2 exists: an upgrade was interrupted",
                self.name
            ),
            Remedy::Upgrade,
        )
    }

    fn not_found(&self, run: &str) -> Error {
        Error::NotFound {
            run: run.to_owned(),
            at: self.at_run(run),
        }
    }
}
