//! `export RUN --format markdown|html|jsonl` (or `--as`) `[--redact RE]... [--out FILE]`
//! (issue 27 item 2): the document of a run, both generations and both
//! backends; nothing from the journal becomes HTML markup; a redacted jsonl
//! export still verifies.

use crate::nats_support::NatsServer;
use crate::support::migrate_via;
use crate::support::{fisk, fisk_in, s, store_copy, testdata, Run};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

const GENERATIONS: [&str; 2] = ["runs", "runs-v1"];

fn export(dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--state-dir", s(dir), "export"];
    all.extend_from_slice(args);
    fisk(&all)
}

#[test]
fn markdown_has_the_prompt_the_seqs_and_folded_tool_calls() {
    for gen in GENERATIONS {
        let r = export(&testdata(gen), &["deferral-answered", "--as", "markdown"]);
        assert_eq!(r.code, 0, "{gen}: {}", r.stderr);
        let md = &r.stdout;
        assert!(md.starts_with("# Run deferral-answered\n"), "{gen}: {md}");
        assert!(md.contains("### seq 1 · prompt"), "{gen}: {md}");
        assert!(
            md.contains("Open a change request to scale ORDERS"),
            "{gen}"
        );
        assert!(
            md.contains("<details><summary>seq 2 · iteration 0 · tool_use defer"),
            "{gen}: {md}"
        );
        assert!(md.contains("### seq 3 · deferred"), "{gen}: {md}");
        assert!(md.contains("### seq 5 · answer"), "{gen}: {md}");
        assert!(md.contains("### seq 8 · terminal completed"), "{gen}: {md}");
        assert!(md.contains("| model calls | 2 |"), "{gen}: {md}");
        // Nothing is said on stderr without --redact.
        assert_eq!(r.stderr, "", "{gen}");
    }
}

/// The start tags and the text of an HTML document, as python3's
/// html.parser reads it (the way a browser tokenises it).
fn parse_html(doc: &str) -> (Vec<String>, String) {
    let script = r#"
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.text = []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
    def handle_data(self, d):
        self.text.append(d)
p = P()
p.feed(sys.stdin.read())
p.close()
print(" ".join(p.tags))
sys.stdout.write("".join(p.text))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(doc.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    let (tags, text) = out.split_once('\n').unwrap();
    (
        tags.split(' ').map(str::to_owned).collect(),
        text.to_owned(),
    )
}

#[test]
fn html_keeps_every_journal_text_out_of_the_markup() {
    // Every text of the run (prompt, tool input, note, handle, answer,
    // message) made hostile.
    let hostile = r#"<script>alert(\"x&amp;\")</script><img src=x onerror='y'> & <b"#;
    let decoded = r#"<script>alert("x&amp;")</script><img src=x onerror='y'> & <b"#;
    for gen in GENERATIONS {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(testdata(&format!("{gen}/deferral-answered.json")))
            .unwrap()
            .replace("CR-2211", hostile)
            .replace("Open a change", &format!("{hostile} Open a change"));
        std::fs::write(dir.path().join("deferral-answered.json"), text).unwrap();
        let r = export(dir.path(), &["deferral-answered", "--as", "html"]);
        assert_eq!(r.code, 0, "{gen}: {}", r.stderr);
        let (tags, body) = parse_html(&r.stdout);
        let allowed = [
            "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "table", "tr",
            "th", "td", "section", "details", "summary", "pre",
        ];
        for t in &tags {
            assert!(
                allowed.contains(&t.as_str()),
                "{gen}: element {t} from the journal"
            );
        }
        assert!(tags.iter().any(|t| t == "details"), "{gen}: nothing folded");
        // The hostile text is there, as text, each time it was written.
        assert!(body.matches(decoded).count() >= 5, "{gen}: {body}");
        assert!(!r.stdout.contains("<script"), "{gen}");
        assert!(!r.stdout.contains("http"), "{gen}: an external resource");
    }
}

#[test]
fn redacted_jsonl_still_verifies_and_says_how_many() {
    for gen in GENERATIONS {
        let out = tempfile::tempdir().unwrap();
        let file = out.path().join("deferral-answered.json");
        let r = export(
            &testdata(gen),
            &[
                "deferral-answered",
                "--as",
                "jsonl",
                "--redact",
                r"CR-\d+",
                "--redact",
                "ORDERS",
                "--out",
                s(&file),
            ],
        );
        assert_eq!(r.code, 0, "{gen}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{gen}");
        // CR-2211 four times in three texts of tool input, note, handle and
        // answer, twice more in the message; ORDERS in the prompt and message.
        assert!(r.stderr.contains("redacted "), "{gen}: {}", r.stderr);
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{gen}");
        let bytes = std::fs::read_to_string(&file).unwrap();
        assert!(!bytes.contains("CR-2211"), "{gen}: {bytes}");
        assert!(!bytes.contains("ORDERS"), "{gen}: {bytes}");
        assert!(bytes.contains("[redacted]"), "{gen}");
        let original =
            std::fs::read_to_string(testdata(&format!("{gen}/deferral-answered.json"))).unwrap();
        assert_eq!(bytes.lines().count(), original.lines().count(), "{gen}");
        // A line with no match keeps its bytes.
        assert_eq!(bytes.lines().last(), original.lines().last(), "{gen}");

        std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let v = fisk(&[
            "--state-dir",
            s(out.path()),
            "--format",
            "json",
            "verify",
            "deferral-answered",
        ]);
        let findings: Vec<serde_json::Value> = v
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let errors: Vec<_> = findings
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(errors.is_empty(), "{gen}: {errors:?}\n{}", v.stdout);
        let summary = findings.iter().find_map(|f| f.get("summary")).unwrap();
        assert_eq!(summary["errors"], 0, "{gen}: {}", v.stdout);
        assert_eq!(summary["records"], 8, "{gen}: {}", v.stdout);
        assert_eq!(v.code, 0, "{gen}: {}\n{}", v.stdout, v.stderr);

        // --out never overwrites.
        let again = export(
            &testdata(gen),
            &["deferral-answered", "--as", "jsonl", "--out", s(&file)],
        );
        assert_eq!(again.code, 1, "{gen}: {}", again.stderr);
        assert!(
            again.stderr.contains("never overwrites"),
            "{gen}: {}",
            again.stderr
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), bytes, "{gen}");
    }
}

