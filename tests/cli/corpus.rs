//! The shipped corpus: healthy runs fold to their expected state, damaged
//! journals give exactly their expected findings.
