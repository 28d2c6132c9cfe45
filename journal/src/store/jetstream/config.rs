//! The stream policy (SPEC 8): what a session stream's configuration must
//! be, the problems and notes `stream check` and `verify` report, and the
//! configuration `stream create` makes. Pure apart from [`inspect`] and
//! [`create_stream`], which look at (or create) a stream without binding
//! to it: each is blocking facade over one async function (its own runtime
//! blocks on it). An existing stream is never changed.

use super::conn::{Conn, Rt};
use crate::error::{Error, Result};
use crate::nats::Settings;
use async_nats::jetstream::stream;
use std::time::Duration;

/// One way a stream's configuration breaks SPEC 8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The setting, as the stream's JSON configuration names it.
    pub setting: &'static str,
    /// The value the stream has.
    pub found: String,
    /// The value SPEC 8 requires.
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
            "recreate the stream with retention limits".to_string(),
        );
    }
    if c.sealed {
        add(
            "sealed",
            "true".into(),
            "false: a sealed stream takes no appends",
            "a sealed stream cannot be unsealed: read it and copy its runs to another stream or a directory, then use another stream".into(),
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
    if c.no_ack {
        add(
            "no_ack",
            "true".into(),
            "false: without acks no writer learns that its record was stored, and a migrate into the stream never completes",
            format!("nats stream edit {name} --ack"),
        );
    }
    out
}

/// Settings that break no rule but that cost sessions or appends: a
/// stream the servers keep in memory, a byte or message limit that
/// refuses every append once reached, rollups left allowed (after an
/// upgrade) so that a record subject is no longer write-once. `stream
/// check` says them as warnings (`--strict`: exit 1).
pub fn config_warnings(c: &stream::Config) -> Vec<String> {
    let mut out = Vec::new();
    if c.storage == stream::StorageType::Memory {
        out.push("storage is memory: every session is lost when the servers restart".into());
    }
    if c.max_bytes > 0 {
        out.push(format!(
            "max_bytes is {}: once the stream is that full, every append is refused (discard new)",
            c.max_bytes
        ));
    }
    if c.max_messages > 0 {
        out.push(format!(
            "max_msgs is {}: once the stream holds that many records, every append is refused (discard new)",
            c.max_messages
        ));
    }
    if c.allow_rollup {
        out.push(
            "allow_rollup is true: a record can be replaced in place, so records are not write-once (upgrade needs rollups; forbid them again once it is done)"
                .to_owned(),
        );
    }
    out
}

/// Settings that do not break SPEC 8 but that the operator should know
/// (those that cost sessions or appends are [`config_warnings`]).
pub fn config_notes(c: &stream::Config) -> Vec<String> {
    let mut out = Vec::new();
    if !c.allow_direct {
        out.push(format!(
            "allow_direct is false: reads go to the stream leader (slower); nats stream edit {} --allow-direct",
            c.name
        ));
    }
    if c.deny_purge {
        let whole = match c.deny_delete {
            false => "fork, recover into a new run and backups restore still work (the mark a run carries until it is whole is deleted as one message)",
            true => "and with deny_delete as well, fork, recover into a new run and backups restore are refused too (the mark a run carries until it is whole could not be taken away)",
        };
        out.push(format!(
            "deny_purge is true (it cannot be turned off): rm cannot delete a run, recover cannot rewrite one in place and migrate cannot delete a source it copied (each is refused before it touches a run); {whole}; runs can still be copied off with migrate"
        ));
    }
    if c.duplicate_window.is_zero() {
        out.push(
            "duplicate_window is 0: a publish retried after a lost ack is not de-duplicated".into(),
        );
    }
    out
}

/// Where a stream's replicas are, from the server's stream info.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// The cluster the stream lives in; `None` on a server not in one.
    pub cluster: Option<String>,
    /// The server that leads the stream, where known.
    pub leader: Option<String>,
    /// The other replicas and whether each is current.
    pub peers: Vec<(String, bool)>,
    /// Placement tags the stream asks for.
    pub tags: Vec<String>,
}

/// How `stream create` lays a stream out: its replicas and storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// How many replicas.
    pub replicas: usize,
    /// Memory storage, not file storage.
    pub memory: bool,
}

