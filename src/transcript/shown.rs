//! A block as it is printed, label and body: what the index keeps of a
//! run's end (`index`), what `block` makes of a record, and what line mode
//! and the viewer print. On its own so that the index and the blocks it
//! points at do not depend on each other.

use crate::output::sanitize;

/// A block ready to print: nothing in it can reach a terminal raw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shown {
    /// One line: `[tool_use exec toolu_01]`.
    pub label: String,
    pub body: Vec<String>,
    /// What a folded row shows after the label when it is not the body's
    /// first line of text (exec's output under a `stderr:` heading).
    pub preview: Option<String>,
    /// The body lines that are commands to paste: the viewer never breaks
    /// one where a paste would split it (src/view/layout.rs).
    pub commands: Vec<usize>,
}

impl Shown {
    pub fn new(label: String, body: Vec<String>) -> Shown {
        Shown {
            label,
            body,
            preview: None,
            commands: Vec::new(),
        }
    }

    /// Body line `k` is a command to paste.
    pub fn command(mut self, k: usize) -> Shown {
        self.commands.push(k);
        self
    }
}

/// Untrusted text as body lines: tabs as spaces, every other control
/// character made visible.
pub fn lines(text: &str) -> Vec<String> {
    text.split('\n')
        .map(|l| sanitize(&l.replace('\t', "    "), false).into_owned())
        .collect()
}
