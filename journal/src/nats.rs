//! Connecting to NATS the way the `nats` CLI does: a context file chosen by
//! `--context`, the agent file's `nats_context`, `NATS_CONTEXT` or the
//! selected context in `context.txt`, then the direct settings (`--server`,
//! `--creds`, `--user`, `--password`, `--token`) on top.
//!
//! Every connection is bounded in time: a connect that cannot reach the
//! server, is refused its credentials, or finds no JetStream fails within a
//! few seconds with an error naming the server, never a hang.

use crate::error::{Error, Result, Where};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a connect may take before it is an error.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one request (a JetStream API call, a publish ack) may take.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Commands the client buffers before a send waits (async-nats: 2,048).
/// While the connection is down, unsent publishes wait here, and a full
/// buffer blocks every request behind them: it must stay well above the
/// publishes a pipeline keeps unacknowledged.
pub(crate) const CLIENT_CAPACITY: usize = 8192;

/// The settings given on the command line; each overrides the context.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--context`: the context to use, by name or path.
    pub context: Option<String>,
    /// `--server`: server URLs, comma-separated.
    pub server: Option<String>,
    /// `--creds`: a credentials file.
    pub creds: Option<PathBuf>,
    /// `--user`.
    pub user: Option<String>,
    /// `--password`.
    pub password: Option<String>,
    /// `--token`.
    pub token: Option<String>,
}

/// A `nats` CLI context file (`~/.config/nats/context/NAME.json`): the keys
/// fisk-admin uses. Unknown keys are ignored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ContextFile {
    /// What the context is for.
    pub description: String,
    /// Server URLs, comma-separated.
    pub url: String,
    /// User name.
    pub user: String,
    /// Password.
    pub password: String,
    /// Authentication token.
    pub token: String,
    /// Credentials file path.
    pub creds: String,
    /// NKey seed file path.
    pub nkey: String,
    /// TLS client certificate path.
    pub cert: String,
    /// TLS client key path.
    pub key: String,
    /// TLS CA certificate path.
    pub ca: String,
    /// Start TLS before the NATS handshake.
    pub tls_first: bool,
    /// JetStream domain.
    pub jetstream_domain: String,
    /// JetStream API prefix.
    pub jetstream_api_prefix: String,
}

/// Everything needed to connect, after the context and the flags are merged.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Server URLs with any credentials taken out of them.
    pub servers: Vec<String>,
    /// User name.
    pub user: Option<String>,
    /// Password.
    pub password: Option<String>,
    /// Authentication token.
    pub token: Option<String>,
    /// Credentials file.
    pub creds: Option<PathBuf>,
    /// NKey seed file.
    pub nkey: Option<PathBuf>,
    /// TLS client certificate.
    pub cert: Option<PathBuf>,
    /// TLS client key.
    pub key: Option<PathBuf>,
    /// TLS CA certificate.
    pub ca: Option<PathBuf>,
    /// Start TLS before the NATS handshake.
    pub tls_first: bool,
    /// JetStream domain.
    pub jetstream_domain: Option<String>,
    /// JetStream API prefix.
    pub jetstream_api_prefix: Option<String>,
    /// The context used, and what chose it.
    pub context: Option<(String, String)>,
}

impl Settings {
    /// The servers for messages: "nats://a:4222, nats://b:4222".
    pub fn server_list(&self) -> String {
        self.servers.join(", ")
    }

    /// Where the context came from, for `info`.
    pub fn context_description(&self) -> Option<String> {
        self.context
            .as_ref()
            .map(|(name, why)| format!("{name} ({why})"))
    }
}

/// The directory of the `nats` CLI's configuration.
fn nats_config_dir() -> Option<PathBuf> {
    crate::paths::config_home().map(|c| c.join("nats"))
}

/// The context file for `name`.
pub(crate) fn context_path(name: &str) -> Result<PathBuf> {
    if name.is_empty()
        || name.contains(['/', '\\'])
        || name.starts_with('.')
        || name.chars().any(char::is_control)
    {
        return Err(Error::Usage(format!(
            "NATS context name {name:?} is not valid: a context is a file name under ~/.config/nats/context"
        )));
    }
    let dir = nats_config_dir().ok_or_else(|| {
        Error::Usage("neither XDG_CONFIG_HOME nor HOME is set: cannot find NATS contexts".into())
    })?;
    Ok(dir.join("context").join(format!("{name}.json")))
}

