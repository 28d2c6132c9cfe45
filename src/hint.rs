//! What to run next, worded as a command of this tool. The library names
//! the way past a refusal or finding as a [`Remedy`]; this module is the one
//! place that turns it into a command line, so every hint is worded alike.

use journal::store::Restore;
use journal::{Error, Remedy, Where};

/// `remedy` as advice naming the command that applies it. `run` and
/// `stream` fill the command's arguments where it takes them.
pub fn advice(remedy: Remedy, run: Option<&str>, stream: Option<&str>) -> String {
    let run = run.unwrap_or("RUN");
    let stream = stream.unwrap_or("STREAM");
    match remedy {
        Remedy::Verify => format!("run `fisk-admin verify {run}` for every finding with its line"),
        Remedy::Repair => format!(
            "run `fisk-admin repair {run}` to cut it (its bytes are kept in a backup file), then try again"
        ),
        Remedy::Upgrade => format!(
            "run `fisk-admin upgrade {run}` to convert it to the current format (or finish a conversion)"
        ),
        Remedy::Again => "run the same command again to finish it".into(),
        Remedy::Force => "pass --force once the other writer is known to be gone".into(),
        Remedy::List => "`fisk-admin ls` lists the runs in this store".into(),
        Remedy::CreateStream => format!(
            "create it with `fisk-admin stream create {stream} --subject 'PREFIX.>'` (or ask the operator who owns it)"
        ),
        Remedy::CheckStream => {
            format!("`fisk-admin stream check {stream}` lists every problem")
        }
        Remedy::Answer => format!("answer with `fisk-admin answer {run} TOOL_USE_ID`"),
    }
}

/// The command that puts a deleted run back, and whether it needs this
/// invocation's connection flags.
pub fn restore(r: &Restore) -> (String, bool) {
    match r {
        Restore::Link { kept, journal } => {
            let (k, j) = (
                shell(&kept.to_string_lossy()),
                shell(&journal.to_string_lossy()),
            );
            (format!("ln {k} {j} && rm {k}"), false)
        }
        Restore::Copy { from, stream, run } => (
            format!(
                "fisk-admin migrate --from {} --to {} {run}",
                shell(&format!("file:{}", from.to_string_lossy())),
                shell(&format!("jetstream:{stream}"))
            ),
            true,
        ),
    }
}

/// `s` as one shell word: as it is when that is safe, else single-quoted.
pub fn shell(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=+@%,".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What to do next about a library error.
pub fn for_error(e: &Error) -> Option<String> {
    let stream = match e {
        Error::NoStream { stream, .. }
        | Error::Config {
            at: Where::Stream { stream, .. },
            ..
        } => Some(stream.as_str()),
        _ => None,
    };
    match e {
        Error::Poisoned { run, .. } => Some(format!(
            "run `fisk-admin verify {run}`, then resume to continue from what was stored"
        )),
        Error::Symlink { .. } => Some(
            "fisk-admin never writes through one; replace it with the file it points to".into(),
        ),
        _ => Some(advice(Remedy::of(e)?, run_of(e), stream)),
    }
}

/// The run an error is about, when it is about one.
pub fn run_of(e: &Error) -> Option<&str> {
    match e {
        Error::NotFound { run, .. }
        | Error::Corrupt { run, .. }
        | Error::Fold { run, .. }
        | Error::Live { run, .. }
        | Error::Exists { run, .. }
        | Error::TornTail { run, .. }
        | Error::Refused { run, .. }
        | Error::Poisoned { run, .. }
        | Error::Gap { run, .. }
        | Error::SourceChanged { run, .. } => Some(run),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_a_space_or_quote_is_quoted_for_the_shell() {
        assert_eq!(shell("/s/r.json"), "/s/r.json");
        assert_eq!(shell("/s/my runs/r.json"), "'/s/my runs/r.json'");
        assert_eq!(shell("it's"), "'it'\\''s'");
        assert_eq!(shell(""), "''");
    }

    #[test]
    fn every_remedy_names_its_command_with_the_run_or_stream() {
        let cases = [
            (Remedy::Verify, "`fisk-admin verify r-1`"),
            (Remedy::Repair, "`fisk-admin repair r-1`"),
            (Remedy::Upgrade, "`fisk-admin upgrade r-1`"),
            (Remedy::Again, "the same command again"),
            (Remedy::Force, "--force"),
            (Remedy::List, "`fisk-admin ls`"),
            (
                Remedy::CreateStream,
                "`fisk-admin stream create S --subject 'PREFIX.>'`",
            ),
            (Remedy::CheckStream, "`fisk-admin stream check S`"),
            (Remedy::Answer, "`fisk-admin answer r-1 TOOL_USE_ID`"),
        ];
        for (r, want) in cases {
            let a = advice(r, Some("r-1"), Some("S"));
            assert!(a.contains(want), "{r:?}: {a}");
        }
    }
}
