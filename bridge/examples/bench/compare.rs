//! `bench --compare NAME=PATH NAME=PATH …`: two or more bridge binaries side by side in one run,
//! with the plain relay as the floor (and the line relays on threads and on tokio and the two
//! least translations on each beside it), each measure
//! interleaved sample by sample over all of them, so that the with/without figure of a hot-path choice (bridge/README.md) is not a
//! figure of two moments of this shared machine. Under the echo row, the CPU time a call of
//! each column and of the fixture behind it ([`cpu_ns`]).

use super::*;

/// One column: its name, the binary, and one more variable to run it with.
type Spec = (String, PathBuf, Option<(String, String)>);

pub(crate) fn compare(specs: &[String], fixture: &Path, cfg: &Config) {
    // NAME=PATH, or NAME=PATH;VAR=VALUE to run that binary with one more variable (one build
    // whose choices are switched at run time keeps the code layout alike in every column).
    let bins: Vec<Spec> = specs
        .iter()
        .map(|s| {
            let (name, rest) = s.split_once('=').unwrap_or((s, s));
            let (path, var) = match rest.split_once(';') {
                Some((path, var)) => (path, var.split_once('=')),
                None => (rest, None),
            };
            let var = var.map(|(k, v)| (k.to_owned(), v.to_owned()));
            (name.to_owned(), PathBuf::from(path), var)
        })
        .collect();
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let me = me();
    // The floors: the byte relay (the ratios' 1.0), the line relay on two threads (whole lines,
    // read and written) and on a current-thread tokio runtime (what a bridge built as this one
    // costs before any work per message).
    let mut peers = vec![
        Peer::start(&me, &["--relay", &fixture_arg], true),
        Peer::start(&me, &["--line-relay", &fixture_arg], true),
        Peer::start(&me, &["--tokio-relay", &fixture_arg], true),
    ];
    for peer in &mut peers {
        peer.call("server/discover", json!({}));
    }
    // The floors of translating: VS Code's revision in, the stateless one upstream, with a
    // parse of each line and with none.
    let floors: [&[&str]; 4] = [
        &["--translator"],
        &["--byte-translator"],
        &["--tokio-translator", "inline"],
        &["--tokio-translator", "task"],
    ];
    for floor in floors {
        let args: Vec<&str> = floor
            .iter()
            .copied()
            .chain([fixture_arg.as_str()])
            .collect();
        let mut translating = Peer::start(&me, &args, false);
        translating.call("initialize", init_params());
        peers.push(translating);
    }
    for (_, path, var) in &bins {
        let mut command = Command::new(path);
        command.args(["--", &fixture_arg]);
        if let Some((k, v)) = var {
            command.env(k, v);
        }
        let mut peer = Peer::from_command(command, false);
        peer.call("initialize", init_params());
        peer.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        peers.push(peer);
    }
    let mut names = vec![
        "relay".to_owned(),
        "line relay".to_owned(),
        "tokio relay".to_owned(),
        "translator".to_owned(),
        "byte translator".to_owned(),
        "tokio translator".to_owned(),
        "task translator".to_owned(),
    ];
    names.extend(bins.iter().map(|b| b.0.clone()));
    let echo = json!({"name":"echo","arguments":{"text":"hello"}});
    let (rt, warm) = (cfg.round_trips, cfg.warmup);
    // The CPU each column and its fixture spend on the echo calls, beside their latency: a gap
    // in latency with no gap here is the fixture's or the scheduler's, not the peer's work.
    let before: Vec<(u64, u64)> = peers.iter().map(|p| cpu_ns(p.pid())).collect();
    let echo_row = calls(&mut peers, &echo, warm, rt);
    let cpu: Vec<(f64, f64)> = peers
        .iter()
        .zip(&before)
        .map(|(p, b)| {
            let a = cpu_ns(p.pid());
            let per = |x: u64, y: u64| (x.saturating_sub(y)) as f64 / (rt + warm) as f64 / 1e3;
            (per(a.0, b.0), per(a.1, b.1))
        })
        .collect();
    let rows: Vec<(String, &str, f64, Vec<Stats>)> = vec![
        (format!("echo round trip ({rt} calls)"), "µs", 1e6, echo_row),
        (
            format!(
                "32 in flight, per call ({} × {})",
                cfg.inflight_batches,
                rt / 10
            ),
            "µs",
            1e6,
            inflight(&mut peers, 32, rt / 10, cfg.inflight_batches),
        ),
        (
            format!("16 MiB result ({} runs)", cfg.big_runs),
            "ms",
            1e3,
            calls(&mut peers, &echo_args(16 * MIB), 1, cfg.big_runs),
        ),
        (
            format!("64 MiB result ({} runs)", cfg.huge_runs),
            "ms",
            1e3,
            calls(&mut peers, &echo_args(HUGE_BYTES), 0, cfg.huge_runs),
        ),
    ];
    for peer in peers {
        peer.stop();
    }
    print!("\n{:<34}", "measure (median; ×relay)");
    for name in &names {
        print!(" {name:>20}");
    }
    println!();
    let mut out = Map::new();
    for (label, unit, scale, cols) in rows {
        print!("{label:<34}");
        let relay = secs(cols[0].median);
        let mut row = Map::new();
        for (name, s) in names.iter().zip(&cols) {
            let m = secs(s.median);
            print!(" {:>9.1} {unit} {:>6.3}×", m * scale, m / relay);
            row.insert(name.clone(), json!({"median_s": m, "to_relay": m / relay}));
        }
        println!();
        out.insert(label, Value::Object(row));
    }
    print!("{:<34}", "echo: CPU µs a call, own + fixture");
    let mut row = Map::new();
    for (name, (own, below)) in names.iter().zip(&cpu) {
        print!(" {:>9.1} + {:>8.1}", own, below);
        row.insert(name.clone(), json!({"own_us": own, "fixture_us": below}));
    }
    println!();
    out.insert("echo CPU a call".to_owned(), Value::Object(row));
    println!("{}", Value::Object(out));
}
