//! The operations by hand for a host that runs tokio already (a web front
//! end, a bot), on the async JetStream store
//! ([`AsyncJetStreamStore`]): the same checks as the blocking ones, made by
//! the same pure functions ([`answer::check`], [`approve::check`],
//! [`end::check`]) on the run as the async store reads it, and one commit
//! step, the async store's, that holds the run as the blocking commit
//! does: SPEC 8's hold, the fence on the run's last record, and the run
//! unchanged since it was checked. mini-redis publishes one client in
//! both shapes; these are the async shape of [`crate::ops`].
//!
//! Calling the blocking store from async code starts a runtime inside a
//! runtime, which tokio refuses (a panic): an async host uses these, on
//! its own runtime.
//!
//! ```no_run
//! # async fn answered() -> journal::Result<()> {
//! use journal::ops::{answer, asynch};
//! use journal::store::jetstream::AsyncJetStreamStore;
//! let settings = journal::nats::Settings {
//!     servers: vec!["nats://127.0.0.1:4222".into()],
//!     ..Default::default()
//! };
//! let store = AsyncJetStreamStore::connect(&settings, "SESSIONS").await?;
//! let req = answer::Request { run: "r1", call: None, is_error: false };
//! // Every check first; the content is asked for only then.
//! let checked = asynch::check_answer(&store, &req).await?;
//! println!("answering {}", checked.call().tool_use_id);
//! let written = asynch::commit_answer(&store, &checked, "approved".into()).await?;
//! println!("seq {}", written.seq);
//! # Ok(())
//! # }
//! ```

use super::{answer, approve, end, Op, Seen, Written};
use crate::fold::{fold_with, FoldOptions, RunState};
use crate::record::Payload;
use crate::state::{Holder, State};
use crate::store::jetstream::AsyncJetStreamStore;
use crate::store::Journal;
use crate::{Error, Result};

/// The run as an operation checks it: read, folded, and where it stands
/// (SPEC 8's hold is who holds a JetStream run).
async fn load(store: &AsyncJetStreamStore, run: &str) -> Result<(Journal, RunState, State)> {
    let journal = store.read(run).await?;
    let st =
        fold_with(journal.records(), FoldOptions::default()).map_err(|source| Error::Fold {
            run: run.to_owned(),
            at: None,
            source,
        })?;
    let holder = match store.check_held(run).await {
        Ok(()) => None,
        Err(Error::Held {
            at,
            age_secs,
            hold_secs,
            written_secs,
            ..
        }) => Some(Holder::Hold {
            at,
            age_secs,
            hold_secs,
            written_secs,
        }),
        Err(e) => return Err(e),
    };
    let state = State::of_fold(&st, !journal.tail.is_clean(), holder);
    Ok((journal, st, state))
}

/// The async commit of one record: the hold, the writer's fence, the run
/// unchanged since `seen`, then the record appended as the run's next.
async fn write_one(
    op: Op,
    store: &AsyncJetStreamStore,
    seen: &Seen,
    payload: Payload,
) -> Result<Written> {
    store.check_held(&seen.run).await?;
    let mut app = store.open(&seen.run).await?;
    let version = store.summary(&seen.run).await.version;
    seen.unchanged(op, app.last_seq(), version)?;
    // Logged as the blocking commit logs it (issue 38), when the store
    // was told who writes ([`AsyncJetStreamStore::with_actor`]).
    let record = crate::store::next_record(&seen.run, app.last_seq(), payload, seen.generation)?;
    let line = crate::store::encoded(&seen.run, &record)?;
    let plan = super::plan_of(op, seen, record.seq, &line);
    store
        .audited(&plan, async {
            match app.append_raw(record.seq, &line).await? {
                true => Ok(()),
                false => Err(crate::store::already_stored(&seen.run, record.seq)),
            }
        })
        .await?;
    Ok(Written {
        seq: record.seq,
        line,
    })
}

/// Every check of an answer (SPEC 6), on the run as it is now; nothing
/// written. The content is asked for after this, as the blocking
/// [`answer::prepare`] has it.
pub async fn check_answer(
    store: &AsyncJetStreamStore,
    req: &answer::Request<'_>,
) -> Result<answer::Checked> {
    let (journal, st, state) = load(store, req.run).await?;
    answer::check(&journal, &st, &state, req)
}

/// Write the answer `checked` with `content`: exactly one record, refused
/// when the run changed since it was checked.
pub async fn commit_answer(
    store: &AsyncJetStreamStore,
    checked: &answer::Checked,
    content: String,
) -> Result<Written> {
    let payload = checked.payload(content)?;
    write_one(Op::Answer, store, checked.seen(), payload).await
}

/// Approve a gated call once, or a tool for the rest of the run, as
/// [`approve::approve`] does: every check, then one record.
pub async fn approve(
    store: &AsyncJetStreamStore,
    req: &approve::Request<'_>,
) -> Result<approve::Approved> {
    let (journal, st, state) = load(store, req.run).await?;
    let checked = approve::check(&journal, &st, &state, req)?;
    let written = write_one(
        Op::Approve,
        store,
        checked.seen(),
        checked.payload().clone(),
    )
    .await?;
    Ok(checked.approved(written))
}

/// End a run, as [`end::end`] does: every check of the run model's table
/// (a run that waits on a person or is ready to resume only named and
/// forced), then one terminal record.
pub async fn end(store: &AsyncJetStreamStore, req: &end::Request<'_>) -> Result<end::Ended> {
    let (journal, st, state) = load(store, req.run).await?;
    let checked = end::check(&journal, &st, &state, req)?;
    let written = write_one(Op::End, store, checked.seen(), checked.payload()).await?;
    Ok(checked.ended(written))
}

/// Where `run` stands, read through the async store (what
/// [`Store::state`](crate::store::Store::state) says on the blocking one).
pub async fn state(store: &AsyncJetStreamStore, run: &str) -> Result<State> {
    match load(store, run).await {
        Ok((_, _, state)) => Ok(state),
        Err(Error::Corrupt { .. } | Error::Fold { .. }) => Ok(State::Corrupt),
        Err(e) => Err(e),
    }
}
