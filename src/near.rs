//! What is close to a word an operator typed, for a "did you mean": a run
//! id the store does not hold (`hint`), a filter value no run has
//! (`filter`).

/// Levenshtein distance, in characters.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let left = row.get(j).copied().unwrap_or(usize::MAX);
            let cost = usize::from(ca != *cb);
            let v = (prev + cost).min(above + 1).min(left + 1);
            prev = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = v;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(distance("deferal-waiting", "deferral-waiting"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("héllo", "hello"), 1);
    }
}
