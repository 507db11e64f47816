//! `harness soak [--minutes M] [--pss-growth-kib K]`: four bridges side by side for M minutes
//! (the command form, the URL form with its sign-in and token refreshes, the bridge embedded
//! in the fixture, and the command form under the Copilot profile) with a mixed workload
//! (`lane`). It fails on a request answered twice or never (unless the client cancelled
//! it), a stdout line that is not JSON-RPC (R7), a process of a bridge's tree left after its
//! exit, a token or secret on stderr, or a bridge whose anonymous PSS (`Pss_Anon` of
//! `/proc/<pid>/smaps_rollup`: heap and stacks; the file-backed share moves as other bridges of
//! the same binary come and go) grew by more than K KiB between its first cycle and its stop
//! (default 5120 KiB). `ci/soak.sh` runs it.
mod conn;
mod lane;
mod url;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use conn::Programs;
use lane::{Kind, LaneReport};

/// The default bound of the PSS growth of one bridge, in KiB.
const PSS_GROWTH_KIB: u64 = 5 * 1024;

struct Options {
    minutes: f64,
    pss_growth_kib: u64,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        minutes: 2.0,
        pss_growth_kib: PSS_GROWTH_KIB,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--minutes" => {
                o.minutes = value
                    .parse()
                    .ok()
                    .filter(|m: &f64| *m > 0.0 && *m <= 24.0 * 60.0)
                    .ok_or_else(|| format!("--minutes needs a number of minutes, not {value}"))?;
            }
            "--pss-growth-kib" => {
                o.pss_growth_kib = value
                    .parse()
                    .map_err(|_| format!("--pss-growth-kib needs a number, not {value}"))?;
            }
            _ => return Err(format!("the option {a} is not known")),
        }
    }
    Ok(o)
}

fn program(var: &str, name: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(var) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the harness: {e}"))?;
    let dir = exe.parent().ok_or("the harness has no folder")?;
    Ok(dir.join(name))
}

/// The entry point of `harness soak`.
pub fn main(args: &[String], runtime: &tokio::runtime::Runtime) -> ExitCode {
    let options = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("harness soak: {e}");
            return ExitCode::from(2);
        }
    };
    let programs = match (
        program("MCP_BRIDGE_BIN", "mcp-bridge-vscode"),
        program("BRIDGE_FIXTURE_SERVER", "bridge-fixture-server"),
    ) {
        (Ok(bridge), Ok(fixture)) => Programs {
            bridge,
            fixture,
            ca: std::env::var_os("MCP_SOAK_CA")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("certs/ca.crt")),
        },
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("harness soak: {e}");
            return ExitCode::from(2);
        }
    };
    let passed = runtime.block_on(run(&options, programs));
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

async fn run(options: &Options, programs: Programs) -> bool {
    let duration = Duration::from_secs_f64(options.minutes * 60.0);
    let until = Instant::now() + duration;
    println!(
        "soak: 4 bridges for {:.1} min; anonymous PSS growth bound {} KiB per bridge",
        options.minutes, options.pss_growth_kib
    );
    let kinds = [Kind::Command, Kind::Url, Kind::Embedded, Kind::Copilot];
    let mut tasks = Vec::new();
    for kind in kinds {
        let programs = programs.clone();
        let tag = format!("soak-{}-{kind:?}", std::process::id());
        tasks.push(tokio::spawn(async move {
            lane::run(kind, &programs, until, &tag).await
        }));
    }
    let mut passed = true;
    for (kind, task) in kinds.into_iter().zip(tasks) {
        let report = task.await.unwrap_or_else(|e| {
            let mut r = LaneReport::default();
            r.tally.problems.push(format!("the lane stopped: {e}"));
            r
        });
        passed &= judge(kind, &report, options, duration);
    }
    println!("soak: {}", if passed { "passed" } else { "FAILED" });
    passed
}

/// Prints the lane's line and its problems; true when it passed.
fn judge(kind: Kind, r: &LaneReport, options: &Options, duration: Duration) -> bool {
    let t = &r.tally;
    let mut problems = t.problems.clone();
    let growth = r
        .pss
        .iter()
        .map(|(first, last)| last.saturating_sub(*first))
        .max()
        .unwrap_or(0);
    if growth > options.pss_growth_kib {
        problems.push(format!("the anonymous PSS grew by {growth} KiB"));
    }
    if t.parse_errors != t.bad_lines_sent {
        problems.push(format!(
            "{} parse errors for {} bad lines",
            t.parse_errors, t.bad_lines_sent
        ));
    }
    if r.cycles > 0 && (t.list_changes == 0 || t.updates == 0 || t.progress == 0) {
        problems.push("no list change, resource update or progress".into());
    }
    if kind == Kind::Url && duration >= Duration::from_secs(30) && r.refreshes == 0 {
        problems.push("no token refresh".into());
    }
    if kind == Kind::Command && duration >= Duration::from_secs(90) && r.restarts == 0 {
        problems.push("the upstream was never killed".into());
    }
    if r.cycles == 0 {
        problems.push("no cycle ran".into());
    }
    let pss: Vec<String> = r.pss.iter().map(|(a, b)| format!("{a}->{b}")).collect();
    println!(
        "soak: {kind:?}: {} bridges, {} cycles, {} requests: {} answered, {} cancelled, {} lost, \
         {} doubled; {} bad frames; {} parse errors for {} bad lines; {} progress, {} list \
         changes, {} updates; {} refreshes; {} upstream kills; anonymous PSS KiB {} (max growth \
         {growth}); \
         {} secrets on stderr",
        r.bridges,
        r.cycles,
        t.requests,
        t.answered,
        t.cancelled,
        t.lost,
        t.doubled,
        t.bad_frames,
        t.parse_errors,
        t.bad_lines_sent,
        t.progress,
        t.list_changes,
        t.updates,
        r.refreshes,
        r.restarts,
        pss.join(" "),
        r.stderr_secrets,
    );
    for (i, samples) in r.samples.iter().enumerate() {
        let text: Vec<String> = samples.iter().map(u64::to_string).collect();
        println!(
            "soak: {kind:?}: bridge {}: anonymous PSS KiB every {} s: {}",
            i + 1,
            lane::SAMPLE_EVERY.as_secs(),
            text.join(" ")
        );
    }
    for p in problems.iter().take(20) {
        println!("soak: {kind:?}: problem: {p}");
    }
    problems.is_empty()
}
