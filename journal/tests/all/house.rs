//! The house: how the library's and the binary's modules may use each
//! other, checked on their source so a crossed floor fails here and not in
//! the next review (issue 37: the floors were crossed twice before).
//!
//! - Each crate's top-level modules stand on floors, lowest first
//!   ([`LIBRARY`], [`BINARY`]); a module uses only modules on floors below
//!   its own. No arrow runs up or sideways, so there is no circle either:
//!   the base error, the fold and the store know nothing of `ops`,
//!   `runner` or `recover`.
//! - A module the table does not place fails too: a new module is put on
//!   a floor on purpose.
//! - No command of the binary uses another (`src/cmd/*`): what two share
//!   goes below them.
//! - The store's kind is the store's business: no `Store::File` or
//!   `Store::JetStream` outside `journal/src/store/`; ask the store.
//! - No two files of one module use each other in a circle (through
//!   `super::`): what both need goes in a file below both.
//! - No source file over [`MAX_LINES`] lines.
//! - Every test file is in a test binary: the library's are modules of
//!   this one, the binary's of `tests/cli`.
//!
//! Test code (`#[cfg(test)]` items, `tests.rs` files) may reach anywhere:
//! the floors are those of what ships. Comments and strings are not read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The library's floors, lowest first.
const LIBRARY: &[&[&str]] = &[
    // Leaves: Go's JSON, time, text for a shell, digests, long lists.
    &[
        "bounded", "digest", "durable", "gojson", "held", "paths", "shell", "time",
    ],
    // One record, and where things are.
    &["place", "record"],
    // What records say, line by line.
    &["calls", "lines", "search"],
    // The fold (a run's state from its records, SPEC 3) and the tallies.
    &["fold", "stats"],
    // The run model: what each state lets a write do.
    &["state"],
    &["refusal"],
    // The base error.
    &["error"],
    // The audit log's entries (issue 38): a format, like a record's.
    &["agent", "audit", "id", "nats", "schema"],
    &["fingerprint", "verify"],
    &["upgrade", "validate"],
    // The stores, both backends.
    &["store"],
    // What is made of runs in a store.
    &["custody", "export", "migrate", "recover", "runner"],
    // What an operator does by hand.
    &["ops"],
];

/// The binary's floors, lowest first (`main.rs` is the root).
const BINARY: &[&[&str]] = &[
    // Leaves: rendering, the grouped help, gauges, did-you-mean.
    &["help", "metrics", "near", "output"],
    &["filter", "invocation"],
    &["hint"],
    &["error"],
    &[
        "ask",
        "audit",
        "batch",
        "cost",
        "open",
        "render",
        "signal",
        "transcript",
    ],
    // Run ids offered to a shell's completion; listing again until Ctrl-C.
    &["complete", "watch"],
    // The command line.
    &["cli"],
    &["runs", "view"],
    &["cmd"],
];

