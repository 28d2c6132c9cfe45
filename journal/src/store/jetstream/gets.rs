//! Whole runs by batched direct gets (issue 40): what a whole-store read
//! (`Store::read_each`: `inbox`, `search --in`) reads of a few runs out of
//! many. One message a subject (SPEC 8) makes the last message of each
//! subject under `<prefix>.<id>.>` every message of the run, so a batched
//! get of those wildcards (`multi_last`) brings whole runs: only the runs
//! asked for, where a consumer over the whole prefix would bring every
//! message of the stream to the client to keep one in ten (`inbox` on
//! 300,000 runs), and a consumer filtered to many runs costs the server a
//! scan of the stream each (bench/RESULTS.md, "Issue 40").
//!
//! The runs are asked for in the order they end in the stream, so runs
//! written together share a request and the blocks it loads. Each answer
//! comes sorted by stream sequence (`MultiLastSeqs`), capped at the highest
//! end of the request's runs; a run is handed over as listed (its messages
//! at or before its listed end) when they are exactly its record subjects
//! 1..N in stream order, as the consumer's pass vouches for a run, and
//! otherwise handed over as `None`: read on its own.

use super::budget::ReadBudget;
use super::core::Core;
use super::multi::Answer;
use super::RunMessage;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Records asked for in one batched get, by the runs' listed lengths:
/// within the server's [`MOST_ANSWERS`](super::multi::MOST_ANSWERS), with room for records stored
/// since.
const RECORDS: u64 = 900;

/// Batched gets in flight.
const IN_FLIGHT: usize = 4;

/// A run to read: its index in the caller's list, its length and the
/// stream sequence of its last message, as listed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Listed {
    pub(super) index: usize,
    pub(super) records: u64,
    pub(super) end: u64,
}

/// What one request's runs came to: each run's index and messages (`None`:
/// read on its own), or `Err` with the indices when the server takes no
/// batched gets.
type Came = Result<Vec<(usize, Option<Vec<RunMessage>>)>, Vec<usize>>;

impl Core {
    /// Whether whole runs can be read by batched gets: direct gets, a
    /// server that takes batched ones, and one message a subject.
    pub(super) fn gets_whole_runs(&self) -> bool {
        self.direct
            && self.batched_gets.load(Ordering::Relaxed)
            && self.config.max_messages_per_subject == 1
    }

