//! JSON Schema validation of records (`schemas/v1/`). The schemas are
//! compiled into the binary and resolved with no network, ever: every
//! `$ref` must resolve inside the set given here. Format assertion is on,
//! so a `created` that is not RFC 3339 fails (draft 2020-12 treats
//! `format` as an annotation by default).

use crate::error::{Error, Result, Where};
use crate::record::PROTOCOL_PREFIX;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The embedded set: (file name, contents).
const EMBEDDED: &[(&str, &str)] = &[
    (
        "session.common.json",
        include_str!("../../schemas/v1/session.common.json"),
    ),
    (
        "session.meta.json",
        include_str!("../../schemas/v1/session.meta.json"),
    ),
    (
        "session.assistant.json",
        include_str!("../../schemas/v1/session.assistant.json"),
    ),
    (
        "session.user.json",
        include_str!("../../schemas/v1/session.user.json"),
    ),
    (
        "session.tool_result.json",
        include_str!("../../schemas/v1/session.tool_result.json"),
    ),
    (
        "session.deferred.json",
        include_str!("../../schemas/v1/session.deferred.json"),
    ),
    (
        "session.decision.json",
        include_str!("../../schemas/v1/session.decision.json"),
    ),
    (
        "session.call_approval.json",
        include_str!("../../schemas/v1/session.call_approval.json"),
    ),
    (
        "session.memory_revisions.json",
        include_str!("../../schemas/v1/session.memory_revisions.json"),
    ),
    (
        "session.terminal.json",
        include_str!("../../schemas/v1/session.terminal.json"),
    ),
    (
        "session.claim.json",
        include_str!("../../schemas/v1/session.claim.json"),
    ),
];

/// One way a record breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// The protocol of the record, where it has one.
    pub protocol: Option<String>,
    /// JSON pointer into the record.
    pub instance_path: String,
    /// The schema file (e.g. `session.meta.json`), when one applies.
    pub schema: Option<String>,
    /// The keyword's location, through `$ref`s, from the schema's root.
    pub keyword_location: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl Violation {
    /// `/path: message (schema#keyword)`, as verify reports it.
    pub fn describe(&self) -> String {
        let at = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        match (&self.schema, &self.keyword_location) {
            (Some(s), Some(k)) => format!("{at}: {} ({s}#{k})", self.message),
            _ => format!("{at}: {}", self.message),
        }
    }

    /// Whether this says again what a structural finding about the
    /// record's top-level `key` said (a payload missing or null, a key
    /// that should not be there, the meta record's seq): the violation is
    /// at that key or inside it, or at the record's root naming it.
    pub(crate) fn is_about_key(&self, key: &str) -> bool {
        let path = self.instance_path.as_str();
        let inside = path
            .strip_prefix('/')
            .and_then(|p| p.strip_prefix(key))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        let names = |q: char| self.message.contains(&format!("{q}{key}{q}"));
        inside || (path.is_empty() && (names('"') || names('\'')))
    }

    /// A violation with no schema location: only a protocol and a message.
    pub fn plain(protocol: Option<String>, message: String) -> Violation {
        Violation {
            protocol,
            instance_path: String::new(),
            schema: None,
            keyword_location: None,
            message,
        }
    }
}

/// A compiled set of record schemas, keyed by protocol id.
pub struct SchemaSet {
    by_protocol: HashMap<String, (String, jsonschema::Validator)>,
    /// Where the set came from, for messages.
    pub origin: String,
}

impl SchemaSet {
    /// The schemas compiled into this binary.
    pub fn embedded() -> Result<SchemaSet> {
        let files = EMBEDDED
            .iter()
            .map(|(n, c)| Ok(((*n).to_owned(), parse(Path::new(n), c)?)))
            .collect::<Result<Vec<_>>>()?;
        SchemaSet::build(files, "embedded schemas/v1".into())
    }

