//! Long lists held through a whole-store pass (issue 40), kept at their
//! length rather than at the capacity their doubling reached.

/// `v` in a block of its own length when more than an eighth of it is
/// spare. `Vec::shrink_to_fit` asks the allocator to shrink the block in
/// place, and mimalloc (the binary's allocator) keeps a block that is
/// still at least half used as it is (`mi_realloc`): 300,000 run ids
/// grown to a capacity of 524,288 keep a block of 524,288 through the
/// whole pass. A copy into a block of the right size frees the old one.
pub(crate) fn fit<T>(mut v: Vec<T>) -> Vec<T> {
    let spare = v.capacity().saturating_sub(v.len());
    if spare <= v.len() / 8 {
        return v;
    }
    let mut out = Vec::with_capacity(v.len());
    out.append(&mut v);
    out
}

/// Pushes `item` onto `v`, a list that never holds more than `most`
/// items: it grows by doubling as a `Vec` does, but its last growth is to
/// `most`, not to twice what it held (300,000 runs' ends would otherwise
/// be held in a block of 524,288 through the end of a listing).
pub(crate) fn push_within<T>(v: &mut Vec<T>, item: T, most: usize) {
    if v.len() == v.capacity() {
        let more = v.len().max(4).min(most.saturating_sub(v.len())).max(1);
        v.reserve_exact(more);
    }
    v.push(item);
}

#[cfg(test)]
mod tests {
    use super::{fit, push_within};

    #[test]
    fn a_list_bounded_by_most_grows_no_further_than_most() {
        let mut v: Vec<u64> = Vec::new();
        for i in 0..300 {
            push_within(&mut v, i, 300);
            assert!(v.capacity() <= 300, "{} at {i}", v.capacity());
        }
        assert_eq!(v.capacity(), 300);
        assert!(v.iter().copied().eq(0..300));
        // A bound that is wrong costs growth, never an item.
        push_within(&mut v, 300, 300);
        assert!(v.iter().copied().eq(0..301));
    }

    #[test]
    fn a_list_is_fitted_to_its_length_with_its_items_in_order() {
        let mut v: Vec<String> = Vec::with_capacity(1000);
        v.extend((0..300).map(|i| i.to_string()));
        let f = fit(v);
        assert_eq!(f.capacity(), 300);
        assert_eq!(f.len(), 300);
        assert!(f.iter().enumerate().all(|(i, s)| *s == i.to_string()));
        // Little spare: the block is kept.
        let mut w: Vec<u32> = Vec::with_capacity(110);
        w.extend(0..100);
        assert_eq!(fit(w).capacity(), 110);
        assert!(fit(Vec::<u8>::with_capacity(64)).is_empty());
    }
}
