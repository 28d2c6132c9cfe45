//! What verify can find: each [`Code`] with its severity and its remedy in
//! one match, and the [`Finding`] that carries one. The output schema
//! (`schemas/output/verify.json`) lists exactly these codes (test below).

use serde::Serialize;

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub run: String,
    pub code: Code,
    pub severity: Severity,
    pub line: Option<usize>,
    pub offset: Option<u64>,
    pub seq: Option<u64>,
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
pub enum Code {
    TornTail,
    UnterminatedFinalRecord,
    GarbageFinalLine,
    InteriorCorruption,
    EmptyJournal,
    NoMeta,
    MetaSeq,
    DuplicateMeta,
    SeqNotIncreasing,
    SeqGap,
    VersionThree,
    MixedGeneration,
    VersionNewer,
    VersionOlder,
    UnknownProtocol,
    SkippedOptional,
    UnknownField,
    MissingPayload,
    ExtraPayload,
    OrphanResult,
    UnknownToolUse,
    DuplicateResult,
    Schema,
    RunIdMismatch,
    InvalidId,
    Permissions,
    Symlink,
    OrphanLock,
    LeftoverTemp,
    Live,
    OpenDeferrals,
    Fold,
    Unreadable,
    StreamConfig,
    SubjectMismatch,
    DuplicateKey,
    InvalidUtf8,
    CounterOverflow,
    OrphanMessages,
    UpgradeInterrupted,
}

impl Code {
    pub const ALL: [Code; 40] = [
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
        }
    }

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
            | Code::CounterOverflow => Severity::Warning,
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
            | Code::UpgradeInterrupted => Severity::Error,
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
            // The reader stops at the first bad record; migrate copies
            // the records before it.
            Code::InteriorCorruption
            | Code::SeqGap
            | Code::SeqNotIncreasing
            | Code::DuplicateMeta
            | Code::SubjectMismatch
            | Code::OrphanMessages => Some(R::Salvage),
            Code::EmptyJournal => Some(R::Remove),
            Code::Permissions => Some(R::ChmodJournal),
            Code::StreamConfig => Some(R::CheckStream),
            _ => None,
        }
    }

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
