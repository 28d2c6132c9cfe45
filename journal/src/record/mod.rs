//! Records: the ten protocols of SPEC 1, decoded from journal bytes and
//! encoded back into the Go agent's canonical bytes.
//!
//! Decoding follows Go's `encoding/json` where the agent depends on it: a
//! field that is absent or `null` reads as its zero value, unknown fields are
//! ignored (new `?` fields fold as zero), and a wrong JSON type fails the whole
//! record — for the agent such a line "does not parse". Encoding writes the
//! keys in SPEC order, omits zero `?` fields and escapes as Go does
//! ([`crate::gojson`]). Copying a record never re-encodes it: [`Entry::raw`]
//! keeps the bytes it was read from.
//!
//! This file holds what a record is: the versions, the kinds, [`Record`] and
//! [`Entry`]. The rest, one job each: `field` (Go's field rules),
//! `content` (messages and their blocks), `payload` (the ten payloads),
//! `reason` (why a run stopped), `decode` (bytes or a value to a record),
//! `encode` (a record to the agent's bytes).

mod content;
mod decode;
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
    Assistant, CallApproval, Claim, Decision, Deferred, Fingerprint, MemoryRevisions, Meta,
    Payload, Terminal, ToolResult, User,
};
pub use reason::Reason;

use crate::time::Time;

/// The format version the agent as it ships now writes, and this tool
/// creates new runs in (SPEC 1.1).
pub const VERSION: i64 = 1;

/// The format version the August 2026 agent wrote (SPEC 1.1).
pub const VERSION_AUGUST: i64 = 3;

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
    pub fn of(version: i64) -> Option<Generation> {
        match version {
            VERSION => Some(Generation::Current),
            VERSION_AUGUST => Some(Generation::August),
            _ => None,
        }
    }

    pub fn version(self) -> i64 {
        match self {
            Generation::Current => VERSION,
            Generation::August => VERSION_AUGUST,
        }
    }

    /// Whether a record appended to a journal of this generation is
    /// stamped with `time` (SPEC 2).
    pub fn stamps_time(self) -> bool {
        self == Generation::Current
    }
}

/// Every protocol id starts with this.
pub const PROTOCOL_PREFIX: &str = "io.choria.fisk-ai.v1.session.";

/// The ten record kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Kind {
    Meta,
    Assistant,
    User,
    ToolResult,
    Deferred,
    Decision,
    CallApproval,
    MemoryRevisions,
    Terminal,
    Claim,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Meta,
        Kind::Assistant,
        Kind::User,
        Kind::ToolResult,
        Kind::Deferred,
        Kind::Decision,
        Kind::CallApproval,
        Kind::MemoryRevisions,
        Kind::Terminal,
        Kind::Claim,
    ];

    /// The protocol id's last segment, which is also the payload key.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Assistant => "assistant",
            Kind::User => "user",
            Kind::ToolResult => "tool_result",
            Kind::Deferred => "deferred",
            Kind::Decision => "decision",
            Kind::CallApproval => "call_approval",
            Kind::MemoryRevisions => "memory_revisions",
            Kind::Terminal => "terminal",
            Kind::Claim => "claim",
        }
    }

    /// The full protocol id.
    pub fn protocol(self) -> &'static str {
        match self {
            Kind::Meta => "io.choria.fisk-ai.v1.session.meta",
            Kind::Assistant => "io.choria.fisk-ai.v1.session.assistant",
            Kind::User => "io.choria.fisk-ai.v1.session.user",
            Kind::ToolResult => "io.choria.fisk-ai.v1.session.tool_result",
            Kind::Deferred => "io.choria.fisk-ai.v1.session.deferred",
            Kind::Decision => "io.choria.fisk-ai.v1.session.decision",
            Kind::CallApproval => "io.choria.fisk-ai.v1.session.call_approval",
            Kind::MemoryRevisions => "io.choria.fisk-ai.v1.session.memory_revisions",
            Kind::Terminal => "io.choria.fisk-ai.v1.session.terminal",
            Kind::Claim => "io.choria.fisk-ai.v1.session.claim",
        }
    }

    pub fn from_protocol(protocol: &str) -> Option<Kind> {
        let suffix = protocol.strip_prefix(PROTOCOL_PREFIX)?;
        Kind::ALL.into_iter().find(|k| k.key() == suffix)
    }

    /// Records that never change what the run is doing (SPEC 9).
    pub fn is_inert(self) -> bool {
        matches!(
            self,
            Kind::Claim | Kind::Decision | Kind::CallApproval | Kind::MemoryRevisions
        )
    }
}

/// One record, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub seq: u64,
    pub protocol: String,
    /// When the record was appended (version 1); `None` when absent, `null`
    /// or zero (Go omits a zero time).
    pub time: Option<Time>,
    pub optional: bool,
    /// `None` when the protocol is unknown, or known but its payload key is
    /// absent or `null`.
    pub payload: Option<Payload>,
    /// Top-level keys other than the envelope and the payload key.
    pub extra_keys: Vec<String>,
}

impl Record {
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
    pub record: Record,
}
