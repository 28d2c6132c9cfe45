//! The agent file (YAML): the parts fisk-admin reads. Unknown keys are
//! ignored so a full agent file from the Go agent loads too.

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct AgentFile {
    pub llm: Llm,
    pub system: Vec<String>,
    pub tools: Vec<String>,
    pub harness: Harness,
    pub nats_context: String,
    /// The directory the file was read from: relative paths resolve here.
    #[serde(skip)]
    pub base: PathBuf,
    #[serde(skip)]
    pub path: PathBuf,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Llm {
    pub provider: String,
    pub model: String,
    pub script: String,
    /// `off`/unset, or anything else meaning on (recorded as `summarized`).
    pub thinking: Option<serde_norway::Value>,
    pub reasoning_effort: String,
    pub budget: Budget,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Budget {
    pub max_tokens: i64,
    pub max_iterations: i64,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Harness {
    pub sessions: Option<Sessions>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Sessions {
    pub backend: String,
    pub options: SessionOptions,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct SessionOptions {
    pub directory: String,
    pub stream: String,
}

impl AgentFile {
    pub fn load(path: &Path) -> Result<AgentFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut a: AgentFile = serde_norway::from_str(&text).map_err(|e| {
            let at = e
                .location()
                .map(|l| format!("line {} column {}: ", l.line(), l.column()))
                .unwrap_or_default();
            Error::Config {
                path: path.to_path_buf(),
                message: format!("{at}{e}"),
            }
        })?;
        a.path = path.to_path_buf();
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
    pub fn thinking_on(&self) -> bool {
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
