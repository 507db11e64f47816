//! Benchmark (not a test): each measure straight to the fixture, through a plain byte relay
//! (this example with `--relay`: one more process that copies the bytes both ways without
//! reading them, the floor of any bridge) and through the bridge, side by side in one run, with
//! the ratios; and the resident memory of the bridge (idle, peak while passing one message of N
//! bytes, growth over many round trips).
//!
//! cargo build --release --workspace --examples
//! target/release/examples/bench [--json] [--growth N] [--quick] [--url-only]
//!
//! The bench first builds the bridge and the fixture with its own profile (a no-op when they
//! are up to date), so that it never measures stale binaries.
//!
//! The URL form ([`url`]) runs the fixture with `--listen` and compares the bridge with a
//! direct HTTPS client, and with `mcp-remote` when `MCP_REMOTE` names its `dist/proxy.js`.
//!
//! `--json` adds one JSON object with every figure on the last line. `--growth N` sets the
//! round trips of the growth measure (default 20 000; the aim is stated for 100 000).
//! `--quick` runs fewer samples (for a smoke test). Paths: BRIDGE_BIN and
//! BRIDGE_FIXTURE_SERVER, else target/release, else target/debug.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

mod url;

const MIB: usize = 1 << 20;
/// A result just under the default line limit of the bridge and of the fixture (64 MiB),
/// with room for the envelope of the request and of the response.
const HUGE_BYTES: usize = (64 << 20) - 4096;

struct Config {
    round_trips: usize,
    warmup: usize,
    big_runs: usize,
    huge_runs: usize,
    growth: usize,
    list_changes: usize,
    inits: usize,
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
    modern: bool,
    /// Notifications read while waiting for responses.
    notes: usize,
}

impl Peer {
    fn start(program: &Path, args: &[&str], modern: bool) -> Peer {
        let mut command = Command::new(program);
        command.args(args);
        Peer::from_command(command, modern)
    }

