//! The fold one record at a time ([`Folder`]), the turn it holds open,
//! and the calls a runner's suspension names as waiting on an approval.

use super::*;

/// The open assistant turn while folding.
struct Turn {
    message: Message,
    iteration: i64,
    stop_reason: String,
    results: Vec<ToolResultBlock>,
    answered: BTreeSet<String>,
    deferred: Vec<Deferred>,
}

impl Turn {
    fn all_answered(&self) -> bool {
        self.message
            .tool_use_ids()
            .all(|id| self.answered.contains(id))
    }

    fn commit(self, messages: &mut Vec<Message>) {
        messages.push(self.message);
        if !self.results.is_empty() {
            messages.push(Message::user(
                self.results.into_iter().map(Block::ToolResult).collect(),
            ));
        }
    }

    fn into_pending(self) -> Pending {
        let mut deferred = self.deferred;
        deferred.sort_by(|a, b| a.tool_use_id.cmp(&b.tool_use_id));
        let open_deferrals = deferred
            .iter()
            .filter(|d| !self.answered.contains(&d.tool_use_id))
            .cloned()
            .collect();
        Pending {
            assistant: self.message,
            iteration: self.iteration,
            stop_reason: self.stop_reason,
            results: self.results,
            answered: self.answered,
            deferred,
            open_deferrals,
        }
    }
}

/// The fold, one record at a time: what [`fold_with`] does, for a reader
/// that needs to know, before it takes a record, whether the agent's fold
/// would ([`check`](Folder::check)), and what the open turn holds
/// ([`open_turn`](Folder::open_turn)): `recover` decides from it which
/// records it keeps, so that it keeps exactly what the agent reads.
pub struct Folder {
    st: RunState,
    turn: Option<Turn>,
    tail: StatusTracker,
    /// The last terminal was written while the turn open now was open:
    /// its message may name that turn's gated calls.
    terminal_of_turn: bool,
}

/// The turn open in a [`Folder`]: its calls, and which have a result or a
/// deferral.
#[derive(Debug, Clone, Copy)]
pub struct OpenTurn<'a> {
    /// The assistant message that opened it.
    pub message: &'a Message,
    /// The ids with a result.
    pub answered: &'a BTreeSet<String>,
    /// The deferrals recorded.
    pub deferred: &'a [Deferred],
}

impl Folder {
    /// Start the fold with the run's first record, which must be its meta
    /// record (of a version the fold reads, unless `opts.any_version`).
    pub fn new<R: FoldInput>(first: R, opts: FoldOptions) -> Result<Folder, FoldError> {
        let (first_seq, first_is_meta, first_protocol, first_time) = {
            let r = first.record();
            (
                r.seq,
                r.kind() == Some(Kind::Meta),
                r.protocol.clone(),
                r.time,
            )
        };
        let meta = match first.into_payload() {
            Some(Payload::Meta(m)) => m,
            _ if first_is_meta => {
                return Err(FoldError::MissingPayload {
                    seq: first_seq,
                    protocol: first_protocol,
                })
            }
            _ => return Err(FoldError::FirstNotMeta { seq: first_seq }),
        };
        let generation = crate::record::Generation::of(meta.version);
        if generation.is_none() && !opts.any_version {
            return Err(FoldError::Version {
                found: meta.version,
            });
        }
        let st = RunState {
            version: meta.version,
            run_id: meta.run_id,
            agent: meta.agent,
            fingerprint: meta.fingerprint,
            messages: vec![Message::user(vec![Block::text(meta.prompt.clone())])],
            prompt: meta.prompt,
            interactive: meta.interactive,
            conversation_token: meta.conversation_token,
            caller: meta.caller,
            counters: Counters::default(),
            turns: 1,
            context_tokens: 0,
            next_iteration: 0,
            last_stop_reason: String::new(),
            pending: None,
            approvals: Vec::new(),
            call_approvals: Vec::new(),
            memory_revisions: None,
            terminal: None,
            ended: None,
            completed: false,
            status: Status::Open,
            waiting: false,
            open_deferrals: 0,
            needs_approval: Vec::new(),
            last_seq: first_seq,
            last_time: first_time,
            generation,
            rest: Rest::default(),
        };
        Ok(Folder {
            st,
            turn: None,
            tail: StatusTracker::default(),
            terminal_of_turn: false,
        })
    }

