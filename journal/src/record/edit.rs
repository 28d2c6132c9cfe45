//! Edits of one record's line that keep every other byte: a value found
//! by position, then proven by decoding (the line must decode to what is
//! wanted, so text inside a string or the start of a longer value is never
//! taken for the key). `upgrade` changes the meta record's version this
//! way, `fork` and `recover` its run id, `recover` a seq.

/// The meta record's bytes with its `run_id` changed from `old` to `new`,
/// every other byte kept. The change is found by position and then proven: the new line must decode to the
/// same JSON but for `meta.run_id`.
pub(crate) fn meta_with_run_id(line: &[u8], old: &str, new: &str) -> Result<Vec<u8>, String> {
    let before: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("the meta record: {e}"))?;
    let mut want = before;
    match want.pointer_mut("/meta/run_id") {
        Some(v) => *v = serde_json::Value::from(new),
        None => return Err("the meta record has no run_id".into()),
    }
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default().into_bytes();
    replace_value(line, b"\"run_id\"", &quoted(old), &quoted(new), &want)
        .ok_or_else(|| "the meta record's run_id could not be found to change".into())
}

/// `line` with the value of a key `key` (quoted), where it is `old`, made
/// `new`, every other byte kept: the first such place whose change makes
/// the line decode to `want` (which proves it was the key meant, not text
/// inside a string, nor the start of a longer value).
pub(crate) fn replace_value(
    line: &[u8],
    key: &[u8],
    old: &[u8],
    new: &[u8],
    want: &serde_json::Value,
) -> Option<Vec<u8>> {
    let blank = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t' | b'\n' | b'\r'));
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(line.get(from..).unwrap_or_default(), key) {
        from += at + key.len();
        // The key, optional blanks, `:`, optional blanks, then `old`.
        let mut i = from;
        while blank(line.get(i)) {
            i += 1;
        }
        if line.get(i) != Some(&b':') {
            continue;
        }
        i += 1;
        while blank(line.get(i)) {
            i += 1;
        }
        if line.get(i..i + old.len()) != Some(old) {
            continue;
        }
        let mut out = Vec::with_capacity(line.len() + new.len());
        out.extend_from_slice(line.get(..i).unwrap_or_default());
        out.extend_from_slice(new);
        out.extend_from_slice(line.get(i + old.len()..).unwrap_or_default());
        if serde_json::from_slice::<serde_json::Value>(&out)
            .ok()
            .as_ref()
            == Some(want)
        {
            return Some(out);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_run_id_changes() {
        let line = br#"{"seq":1,"meta":{"prompt":"\"run_id\":\"a\"","run_id" : "a","version":1}}"#;
        let out = meta_with_run_id(line, "a", "bb").unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#"{"seq":1,"meta":{"prompt":"\"run_id\":\"a\"","run_id" : "bb","version":1}}"#
        );
    }
}
