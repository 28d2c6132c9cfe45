//! Text renderers more than one command uses: a folded run's state (`show`,
//! `fold`) and how a run or resume ended (`run`, `resume`).

pub mod outcome;
pub mod state;