impl Default for Layout {
    fn default() -> Layout {
        Layout {
            replicas: 1,
            memory: false,
        }
    }
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
    /// The stream's name.
    pub name: String,
    /// The server(s) it is on.
    pub server: String,
    /// The version the server answering states (`2.15.1`; empty when it
    /// states none).
    pub version: String,
    /// How many subjects the stream holds (one a record: SPEC 8).
    pub subjects: u64,
    /// About how many bytes of the server's memory its index of these
    /// subjects takes, on each server holding a replica
    /// ([`SUBJECT_INDEX_BYTES`] a subject).
    pub subject_index_bytes: u64,
    /// Its configuration.
    pub config: stream::Config,
    /// The settings that break SPEC 8: the store refuses to use it.
    pub problems: Vec<ConfigProblem>,
    /// Settings that work but are unusual.
    pub warnings: Vec<String>,
    /// Facts worth knowing.
    pub notes: Vec<String>,
    /// How many messages it holds.
    pub messages: u64,
    /// How many bytes it holds.
    pub bytes: u64,
    /// Where its replicas are.
    pub placement: Placement,
    /// The stream's replicas and storage, as `stream create` sets them.
    pub layout: Layout,
}

/// Look at a stream without binding to it (`stream check`, `verify`).
pub fn inspect(settings: &Settings, name: &str) -> Result<StreamReport> {
    Rt::new()?.block_on(inspect_async(settings, name))
}

async fn inspect_async(settings: &Settings, name: &str) -> Result<StreamReport> {
    let conn = Conn::open(settings).await?;
    let mut s = conn.stream(name).await?;
    let info = conn.info(&mut s, name).await?;
    let mut notes = config_notes(&info.config);
    let placement = Placement {
        cluster: info.cluster.as_ref().and_then(|c| c.name.clone()),
        leader: info.cluster.as_ref().and_then(|c| c.leader.clone()),
        peers: info
            .cluster
            .as_ref()
            .map(|c| {
                c.replicas
                    .iter()
                    .map(|r| (r.name.clone(), r.current))
                    .collect()
            })
            .unwrap_or_default(),
        tags: info
            .config
            .placement
            .as_ref()
            .map(|p| p.tags.clone())
            .unwrap_or_default(),
    };
    if placement.cluster.is_some() && info.config.num_replicas <= 1 {
        notes.push(format!(
            "one replica in cluster {}: the sessions are on one server only; nats stream edit {name} --replicas 3",
            placement.cluster.as_deref().unwrap_or("")
        ));
    }
    let version = conn.version();
    let mut warnings = config_warnings(&info.config);
    warnings.extend(server_warning(&version));
    warnings.extend(index_warning(&version, &info.config));
    let subjects = info.state.subjects_count;
    Ok(StreamReport {
        placement,
        layout: Layout {
            replicas: info.config.num_replicas,
            memory: info.config.storage == stream::StorageType::Memory,
        },
        name: name.to_owned(),
        server: conn.server.clone(),
        version,
        subjects,
        subject_index_bytes: subjects.saturating_mul(SUBJECT_INDEX_BYTES),
        problems: check_config(&info.config),
        warnings,
        notes,
        config: info.config.clone(),
        messages: info.state.messages,
        bytes: info.state.bytes,
    })
}

/// What `stream check` says of the server's version (issue 28): older than
/// 2.11, every write is refused; 2.11 before 2.11.7, a new run's fence
/// was seen to let its first record through beside a stray record.
fn server_warning(version: &str) -> Option<String> {
    let v = version.escape_debug();
    if super::conn::ignores_fence_subject(version) {
        return Some(format!(
            "nats-server {v} is older than 2.11: it ignores the Nats-Expected-Last-Subject-Sequence-Subject header that fences every write (SPEC 8), so fisk-admin refuses to write to it (reads work); upgrade the server to 2.11 or later"
        ));
    }
    super::conn::wildcard_fence_unsure(version).then(|| format!(
        "nats-server {v} (2.11 before 2.11.7) at times stores a new run's first record beside a stray record already under the run's subjects, where its fence should refuse it; upgrade the server to 2.11.7 or later"
    ))
}

