//! Line output on a terminal goes through `$PAGER` (`less -FRX` when it is
//! unset), as git does; an empty `PAGER` means none.

use std::io::{self, Write};
use std::process::{Command, Stdio};

/// Run `print` with its output going to the pager, or straight to `out`
/// when there is none or it cannot be started. A pager that quits before
/// the end (the operator pressed `q`) is not an error.
pub fn through(
    out: &mut dyn Write,
    print: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let pager = std::env::var("PAGER").unwrap_or_else(|_| "less -FRX".to_owned());
    if pager.trim().is_empty() {
        return print(out);
    }
    let child = Command::new("sh")
        .arg("-c")
        .arg(&pager)
        .env(
            "LESS",
            std::env::var("LESS").unwrap_or_else(|_| "FRX".into()),
        )
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
    let _ = child.wait();
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}