/// The names of the saved contexts, sorted.
pub(crate) fn known_contexts() -> Vec<String> {
    let Some(dir) = nats_config_dir().map(|d| d.join("context")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".json").map(str::to_owned)
        })
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Load a context file by name.
pub fn load_context(name: &str) -> Result<ContextFile> {
    let path = context_path(name)?;
    let text = match crate::bounded::read_string(&path, crate::bounded::SETTINGS) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let known = known_contexts();
            let listed = match known.is_empty() {
                true => "there are none".to_owned(),
                false => format!("the contexts there are {}", known.join(", ")),
            };
            return Err(Error::Config {
                at: Where::Path(path),
                message: format!(
                    "NATS context {name:?} does not exist ({listed}); create it with `nats context save {name} --server URL`, or give the server instead"
                ),
            });
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    serde_json::from_str(&text).map_err(|e| Error::Config {
        at: Where::Path(path),
        message: context_error(&e),
    })
}

/// Why a context file does not parse, without its values: serde_json's
/// message quotes a value of the wrong type (`invalid type: integer
/// `12345``), and a context file holds passwords and tokens (issue 18).
fn context_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Data => "a field holds a value of the wrong type (a string where text is meant, say); the value is not shown, as a context file holds secrets",
        Category::Syntax | Category::Eof => "it is not JSON",
        Category::Io => "it could not be read",
    };
    format!(
        "not a valid NATS context file: {what} (line {}, column {})",
        e.line(),
        e.column()
    )
}

/// The context to use: the flag, then the agent file, then `NATS_CONTEXT`,
/// then the selection in `context.txt`; none means the defaults.
fn choose_context(flag: Option<&str>, agent: Option<&str>) -> Option<(String, String)> {
    if let Some(n) = flag.filter(|n| !n.is_empty()) {
        return Some((n.to_owned(), "--context".into()));
    }
    if let Some(n) = agent.filter(|n| !n.is_empty()) {
        return Some((n.to_owned(), "nats_context in the agent file".into()));
    }
    if let Some(n) = std::env::var("NATS_CONTEXT").ok().filter(|n| !n.is_empty()) {
        return Some((n, "NATS_CONTEXT".into()));
    }
    let selected = nats_config_dir()?.join("context.txt");
    let name = std::fs::read_to_string(selected).ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| (name.to_owned(), "selected in context.txt".into()))
}

/// A URL with any `user:password@` or `token@` taken out (async-nats
/// ignores credentials written into a URL).
#[derive(Debug, PartialEq, Eq)]
pub struct ParsedUrl {
    /// The URL without credentials.
    pub url: String,
    /// The user written into it.
    pub user: Option<String>,
    /// The password written into it.
    pub password: Option<String>,
    /// The token written into it.
    pub token: Option<String>,
}

/// Split the credentials out of a server URL.
pub fn split_url(raw: &str) -> ParsedUrl {
    let raw = raw.trim();
    let (scheme, rest) = match raw.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, raw),
    };
    let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(host_end);
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let url = match scheme {
        Some(s) => format!("{s}://{host}{path}"),
        None => format!("{host}{path}"),
    };
    let decode = |s: &str| percent_decode(s);
    let (user, password, token) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((user, pass)) => (Some(decode(user)), Some(decode(pass)), None),
            None => (None, None, Some(decode(u))),
        },
        None => (None, None, None),
    };
    ParsedUrl {
        url,
        user,
        password,
        token,
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or_default();
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Merge the context (if any) and the flags into connection settings.
pub fn resolve(o: &Overrides, agent_context: Option<&str>) -> Result<Settings> {
    let chosen = choose_context(o.context.as_deref(), agent_context);
    let ctx = match &chosen {
        Some((name, _)) => load_context(name)?,
        None => ContextFile::default(),
    };
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let path = |s: &str| nonempty(s).map(|p| expand_home(&p));

    let urls = o
        .server
        .clone()
        .or_else(|| nonempty(&ctx.url))
        .unwrap_or_else(|| "nats://127.0.0.1:4222".into());
    let mut s = Settings {
        user: nonempty(&ctx.user),
        password: nonempty(&ctx.password),
        token: nonempty(&ctx.token),
        creds: path(&ctx.creds),
        nkey: path(&ctx.nkey),
        cert: path(&ctx.cert),
        key: path(&ctx.key),
        ca: path(&ctx.ca),
        tls_first: ctx.tls_first,
        jetstream_domain: nonempty(&ctx.jetstream_domain),
        jetstream_api_prefix: nonempty(&ctx.jetstream_api_prefix),
        context: chosen,
        ..Settings::default()
    };
    let mut url_creds = None;
    for u in urls.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        let p = split_url(u);
        if url_creds.is_none() && (p.user.is_some() || p.token.is_some()) {
            url_creds = Some((p.user.clone(), p.password.clone(), p.token.clone()));
        }
        s.servers.push(p.url);
    }
    if s.servers.is_empty() {
        return Err(Error::Usage(format!(
            "no NATS server in {urls:?}: a server URL looks like nats://HOST:4222"
        )));
    }
    // Credentials in a URL count as given with that URL.
    if let Some((user, password, token)) = url_creds {
        if user.is_some() {
            s.user = user;
            s.password = password;
            s.token = None;
        } else {
            s.token = token;
            s.user = None;
            s.password = None;
        }
    }
    // Direct flags win over everything.
    if let Some(u) = &o.user {
        s.user = Some(u.clone());
        s.token = None;
    }
    if let Some(p) = &o.password {
        s.password = Some(p.clone());
    }
    if let Some(t) = &o.token {
        s.token = Some(t.clone());
        s.user = None;
        s.password = None;
    }
    if let Some(c) = &o.creds {
        s.creds = Some(c.clone());
        s.nkey = None;
    }
    Ok(s)
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(p),
    }
}

