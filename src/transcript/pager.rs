//! Line output on a terminal goes through `$PAGER` (`less -FRX` when it is
//! unset), as git does; an empty `PAGER` means none. Coloured output tells
//! less `-R` (through `LESS`) so its colour codes show as colour.

use std::io::{self, Write};
use std::process::{Command, Stdio};

/// Run `print` with its output going to the pager, or straight to `out`
/// when there is none or it cannot be started. A pager that quits before
/// the end (the operator pressed `q`) is not an error. One that names no
/// program is said and passed over: the text goes straight to `out`, so a
/// transcript is never lost to a broken `PAGER`; one that fails once
/// started is said after it. With `color` the pager's `LESS` holds `-R`.
pub fn through(
    out: &mut dyn Write,
    color: bool,
    print: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let pager = std::env::var("PAGER").unwrap_or_else(|_| "less -FRX".to_owned());
    if pager.trim().is_empty() {
        return print(out);
    }
    let shown = crate::output::sanitize(&pager, false).into_owned();
    if !runnable(&pager) {
        eprintln!(
            "fisk-admin: warning: the pager ({shown}) names no program here; the transcript follows without it (--no-pager, or PAGER='' for none)"
        );
        return print(out);
    }
    let mut less = std::env::var("LESS").unwrap_or_else(|_| "FRX".into());
    // A `LESS` of the operator's without R would show the colour codes as
    // `ESC[32m` text: -R added (a PAGER of `less` alone reads LESS too).
    if color && !less.contains('R') {
        less.push_str(" -R");
    }
    let child = Command::new("sh")
        .arg("-c")
        .arg(&pager)
        .env("LESS", less)
        .stdin(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return print(out);
    };
    let result = match child.stdin.take() {
        Some(stdin) => {
            let mut w = io::BufWriter::new(stdin);
            print(&mut w).and_then(|_| w.flush())
        }
        None => Ok(()),
    };
    let status = child.wait();
    let cut_short = matches!(&result, Err(e) if e.kind() == io::ErrorKind::BrokenPipe);
    if let Ok(s) = &status {
        if matches!(s.code(), Some(126 | 127)) || (!s.success() && cut_short) {
            eprintln!(
                "fisk-admin: warning: the pager ({shown}) failed ({s}) and may not have shown it all; run again with --no-pager"
            );
        }
    }
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// Whether the pager's first word is a program the shell finds (a word
/// with `=` is an assignment before the program: not checked).
fn runnable(pager: &str) -> bool {
    let Some(first) = pager.split_whitespace().next() else {
        return false;
    };
    if first.contains('=') {
        return true;
    }
    Command::new("sh")
        .arg("-c")
        .arg("command -v -- \"$1\" >/dev/null 2>&1")
        .arg("sh")
        .arg(first)
        .stdin(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
