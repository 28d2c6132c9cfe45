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

/// b-28, the brief: completion is dynamic. The script `completions bash`
/// prints, sourced in a real bash, completes `show defer<TAB>` with the
/// run ids of the store the command line names, through the binary
/// itself; and a subcommand name still completes.
#[test]
fn bash_completion_offers_the_stores_run_ids() {
    let store = store_copy("runs");
    let bindir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(bin(), bindir.path().join("fisk-admin")).unwrap();
    let complete = |line: &str| -> Vec<String> {
        let words: Vec<&str> = line.split(' ').collect();
        let script = format!(
            "source <(fisk-admin completions bash) || exit 9
             COMP_WORDS=({line}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9
             _clap_complete_fisk_admin fisk-admin '{}' '{}'
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "-c", &script])
            .env(
                "PATH",
                format!("{}:{}", s(bindir.path()), std::env::var("PATH").unwrap()),
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let d = s(store.path()).to_owned();
    let got = complete(&format!("fisk-admin --state-dir {d} show defer"));
    assert_eq!(
        got,
        [
            "deferral-answered",
            "deferral-answered-unresumed",
            "deferral-partly-answered",
            "deferral-waiting"
        ],
        "{got:?}"
    );
    let got = complete(&format!("fisk-admin --state-dir {d} rm tool"));
    assert_eq!(got, ["tool-batch"], "{got:?}");
    let got = complete("fisk-admin verif");
    assert!(got.iter().any(|c| c == "verify"), "{got:?}");
}
