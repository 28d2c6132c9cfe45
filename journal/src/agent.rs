//! The agent file (YAML): the parts fisk-admin reads. Unknown keys are
//! ignored so a full agent file from the Go agent loads too.

use crate::error::{Error, Result, Where};
use crate::record::{Block, Message};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
/// An agent file, as loaded: the keys fisk-admin reads, and where it came from.
pub struct AgentFile {
    /// The model settings.
    pub llm: Llm,
    /// `None` when absent or `null` (Go's nil slice; hashes as `null`).
    pub system: Option<Vec<String>>,
    /// The tools the agent may call.
    pub tools: Vec<String>,
    /// Tools whose calls run only with an operator's approval (CLI.md).
    pub gate: Vec<String>,
    /// Written as `meta.agent` on the runs it starts (absent: none).
    pub agent: Option<String>,
    /// The agent's harness settings (its session store).
    pub harness: Harness,
    /// The NATS context the agent connects with ("" for the default).
    pub nats_context: String,
    /// The agent's root directory (its `--root-dir` replaces it): the base
    /// a relative store directory resolves under, and the file store's
    /// parent (`<root>/runs`) when the file names no directory.
    pub root_directory: String,
    /// The directory the file was read from: relative paths resolve here.
    #[serde(skip)]
    pub base: PathBuf,
    #[serde(skip)]
    /// The file's path, as given.
    pub path: PathBuf,
    /// The file's text, to point at the line of a field in messages.
    #[serde(skip)]
    pub text: String,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
/// The `llm` section: which model, and how it is driven.
pub struct Llm {
    /// The model provider.
    pub provider: String,
    /// The model's name.
    pub model: String,
    /// The turns file a scripted provider answers from.
    pub script: String,
    /// `off`/unset, or anything else meaning on (recorded as `summarized`).
    pub thinking: Option<serde_norway::Value>,
    /// The reasoning effort asked of the model ("" when not set).
    pub reasoning_effort: String,
    /// The token and iteration limits.
    pub budget: Budget,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
/// The `llm.budget` section.
pub struct Budget {
    /// The most tokens a run may use (0: no limit).
    pub max_tokens: i64,
    /// The most iterations a run may take (0: no limit).
    pub max_iterations: i64,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
/// The `harness` section.
pub struct Harness {
    /// The session store settings, when given.
    pub sessions: Option<Sessions>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
/// The `harness.sessions` section: the store the agent's runs go to.
pub struct Sessions {
    /// The backend: `file` or `jetstream`.
    pub backend: String,
    /// The backend's settings.
    pub options: SessionOptions,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
/// The `harness.sessions.options` section.
pub struct SessionOptions {
    /// The file store's directory.
    pub directory: String,
    /// The JetStream store's stream.
    pub stream: String,
}

impl AgentFile {
    /// Read and parse the agent file at `path`.
    pub fn load(path: &Path) -> Result<AgentFile> {
        let text = crate::bounded::read_string(path, crate::bounded::SETTINGS).map_err(|e| {
            Error::Config {
                at: Where::Path(path.to_path_buf()),
                message: format!("cannot read the agent file: {e}"),
            }
        })?;
        let mut a: AgentFile = serde_norway::from_str(&text).map_err(|e| {
            let at = e
                .location()
                .map(|l| format!("line {} column {}: ", l.line(), l.column()))
                .unwrap_or_default();
            Error::Config {
                at: Where::Path(path.to_path_buf()),
                message: format!("{at}{e}"),
            }
        })?;
        a.path = path.to_path_buf();
        a.text = text;
        a.base = path
            .parent()
            .map(Path::to_path_buf)
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(a)
    }

