//! `inbox`: every call waiting on a person across a store (issue 26): the
//! open deferrals (an answer) and the calls a run was suspended for (an
//! approval). It exists in the library because which call waits on what
//! is the fold's rule ([`RunState::call`]), the one `answer`, `approve` and
//! the runner use, so the queue can never list a call they would refuse.
//!
//! The summaries (meta record and tail) say which runs wait, and only
//! those are read and folded ([`Store::read_each`]): in parallel on the
//! file backend, where it costs about what a listing costs; in one pass
//! on JetStream, through a consumer filtered to the waiting runs, or over
//! the whole stream once they are an eighth of it (a consumer filtered to
//! many runs costs the server more than the whole stream:
//! bench/RESULTS.md, issue 28).

use crate::fold::{CallState, FoldOptions, RunState};
use crate::record::{Kind, Payload};
use crate::store::{Journal, Store, Summary};
use crate::time::Time;

/// What a waiting call waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Waits {
    /// A deferred call: an answer (`answer`).
    Answer,
    /// A gated call the run was suspended for: an approval (`approve`).
    Approval,
}

/// One call waiting on a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The run it belongs to.
    pub run: String,
    /// Its tool_use id.
    pub call: String,
    /// Its tool.
    pub tool: String,
    /// The deferral's note (`""` for an approval, or none given).
    pub note: String,
    /// The deferral's handle (`""` for an approval, or none given).
    pub handle: String,
    /// What it waits on.
    pub waits: Waits,
    /// Since when: the deferral record's time, for an approval the
    /// suspending terminal's; else the store's time of the run's last
    /// record (file mtime, message store time: the summary's `updated`);
    /// `None` when neither is known.
    pub since: Option<Time>,
    /// The run's agent, when its meta record names one.
    pub agent: Option<String>,
    /// The run's caller, when its meta record names one.
    pub caller: Option<String>,
}

/// What [`inbox`] found: the waiting calls, oldest first, and the runs
/// that said they wait but could not be read or folded.
#[derive(Debug, Default)]
pub struct Inbox {
    /// One per waiting call, oldest first (undated last), then by run and
    /// call id.
    pub items: Vec<Item>,
    /// Each run that could not be read or folded, and why.
    pub unreadable: Vec<(String, crate::Error)>,
}

/// One run's waiting calls, or the run and why it could not be read
/// (boxed: a failed run is rare, an item list common).
type RunItems = Result<Vec<Item>, Box<(String, crate::Error)>>;

/// Whether a summary says its run waits on a person (the runs `inbox`
/// reads).
pub fn waits(s: &Summary) -> bool {
    s.waiting || s.open_deferrals > 0 || !s.needs_approval.is_empty()
}

/// The calls waiting on a person in the runs of `runs` that wait
/// ([`waits`]); the others are not read.
pub fn inbox(store: &Store, runs: &[Summary]) -> Inbox {
    let waiting: Vec<&Summary> = runs.iter().filter(|s| waits(s)).collect();
    let one = |s: &Summary, j: crate::Result<Journal>| {
        let items = j.and_then(|j| {
            let st = store.fold(&s.run_id, &j, FoldOptions::default())?;
            Ok(items_of(s, &j, &st))
        });
        items.map_err(|e| Box::new((s.run_id.clone(), e)))
    };
    // Each waiting run read once and folded as it arrives (in parallel, or
    // in one pass over the stream: `Store::read_each`), so no more than
    // the reader's budget of journals is held.
    let read: Vec<RunItems> = store.read_each(&waiting, |i, j| match waiting.get(i) {
        Some(s) => one(s, j),
        None => Ok(Vec::new()),
    });
    let mut found = Inbox::default();
    for r in read {
        match r {
            Ok(items) => found.items.extend(items),
            Err(u) => found.unreadable.push(*u),
        }
    }
    found.items.sort_by(|a, b| {
        // Oldest first; an undated item after every dated one.
        (a.since.is_none(), a.since, &a.run, &a.call).cmp(&(
            b.since.is_none(),
            b.since,
            &b.run,
            &b.call,
        ))
    });
    found
}

/// The waiting calls of one folded run: the pending batch's calls in
/// order, then deferrals of ids outside it (the fold keeps them, and the
/// run waits on them all the same).
pub fn items_of(s: &Summary, journal: &Journal, st: &RunState) -> Vec<Item> {
    let Some(p) = &st.pending else {
        return Vec::new();
    };
    let mut ids: Vec<&str> = p.assistant.tool_use_ids().collect();
    for d in &p.deferred {
        if !ids.contains(&d.tool_use_id.as_str()) {
            ids.push(&d.tool_use_id);
        }
    }
    let item = |call: &str, tool: &str, waits: Waits| Item {
        run: s.run_id.clone(),
        call: call.to_owned(),
        tool: tool.to_owned(),
        note: String::new(),
        handle: String::new(),
        waits,
        since: None,
        agent: s.agent.clone(),
        caller: s.caller.clone(),
    };
    let mut out: Vec<Item> = Vec::new();
    for id in ids {
        if out.iter().any(|i| i.call == id) {
            continue;
        }
        match st.call(id) {
            CallState::AwaitsAnswer { deferral, .. } => out.push(Item {
                note: deferral.note.clone(),
                handle: deferral.handle.clone(),
                since: deferred_at(journal, id).or(s.updated),
                ..item(id, &deferral.tool_name, Waits::Answer)
            }),
            CallState::AwaitsApproval { tool } => out.push(Item {
                since: suspended_at(journal).or(s.updated),
                ..item(id, tool, Waits::Approval)
            }),
            _ => {}
        }
    }
    out
}

