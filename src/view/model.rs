//! What the viewer shows and where: the cursor's block, the first row on
//! screen, which blocks are folded, the search. Pure state over the lazy
//! index: every method lays out only the blocks it walks past, and a
//! block's text is decoded once and cached while it stays near the screen.

use super::layout::{self, Row, GUTTER};
use crate::transcript::block::shown;
use crate::transcript::index::{Item, Kind, Transcript};
use crate::transcript::shown::Shown;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Cached blocks beyond this are dropped (all at once: cheap, and the
/// screen's blocks are decoded again on the next draw).
const CACHE: usize = 4096;

pub struct Model<'t> {
    pub t: &'t mut Transcript,
    /// The block under the cursor.
    pub cursor: usize,
    /// The block at the top of the screen and its first row on screen.
    pub top: usize,
    pub top_row: usize,
    /// Columns in all (gutter included) and rows for blocks.
    pub width: usize,
    pub height: usize,
    all_open: bool,
    flipped: HashSet<usize>,
    shown: HashMap<usize, Rc<Shown>>,
    laid: HashMap<(usize, bool), Rc<Vec<Row>>>,
    /// The last search, lower-cased.
    pub needle: Option<String>,
    /// The search being typed after `/`.
    pub prompt: Option<String>,
    /// A one-line note for the status bar (cleared by the next key).
    pub message: Option<String>,
}

impl<'t> Model<'t> {
    pub fn new(t: &'t mut Transcript, width: usize, height: usize) -> Self {
        let m = Model {
            t,
            cursor: 0,
            top: 0,
            top_row: 0,
            width,
            height: height.max(1),
            all_open: false,
            flipped: HashSet::new(),
            shown: HashMap::new(),
            laid: HashMap::new(),
            needle: None,
            prompt: None,
            message: None,
        };
        m.t.ensure(m.height);
        m
    }

    pub fn text_width(&self) -> usize {
        self.width.saturating_sub(GUTTER).max(8)
    }

    /// Whether block `i` exists (indexing as far as needed).
    pub fn has(&mut self, i: usize) -> bool {
        self.t.ensure(i);
        i < self.t.items().len()
    }

    pub fn item(&self, i: usize) -> Option<Item> {
        self.t.item(i).copied()
    }

    pub fn folded(&self, i: usize) -> bool {
        let base = !self.all_open && self.item(i).is_some_and(|it| it.kind.folded_by_default());
        base != self.flipped.contains(&i)
    }

    pub fn shown(&mut self, i: usize) -> Rc<Shown> {
        if let Some(s) = self.shown.get(&i) {
            return Rc::clone(s);
        }
        let Some(it) = self.item(i) else {
            return Rc::new(Shown::default());
        };
        if self.shown.len() > CACHE {
            self.shown.clear();
        }
        let s = Rc::new(shown(self.t, &it, None));
        self.shown.insert(i, Rc::clone(&s));
        s
    }

    pub fn rows(&mut self, i: usize) -> Rc<Vec<Row>> {
        let folded = self.folded(i);
        if let Some(r) = self.laid.get(&(i, folded)) {
            return Rc::clone(r);
        }
        let s = self.shown(i);
        if self.laid.len() > CACHE {
            self.laid.clear();
        }
        let r = Rc::new(layout::rows(&s, folded, self.text_width()));
        self.laid.insert((i, folded), Rc::clone(&r));
        r
    }

    pub fn height_of(&mut self, i: usize) -> usize {
        self.rows(i).len().max(1)
    }

    pub fn resize(&mut self, width: usize, height: usize) {
        if width != self.width {
            self.laid.clear();
        }
        self.width = width;
        self.height = height.max(1);
        self.top_row = self.top_row.min(self.height_of(self.top) - 1);
        if !self.visible(self.cursor) {
            self.reveal(self.cursor);
        }
        self.clamp_bottom();
    }

