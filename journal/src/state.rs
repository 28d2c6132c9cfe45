//! Where a run stands: one model of a run's state that every command and
//! every front end asks, and the one table of which write is allowed in
//! which state (issue 35).
//!
//! It exists because the agent's own words are not enough to act on. Its
//! status (SPEC 9) is the last terminal's reason when nothing follows it,
//! else `open`, so a run a person has just answered or approved, and
//! nobody has resumed yet, reads `open`, the same word as a run that
//! crashed; a cleanup that ends open runs would end it, and spend the
//! person's approval. The agent's words stay what they are (`status`,
//! `waiting`, `open_deferrals`); the [`State`] is added beside them,
//! derived from the same fold and what the store knows (a writer holding
//! the run, a damaged tail), never stored.
//!
//! Every write obeys [`rule`] through [`permit`]: the operations of
//! [`crate::ops`], `upgrade`, `repair` and `rm` call it before anything is
//! written, and a front end that selects runs by a filter asks
//! [`protected`] which ones it must skip. A person's action (an answer or
//! an approval still to be used, or a question still to be answered) is
//! never undone by a filter: only naming the run with `--force` passes it.
//! The table is written out in `journal/FORMAT.md` ("Run states and the
//! writes they allow"), and a test proves it against random sequences of
//! operations on both backends (`tests/cli/model.rs`).

use crate::fold::{Rest, RunState};
use crate::place::Where;
use crate::record::Reason;
use std::fmt;

/// Who holds a run that is [`State::Live`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Holder {
    /// A writer holds the run's lock (file backend): it is there for
    /// certain, and nothing may write until it lets go.
    Lock {
        /// Who, where the lock file says.
        holder: Option<String>,
    },
    /// SPEC 8's hold (JetStream, which has no lock): a run not at rest
    /// whose last record is younger than the hold. Only a suspicion: a
    /// command opened with no hold (`--force`) does not see it.
    Hold {
        /// The stream (or subject) the run is on.
        at: Where,
        /// Seconds since its last record was stored.
        age_secs: u64,
        /// The hold, in seconds.
        hold_secs: u64,
    },
}

/// Where a run stands, one word for a person (ordered by what they must
/// know first: a run that cannot be read, one being written, a damaged
/// one, one waiting on a person, one a person acted on, then the rest).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// The agent cannot read the run (interior damage, an unreadable meta
    /// record, a fold refusal): `recover` rebuilds it.
    Corrupt,
    /// A writer holds the run now.
    Live(Holder),
    /// The journal's tail is damaged (a torn final line, or a final record
    /// without its newline): the agent reads the run without it, and
    /// every writer refuses the run until `repair` fixes the tail.
    Damaged,
    /// A deferred call waits on a person's answer.
    WaitingAnswer,
    /// A gated call waits on a person's approval (and no deferral waits).
    WaitingApproval,
    /// A person answered or approved what the run waited on since the
    /// agent's last step, nothing waits on a person any more, and nobody
    /// has resumed it: `resume` goes on. The agent's status is `open`.
    Ready,
    /// At rest, suspended: `resume` goes on from where it stopped.
    Suspended,
    /// At rest, ended by its terminal record: `completed`, `error`,
    /// `budget`, `max_iterations` (or a newer agent's reason). Nothing
    /// after it but what a resting run receives.
    Ended(Reason),
    /// Not at rest and nobody holds it: it crashed (or is being written by
    /// a writer this tool cannot see). `resume` goes on; `end` closes it.
    Open,
}

/// The facts a [`State`] is derived from, as the fold and the store give
/// them (a run's whole fold, or `ls`'s fold of its tail).
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts<'a> {
    /// The last terminal record's reason, whatever follows it.
    pub terminal: Option<&'a str>,
    /// What follows the agent's last step ([`Rest`]).
    pub rest: Rest,
    /// Deferred calls with no answer.
    pub open_deferrals: usize,
    /// Gated calls with no approval.
    pub needs_approval: usize,
    /// The journal's tail is damaged.
    pub damaged_tail: bool,
}

