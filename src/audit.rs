//! Who writes, for the audit log (issue 38): the operator (`--operator`,
//! else `FISK_ADMIN_OPERATOR`, else `$USER@host`), their reason
//! (`--why`), and the command as run, secrets and answers left out. A
//! command that writes hands its store to [`writer`]; one that only reads
//! never does, so it logs nothing and never creates a log.

use crate::error::Failure;
use crate::invocation::Invocation;
use journal::audit::{Actor, MAX_WHY};
use journal::store::Store;

/// The longest operator name taken, in bytes.
const MAX_OPERATOR: usize = 256;

/// `store`, every write through it logged as the operator's: named by
/// `operator` (the flag), else the environment, else `$USER@host`; `why`
/// the reason given.
pub fn writer(
    store: Store,
    g: &Invocation,
    operator: Option<&str>,
    why: Option<&str>,
) -> Result<Store, Failure> {
    let operator = match operator.or(g.env.operator.as_deref()) {
        Some(o) if o.trim().is_empty() => {
            return Err(Failure::new(
                "--operator (or FISK_ADMIN_OPERATOR) is empty: name who is acting",
            ))
        }
        Some(o) if o.len() > MAX_OPERATOR => {
            return Err(Failure::new(format!(
                "--operator is {} bytes; at most {MAX_OPERATOR}",
                o.len()
            )))
        }
        Some(o) => o.to_owned(),
        None => Actor::default_operator(),
    };
    if let Some(w) = why.filter(|w| w.len() > MAX_WHY) {
        return Err(Failure::new(format!(
            "--why is {} bytes; at most {MAX_WHY}: say why in fewer words",
            w.len()
        )));
    }
    Ok(store.with_actor(Actor {
        operator,
        nats_user: None,
        why: why.map(str::to_owned),
        command: command_as_run(std::env::args_os().skip(1)),
    }))
}

/// Refused when `--operator` or `--why` was given to a command (`what`)
/// that writes nothing to the audit log: they would be dropped silently.
pub fn unlogged(what: &str, operator: Option<&str>, why: Option<&str>) -> Result<(), Failure> {
    match operator.is_some() || why.is_some() {
        true => Err(Failure::new(format!(
            "--operator and --why are kept in the audit log, and {what} writes nothing to it; give neither"
        ))),
        false => Ok(()),
    }
}

/// The command as run, as shell words after `fisk-admin`: the values of
/// `--password` and `--token` left out, and an answer given with
/// `--content` said by its size (it is in the journal; the log says who
/// wrote it).
pub fn command_as_run(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    let mut words = vec!["fisk-admin".to_owned()];
    let mut hide: Option<&str> = None;
    for a in args {
        let text = a.to_string_lossy().into_owned();
        if let Some(flag) = hide.take() {
            words.push(hidden(flag, &text));
            continue;
        }
        let mut shown = None;
        for flag in ["--password", "--token", "--content"] {
            if text == flag {
                hide = Some(flag);
            } else if let Some(v) = text.strip_prefix(&format!("{flag}=")) {
                shown = Some(format!("{flag}={}", hidden(flag, v)));
            }
        }
        words.push(shown.unwrap_or_else(|| journal::shell::word(&a)));
    }
    words.join(" ")
}

/// A hidden value as the command shows it.
fn hidden(flag: &str, value: &str) -> String {
    match flag {
        "--content" => format!("'({} bytes)'", value.len()),
        _ => "'(hidden)'".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_answers_are_left_out_of_the_command() {
        let args = [
            "--password",
            "s3cret",
            "answer",
            "r1",
            "--content=the answer",
            "--why",
            "ticket 7",
        ]
        .map(std::ffi::OsString::from);
        let c = command_as_run(args.into_iter());
        assert_eq!(
            c,
            "fisk-admin --password '(hidden)' answer r1 --content='(10 bytes)' --why 'ticket 7'"
        );
    }
}