    /// Every `*.json` in `dir` (e.g. a newer agent's schemas). A record
    /// schema is named `session.<suffix>.json` for protocol
    /// `io.choria.fisk-ai.v1.session.<suffix>`.
    pub fn from_dir(dir: &Path) -> Result<SchemaSet> {
        let mut files = Vec::new();
        let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let path: PathBuf = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".json") {
                continue;
            }
            let text = crate::bounded::read_string(&path, crate::bounded::SETTINGS)
                .map_err(|e| Error::io(&path, e))?;
            files.push((name, parse(&path, &text)?));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        SchemaSet::build(files, format!("schemas in {}", dir.display()))
    }

    fn build(files: Vec<(String, Value)>, origin: String) -> Result<SchemaSet> {
        let bad = |message: String| Error::Schema {
            origin: origin.clone(),
            message,
        };
        let mut resources = Vec::new();
        for (name, v) in &files {
            let id = v
                .get("$id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("{name} has no absolute \"$id\"")))?;
            resources.push((
                id.to_owned(),
                jsonschema::Resource::from_contents(v.clone()),
            ));
        }
        let registry = jsonschema::Registry::new()
            .extend(resources)
            .and_then(|b| b.prepare())
            .map_err(|e| bad(format!("cannot resolve the schema set: {e}")))?;
        let mut by_protocol = HashMap::new();
        for (name, v) in &files {
            let Some(suffix) = name
                .strip_prefix("session.")
                .and_then(|n| n.strip_suffix(".json"))
                .filter(|s| *s != "common")
            else {
                continue;
            };
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .with_registry(&registry)
                .offline()
                .should_validate_formats(true)
                .build(v)
                .map_err(|e| bad(format!("{name} does not compile: {e}")))?;
            by_protocol.insert(
                format!("{PROTOCOL_PREFIX}{suffix}"),
                (name.clone(), validator),
            );
        }
        if by_protocol.is_empty() {
            return Err(bad("no record schemas (session.<suffix>.json) found".into()));
        }
        Ok(SchemaSet {
            by_protocol,
            origin,
        })
    }

    /// Validate one record given as a JSON value.
    pub fn validate(&self, record: &Value) -> Vec<Violation> {
        let protocol = record.get("protocol").and_then(Value::as_str);
        let Some(protocol) = protocol else {
            return vec![Violation::plain(
                None,
                "the record has no string \"protocol\", so no schema applies".into(),
            )];
        };
        let Some((file, validator)) = self.by_protocol.get(protocol) else {
            // An unknown optional record is skipped by every reader (SPEC
            // 1.3): like verify, validate passes over it.
            if record.get("optional").and_then(Value::as_bool) == Some(true) {
                return Vec::new();
            }
            return vec![Violation::plain(
                Some(protocol.to_owned()),
                format!(
                    "no schema for protocol {protocol:?} in the {}, and the record is not optional: readers refuse it",
                    self.origin
                ),
            )];
        };
        let mut out: Vec<Violation> = validator
            .iter_errors(record)
            .map(|e| {
                let eval = e.evaluation_path().as_str().to_owned();
                Violation {
                    protocol: Some(protocol.to_owned()),
                    instance_path: e.instance_path().as_str().to_owned(),
                    schema: Some(file.clone()),
                    keyword_location: Some(eval),
                    message: e.to_string(),
                }
            })
            .collect();
        // An unevaluatedProperties error is usually an echo of a broken
        // envelope or payload already reported: keep it only when alone.
        if out.iter().any(|v| !is_echo(v)) {
            out.retain(|v| !is_echo(v));
        }
        out
    }
}

fn is_echo(v: &Violation) -> bool {
    v.keyword_location
        .as_deref()
        .is_some_and(|k| k.ends_with("/unevaluatedProperties"))
}

fn parse(path: &Path, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::Config {
        at: Where::Path(path.to_path_buf()),
        message: format!("not JSON: {e}"),
    })
}

/// A per-record check verify runs beside its own: the schema check, or
/// none. Defined here, with the one check there is, so that `verify`
/// depends on `schema` and not the other way round.
pub trait RecordCheck: Sync {
    /// How the record breaks the check; empty when it passes.
    fn check(&self, record: &Value) -> Vec<Violation>;
}

impl RecordCheck for SchemaSet {
    fn check(&self, record: &Value) -> Vec<Violation> {
        self.validate(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_schemas_compile_and_cover_all_ten_protocols() {
        let set = SchemaSet::embedded().unwrap();
        for k in crate::record::Kind::ALL {
            assert!(set.by_protocol.contains_key(k.protocol()), "{k:?}");
        }
    }

    #[test]
    fn date_time_format_is_asserted() {
        let set = SchemaSet::embedded().unwrap();
        let rec = serde_json::json!({"seq": 3, "protocol": "io.choria.fisk-ai.v1.session.claim",
            "claim": {"by": "x", "claimed": "yesterday"}});
        let v = set.validate(&rec);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].instance_path, "/claim/claimed");
    }
}