impl<'a> Facts<'a> {
    /// The facts of a folded run.
    pub fn of(st: &'a RunState) -> Facts<'a> {
        Facts {
            terminal: st.terminal.as_ref().map(|t| t.reason.as_str()),
            rest: st.rest,
            open_deferrals: st.open_deferrals,
            needs_approval: st.needs_approval.len(),
            damaged_tail: false,
        }
    }
}

impl State {
    /// The state of a run that can be read, from its facts and whoever
    /// holds it.
    pub fn of(f: &Facts, live: Option<Holder>) -> State {
        if let Some(h) = live {
            return State::Live(h);
        }
        if f.damaged_tail {
            return State::Damaged;
        }
        if f.open_deferrals > 0 {
            return State::WaitingAnswer;
        }
        if f.needs_approval > 0 {
            return State::WaitingApproval;
        }
        let reason = f.terminal.map(Reason::parse);
        let completed = f.rest.at_terminal && reason == Some(Reason::Completed);
        // A person's record after a completed run's terminal reopens it in
        // the agent's words, but a resume with nothing new is refused: it
        // is still a finished run.
        if f.rest.acted && !completed {
            return State::Ready;
        }
        match (f.rest.at_terminal, reason) {
            (true, Some(Reason::Suspended)) => State::Suspended,
            (true, Some(r)) => State::Ended(r),
            _ => State::Open,
        }
    }

    /// The state of a folded run.
    pub fn of_fold(st: &RunState, damaged_tail: bool, live: Option<Holder>) -> State {
        State::of(
            &Facts {
                damaged_tail,
                ..Facts::of(st)
            },
            live,
        )
    }

    /// The word `ls`, `show` and their JSON print, and `--state` takes.
    pub fn word(&self) -> &'static str {
        match self {
            State::Corrupt => "corrupt",
            State::Live(_) => "live",
            State::Damaged => "damaged",
            State::WaitingAnswer => "waiting-answer",
            State::WaitingApproval => "waiting-approval",
            State::Ready => "ready",
            State::Suspended => "suspended",
            State::Ended(_) => "ended",
            State::Open => "open",
        }
    }

    /// Every word [`word`](Self::word) gives, in the order of the states.
    pub const WORDS: [&'static str; 9] = [
        "corrupt",
        "live",
        "damaged",
        "waiting-answer",
        "waiting-approval",
        "ready",
        "suspended",
        "ended",
        "open",
    ];

    /// Why a run is in this state, in a few words for a person.
    pub fn why(&self) -> &'static str {
        match self {
            State::Corrupt => "the agent cannot read it; recover rebuilds it",
            State::Live(_) => "a writer holds it now",
            State::Damaged => "its final line is torn or lacks its newline; repair fixes it",
            State::WaitingAnswer => "a deferred call waits on a person's answer",
            State::WaitingApproval => "a gated call waits on a person's approval",
            State::Ready => {
                "a person answered or approved what it waited on, and nobody has resumed it yet"
            }
            State::Suspended => "at rest; resume goes on",
            State::Ended(_) => "at rest by its terminal",
            State::Open => "not at rest: it crashed, or a writer this tool cannot see is at it",
        }
    }

    /// A person has to act on it, or has acted on it and the run has not
    /// used it yet: what a filter must never undo ([`protected`]).
    pub fn holds_a_persons_act(&self) -> bool {
        matches!(
            self,
            State::WaitingAnswer | State::WaitingApproval | State::Ready
        )
    }

    /// The state said as a clause after "run R is".
    fn phrase(&self) -> String {
        match self {
            State::Corrupt => "corrupt (the agent cannot read it)".into(),
            State::Live(Holder::Lock { .. }) => "live (a writer holds its lock)".into(),
            State::Live(Holder::Hold { .. }) => {
                "live (a turn may be in flight: its last record is within the hold)".into()
            }
            State::Damaged => "damaged (its final line is torn or lacks its newline)".into(),
            State::WaitingAnswer => "waiting on a person's answer to a deferred call".into(),
            State::WaitingApproval => "waiting on a person's approval of a gated call".into(),
            State::Ready => {
                "ready to resume (a person answered or approved what it waited on, and it was not resumed since)".into()
            }
            State::Suspended => "suspended".into(),
            State::Ended(r) => format!("ended {}", crate::shell::text(r.as_str())),
            State::Open => "open (it crashed, or a writer this tool cannot see is at it)".into(),
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl serde::Serialize for State {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.word())
    }
}

/// Every command that writes to a store, as the table names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// `answer`: a deferred call's result.
    Answer,
    /// `approve`: an approval of a gated call, once or for the tool.
    Approve,
    /// `end`: a terminal written by hand (SPEC 6.1).
    End,
    /// `fork`: a new run of a run's first records (SPEC 6.1).
    Fork,
    /// `recover`: a damaged journal made whole again (SPEC 6.1).
    Recover,
    /// `repair`: a damaged tail cut or finished.
    Repair,
    /// `rm`: the run deleted, a backup kept.
    Remove,
    /// `upgrade`: a version-3 run made version 1.
    Upgrade,
    /// `backups restore`: a deleted or replaced run put back.
    Restore,
    /// `migrate --delete-source`: the source run deleted once copied.
    DeleteSource,
    /// `resume`: the runner goes on with the run.
    Resume,
}

