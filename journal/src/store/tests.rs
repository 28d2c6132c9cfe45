use super::{Address, Store};
use std::path::PathBuf;

#[test]
fn an_address_is_a_directory_or_a_stream() {
    let file = |d: &str| Address::File {
        dir: PathBuf::from(d),
    };
    assert_eq!(Address::parse("file:/var/runs").unwrap(), file("/var/runs"));
    assert_eq!(
        Address::parse("file:///var/runs").unwrap(),
        file("/var/runs")
    );
    assert_eq!(Address::parse("file:./a/./b").unwrap(), file("./a/b"));
    assert_eq!(
        Address::parse("jetstream:RUNS").unwrap(),
        Address::JetStream {
            stream: "RUNS".into()
        }
    );
    for (uri, says) in [
        ("file://host/x", "takes a local directory"),
        ("file:", "needs a directory"),
        ("jetstream:a.b", "needs a stream name"),
        ("s3:x", "is not understood"),
    ] {
        let e = Address::parse(uri).unwrap_err();
        assert!(matches!(e, crate::Error::Usage(_)), "{e:?}");
        assert!(e.to_string().contains(says), "{uri}: {e}");
    }
}

#[test]
fn an_agent_file_names_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let p = write(
        "a.yaml",
        "harness:\n  sessions: {backend: file, options: {directory: ./journals}}\n",
    );
    let chose = Address::from_agent_file(&p, None).unwrap();
    assert_eq!(
        chose.address,
        Address::File {
            dir: dir.path().join("journals")
        }
    );
    assert!(
        chose.why.starts_with("harness.sessions in "),
        "{}",
        chose.why
    );
    // `--root-dir` places a file store that names no directory.
    let p = write("b.yaml", "harness:\n  sessions: {backend: file}\n");
    let chose = Address::from_agent_file(&p, Some(dir.path())).unwrap();
    assert_eq!(
        chose.address,
        Address::File {
            dir: dir.path().join("runs")
        }
    );
    assert_eq!(chose.root.map(|r| r.from), Some("--root-dir".to_owned()));
    let p = write(
        "c.yaml",
        "harness:\n  sessions: {backend: jetstream, options: {stream: RUNS}}\n",
    );
    assert_eq!(
        Address::from_agent_file(&p, None).unwrap().address,
        Address::JetStream {
            stream: "RUNS".into()
        }
    );
    let p = write("d.yaml", "harness:\n  sessions: {backend: jetstream}\n");
    let e = Address::from_agent_file(&p, None).unwrap_err();
    assert!(e.to_string().contains("options.stream is empty"), "{e}");
    let p = write("e.yaml", "harness:\n  sessions: {backend: s3}\n");
    let e = Address::from_agent_file(&p, None).unwrap_err();
    assert!(e.to_string().contains("\"s3\" is not known"), "{e}");
    // A directory opens as it is.
    let at = Address::File {
        dir: dir.path().to_path_buf(),
    };
    let store = at
        .open(&crate::nats::Settings::default(), std::time::Duration::ZERO)
        .unwrap();
    assert!(matches!(store, Store::File(_)));
}
