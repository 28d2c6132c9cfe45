//! Writing a run whole on JetStream: `fork`, `recover --as`, `recover` in
//! place (and `backups restore`) make a run of many records at once, which
//! a stream cannot store in one step. Killed half way, such a write left a
//! shorter run that read as whole (`verify` called it clean, the agent
//! resumed it from the wrong point), or, in place, no run at all with its
//! only copy in a backup file (issue 36.1). So the run is *marked* until
//! it is whole (FORMAT.md, "Writing a run whole"):
//!
//! - the mark is one message on `<prefix>.<id>._writing.intent`, under
//!   the run's subjects: its body (`fisk-admin writing: ` and a JSON
//!   object, [`Mark`]) names the command that writes the run and finishes
//!   it when run again, how many records it writes and their SHA-256. It
//!   is not JSON, so the agent cannot load the run while it is there (its
//!   read of every message fails) and creates no run of that id (its seq
//!   1 fence sees a message under the run); fisk-admin's readers and
//!   writers refuse the run, naming the command, and `verify` names it
//!   (`write-interrupted`);
//! - a new run: the mark (fenced on the run holding nothing), the records
//!   1..N (seq 1 fenced on the mark being the run's last message), then
//!   the mark taken away;
//! - in place: the run is fenced as a delete fences it (a tombstone after
//!   its last record) and kept as a file (the blocking facade does that),
//!   then the mark, then the new records *staged* on
//!   `<prefix>.<id>._writing.<seq>`, then what the run held before the
//!   mark purged, then the new records on their own subjects, then the
//!   mark and the stage taken away (one purge). Until the stage is whole
//!   the old records are on the stream; once they are purged the stage
//!   holds the new run: killed anywhere, the stream holds the old run or
//!   the new one, or a marked run the same command finishes from what the
//!   stream holds.
//!
//! A re-run of the same command finds its mark and goes on from what is
//! stored: the records already on their subjects must be a prefix of what
//! it writes, byte for byte (a fork is; `recover --as` plans with the
//! mark's time, so its error results come out the same). A mark of another
//! command is refused, naming it.

use super::append::{fenced, refused_by_fence, stream_full, MSG_ID_HEADER};
use super::conn::new_nonce;
use super::core::Core;
use super::RunMessage;
use crate::error::{Error, Remedy, Result};
use crate::id;
use crate::store::Intent;
use std::sync::Arc;

/// The last token of a run's subjects that holds its mark and stage.
const WRITING: &str = "_writing";
/// How a mark's body starts: not JSON, so no reader takes it for a record.
pub(super) const MARK: &[u8] = b"fisk-admin writing: ";

/// What a mark says (its body, after `MARK`, as JSON).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mark {
    /// fisk-admin's arguments after the store's flags: the command that
    /// writes the run, and finishes it when run again.
    pub command: Vec<String>,
    /// How many records the run is written with.
    pub records: u64,
    /// SHA-256 over their bodies, each followed by `\n` (a clean
    /// journal's digest).
    pub sha256: String,
    /// The new records are staged on `<prefix>.<id>._writing.<seq>` (a
    /// run replaced in place).
    pub staged: bool,
    /// Where the run as it was is kept (in place).
    pub kept: Option<String>,
    /// Who wrote it: the worker name (host and process).
    pub by: String,
    /// When the write began (RFC 3339).
    pub at: String,
}

/// A run's mark as stored: a write of the whole run not yet finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// What the mark says.
    pub mark: Mark,
    /// Its stream sequence.
    pub stream_seq: u64,
}

impl Mark {
    fn new(intent: &Intent, records: u64, sha256: String, kept: Option<String>) -> Mark {
        Mark {
            command: intent.command.clone(),
            records,
            sha256,
            staged: kept.is_some(),
            kept,
            by: crate::id::worker_name(),
            at: intent.at.to_rfc3339(),
        }
    }

    fn body(&self) -> Vec<u8> {
        let mut body = MARK.to_vec();
        body.extend_from_slice(serde_json::to_string(self).unwrap_or_default().as_bytes());
        body
    }
}

impl Pending {
    /// The mark in `body`, stored at `stream_seq`; `None` when it is not
    /// one.
    pub fn parse(body: &[u8], stream_seq: u64) -> Option<Pending> {
        let json = body.strip_prefix(MARK)?;
        let mark = serde_json::from_slice(json).ok()?;
        Some(Pending { mark, stream_seq })
    }

