//! The runner's built-in tools: `defer` (hand the call to a person: a
//! `deferred` record, never run) and `exec` (a shell command in its own
//! process group, its output capped, a timeout killing the whole group).

use crate::record::{Deferred, ToolResultBlock, ToolUseBlock};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Deserialize, Default)]
#[serde(default)]
struct DeferIn {
    note: Option<String>,
    handle: Option<String>,
}

pub(super) fn defer_record(call: &ToolUseBlock) -> Deferred {
    // A malformed input still defers: a person answers it either way, and
    // the note says what the model asked.
    let input = call.input.as_ref().map_or("null", |r| r.get());
    let (note, handle) = match serde_json::from_str::<Option<DeferIn>>(input) {
        Ok(Some(d)) => (d.note.unwrap_or_default(), d.handle.unwrap_or_default()),
        Ok(None) => (String::new(), String::new()),
        Err(_) => (format!("(input not understood: {input})"), String::new()),
    };
    Deferred {
        tool_use_id: call.id.clone(),
        tool_name: call.name.clone(),
        note,
        handle,
        kind: "builtin".into(),
        dispatched: true,
        ..Deferred::default()
    }
}

#[derive(Deserialize)]
struct ExecIn {
    command: String,
    #[serde(default)]
    timeout_s: Option<f64>,
}

/// What `exec` returns, as the result's content (JSON text).
#[derive(Serialize)]
struct ExecOut {
    stdout: String,
    stderr: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    timed_out: bool,
}

/// Each stream is kept up to this many bytes; the rest is read and dropped.
const OUTPUT_CAP: usize = 64 * 1024;

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        let mut dropped = 0usize;
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = OUTPUT_CAP.saturating_sub(kept.len());
                    let take = n.min(room);
                    kept.extend_from_slice(buf.get(..take).unwrap_or_default());
                    dropped += n - take;
                }
            }
        }
        let mut s = String::from_utf8_lossy(&kept).into_owned();
        if dropped > 0 {
            s.push_str(&format!("\n[{dropped} more bytes not kept]"));
        }
        s
    })
}

/// fisk-admin's own NATS secrets, never handed to a command the model
/// chose (it could print them into the journal with `env`).
pub const SECRET_ENV: [&str; 3] = ["NATS_PASSWORD", "NATS_TOKEN", "NATS_CREDS"];

/// The child's environment without fisk-admin's secrets: [`SECRET_ENV`]
/// removed, and `NATS_URL` kept without the userinfo (`user:password@`)
/// of any of its comma-separated URLs.
fn scrub_env(cmd: &mut Command) {
    for k in SECRET_ENV {
        cmd.env_remove(k);
    }
    if let Some(url) = std::env::var_os("NATS_URL") {
        match url.to_str().map(without_userinfo) {
            Some(clean) => {
                cmd.env("NATS_URL", clean);
            }
            // Not UTF-8: not a URL fisk-admin could have used; not passed on.
            None => {
                cmd.env_remove("NATS_URL");
            }
        }
    }
}

/// `nats://u:p@host:4222,tls://t@h2` as `nats://host:4222,tls://h2`.
pub fn without_userinfo(urls: &str) -> String {
    urls.split(',')
        .map(|u| {
            let (scheme, rest) = match u.find("://") {
                Some(at) => u.split_at(at + 3),
                None => ("", u),
            };
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, path) = rest.split_at(end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}{host}{path}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) fn exec(call: &ToolUseBlock) -> ToolResultBlock {
    let error = |content: String| ToolResultBlock {
        tool_use_id: call.id.clone(),
        content,
        is_error: true,
        ..ToolResultBlock::default()
    };
    let input = call.input.as_ref().map_or("null", |r| r.get());
    let args: ExecIn = match serde_json::from_str(input) {
        Ok(a) => a,
        Err(e) => {
            return error(format!(
                "exec needs {{\"command\": \"...\", \"timeout_s\"?: seconds}}: {e}"
            ))
        }
    };
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    // Its own process group: a Ctrl-C meant for fisk-admin (which finishes
    // the current step) does not kill the step.
    let mut sh = Command::new("sh");
    scrub_env(&mut sh);
    let spawned = sh
        .arg("-c")
        .arg(&args.command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return error(format!("could not start sh: {e}")),
    };
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let deadline = args
        .timeout_s
        .filter(|t| t.is_finite() && *t > 0.0)
        .map(|t| Instant::now() + Duration::from_secs_f64(t.min(1e9)));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            timed_out = true;
            // The whole group, so grandchildren release the pipes too.
            if let Some(group) = i32::try_from(child.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            break child.wait();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    let status = match status {
        Ok(s) => s,
        Err(e) => return error(format!("waiting for the command: {e}")),
    };
    let result = ExecOut {
        stdout,
        stderr,
        exit_status: status.code(),
        signal: status.signal(),
        timed_out,
    };
    ToolResultBlock {
        tool_use_id: call.id.clone(),
        content: String::from_utf8_lossy(&crate::gojson::to_vec(&result)).into_owned(),
        is_error: !status.success() || timed_out,
        ..ToolResultBlock::default()
    }
}

#[cfg(test)]
mod tests {
    use super::without_userinfo;

    #[test]
    fn a_url_loses_its_userinfo_and_keeps_the_rest() {
        assert_eq!(
            without_userinfo("nats://u:p@host:4222,tls://tok@h2/x, nats://plain:1"),
            "nats://host:4222,tls://h2/x, nats://plain:1"
        );
        assert_eq!(without_userinfo("u:p@host"), "host");
        assert_eq!(without_userinfo("nats://a@b@host"), "nats://host");
        assert_eq!(without_userinfo(""), "");
    }
}
