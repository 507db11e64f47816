//! The scripted upstream's relay over loopback TCP (`HARNESS_RELAY=tcp`, the only way where Unix
//! sockets are missing): scripted transcripts pass with it as with the Unix socket.

use std::path::Path;
use std::process::Command;

#[test]
fn scripted_transcripts_pass_with_the_relay_over_loopback_tcp() {
    // The bridge that the transcripts run (built once with the fixture when it is missing).
    crate::bins::fixture();
    let harness = crate::bins::harness();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let m1 = root.join("transcripts/m1");
    let mut command = Command::new(&harness);
    command
        .env("HARNESS_RELAY", "tcp")
        .args(["--no-build", "--filter", "C1-discover"]);
    // Under CI the harness runs only with the schema checks.
    if let Some(spec) = harness::schema::default_spec_dir() {
        command.arg("--schemas").arg(spec);
    }
    let out = command.arg(&m1).output().expect("the harness runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
}
