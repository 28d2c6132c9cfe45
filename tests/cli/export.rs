//! `export RUN --format markdown|html|jsonl` (or `--as`) `[--redact RE]... [--out FILE]`
//! (issue 27 item 2): the document of a run, both generations and both
//! backends; nothing from the journal becomes HTML markup; a redacted jsonl
//! export still verifies.

use crate::nats_support::NatsServer;
use crate::support::migrate_via;
use crate::support::{bin, fisk, fisk_in, s, store_copy, testdata, Run};
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
        empty.stderr.contains("can match the empty string"),
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

/// The secret of issue 36.2's tests.
const SECRET: &str = "hunter2";

/// A run (id `sec`) carrying `SECRET` in every string and key a record
/// has room for: the meta record's prompt, caller, agent, token and
/// fingerprint, messages, thinking and its signature, tool_use ids (in
/// the call, its result, its deferral and its approval), tool names, the
/// keys and values of a tool's input, results, kinds, notes, handles,
/// approvals, memory keys, terminal messages, a claim's worker, a stop
/// reason.
fn secret_run() -> String {
    let hash = "0".repeat(64);
    let lines = [
        format!(
            r#"{{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{{"version":1,"run_id":"sec","created":"2026-12-01T08:00:00Z","fingerprint":{{"provider":"anthropic-{S}","model":"claude-{S}","system_hash":"{hash}","tools_hash":"{hash}","thinking_mode":"summarized","reasoning_effort":"high-{S}","max_tokens":1000,"max_iterations":10}},"prompt":"do {S} now","conversation_token":"tok-{S}","caller":"caller-{S}","agent":"agent-{S}"}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{{"iteration":0,"message":{{"role":"assistant","content":[{{"thinking":{{"text":"think {S}","signature":"{S}A"}}}},{{"text":{{"text":"say {S}"}}}},{{"tool_use":{{"id":"tu_{S}_1","name":"{S}_tool","input":{{"{S}_key":"value {S}","list":["{S}",{{"nested_{S}":1}}]}}}}}},{{"tool_use":{{"id":"tu_{S}_2","name":"defer_{S}","input":{{}}}}}}]}},"stop_reason":"tool_use_{S}","in_tokens":10,"out_tokens":5}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.decision","optional":true,"decision":{{"tool":"{S}_tool"}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.call_approval","optional":true,"call_approval":{{"tool_use_id":"tu_{S}_1","tool_name":"{S}_tool"}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{{"tool_use_id":"tu_{S}_1","result":{{"tool_use_id":"tu_{S}_1","content":"out {S}"}},"kind":"mcp-{S}","dispatched":true}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":6,"protocol":"io.choria.fisk-ai.v1.session.deferred","deferred":{{"tool_use_id":"tu_{S}_2","tool_name":"defer_{S}","note":"note {S}","handle":"h-{S}","kind":"custom"}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":7,"protocol":"io.choria.fisk-ai.v1.session.memory_revisions","optional":true,"memory_revisions":{{"revisions":{{"mem-{S}":3}}}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":8,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{{"reason":"suspended","message":"wait {S}"}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":9,"protocol":"io.choria.fisk-ai.v1.session.claim","claim":{{"by":"worker-{S}","claimed":"2026-12-01T08:00:09Z"}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":10,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{{"tool_use_id":"tu_{S}_2","result":{{"tool_use_id":"tu_{S}_2","content":"answer {S}"}},"kind":"custom","dispatched":true}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":11,"protocol":"io.choria.fisk-ai.v1.session.user","user":{{"message":{{"role":"user","content":[{{"text":{{"text":"more {S}"}}}}]}}}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":12,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{{"iteration":1,"message":{{"role":"assistant","content":[{{"text":{{"text":"done {S}"}}}}]}},"stop_reason":"end_turn","in_tokens":10,"out_tokens":5}}}}"#,
            S = SECRET
        ),
        format!(
            r#"{{"seq":13,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{{"reason":"completed","message":"ok {S}","summary":{{"turns":2,"context_tokens":5,"counters":{{"llm_calls":2}}}}}}}}"#,
            S = SECRET
        ),
    ];
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A store holding `journal` as run `id` (0700, the journal 0600).
fn store_holding(id: &str, journal: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let p = dir.path().join(format!("{id}.json"));
    std::fs::write(&p, journal).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    dir
}

/// Issue 36.2: a redacted export holds no match of the pattern, in any
/// format; the count said is the number of matches replaced (every
/// occurrence in the journal); the jsonl still verifies and folds, calls
/// meeting their results and approvals their tools.
#[test]
fn a_secret_in_every_string_and_key_leaves_no_match_in_any_format() {
    let journal = secret_run();
    let store = store_holding("sec", &journal);
    // The original verifies clean: what the export keeps is checked
    // against that.
    let v = fisk(&["--state-dir", s(store.path()), "verify", "sec"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    let want = journal.matches(SECRET).count();
    assert!(want >= 30, "{want}");
    for format in ["markdown", "html", "jsonl"] {
        let r = export(store.path(), &["sec", "--as", format, "--redact", SECRET]);
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        assert!(!r.stdout.contains(SECRET), "{format}: {}", r.stdout);
        assert!(r.stdout.contains("[redacted]"), "{format}");
        // A journal export also says it was checked to resume (issue 39).
        assert_eq!(
            r.stderr.trim().lines().last(),
            Some(format!("redacted {want} match(es)").as_str()),
            "{format}"
        );
        assert_eq!(
            r.stderr.contains("checked: the export verifies"),
            format == "jsonl",
            "{format}: {}",
            r.stderr
        );
        if format != "jsonl" {
            continue;
        }
        let out = tempfile::tempdir().unwrap();
        let file = out.path().join("sec.jsonl");
        std::fs::write(&file, &r.stdout).unwrap();
        let v = fisk(&["verify", "--file", s(&file), "-o", "json"]);
        assert_eq!(v.code, 0, "{}", v.stdout);
        let f = fisk(&["fold", "--file", s(&file), "-o", "json"]);
        assert_eq!(f.code, 0, "{}", f.stderr);
        let st = f.json();
        assert_eq!(st["status"], "completed", "{st:#}");
        // The standing approval is the tool the call names, redacted alike.
        let approved = st["approvals"][0].as_str().unwrap_or_default().to_owned();
        assert!(
            r.stdout.contains(&format!("\"name\":\"{approved}\"")),
            "{approved}: {}",
            r.stdout
        );
        // The kept bytes: a line with no match would keep them; the meta
        // record's structure (created, hashes) is as it was.
        assert!(r.stdout.contains("\"created\":\"2026-12-01T08:00:00Z\""));
    }
}

/// The run id is redacted too, to an id that still names the run: the
/// export reads as that run.
#[test]
fn a_secret_in_the_run_id_becomes_an_id() {
    let journal = secret_run().replace("\"run_id\":\"sec\"", "\"run_id\":\"hunter2-run\"");
    let store = store_holding("hunter2-run", &journal);
    let md = export(
        store.path(),
        &["hunter2-run", "--as", "markdown", "--redact", SECRET],
    );
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(
        md.stdout.starts_with("# Run redacted-run\n"),
        "{}",
        md.stdout
    );
    let j = export(
        store.path(),
        &["hunter2-run", "--as", "jsonl", "--redact", SECRET],
    );
    assert_eq!(j.code, 0, "{}", j.stderr);
    assert!(!j.stdout.contains(SECRET));
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("x.jsonl");
    std::fs::write(&file, &j.stdout).unwrap();
    let f = fisk(&["fold", "--file", s(&file), "-o", "json"]);
    assert_eq!(f.json()["run_id"], "redacted-run", "{}", f.stdout);
}

/// What cannot be redacted without breaking the journal is refused,
/// naming the field, and nothing is written; so is a pattern that can
/// match the empty string (`\b` used to report 74 matches and redact
/// nothing), one that matches its own replacement, and one that matches
/// the document's own words.
#[test]
fn structure_zero_width_patterns_and_the_documents_own_words_are_refused() {
    let store = store_holding("sec", &secret_run());
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("x.md");
    for (pattern, format, exit, says) in [
        ("2026-12", "jsonl", 1, "`meta.created`"),
        ("prompt", "markdown", 1, "the field name `meta.prompt`"),
        (
            "llm_calls",
            "html",
            1,
            "the field name `terminal.summary.counters.llm_calls`",
        ),
        (r"\b", "jsonl", 2, "can match the empty string"),
        ("^", "markdown", 2, "can match the empty string"),
        ("x*", "markdown", 2, "can match the empty string"),
        ("edact", "jsonl", 2, "which a redaction writes"),
        ("model calls", "markdown", 1, "still matches line"),
        ("details", "html", 1, "the document's own text"),
    ] {
        let r = export(
            store.path(),
            &[
                "sec",
                "--as",
                format,
                "--redact",
                pattern,
                "--out",
                s(&file),
            ],
        );
        assert_eq!(r.code, exit, "{pattern}: {}", r.stderr);
        let said = r.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(said.contains(says), "{pattern}: {said}");
        assert!(!file.exists(), "{pattern}: a file was written");
    }
}

/// Run `argv` on a pseudo-terminal (python3's pty): the bytes it wrote.
fn on_a_terminal(argv: &[&str]) -> Vec<u8> {
    let script = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .args(argv)
        .env("NO_COLOR", "1")
        .output()
        .expect("python3");
    assert!(out.status.success());
    out.stdout
}

/// Issue 36.2: `export --as jsonl` to a terminal wrote a hostile journal's
/// C1 controls, bidi overrides, line separators and DEL as they are. On a
/// terminal each is now a JSON escape (the same records, decoded); to a
/// pipe or a file the journal is byte for byte.
#[test]
fn jsonl_to_a_terminal_escapes_what_a_terminal_acts_on_and_a_pipe_gets_the_bytes() {
    let hostile = "a\u{9b}31m b\u{202e}c d\u{2028}e f\u{7f}g";
    let journal = secret_run().replace("do hunter2 now", hostile);
    let store = store_holding("sec", &journal);
    let bin = bin();
    let shown = on_a_terminal(&[
        s(&bin),
        "--state-dir",
        s(store.path()),
        "export",
        "sec",
        "--as",
        "jsonl",
    ]);
    let text = String::from_utf8_lossy(&shown);
    for bad in ['\u{9b}', '\u{202e}', '\u{2028}', '\u{7f}'] {
        assert!(
            !text.contains(bad),
            "{bad:?} reached the terminal: {text:?}"
        );
    }
    for escaped in [r"\u009b", r"\u202e", r"\u2028", r"\u007f"] {
        assert!(text.contains(escaped), "{escaped}: {text}");
    }
    let piped = export(store.path(), &["sec", "--as", "jsonl"]);
    assert_eq!(piped.stdout, journal);
}

/// Issue 39, d-12: a ticket starts with who, what and when (agent, model,
/// caller, created, the last record, how it ended, the prompt), and a
/// tool's output reads as the viewer shows it: exec's result as its text,
/// its exit status in the label (at b926494 the header had counters only,
/// and exec's output was its raw JSON).
#[test]
fn a_ticket_starts_with_who_what_and_when_and_shows_exec_output_as_text() {
    let f = crate::support::exec_then_done("echo hello-ticket; exit 3");
    let r = f.run("ticket", "check the ORDERS stream before the upgrade");
    assert_eq!(r.code, 0, "{}", r.stderr);
    for doc in ["markdown", "html"] {
        let r = f.store(&["export", "ticket", "--as", doc]);
        assert_eq!(r.code, 0, "{doc}: {}", r.stderr);
        let out = &r.stdout;
        let cell = |k: &str, v: &str| match doc {
            "markdown" => out.contains(&format!("| {k} | {v}")),
            _ => out.contains(&format!("<th>{k}</th><td>{v}")),
        };
        assert!(cell("model", "demo-1"), "{doc}: {out}");
        assert!(cell("created", "20"), "{doc}: {out}");
        assert!(cell("updated", "20"), "{doc}: {out}");
        assert!(cell("ended", "20"), "{doc}: {out}");
        assert!(
            out.contains("(completed)") || out.contains("\\(completed\\)"),
            "{doc}: {out}"
        );
        assert!(cell("prompt", "check the ORDERS stream"), "{doc}: {out}");
        // The figures follow who and when.
        let model = out.find("model").unwrap();
        let calls = out.find("model calls").unwrap();
        assert!(model < calls, "{doc}");
        // exec's output as text, its exit status in the label.
        assert!(out.contains("hello-ticket"), "{doc}: {out}");
        assert!(!out.contains("exit_status"), "{doc}: raw JSON: {out}");
        assert!(out.contains("exit 3"), "{doc}: {out}");
    }
    // A run that ended in error says why.
    let r = export(
        &testdata("runs-v1"),
        &["error-terminal", "--as", "markdown"],
    );
    assert!(
        r.stdout
            .contains("\\(error: anthropic: 529 overloaded\\_error after 5 retries\\)"),
        "{}",
        r.stdout
    );
}

/// Issue 39: `--redact-preset` takes out what an agent's tools print
/// (tokens, keys, a URL's password), and a jsonl export is checked to
/// verify and to resume as the original does, saying so.
#[test]
fn presets_redact_what_tools_print_and_a_journal_export_is_checked_to_resume() {
    let f = crate::support::exec_then_done("echo 'Authorization: Bearer abcdefghijklmnop1234 AKIAABCDEFGHIJKLMNOP nats://ops:s3cr3tpw@nats.example:4222 password=hunter2'");
    let r = f.run("leaky", "look");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = f.path("leaky.jsonl");
    let r = f.store(&[
        "export",
        "leaky",
        "--as",
        "jsonl",
        "--redact-preset",
        "all",
        "--out",
        crate::support::s(&out),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    for secret in [
        "abcdefghijklmnop1234",
        "AKIAABCDEFGHIJKLMNOP",
        "s3cr3tpw",
        "hunter2",
    ] {
        assert!(!text.contains(secret), "{secret} left in {text}");
    }
    assert!(r.stderr.contains("redacted "), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("checked: the export verifies and a resume takes it as the original"),
        "{}",
        r.stderr
    );
    // Checked, not claimed: the export verifies with no error.
    let v = f.fisk(&["verify", "--file", crate::support::s(&out), "-o", "json"]);
    let errors: Vec<_> = v
        .json_lines()
        .into_iter()
        .filter(|l| l["severity"] == "error")
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // Each preset alone names what it takes.
    let r = f.store(&[
        "export",
        "leaky",
        "--as",
        "markdown",
        "--redact-preset",
        "url-passwords",
    ]);
    assert!(
        !r.stdout.contains("s3cr3tpw") && r.stdout.contains("hunter2"),
        "{}",
        r.stdout
    );
}
