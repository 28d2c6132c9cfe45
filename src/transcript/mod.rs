//! The pieces of `show RUN --transcript` (src/cmd/show/transcript.rs):
//! the block index (`index`), each block as it is shown (`block`,
//! `shown`), the run's end (`end`), and the labelled line output (`text`,
//! through `pager`); the full-screen viewer (src/view/) draws the same
//! blocks. Both read the journal's bytes once and index its blocks lazily,
//! so neither folds nor decodes the whole run up front.

pub mod block;
pub mod end;
pub mod hue;
pub mod index;
pub mod json;
pub mod output;
pub mod pager;
pub mod shown;
pub mod text;
