//! The URL form in front of an older server (`--url-older`): the bridge and `mcp-remote
//! --protocol auto` side by side at `https://127.0.0.1:<port>/mcp` of `bridge-fixture-server
//! --listen 127.0.0.1:0 --revision 2025-11-25` (Streamable HTTP with sessions, mcp-remote's
//! home ground): echo calls, form rounds and the idle memory of each, printed as ratios. Both
//! must succeed on every call for the comparison to count.

use std::path::Path;

use serde_json::{Value, json};

use super::url::{
    REMOTE_PROTOCOL, REMOTE_RUNS, Remote, ca_file, remote, start_fixture, start_url_bridge,
    via_stdio,
};
use super::{Idle, Stats, idle_bridges};

/// What one run measured.
pub struct OlderFigures {
    pub bridge: Stats,
    pub bridge_form: Stats,
    pub bridge_idle: Idle,
    pub remote: Result<Remote, String>,
}

pub fn measure(
    fixture: &Path,
    bridge: &Path,
    runs: usize,
    warmup: usize,
    forms: usize,
) -> Option<OlderFigures> {
    let fx = start_fixture(fixture, &["--revision", "2025-11-25"])?;
    let ca = ca_file().to_string_lossy().into_owned();
    let bridge_idle = idle_bridges(|| start_url_bridge(bridge, &ca, &fx.url));
    // Both get the same number of echo samples, so that neither median has more of the tail.
    let runs = runs.min(REMOTE_RUNS);
    let peer = start_url_bridge(bridge, &ca, &fx.url);
    let (bridge, bridge_form) = via_stdio(peer, runs, warmup, forms);
    let remote = match std::env::var_os("MCP_REMOTE") {
        Some(proxy) => remote(Path::new(&proxy), &fx.url, runs, warmup.min(50), forms),
        None => Err("not measured: set MCP_REMOTE to mcp-remote's dist/proxy.js".to_owned()),
    };
    Some(OlderFigures {
        bridge,
        bridge_form,
        bridge_idle,
        remote,
    })
}

/// Prints the figures; true when the comparison fails (a call of mcp-remote failed, or it
/// could not be measured).
pub fn print(f: &OlderFigures) -> bool {
    let us = |s: &Stats| s.median.as_secs_f64() * 1e6;
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    println!(
        "URL form, older server (fixture --revision 2025-11-25), tools/call echo round trip (median): via the bridge {:.1} µs; form round {:.1} µs",
        us(&f.bridge),
        us(&f.bridge_form),
    );
    f.bridge_idle.print("URL form, older server");
    match &f.remote {
        Ok(r) => {
            println!(
                "  via mcp-remote --protocol {REMOTE_PROTOCOL}: echo {:.1} µs ({:.1}× the bridge's), form round {:.1} µs ({:.1}×); idle PSS {:.1} MB ({:.1}× the bridge's), USS {:.1} MB; {} of {} calls failed",
                us(&r.round_trip),
                us(&r.round_trip) / us(&f.bridge),
                us(&r.form),
                us(&r.form) / us(&f.bridge_form),
                mb(r.idle.pss),
                r.idle.pss as f64 / f.bridge_idle.one.pss.max(1) as f64,
                mb(r.idle.uss),
                r.calls_failed,
                r.calls,
            );
            if let Some(e) = &r.error {
                println!(
                    "  THE COMPARISON FAILS: mcp-remote's calls did not all succeed; the first error: {e:.300}"
                );
                return true;
            }
            false
        }
        Err(why) => {
            println!("  mcp-remote: {why}");
            true
        }
    }
}

/// The JSON of the figures (the last line of `--url-older --json`).
pub fn to_json(f: &OlderFigures) -> Value {
    let col = |s: &Stats| json!({"median_s": s.median.as_secs_f64(), "min_s": s.min.as_secs_f64(), "max_s": s.max.as_secs_f64()});
    json!({
        "bridge": col(&f.bridge),
        "bridge_form": col(&f.bridge_form),
        "bridge_idle": f.bridge_idle.json(),
        "mcp_remote": match &f.remote {
            Ok(r) => json!({"protocol": REMOTE_PROTOCOL, "echo": col(&r.round_trip),
                "form": col(&r.form), "idle": r.idle.json(), "calls": r.calls,
                "calls_failed": r.calls_failed, "first_error": r.error,
                "echo_to_bridge": r.round_trip.median.as_secs_f64() / f.bridge.median.as_secs_f64(),
                "idle_pss_to_bridge": r.idle.pss as f64 / f.bridge_idle.one.pss.max(1) as f64}),
            Err(why) => json!({"protocol": REMOTE_PROTOCOL, "failed": why}),
        },
    })
}
