//! What verify can find: each [`Code`] with its severity and its remedy in
//! one match, and the [`Finding`] that carries one. The output schema
//! (`schemas/output/verify.json`) lists exactly these codes (test below).

use serde::Serialize;

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
/// How bad a finding is.
pub enum Severity {
    /// The run cannot be read (or written) as it is.
    Error,
    /// The run reads, but something is wrong or unusual.
    Warning,
    /// Worth knowing; nothing is wrong.
    Info,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
/// One problem verify found in a run (SPEC 11), where it is and what it is.
pub struct Finding {
    /// The run's id.
    pub run: String,
    /// What was found.
    pub code: Code,
    /// How bad it is (the code's [`Code::severity`]).
    pub severity: Severity,
    /// The journal line (1-based), where it is about one.
    pub line: Option<usize>,
    /// The byte offset the line starts at, where known.
    pub offset: Option<u64>,
    /// The seq of the record, where known.
    pub seq: Option<u64>,
    /// What is wrong, in words.
    pub message: String,
    /// The offending line's bytes (for display; never printed unsanitised).
    #[serde(skip)]
    pub excerpt: Option<Vec<u8>>,
    /// What clears it: the code's [`Code::remedy`], or one particular to
    /// the finding (which permissions to fix).
    #[serde(skip)]
    pub remedy: Option<crate::Remedy>,
}

/// Written as SPEC 11 spells it.
impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first bytes of an offending line, kept with its finding for
/// display (`--details`): at most 4 KiB, never printed unsanitised.
pub fn excerpt(line: &[u8]) -> Vec<u8> {
    line.get(..4096).unwrap_or(line).to_vec()
}

/// Every finding code of SPEC 11 (and the two of JetStream), with its
/// severity in the same place: a new code cannot forget its severity, and
/// a test ties the list to `schemas/output/verify.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    /// The final line is torn (an unfinished write).
    TornTail,
    /// The final record is complete but has no newline.
    UnterminatedFinalRecord,
    /// The final line is not a record at all.
    GarbageFinalLine,
    /// A line before the last does not parse.
    InteriorCorruption,
    /// The journal holds nothing.
    EmptyJournal,
    /// The first record is not a meta record.
    NoMeta,
    /// The meta record's seq is not 1.
    MetaSeq,
    /// A second meta record.
    DuplicateMeta,
    /// A seq not greater than the one before it.
    SeqNotIncreasing,
    /// Seqs leave a gap.
    SeqGap,
    /// A version 3 journal (an older agent's).
    VersionThree,
    /// Records of both generations in one journal.
    MixedGeneration,
    /// A format version newer than this tool reads.
    VersionNewer,
    /// A format version older than this tool folds.
    VersionOlder,
    /// A record of a protocol nobody knows, not marked optional.
    UnknownProtocol,
    /// An optional record of an unknown protocol, skipped.
    SkippedOptional,
    /// A field the format does not define.
    UnknownField,
    /// A record with no payload where its kind needs one.
    MissingPayload,
    /// A payload where its kind has none.
    ExtraPayload,
    /// A tool result with no call before it.
    OrphanResult,
    /// A tool_use id no call carries.
    UnknownToolUse,
    /// Two results for one call.
    DuplicateResult,
    /// A record that breaks the JSON schema.
    Schema,
    /// A record whose run id is not the run's.
    RunIdMismatch,
    /// A run id that breaks the id rule.
    InvalidId,
    /// A journal (or store) others may read.
    Permissions,
    /// A journal that is a symbolic link.
    Symlink,
    /// A lock file no process holds.
    OrphanLock,
    /// A temporary file an interrupted write left.
    LeftoverTemp,
    /// The run is being written now.
    Live,
    /// Deferred calls wait for an answer.
    OpenDeferrals,
    /// The fold refuses the journal.
    Fold,
    /// The journal cannot be read.
    Unreadable,
    /// The stream's configuration breaks SPEC 8.
    StreamConfig,
    /// A message stored under another run's subject.
    SubjectMismatch,
    /// A JSON object with a key twice.
    DuplicateKey,
    /// A line that is not UTF-8.
    InvalidUtf8,
    /// A counter beyond what the agent's fold can hold.
    CounterOverflow,
    /// Messages of a run with no meta record.
    OrphanMessages,
    /// An upgrade was interrupted before it finished.
    UpgradeInterrupted,
    /// A write of the whole run (fork, recover, a restore) was
    /// interrupted before it finished: the run is marked as half written.
    WriteInterrupted,
    /// The audit log (issue 38) is broken: an entry that does not read,
    /// or does not link to the one before it (edited, removed).
    AuditChain,
    /// A write the audit log announced and never closed (killed between
    /// its intent and its outcome), settled from its run.
    AuditIntent,
    /// A run is no longer what the last write the audit log records made
    /// of it, and not by records appended after it.
    AuditChanged,
}