    pub fn scroll_down(&mut self, mut n: usize) {
        while n > 0 {
            let h = self.height_of(self.top);
            if self.top_row + 1 < h {
                let d = n.min(h - 1 - self.top_row);
                self.top_row += d;
                n -= d;
            } else if self.has(self.top + 1) {
                self.top += 1;
                self.top_row = 0;
                n -= 1;
            } else {
                break;
            }
        }
    }

    pub fn scroll_up(&mut self, mut n: usize) {
        while n > 0 {
            if self.top_row > 0 {
                let d = n.min(self.top_row);
                self.top_row -= d;
                n -= d;
            } else if self.top == 0 {
                break;
            } else {
                self.top -= 1;
                self.top_row = self.height_of(self.top) - 1;
                n -= 1;
            }
        }
    }

    /// The screen row block `i` starts on, when it starts on screen or
    /// above it (negative); `None` when it starts below the screen.
    pub fn start_row(&mut self, i: usize) -> Option<isize> {
        if i < self.top {
            return Some(-1);
        }
        let mut row = -(self.top_row as isize);
        let mut j = self.top;
        while j < i {
            row += self.height_of(j) as isize;
            if row >= self.height as isize {
                return None;
            }
            j += 1;
        }
        Some(row)
    }

    /// Whether some row of block `i` is on screen.
    pub fn visible(&mut self, i: usize) -> bool {
        match self.start_row(i) {
            Some(r) if r >= 0 => true,
            Some(_) if i == self.top => true,
            _ => false,
        }
    }

    /// Scroll so block `i` starts on screen with as much of it as fits.
    pub fn reveal(&mut self, i: usize) {
        if i < self.top || (i == self.top && self.top_row > 0) || i > self.top + self.height {
            self.top = i;
            self.top_row = 0;
            return;
        }
        match self.start_row(i) {
            Some(r) if r >= 0 => {
                let need = self.height_of(i).min(self.height);
                let over = r as usize + need;
                if over > self.height {
                    self.scroll_down(over - self.height);
                }
            }
            _ => {
                // Below the screen: put its end (or its start, when it is
                // taller than the screen) at the bottom.
                self.top = i;
                self.top_row = 0;
                let h = self.height_of(i);
                if h < self.height {
                    self.scroll_up(self.height - h);
                }
            }
        }
    }

    /// After the last block no empty screen: scroll back so the end sits
    /// at the bottom (once the index is complete).
    pub fn clamp_bottom(&mut self) {
        if !self.t.done() {
            return;
        }
        let mut rows = self.height_of(self.top) - self.top_row;
        let mut j = self.top + 1;
        while rows < self.height && j < self.t.items().len() {
            rows += self.height_of(j);
            j += 1;
        }
        if rows < self.height {
            self.scroll_up(self.height - rows);
        }
    }

    pub fn move_cursor(&mut self, down: bool) {
        if down {
            if self.has(self.cursor + 1) {
                self.cursor += 1;
            }
        } else {
            self.cursor = self.cursor.saturating_sub(1);
        }
        self.reveal(self.cursor);
    }

    pub fn page(&mut self, down: bool) {
        if down {
            self.scroll_down(self.height);
            self.clamp_bottom();
        } else {
            self.scroll_up(self.height);
        }
        self.cursor = if self.top_row == 0 || !self.has(self.top + 1) {
            self.top
        } else {
            match self.start_row(self.top + 1) {
                Some(_) => self.top + 1,
                None => self.top,
            }
        };
    }

    pub fn first(&mut self) {
        self.cursor = 0;
        self.top = 0;
        self.top_row = 0;
    }

    pub fn last(&mut self) {
        self.t.finish();
        self.cursor = self.t.items().len().saturating_sub(1);
        self.top = self.cursor;
        self.top_row = 0;
        self.clamp_bottom();
    }

    pub fn toggle(&mut self) {
        let i = self.cursor;
        if !self.flipped.remove(&i) {
            self.flipped.insert(i);
        }
        self.after_refold();
    }

