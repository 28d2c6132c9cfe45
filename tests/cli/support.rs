//! Shared helpers: run the binary, make stores, parse JSON output.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fisk-admin"))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn testdata(rel: &str) -> PathBuf {
    repo().join("testdata").join(rel)
}

/// The result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))
            })
            .collect()
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Run `fisk-admin args...` with no terminal, no colour, a private HOME and
/// XDG dirs under `home`, and optional stdin.
pub fn fisk_in(home: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("spawn fisk-admin");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut s = child.stdin.take().expect("stdin");
        s.write_all(input).expect("write stdin");
    }
    child.wait_with_output().expect("wait fisk-admin").into()
}

pub fn fisk(args: &[&str]) -> Run {
    let home = tempfile::tempdir().expect("tempdir");
    fisk_in(home.path(), args, None)
}

/// Copy a testdata state dir into a fresh temp dir with the modes a real
/// store has (0700 dir, 0600 journals); git does not keep them.
pub fn store_copy(rel: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = testdata(rel);
    for entry in std::fs::read_dir(&src).expect("read testdata dir") {
        let entry = entry.expect("entry");
        let from = entry.path();
        let to = tmp.path().join(entry.file_name());
        let ft = entry.file_type().expect("file type");
        if ft.is_symlink() {
            let target = std::fs::read_link(&from).expect("readlink");
            std::os::unix::fs::symlink(target, &to).expect("symlink");
        } else if ft.is_file() {
            std::fs::copy(&from, &to).expect("copy");
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o700))
        .expect("chmod dir");
    tmp
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
