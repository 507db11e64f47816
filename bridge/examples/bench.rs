//! Benchmark baseline (not a test): the median round trip of `tools/call echo` through the
//! bridge against the same call straight to the fixture, and the time to pass a 16 MiB tool
//! result through the bridge against straight, side by side with their ratios. A third column
//! is the floor of any extra process: a plain relay (this example with `--relay`) that copies
//! the bytes both ways without reading them; the last ratio is the bridge against that floor.
//!
//! cargo build --release -p mcp-bridge-vscode -p bridge-fixture-server
//! cargo run --release -p mcp-bridge-vscode --example bench
//!
//! Paths: BRIDGE_BIN and BRIDGE_FIXTURE_SERVER, else target/release, else target/debug.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ROUND_TRIPS: usize = 2000;
const WARMUP: usize = 100;
/// A 16 MiB result (the fixture reads request lines up to 64 MiB).
const BIG_BYTES: usize = 16 << 20;
const BIG_RUNS: usize = 7;

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
    modern: bool,
}

impl Peer {
    fn start(program: &Path, args: &[&str], modern: bool) -> Peer {
        let mut child = spawn_piped(program.as_os_str(), args);
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        Peer {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            next_id: 1,
            modern,
        }
    }

    /// One request and its response (notifications skipped); returns the response line length.
    fn call(&mut self, method: &str, mut params: Value) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        if self.modern {
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},
                "io.modelcontextprotocol/clientCapabilities":{}});
        }
        let mut frame =
            serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
                .expect("json");
        frame.push(b'\n');
        self.stdin.write_all(&frame).expect("write");
        self.stdin.flush().expect("flush");
        loop {
            self.line.clear();
            let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
            assert!(n > 0, "the peer closed its output");
            // Find the id cheaply: a response ends with its id or has it near the start.
            let v: Value = serde_json::from_slice(&self.line).expect("one JSON line");
            if v.get("id") == Some(&json!(id)) {
                assert!(
                    v.get("result").is_some(),
                    "error: {:.300}",
                    String::from_utf8_lossy(&self.line)
                );
                return n;
            }
        }
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn target_dir() -> PathBuf {
    // target/<profile>/examples/bench → target
    let exe = std::env::current_exe().expect("exe");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn find(var: &str, name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(var) {
        return PathBuf::from(p);
    }
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    for profile in ["release", "debug"] {
        let p = target_dir().join(profile).join(&file);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found: build it, or set {var}");
}

fn round_trips(peer: &mut Peer) -> Duration {
    let args = json!({"name":"echo","arguments":{"text":"hello"}});
    for _ in 0..WARMUP {
        peer.call("tools/call", args.clone());
    }
    let samples = (0..ROUND_TRIPS)
        .map(|_| {
            let t = Instant::now();
            peer.call("tools/call", args.clone());
            t.elapsed()
        })
        .collect();
    median(samples)
}

fn big(peer: &mut Peer) -> Duration {
    let text = "x".repeat(BIG_BYTES);
    let args = json!({"name":"echo","arguments":{"text":text}});
    peer.call("tools/call", args.clone());
    let samples = (0..BIG_RUNS)
        .map(|_| {
            let t = Instant::now();
            let n = peer.call("tools/call", args.clone());
            assert!(n > BIG_BYTES);
            t.elapsed()
        })
        .collect();
    median(samples)
}

/// Starts `program` with piped stdin and stdout and a silent stderr.
fn spawn_piped<S: AsRef<std::ffi::OsStr>>(program: &std::ffi::OsStr, args: &[S]) -> Child {
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.to_string_lossy()))
}

/// `bench --relay <program> [args…]`: copies stdin to the program and its stdout back, byte
/// for byte, on two threads. The cost of one more process in the pipe, and nothing else.
fn relay(program: &str, args: &[String]) {
    let mut child = spawn_piped(program.as_ref(), args);
    let mut to_child = child.stdin.take().expect("stdin");
    let mut from_child = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_child);
    });
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match std::io::Read::read(&mut from_child, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                    break;
                }
            }
        }
    }
    let _ = child.wait();
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--relay") {
        relay(&argv[2], &argv[3..]);
        return;
    }
    let bridge = find("BRIDGE_BIN", "mcp-bridge-vscode");
    let fixture = find("BRIDGE_FIXTURE_SERVER", "bridge-fixture-server");
    println!(
        "bridge:  {}\nfixture: {}",
        bridge.display(),
        fixture.display()
    );
    let fixture_arg = fixture.to_string_lossy().into_owned();

    let mut direct = Peer::start(&fixture, &[], true);
    direct.call("server/discover", json!({}));
    let me = std::env::current_exe().expect("exe");
    let mut relayed = Peer::start(&me, &["--relay", &fixture_arg], true);
    relayed.call("server/discover", json!({}));
    let mut via = Peer::start(&bridge, &["--", &fixture_arg], false);
    via.call(
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}),
    );

    eprintln!("round trips, direct …");
    let rt_direct = round_trips(&mut direct);
    eprintln!("round trips, via a plain relay …");
    let rt_relay = round_trips(&mut relayed);
    eprintln!("round trips, via the bridge …");
    let rt_via = round_trips(&mut via);
    eprintln!("16 MiB, direct …");
    let big_direct = big(&mut direct);
    eprintln!("16 MiB, via a plain relay …");
    let big_relay = big(&mut relayed);
    eprintln!("16 MiB, via the bridge …");
    let big_via = big(&mut via);
    direct.stop();
    relayed.stop();
    via.stop();

    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!();
    println!(
        "{:<40} {:>11} {:>11} {:>11} {:>14} {:>14}",
        "measure (median)", "direct", "via relay", "via bridge", "bridge/direct", "bridge/relay"
    );
    let row = |label: String, unit: &str, scale: f64, d: Duration, r: Duration, b: Duration| {
        println!(
            "{label:<40} {:>8.1} {unit} {:>8.1} {unit} {:>8.1} {unit} {:>14.2} {:>14.2}",
            d.as_secs_f64() * scale,
            r.as_secs_f64() * scale,
            b.as_secs_f64() * scale,
            ratio(b, d),
            ratio(b, r)
        );
    };
    row(
        format!("tools/call echo round trip ({ROUND_TRIPS} calls)"),
        "µs",
        1e6,
        rt_direct,
        rt_relay,
        rt_via,
    );
    row(
        format!("16 MiB echo result ({BIG_RUNS} runs)"),
        "ms",
        1e3,
        big_direct,
        big_relay,
        big_via,
    );
    println!(
        "\nround-trip overhead of the bridge: {:.1} µs ({:+.0} %)",
        (rt_via.as_secs_f64() - rt_direct.as_secs_f64()) * 1e6,
        (ratio(rt_via, rt_direct) - 1.0) * 100.0
    );
}