    pub fn toggle_all(&mut self) {
        self.all_open = !self.all_open;
        self.flipped.clear();
        self.after_refold();
        self.message = Some(if self.all_open {
            "every block open (Z folds thinking and tool output again)".into()
        } else {
            "thinking and tool output folded".into()
        });
    }

    fn after_refold(&mut self) {
        self.top_row = self.top_row.min(self.height_of(self.top) - 1);
        self.reveal(self.cursor);
        self.clamp_bottom();
    }

    /// Search from the cursor for the current needle; a hit inside a
    /// folded block opens it and scrolls its matching line into view.
    pub fn search(&mut self, forward: bool) {
        let Some(needle) = self.needle.clone().filter(|n| !n.is_empty()) else {
            self.message = Some("no search yet: press / and type".into());
            return;
        };
        let start = self.cursor;
        let mut i = start;
        let mut wrapped = false;
        loop {
            if forward {
                if self.has(i + 1) {
                    i += 1;
                } else if wrapped {
                    break;
                } else {
                    i = 0;
                    wrapped = true;
                }
            } else if i > 0 {
                i -= 1;
            } else if wrapped {
                break;
            } else {
                self.t.finish();
                i = self.t.items().len().saturating_sub(1);
                wrapped = true;
            }
            let s = self.shown_uncached(i);
            if let Some(line) = hit(&s, &needle) {
                self.land(i, &s, line);
                if wrapped {
                    self.message = Some(format!("search wrapped: {}", self.status_of(i)));
                }
                return;
            }
            if i == start && wrapped {
                break;
            }
        }
        self.message = Some(format!("not found: {needle}"));
    }

    fn status_of(&self, i: usize) -> String {
        format!("block {}", i + 1)
    }

    fn shown_uncached(&mut self, i: usize) -> Rc<Shown> {
        match self.shown.get(&i) {
            Some(s) => Rc::clone(s),
            None => match self.item(i) {
                Some(it) => Rc::new(shown(self.t, &it, None)),
                None => Rc::new(Shown::default()),
            },
        }
    }

    /// Put the cursor on block `i`, open, with body line `line` (`None`:
    /// the label) on screen.
    fn land(&mut self, i: usize, s: &Shown, line: Option<usize>) {
        self.cursor = i;
        if self.folded(i) {
            self.toggle_only(i);
        }
        self.reveal(i);
        let row = line.map_or(0, |k| layout::row_of_line(s, k, self.text_width()));
        if let Some(start) = self.start_row(i) {
            if start + row as isize >= self.height as isize || start < 0 {
                self.top = i;
                self.top_row = row.saturating_sub(self.height / 3);
            }
        } else {
            self.top = i;
            self.top_row = row.saturating_sub(self.height / 3);
        }
        self.clamp_bottom();
    }

    fn toggle_only(&mut self, i: usize) {
        if !self.flipped.remove(&i) {
            self.flipped.insert(i);
        }
    }

    /// The status bar's left part.
    pub fn position(&self) -> String {
        let n = self.t.items().len();
        let what = match self.item(self.cursor) {
            Some(it) if it.kind == Kind::End => "the end".to_owned(),
            Some(it) if it.seq > 0 => format!("seq {}", it.seq),
            _ => String::new(),
        };
        let more = if self.t.done() {
            String::new()
        } else {
            format!(" (indexing {}%)", self.t.percent())
        };
        format!(
            "{} · block {}/{n}{more} {what}",
            self.t.run,
            self.cursor + 1
        )
    }
}

/// The first body line of `s` holding `needle` (lower-case), `Some(None)`
/// for the label, `None` when nothing does.
pub fn hit(s: &Shown, needle: &str) -> Option<Option<usize>> {
    if contains(&s.label, needle) {
        return Some(None);
    }
    s.body.iter().position(|l| contains(l, needle)).map(Some)
}

/// Case-insensitive containment of a lower-case needle.
pub fn contains(hay: &str, needle: &str) -> bool {
    if needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        return n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    hay.to_lowercase().contains(needle)
}