    /// The command that finishes it, as words: `fisk-admin fork a ...`.
    pub fn command(&self) -> String {
        let mut words = vec!["fisk-admin".to_owned()];
        words.extend(
            self.mark
                .command
                .iter()
                .map(|w| crate::shell::word(std::ffi::OsStr::new(w))),
        );
        words.join(" ")
    }

    /// When the write began; `None` when the mark's time does not read.
    pub fn began(&self) -> Option<crate::time::Time> {
        crate::time::Time::parse(&self.mark.at).ok()
    }

    /// Whether this is the mark of `intent`'s command.
    pub fn is_of(&self, intent: &Intent) -> bool {
        self.mark.command == intent.command
    }

    /// What `verify` and a refusal say of run `run` marked so.
    pub fn describe(&self, run: &str) -> String {
        let what = match self.mark.staged {
            true => format!(
                "its records are being replaced ({} new ones, staged beside it first)",
                self.mark.records
            ),
            false => format!("it is being written whole ({} records)", self.mark.records),
        };
        format!(
            "run {run} is half written: {what} by `{}` ({}, {}), which was interrupted or is still at work; readers and writers refuse it, the agent cannot load it; the same command again finishes it",
            self.command(),
            self.mark.by,
            self.mark.at
        )
    }

    /// The refusal of any other command than the one that finishes it.
    pub fn refusal(&self, run: &str) -> Error {
        let remedy = match self.mark.staged {
            true => Remedy::Recover,
            false => Remedy::Again,
        };
        Error::refused_until(
            run,
            format!(
                "{}; or drop what was written with `fisk-admin rm {run}` (a backup is kept)",
                self.describe(run)
            ),
            remedy,
        )
    }
}

/// SHA-256 over the bodies, each followed by `\n`.
fn digest(records: &[(u64, bytes::Bytes)]) -> String {
    crate::digest::digest(records.iter().map(|(_, b)| b.as_ref()))
}

/// How a mark is taken away once the run is whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unmark {
    /// One purge of `<prefix>.<id>._writing.>` (the mark and any stage).
    Purge,
    /// The stream denies purges but not message deletes: the mark's
    /// message deleted (a new run has no stage).
    Delete,
}

/// What finishing a staged write found.
pub(super) enum Finish {
    /// The run is whole: these records.
    Done(Vec<(u64, bytes::Bytes)>),
    /// The stage was not whole, so the old run was never touched: the
    /// mark and stage were taken away, the run is as it was.
    Dropped,
}

impl Core {
    /// Record `seq`'s staging subject: `<prefix>.<id>._writing.<seq>`.
    pub(super) fn stage_subject(&self, run: &str, seq: u64) -> String {
        format!("{}.{run}.{WRITING}.{seq}", self.prefix)
    }

    /// The mark's subject: `<prefix>.<id>._writing.intent`.
    pub(super) fn mark_subject(&self, run: &str) -> String {
        format!("{}.{run}.{WRITING}.intent", self.prefix)
    }

    /// Whether `subject` is a mark's or a stage's (any run's).
    pub(super) fn is_writing(&self, subject: &str) -> bool {
        subject_token(&self.prefix, subject).is_some()
    }

    /// The stage seq `subject` names, when it is a staging subject.
    fn stage_seq(&self, subject: &str) -> Option<u64> {
        subject_token(&self.prefix, subject)?.parse().ok()
    }

    /// The run's mark, when a write of it is not finished.
    pub(super) async fn pending(&self, run: &str) -> Result<Option<Pending>> {
        id::check(run)?;
        let subject = self.mark_subject(run);
        let Some(m) = self.last_on(&subject, false).await? else {
            return Ok(None);
        };
        Pending::parse(&m.payload, m.sequence).map(Some).ok_or_else(|| {
            self.corrupt(
                run,
                subject,
                0,
                format!(
                    "the message on it is not a fisk-admin mark; nothing reads the run while it is there: delete the run (`fisk-admin rm {run}`, which keeps a backup)"
                ),
            )
        })
    }

