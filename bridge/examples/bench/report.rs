//! The report: the table with the ratios, the memory, the URL form, and `--json`'s object
//! (printed last). Returns whether the comparison with mcp-remote failed.

use super::*;

pub(crate) fn report(
    rows: &[Row],
    json_out: bool,
    cfg: &Config,
    mem: Memory,
    init: (Stats, Stats, Stats),
    floor: &Floor,
    url_form: Option<&url::UrlFigures>,
) -> bool {
    let ratio = |a: Duration, b: Duration| secs(a) / secs(b);
    let col =
        |s: Stats| json!({"median_s": secs(s.median), "min_s": secs(s.min), "max_s": secs(s.max)});
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
    let (init_direct, init_relay, init_bridge) = init;
    let init_over = secs(init_bridge.median) - secs(init_direct.median);
    let init_relay_over = secs(init_relay.median) - secs(init_direct.median);
    println!(
        "\nstart to first answer ({} runs each, interleaved): fixture server/discover {:.2} ms, via the relay {:.2} ms, bridge initialize {:.2} ms: the bridge adds {:.2} ms, of which the relay's one more process start is {:.2} ms",
        cfg.inits,
        secs(init_direct.median) * 1e3,
        secs(init_relay.median) * 1e3,
        secs(init_bridge.median) * 1e3,
        init_over * 1e3,
        init_relay_over * 1e3,
    );
    let mut floors = Map::new();
    for (key, label, cols) in [
        ("big", "16 MiB result", &floor.big),
        ("huge", "64 MiB result", &floor.huge),
    ] {
        let [rl, line, b] = [cols[0], cols[1], cols[2]];
        println!(
            "{label}, the floor of forwarding whole lines: relay {:.1} ms, line relay {:.1} ms ({:.2}× the relay), bridge {:.1} ms ({:.2}× the line relay, {:.2}× the relay)",
            secs(rl.median) * 1e3,
            secs(line.median) * 1e3,
            ratio(line.median, rl.median),
            secs(b.median) * 1e3,
            ratio(b.median, line.median),
            ratio(b.median, rl.median),
        );
        floors.insert(
            key.into(),
            json!({"relay": col(rl), "line_relay": col(line), "bridge": col(b)}),
        );
        ratios.insert(
            format!("{key}_line_relay_to_relay"),
            json!(ratio(line.median, rl.median)),
        );
        ratios.insert(
            format!("{key}_bridge_to_line_relay"),
            json!(ratio(b.median, line.median)),
        );
    }
    let mb = |b: u64| b as f64 / 1e6;
    let kib_mb = |k: u64| k as f64 * 1024.0 / 1e6;
    println!(
        "\nbridge memory (PSS: pages shared among the processes that map them; USS: its own pages; RSS: every mapped page):"
    );
    mem.idle.print("stdio form");
    let mut peaks = Map::new();
    for (mib, rss, pss) in &mem.peaks {
        let n = (*mib * MIB) as f64;
        println!(
            "  peak while passing one {mib} MiB echo: PSS {:.1} MB ({:.2} × N), RSS {:.1} MB",
            kib_mb(*pss),
            *pss as f64 * 1024.0 / n,
            mb(*rss),
        );
        peaks.insert(
            format!("{mib}MiB"),
            json!({"pss_kib": pss, "rss_bytes": rss}),
        );
    }
    let (g0, g1) = mem.growth_pss;
    let (r0, r1) = mem.growth_rss;
    println!(
        "  over {} round trips: PSS {:.2} MB → {:.2} MB ({:+} KiB); RSS {:.1} MB → {:.1} MB",
        cfg.growth,
        kib_mb(g0),
        kib_mb(g1),
        g1 as i64 - g0 as i64,
        mb(r0),
        mb(r1)
    );
    let mut failed = false;
    let url_json = url_form.map(|f| {
        let us = |d: Duration| secs(d) * 1e6;
        println!(
            "\nURL form, tools/call echo round trip (median): direct HTTPS client {:.1} µs, via the bridge {:.1} µs (+{:.1} µs, {:.2}×); form round via the bridge {:.1} µs",
            us(f.direct.median),
            us(f.bridge.median),
            us(f.bridge.median) - us(f.direct.median),
            ratio(f.bridge.median, f.direct.median),
            us(f.bridge_form.median),
        );
        f.bridge_idle.print("URL form");
        match &f.remote {
            Ok(r) => {
                println!(
                    "  via mcp-remote --protocol {}: echo {:.1} µs ({:.1}× the bridge's), form round {:.1} µs; idle PSS {:.1} MB ({:.1}× the bridge's), USS {:.1} MB, RSS {:.1} MB; {} of {} calls failed",
                    url::REMOTE_PROTOCOL,
                    us(r.round_trip.median),
                    ratio(r.round_trip.median, f.bridge.median),
                    us(r.form.median),
                    kib_mb(r.idle.pss),
                    r.idle.pss as f64 / f.bridge_idle.one.pss.max(1) as f64,
                    kib_mb(r.idle.uss),
                    kib_mb(r.idle.rss),
                    r.calls_failed,
                    r.calls,
                );
                if let Some(e) = &r.error {
                    failed = true;
                    println!("  THE COMPARISON FAILS: mcp-remote's calls did not all succeed; the first error: {e:.300}");
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
    // 32 calls in flight: the ratio of calls per second (the inverse of the time per call).
    if let Some(r) = rows.iter().find(|r| r.key == "inflight32") {
        let [_, rl, b] = r.cols;
        println!(
            "32 calls in flight: relay {:.0} calls/s, bridge {:.0} calls/s",
            1.0 / secs(rl.median),
            1.0 / secs(b.median)
        );
        ratios.insert(
            "inflight32_bridge_to_relay".into(),
            json!(ratio(rl.median, b.median)),
        );
    }
    if json_out {
        let out = json!({
            "url": url_json,
            "measures": measures,
            "ratios": ratios,
            "initialize": {"direct_discover_median_s": secs(init_direct.median),
                "bridge_initialize_median_s": secs(init_bridge.median),
                "relay_discover_median_s": secs(init_relay.median),
                "overhead_ms": init_over * 1e3,
                "relay_overhead_ms": init_relay_over * 1e3,
                "bridge_over_relay_ms": (init_over - init_relay_over) * 1e3,
                "runs": cfg.inits},
            "floor": floors,
            "memory": {
                "pss_per_bridge_1_kib": mem.idle.one.pss,
                "uss_per_bridge_1_kib": mem.idle.one.uss,
                "rss_per_bridge_1_kib": mem.idle.one.rss,
                "pss_per_bridge_10_kib": mem.idle.ten_each.pss,
                "uss_per_bridge_10_kib": mem.idle.ten_each.uss,
                "rss_per_bridge_10_kib": mem.idle.ten_each.rss,
                "url_pss_kib": url_form.map(|f| f.bridge_idle.one.pss),
                "url_uss_kib": url_form.map(|f| f.bridge_idle.one.uss),
                "url_rss_kib": url_form.map(|f| f.bridge_idle.one.rss),
                "url_pss_per_bridge_10_kib": url_form.map(|f| f.bridge_idle.ten_each.pss),
                "url_uss_per_bridge_10_kib": url_form.map(|f| f.bridge_idle.ten_each.uss),
                "peak_per_message": peaks,
                "growth": {"round_trips": cfg.growth, "pss_before_kib": g0, "pss_after_kib": g1,
                    "pss_delta_kib": g1 as i64 - g0 as i64, "rss_before_bytes": r0, "rss_after_bytes": r1}},
        });
        println!("{out}");
    }
    failed
}
