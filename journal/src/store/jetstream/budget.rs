//! The memory a whole-store read of a stream may hold, and the caller's
//! side of its count: below both the consumer's pass (`bulk.rs`) and the
//! batched gets (`gets.rs`), which share it.

/// How much of a JetStream source
/// [`JetStreamStore::stream_runs`](super::JetStreamStore::stream_runs) may hold,
/// in body bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadBudget {
    /// Runs still being read (interleaved with others in the stream):
    /// beyond this, the open runs holding the most are given up (read on
    /// their own) until half of it is held.
    pub open: u64,
    /// Runs handed over and not yet released by the caller: beyond this,
    /// reading pauses until the caller catches up.
    pub waiting: u64,
}

impl ReadBudget {
    /// No limit.
    pub const UNLIMITED: ReadBudget = ReadBudget {
        open: u64::MAX,
        waiting: u64::MAX,
    };
}

/// Take `bytes` off the count of source bytes
/// [`JetStreamStore::stream_runs`](super::JetStreamStore::stream_runs)
/// holds (never below zero): the caller's side once it is done with a run.
pub fn release(held: &std::sync::atomic::AtomicU64, bytes: u64) {
    use std::sync::atomic::Ordering;
    let _ = held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
        Some(h.saturating_sub(bytes))
    });
}