    /// Whether the agent's fold takes `r` as the next record: `Err` with
    /// what it refuses, and the fold left as it was.
    pub fn check(&self, r: &Record) -> Result<(), FoldError> {
        let seq = r.seq;
        if seq <= self.st.last_seq {
            return Err(FoldError::SeqNotIncreasing {
                seq,
                previous: self.st.last_seq,
            });
        }
        let Some(payload) = &r.payload else {
            let protocol = r.protocol.clone();
            if r.kind().is_some() {
                return Err(FoldError::MissingPayload { seq, protocol });
            }
            if r.optional {
                return Ok(());
            }
            return Err(FoldError::UnknownProtocol { seq, protocol });
        };
        match payload {
            Payload::Meta(_) => Err(FoldError::SecondMeta { seq }),
            Payload::ToolResult(_) if self.turn.is_none() => Err(FoldError::NoOpenTurn {
                seq,
                kind: Kind::ToolResult,
            }),
            Payload::Deferred(_) if self.turn.is_none() => Err(FoldError::NoOpenTurn {
                seq,
                kind: Kind::Deferred,
            }),
            _ => Ok(()),
        }
    }

    /// The turn open now, if one is.
    pub fn open_turn(&self) -> Option<OpenTurn<'_>> {
        self.turn.as_ref().map(|t| OpenTurn {
            message: &t.message,
            answered: &t.answered,
            deferred: &t.deferred,
        })
    }

    /// Fold the next record: refused as [`check`](Self::check) refuses it
    /// (the fold left as it was), else taken.
    pub fn push<R: FoldInput>(&mut self, r: R) -> Result<(), FoldError> {
        self.check(r.record())?;
        let st = &mut self.st;
        let (seq, time) = (r.record().seq, r.record().time);
        st.last_seq = seq;
        st.last_time = time;
        // Any record after the last terminal reopens the run, a skipped
        // optional one included (SPEC 3 rule 13).
        self.tail.observe(time);
        let Some(payload) = r.into_payload() else {
            // An optional record of a protocol this fold does not know.
            return Ok(());
        };
        let turn = &mut self.turn;
        st.rest = match &payload {
            Payload::ToolResult(tr) => Rest {
                acted: st.rest.acted
                    || turn.as_ref().is_some_and(|t| {
                        t.deferred.iter().any(|d| d.tool_use_id == tr.tool_use_id)
                    }),
                ..st.rest
            },
            Payload::CallApproval(_) | Payload::Decision(_) => Rest {
                acted: true,
                ..st.rest
            },
            Payload::MemoryRevisions(_) => st.rest,
            Payload::Terminal(_) => Rest {
                at_terminal: true,
                acted: false,
            },
            _ => Rest::default(),
        };
        match payload {
            // Refused by `check`.
            Payload::Meta(_) => {}
            Payload::Assistant(a) => {
                if let Some(t) = turn.take() {
                    t.commit(&mut st.messages);
                }
                let c = &mut st.counters;
                c.llm_calls = c.llm_calls.saturating_add(1);
                c.in_tokens = c.in_tokens.saturating_add(a.in_tokens);
                c.out_tokens = c.out_tokens.saturating_add(a.out_tokens);
                c.cache_read_tokens = c.cache_read_tokens.saturating_add(a.cache_read_tokens);
                c.cache_create_tokens = c.cache_create_tokens.saturating_add(a.cache_create_tokens);
                c.thinking_tokens = c.thinking_tokens.saturating_add(a.thinking_tokens);
                st.context_tokens = a
                    .in_tokens
                    .saturating_add(a.cache_read_tokens)
                    .saturating_add(a.cache_create_tokens);
                st.next_iteration = a.iteration.saturating_add(1);
                st.last_stop_reason = a.stop_reason.clone();
                self.terminal_of_turn = false;
                *turn = Some(Turn {
                    message: a.message,
                    iteration: a.iteration,
                    stop_reason: a.stop_reason,
                    results: Vec::new(),
                    answered: BTreeSet::new(),
                    deferred: Vec::new(),
                });
            }
            Payload::ToolResult(tr) => {
                // `check` made sure a turn is open.
                if let Some(t) = turn.as_mut() {
                    st.counters.count_result(&tr);
                    t.answered.insert(tr.tool_use_id);
                    t.results.push(tr.result);
                }
            }
            Payload::Deferred(d) => {
                // The agent keeps deferrals by id: a second one for the
                // same call replaces the first.
                if let Some(t) = turn.as_mut() {
                    match t
                        .deferred
                        .iter_mut()
                        .find(|x| x.tool_use_id == d.tool_use_id)
                    {
                        Some(x) => *x = d,
                        None => t.deferred.push(d),
                    }
                }
            }
            Payload::User(u) => {
                st.turns = st.turns.saturating_add(1);
                if let Some(t) = turn.take() {
                    t.commit(&mut st.messages);
                }
                match st.messages.last_mut() {
                    Some(last) if last.role == "user" => {
                        last.content
                            .get_or_insert_with(Vec::new)
                            .extend(u.message.content.unwrap_or_default());
                    }
                    _ => st.messages.push(u.message),
                }
            }
            Payload::Decision(d) => st.approvals.push(d.tool),
            Payload::CallApproval(c) => st.call_approvals.push(c),
            Payload::MemoryRevisions(m) => {
                st.memory_revisions = m.revisions;
            }
            Payload::Terminal(t) => {
                self.terminal_of_turn = turn.is_some();
                self.tail.terminal(&t.reason, time);
                st.terminal = Some(t);
                st.call_approvals.clear();
            }
            Payload::Claim(_) => {}
        }
        Ok(())
    }

    /// The run state the records folded so far give (SPEC 3 rule 11 on).
    pub fn finish(self) -> RunState {
        let Folder {
            mut st,
            turn,
            tail,
            terminal_of_turn,
        } = self;
        if let Some(t) = turn {
            if t.all_answered() {
                t.commit(&mut st.messages);
            } else {
                st.pending = Some(t.into_pending());
            }
        }
        st.completed = st
            .terminal
            .as_ref()
            .is_some_and(|t| t.reason() == crate::record::Reason::Completed);
        st.open_deferrals = st.pending.as_ref().map_or(0, |p| p.open_deferrals.len());
        st.waiting = st.open_deferrals > 0;
        if terminal_of_turn {
            st.needs_approval = needs_approval(&st);
        }
        st.status = tail.status();
        st.ended = tail.ended();
        st
    }
}

