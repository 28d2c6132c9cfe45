//! One module per subcommand. Each exposes `run(args.., out) -> CmdResult`:
//! load, check, act, then render its outcome once, as text or JSON.

pub mod answer;
pub mod approve;
pub mod backups;
pub mod completions;
pub mod diff;
pub mod end;
pub mod export;
pub mod fingerprint;
pub mod fold;
pub mod fork;
pub mod inbox;
pub mod info;
pub mod log;
pub mod ls;
pub mod man;
pub mod migrate;
pub mod query;
pub mod recover;
pub mod repair;
pub mod resume;
pub mod rm;
pub mod run;
pub mod seal;
pub mod search;
pub mod show;
pub mod stats;
pub mod stream;
pub mod upgrade;
pub mod validate;
pub mod verify;
