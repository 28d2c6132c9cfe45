//! Docs that are generated must be current: man pages and completions.

use crate::support::*;

#[test]
fn committed_man_pages_are_current() {
    let fresh = tempfile::tempdir().unwrap();
    let r = fisk(&["man", s(fresh.path())]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let committed = repo().join("man");
    let mut names: Vec<String> = std::fs::read_dir(fresh.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 5);
    for name in &names {
        let want = std::fs::read(fresh.path().join(name)).unwrap();
        let have = std::fs::read(committed.join(name)).unwrap_or_default();
        assert!(
            want == have,
            "man/{name} is stale or missing: run `cargo run -- man man` and commit the result"
        );
    }
    let mut stale = Vec::new();
    for e in std::fs::read_dir(&committed).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(&n) {
            stale.push(n);
        }
    }
    assert!(
        stale.is_empty(),
        "pages for commands that no longer exist: {stale:?}"
    );
}

#[test]
fn completions_are_generated_for_common_shells() {
    for shell in ["bash", "zsh", "fish"] {
        let r = fisk(&["completions", shell]);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("verify"), "{shell}");
    }
}