#[test]
fn without_redact_jsonl_is_the_journal_and_agent_journals_export() {
    for (dir, run) in [
        ("agent-journals/v1", "g-all-counters"),
        ("agent-journals/v3", "g-all-counters"),
        ("runs", "all-counters"),
    ] {
        let r = export(&testdata(dir), &[run, "--as", "jsonl"]);
        assert_eq!(r.code, 0, "{dir}: {}", r.stderr);
        let original = std::fs::read_to_string(testdata(&format!("{dir}/{run}.json"))).unwrap();
        assert_eq!(r.stdout, original, "{dir}");
        for doc in ["markdown", "html"] {
            let r = export(&testdata(dir), &[run, "--as", doc]);
            assert_eq!(r.code, 0, "{dir} {doc}: {}", r.stderr);
            assert!(r.stdout.contains("seq 1 · prompt"), "{dir} {doc}");
        }
    }
    let bad = export(
        &testdata("runs"),
        &["all-counters", "--as", "jsonl", "--redact", "("],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--redact"), "{}", bad.stderr);
    let empty = export(
        &testdata("runs"),
        &["all-counters", "--as", "jsonl", "--redact", "x*"],
    );
    assert_eq!(empty.code, 2, "{}", empty.stderr);
    assert!(
        empty.stderr.contains("matches the empty string"),
        "{}",
        empty.stderr
    );
}

#[test]
fn exports_from_jetstream() {
    let srv = NatsServer::start();
    srv.spec_stream("SESSIONS", "fisk.sessions.>");
    let home = tempfile::tempdir().unwrap();
    let src = store_copy("runs-v1");
    let from = format!("file:{}", s(src.path()));
    let server = ["--server", srv.url.as_str()];
    migrate_via(home.path(), &srv.url, &from, "jetstream:SESSIONS", &[]);
    let js = |args: &[&str]| {
        let all = [
            &server[..],
            &["--store", "jetstream:SESSIONS", "export"],
            args,
        ]
        .concat();
        fisk_in(home.path(), &all, None)
    };
    let md = js(&["deferral-answered", "--as", "markdown"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    let file_md = export(src.path(), &["deferral-answered", "--as", "markdown"]);
    assert_eq!(md.stdout, file_md.stdout);
    let jsonl = js(&["deferral-answered", "--as", "jsonl", "--redact", "CR-2211"]);
    assert_eq!(jsonl.code, 0, "{}", jsonl.stderr);
    assert!(!jsonl.stdout.contains("CR-2211"));
    assert!(jsonl.stderr.contains("redacted "), "{}", jsonl.stderr);
}

/// CLI.md's form, `--format markdown|html|jsonl`, is `--as`; the two
/// disagreeing, neither given, or a document asked of another command, is
/// a usage error (exit 2) saying so.
#[test]
fn format_names_the_document_as_cli_md_says() {
    let dir = testdata("runs");
    for doc in ["markdown", "html", "jsonl"] {
        let by_format = export(&dir, &["deferral-answered", "--format", doc]);
        let by_as = export(&dir, &["deferral-answered", "--as", doc]);
        assert_eq!(by_format.code, 0, "{doc}: {}", by_format.stderr);
        assert_eq!(by_format.stdout, by_as.stdout, "{doc}");
        let short = export(&dir, &["deferral-answered", "-o", doc, "--as", doc]);
        assert_eq!(short.stdout, by_as.stdout, "{doc}");
    }
    let both = export(
        &dir,
        &["deferral-answered", "--format", "html", "--as", "jsonl"],
    );
    assert_eq!(both.code, 2);
    assert!(
        both.stderr
            .contains("--format html and --as jsonl name two documents"),
        "{}",
        both.stderr
    );
    for args in [
        &["deferral-answered"][..],
        &["deferral-answered", "--format", "json"],
    ] {
        let none = export(&dir, args);
        assert_eq!(none.code, 2, "{args:?}");
        assert!(
            none.stderr
                .contains("give --format markdown, html or jsonl (or --as)"),
            "{}",
            none.stderr
        );
    }
    let ls = fisk(&["--state-dir", s(&dir), "ls", "--format", "markdown"]);
    assert_eq!(ls.code, 2);
    assert!(
        ls.stderr
            .contains("--format markdown is a document export writes"),
        "{}",
        ls.stderr
    );
    assert!(ls.stdout.is_empty());
}
