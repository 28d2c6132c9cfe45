//! Why a run stopped: [`Reason`], the vocabulary of `terminal.reason`, and
//! the [`Terminal`] constructor and reader that speak it.

use super::payload::Terminal;

/// Why a run stopped (SPEC 1 `terminal.reason`). A reason a newer agent
/// writes is kept as it is (`Other`): the journal's text is the truth, and
/// the status shows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// `completed`: the turn ended with the model's answer.
    Completed,
    /// `suspended`: the run stopped resumable (a deferred call waits, or an
    /// operator suspended it).
    Suspended,
    /// `error`: the turn failed.
    Error,
    /// `budget`: the run's budget ran out.
    Budget,
    /// `max_iterations`: the run took as many iterations as it may.
    MaxIterations,
    /// A reason this tool does not know, as written.
    Other(String),
}

impl Reason {
    /// The reason `s` names; an unknown one is kept as [`Reason::Other`].
    pub fn parse(s: &str) -> Reason {
        match s {
            "completed" => Reason::Completed,
            "suspended" => Reason::Suspended,
            "error" => Reason::Error,
            "budget" => Reason::Budget,
            "max_iterations" => Reason::MaxIterations,
            other => Reason::Other(other.to_owned()),
        }
    }

    /// The reason as written in `terminal.reason`.
    pub fn as_str(&self) -> &str {
        match self {
            Reason::Completed => "completed",
            Reason::Suspended => "suspended",
            Reason::Error => "error",
            Reason::Budget => "budget",
            Reason::MaxIterations => "max_iterations",
            Reason::Other(s) => s,
        }
    }
}

impl Terminal {
    /// A terminal record of `reason`.
    pub fn new(reason: Reason, message: String) -> Terminal {
        Terminal {
            reason: reason.as_str().to_owned(),
            message,
            ..Terminal::default()
        }
    }

    /// Why the run stopped, read from `reason`.
    pub fn reason(&self) -> Reason {
        Reason::parse(&self.reason)
    }
}