    fn from_command(mut command: Command, modern: bool) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", command.get_program()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(MIB, child.stdout.take().expect("stdout"));
        Peer {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            next_id: 1,
            modern,
            notes: 0,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The bytes of one request (built before the clock starts).
    fn frame(&mut self, method: &str, mut params: Value) -> (u64, Vec<u8>) {
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
        (id, frame)
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Sends a prepared request and reads up to its response; returns the response length.
    fn exchange(&mut self, id: u64, frame: &[u8]) -> usize {
        let (n, ok) = self.exchange_any(id, frame);
        assert!(ok, "error: {:.300}", String::from_utf8_lossy(&self.line));
        n
    }

    /// [`Peer::exchange`] that also takes an error response: its length and whether it is a
    /// result.
    fn exchange_any(&mut self, id: u64, frame: &[u8]) -> (usize, bool) {
        self.send(frame);
        loop {
            self.line.clear();
            let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
            assert!(n > 0, "the peer closed its output");
            if let Some(ok) = response_to(&self.line, id) {
                return (n, ok);
            }
            self.notes += 1;
        }
    }

    fn call(&mut self, method: &str, params: Value) -> usize {
        let (id, frame) = self.frame(method, params);
        self.exchange(id, &frame)
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// `Some(is_result)` when `line` is the response to `id`. A long line is not parsed (the
/// bench would measure itself): its id and kind are read from its start or its end.
fn response_to(line: &[u8], id: u64) -> Option<bool> {
    if line.len() < MIB {
        let v: Value = serde_json::from_slice(line).expect("one JSON line");
        return (v.get("id") == Some(&json!(id)) && v.get("method").is_none())
            .then(|| v.get("result").is_some());
    }
    let head = &line[..256];
    let tail = &line[line.len() - 256..];
    let needle = format!("\"id\":{id}");
    let has = |hay: &[u8], s: &str| memchr::memmem::find(hay, s.as_bytes()).is_some();
    (has(head, &needle) || has(tail, &needle)).then(|| has(head, "\"result\""))
}

#[derive(Clone, Copy, Debug)]
struct Stats {
    median: Duration,
    min: Duration,
    max: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    Stats {
        median: samples[samples.len() / 2],
        min: samples[0],
        max: samples[samples.len() - 1],
    }
}

fn timed(runs: usize, mut f: impl FnMut()) -> Stats {
    stats(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn target_dir() -> PathBuf {
    // target/<profile>/examples/bench → target
    let exe = std::env::current_exe().expect("exe");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// Builds the bridge and the fixture with the bench's own profile, so that the figures are
/// those of the sources beside it (`cargo build --examples` alone builds no binary), into
/// target/<profile>/. Skipped when BRIDGE_BIN or BRIDGE_FIXTURE_SERVER names a binary; a build
/// that cannot run leaves what is there.
fn build_binaries() {
    if std::env::var_os("BRIDGE_BIN").is_some()
        || std::env::var_os("BRIDGE_FIXTURE_SERVER").is_some()
    {
        return;
    }
    let target = target_dir();
    let Some(workspace) = target.parent() else {
        return;
    };
    let exe = std::env::current_exe().expect("exe");
    let profile = exe
        .ancestors()
        .nth(2)
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .unwrap_or("release")
        .to_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let profile_args: &[&str] = match profile.as_str() {
        "debug" => &[],
        "release" => &["--release"],
        other => &["--profile", other],
    };
    eprintln!("building the bridge and the fixture ({profile}) …");
    for what in [
        &["build", "--quiet", "-p", "mcp-bridge-vscode", "--bins"][..],
        &["build", "--quiet", "-p", "bridge-fixture-server", "--bins"],
    ] {
        let status = Command::new(&cargo)
            .current_dir(workspace)
            .args(what)
            .args(profile_args)
            .status();
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!("the build failed ({status}); measuring the binaries that exist")
            }
            Err(e) => eprintln!("cannot run cargo ({e}); measuring the binaries that exist"),
        }
    }
}

fn find(var: &str, name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(var) {
        return PathBuf::from(p);
    }
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let target = target_dir();
    for profile in ["release", "debug"] {
        let p = target.join(profile).join(&file);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found: build it, or set {var}");
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

/// A field of /proc/<pid>/status in bytes (VmRSS, VmHWM).
fn status_bytes(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets the peak resident size (VmHWM) of a process of ours to its current size.
fn reset_peak(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

fn echo_args(bytes: usize) -> Value {
    json!({"name":"echo","arguments":{"text":"x".repeat(bytes)}})
}

/// A large argument and a small result: the echo tool ignores the unknown member `pad`.
fn pad_args(bytes: usize) -> Value {
    json!({"name":"echo","arguments":{"text":"hi","pad":"x".repeat(bytes)}})
}

/// The three columns of one measure, interleaved: sample k of each peer is taken before sample
/// k + 1 of any, in an order that rotates, so that a slow moment of this shared machine falls
/// on all three columns alike instead of on one of them.
fn interleaved(
    peers: &mut [Peer],
    runs: usize,
    mut sample: impl FnMut(usize, &mut Peer) -> Duration,
) -> Vec<Stats> {
    let n = peers.len();
    let mut samples = vec![Vec::with_capacity(runs); n];
    for k in 0..runs {
        for j in 0..n {
            let i = (k + j) % n;
            samples[i].push(sample(i, &mut peers[i]));
        }
    }
    samples.into_iter().map(stats).collect()
}

/// `runs` round trips of `tools/call` with `args` on each peer, after `warmup` untimed ones.
/// The request bytes are built before the clock starts.
fn calls(peers: &mut [Peer], args: &Value, warmup: usize, runs: usize) -> Vec<Stats> {
    let mut frames = vec![Vec::new(); peers.len()];
    for (peer, frames) in peers.iter_mut().zip(frames.iter_mut()) {
        for _ in 0..warmup {
            peer.call("tools/call", args.clone());
        }
        *frames = (0..runs)
            .map(|_| peer.frame("tools/call", args.clone()))
            .rev()
            .collect();
    }
    interleaved(peers, runs, |i, peer| {
        let (id, frame) = frames[i].pop().expect("frame");
        let t = Instant::now();
        peer.exchange(id, &frame);
        t.elapsed()
    })
}

/// One `toggle` per sample: each list change reaches the peer before its result.
fn list_changes(peers: &mut [Peer], n: usize) -> Vec<Stats> {
    let mut before = vec![0; peers.len()];
    for (peer, before) in peers.iter_mut().zip(before.iter_mut()) {
        // Two toggles first, so that the listen stream is open and acknowledged.
        for enabled in [true, false] {
            peer.call(
                "tools/call",
                json!({"name":"toggle","arguments":{"enabled":enabled}}),
            );
        }
        *before = peer.notes;
    }
    // After the two toggles each tool is off: the samples switch it on, off, on…
    let mut toggles = vec![0usize; peers.len()];
    let s = interleaved(peers, n, |i, peer| {
        let enabled = toggles[i].is_multiple_of(2);
        toggles[i] += 1;
        let (id, frame) = peer.frame(
            "tools/call",
            json!({"name":"toggle","arguments":{"enabled":enabled}}),
        );
        let t = Instant::now();
        peer.exchange(id, &frame);
        t.elapsed()
    });
    for (peer, before) in peers.iter().zip(before) {
        let seen = peer.notes - before;
        assert!(seen >= n, "{seen} list changes for {n} toggles");
    }
    s
}

fn start_all(fixture: &Path) -> [Peer; 3] {
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let me = std::env::current_exe().expect("exe");
    let mut direct = Peer::start(fixture, &[], true);
    let mut relayed = Peer::start(&me, &["--relay", &fixture_arg], true);
    for peer in [&mut direct, &mut relayed] {
        peer.call("server/discover", json!({}));
        // The listen stream of list changes (its result comes at the end).
        let (_, frame) = peer.frame(
            "subscriptions/listen",
            json!({"notifications":{"toolsListChanged":true}}),
        );
        peer.send(&frame);
    }
    let bridge = find("BRIDGE_BIN", "mcp-bridge-vscode");
    drop_cached_pages(&bridge);
    [direct, relayed, start_bridge(&bridge, fixture)]
}

/// Asks the kernel to drop the cached pages of a binary that no process runs, so that the
/// idle figure counts the pages that starting it reads, as at its first start after an
/// install or a reboot. Without this it depends on how the file came into the cache: a binary
/// that the linker has just written is cached whole and in large blocks, and the kernel then
/// maps more of it around each page that the start touches (0.8 MB more for the same binary
/// on the development machine).
fn drop_cached_pages(binary: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(file) = std::fs::File::open(binary) {
        use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
        let _ = posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = binary;
}

/// A bridge in front of the fixture, past `initialize` and `notifications/initialized`.
fn start_bridge(bridge: &Path, fixture: &Path) -> Peer {
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let mut via = Peer::start(bridge, &["--", &fixture_arg], false);
    via.call("initialize", init_params());
    via.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    via
}

fn init_params() -> Value {
    json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}})
}

/// From the start of the process to the answer of its first request: `initialize` of the
/// bridge (which starts the fixture and asks its `server/discover`) and `server/discover` of
/// the fixture alone.
fn startup(program: &Path, args: &[&str], modern: bool, runs: usize) -> Stats {
    timed(runs, || {
        let mut peer = Peer::start(program, args, modern);
        if modern {
            peer.call("server/discover", json!({}));
        } else {
            peer.call("initialize", init_params());
        }
        peer.stop();
    })
}

struct Row {
    key: &'static str,
    label: String,
    unit: (&'static str, f64),
    cols: [Stats; 3],
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--relay") {
        relay(&argv[2], &argv[3..]);
        return;
    }
    let json_out = argv.iter().any(|a| a == "--json");
    let quick = argv.iter().any(|a| a == "--quick");
    let growth_arg = argv
        .iter()
        .position(|a| a == "--growth")
        .and_then(|i| argv.get(i + 1)?.parse().ok());
    let cfg = if quick {
        Config {
            round_trips: 200,
            warmup: 20,
            big_runs: 2,
            huge_runs: 1,
            growth: growth_arg.unwrap_or(1000),
            list_changes: 50,
            inits: 3,
        }
    } else {
        Config {
            // A median of 10 000: on a shared 2-core machine a median of 2 000 moved by
            // up to 8 % of the relay's time between two runs of the same binaries.
            round_trips: 10_000,
            warmup: 500,
            big_runs: 9,
            huge_runs: 3,
            growth: growth_arg.unwrap_or(20_000),
            list_changes: 1000,
            inits: 10,
        }
    };
    build_binaries();
    let bridge = find("BRIDGE_BIN", "mcp-bridge-vscode");
    let fixture = find("BRIDGE_FIXTURE_SERVER", "bridge-fixture-server");
    println!(
        "bridge:  {}\nfixture: {}",
        bridge.display(),
        fixture.display()
    );
    if argv.iter().any(|a| a == "--url-only") {
        // Only the URL form (a quick look at it).
        let f = url::measure(&fixture, &bridge, cfg.round_trips / 2, cfg.warmup);
        println!("{}", f.as_ref().map(url::to_json).unwrap_or(Value::Null));
        return;
    }
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let mut peers = start_all(&fixture);
    let names = ["direct", "via a plain relay", "via the bridge"];

    // Idle: after initialize, before any call.
    std::thread::sleep(Duration::from_millis(300));
    let bridge_pid = peers[2].pid();
    let idle_rss = status_bytes(bridge_pid, "VmRSS");
    let idle_anon = status_bytes(bridge_pid, "RssAnon");

    let mut rows = Vec::new();
    let mut each = |key, label: String, unit, f: &mut dyn FnMut(&mut [Peer]) -> Vec<Stats>| {
        eprintln!("{label}: {} …", names.join(", "));
        let cols = f(&mut peers).try_into().expect("three columns");
        rows.push(Row {
            key,
            label,
            unit,
            cols,
        });
    };
    let us = ("µs", 1e6);
    let ms = ("ms", 1e3);
    let echo = json!({"name":"echo","arguments":{"text":"hello"}});
    let (rt, warm) = (cfg.round_trips, cfg.warmup);
    each(
        "echo",
        format!("tools/call echo round trip ({rt} calls)"),
        us,
        &mut |p| calls(p, &echo, warm, rt),
    );
    let big = echo_args(16 * MIB);
    let runs = cfg.big_runs;
    each(
        "big",
        format!("16 MiB result ({runs} runs)"),
        ms,
        &mut |p| calls(p, &big, 1, runs),
    );
    let pad = pad_args(16 * MIB);
    each(
        "big_arg",
        format!("16 MiB argument ({runs} runs)"),
        ms,
        &mut |p| calls(p, &pad, 1, runs),
    );
    let huge = echo_args(HUGE_BYTES);
    let runs = cfg.huge_runs;
    each(
        "huge",
        format!("64 MiB result ({runs} runs)"),
        ms,
        &mut |p| calls(p, &huge, 0, runs),
    );
    drop(huge);
    let n = cfg.list_changes;
    each(
        "list_change",
        format!("{n} list changes, per change"),
        us,
        &mut |p| list_changes(p, n),
    );

    // Peak while passing one message of N bytes (a fresh peak for each size), in a bridge
    // that has passed nothing larger before: the bridge keeps the buffers of a burst of large
    // lines for a few seconds, and the runs above would count in every peak.
    let mut fresh = start_bridge(&bridge, &fixture);
    let fresh_pid = fresh.pid();
    let mut peaks = Vec::new();
    for mib in [1usize, 16, 64] {
        let args = echo_args(if mib == 64 { HUGE_BYTES } else { mib * MIB });
        reset_peak(fresh_pid);
        fresh.call("tools/call", args);
        peaks.push((mib, status_bytes(fresh_pid, "VmHWM")));
    }
    // Growth over many round trips, from a settled start: the first small calls after the
    // 64 MiB peak let the allocator hand that memory back.
    eprintln!("growth over {} round trips …", cfg.growth);
    for _ in 0..cfg.growth / 20 {
        fresh.call("tools/call", echo.clone());
    }
    let before_growth = status_bytes(fresh_pid, "VmRSS");
    for _ in 0..cfg.growth {
        fresh.call("tools/call", echo.clone());
    }
    let after_growth = status_bytes(fresh_pid, "VmRSS");
    fresh.stop();
    for peer in peers {
        peer.stop();
    }
    eprintln!("the URL form …");
    let url_form = url::measure(&fixture, &bridge, cfg.round_trips / 2, cfg.warmup);
    eprintln!("startup …");
    let me_inits = cfg.inits;
    let init_direct = startup(&fixture, &[], true, me_inits);
    let init_bridge = startup(&bridge, &["--", &fixture_arg], false, me_inits);

    report(
        &rows,
        json_out,
        &cfg,
        Memory {
            idle: idle_rss,
            idle_anon,
            peaks,
            growth: (before_growth, after_growth),
        },
        (init_direct, init_bridge),
        url_form.as_ref(),
    );
}

struct Memory {
    idle: u64,
    /// The anonymous pages of the idle bridge (heap, stacks, relocated data): what each
    /// further bridge adds; the rest of `idle` are file pages of the executable and of the
    /// shared libraries, which every bridge process that VS Code starts shares.
    idle_anon: u64,
    peaks: Vec<(usize, u64)>,
    growth: (u64, u64),
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn report(
    rows: &[Row],
    json_out: bool,
    cfg: &Config,
    mem: Memory,
    init: (Stats, Stats),
    url_form: Option<&url::UrlFigures>,
) {
    let ratio = |a: Duration, b: Duration| secs(a) / secs(b);
    println!();
    println!(
        "{:<38} {:>11} {:>11} {:>11} {:>14} {:>13}",
        "measure (median)", "direct", "via relay", "via bridge", "bridge/direct", "bridge/relay"
    );
    let mut measures = Map::new();
    let mut ratios = Map::new();
    for r in rows {
        let [d, rl, b] = r.cols;
        let (unit, scale) = r.unit;
        println!(
            "{:<38} {:>8.1} {unit} {:>8.1} {unit} {:>8.1} {unit} {:>14.2} {:>13.2}",
            r.label,
            secs(d.median) * scale,
            secs(rl.median) * scale,
            secs(b.median) * scale,
            ratio(b.median, d.median),
            ratio(b.median, rl.median)
        );
        let col = |s: Stats| json!({"median_s": secs(s.median), "min_s": secs(s.min), "max_s": secs(s.max)});
        measures.insert(
            r.key.into(),
            json!({"label": r.label, "direct": col(d), "relay": col(rl), "bridge": col(b)}),
        );
        ratios.insert(
            format!("{}_bridge_to_relay", r.key),
            json!(ratio(b.median, rl.median)),
        );
        ratios.insert(
            format!("{}_bridge_to_direct", r.key),
            json!(ratio(b.median, d.median)),
        );
    }
    let (init_direct, init_bridge) = init;
    let init_over = secs(init_bridge.median) - secs(init_direct.median);
    println!(
        "\nstart to first answer ({} runs): fixture server/discover {:.2} ms, bridge initialize {:.2} ms: the bridge adds {:.2} ms",
        cfg.inits,
        secs(init_direct.median) * 1e3,
        secs(init_bridge.median) * 1e3,
        init_over * 1e3
    );
    let mb = |b: u64| b as f64 / 1e6;
    println!(
        "bridge resident memory: idle {:.1} MB, of which {:.1} MB anonymous (the rest: file pages of the executable and libraries, shared by every bridge process)",
        mb(mem.idle),
        mb(mem.idle_anon)
    );
    let mut peaks = Map::new();
    for (mib, peak) in &mem.peaks {
        let n = (*mib * MIB) as f64;
        println!(
            "  peak while passing one {mib} MiB echo: {:.1} MB ({:.2} × N; aim 3 × N + 8 MB = {:.1} MB)",
            mb(*peak),
            *peak as f64 / n,
            mb((3.0 * n) as u64 + 8_000_000)
        );
        peaks.insert(format!("{mib}MiB"), json!(peak));
    }
    let (g0, g1) = mem.growth;
    println!(
        "  over {} round trips: {:.1} MB → {:.1} MB ({:+.2} MB)",
        cfg.growth,
        mb(g0),
        mb(g1),
        mb(g1) - mb(g0)
    );
    let url_json = url_form.map(|f| {
        let us = |d: Duration| secs(d) * 1e6;
        println!(
            "\nURL form, tools/call echo round trip (median): direct HTTPS client {:.1} µs, via the bridge {:.1} µs (+{:.1} µs, {:.2}×); bridge resident {:.1} MB",
            us(f.direct.median),
            us(f.bridge.median),
            us(f.bridge.median) - us(f.direct.median),
            ratio(f.bridge.median, f.direct.median),
            mb(f.bridge_rss)
        );
        match &f.remote {
            Ok(r) => {
                println!(
                    "  via mcp-remote {:.1} µs (+{:.1} µs); resident {:.1} MB",
                    us(r.round_trip.median),
                    us(r.round_trip.median) - us(f.direct.median),
                    mb(r.rss)
                );
                if let Some(e) = &r.error {
                    println!("  mcp-remote could not call the tool; each call got: {e:.300}");
                }
            }
            Err(why) => println!("  mcp-remote: {why}"),
        }
        ratios.insert(
            "url_echo_bridge_to_direct".into(),
            json!(ratio(f.bridge.median, f.direct.median)),
        );
        url::to_json(f)
    });
    if json_out {
        let out = json!({
            "url_form": url_json,
            "measures": measures,
            "ratios": ratios,
            "initialize": {"direct_discover_median_s": secs(init_direct.median),
                "bridge_initialize_median_s": secs(init_bridge.median),
                "bridge_overhead_s": init_over, "runs": cfg.inits},
            "rss_bytes": {"idle": mem.idle, "idle_anon": mem.idle_anon, "peak_per_message": peaks,
                "growth": {"round_trips": cfg.growth, "before": g0, "after": g1,
                    "delta": g1 as i64 - g0 as i64}},
        });
        println!("{out}");
    }
}