    /// How the mark will be taken away on this stream; refused (before
    /// anything is written) when it could not be.
    pub(super) fn unmark_way(&self, run: &str) -> Result<Unmark> {
        // A sealed stream denies both, and takes no write at all: say so.
        self.writable()?;
        match (self.config.deny_purge, self.config.deny_delete) {
            (false, _) => Ok(Unmark::Purge),
            (true, false) => Ok(Unmark::Delete),
            (true, true) => Err(Error::refused(
                run,
                format!(
                    "stream {} denies both purges and message deletes (deny_purge, deny_delete; neither can be turned off), so the mark that keeps a half-written run from being taken for a whole one could not be taken away once it is whole; nothing was written. Write the run on a stream that allows either",
                    self.name
                ),
            )),
        }
    }

    /// Why `what` (deleting runs, replacing one in place) cannot be done
    /// on this stream: it denies purges. `None` when it allows them. Asked
    /// before any run is touched, dry runs included (issue 36.3: `rm` and
    /// `recover` used to fence the run and then fail to purge it).
    pub(super) fn purge_refusal(&self, what: &str) -> Option<String> {
        // A sealed stream denies purges too, and every write: the writers
        // say that instead (`Core::writable`).
        (self.config.deny_purge && !self.config.sealed).then(|| {
            format!(
                "stream {} denies purges (deny_purge, which cannot be turned off), which {what} needs; nothing was changed. Its runs can be read, and copied to a stream that allows purges (fisk-admin migrate --from jetstream:{} --to jetstream:OTHER --all)",
                self.name, self.name
            )
        })
    }

    /// [`purge_refusal`](Self::purge_refusal) as `run`'s refusal.
    pub(super) fn needs_purge(&self, run: &str, what: &str) -> Result<()> {
        match self.purge_refusal(what) {
            Some(why) => Err(Error::refused(run, why)),
            None => Ok(()),
        }
    }

    /// Publish `body` on `subject`, fenced on the run's last message (over
    /// `<prefix>.<id>.>`) being at stream sequence `expected` (0: the run
    /// holds nothing). A lost answer is read back: our msg id there is
    /// our message. Refused by the fence: `Error::Live` (something else
    /// was stored under the run).
    async fn publish_fenced(
        &self,
        run: &str,
        subject: String,
        body: Vec<u8>,
        expected: u64,
    ) -> Result<u64> {
        let msg_id = format!("{}-mark", new_nonce()?);
        let msg = fenced(
            body,
            msg_id.clone(),
            expected,
            format!("{}.{run}.>", self.prefix),
        );
        let (why, fenced) = match self.conn.publish(subject.clone(), msg).await {
            Some(Ok(ack)) if ack.stream == self.name => return Ok(ack.sequence),
            Some(Ok(ack)) => {
                return Err(self.overlap(
                    &subject,
                    format!(
                        "{subject} was stored in stream {} instead of {}; the subjects overlap, check the stream configuration",
                        ack.stream, self.name
                    ),
                ))
            }
            Some(Err(e)) if stream_full(&e) => {
                return Err(Error::Unavailable {
                    at: self.place(),
                    message: format!(
                        "the stream is full and refuses every write ({e}); nothing of run {run} was changed. Raise its limit (nats stream edit {} --max-bytes -1 --max-msgs -1) or make room",
                        self.name
                    ),
                })
            }
            Some(Err(e)) => (e.to_string(), refused_by_fence(&e)),
            None => ("no answer".to_owned(), false),
        };
        match self.last_on(&subject, false).await {
            Ok(Some(m))
                if m.headers
                    .get(MSG_ID_HEADER)
                    .is_some_and(|v| v.as_str() == msg_id) =>
            {
                Ok(m.sequence)
            }
            _ if fenced => Err(Error::Live {
                run: run.to_owned(),
                holder: Some(format!(
                    "something else was stored under it in stream {} on {} meanwhile; nothing more was written",
                    self.name,
                    self.server()
                )),
            }),
            _ => Err(self.err(
                Some(run),
                format!("cannot publish {subject} ({why}); the same command again goes on from what was stored"),
            )),
        }
    }