impl Op {
    /// Every operation the table has a row for.
    pub const ALL: [Op; 11] = [
        Op::Answer,
        Op::Approve,
        Op::End,
        Op::Fork,
        Op::Recover,
        Op::Repair,
        Op::Remove,
        Op::Upgrade,
        Op::Restore,
        Op::DeleteSource,
        Op::Resume,
    ];

    /// The command's name.
    pub fn word(self) -> &'static str {
        match self {
            Op::Answer => "answer",
            Op::Approve => "approve",
            Op::End => "end",
            Op::Fork => "fork",
            Op::Recover => "recover",
            Op::Repair => "repair",
            Op::Remove => "rm",
            Op::Upgrade => "upgrade",
            Op::Restore => "backups restore",
            Op::DeleteSource => "migrate --delete-source",
            Op::Resume => "resume",
        }
    }

    /// What doing it would cost a run that holds a person's act.
    fn undoes(self) -> &'static str {
        match self {
            Op::End => "ending it would spend or strand what the person gave or was asked",
            Op::Remove => "removing it would take what the person gave or was asked out of the store",
            Op::Upgrade => "upgrading it would move it to the other generation of the agent under the person who is acting on it",
            _ => "it would undo what the person did",
        }
    }
}

/// How past a refusal: the action the table names for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Way {
    /// Answer the deferred calls first.
    Answer,
    /// Approve the gated calls first.
    Approve,
    /// Resume the run: what it waits for is there.
    Resume,
    /// Repair the damaged tail first.
    Repair,
    /// Recover the run first.
    Recover,
    /// Wait for the writer to let go.
    Wait,
    /// There is nothing to do to a run in this state.
    Nothing,
}

/// One cell of the table: what an operation may do to a run in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Allowed.
    Yes,
    /// Allowed, and there is nothing to do: the command says so and writes
    /// nothing (exit 0).
    Idle,
    /// Allowed only when the run is named and `--force` is given; a
    /// selection by filter skips it, and says so.
    Forced(Way),
    /// Refused, with the way past it.
    No(Way),
}

/// The table of every write against every state (journal/FORMAT.md, "Run
/// states and the writes they allow"). `Live` by a hold is `No(Wait)`
/// here: `--force` on JetStream opens the store with no hold, so such a
/// run reads `Open` (or what else it is) and the table applies to that.
pub fn rule(op: Op, state: &State) -> Rule {
    use Rule::*;
    use State as S;
    match (op, state) {
        // Reading the source is all a fork does to it.
        (Op::Fork, _) => Yes,
        // Restore makes a run that is not there (the table's "absent"
        // column, which it checks itself); any run there is refused, but
        // the start of its own copy, which it finishes.
        (Op::Restore, _) => No(Way::Nothing),
        (_, S::Live(_)) => No(Way::Wait),
        (Op::Recover, S::Corrupt) => Yes,
        (Op::Recover, S::Damaged) => Forced(Way::Repair),
        (Op::Recover, _) => Forced(Way::Nothing),
        (Op::Remove | Op::DeleteSource, S::Corrupt | S::Damaged) => Yes,
        (_, S::Corrupt) => No(Way::Recover),
        (Op::Repair, S::Damaged) => Yes,
        (Op::Repair, _) => Idle,
        (_, S::Damaged) => No(Way::Repair),
        (Op::Answer, S::WaitingAnswer) => Yes,
        (Op::Answer, S::WaitingApproval) => No(Way::Approve),
        (Op::Answer, S::Ready) => No(Way::Resume),
        (Op::Answer, _) => No(Way::Nothing),
        (Op::Approve, S::Ended(_)) => No(Way::Nothing),
        (Op::Approve, _) => Yes,
        (Op::End, S::Open) => Yes,
        (Op::End, S::WaitingAnswer) => Forced(Way::Answer),
        (Op::End, S::WaitingApproval) => Forced(Way::Approve),
        (Op::End, S::Ready) => Forced(Way::Resume),
        (Op::End, _) => No(Way::Nothing),
        (Op::Remove | Op::Upgrade, S::WaitingAnswer) => Forced(Way::Answer),
        (Op::Remove | Op::Upgrade, S::WaitingApproval) => Forced(Way::Approve),
        (Op::Remove | Op::Upgrade, S::Ready) => Forced(Way::Resume),
        (Op::Remove | Op::Upgrade, _) => Yes,
        // The copy holds every record: nothing a person did is lost.
        (Op::DeleteSource, _) => Yes,
        (Op::Resume, S::WaitingAnswer) => No(Way::Answer),
        (Op::Resume, S::WaitingApproval) => No(Way::Approve),
        (Op::Resume, _) => Yes,
    }
}