    /// A path from the file, relative to the file's directory.
    pub fn resolve(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// Thinking on? `off`, `false`, empty or unset mean off.
    pub(crate) fn thinking_on(&self) -> bool {
        match &self.llm.thinking {
            None | Some(serde_norway::Value::Null) => false,
            Some(serde_norway::Value::Bool(b)) => *b,
            Some(serde_norway::Value::String(s)) => !matches!(
                s.trim().to_ascii_lowercase().as_str(),
                "" | "off" | "false" | "none"
            ),
            Some(_) => true,
        }
    }
}

/// The agent's root directory, and what set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Absolute.
    pub dir: PathBuf,
    /// `--root-dir`, or `root_directory in FILE`.
    pub from: String,
}

/// The agent's root directory, as the agent settles it: the `--root-dir`
/// flag (made absolute against the working directory) replaces the agent
/// file's `root_directory`, which must itself be absolute (a file has no
/// working directory to resolve against: the agent refuses a relative
/// one). Either must name an existing directory. `None`: no root, and the
/// store is where it would be without one.
pub fn root(flag: Option<&Path>, file: Option<&AgentFile>) -> Result<Option<Root>> {
    let (dir, from) = match (flag, file) {
        (Some(d), _) => {
            let abs = match d.is_absolute() {
                true => d.to_path_buf(),
                false => std::env::current_dir()
                    .map_err(|e| {
                        Error::Usage(format!(
                            "--root-dir {}: the working directory cannot be read to resolve it: {e}",
                            crate::shell::shown(d)
                        ))
                    })?
                    .join(d),
            };
            (tidy(&abs), "--root-dir".to_owned())
        }
        (None, Some(a)) if !a.root_directory.is_empty() => {
            let d = Path::new(&a.root_directory);
            if !d.is_absolute() {
                return Err(a.field_error(
                    "root_directory",
                    format!(
                        "must be an absolute path, got {:?} (the agent refuses a relative one too); write it absolute, or give --root-dir DIR",
                        a.root_directory
                    ),
                ));
            }
            (
                tidy(d),
                format!("root_directory in {}", crate::shell::shown(&a.path)),
            )
        }
        _ => return Ok(None),
    };
    let problem = match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some("is not a directory"),
        Err(_) => Some("does not exist"),
    };
    if let Some(p) = problem {
        let message = format!(
            "the root directory {} ({from}) {p}: the agent refuses to start with it",
            crate::shell::shown(&dir)
        );
        return Err(match (flag, file) {
            (None, Some(a)) => Error::Config {
                at: Where::Path(a.path.clone()),
                message,
            },
            _ => Error::Usage(message),
        });
    }
    Ok(Some(Root { dir, from }))
}

/// `p` with its `.` components dropped (`././runs` is `./runs`), as
/// `Path::components` reads it; `..` is kept, as a link may make it mean
/// something other than the parent.
pub fn tidy(p: &Path) -> PathBuf {
    p.components().collect()
}

impl AgentFile {
    /// The file store's directory this file names (`harness.sessions`
    /// with the file backend), as the agent places it: an absolute
    /// `options.directory` as written; a relative one under the root when
    /// there is one, else beside this file; no directory: `<root>/runs`,
    /// else `None` (the default store).
    pub(crate) fn file_store_dir(&self, root: Option<&Root>) -> Option<PathBuf> {
        let dir = self
            .harness
            .sessions
            .as_ref()
            .map(|s| s.options.directory.as_str())
            .unwrap_or("");
        match (dir, root) {
            ("", Some(r)) => Some(r.dir.join("runs")),
            ("", None) => None,
            (d, _) if Path::new(d).is_absolute() => Some(tidy(Path::new(d))),
            (d, Some(r)) => Some(tidy(&r.dir.join(d))),
            (d, None) => Some(tidy(&self.resolve(d))),
        }
    }
}

impl AgentFile {
    /// An error about `field` (dotted path), naming the file and the line
    /// where the field's key appears (the first line that starts with it).
    pub(crate) fn field_error(&self, field: &str, message: impl Into<String>) -> Error {
        let key = field.rsplit('.').next().unwrap_or(field);
        let line = self
            .text
            .lines()
            .position(|l| {
                let t = l
                    .trim_start()
                    .trim_start_matches("- ")
                    .trim_start_matches('{');
                t.starts_with(&format!("{key}:")) || l.contains(&format!(" {key}:"))
            })
            .map(|i| format!("line {}: ", i + 1))
            .unwrap_or_default();
        Error::Config {
            at: Where::Path(self.path.clone()),
            message: format!("{line}field `{field}`: {}", message.into()),
        }
    }

