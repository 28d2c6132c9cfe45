//! The XDG base directories, one rule for all of them: the variable when it
//! holds an absolute path (the XDG spec says to ignore a relative one),
//! else the default under an absolute `$HOME`. A leaf: every layer that
//! needs a home (the default store, `rm`'s and `upgrade`'s JetStream
//! backups, the `nats` CLI's contexts) asks here.
//!
//! Crate-internal: the binary asks the stores and settings for paths, never
//! XDG itself.

use std::path::PathBuf;

/// `$VAR` when absolute, else `$HOME/<fallback>` when `$HOME` is; with
/// what chose it: `var_shown` or `fallback_shown`.
fn home(
    var: &str,
    var_shown: &'static str,
    fallback: &str,
    fallback_shown: &'static str,
) -> Option<(PathBuf, &'static str)> {
    let abs = |p: PathBuf| p.is_absolute().then_some(p);
    if let Some(x) = std::env::var_os(var).map(PathBuf::from).and_then(abs) {
        return Some((x, var_shown));
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(abs)
        .map(|h| (h.join(fallback), fallback_shown))
}

/// The XDG state home (`$XDG_STATE_HOME`, else `~/.local/state`) and what
/// chose it.
pub fn state_home() -> Option<(PathBuf, &'static str)> {
    home(
        "XDG_STATE_HOME",
        "$XDG_STATE_HOME",
        ".local/state",
        "~/.local/state",
    )
}

/// The XDG config home (`$XDG_CONFIG_HOME`, else `~/.config`).
pub fn config_home() -> Option<PathBuf> {
    home(
        "XDG_CONFIG_HOME",
        "$XDG_CONFIG_HOME",
        ".config",
        "~/.config",
    )
    .map(|(p, _)| p)
}