impl Code {
    /// Every code, in the order of SPEC 11.
    pub const ALL: [Code; 44] = [
        Code::TornTail,
        Code::UnterminatedFinalRecord,
        Code::GarbageFinalLine,
        Code::InteriorCorruption,
        Code::EmptyJournal,
        Code::NoMeta,
        Code::MetaSeq,
        Code::DuplicateMeta,
        Code::SeqNotIncreasing,
        Code::SeqGap,
        Code::VersionThree,
        Code::MixedGeneration,
        Code::VersionNewer,
        Code::VersionOlder,
        Code::UnknownProtocol,
        Code::SkippedOptional,
        Code::UnknownField,
        Code::MissingPayload,
        Code::ExtraPayload,
        Code::OrphanResult,
        Code::UnknownToolUse,
        Code::DuplicateResult,
        Code::Schema,
        Code::RunIdMismatch,
        Code::InvalidId,
        Code::Permissions,
        Code::Symlink,
        Code::OrphanLock,
        Code::LeftoverTemp,
        Code::Live,
        Code::OpenDeferrals,
        Code::Fold,
        Code::Unreadable,
        Code::StreamConfig,
        Code::SubjectMismatch,
        Code::DuplicateKey,
        Code::InvalidUtf8,
        Code::CounterOverflow,
        Code::OrphanMessages,
        Code::UpgradeInterrupted,
        Code::WriteInterrupted,
        Code::AuditChain,
        Code::AuditIntent,
        Code::AuditChanged,
    ];

    /// A finding about the final line only, which `repair` clears (cut
    /// or completed): the readers drop such a line, so it is no damage to
    /// the records before it.
    pub fn is_tail(self) -> bool {
        matches!(
            self,
            Code::TornTail | Code::UnterminatedFinalRecord | Code::GarbageFinalLine
        )
    }