/// What the minimal runner's suspension names before its gated calls.
const NEEDS_APPROVAL: &str = "needs approval: ";
/// What it names its open deferrals after, when there are any.
const WAITING_ON_DEFERRED: &str = "; waiting on deferred call(s): ";

/// The calls of the pending turn that wait on an operator's approval.
///
/// Neither generation of the agent records this: an approval nobody gave
/// ends its run `suspended` with the prompt's error as the message, and
/// the call is left with no result, like any call a suspend cut off. The
/// record of it is fisk-admin's runner's suspension message,
/// `needs approval: ID (TOOL)[, ID (TOOL)...][; waiting on deferred
/// call(s): ...]`. A call of the pending turn counts when that message,
/// the last terminal and written while the turn was open, names it with
/// its own tool, and it has no result, no deferral, no `call_approval`
/// and no standing `decision` for its tool. Called by [`fold_with`],
/// which knows whether the terminal belongs to the pending turn.
fn needs_approval(st: &RunState) -> Vec<Gated> {
    let (Some(p), Some(t)) = (&st.pending, &st.terminal) else {
        return Vec::new();
    };
    if t.reason() != crate::record::Reason::Suspended {
        return Vec::new();
    }
    let Some(list) = t.message.strip_prefix(NEEDS_APPROVAL) else {
        return Vec::new();
    };
    let list = list
        .split_once(WAITING_ON_DEFERRED)
        .map_or(list, |(gated, _)| gated);
    // `ID (TOOL)` as one item of the `, `-joined list, whatever the id.
    let named = |item: &str| {
        list == item
            || list.starts_with(&format!("{item}, "))
            || list.ends_with(&format!(", {item}"))
            || list.contains(&format!(", {item}, "))
    };
    let mut out: Vec<Gated> = Vec::new();
    for b in p.assistant.blocks() {
        let Block::ToolUse(u) = b else { continue };
        // Not yet computed here, so an unapproved call reads `ToRun`.
        let settled = !matches!(st.call(&u.id), CallState::ToRun { .. })
            || out.iter().any(|g| g.tool_use_id == u.id);
        if !settled && named(&format!("{} ({})", u.id, u.name)) {
            out.push(Gated {
                tool_use_id: u.id.clone(),
                tool: u.name.clone(),
            });
        }
    }
    out
}
