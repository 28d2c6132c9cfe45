//! Records: the ten protocols of SPEC 1, decoded from journal bytes and
//! encoded back into the Go agent's canonical bytes.
//!
//! Decoding follows Go's `encoding/json` where the agent depends on it: a
//! field that is absent or `null` reads as its zero value, unknown fields are
//! ignored (new `?` fields fold as zero), and a wrong JSON type fails the whole
//! record — for the agent such a line "does not parse". Encoding writes the
//! keys in SPEC order, omits zero `?` fields and escapes as Go does
//! (`gojson`). Copying a record never re-encodes it: [`Entry::raw`]
//! keeps the bytes it was read from.
//!
//! This file holds what a record is: the versions, the kinds, [`Record`] and
//! [`Entry`]. The rest, one job each: `field` (Go's field rules),
//! `content` (messages and their blocks), `payload` (the ten payloads),
//! `reason` (why a run stopped), `decode` (bytes or a value to a record),
//! `encode` (a record to the agent's bytes).
//!
//! Public API: front ends decode, build and encode records with [`Record`],
//! match on [`Payload`] and its payload structs, and read [`Reason`]s; the
//! version constants and the protocol prefix stay inside the crate.

mod content;
mod decode;
pub(crate) mod edit;
mod encode;
mod field;
mod payload;
mod reason;

pub use content::{
    Block, Message, ProviderBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock,
};
pub use decode::DecodeError;
pub use field::Unknown;
pub use payload::{
    Assistant, CallApproval, Claim, Decision, Deferred, EveryKey, Fingerprint, MemoryRevisions,
    Meta, Terminal, ToolResult, User,
};
pub use reason::Reason;

use crate::time::Time;

/// The format version the agent as it ships now writes, and this tool
/// creates new runs in (SPEC 1.1).
pub(crate) const VERSION: i64 = 1;

/// The format version the August 2026 agent wrote (SPEC 1.1).
pub(crate) const VERSION_AUGUST: i64 = 3;

/// The two generations of the agent whose journals this tool reads and
/// writes (SPEC 1.1). `meta.version` names one; any other version is read
/// for inspection only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    /// Version 1: the agent as it ships now. Appends carry `time`.
    Current,
    /// Version 3: the August 2026 agent. Appends carry no `time`.
    August,
}

impl Generation {
    /// The generation that writes `version`; `None` for any other version.
    pub(crate) fn of(version: i64) -> Option<Generation> {
        match version {
            VERSION => Some(Generation::Current),
            VERSION_AUGUST => Some(Generation::August),
            _ => None,
        }
    }

    /// The `meta.version` this generation writes.
    pub fn version(self) -> i64 {
        match self {
            Generation::Current => VERSION,
            Generation::August => VERSION_AUGUST,
        }
    }

    /// Whether a record appended to a journal of this generation is
    /// stamped with `time` (SPEC 2).
    pub(crate) fn stamps_time(self) -> bool {
        self == Generation::Current
    }
}

/// Every protocol id starts with this.
pub(crate) const PROTOCOL_PREFIX: &str = "io.choria.fisk-ai.v1.session.";

/// The ten kinds, written once. Each kind's variant is named after its
/// payload struct, so one list gives [`Kind`] (with its key and protocol
/// id), [`Payload`], and the matches from one to the other: a payload's
/// kind, its encoding under its key, and its decoding from any
/// [`payload::Source`].
macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident => $key:literal,)*) => {
        /// The ten record kinds.
        #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Kind {
            $($(#[$doc])* $kind,)*
        }

        impl Kind {
            pub(crate) const ALL: [Kind; 10] = [$(Kind::$kind,)*];

            /// The protocol id's last segment, which is also the payload key.
            pub fn key(self) -> &'static str {
                match self {
                    $(Kind::$kind => $key,)*
                }
            }

            /// The full protocol id.
            pub fn protocol(self) -> &'static str {
                match self {
                    $(Kind::$kind => concat!("io.choria.fisk-ai.v1.session.", $key),)*
                }
            }
        }

        /// A decoded payload.
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum Payload {
            $($(#[$doc])* $kind(payload::$kind),)*
        }

        impl Payload {
            /// The kind of record this payload belongs in.
            pub fn kind(&self) -> Kind {
                match self {
                    $(Payload::$kind(_) => Kind::$kind,)*
                }
            }

            /// Decode a payload of `kind` from `source`; `None` when the
            /// source holds `null` and takes that as no payload.
            pub(crate) fn decode_from<'de, S: payload::Source<'de>>(
                kind: Kind,
                source: S,
            ) -> Result<Option<Payload>, S::Error> {
                Ok(match kind {
                    $(Kind::$kind => source.take()?.map(Payload::$kind),)*
                })
            }
        }

        /// The payload's own fields: what is written under its key.
        impl serde::Serialize for Payload {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Payload::$kind(p) => p.serialize(s),)*
                }
            }
        }
    };
}

