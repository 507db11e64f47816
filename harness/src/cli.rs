//! The command line: `harness [options] <folders or files>…` replays transcripts (exit 1 on any
//! failure, 2 on bad arguments); `harness check …` checks a server as VS Code sees it
//! (check/mod.rs); `harness upstream-relay <socket> [--stubborn]` is the upstream command of a
//! scripted transcript (relay.rs); `harness http-client --ca-file <pem> <url>` is the client
//! of a direct transcript at a URL (http_client.rs).
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use crate::invariants::Schemas;
use crate::process;
use crate::schema::{LEGACY, MODERN, SchemaSet};
use crate::session::Binaries;
use crate::suite;

/// Replays the JSONL transcripts of mcp-bridge-vscode against the bridge.
#[derive(Parser, Debug)]
#[command(name = "harness", version)]
struct Args {
    /// Transcript files, or folders searched for `*.jsonl`.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// How many transcripts run side by side (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Only the transcripts whose path contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Print every frame and every step.
    #[arg(long)]
    verbose: bool,
    /// The specification folder (with 2025-11-25/ and 2026-07-28/): check every frame against
    /// its schema definition.
    #[arg(long)]
    schemas: Option<PathBuf>,
    /// Do not build the bridge and the fixture first (when started by `cargo run`).
    #[arg(long)]
    no_build: bool,
    /// M5: replay against `bridge-fixture-server --embedded` (the bridge inside the server)
    /// in place of the bridge in front of the fixture; transcripts of other upstreams, with
    /// options of the bridge, or that say why the embedded path differs are skipped.
    #[arg(long)]
    embedded: bool,
    /// Replay against the Windows bridge and fixture (`MCP_BRIDGE_BIN`, `BRIDGE_FIXTURE_SERVER`,
    /// and `HARNESS_RELAY_BIN` the harness built for Windows as the relay; under wine:
    /// ci/windows.sh): transcripts with a POSIX signal or a POSIX command are skipped, each
    /// with its reason.
    #[arg(long)]
    windows: bool,
    /// The jitter mode: random waits, seeded by SEED (a number, or `random` for a fresh one),
    /// at the points where the contract promises no order (docs/harness.md, "Jitter"); the seed
    /// is printed with every failure. Without it, `MCP_JITTER_SEED` of the environment.
    #[arg(long, value_name = "SEED")]
    jitter: Option<String>,
    /// N passes over the selected transcripts, each in a shuffled order, then the failures
    /// grouped by their signature (repeat.rs).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    repeat: Option<u32>,
}

