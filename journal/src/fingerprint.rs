//! The fingerprint (SPEC 4): what a run was started with, hashed so a resume
//! can tell whether it would continue the same conversation; and the diff
//! whose field classes decide the resume gate.
//!
//! Recipes, byte for byte as the Go agent computes them:
//!
//! - `system_hash`: SHA-256 of Go's `json.Marshal([]string)` of the system
//!   prompt parts. An absent (or `null`) `system:` is Go's nil slice and
//!   marshals as `null`; `system: []` marshals as `[]`.
//! - `tools_hash`: SHA-256 of the JSON array of tool definitions, one object
//!   per tool name in agent-file order with keys `Name`, `Description`,
//!   `InputSchema`, `DeferLoading` in that order; `InputSchema` is a Go map,
//!   so its keys (at every depth) are sorted. The array is built by
//!   made, never nil: no tools at all hashes `[]` (SPEC 4).
//! - A tool name the runner does not know still gets a definition (empty
//!   description, schema `{"type":"object"}`, not deferred): the agent
//!   advertises what the file names, and a call to it gets an error result.
//!
//! Public API: `fingerprint` builds one from an agent file ([`of_agent`]) and
//! `fingerprint diff` compares two ([`diff`], its [`Class`]es and
//! [`Verdict`]); the tool definitions and hash helpers stay inside the crate.

use crate::agent::AgentFile;
use crate::gojson;
use crate::record::Fingerprint;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// A tool definition as the agent hashes it.
#[derive(Debug, Clone)]
pub(crate) struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON text of the input schema.
    pub input_schema: serde_json::Value,
    pub defer_loading: bool,
}

pub(crate) const EXEC_DESCRIPTION: &str = "Run a shell command with sh -c and return its stdout, stderr and exit status. A non-zero exit status is an error result.";
pub(crate) const EXEC_SCHEMA: &str = r#"{"type":"object","properties":{"command":{"type":"string","description":"The command line, run with sh -c."},"timeout_s":{"type":"integer","minimum":1,"description":"Kill the command after this many seconds."}},"required":["command"]}"#;
pub(crate) const DEFER_DESCRIPTION: &str = "Hand this call to a person. The run suspends once the rest of the batch is done; the answer is given later with fisk-admin answer, and the run resumes.";
pub(crate) const DEFER_SCHEMA: &str = r#"{"type":"object","properties":{"note":{"type":"string","description":"What the person should do or decide."},"handle":{"type":"string","description":"A reference the person can use, such as a ticket id."}}}"#;
/// The schema of a tool name the runner does not know.
pub(crate) const UNKNOWN_SCHEMA: &str = r#"{"type":"object"}"#;

/// The definition the runner advertises for `name`.
pub(crate) fn tool_def(name: &str) -> ToolDef {
    let (description, schema) = match name {
        "exec" => (EXEC_DESCRIPTION, EXEC_SCHEMA),
        "defer" => (DEFER_DESCRIPTION, DEFER_SCHEMA),
        _ => ("", UNKNOWN_SCHEMA),
    };
    ToolDef {
        name: name.to_owned(),
        description: description.to_owned(),
        // The constants above are valid JSON (a unit test parses them).
        input_schema: serde_json::from_str(schema).unwrap_or(serde_json::Value::Null),
        defer_loading: false,
    }
}

/// A JSON value with object keys sorted at every depth, as Go marshals a map.
struct Sorted<'a>(&'a serde_json::Value);
impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut map = s.serialize_map(Some(keys.len()))?;
                for k in keys {
                    if let Some(v) = m.get(k) {
                        map.serialize_entry(k, &Sorted(v))?;
                    }
                }
                map.end()
            }
            serde_json::Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&Sorted(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

impl Serialize for ToolDef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("Name", &self.name)?;
        m.serialize_entry("Description", &self.description)?;
        m.serialize_entry("InputSchema", &Sorted(&self.input_schema))?;
        m.serialize_entry("DeferLoading", &self.defer_loading)?;
        m.end()
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    crate::digest::hex(Sha256::digest(bytes).as_slice())
}

/// `system_hash` of the system prompt parts (`None`: Go's nil slice).
pub(crate) fn system_hash(parts: Option<&[String]>) -> String {
    sha256_hex(&gojson::to_vec(&parts))
}

/// `tools_hash` of the named tools, in order.
pub(crate) fn tools_hash(names: &[String]) -> String {
    // The agent builds the list with a made slice, never nil: no tools is
    // `[]`, not `null` (SPEC 4).
    let defs: Vec<ToolDef> = names.iter().map(|n| tool_def(n)).collect();
    sha256_hex(&gojson::to_vec(&defs))
}