/// The longest a source file may be.
const MAX_LINES: usize = 1000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `text` with comments, strings and character literals blanked (each
/// replaced by a space), so only code is left to read.
fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            out.push(' ');
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(hashes) = raw_string_start(rest) {
            // r"..", r#".."#, br#".."#: ends at a quote and as many #.
            i += rest.iter().position(|c| *c == b'"').unwrap() + 1;
            let end: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while i < b.len() && !b[i..].starts_with(&end) {
                i += 1;
            }
            i += end.len();
            out.push(' ');
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\''), or a lifetime ('a).
            match char_literal_len(&text[i..]) {
                Some(n) => {
                    i += n;
                    out.push(' ');
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// How many `#` a raw string starting at `s` has, if one does.
fn raw_string_start(s: &[u8]) -> Option<usize> {
    let s = s.strip_prefix(b"b").unwrap_or(s);
    let s = s.strip_prefix(b"r")?;
    let hashes = s.iter().take_while(|c| **c == b'#').count();
    (s.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The length of the character literal at `s` (which starts with `'`),
/// or `None` for a lifetime.
fn char_literal_len(s: &str) -> Option<usize> {
    let mut cs = s.chars().skip(1);
    let c = cs.next()?;
    if c == '\\' {
        return Some(s.get(2..)?.find('\'')? + 3);
    }
    (cs.next() == Some('\'')).then_some(2 + c.len_utf8())
}

/// `code` without its `#[cfg(test)]` items (a test module, a test-only
/// function): the attribute up to the end of the item's block or `;`.
fn shipped(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let b = item.as_bytes();
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in b.iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules of its crate that `code` names: `crate::m`, and
/// each `m` of a `use crate::{m, ..}` group.
fn crate_uses(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        // Not `journal::crate::`-like paths of another crate: `crate`
        // must start a path.
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let after = code[at + "crate::".len()..].trim_start();
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        let m = ident(&group[i..]);
                        if !m.is_empty() && m != "self" {
                            out.insert(m);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let m = ident(after);
            if !m.is_empty() {
                out.insert(m);
            }
        }
    }
    out
}

/// The top-level module of `file` in the crate rooted at `src`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_owned()
}

/// Whether `file` is test code: a `tests.rs`, or a module some file of
/// its directory's module declares under `#[cfg(test)]`.
fn is_test_file(file: &Path) -> bool {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return true;
    }
    let Some(name) = file.file_stem().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some(dir) = file.parent() else {
        return false;
    };
    // `dir/mod.rs` (or `dir.rs`) declares `dir/name.rs`.
    let parents = [dir.join("mod.rs"), dir.with_extension("rs")];
    parents
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .any(|t| {
            let t: Vec<&str> = t.lines().map(str::trim).collect();
            t.windows(2)
                .any(|w| w[0] == "#[cfg(test)]" && w[1] == format!("mod {name};"))
        })
}

/// The code of `file` that ships: comments, strings and test items out.
fn shipped_code(file: &Path) -> String {
    shipped(&code_of(&std::fs::read_to_string(file).unwrap()))
}

/// Every arrow of the crate at `src` that breaks `floors`: `a -> b
/// (file)` where b is not on a floor below a's, and every module the
/// table does not place.
fn crossed(src: &Path, floors: &[&[&str]], root: &str) -> Vec<String> {
    let floor = |m: &str| floors.iter().position(|f| f.contains(&m));
    let mut bad = Vec::new();
    for file in sources(src) {
        let from = module_of(src, &file);
        if from == root || is_test_file(&file) {
            continue;
        }
        let Some(f) = floor(&from) else {
            bad.push(format!(
                "module {from} ({}) is on no floor: put it on one",
                file.display()
            ));
            continue;
        };
        for to in crate_uses(&shipped_code(&file)) {
            if to == from {
                continue;
            }
            match floor(&to) {
                Some(t) if t < f => {}
                Some(_) => bad.push(format!(
                    "{from} -> {to} ({}): {to} is not on a floor below {from}",
                    file.display()
                )),
                // A crate-root item (a re-export of lib.rs/main.rs).
                None => {}
            }
        }
    }
    bad
}

#[test]
fn the_library_uses_only_floors_below() {
    let bad = crossed(&repo().join("journal/src"), LIBRARY, "lib");
    assert!(bad.is_empty(), "arrows up or sideways:\n{}", bad.join("\n"));
}

#[test]
fn the_binary_uses_only_floors_below() {
    let bad = crossed(&repo().join("src"), BINARY, "main");
    assert!(bad.is_empty(), "arrows up or sideways:\n{}", bad.join("\n"));
}

#[test]
fn no_command_uses_another() {
    let cmd = repo().join("src/cmd");
    let commands: BTreeSet<String> = std::fs::read_dir(&cmd)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            p.file_stem().unwrap().to_string_lossy().into_owned()
        })
        .filter(|c| c != "mod")
        .collect();
    let mut bad = Vec::new();
    for file in sources(&cmd) {
        let own = module_of(&cmd, &file);
        if own == "mod" {
            continue;
        }
        let code = shipped_code(&file);
        // The command file's parent is `cmd`; a command directory's files
        // reach `cmd` through `super::super`.
        let nested = file.parent() != Some(cmd.as_path());
        let sibling = if nested { "super::super::" } else { "super::" };
        for other in &commands {
            if *other == own {
                continue;
            }
            for path in [format!("crate::cmd::{other}"), format!("{sibling}{other}")] {
                let named = code.match_indices(&path).any(|(at, _)| {
                    let next = code[at + path.len()..].chars().next();
                    !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                if named {
                    bad.push(format!("{} uses command {other}", file.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn only_the_store_knows_its_kind() {
    let repo = repo();
    let store = repo.join("journal/src/store");
    let mut bad = Vec::new();
    for file in sources(&repo.join("journal/src"))
        .into_iter()
        .chain(sources(&repo.join("src")))
    {
        if file.starts_with(&store) || is_test_file(&file) {
            continue;
        }
        let code = shipped_code(&file);
        for kind in ["Store::File", "Store::JetStream"] {
            if code.contains(kind) {
                bad.push(format!("{} names {kind}", file.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "ask the store, not its kind:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_over_the_limit() {
    let repo = repo();
    let mut bad = Vec::new();
    for file in sources(&repo.join("journal/src"))
        .into_iter()
        .chain(sources(&repo.join("src")))
    {
        let n = std::fs::read_to_string(&file).unwrap().lines().count();
        if n > MAX_LINES {
            bad.push(format!("{}: {n} lines", file.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        bad.join("\n")
    );
}

/// The sibling modules `code` names through `super::` (`super::m::x`,
/// `use super::{m::x, n}`), among `siblings`.
fn sibling_uses(code: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let ident = |t: &str| -> String {
        t.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("super::") {
        let rest = &code[at + "super::".len()..];
        let names: Vec<String> = match rest.strip_prefix('{') {
            // A group: the first name of each of its paths.
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(ident)
                .collect(),
            None => vec![ident(rest)],
        };
        // `super::m` names a module only when a path goes on (`m::`) or
        // when it is imported whole; an item of the parent is no sibling.
        out.extend(names.into_iter().filter(|n| siblings.contains(n)));
    }
    out
}

/// Every circle among the files of one directory of `src`: `a -> b -> a`
/// where each uses the next through `super::`. The floors keep the
/// crate's top modules apart; this keeps the files of one module so.
fn circles_in_rooms(src: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for f in sources(src) {
        if let Some(d) = f.parent() {
            dirs.insert(d.to_path_buf());
        }
    }
    for dir in dirs {
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        let mut siblings = BTreeSet::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let Some(stem) = p.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
                continue;
            };
            if p.is_dir() {
                siblings.insert(stem);
            } else if p.extension().is_some_and(|x| x == "rs") && stem != "mod" && !is_test_file(&p)
            {
                siblings.insert(stem.clone());
                files.push((stem, p));
            }
        }
        let uses: std::collections::BTreeMap<String, BTreeSet<String>> = files
            .iter()
            .map(|(stem, p)| {
                let mut u = sibling_uses(&shipped_code(p), &siblings);
                u.remove(stem);
                (stem.clone(), u)
            })
            .collect();
        // A path back to where it started, by a walk from each file.
        for start in uses.keys() {
            let mut todo = vec![vec![start.clone()]];
            let mut seen = BTreeSet::new();
            while let Some(path) = todo.pop() {
                let Some(last) = path.last() else { continue };
                for next in uses.get(last).into_iter().flatten() {
                    if next == start {
                        // Each circle once: from its smallest file.
                        if path.iter().all(|p| p >= start) {
                            bad.push(format!(
                                "{}: {} -> {start}",
                                dir.display(),
                                path.join(" -> ")
                            ));
                        }
                    } else if seen.insert(next.clone()) {
                        let mut longer = path.clone();
                        longer.push(next.clone());
                        todo.push(longer);
                    }
                }
            }
        }
    }
    bad
}

#[test]
fn no_two_files_of_a_module_use_each_other_in_a_circle() {
    let repo = repo();
    let mut bad = circles_in_rooms(&repo.join("journal/src"));
    bad.extend(circles_in_rooms(&repo.join("src")));
    assert!(
        bad.is_empty(),
        "files of one module in a circle (put what both need in a file below both):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_reader_of_a_room_sees_sibling_uses() {
    let siblings: BTreeSet<String> = ["bulk", "gets", "core"].map(String::from).into();
    let code = "use super::bulk::ReadBudget;\nuse super::{core::Core, RunMessage};\nfn f() { super::gets::x(); super::helper(); }";
    let found: Vec<String> = sibling_uses(code, &siblings).into_iter().collect();
    assert_eq!(found, ["bulk", "core", "gets"]);
    // The circle bulk.rs and gets.rs once made (ReadBudget one way,
    // Listed the other), in a room of its own: found, and once.
    let dir = tempfile::tempdir().unwrap();
    let room = dir.path().join("room");
    std::fs::create_dir(&room).unwrap();
    for (name, code) in [
        (
            "mod.rs",
            "mod bulk; mod gets; mod core; pub struct RunMessage;",
        ),
        ("bulk.rs", "use super::gets::Listed; use super::core::Core;"),
        ("gets.rs", "use super::{bulk::ReadBudget, RunMessage};"),
        ("core.rs", "pub struct Core;"),
    ] {
        std::fs::write(room.join(name), code).unwrap();
    }
    assert_eq!(
        circles_in_rooms(dir.path()),
        [format!("{}: bulk -> gets -> bulk", room.display())]
    );
}

/// The `mod` declarations of `code` that load a file (`mod m;`).
fn declared(code: &str) -> BTreeSet<String> {
    code.lines()
        .map(str::trim)
        .filter_map(|l| {
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

/// Every `.rs` file under the test binary rooted at `dir/main.rs` that no
/// module declaration of the binary loads (a `#[path]` or a mod.rs
/// counts).
fn forgotten(dir: &Path) -> Vec<PathBuf> {
    let mut loaded = BTreeSet::new();
    let main = dir.join("main.rs");
    let mut todo = vec![main.clone()];
    loaded.insert(main);
    while let Some(file) = todo.pop() {
        let text = std::fs::read_to_string(&file).unwrap();
        let here = match file.file_name().and_then(|n| n.to_str()) {
            Some("main.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let Some(m) = declared(l).into_iter().next() else {
                continue;
            };
            let path_attr = i
                .checked_sub(1)
                .and_then(|j| lines[j].trim().strip_prefix("#[path = \""))
                .and_then(|p| p.strip_suffix("\"]"));
            let target = match path_attr {
                Some(p) => file.parent().unwrap().join(p),
                None if here.join(format!("{m}.rs")).exists() => here.join(format!("{m}.rs")),
                None => here.join(&m).join("mod.rs"),
            };
            let target = target.canonicalize().unwrap_or(target);
            if loaded.insert(target.clone()) {
                todo.push(target);
            }
        }
    }
    sources(dir)
        .into_iter()
        .filter(|f| !loaded.contains(&f.canonicalize().unwrap()))
        .collect()
}

#[test]
fn every_test_file_is_in_a_test_binary() {
    let repo = repo();
    // The library's integration tests are one binary: nothing beside it
    // that cargo would build as another.
    let beside: Vec<PathBuf> = std::fs::read_dir(repo.join("journal/tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    assert!(
        beside.is_empty(),
        "test files beside journal/tests/all (each its own binary): {beside:?}; make them modules of journal/tests/all/main.rs"
    );
    for dir in ["journal/tests/all", "tests/cli"] {
        let left = forgotten(&repo.join(dir));
        assert!(
            left.is_empty(),
            "{dir}: files no module of its main.rs loads (never compiled, never run): {left:?}"
        );
    }
}

#[test]
fn the_reader_of_the_house_reads_code_only() {
    let code = code_of(
        "use crate::a; // crate::b\n/* crate::c /* crate::d */ */ let s = \"crate::e\"; let r = r#\"crate::f\"#; let c = '\"'; fn x<'a>() { crate::g::h() }",
    );
    assert_eq!(
        crate_uses(&code).into_iter().collect::<Vec<_>>(),
        ["a", "g"]
    );
    let grouped = crate_uses("use crate::{a::B, c, d::{e, f}};");
    assert_eq!(grouped.into_iter().collect::<Vec<_>>(), ["a", "c", "d"]);
    let tested = shipped(
        "use crate::a;\n#[cfg(test)]\nmod tests { use crate::b; fn f() { {} } }\nuse crate::c;",
    );
    assert_eq!(
        crate_uses(&tested).into_iter().collect::<Vec<_>>(),
        ["a", "c"]
    );
    // An arrow up is found.
    let floors: &[&[&str]] = &[&["low"], &["high"]];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("low.rs"), "use crate::high::X;").unwrap();
    std::fs::write(dir.path().join("high.rs"), "use crate::low::Y;").unwrap();
    std::fs::write(dir.path().join("lost.rs"), "").unwrap();
    let bad = crossed(dir.path(), floors, "lib");
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad.iter().any(|b| b.starts_with("low -> high")), "{bad:?}");
    assert!(bad.iter().any(|b| b.starts_with("module lost")), "{bad:?}");
}
