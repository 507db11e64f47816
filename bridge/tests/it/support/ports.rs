//! The redirect ports of the process tests (`--redirect-port`, M4): the bridge binds its
//! receiver on the port itself, when a sign-in starts, and a restarted bridge binds the same
//! port again (its stored sign-in is of that redirect URI). So the test does not hold the port
//! with a socket while the bridge runs (a bound socket beside the bridge's listener broke the
//! tests under wine), and a port that was free a moment ago is not enough: a port of the system's ephemeral
//! range, bound and released, goes back to the pool that every other program's bind to port
//! 0 and every outgoing connection draws from, and one of them may take it before the bridge
//! binds it.
//!
//! Hence [`redirect_port`] takes a port outside the ephemeral range (no bind to port 0 and no
//! connection ever gets one), and holds a lock on it for the life of the test process (an fs4
//! file lock in the temporary folder: two test processes, of this worktree or another, never
//! share a port, and a restart of the bridge in the same test finds its port unclaimed).
//! The port is bound once, and released, to skip one that a program with a fixed port uses.
//!
//! `MCP_TEST_TAKE_PORT=1` is the forced reproduction of the race (docs/ci.md, "The hunt"):
//! after the choice, another program's binds to port 0 run where the bridge has not yet
//! bound the port, and the one that gets it keeps it.
use std::fs::{File, OpenOptions};
use std::net::TcpListener;
use std::ops::RangeInclusive;
use std::sync::Mutex;

/// The lowest port considered: above the registered services that a test machine runs.
const FIRST: u16 = 20_000;
/// The bridge's default redirect ports (the client metadata document's and the contract's
/// example): a signed-in VS Code of the machine may use them.
const DEFAULTS: [u16; 2] = [41_894, 41_895];
/// The ephemeral range where the system does not say (IANA's, that of Windows and macOS).
const IANA_EPHEMERAL: RangeInclusive<u16> = 49_152..=65_535;

/// The locks of the ports this process took, and the listeners of the forced reproduction:
/// kept until the process ends, which releases them.
static HELD: Mutex<Vec<(u16, File)>> = Mutex::new(Vec::new());
static TAKEN: Mutex<Vec<TcpListener>> = Mutex::new(Vec::new());

/// A port of 127.0.0.1 for the bridge's redirect URI that no other program's bind to port 0
/// can take and no other test process uses.
pub fn redirect_port() -> u16 {
    let port = outside_the_ephemeral_range();
    take_for_test(port);
    port
}

/// The first port outside the ephemeral range that [`claim`] gets.
fn outside_the_ephemeral_range() -> u16 {
    let ephemeral = ephemeral_range();
    let dir = std::env::temp_dir().join("mcp-bridge-vscode-test-ports");
    std::fs::create_dir_all(&dir).expect("the folder of the port locks");
    // Start where the process id points, so that concurrent test processes seldom try the
    // same locks first.
    let span = u32::from(u16::MAX - FIRST) + 1;
    let start = std::process::id() % span;
    (0..span)
        .map(|i| FIRST + ((start + i) % span) as u16)
        .filter(|p| !ephemeral.contains(p) && !DEFAULTS.contains(p))
        .find(|&p| claim(&dir, p))
        .expect("a port outside the ephemeral range")
}

/// Locks `port` for this process if no other test process holds it and no program listens
/// on it.
fn claim(dir: &std::path::Path, port: u16) -> bool {
    let Ok(file) = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(port.to_string()))
    else {
        return false;
    };
    let mut held = HELD.lock().expect("the port locks");
    if held.iter().any(|(p, _)| *p == port) || fs4::FileExt::try_lock(&file).is_err() {
        return false;
    }
    if TcpListener::bind(("127.0.0.1", port)).is_err() {
        return false;
    }
    held.push((port, file));
    true
}

/// The system's ephemeral range: Linux says it in `/proc`; elsewhere IANA's.
fn ephemeral_range() -> RangeInclusive<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut bounds = text.split_whitespace().map(|n| n.parse::<u16>().ok());
            Some(bounds.next()??..=bounds.next()??)
        })
        .unwrap_or(IANA_EPHEMERAL)
}

/// The forced reproduction: with `MCP_TEST_TAKE_PORT=1`, binds to port 0 (up to 200 000)
/// until one gets `port`, which it keeps.
fn take_for_test(port: u16) {
    if std::env::var_os("MCP_TEST_TAKE_PORT").is_none() {
        return;
    }
    let taken = (0..200_000).find_map(|_| {
        let listener = TcpListener::bind("127.0.0.1:0").ok()?;
        let got = listener.local_addr().ok()?.port();
        (got == port).then_some(listener)
    });
    if let Some(listener) = taken {
        TAKEN.lock().expect("the taken ports").push(listener);
    }
}