/// The NATS user a connection with `s` authenticates as, for the audit
/// log (issue 38): the user name given; else the user a credentials file's
/// JWT names (its `name`, else its subject, the user's public key); else
/// the public key of the nkey seed given (what the server authorizes);
/// else none (a token or no authentication names no user the client can
/// read).
pub fn user_of(s: &Settings) -> Option<String> {
    if let Some(u) = s.user.as_deref().filter(|u| !u.is_empty()) {
        return Some(u.to_owned());
    }
    if let Some(n) = s.nkey.as_deref() {
        let seed = crate::bounded::read_string(n, crate::bounded::SECRET).ok()?;
        return nkeys::KeyPair::from_seed(seed.trim())
            .ok()
            .map(|k| k.public_key());
    }
    let creds = s.creds.as_deref()?;
    let text = crate::bounded::read_path(creds, crate::bounded::SECRET).ok()?;
    let text = String::from_utf8_lossy(&text);
    let jwt = text
        .lines()
        .skip_while(|l| !l.contains("BEGIN NATS USER JWT"))
        .nth(1)?
        .trim();
    let claims = jwt.split('.').nth(1)?;
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(claims.trim_end_matches('='))
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    ["name", "sub"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()).filter(|x| !x.is_empty()))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_of_a_connection_is_its_user_name_or_its_nkeys_public_key() {
        let dir = tempfile::tempdir().unwrap();
        let key = nkeys::KeyPair::new_user();
        let seed = dir.path().join("user.nk");
        std::fs::write(&seed, format!("{}\n", key.seed().unwrap())).unwrap();
        let mut s = Settings {
            nkey: Some(seed.clone()),
            ..Default::default()
        };
        assert_eq!(user_of(&s), Some(key.public_key()));
        s.user = Some("ops".into());
        assert_eq!(user_of(&s).as_deref(), Some("ops"));
        // A token names no user; a seed that is none names none either.
        std::fs::write(&seed, "not a seed").unwrap();
        s.user = None;
        assert_eq!(user_of(&s), None);
        let t = Settings {
            token: Some("t".into()),
            ..Default::default()
        };
        assert_eq!(user_of(&t), None);
    }

    #[test]
    fn a_context_file_of_the_wrong_shape_is_refused_without_echoing_its_values() {
        for text in [
            r#"{"url": "nats://x", "password": 91827364}"#,
            r#"{"token": ["s3cr3t-token"]}"#,
            r#"{"nkey": 55512345}"#,
        ] {
            let e = serde_json::from_str::<ContextFile>(text).unwrap_err();
            let said = context_error(&e);
            for secret in ["91827364", "s3cr3t-token", "55512345"] {
                assert!(!said.contains(secret), "{said}");
            }
            assert!(
                said.contains("wrong type") && said.contains("line 1"),
                "{said}"
            );
        }
    }

    #[test]
    fn credentials_in_a_url_are_taken_out() {
        let p = split_url("nats://al%40x:s3cret@host:4222");
        assert_eq!(p.url, "nats://host:4222");
        assert_eq!(p.user.as_deref(), Some("al@x"));
        assert_eq!(p.password.as_deref(), Some("s3cret"));
        let p = split_url("tls://tok@h:1");
        assert_eq!(p.url, "tls://h:1");
        assert_eq!(p.token.as_deref(), Some("tok"));
        let p = split_url("localhost:4222");
        assert_eq!(p.url, "localhost:4222");
        assert_eq!(p.user, None);
    }

    #[test]
    fn context_names_cannot_escape_the_context_directory() {
        for bad in ["", "../x", "a/b", ".hidden"] {
            assert!(context_path(bad).is_err(), "{bad:?}");
        }
    }
}