/// About how many bytes of nats-server's memory a subject takes in its
/// per-subject index (held in memory for a file stream too, on each
/// server with a replica; nats-server issue #8485 asks for it to be
/// paged): measured on nats-server 2.15.1 as the resident memory of a
/// server holding two streams of 1,830,000 fisk subjects each
/// (`<prefix>.<id>.<seq>`, 2 KB runs of 6 records, 449 MB) against two of
/// 183,000 (62 MB), after both had loaded them; issue 40, bench/RESULTS.md.
pub const SUBJECT_INDEX_BYTES: u64 = 120;

/// What `stream check` says of a server whose subject index can lose
/// track of messages in a stream of one message per subject (issue 40):
/// from 2.12.7 before 2.12.10, a restart that recovers from a stale
/// `index.db` could leave messages unfindable (nats-server PR #8254, fixed
/// in 2.12.10 and 2.14.2; 2.13 and 2.14 before 2.14.2 stored both block
/// indexes, per the PR). Every fisk stream keeps one message a subject.
fn index_warning(version: &str, config: &stream::Config) -> Option<String> {
    let v = version.escape_debug();
    (config.max_messages_per_subject == 1 && super::conn::loses_last_blocks(version)).then(|| format!(
        "nats-server {v} (2.12.7 to 2.12.9) can lose track of messages in a stream of one message per subject after a restart (nats-server PR #8254): records then read as missing; upgrade the server to 2.12.10 or later"
    ))
}

/// Create a stream with exactly the SPEC 8 configuration. An existing stream
/// is never changed: one that already passes is reported as such (`Ok(false)`),
/// any other is refused.
pub fn create_stream(
    settings: &Settings,
    name: &str,
    subject: &str,
    layout: Layout,
) -> Result<bool> {
    let want = stream::Config {
        num_replicas: layout.replicas,
        storage: match layout.memory {
            true => stream::StorageType::Memory,
            false => stream::StorageType::File,
        },
        ..spec_config(name, subject)
    };
    if prefix_of(&want.subjects).is_none() {
        return Err(Error::Usage(format!(
            "subject {subject:?} is not of the form PREFIX.> (for example fisk.sessions.>)"
        )));
    }
    Rt::new()?.block_on(create_stream_async(settings, name, subject, want))
}

async fn create_stream_async(
    settings: &Settings,
    name: &str,
    subject: &str,
    want: stream::Config,
) -> Result<bool> {
    let conn = Conn::open(settings).await?;
    if let Ok(mut s) = conn.js.get_stream(name).await {
        let info = conn.info(&mut s, name).await?;
        let problems = check_config(&info.config);
        if !problems.is_empty() {
            return Err(Error::Config {
                at: conn.at(name),
                message: format!(
                    "the stream exists with another configuration; fisk-admin does not change a stream it does not own: {}",
                    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                ),
            });
        }
        if info.config.subjects != want.subjects {
            return Err(Error::Config {
                at: conn.at(name),
                message: format!(
                    "the stream exists with subjects {:?}, not {subject:?}; use that prefix or another stream name",
                    info.config.subjects
                ),
            });
        }
        return Ok(false);
    }
    conn.js
        .create_stream(want)
        .await
        .map_err(|e| conn.err(name, format!("cannot create the stream: {e}")))?;
    Ok(true)
}

/// Allow or forbid rollups on an existing stream (`stream edit
/// --allow-rollup`, which `upgrade` needs to replace a record in place;
/// `--no-allow-rollup` afterwards keeps records write-once): the one
/// setting fisk-admin changes on a stream it did not create, and only on
/// request. `Ok(false)` when the stream was so already (nothing changed).
pub fn set_allow_rollup(settings: &Settings, name: &str, allow: bool) -> Result<bool> {
    Rt::new()?.block_on(set_allow_rollup_async(settings, name, allow))
}

async fn set_allow_rollup_async(settings: &Settings, name: &str, allow: bool) -> Result<bool> {
    let conn = Conn::open(settings).await?;
    let mut s = conn.stream(name).await?;
    let info = conn.info(&mut s, name).await?;
    if info.config.allow_rollup == allow {
        return Ok(false);
    }
    let config = stream::Config {
        allow_rollup: allow,
        ..info.config.clone()
    };
    conn.js
        .update_stream(config)
        .await
        .map_err(|e| conn.err(name, format!("cannot change allow_rollup: {e}")))?;
    Ok(true)
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
