//! What the viewer shows and where: the cursor's block, the first row on
//! screen, which blocks are folded, the search. Pure state over the lazy
//! index: every method lays out only the blocks it walks past, and a
//! block's text is decoded once and cached while it stays near the screen.

use super::find::{order, Search};
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
    /// The last search and its matches.
    pub find: Option<Search>,
    /// The help screen is up (`?`).
    pub help: bool,
    /// A count typed before a key (`50G`, `5j`).
    pub count: Option<usize>,
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
            find: None,
            help: false,
            count: None,
            prompt: None,
            message: None,
        };
        m.t.ensure(m.height);
        // `--find RE`: open on its first match, as `less -p` does.
        let mut m = m;
        if let Some((text, _)) = m.t.find.clone() {
            m.start_search(&text);
        }
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

    /// The cursor `n` blocks down or up (as far as there are blocks).
    pub fn move_by(&mut self, n: usize, down: bool) {
        if down {
            let to = self.cursor.saturating_add(n);
            self.cursor = if self.has(to) {
                to
            } else {
                self.t.items().len().saturating_sub(1).max(self.cursor)
            };
        } else {
            self.cursor = self.cursor.saturating_sub(n);
        }
        self.reveal(self.cursor);
    }

    pub fn page(&mut self, down: bool) {
        self.scroll(self.height, down);
    }

    /// `C-d`/`C-u`: half a screen (as less and vim), the cursor kept on
    /// screen as a page keeps it.
    pub fn half(&mut self, down: bool) {
        self.scroll((self.height / 2).max(1), down);
    }

    /// Scroll `rows` down or up and put the cursor on the first block that
    /// starts on screen.
    fn scroll(&mut self, rows: usize, down: bool) {
        if down {
            self.scroll_down(rows);
            self.clamp_bottom();
        } else {
            self.scroll_up(rows);
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

    /// Enter at the `/` prompt: search for `text` from the cursor (an
    /// empty pattern searches again for the last one).
    pub fn start_search(&mut self, text: &str) {
        if !text.is_empty() {
            match Search::new(text) {
                Ok(f) => self.find = Some(f),
                Err(e) => {
                    self.message = Some(crate::output::sanitize(&e, false).into_owned());
                    return;
                }
            }
        }
        self.search(true);
    }

    /// Every block not yet searched, searched (the whole index: the count
    /// of matches needs them all).
    fn scan(&mut self) {
        self.t.finish();
        let Some(mut f) = self.find.take() else {
            return;
        };
        for i in f.scanned..self.t.items().len() {
            let s = self.shown_uncached(i);
            f.scan(i, &s.label, &s.body);
        }
        self.find = Some(f);
    }

    /// The next (or previous) match from the cursor's: a match inside a
    /// folded block opens it and scrolls its line into view, and the
    /// status bar says which match of how many it is.
    pub fn search(&mut self, forward: bool) {
        if self.find.is_none() {
            self.message = Some("no search yet: press / and type".into());
            return;
        }
        self.scan();
        let cursor = self.cursor;
        let Some(f) = self.find.as_mut() else {
            return;
        };
        let from = match f.current.and_then(|c| f.hits.get(c)) {
            Some(h) if h.0 == cursor => order(*h),
            // From the cursor's block: past it forward, before it back.
            _ => (cursor, if forward { usize::MAX } else { 0 }),
        };
        let found = f
            .next(from, forward)
            .and_then(|(k, wrapped)| Some((k, *f.hits.get(k)?, wrapped)));
        let Some((k, at, wrapped)) = found else {
            self.message = Some(format!("not found: {}", f.text));
            return;
        };
        f.current = Some(k);
        let count = format!("match {}/{}", k + 1, f.hits.len());
        let s = self.shown_uncached(at.0);
        self.land(at.0, &s, at.1);
        self.message = Some(if wrapped {
            format!("{count}, search wrapped")
        } else {
            count
        });
    }

    /// `<n>G`: block `n` as the status bar counts them (the last when
    /// there are fewer).
    pub fn goto(&mut self, n: usize) {
        let i = n.saturating_sub(1);
        if !self.has(i) {
            return self.last();
        }
        self.cursor = i;
        self.top = i;
        self.top_row = 0;
        self.clamp_bottom();
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