/// How the operation was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ask {
    /// The run was named, not selected by a filter.
    pub named: bool,
    /// `--force` was given.
    pub force: bool,
}

impl Ask {
    /// A run named, without `--force`.
    pub const NAMED: Ask = Ask {
        named: true,
        force: false,
    };
}

/// Why the table refuses an operation on a run: the state, and whether
/// naming the run with `--force` would pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The run's id.
    pub run: String,
    /// The operation.
    pub op: Op,
    /// The run's state.
    pub state: State,
    /// The way past it.
    pub way: Way,
    /// `--force` on the named run would pass (the run holds a person's act,
    /// or the agent reads it whole and recover is asked anyway).
    pub forcible: bool,
    /// The run was selected by a filter (and so is skipped, not refused).
    pub by_filter: bool,
}

impl Refused {
    /// What the refusal says before the way past it by force: the run,
    /// its state and why the operation is refused in it. A front end that
    /// words forcing as its own flag says this, then that.
    pub fn why(&self) -> String {
        let op = self.op.word();
        let mut s = format!(
            "run {} is {}",
            crate::shell::text(&self.run),
            self.state.phrase()
        );
        let more = match (self.op, &self.state, self.way) {
            (Op::Recover, _, Way::Repair) => "; the agent reads it whole, dropping its damaged tail; recover would rebuild it and can change what a resume does".to_owned(),
            (Op::Recover, _, _) => "; the agent reads it whole: there is nothing to recover, and recover would rebuild it and can change what a resume does".to_owned(),
            (Op::Answer, State::WaitingApproval, _) => {
                "; its gated calls need an approval, not an answer".to_owned()
            }
            (Op::Answer, State::Ready, _) => "; nothing waits on an answer, resume goes on".to_owned(),
            (_, s, _) if self.forcible && s.holds_a_persons_act() => {
                format!("; {}", self.op.undoes())
            }
            (_, _, Way::Answer) => format!("; {op} goes on once it is answered"),
            (_, _, Way::Approve) => format!("; {op} goes on once it is approved"),
            (_, _, Way::Nothing) => format!("; {op} has nothing to do to it"),
            (_, _, Way::Recover) => format!("; {op} needs a run the agent can read"),
            (_, _, Way::Repair) => format!("; {op} needs a whole journal"),
            _ => String::new(),
        };
        s.push_str(&more);
        s
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why())?;
        if self.forcible {
            write!(
                f,
                " ({} takes it only when it is named and forced)",
                self.op.word()
            )?;
        }
        write!(f, "; nothing was written")
    }
}

/// Whether `op` may write to a run in `state`, asked as `ask`: the table
/// ([`rule`]) applied. `Ok` for [`Rule::Yes`] and [`Rule::Idle`] (the
/// operation says itself that there is nothing to do); else the refusal,
/// which becomes [`crate::Error::Live`] or [`crate::Error::Held`] for a
/// live run (as the store says it) and [`crate::Error::Refused`] otherwise.
pub fn permit(op: Op, run: &str, state: &State, ask: Ask) -> Result<(), Refused> {
    let (way, forcible) = match rule(op, state) {
        Rule::Yes | Rule::Idle => return Ok(()),
        Rule::Forced(_) if ask.named && ask.force => return Ok(()),
        Rule::Forced(way) => (way, true),
        Rule::No(way) => (way, false),
    };
    Err(Refused {
        run: run.to_owned(),
        op,
        state: state.clone(),
        way,
        forcible,
        by_filter: !ask.named,
    })
}

/// Whether a selection by filter for `op` must skip a run in `state`
/// because it holds a person's act (a question asked, or an answer or an
/// approval given and not yet used): the skip a bulk `end`, `rm` and
/// `upgrade` count and name.
pub fn protected(op: Op, state: &State) -> bool {
    state.holds_a_persons_act() && matches!(rule(op, state), Rule::Forced(_))
}

#[cfg(test)]
mod tests;