kinds! {
    /// `meta`: the run's first record.
    Meta => "meta",
    /// `assistant`: a model response.
    Assistant => "assistant",
    /// `user`: a message to the model.
    User => "user",
    /// `tool_result`: a tool call's result.
    ToolResult => "tool_result",
    /// `deferred`: a call handed to a person.
    Deferred => "deferred",
    /// `decision`: a standing approval of a tool.
    Decision => "decision",
    /// `call_approval`: an approval of one call.
    CallApproval => "call_approval",
    /// `memory_revisions`: the memory revisions seen.
    MemoryRevisions => "memory_revisions",
    /// `terminal`: why a turn ended.
    Terminal => "terminal",
    /// `claim`: a worker took the run.
    Claim => "claim",
}

impl Kind {
    pub(crate) fn from_protocol(protocol: &str) -> Option<Kind> {
        let suffix = protocol.strip_prefix(PROTOCOL_PREFIX)?;
        Kind::ALL.into_iter().find(|k| k.key() == suffix)
    }
}

/// One record, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The record's position in its run: 1 for the meta record, then +1 each.
    pub seq: u64,
    /// The protocol id: `io.choria.fisk-ai.v1.session.` and the kind's key, or an unknown
    /// kind's id as written.
    pub protocol: String,
    /// When the record was appended (version 1); `None` when absent, `null`
    /// or zero (Go omits a zero time).
    pub time: Option<Time>,
    /// The record may be skipped by a reader that does not know its kind (SPEC 1.3).
    pub optional: bool,
    /// `None` when the protocol is unknown, or known but its payload key is
    /// absent or `null`.
    pub payload: Option<Payload>,
    /// Top-level keys other than the envelope and the payload key.
    pub extra_keys: Vec<String>,
}

impl Record {
    /// The record's kind; `None` when its protocol is unknown.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_protocol(&self.protocol)
    }

    /// A new record of this payload at `seq`.
    pub fn new(seq: u64, payload: Payload) -> Record {
        Record {
            seq,
            protocol: payload.kind().protocol().to_owned(),
            time: None,
            // SPEC 1.3: decisions, call approvals and memory revisions are
            // written optional, so an agent that does not know them skips them.
            optional: matches!(
                payload,
                Payload::Decision(_) | Payload::CallApproval(_) | Payload::MemoryRevisions(_)
            ),
            payload: Some(payload),
            extra_keys: Vec::new(),
        }
    }
}

/// A record together with where it was read from and its exact bytes.
#[derive(Clone, Debug)]
pub struct Entry {
    /// 1-based line number (file backend) or position in the run.
    pub line: usize,
    /// Byte offset of the line's start (file backend; 0 elsewhere).
    pub offset: u64,
    /// The record's bytes exactly as stored, without the newline.
    pub raw: Vec<u8>,
    /// The decoded record.
    pub record: Record,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_named_by_its_protocol_and_its_payload() {
        let keys: std::collections::BTreeSet<_> = Kind::ALL.iter().map(|k| k.key()).collect();
        assert_eq!(keys.len(), 10, "ten distinct keys");
        for k in Kind::ALL {
            assert_eq!(k.protocol(), format!("{PROTOCOL_PREFIX}{}", k.key()));
            assert_eq!(Kind::from_protocol(k.protocol()), Some(k));
            // A record of each kind decodes to a payload of that kind and
            // encodes back under its key.
            let line = format!(
                r#"{{"seq":1,"protocol":"{}","{}":{{}}}}"#,
                k.protocol(),
                k.key()
            );
            let r = Record::decode(line.as_bytes()).unwrap();
            assert_eq!(r.payload.as_ref().map(Payload::kind), Some(k), "{line}");
            let back = String::from_utf8(r.encode().unwrap()).unwrap();
            assert!(back.contains(&format!(r#""{}":{{"#, k.key())), "{back}");
        }
        assert_eq!(
            Kind::from_protocol("io.choria.fisk-ai.v1.session.nope"),
            None
        );
    }
}
