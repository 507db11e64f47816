//! A loopback name of the URL rule (`*.localhost`) is used only at loopback addresses
//! (docs/options.md, the URL rule; docs/sign-in.md, "Bound to the issuer"), as real
//! processes in a network and mount namespace of the test's own: `unshare --net --mount`
//! brings up `lo` and a dummy interface (a veth pair where the kernel has no dummy module)
//! with 10.253.0.1, a listener on that address, and a
//! hosts file that maps `mcp.localhost` to it over `/etc/hosts`; the bridge runs there. The
//! address exists only inside the namespace, so a bridge that follows the name reaches
//! nothing outside it. Skipped (a failure under CI) only where `unshare` is refused.
#![cfg(target_os = "linux")]

use crate::support;

use std::path::Path;
use std::process::Command;

use support::{Bridge, EXCHANGE, MACHINE_VARS, bridge_bin, vscode_initialize};

/// Sets up the namespace, then runs the listener, which runs the bridge (`$@`).
const SETUP: &str = r#"set -e
dir=$1; shift
ip link set lo up
# A dummy interface; a kernel without the dummy module gets a veth pair with both ends here.
if ip link add d0 type dummy 2>/dev/null; then :; else
  ip link add d0 type veth peer name d1; ip link set d1 up; fi
ip addr add 10.253.0.1/24 dev d0
ip link set d0 up
mount --bind "$dir/hosts" /etc/hosts
getent hosts mcp.localhost | grep -q '^10\.253\.0\.1 ' || {
  echo "namespace: mcp.localhost does not resolve to 10.253.0.1" >&2; exit 97; }
exec python3 "$dir/listen.py" "$dir/received" "$@"
"#;

/// Listens on 10.253.0.1:8080, counts every byte that arrives (and closes each connection
/// after its first read), runs the bridge with the inherited stdio, and writes the count when
/// the bridge has exited.
const LISTENER: &str = r#"import socket, subprocess, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.253.0.1", 8080))
s.listen(8)
received = [0]
def serve():
    while True:
        c, _ = s.accept()
        received[0] += len(c.recv(65536))
        c.close()
threading.Thread(target=serve, daemon=True).start()
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(received[0]))
sys.exit(code)
"#;

/// Whether this machine lets the test make its namespaces.
fn unshare_allowed() -> Result<(), String> {
    let out = Command::new("unshare")
        .args(["--net", "--mount", "true"])
        .output()
        .map_err(|e| format!("unshare does not run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "unshare --net --mount is refused: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[test]
fn a_localhost_name_that_resolves_elsewhere_gets_no_byte() {
    if let Err(why) = unshare_allowed() {
        harness::skip::skip(&format!("localhost_resolved: {why}"));
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect(name);
    write("hosts", "127.0.0.1 localhost\n10.253.0.1 mcp.localhost\n");
    write("listen.py", LISTENER);
    let dir_text = dir.path().to_string_lossy().into_owned();
    let bridge = bridge_bin().to_string_lossy().into_owned();
    let args = [
        "--net",
        "--mount",
        "sh",
        "-c",
        SETUP,
        "sh",
        dir_text.as_str(),
        bridge.as_str(),
        "--log-level",
        "debug",
        "--token-store",
        "memory",
        "http://mcp.localhost:8080/mcp",
    ];
    let mut b = Bridge::start_program(Path::new("unshare"), &args, &[], &MACHINE_VARS);
    b.send(&vscode_initialize(1));
    let r = b.response(1);
    assert!(r.get("error").is_some(), "{r}");
    let since = b.close_stdin();
    b.wait_exit(since, EXCHANGE);
    let received = std::fs::read_to_string(dir.path().join("received"))
        .unwrap_or_else(|e| panic!("no count from the listener ({e})\n{}", b.stderr()));
    assert_eq!(
        received,
        "0",
        "bytes reached the address that mcp.localhost resolved to\n{}",
        b.stderr()
    );
    b.expect_text("not a loopback address");
}