/// The entry point of the binary.
pub fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("harness: no runtime: {e}");
            return ExitCode::from(2);
        }
    };
    if argv.get(1).map(String::as_str) == Some("check") {
        return crate::check::main(&argv[2..], &runtime);
    }
    if argv.get(1).map(String::as_str) == Some("soak") {
        #[cfg(unix)]
        return crate::soak::main(&argv[2..], &runtime);
        #[cfg(not(unix))]
        {
            eprintln!("harness soak: runs on Linux only (it reads /proc and sends signals)");
            return ExitCode::from(2);
        }
    }
    if argv.get(1).map(String::as_str) == Some("scripted-server") {
        let Some(table) = argv.get(2) else {
            eprintln!("harness scripted-server: the table file is missing");
            return ExitCode::from(2);
        };
        let code = crate::scripted_server::run(table);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if argv.get(1).map(String::as_str) == Some("http-client") {
        let code = runtime.block_on(crate::http_client::run(&argv[2..]));
        std::process::exit(code);
    }
    if argv.get(1).map(String::as_str) == Some("upstream-relay") {
        let Some(sock) = argv.get(2) else {
            eprintln!("harness upstream-relay: the socket (a path or tcp:<address>) is missing");
            return ExitCode::from(2);
        };
        // Options of the relay come before `--`; the tapped command after it.
        let (opts, command) = match argv.iter().position(|a| a == "--") {
            Some(i) => (&argv[3..i], &argv[i + 1..]),
            None => (&argv[3..], &argv[argv.len()..]),
        };
        let stubborn = opts.iter().any(|a| a == "--stubborn");
        let code = runtime.block_on(crate::relay::run(sock, stubborn, command));
        // The exit code is the transcript's choice (e.g. 3): leave at once, whatever still runs.
        std::process::exit(code);
    }
    let args = match crate::args::parse::<Args>(&argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match runtime.block_on(run(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("harness: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> Result<bool, String> {
    let files = suite::collect(&args.paths, args.filter.as_deref())?;
    if files.is_empty() {
        return Err("no transcript found".into());
    }
    let mut bins = binaries()?;
    bins.embedded = args.embedded;
    bins.windows = args.windows;
    if args.windows {
        // The relay of the scripted upstream and of the tap is started by the Windows bridge:
        // it must be the harness built for Windows (it speaks loopback TCP there).
        bins.harness = std::env::var_os("HARNESS_RELAY_BIN")
            .map(PathBuf::from)
            .ok_or("--windows needs HARNESS_RELAY_BIN: the harness built for Windows, the relay of the scripted upstream and of the tap")?;
    }
    if !args.no_build {
        build_once(&bins.harness)?;
    }
    // The fixture is needed only when a transcript starts it (a transcript that does not load
    // fails on its own, with its line).
    let fixture_needed = files.iter().any(|f| {
        crate::format::load(f)
            .map(|t| crate::format::uses_fixture(&t))
            .unwrap_or(false)
    });
    let needed: Vec<(&str, &PathBuf)> = if fixture_needed {
        vec![("bridge", &bins.bridge), ("fixture", &bins.fixture)]
    } else {
        vec![("bridge", &bins.bridge)]
    };
    for (what, p) in needed {
        if !p.is_file() {
            return Err(format!(
                "the {what} binary {} does not exist (cargo build --workspace)",
                p.display()
            ));
        }
    }
    let schemas = match &args.schemas {
        Some(dir) => Schemas {
            legacy: Some(Arc::new(SchemaSet::load(dir, LEGACY)?)),
            modern: Some(Arc::new(SchemaSet::load(dir, MODERN)?)),
        },
        // Under CI a missing schema check is a failure; elsewhere the suite's summary says that
        // the checks were skipped (and ci/test.sh lists the skip).
        None if crate::skip::in_ci() => {
            return Err(
                "under CI the transcripts need --schemas DIR (the schema checks of every \
                        frame); a missing specification folder (MCP_SPEC_DIR, docs/harness.md) is a failure, \
                        not a skip"
                    .into(),
            );
        }
        None => Schemas::default(),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let jitter = match args
        .jitter
        .or_else(|| std::env::var(crate::jitter::SEED_VAR).ok())
    {
        Some(text) => Some(crate::jitter::parse_seed(&text)?),
        None => None,
    };
    if let Some(seed) = jitter {
        // Printed first, so that a run that breaks off still says how to replay it.
        println!("jitter seed: {seed}");
    }
    let plan = suite::Plan {
        files,
        bins,
        schemas,
        jobs,
        verbose: args.verbose,
        jitter,
    };
    if let Some(passes) = args.repeat {
        let shuffle = jitter.unwrap_or_else(crate::jitter::fresh_seed);
        return Ok(crate::repeat::run(plan, passes as usize, shuffle).await);
    }
    let totals = suite::run(&plan).await;
    Ok(totals.failed == 0)
}

/// The bridge and the fixture next to the harness binary (the same target folder), unless
/// `MCP_BRIDGE_BIN` or `BRIDGE_FIXTURE_SERVER` name them.
fn binaries() -> Result<Binaries, String> {
    let harness =
        std::env::current_exe().map_err(|e| format!("cannot find the harness binary: {e}"))?;
    Ok(Binaries {
        bridge: process::sibling("MCP_BRIDGE_BIN", "mcp-bridge-vscode")?,
        fixture: process::sibling("BRIDGE_FIXTURE_SERVER", "bridge-fixture-server")?,
        harness,
        embedded: false,
        windows: false,
    })
}

/// Under `cargo run`, builds the bridge and the fixture once before the transcripts, with the
/// profile of the harness itself (the folder it runs from: `debug` is the `dev` profile), so
/// that `cargo run [--release] -p harness -- transcripts/` never replays stale binaries or
/// binaries of the other profile.
fn build_once(harness: &Path) -> Result<(), String> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    let profile = build_profile(harness);
    let status = std::process::Command::new(cargo)
        .args([
            "build",
            "--profile",
            &profile,
            "-p",
            "mcp-bridge-vscode",
            "-p",
            "bridge-fixture-server",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo build: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("cargo build of the bridge and the fixture failed".into())
    }
}

/// The cargo profile of a binary in `target/<folder>/`: `debug` is `dev`, any other folder
/// is the profile of that name (`release`, a custom profile).
pub fn build_profile(binary: &Path) -> String {
    let folder = binary
        .parent()
        .and_then(Path::file_name)
        .map(|f| f.to_string_lossy().into_owned());
    match folder.as_deref() {
        Some("debug") | None => "dev".into(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_follows_the_folder_of_the_harness() {
        assert_eq!(build_profile(Path::new("/w/target/debug/harness")), "dev");
        assert_eq!(
            build_profile(Path::new("/w/target/release/harness")),
            "release"
        );
    }
}