/// The fingerprint an agent file starts a run with.
pub fn of_agent(a: &AgentFile) -> Fingerprint {
    Fingerprint {
        provider: a.llm.provider.clone(),
        model: a.llm.model.clone(),
        system_hash: system_hash(a.system.as_deref()),
        tools_hash: tools_hash(&a.tools),
        thinking_mode: if a.thinking_on() { "summarized" } else { "off" }.to_owned(),
        reasoning_effort: a.llm.reasoning_effort.clone(),
        max_tokens: a.llm.budget.max_tokens,
        max_iterations: a.llm.budget.max_iterations,
        ..Fingerprint::default()
    }
}

/// A field's class decides what its change does to a resume (SPEC 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Class {
    /// `max_tokens`, `max_iterations`: a resume continues and reports it.
    Budget,
    /// `tools_hash`: a resume continues, warns and drops standing approvals.
    Tools,
    /// `model`, `system_hash`, `thinking_mode`, `reasoning_effort`: refused
    /// unless `--force`.
    Blocking,
    /// `provider`: refused.
    Hard,
}

/// One changed field. Hashed fields carry no values: `from`/`to` are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The field's key in the fingerprint.
    pub field: &'static str,
    /// What its change does to a resume.
    pub class: Class,
    /// The field is a hash: its values are not shown.
    pub hashed: bool,
    /// The old value as text, `"none"` when empty; `None` for a hash.
    pub from: Option<String>,
    /// The new value, as `from` shows the old.
    pub to: Option<String>,
}

/// What a resume with the second fingerprint would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// No field differs.
    #[serde(rename = "identical")]
    Identical,
    /// Only budget or tools fields differ: a resume continues and warns.
    #[serde(rename = "continues with warnings")]
    Warnings,
    /// A blocking field differs: a resume needs `--force`.
    #[serde(rename = "refused unless --force")]
    RefusedUnlessForce,
    /// A hard field differs: no resume.
    #[serde(rename = "refused")]
    Refused,
}

impl Verdict {
    /// The verdict as `fingerprint diff` prints it (and its JSON spells it).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::Warnings => "continues with warnings",
            Verdict::RefusedUnlessForce => "refused unless --force",
            Verdict::Refused => "refused",
        }
    }
    /// Whether a resume proceeds (with `force` given or not).
    pub fn proceeds(self, force: bool) -> bool {
        match self {
            Verdict::Identical | Verdict::Warnings => true,
            Verdict::RefusedUnlessForce => force,
            Verdict::Refused => false,
        }
    }
}

/// Two fingerprints compared: every changed field and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// The fields that differ, in SPEC order.
    pub changes: Vec<Change>,
    /// What a resume would do: decided by the worst class changed.
    pub verdict: Verdict,
}

fn shown(s: &str) -> String {
    if s.is_empty() {
        "none".to_owned()
    } else {
        s.to_owned()
    }
}

