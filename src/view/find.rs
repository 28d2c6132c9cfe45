//! The viewer's search (`/RE`, `n`, `N`): a regular expression compiled as
//! `search --match` compiles one (`filter::parse_regex`: RE2 syntax, case
//! matters, `(?i)` for any case, the same size limit), so a pattern finds
//! the same text in both. Every match is a line of a block as shown (its
//! label or one body line); all of them are listed once, so `n`/`N` step
//! through them and the status bar counts them (`match 3/17`). Blocks the
//! index adds later (a run still being written) are scanned when next
//! searched.

use regex::Regex;

/// Where a match is: a block and its line (`None`: the label).
pub type At = (usize, Option<usize>);

/// One search: its pattern and the matches found in the blocks scanned.
pub struct Search {
    /// The pattern as typed.
    pub text: String,
    pub re: Regex,
    /// Every match in the blocks before `scanned`, in transcript order.
    pub hits: Vec<At>,
    /// Blocks looked at so far.
    pub scanned: usize,
    /// The match the cursor was last put on (an index into `hits`).
    pub current: Option<usize>,
}

impl Search {
    /// A search for `text`, or why it is not a pattern.
    pub fn new(text: &str) -> Result<Search, String> {
        let re = crate::filter::parse_regex(text)?;
        Ok(Search {
            text: text.to_owned(),
            re,
            hits: Vec::new(),
            scanned: 0,
            current: None,
        })
    }

    /// Add block `i`'s matches (`label`, then `body` lines).
    pub fn scan(&mut self, i: usize, label: &str, body: &[String]) {
        if self.re.is_match(label) {
            self.hits.push((i, None));
        }
        for (k, line) in body.iter().enumerate() {
            if self.re.is_match(line) {
                self.hits.push((i, Some(k)));
            }
        }
        self.scanned = i + 1;
    }

    /// The match after (`forward`) or before `from`, and whether the
    /// search went round the end to find it.
    pub fn next(&self, from: Order, forward: bool) -> Option<(usize, bool)> {
        let key = |h: &At| order(*h);
        if forward {
            let i = self.hits.partition_point(|h| key(h) <= from);
            match i < self.hits.len() {
                true => Some((i, false)),
                false => (!self.hits.is_empty()).then_some((0, true)),
            }
        } else {
            let i = self.hits.partition_point(|h| key(h) < from);
            match i {
                0 => self.hits.len().checked_sub(1).map(|last| (last, true)),
                i => Some((i - 1, false)),
            }
        }
    }
}

/// A place in the transcript, ordered: block, then line (the label first).
pub type Order = (usize, usize);

/// The order of match `at`.
pub fn order(at: At) -> Order {
    (at.0, at.1.map_or(0, |k| k + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn matches_are_lines_and_n_steps_through_them_wrapping() {
        let mut s = Search::new("exit_status.?: [1-9]").unwrap();
        s.scan(0, "[prompt]", &lines(&["exit_status: 0"]));
        s.scan(
            1,
            "[tool_result exit_status: 1]",
            &lines(&["a", "exit_status\": 2"]),
        );
        s.scan(2, "[text]", &lines(&["exit_status: 3", "EXIT_STATUS: 4"]));
        assert_eq!(s.hits, [(1, None), (1, Some(1)), (2, Some(0))]);
        assert_eq!(s.scanned, 3);
        assert_eq!(s.next((0, usize::MAX), true), Some((0, false)));
        assert_eq!(s.next(order((1, None)), true), Some((1, false)));
        assert_eq!(s.next(order((2, Some(0))), true), Some((0, true)));
        assert_eq!(s.next(order((1, None)), false), Some((2, true)));
        assert_eq!(s.next(order((2, Some(0))), false), Some((1, false)));
    }

    /// The same compile as `search --match`: case matters unless `(?i)`;
    /// a bad pattern and a too-large one say so.
    #[test]
    fn patterns_compile_as_search_match_does() {
        let mut s = Search::new("(?i)orders").unwrap();
        s.scan(0, "ORDERS", &[]);
        assert_eq!(s.hits.len(), 1);
        let mut s = Search::new("orders").unwrap();
        s.scan(0, "ORDERS", &[]);
        assert!(s.hits.is_empty());
        assert_eq!(s.next((0, 0), true), None);
        let e = Search::new("a(").err().unwrap();
        assert!(e.contains("is not a valid regular expression"), "{e}");
        let e = Search::new(".{0,5000}qqqqqq").err().unwrap();
        assert!(e.contains("too large"), "{e}");
    }
}
