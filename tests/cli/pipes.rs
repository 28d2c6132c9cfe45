//! One pipe rule for every listing (issue 39, d-16, d-19, d-24): into a
//! pipe `ls`, `stats --all`, `inbox`, `search`, `verify` and `backups`
//! print tab-separated fields with plain integers and no rule line, the
//! lines under the table on standard error; for people, counts carry
//! thousands separators and sizes binary units, and a short word (a
//! backup's kind) is never cut.

use crate::support::*;
use std::path::Path;

fn at(home: &Path, store: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec!["--state-dir", s(store)];
    all.extend_from_slice(args);
    fisk_env(home, &all, env, None)
}

/// A store with runs of every kind, a waiting call and backups of three
/// kinds (rm, repair, recover).
fn night() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let store = store_copy("damaged-v1");
    let d = store.path();
    for args in [
        &["repair", "torn-tail", "--yes"][..],
        &["recover", "interior-corruption", "--yes"],
        &["rm", "duplicate-result", "--yes", "--force"],
    ] {
        let r = at(home.path(), d, args, &[]);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    }
    (home, store)
}

/// The table a pipe got: every line the same number of tab-separated
/// fields as the header, no rule line, no figure with a thousands
/// separator.
fn assert_fields(what: &str, table: &str) -> Vec<Vec<String>> {
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    assert!(header.len() > 2, "{what}: {table}");
    assert!(
        header.iter().all(|h| h
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == ' ' || c == '_')),
        "{what}: {table}"
    );
    assert!(!table.contains('─'), "{what}: a rule line: {table}");
    let thousands = regex::Regex::new(r"(^|\t)[0-9]{1,3}(,[0-9]{3})+(\t|$)").unwrap();
    let rows: Vec<Vec<String>> = lines
        .map(|l| {
            assert!(!thousands.is_match(l), "{what}: a separated figure: {l:?}");
            let cells: Vec<String> = l.split('\t').map(str::to_owned).collect();
            assert_eq!(cells.len(), header.len(), "{what}: {l:?}");
            cells
        })
        .collect();
    assert!(!rows.is_empty(), "{what}: {table}");
    rows
}

#[test]
fn every_listing_in_a_pipe_is_tab_separated_with_plain_integers() {
    let (home, store) = night();
    let d = store.path();
    let h = home.path();
    // ls: the size in bytes, the records and tokens plain.
    let r = at(h, d, &["ls", "--columns", "run,records,tokens,size"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = assert_fields("ls", &r.stdout);
    let json = at(h, d, &["ls", "-o", "json"], &[]).json();
    for row in &rows {
        let j = json
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["run_id"] == row[0].as_str())
            .unwrap();
        if let Some(b) = j["bytes"].as_u64() {
            assert_eq!(row[3], b.to_string(), "{row:?}");
        }
    }
    // stats --all, its note on standard error.
    let r = at(h, d, &["stats", "--all", "--by", "run", "--top", "2"], &[]);
    assert_fields("stats --all", r.stdout.split("\n\n").next().unwrap());
    assert!(r.stderr.contains("(the first 2 of"), "{}", r.stderr);
    // Its times are seconds alone, as inbox's WAITED (at b926494:
    // `1038h42m (+1 untimed)` in a field); JSON's nanoseconds, exactly.
    let r = at(h, d, &["stats", "--all"], &[]);
    let mut parts = r.stdout.split("\n\n");
    let totals = assert_fields("stats --all", parts.next().unwrap());
    let tools = assert_fields("stats --all tools", parts.next().unwrap());
    let json = at(h, d, &["stats", "--all", "-o", "json"], &[]).json();
    let ns = json["groups"][0]["wall_clock_ns"].as_u64().unwrap();
    let wall = &totals[0][8];
    let (whole, frac) = wall.split_once('.').unwrap_or((wall, ""));
    let back = whole.parse::<u64>().unwrap() * 1_000_000_000
        + format!("{frac:0<9}").parse::<u64>().unwrap();
    assert_eq!(back, ns, "{wall}");
    for row in &tools {
        for t in &row[7..] {
            assert!(t == "-" || t.parse::<f64>().is_ok(), "{row:?}");
        }
    }
    assert!(!r.stdout.contains("untimed"), "{}", r.stdout);
    // search.
    let r = at(h, d, &["search", "--match", ".", "--in", "all"], &[]);
    assert_fields("search", &r.stdout);
    // verify: the finding lines, then the table as fields; the totals on
    // standard error.
    let r = at(h, d, &["verify", "-q"], &[]);
    let (_, table) = r
        .stdout
        .split_once("\n\n")
        .expect("a table after the findings");
    let rows = assert_fields("verify", table);
    assert!(rows
        .iter()
        .any(|r| r[3].contains(" repair ") || r[3].contains(" recover ")));
    assert!(!r.stdout.contains("error(s)"), "{}", r.stdout);
    assert!(
        r.stderr.contains("error(s)") && r.stderr.contains("KiB"),
        "{}",
        r.stderr
    );
    // backups: bytes and disk held as integers; the totals on stderr.
    let r = at(h, d, &["backups"], &[]);
    let rows = assert_fields("backups", &r.stdout);
    let kinds: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    for k in ["rm", "repair", "recover"] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
    for row in &rows {
        row[4].parse::<u64>().unwrap();
        row[5].parse::<u64>().unwrap();
    }
    assert!(r.stderr.contains("backup(s)"), "{}", r.stderr);
}

#[test]
fn inbox_in_a_pipe_is_fields_with_the_wait_in_seconds() {
    let f = Fixture::new(&[
        turn(
            "ask",
            &[(
                "toolu_1",
                "defer",
                serde_json::json!({"note": "n", "handle": "h"}),
            )],
        ),
        turn("done", &[]),
    ]);
    let r = f.run("r1", "p");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = f.store(&["inbox"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = assert_fields("inbox", &r.stdout);
    let header: Vec<&str> = r.stdout.lines().next().unwrap().split('\t').collect();
    let waited = header.iter().position(|h| *h == "WAITED").unwrap();
    rows[0][waited].parse::<u64>().unwrap();
    assert!(r.stderr.contains("answer: "), "{}", r.stderr);
}

/// For people: counts with thousands separators and sizes in binary
/// units in every summary (d-19); a backup's kind never cut (d-16: at
/// b926494 `rep…`, `rec…`).
#[test]
fn summaries_say_sizes_in_one_style_and_a_kind_is_never_cut() {
    let (home, store) = night();
    let d = store.path();
    let h = home.path();
    // The ids take 60 characters: at 100 columns KIND stands whole
    // beside them, and the columns that do not fit are left out, named.
    let r = at(h, d, &["backups"], &[("COLUMNS", "100")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.lines().next().unwrap().contains(" KIND "),
        "{}",
        r.stdout
    );
    let kinds: Vec<&str> = r
        .stdout
        .lines()
        .skip(2)
        .filter(|l| l.starts_with(' '))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(kinds, ["repair", "recover", "rm"], "{}", r.stdout);
    assert!(r.stdout.contains("(too narrow for "), "{}", r.stdout);
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.contains(" KiB, ")
            && last.ends_with("of disk held only by them")
            && !last.contains("bytes"),
        "{last}"
    );
    let r = at(h, d, &["verify", "-q"], &[("COLUMNS", "200")]);
    let last = r.stdout.lines().last().unwrap();
    assert!(last.contains(" KiB, ") && !last.contains("bytes"), "{last}");
    let r = at(
        h,
        d,
        &["backups", "prune", "--older-than", "0s", "--dry-run"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("KiB of disk; nothing was removed"),
        "{}",
        r.stdout
    );
}