/// Compare the run's fingerprint `a` with the one a resume would use `b`.
/// # Examples
///
/// ```
/// use journal::fingerprint::{diff, Class, Verdict};
/// use journal::record::Fingerprint;
///
/// let run = Fingerprint { model: "m1".into(), max_tokens: 1000, ..Fingerprint::default() };
///
/// // A budget change: the resume continues, with the change reported.
/// let bigger = Fingerprint { max_tokens: 2000, ..run.clone() };
/// let d = diff(&run, &bigger);
/// assert_eq!(d.verdict, Verdict::Warnings);
/// assert_eq!(d.changes.first().map(|c| (c.field, c.class)), Some(("max_tokens", Class::Budget)));
///
/// // Another model: refused unless forced.
/// let other = Fingerprint { model: "m2".into(), ..run.clone() };
/// let v = diff(&run, &other).verdict;
/// assert_eq!(v.as_str(), "refused unless --force");
/// assert!(!v.proceeds(false) && v.proceeds(true));
/// ```
pub fn diff(a: &Fingerprint, b: &Fingerprint) -> Diff {
    let mut changes = Vec::new();
    let mut text = |field, class, x: &str, y: &str| {
        if x != y {
            changes.push(Change {
                field,
                class,
                hashed: false,
                from: Some(shown(x)),
                to: Some(shown(y)),
            });
        }
    };
    text("provider", Class::Hard, &a.provider, &b.provider);
    text("model", Class::Blocking, &a.model, &b.model);
    text(
        "thinking_mode",
        Class::Blocking,
        &a.thinking_mode,
        &b.thinking_mode,
    );
    // A missing reasoning_effort reads as empty: they are equal.
    text(
        "reasoning_effort",
        Class::Blocking,
        &a.reasoning_effort,
        &b.reasoning_effort,
    );
    for (field, class, x, y) in [
        (
            "system_hash",
            Class::Blocking,
            &a.system_hash,
            &b.system_hash,
        ),
        ("tools_hash", Class::Tools, &a.tools_hash, &b.tools_hash),
    ] {
        if x != y {
            changes.push(Change {
                field,
                class,
                hashed: true,
                from: None,
                to: None,
            });
        }
    }
    for (field, x, y) in [
        ("max_tokens", a.max_tokens, b.max_tokens),
        ("max_iterations", a.max_iterations, b.max_iterations),
    ] {
        if x != y {
            changes.push(Change {
                field,
                class: Class::Budget,
                hashed: false,
                from: Some(x.to_string()),
                to: Some(y.to_string()),
            });
        }
    }
    let verdict = match changes.iter().map(|c| c.class).max() {
        None => Verdict::Identical,
        Some(Class::Budget | Class::Tools) => Verdict::Warnings,
        Some(Class::Blocking) => Verdict::RefusedUnlessForce,
        Some(Class::Hard) => Verdict::Refused,
    };
    Diff { changes, verdict }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors computed independently with Python's hashlib over
    // json.dumps(value, separators=(",", ":"), ensure_ascii=False) with
    // "<", ">", "&" replaced by \u003c, \u003e, \u0026 and InputSchema keys
    // sorted: `journal/tests/fingerprint_vectors.py`.
    const SYSTEM_ONE: &str = "You are a careful operator.";
    const SYSTEM_ONE_HASH: &str =
        "86084baa5f2d2ed45dc5f5ba9b9dcbfa881297463698772fa4b06f51f17397ec";
    const SYSTEM_HTML_HASH: &str =
        "74c82f172b5b23cda01ad9d8291a24ce0f40b103ffcb9e371b5b2753e69b4aeb";
    const SYSTEM_NIL_HASH: &str =
        "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b";
    const TOOLS_EXEC_DEFER_HASH: &str =
        "0726a6ec3880dcf84ddaff54bd9ed90eede9a620a97632360706b38784e5c1a7";
    const TOOLS_UNKNOWN_HASH: &str =
        "a078865e9454e55243429ee6a850197605f7285b3a6f0cdd1375ee53e3d931e5";

    #[test]
    fn builtin_schemas_are_valid_json() {
        for s in [EXEC_SCHEMA, DEFER_SCHEMA, UNKNOWN_SCHEMA] {
            assert!(serde_json::from_str::<serde_json::Value>(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn system_hash_matches_independent_vectors() {
        assert_eq!(system_hash(Some(&[SYSTEM_ONE.to_owned()])), SYSTEM_ONE_HASH);
        assert_eq!(
            system_hash(Some(&["a <b> & c".to_owned(), "é\u{2028}".to_owned()])),
            SYSTEM_HTML_HASH
        );
        assert_eq!(system_hash(None), SYSTEM_NIL_HASH);
    }

    #[test]
    fn tools_hash_matches_independent_vectors() {
        assert_eq!(
            tools_hash(&["exec".to_owned(), "defer".to_owned()]),
            TOOLS_EXEC_DEFER_HASH
        );
        assert_eq!(tools_hash(&["mystery".to_owned()]), TOOLS_UNKNOWN_HASH);
        // SPEC 4: no tools is the agent's made, empty slice: `[]`, not `null`.
        assert_eq!(
            tools_hash(&[]),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
        );
    }

    #[test]
    fn tool_definitions_serialise_in_go_field_order_with_sorted_schema_keys() {
        let got = String::from_utf8(gojson::to_vec(&tool_def("exec"))).unwrap();
        assert!(got.starts_with(r#"{"Name":"exec","Description":"#), "{got}");
        assert!(
            got.contains(r#""InputSchema":{"properties":{"command":{"description":"#),
            "{got}"
        );
        assert!(
            got.ends_with(r#""required":["command"],"type":"object"},"DeferLoading":false}"#),
            "{got}"
        );
    }

    fn fp() -> Fingerprint {
        Fingerprint {
            provider: "script".into(),
            model: "m".into(),
            system_hash: "s".into(),
            tools_hash: "t".into(),
            thinking_mode: "off".into(),
            reasoning_effort: String::new(),
            max_tokens: 10,
            max_iterations: 5,
            ..Fingerprint::default()
        }
    }

    #[test]
    fn each_class_gives_its_verdict() {
        let a = fp();
        assert_eq!(diff(&a, &a).verdict, Verdict::Identical);
        let mut b = fp();
        b.max_tokens = 20;
        assert_eq!(diff(&a, &b).verdict, Verdict::Warnings);
        b.tools_hash = "u".into();
        assert_eq!(diff(&a, &b).verdict, Verdict::Warnings);
        b.reasoning_effort = "high".into();
        let d = diff(&a, &b);
        assert_eq!(d.verdict, Verdict::RefusedUnlessForce);
        let re = d
            .changes
            .iter()
            .find(|c| c.field == "reasoning_effort")
            .unwrap();
        assert_eq!(
            (re.from.as_deref(), re.to.as_deref()),
            (Some("none"), Some("high"))
        );
        let th = d.changes.iter().find(|c| c.field == "tools_hash").unwrap();
        assert!(th.hashed && th.from.is_none() && th.to.is_none());
        b.provider = "other".into();
        assert_eq!(diff(&a, &b).verdict, Verdict::Refused);
        assert!(!Verdict::Refused.proceeds(true));
        assert!(Verdict::RefusedUnlessForce.proceeds(true));
        assert!(!Verdict::RefusedUnlessForce.proceeds(false));
    }
}