    /// Read `listed` (runs of `names`) by batched gets, handing each to
    /// `give` as [`stream_pass`](Self::stream_pass) does, within `budget`
    /// (a request is sent once what the caller holds is within
    /// `budget.waiting`). Returns the indices of the runs not handed over
    /// because the server refused batched gets: read those another way.
    pub(super) async fn pass_by_gets(
        &self,
        names: &[String],
        mut listed: Vec<Listed>,
        budget: ReadBudget,
        held: &AtomicU64,
        give: &mut impl FnMut(usize, Option<Vec<RunMessage>>),
    ) -> Vec<usize> {
        listed.sort_unstable_by_key(|l| l.end);
        let mut requests: Vec<Vec<Listed>> = Vec::new();
        let mut records = 0u64;
        for l in listed {
            match requests.last_mut() {
                Some(r) if records.saturating_add(l.records) <= RECORDS => r.push(l),
                _ => {
                    records = 0;
                    requests.push(vec![l]);
                }
            }
            records = records.saturating_add(l.records);
        }
        let ready = || held.load(Ordering::Relaxed) <= budget.waiting;
        let mut answers = futures_util::stream::iter(0..requests.len())
            .map(|k| {
                let request = requests.get(k).map_or(&[][..], Vec::as_slice);
                async move {
                    while !ready() {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                    self.get_runs(names, request, k).await
                }
            })
            .buffered(IN_FLIGHT);
        let mut refused = Vec::new();
        while let Some(came) = answers.next().await {
            match came {
                Ok(runs) => {
                    for (i, messages) in runs {
                        if let Some(v) = &messages {
                            let bytes: usize = v.iter().map(|m| m.body.len()).sum();
                            held.fetch_add(bytes as u64, Ordering::Relaxed);
                        }
                        give(i, messages);
                    }
                }
                Err(indices) => refused.extend(indices),
            }
        }
        refused
    }

    /// The runs of one request, asked again for those a full answer left
    /// out, and in halves when more matched than one answer holds.
    async fn get_runs(&self, names: &[String], request: &[Listed], lane: usize) -> Came {
        let mut out: Vec<(usize, Option<Vec<RunMessage>>)> = Vec::new();
        let Ok(mut ask) = self.multi_get(lane).await else {
            return Ok(request.iter().map(|l| (l.index, None)).collect());
        };
        let mut queue: Vec<Vec<Listed>> = vec![request.to_vec()];
        while let Some(todo) = queue.pop() {
            let subjects: Vec<String> = todo
                .iter()
                .map(|l| {
                    let run = names.get(l.index).map_or("", String::as_str);
                    format!("{}.{run}.>", self.prefix)
                })
                .collect();
            let up_to = todo.iter().map(|l| l.end).max();
            let (got, pending) = match ask.ask(&subjects, up_to).await {
                Ok(Answer::Got(got, pending)) => (got, pending),
                Ok(Answer::TooMany) if todo.len() > 1 => {
                    let (a, b) = todo.split_at(todo.len() / 2);
                    queue.push(b.to_vec());
                    queue.push(a.to_vec());
                    continue;
                }
                Ok(Answer::Unsupported) => {
                    self.batched_gets.store(false, Ordering::Relaxed);
                    if out.is_empty() && queue.is_empty() {
                        return Err(request.iter().map(|l| l.index).collect());
                    }
                    // Read on their own what is left.
                    out.extend(
                        todo.iter()
                            .chain(queue.iter().flatten())
                            .map(|l| (l.index, None)),
                    );
                    return Ok(out);
                }
                // One run of more records than an answer holds: read on
                // its own.
                Ok(Answer::TooMany) => {
                    out.extend(todo.iter().map(|l| (l.index, None)));
                    continue;
                }
                // No answer (a late one would come on this subscription):
                // what is left is read on its own, which says why.
                Err(_) => {
                    out.extend(
                        todo.iter()
                            .chain(queue.iter().flatten())
                            .map(|l| (l.index, None)),
                    );
                    return Ok(out);
                }
            };
            let brought = got.len();
            let mut messages: Vec<Vec<RunMessage>> = todo.iter().map(|_| Vec::new()).collect();
            let at: HashMap<&str, usize> = todo
                .iter()
                .enumerate()
                .filter_map(|(k, l)| names.get(l.index).map(|r| (r.as_str(), k)))
                .collect();
            for m in got {
                let Some((run, seq)) = self.parse_subject(&m.subject) else {
                    continue;
                };
                let Some(k) = at.get(run).copied() else {
                    continue;
                };
                let (Some(v), Some(l)) = (messages.get_mut(k), todo.get(k)) else {
                    continue;
                };
                // Stored after the listing: not part of the run as listed.
                if m.sequence <= l.end {
                    v.push(RunMessage {
                        subject: m.subject.to_string(),
                        subject_seq: seq,
                        stream_seq: m.sequence,
                        body: m.payload.to_vec(),
                    });
                }
            }
            let mut again = Vec::new();
            for (l, mut v) in todo.iter().zip(messages) {
                // Sorted answers: the run's last message come means every
                // one before it has.
                let ended = v.iter().any(|m| m.stream_seq == l.end);
                if !ended && pending > 0 && brought > 0 {
                    again.push(*l);
                    continue;
                }
                v.sort_unstable_by_key(|m| m.stream_seq);
                let whole = ended
                    && v.len() as u64 == l.records
                    && v.iter().zip(1u64..).all(|(m, k)| m.subject_seq == Some(k));
                out.push((l.index, whole.then_some(v)));
            }
            match again.len() {
                0 => {}
                // None done: the answer's bytes went to runs that interleave
                // with these (the answer runs in stream order). Fewer runs
                // a request, down to one run heavier than an answer, which
                // is read on its own.
                n if n == todo.len() => match again.split_at(n / 2) {
                    ([], [one]) => out.push((one.index, None)),
                    (a, b) => {
                        queue.push(b.to_vec());
                        queue.push(a.to_vec());
                    }
                },
                _ => queue.push(again),
            }
        }
        Ok(out)
    }
}