    /// Take the mark (and any stage) away: the run is whole.
    async fn unmark(&self, run: &str, way: Unmark, mark_seq: u64) -> Result<()> {
        let done = match way {
            Unmark::Purge => self
                .purge(&format!("{}.{run}.{WRITING}.>", self.prefix), None)
                .await
                .map(|_| ()),
            Unmark::Delete => self.delete_msg(mark_seq).await,
        };
        done.map_err(|e| {
            self.err(
                Some(run),
                format!(
                    "the run was written whole, but its mark ({}) could not be taken away ({e}); the same command again finishes it",
                    self.mark_subject(run)
                ),
            )
        })
    }

    /// Write the new run `run` of `records` (exactly seqs 1..N) marked
    /// until it is whole (see the module doc), or finish one `intent`'s
    /// command began. An existing run is refused (`Error::Exists`), and
    /// so is a mark of another command.
    pub(super) async fn create_marked(
        self: &Arc<Self>,
        run: &str,
        records: Vec<(u64, bytes::Bytes)>,
        intent: &Intent,
    ) -> Result<()> {
        id::check(run)?;
        let way = self.unmark_way(run)?;
        let sha256 = digest(&records);
        let (mark_seq, start, fence) = match self.pending(run).await? {
            Some(p) => {
                if p.mark.staged || !p.is_of(intent) {
                    return Err(p.refusal(run));
                }
                if p.mark.sha256 != sha256 || p.mark.records != records.len() as u64 {
                    return Err(differs(run, &p));
                }
                let (k, fence) = self.written_after(run, &p, &records).await?;
                (p.stream_seq, k, fence)
            }
            None => {
                if self.last_of_run(run).await?.is_some() {
                    return Err(self.exists_error(run));
                }
                let mark = Mark::new(intent, records.len() as u64, sha256, None);
                let subject = self.mark_subject(run);
                let seq = match self.publish_fenced(run, subject, mark.body(), 0).await {
                    Ok(seq) => seq,
                    // Something was stored under the run first.
                    Err(Error::Live { .. }) => {
                        return Err(match self.pending(run).await {
                            Ok(Some(p)) => p.refusal(run),
                            _ => self.exists_error(run),
                        })
                    }
                    Err(e) => return Err(e),
                };
                (seq, 0, seq)
            }
        };
        let mut w = self.writer(run, start, fence)?;
        let rest: Vec<_> = records.into_iter().filter(|(s, _)| *s > start).collect();
        let (_, done) = w.append_bytes(rest).await;
        done?;
        self.unmark(run, way, mark_seq).await
    }

    /// The records of `run` stored on their own subjects after its mark
    /// `p`: how many (a prefix of `records`, byte for byte, else refused)
    /// and the stream sequence the next one is fenced on (the last of
    /// them, or with none the run's last message).
    async fn written_after(
        &self,
        run: &str,
        p: &Pending,
        records: &[(u64, bytes::Bytes)],
    ) -> Result<(u64, u64)> {
        let messages = self.read_run(run, true).await?;
        let last = messages.iter().map(|m| m.stream_seq).max().unwrap_or(0);
        let mut stored: Vec<&RunMessage> = messages
            .iter()
            .filter(|m| m.subject_seq.is_some())
            .collect();
        stored.sort_by_key(|m| m.subject_seq);
        let mut after = p.stream_seq;
        for (i, m) in stored.iter().enumerate() {
            let want = records.get(i);
            let ok = m.subject_seq == Some(i as u64 + 1)
                && m.stream_seq > after
                && want.is_some_and(|(s, b)| Some(*s) == m.subject_seq && b.as_ref() == m.body);
            if !ok {
                return Err(differs(run, p));
            }
            after = m.stream_seq;
        }
        let fence = match stored.last() {
            Some(m) => m.stream_seq,
            None => last,
        };
        Ok((stored.len() as u64, fence))
    }

    /// Replace the run `run`, fenced at stream sequence `after` (its delete
    /// fence, or its last message) and kept at `kept`, by `records` (seqs
    /// 1..N): the mark, the stage, the old run purged, the new records,
    /// the mark and stage taken away (see the module doc).
    pub(super) async fn replace_staged(
        self: &Arc<Self>,
        run: &str,
        records: Vec<(u64, bytes::Bytes)>,
        intent: &Intent,
        kept: String,
        after: u64,
    ) -> Result<()> {
        let mark = Mark::new(intent, records.len() as u64, digest(&records), Some(kept));
        let subject = self.mark_subject(run);
        let mark_seq = self
            .publish_fenced(run, subject, mark.body(), after)
            .await?;
        let mut stage = self.writer(run, 0, mark_seq)?;
        stage.staged = true;
        let (_, done) = stage.append_bytes(records.clone()).await;
        done?;
        self.finish_from(run, mark_seq, records).await
    }

