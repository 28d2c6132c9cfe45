//! Text renderers more than one command uses: a folded run's state (`show`,
//! `fold`), how a run or resume ended (`run`, `resume`), and the per-tool
//! figures of `stats RUN` and `stats --all`.

pub mod outcome;
pub mod state;
pub mod stats;