    /// Check what the minimal runner needs: the `script` provider, a turns
    /// file, a model, sane budgets.
    pub(crate) fn check_runnable(&self) -> Result<()> {
        if self.llm.provider != "script" {
            return Err(self.field_error(
                "llm.provider",
                format!(
                    "{:?} is not available here: fisk-admin's minimal runner has only the built-in `script` provider",
                    self.llm.provider
                ),
            ));
        }
        if self.llm.script.is_empty() {
            return Err(self.field_error(
                "llm.script",
                "missing: name the turns file (JSON lines), relative to this file",
            ));
        }
        if self.llm.model.is_empty() {
            return Err(self.field_error("llm.model", "missing: name the model"));
        }
        if self.llm.budget.max_tokens < 0 {
            return Err(self.field_error("llm.budget.max_tokens", "must be >= 0 (0: no limit)"));
        }
        if self.llm.budget.max_iterations < 0 {
            return Err(self.field_error("llm.budget.max_iterations", "must be >= 0 (0: no limit)"));
        }
        if let Some(t) = self.gate.iter().find(|t| !self.tools.contains(t)) {
            return Err(self.field_error(
                "gate",
                format!(
                    "{t:?} is not one of the tools ({}): a gate names a tool the agent has",
                    self.tools.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// The turns file named by `llm.script`.
    pub(crate) fn script_path(&self) -> PathBuf {
        self.resolve(&self.llm.script)
    }
}

/// One scripted model answer (CLI.md, the turns file).
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptTurn {
    /// The assistant message the model answers with.
    pub message: Message,
    /// Why the model stopped.
    pub stop_reason: String,
    /// Input tokens the turn counts.
    pub in_tokens: i64,
    /// Output tokens the turn counts.
    pub out_tokens: i64,
    /// 1-based line in the turns file, for messages.
    pub line: usize,
}

impl ScriptTurn {
    /// Whether the answer calls a tool.
    pub(crate) fn has_tool_use(&self) -> bool {
        self.message.tool_use_ids().next().is_some()
    }
}

/// Read a turns file: one JSON object per line (blank lines are skipped),
/// `{"message": <assistant message>, "stop_reason"?, "in_tokens"?,
/// "out_tokens"?}`. Errors name the file, the line and the field.
pub(crate) fn load_turns(path: &Path) -> Result<Vec<ScriptTurn>> {
    let text = crate::bounded::read_string(path, crate::bounded::RECORDS)
        .map_err(|e| Error::io(path, e))?;
    let mut turns = Vec::new();
    let mut ids = std::collections::HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |field: &str, message: String| Error::Config {
            at: Where::Path(path.to_path_buf()),
            message: format!("line {line}: {field}{message}"),
        };
        if raw.trim().is_empty() {
            continue;
        }
        // Values are kept raw so a tool_use input reaches the journal verbatim.
        let obj: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_str(raw).map_err(|e| {
                bad(
                    "",
                    format!("not a JSON object ({e}); a turn is {{\"message\": ..., \"stop_reason\": ..., \"in_tokens\": N, \"out_tokens\": N}}"),
                )
            })?;
        let value = |key: &str| -> serde_json::Value {
            obj.get(key)
                .and_then(|r| serde_json::from_str(r.get()).ok())
                .unwrap_or(serde_json::Value::Null)
        };
        let int = |key: &str| -> Result<i64> {
            match value(key) {
                serde_json::Value::Null => Ok(0),
                n => n.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                    bad(
                        &format!("field `{key}`: "),
                        "must be an integer >= 0".into(),
                    )
                }),
            }
        };
        let stop_reason = match value("stop_reason") {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s,
            _ => return Err(bad("field `stop_reason`: ", "must be a string".into())),
        };
        let message: Message = match obj.get("message").filter(|m| m.get() != "null") {
            None => {
                return Err(bad(
                    "field `message`: ",
                    "missing: the assistant message of this turn".into(),
                ))
            }
            Some(m) => serde_json::from_str(m.get())
                .map_err(|e| bad("field `message`: ", e.to_string()))?,
        };
        if message.role != "assistant" {
            return Err(bad(
                "field `message.role`: ",
                format!(
                    "{:?}: a turn is the model's answer, role \"assistant\"",
                    message.role
                ),
            ));
        }
        for (b, block) in message.blocks().iter().enumerate() {
            if let Block::ToolUse(t) = block {
                let field = format!("field `message.content[{b}].tool_use");
                if t.id.is_empty() || t.name.is_empty() {
                    return Err(bad(
                        &format!("{field}`: "),
                        "needs a non-empty id and name".into(),
                    ));
                }
                if let Some(first) = ids.insert(t.id.clone(), line) {
                    return Err(bad(
                        &format!("{field}.id`: "),
                        format!("{:?} is already used on line {first}; tool_use ids must be unique in a run", t.id),
                    ));
                }
            }
        }
        turns.push(ScriptTurn {
            message,
            stop_reason,
            in_tokens: int("in_tokens")?,
            out_tokens: int("out_tokens")?,
            line,
        });
    }
    Ok(turns)
}
