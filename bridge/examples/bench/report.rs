//! The report: the table with the ratios, and `--json`'s object.

use super::*;

pub(crate) fn report(
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