/// The time of the last `deferred` record for `id`.
fn deferred_at(journal: &Journal, id: &str) -> Option<Time> {
    journal
        .records()
        .filter(|r| matches!(&r.payload, Some(Payload::Deferred(d)) if d.tool_use_id == id))
        .last()
        .and_then(|r| r.time)
        .filter(|t| !t.is_zero())
}

/// The time of the last terminal record: the one that suspended the run
/// for its approvals (the fold names a call as needing one only then).
fn suspended_at(journal: &Journal) -> Option<Time> {
    journal
        .records()
        .filter(|r| r.kind() == Some(Kind::Terminal))
        .last()
        .and_then(|r| r.time)
        .filter(|t| !t.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A fixture journal of `testdata/agent-journals/<generation>`.
    fn fixture(generation: &str, name: &str) -> String {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/agent-journals")
            .join(generation)
            .join(format!("{name}.json"));
        std::fs::read_to_string(path).unwrap()
    }

    /// `g-call-approval-after-suspend` before its approval, suspended by
    /// fisk-admin's runner for it: a call that waits on an approval.
    fn approval_waiting(generation: &str) -> String {
        let text = fixture(generation, "g-call-approval-after-suspend");
        let lines: Vec<&str> = text.lines().take(3).collect();
        format!("{}\n", lines.join("\n"))
            .replace("awaiting approval", "needs approval: tu_1 (stream_rm)")
    }

    fn store_of(runs: &[(&str, String)]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        for (run, text) in runs {
            let path = dir.path().join(format!("{run}.json"));
            // The meta record names the run it is stored as.
            let text = match text.split_once("\"run_id\":\"") {
                Some((head, rest)) => {
                    let tail = rest.split_once('"').map_or("", |(_, t)| t);
                    format!("{head}\"run_id\":\"{run}\"{tail}")
                }
                None => text.clone(),
            };
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let store = Store::directory(dir.path());
        (dir, store)
    }

    #[test]
    fn both_kinds_of_wait_in_both_generations_and_nothing_else() {
        for generation in ["v1", "v3"] {
            let (_dir, store) = store_of(&[
                (
                    "g-deferral-waiting",
                    fixture(generation, "g-deferral-waiting"),
                ),
                ("gated", approval_waiting(generation)),
                (
                    "g-simple-completed",
                    fixture(generation, "g-simple-completed"),
                ),
                (
                    "g-deferral-answered-unresumed",
                    fixture(generation, "g-deferral-answered-unresumed"),
                ),
            ]);
            let runs = store.summaries().unwrap();
            let found = inbox(&store, &runs);
            assert!(found.unreadable.is_empty(), "{:?}", found.unreadable);
            let got: Vec<(&str, &str, &str, Waits, &str, &str)> = found
                .items
                .iter()
                .map(|i| {
                    (
                        i.run.as_str(),
                        i.call.as_str(),
                        i.tool.as_str(),
                        i.waits,
                        i.note.as_str(),
                        i.handle.as_str(),
                    )
                })
                .collect();
            let want = vec![
                (
                    "g-deferral-waiting",
                    "tu_d",
                    "change_request",
                    Waits::Answer,
                    "waiting on change approval",
                    "CHG-1234",
                ),
                ("gated", "tu_1", "stream_rm", Waits::Approval, "", ""),
            ];
            let mut got = got;
            got.sort();
            assert_eq!(got, want, "{generation}");
            for i in &found.items {
                assert!(i.since.is_some(), "{generation} {}: a time", i.run);
            }
        }
    }

    #[test]
    fn the_record_time_is_the_since_and_oldest_comes_first() {
        let old = fixture("v1", "g-deferral-waiting");
        let newer = old.replace("2026-12-01", "2026-12-02");
        let (_dir, store) = store_of(&[("b-old", old.clone()), ("a-new", newer)]);
        let found = inbox(&store, &store.summaries().unwrap());
        let order: Vec<&str> = found.items.iter().map(|i| i.run.as_str()).collect();
        assert_eq!(order, ["b-old", "a-new"]);
        let deferred = old
            .lines()
            .find(|l| l.contains("session.deferred"))
            .unwrap();
        let t: serde_json::Value = serde_json::from_str(deferred).unwrap();
        assert_eq!(
            found.items[0].since.unwrap().to_rfc3339(),
            t["time"].as_str().unwrap()
        );
    }

    #[test]
    fn all_pending_approves_each_listed_call_once_then_nothing_waits() {
        use crate::ops::approve::{approve_all, pending};
        for generation in ["v1", "v3"] {
            let (_dir, store) = store_of(&[("gated", approval_waiting(generation))]);
            let calls = pending(&store, "gated").unwrap();
            let ids: Vec<&str> = calls.iter().map(|g| g.tool_use_id.as_str()).collect();
            assert_eq!(ids, ["tu_1"]);
            let done = approve_all(&store, "gated", &calls);
            assert_eq!(done.len(), 1);
            let a = done.into_iter().next().unwrap().unwrap();
            assert_eq!(
                (a.call.as_deref(), a.tool.as_str()),
                (Some("tu_1"), "stream_rm")
            );
            assert!(inbox(&store, &store.summaries().unwrap()).items.is_empty());
            match pending(&store, "gated") {
                Err(crate::Error::Refused(r)) => {
                    assert_eq!(r.why, crate::ops::Why::NothingPending);
                    assert_eq!(
                        r.to_string(),
                        "run gated has no call waiting on an approval; nothing was written"
                    );
                }
                other => panic!("{generation}: {other:?}"),
            }
        }
    }
}
