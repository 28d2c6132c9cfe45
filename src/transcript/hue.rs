//! One palette for block labels, so the viewer (ratatui colours) and
//! coloured line output (SGR codes, `--color always` through `less -R`)
//! agree on what colour a kind of block is.

use super::index::Kind;

/// The colour of a block's label, by what the block is, in the viewer and
/// in coloured line output alike: thinking magenta, calls cyan, results
/// green, what waits on or came from a person yellow, the run's course
/// blue, damage red; the rest (prompt, text) uncoloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hue {
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
}

impl Hue {
    /// The colour of a block of `kind`.
    pub fn of(kind: Kind) -> Option<Hue> {
        Some(match kind {
            Kind::Thinking => Hue::Magenta,
            Kind::ToolUse => Hue::Cyan,
            Kind::ToolResult | Kind::ResultBlock => Hue::Green,
            Kind::Answer | Kind::Deferred | Kind::CallApproval | Kind::Decision => Hue::Yellow,
            Kind::Terminal | Kind::Claim | Kind::End => Hue::Blue,
            Kind::Unreadable | Kind::Torn | Kind::Refused | Kind::Gap => Hue::Red,
            _ => return None,
        })
    }

    /// Its SGR foreground code.
    pub fn sgr(self) -> u8 {
        match self {
            Hue::Red => 31,
            Hue::Green => 32,
            Hue::Yellow => 33,
            Hue::Blue => 34,
            Hue::Magenta => 35,
            Hue::Cyan => 36,
        }
    }
}