    /// The code as SPEC 11 spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::TornTail => "torn-tail",
            Code::UnterminatedFinalRecord => "unterminated-final-record",
            Code::GarbageFinalLine => "garbage-final-line",
            Code::InteriorCorruption => "interior-corruption",
            Code::EmptyJournal => "empty-journal",
            Code::NoMeta => "no-meta",
            Code::MetaSeq => "meta-seq",
            Code::DuplicateMeta => "duplicate-meta",
            Code::SeqNotIncreasing => "seq-not-increasing",
            Code::SeqGap => "seq-gap",
            Code::VersionThree => "version-3",
            Code::MixedGeneration => "mixed-generation",
            Code::VersionNewer => "version-newer",
            Code::VersionOlder => "version-older",
            Code::UnknownProtocol => "unknown-protocol",
            Code::SkippedOptional => "skipped-optional",
            Code::UnknownField => "unknown-field",
            Code::MissingPayload => "missing-payload",
            Code::ExtraPayload => "extra-payload",
            Code::OrphanResult => "orphan-result",
            Code::UnknownToolUse => "unknown-tool-use",
            Code::DuplicateResult => "duplicate-result",
            Code::Schema => "schema",
            Code::RunIdMismatch => "run-id-mismatch",
            Code::InvalidId => "invalid-id",
            Code::Permissions => "permissions",
            Code::Symlink => "symlink",
            Code::OrphanLock => "orphan-lock",
            Code::LeftoverTemp => "leftover-temp",
            Code::Live => "live",
            Code::OpenDeferrals => "open-deferrals",
            Code::Fold => "fold",
            Code::Unreadable => "unreadable",
            Code::StreamConfig => "stream-config",
            Code::SubjectMismatch => "subject-mismatch",
            Code::DuplicateKey => "duplicate-key",
            Code::InvalidUtf8 => "invalid-utf8",
            Code::CounterOverflow => "counter-overflow",
            Code::OrphanMessages => "orphan-messages",
            Code::UpgradeInterrupted => "upgrade-interrupted",
            Code::WriteInterrupted => "write-interrupted",
            Code::AuditChain => "audit-chain",
            Code::AuditIntent => "audit-intent",
            Code::AuditChanged => "audit-changed",
        }
    }

    /// The code's severity: one match, so no code lacks one.
    pub fn severity(self) -> Severity {
        match self {
            Code::TornTail
            | Code::UnterminatedFinalRecord
            | Code::GarbageFinalLine
            | Code::VersionThree
            | Code::MixedGeneration
            | Code::VersionOlder
            | Code::UnknownToolUse
            | Code::DuplicateResult
            | Code::InvalidId
            | Code::Permissions
            | Code::Symlink
            | Code::DuplicateKey
            | Code::InvalidUtf8
            | Code::CounterOverflow
            | Code::AuditIntent
            | Code::AuditChanged => Severity::Warning,
            Code::InteriorCorruption
            | Code::EmptyJournal
            | Code::NoMeta
            | Code::MetaSeq
            | Code::DuplicateMeta
            | Code::SeqNotIncreasing
            | Code::SeqGap
            | Code::VersionNewer
            | Code::UnknownProtocol
            | Code::MissingPayload
            | Code::ExtraPayload
            | Code::OrphanResult
            | Code::Schema
            | Code::RunIdMismatch
            | Code::Fold
            | Code::Unreadable
            | Code::StreamConfig
            | Code::SubjectMismatch
            | Code::OrphanMessages
            | Code::UpgradeInterrupted
            | Code::WriteInterrupted
            | Code::AuditChain => Severity::Error,
            Code::SkippedOptional
            | Code::UnknownField
            | Code::OrphanLock
            | Code::LeftoverTemp
            | Code::Live
            | Code::OpenDeferrals => Severity::Info,
        }
    }

    /// The action that clears a finding of this code, where one does.
    pub fn remedy(self) -> Option<crate::Remedy> {
        use crate::Remedy as R;
        match self {
            c if c.is_tail() => Some(R::Repair),
            Code::VersionThree | Code::MixedGeneration | Code::UpgradeInterrupted => {
                Some(R::Upgrade)
            }
            Code::OpenDeferrals => Some(R::Answer),
            // The command its mark names, again (a finding in place says
            // `recover`, which is that command).
            Code::WriteInterrupted => Some(R::Again),
            // The reader stops at the first bad record; recover keeps
            // every intact record past it (FORMAT.md, "recover").
            Code::InteriorCorruption | Code::SeqGap | Code::SeqNotIncreasing => Some(R::Recover),
            // What recover does not rebuild: migrate copies the records
            // before the damage.
            Code::DuplicateMeta | Code::SubjectMismatch | Code::OrphanMessages => Some(R::Salvage),
            Code::EmptyJournal => Some(R::Remove),
            Code::Permissions => Some(R::ChmodJournal),
            Code::StreamConfig => Some(R::CheckStream),
            _ => None,
        }
    }

    /// The code spelled as SPEC 11 does, back to a [`Code`].
    pub fn parse(code: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output contract lists exactly the codes verify can emit.
    #[test]
    fn every_code_is_in_the_output_schema_and_no_other() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../schemas/output/verify.json"))
                .unwrap_or_default();
        let mut listed: Vec<&str> = schema
            .pointer("/$defs/code/enum")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        listed.sort_unstable();
        let mut ours: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        ours.sort_unstable();
        assert_eq!(ours, listed);
        for c in Code::ALL {
            assert_eq!(Code::parse(c.as_str()), Some(c));
        }
    }
}