    /// Finish the staged write `p` of `run` began: from its stage when
    /// the stage is whole; when it is not, the old run was never touched,
    /// and the mark and stage are taken away ([`Finish::Dropped`]).
    pub(super) async fn finish_staged(self: &Arc<Self>, run: &str, p: &Pending) -> Result<Finish> {
        let messages = self.read_run(run, true).await?;
        let mut stage: Vec<(u64, bytes::Bytes)> = messages
            .iter()
            .filter_map(|m| {
                let seq = self.stage_seq(&m.subject)?;
                Some((seq, bytes::Bytes::copy_from_slice(&m.body)))
            })
            .filter(|(s, _)| *s >= 1)
            .collect();
        stage.sort_by_key(|(s, _)| *s);
        let whole = stage.len() as u64 == p.mark.records
            && stage.iter().zip(1u64..).all(|((s, _), want)| *s == want)
            && digest(&stage) == p.mark.sha256;
        if whole {
            self.finish_from(run, p.stream_seq, stage.clone()).await?;
            return Ok(Finish::Done(stage));
        }
        let old = messages
            .iter()
            .any(|m| m.stream_seq < p.stream_seq && m.subject_seq.is_some());
        if !old {
            return Err(self.corrupt(
                run,
                self.mark_subject(run),
                0,
                format!(
                    "its staged records are not whole ({} of {}) and its old records are gone: this is not what an interrupted recover leaves; the run as it was is kept at {}",
                    stage.len(),
                    p.mark.records,
                    p.mark.kept.as_deref().unwrap_or("(not said)")
                ),
            ));
        }
        self.unmark(run, Unmark::Purge, p.stream_seq).await?;
        Ok(Finish::Dropped)
    }

    /// The second half of a staged write, whose stage (`records`) is
    /// whole behind the mark at `mark_seq`: purge what the run held before
    /// the mark, write the new records after those a finisher before
    /// stored, take the mark and stage away.
    async fn finish_from(
        self: &Arc<Self>,
        run: &str,
        mark_seq: u64,
        records: Vec<(u64, bytes::Bytes)>,
    ) -> Result<()> {
        let filter = format!("{}.{run}.>", self.prefix);
        self.purge(&filter, Some(mark_seq)).await.map_err(|e| {
            self.err(
                Some(run),
                format!(
                    "cannot purge the run's old records ({e}); the new ones are staged on the stream: the same command again finishes it"
                ),
            )
        })?;
        let p = Pending {
            mark: Mark {
                command: Vec::new(),
                records: records.len() as u64,
                sha256: String::new(),
                staged: true,
                kept: None,
                by: String::new(),
                at: String::new(),
            },
            stream_seq: mark_seq,
        };
        let (start, fence) = self.written_after(run, &p, &records).await?;
        let mut w = self.writer(run, start, fence)?;
        let rest: Vec<_> = records.into_iter().filter(|(s, _)| *s > start).collect();
        let (_, done) = w.append_bytes(rest).await;
        done?;
        self.unmark(run, Unmark::Purge, mark_seq).await
    }
}

/// The token after `<prefix>.<id>._writing.` in `subject`, when it has one.
fn subject_token<'a>(prefix: &str, subject: &'a str) -> Option<&'a str> {
    let rest = subject.strip_prefix(prefix)?.strip_prefix('.')?;
    let (_, token) = rest.split_once('.')?;
    token.strip_prefix(WRITING)?.strip_prefix('.')
}

/// A re-run whose records are not what its mark's run stored.
fn differs(run: &str, p: &Pending) -> Error {
    Error::refused_until(
        run,
        format!(
            "run {run} holds a half-written copy from an earlier `{}` ({}, {}) whose records differ from what this one writes (its source changed since); drop it with `fisk-admin rm {run}` (a backup is kept), then run this again",
            p.command(),
            p.mark.by,
            p.mark.at
        ),
        Remedy::Remove,
    )
}
