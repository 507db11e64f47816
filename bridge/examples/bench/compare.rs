//! `bench --compare [NAME=PATH …]`: bridge binaries side by side (by default the bridge under
//! test alone), with the plain relay as the ratios' 1.0 and six more floors beside it (the line
//! relays on threads and on tokio, the least translations on each), each measure interleaved
//! sample by sample over all of them, so that a ratio is not a figure of two moments of this
//! shared machine. Three rounds of it, each with the idle memory, the start and the URL form
//! of the first binary; [`aims`] checks the medians of the rounds against the aims. Under the
//! echo row, the CPU time a call of each column and of the fixture behind it ([`cpu_ns`]).

use super::*;
use crate::aims::{self, Round};

/// One column: its name, the binary, and one more variable to run it with.
type Spec = (String, PathBuf, Option<(String, String)>);

/// The rounds of a full run: the aims take the median of their medians.
const ROUNDS: usize = 3;

/// The columns before the bridges: the floors, in the order of [`round`].
const FLOORS: [&str; 7] = [
    "relay",
    "line relay",
    "tokio relay",
    "translator",
    "byte translator",
    "tokio translator",
    "task translator",
];

pub(crate) fn compare(args: &[String], bridge: &Path, fixture: &Path, cfg: &Config, quick: bool) {
    // NAME=PATH, or NAME=PATH;VAR=VALUE to run that binary with one more variable (one build
    // whose choices are switched at run time keeps the code layout alike in every column).
    let mut bins: Vec<Spec> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
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
    // The table in docs/benchmarks.md is that of the bridge under test, measured in full.
    let write = bins.is_empty() && !quick;
    if bins.is_empty() {
        bins.push(("bridge".to_owned(), bridge.to_path_buf(), None));
    }
    let rounds = if quick { 1 } else { ROUNDS };
    let load_before = machine::load_average();
    let ticks = machine::Ticks::now();
    let mut all = Vec::new();
    for n in 1..=rounds {
        eprintln!("round {n} of {rounds} …");
        let before = machine::Ticks::now();
        let mut round = round(&bins, fixture, cfg);
        round.others = machine::others(before, machine::Ticks::now());
        print_round(&round);
        all.push(round);
    }
    let run = aims::Run {
        rounds: all,
        others: machine::others(ticks, machine::Ticks::now()),
        load: (load_before, machine::load_average()),
        bridge: bins[0].0.clone(),
    };
    let table = aims::table(&run);
    println!("\n{table}");
    if write {
        match aims::write_docs(&table) {
            Ok(path) => eprintln!("the aims table is in {}", path.display()),
            Err(e) => {
                eprintln!("cannot write the aims table into docs/benchmarks.md: {e}");
                std::process::exit(1);
            }
        }
    }
}

/// One round: every column started afresh, each measure interleaved over all of them, then
/// the idle memory, the start and the URL form of the first binary.
fn round(bins: &[Spec], fixture: &Path, cfg: &Config) -> Round {
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
    for (_, path, var) in bins {
        let mut peer = Peer::from_command(bridge_command(path, var, &["--", &fixture_arg]), false);
        peer.call("initialize", init_params());
        peer.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        peers.push(peer);
    }
    let mut names: Vec<String> = FLOORS.iter().map(|&f| f.to_owned()).collect();
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
    let (_, path, var) = &bins[0];
    eprintln!("idle memory, start, URL form of {} …", bins[0].0);
    drop_cached_pages(path);
    let idle = idle_bridges(|| {
        let mut via = Peer::from_command(bridge_command(path, var, &["--", &fixture_arg]), false);
        via.call("initialize", init_params());
        via.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        via
    });
    let url_idle = url::idle(fixture, path);
    let mut bridge_args = vec!["--", fixture_arg.as_str()];
    if let Some((k, v)) = var {
        // startup() takes no variables: the aims' start is that of the binary as shipped.
        eprintln!("note: the start is measured without {k}={v}");
        bridge_args.truncate(2);
    }
    let init = startup(
        &[
            (fixture, vec![], true),
            (&me, vec!["--relay", &fixture_arg], true),
            (path, bridge_args, false),
        ],
        cfg.inits,
    );
    let older = older_url::measure(
        fixture,
        path,
        cfg.round_trips / 10,
        cfg.warmup / 10,
        (cfg.forms / 10).max(1),
    );
    Round {
        names,
        rows,
        cpu,
        idle,
        url_idle,
        init: [init[0], init[1], init[2]],
        older,
        others: machine::Others {
            share: 0.0,
            steal: 0.0,
        },
    }
}

/// A bridge binary with its arguments and its one more variable.
fn bridge_command(path: &Path, var: &Option<(String, String)>, args: &[&str]) -> Command {
    let mut command = Command::new(path);
    command.args(args);
    if let Some((k, v)) = var {
        command.env(k, v);
    }
    command
}

/// The table of one round, as the bench printed it before it checked aims.
fn print_round(round: &Round) {
    print!("\n{:<34}", "measure (median; ×relay)");
    for name in &round.names {
        print!(" {name:>20}");
    }
    println!();
    let mut out = Map::new();
    for (label, unit, scale, cols) in &round.rows {
        print!("{label:<34}");
        let relay = secs(cols[0].median);
        let mut row = Map::new();
        for (name, s) in round.names.iter().zip(cols) {
            let m = secs(s.median);
            print!(" {:>9.1} {unit} {:>6.3}×", m * scale, m / relay);
            row.insert(name.clone(), json!({"median_s": m, "to_relay": m / relay}));
        }
        println!();
        out.insert(label.clone(), Value::Object(row));
    }
    print!("{:<34}", "echo: CPU µs a call, own + fixture");
    let mut row = Map::new();
    for (name, (own, below)) in round.names.iter().zip(&round.cpu) {
        print!(" {:>9.1} + {:>8.1}", own, below);
        row.insert(name.clone(), json!({"own_us": own, "fixture_us": below}));
    }
    println!();
    out.insert("echo CPU a call".to_owned(), Value::Object(row));
    println!("{}", Value::Object(out));
}
