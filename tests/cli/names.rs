//! Issue 18 item 7: file names as bytes. A name that is not UTF-8 is shown
//! as the shell word that names it (`$'bad\377.json'`), so that it can be
//! pasted to rename or remove the file, never lossily; and a journal whose
//! name is not a valid run id still owns the lock file beside it.

use crate::support::*;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `fisk-admin --state-dir DIR ARGS`, with DIR as bytes.
fn fisk_at(dir: &Path, args: &[&str]) -> Run {
    let home = tempfile::tempdir().expect("home");
    Command::new(bin())
        .arg("--state-dir")
        .arg(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "400")
        .stdin(Stdio::null())
        .output()
        .expect("run fisk-admin")
        .into()
}

/// A path under `dir` named by `bytes`.
fn named(dir: &Path, bytes: &[u8]) -> PathBuf {
    dir.join(OsStr::from_bytes(bytes))
}

/// What bash makes of `word`, a shell word this tool printed: the bytes it
/// names.
fn pasted(word: &str) -> Vec<u8> {
    let out = Command::new("bash")
        .args(["-c", &format!("printf '%s' {word}")])
        .output()
        .expect("bash");
    assert!(out.status.success(), "bash refused {word}");
    out.stdout
}

/// Every `$'...'` word in `text`.
fn escaped_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("$'") {
        let after = &rest[i + 2..];
        // The closing quote: the first one no backslash escapes.
        let mut end = None;
        let mut escaped = false;
        for (j, c) in after.char_indices() {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '\'') => {
                    end = Some(j);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else { break };
        out.push(format!("$'{}'", &after[..end]));
        rest = &after[end + 1..];
    }
    out
}

fn findings(r: &Run) -> Vec<serde_json::Value> {
    r.json_lines()
        .into_iter()
        .filter(|v| v.get("summary").is_none())
        .collect()
}

fn codes_for<'a>(found: &'a [serde_json::Value], code: &str) -> Vec<&'a str> {
    let mut v: Vec<&str> = found
        .iter()
        .filter(|f| f["code"] == code)
        .filter_map(|f| f["run"].as_str())
        .collect();
    v.sort();
    v
}

/// Regression test for issue 18 ("`orphan-lock` is reported for `X.lock`
/// when an invalid-id `X.json` sits beside it"): the lock is that
/// journal's. Names that are not UTF-8 are compared as bytes: two that
/// differ only in their invalid bytes are two names.
#[test]
fn the_lock_of_a_journal_whose_name_is_not_a_valid_id_is_not_an_orphan() {
    let store = tempfile::tempdir().expect("store");
    let d = store.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let journal = std::fs::read(testdata("runs-v1/tool-batch.json")).expect("read");
    for name in [
        &b"x y.json"[..],
        b"x y.lock",
        b"bad\xff.json",
        b"bad\xff.lock",
        b"d\xfe.json",
        b"d\xff.lock",
        b"gone.lock",
    ] {
        let p = named(d, name);
        let bytes: &[u8] = if name.ends_with(b".json") {
            &journal
        } else {
            b""
        };
        std::fs::write(&p, bytes).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let r = fisk_at(d, &["verify", "--format", "json"]);
    let found = findings(&r);
    assert_eq!(
        codes_for(&found, "invalid-id"),
        [r"$'bad\377.json'", r"$'d\376.json'", "x y.json"],
        "{}",
        r.stdout
    );
    assert_eq!(
        codes_for(&found, "orphan-lock"),
        [r"$'d\377.lock'", "gone.lock"],
        "{}",
        r.stdout
    );
}

/// Issue 18 item 7: `verify` names a file whose name is not UTF-8 by the
/// shell word that names it, in its findings and in the fix it prints:
/// pasted, the word is the file; the lossy form (U+FFFD) never appears.
#[test]
fn verify_shows_a_name_that_is_not_utf8_as_a_shell_word_that_names_it() {
    let store = tempfile::tempdir().expect("store");
    let d = store.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let name = b"bad\xff\x1b[2J.json";
    std::fs::write(named(d, name), b"{}\n").expect("write");
    std::fs::write(named(d, b"orph\xfe.lock"), b"").expect("write");
    for format in ["text", "json"] {
        let r = fisk_at(d, &["verify", "--format", format]);
        assert!(
            !r.stdout.contains('\u{fffd}'),
            "{format}: lossy:\n{}",
            r.stdout
        );
        assert_printable(format, &r.stdout);
        // In JSON, the words are inside JSON strings.
        let text = match format {
            "json" => findings(&r)
                .iter()
                .map(|f| {
                    format!(
                        "{} {}\n",
                        f["run"].as_str().unwrap_or(""),
                        f["message"].as_str().unwrap_or("")
                    )
                })
                .collect(),
            _ => r.stdout.clone(),
        };
        let words = escaped_words(&text);
        assert!(
            !words.is_empty(),
            "{format}: no escaped name:\n{}",
            r.stdout
        );
        for w in &words {
            let bytes = pasted(w);
            assert!(
                [&name[..], b"orph\xfe.lock"].contains(&bytes.as_slice()),
                "{format}: {w} names {:?}",
                OsString::from_vec(bytes)
            );
        }
    }
}

/// Issue 18 item 7: a store whose directory name is not UTF-8 is named
/// exactly wherever `ls` and `verify` name it (the problem column, the
/// empty-store line, the fix table), and the fix `verify` prints works
/// when pasted into a shell.
#[test]
fn ls_and_verify_name_a_store_directory_that_is_not_utf8_so_the_fix_can_be_pasted() {
    let top = tempfile::tempdir().expect("top");
    let d = named(top.path(), b"runs-\xff");
    std::fs::create_dir(&d).expect("store");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let empty = fisk_at(&d, &["ls"]);
    assert_eq!(empty.code, 0, "{}", empty.stderr);
    let word = escaped_words(&empty.stdout);
    assert_eq!(word.len(), 1, "{}", empty.stdout);
    assert_eq!(pasted(&word[0]), d.as_os_str().as_bytes());

    // A damaged journal, and a loose mode.
    let journal = d.join("j.json");
    std::fs::write(&journal, b"{\"seq\":1}\nnot json\n{\"seq\":3}\n").expect("write");
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let ls = fisk_at(&d, &["ls"]);
    assert!(!ls.stdout.contains('\u{fffd}'), "lossy:\n{}", ls.stdout);
    let in_ls = escaped_words(&ls.stdout);
    assert!(
        in_ls
            .iter()
            .any(|w| pasted(w) == journal.as_os_str().as_bytes()),
        "the problem does not name the journal:\n{}",
        ls.stdout
    );
    let verify = fisk_at(&d, &["verify"]);
    assert!(
        !verify.stdout.contains('\u{fffd}'),
        "lossy:\n{}",
        verify.stdout
    );
    // The closing table's fix for the mode, pasted, fixes it.
    let chmod = verify
        .stdout
        .lines()
        .find_map(|l| l.find("chmod 600 ").map(|i| l[i..].trim_end().to_owned()))
        .unwrap_or_else(|| panic!("no chmod fix:\n{}", verify.stdout));
    let chmod = chmod.split(')').next().unwrap_or(&chmod).to_owned();
    let ran = Command::new("bash")
        .args(["-c", &chmod])
        .status()
        .expect("bash");
    assert!(ran.success(), "{chmod}");
    let mode = std::fs::metadata(&journal)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{chmod} did not fix the mode");
}
