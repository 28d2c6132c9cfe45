//! `man [DIR]`: write the man pages generated from the clap definitions.
//! The committed pages in `man/` are checked against these by a test.

use crate::cli::ManArgs;
use crate::error::{CmdResult, Failure};
use std::io::Write;
use std::process::ExitCode;

/// The sections clap does not know (b-28): what the environment sets, the
/// exit status, the files.
const TOP_SECTIONS: &str = r#".SH ENVIRONMENT
.TP
\fBFISK_ADMIN_STORE\fR
The store, as \fB--store\fR (\fIfile:DIR\fR or \fIjetstream:STREAM\fR); a flag wins.
.TP
\fBNATS_URL\fR, \fBNATS_USER\fR, \fBNATS_PASSWORD\fR, \fBNATS_TOKEN\fR, \fBNATS_CREDS\fR, \fBNATS_CONTEXT\fR
The NATS connection, as the nats CLI reads them; flags win.
.TP
\fBXDG_STATE_HOME\fR
The default file store is \fI$XDG_STATE_HOME/fisk-ai/runs\fR (\fI~/.local/state/fisk-ai/runs\fR when unset or relative).
.TP
\fBXDG_CONFIG_HOME\fR
Where saved NATS contexts are read (\fInats/context/NAME.json\fR).
.TP
\fBNO_COLOR\fR
Set: no colour (as \fB--color never\fR).
.TP
\fBNO_TUI\fR, \fBTHINKING\fR
\fBshow --transcript\fR: line output instead of the viewer; thinking shown.
.TP
\fBPAGER\fR
The pager for line output on a terminal (\fIless -FRX\fR when unset).
.SH "EXIT STATUS"
0: done. 1: a refusal, or findings (\fBverify\fR, \fBvalidate\fR). 2: the tool could not do its job (a store that cannot be reached, a journal that cannot be read). A closed pipe is not an error.
.SH FILES
.TP
\fI$XDG_STATE_HOME/fisk-ai/runs/RUN.json\fR, \fIRUN.lock\fR
A run's journal and its lock (the file backend).
.TP
\fIRUN.removed-TIME.bak\fR, \fIRUN.torn-TIME.bak\fR
What \fBrm\fR and \fBrepair\fR keep beside the journal (mode 0600).
"#;

/// On every subcommand's page.
const SUB_SECTIONS: &str = r#".SH "EXIT STATUS"
0: done. 1: a refusal, or findings. 2: the tool could not do its job.
.SH "SEE ALSO"
\fBfisk-admin\fR(1) for the environment and the files.
"#;

/// Every page: `fisk-admin.1` and one `fisk-admin-<sub>.1` per subcommand.
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let cmd = crate::cli::command();
    let mut pages = Vec::new();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    buf.extend_from_slice(TOP_SECTIONS.as_bytes());
    pages.push(("fisk-admin.1".to_owned(), buf));
    for sub in cmd.get_subcommands() {
        let name = format!("fisk-admin-{}", sub.get_name());
        let sub = sub.clone().name(name.clone());
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub).render(&mut buf)?;
        // clap_mangen calls the after-help EXTRA: here it is the examples
        // first (c-29).
        let text = String::from_utf8_lossy(&buf).replace(".SH EXTRA", ".SH EXAMPLES");
        let mut buf = text.into_bytes();
        buf.extend_from_slice(SUB_SECTIONS.as_bytes());
        pages.push((format!("{name}.1"), buf));
    }
    Ok(pages)
}

pub fn run(a: ManArgs, out: &mut dyn Write) -> CmdResult {
    std::fs::create_dir_all(&a.dir)
        .map_err(|e| Failure::new(format!("creating {}: {e}", a.dir.display())))?;
    for (name, bytes) in pages()? {
        let path = a.dir.join(&name);
        std::fs::write(&path, bytes)
            .map_err(|e| Failure::new(format!("writing {}: {e}", path.display())))?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
