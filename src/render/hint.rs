//! Commands printed for an operator to paste: they carry the store and
//! connection flags of this invocation (never a password or token: those
//! stay in the environment or the context), shell-quoted where needed.

use crate::cli::Global;
use crate::output::sanitize;

/// The default `--hold` (CLI.md): left out of a hint when unchanged.
const DEFAULT_HOLD_SECS: u64 = 600;

/// `s` as one shell word: as is when it holds only characters no shell
/// treats specially, else single-quoted. Control characters are made
/// visible first (the hint is printed on a terminal).
pub fn quote(s: &str) -> String {
    let s = sanitize(s, false);
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=+@%,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.into_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// ` --state-dir DIR --context C ...`: the flags that chose the store and
/// the connection, each with a leading space; empty when none were given.
pub fn store_flags(g: &Global) -> String {
    let mut out = String::new();
    let mut flag = |name: &str, v: &str| {
        out.push_str(&format!(" --{name} {}", quote(v)));
    };
    if let Some(d) = &g.state_dir {
        flag("state-dir", &d.to_string_lossy());
    }
    if let Some(s) = &g.store {
        flag("store", s);
    }
    if let Some(c) = &g.config {
        flag("config", &c.to_string_lossy());
    }
    if let Some(c) = &g.context {
        flag("context", c);
    }
    if let Some(s) = &g.server {
        flag("server", s);
    }
    if let Some(c) = &g.creds {
        flag("creds", &c.to_string_lossy());
    }
    if let Some(u) = &g.user {
        flag("user", u);
    }
    if g.hold.as_secs() != DEFAULT_HOLD_SECS {
        flag("hold", &format!("{}s", g.hold.as_secs()));
    }
    out
}

/// `fisk-admin <store flags> <args>`.
pub fn command(g: &Global, args: &[&str]) -> String {
    let words: Vec<String> = args.iter().map(|a| quote(a)).collect();
    format!("fisk-admin{} {}", store_flags(g), words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn global(args: &[&str]) -> Global {
        let mut all = vec!["fisk-admin"];
        all.extend_from_slice(args);
        all.push("info");
        crate::cli::Cli::parse_from(all).global
    }

    #[test]
    fn a_hint_carries_the_store_flags_but_never_a_secret() {
        let g = global(&[
            "--store",
            "jetstream:S",
            "--context",
            "prod ctx",
            "--password",
            "hunter2",
            "--token",
            "t0k",
            "--user",
            "ops",
        ]);
        let c = command(&g, &["answer", "r1", "toolu_1"]);
        assert_eq!(
            c,
            "fisk-admin --store jetstream:S --context 'prod ctx' --user ops answer r1 toolu_1"
        );
        assert!(!c.contains("hunter2") && !c.contains("t0k"));
        assert_eq!(quote("it's\u{1b}"), r"'it'\''s\u{1b}'");
    }
}
