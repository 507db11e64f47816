//! The test PKI that the published crates embed: fixture-server/certs/ and harness/certs/ are
//! copies of the workspace's certs/ (certs/README.md), inside each crate so that its package
//! builds on its own (`cargo package`); a copy that differs would make the fixture serve a
//! certificate that the transcripts' `--ca-file certs/ca.crt` does not trust.
use std::path::Path;

#[test]
fn the_certificates_embedded_by_the_fixture_and_the_harness_are_those_of_certs() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let copies = [
        (
            "fixture-server/certs",
            &[
                "ca.crt",
                "server.crt",
                "server.key",
                "untrusted-server.crt",
                "untrusted-server.key",
            ][..],
        ),
        ("harness/certs", &["ca.crt", "untrusted-ca.crt"][..]),
    ];
    for (dir, files) in copies {
        for file in files {
            let source = std::fs::read(workspace.join("certs").join(file)).unwrap();
            let copy = std::fs::read(workspace.join(dir).join(file))
                .unwrap_or_else(|e| panic!("{dir}/{file}: {e}"));
            assert!(
                source == copy,
                "{dir}/{file} differs from certs/{file}: copy it again"
            );
        }
    }
}
