//! The performance aims of the bridge, each checked against what the same run measured: the
//! median over the rounds of `--compare` of each figure (a ratio is taken in its round, then
//! the median of the rounds' ratios), beside the floor it is stated against, and the table
//! that `--compare` writes into docs/benchmarks.md between its markers.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::*;
use crate::machine::{self, Others};
use crate::older_url::OlderFigures;

/// What one round of `--compare` measured; the bridge of the aims is the first binary, the
/// column after the floors.
pub(crate) struct Round {
    pub(crate) names: Vec<String>,
    pub(crate) rows: Vec<(String, &'static str, f64, Vec<Stats>)>,
    pub(crate) cpu: Vec<(f64, f64)>,
    pub(crate) idle: Idle,
    pub(crate) url_idle: Option<Idle>,
    /// The fixture's own `server/discover`, the byte relay's, the bridge's `initialize`.
    pub(crate) init: [Stats; 3],
    pub(crate) older: Option<OlderFigures>,
    pub(crate) others: Others,
}

/// All rounds of one run, and the machine around them.
pub(crate) struct Run {
    pub(crate) rounds: Vec<Round>,
    pub(crate) others: Others,
    /// The 1-minute load average at the start and at the end.
    pub(crate) load: (f64, f64),
    pub(crate) bridge: String,
}

/// Columns of [`Round::rows`]: the byte relay, the tokio translator with a task per request,
/// the first bridge.
const RELAY: usize = 0;
const TASK: usize = 6;
const BRIDGE: usize = 7;
/// Rows of [`Round::rows`].
const ECHO: usize = 0;
const INFLIGHT: usize = 1;
const BIG: usize = 2;

/// The start marker of the table in docs/benchmarks.md; the end marker follows it.
const START: &str = "<!-- bench:aims:start -->";
const END: &str = "<!-- bench:aims:end -->";

/// How an aim compares its figure with its bound.
#[derive(Clone, Copy)]
enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

/// One row of the table: the aim, the figure of each round (None: not measured, with why), the
/// floor as text, and how to print the figure.
struct Aim {
    aim: &'static str,
    bound: Bound,
    figures: Result<Vec<f64>, String>,
    floor: String,
    format: fn(f64) -> String,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn medians(run: &Run, f: impl Fn(&Round) -> f64) -> Vec<f64> {
    run.rounds.iter().map(f).collect()
}

fn time(r: &Round, row: usize, col: usize) -> f64 {
    secs(r.rows[row].3[col].median)
}

fn mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

fn aims(run: &Run) -> Vec<Aim> {
    let ratio = |x: f64| format!("{x:.3}×");
    let us = |row: usize, col: usize| {
        format!(
            "{:.1} µs",
            median(&medians(run, |r| time(r, row, col))) * 1e6
        )
    };
    let mut aims = vec![
        Aim {
            aim: "echo round trip ≤ 1.05 × the tokio translator with a task per request",
            bound: Bound::AtMost(1.05),
            figures: Ok(medians(run, |r| {
                time(r, ECHO, BRIDGE) / time(r, ECHO, TASK)
            })),
            floor: format!(
                "task translator {} (bridge {})",
                us(ECHO, TASK),
                us(ECHO, BRIDGE)
            ),
            format: ratio,
        },
        Aim {
            aim: "32 in flight, calls per second ≥ 0.95 × the byte relay",
            bound: Bound::AtLeast(0.95),
            figures: Ok(medians(run, |r| {
                time(r, INFLIGHT, RELAY) / time(r, INFLIGHT, BRIDGE)
            })),
            floor: format!(
                "byte relay {:.0} calls/s (bridge {:.0})",
                median(&medians(run, |r| 1.0 / time(r, INFLIGHT, RELAY))),
                median(&medians(run, |r| 1.0 / time(r, INFLIGHT, BRIDGE)))
            ),
            format: ratio,
        },
        Aim {
            aim: "16 MiB result ≤ 1.0 × the tokio translator with a task per request",
            bound: Bound::AtMost(1.0),
            figures: Ok(medians(run, |r| time(r, BIG, BRIDGE) / time(r, BIG, TASK))),
            floor: format!(
                "task translator {:.1} ms (bridge {:.1} ms)",
                median(&medians(run, |r| time(r, BIG, TASK))) * 1e3,
                median(&medians(run, |r| time(r, BIG, BRIDGE))) * 1e3
            ),
            format: ratio,
        },
        Aim {
            aim: "PSS per idle stdio bridge, 10 bridges ≤ 1.0 MB",
            bound: Bound::AtMost(1.0),
            figures: Ok(medians(run, |r| mb(r.idle.ten_each.pss))),
            floor: format!(
                "none measured (USS {:.2} MB of it)",
                median(&medians(run, |r| mb(r.idle.ten_each.uss)))
            ),
            format: |x| format!("{x:.2} MB"),
        },
        Aim {
            aim: "PSS of one idle URL-form bridge ≤ 6 MB",
            bound: Bound::AtMost(6.0),
            figures: run
                .rounds
                .iter()
                .map(|r| r.url_idle.as_ref().map(|i| mb(i.one.pss)))
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| "the fixture did not start at a URL".to_owned()),
            floor: "none measured".to_owned(),
            format: |x| format!("{x:.2} MB"),
        },
        Aim {
            aim: "`initialize` overhead (the bridge's minus the fixture's own `server/discover`) ≤ 1 ms",
            bound: Bound::AtMost(1.0),
            figures: Ok(medians(run, |r| {
                (secs(r.init[2].median) - secs(r.init[0].median)) * 1e3
            })),
            floor: format!(
                "byte relay +{:.2} ms (one more process start)",
                median(&medians(run, |r| (secs(r.init[1].median)
                    - secs(r.init[0].median))
                    * 1e3))
            ),
            format: |x| format!("{x:.2} ms"),
        },
    ];
    aims.extend(remote_aims(run));
    aims
}

/// The URL form against mcp-remote in front of the same older server: the bridge's echo and
/// idle PSS as a share of mcp-remote's, both counted only when every call of both succeeded.
fn remote_aims(run: &Run) -> [Aim; 2] {
    let both = |f: fn(&OlderFigures, &url::Remote) -> f64| -> Result<Vec<f64>, String> {
        run.rounds
            .iter()
            .map(|r| {
                let older = r
                    .older
                    .as_ref()
                    .ok_or("the older fixture did not start at a URL")?;
                let remote = older.remote.as_ref().map_err(Clone::clone)?;
                if let Some(e) = &remote.error {
                    return Err(format!(
                        "{} of mcp-remote's {} calls failed: {e:.120}",
                        remote.calls_failed, remote.calls
                    ));
                }
                Ok(f(older, remote))
            })
            .collect()
    };
    let floor = |f: fn(&url::Remote) -> f64, unit: &str| {
        let figures: Vec<f64> = run
            .rounds
            .iter()
            .filter_map(|r| r.older.as_ref()?.remote.as_ref().ok().map(f))
            .collect();
        if figures.is_empty() {
            "mcp-remote not measured".to_owned()
        } else {
            format!("mcp-remote {:.1} {unit}", median(&figures))
        }
    };
    [
        Aim {
            aim: "URL form, older server: echo ≤ 1.0 × mcp-remote's, every call of both succeeding",
            bound: Bound::AtMost(1.0),
            figures: both(|o, r| secs(o.bridge.median) / secs(r.round_trip.median)),
            floor: floor(|r| secs(r.round_trip.median) * 1e6, "µs"),
            format: |x| format!("{x:.3}×"),
        },
        Aim {
            aim: "URL form, older server: idle PSS ≤ 1.0 × mcp-remote's",
            bound: Bound::AtMost(1.0),
            figures: both(|o, r| o.bridge_idle.one.pss as f64 / r.idle.pss.max(1) as f64),
            floor: floor(|r| mb(r.idle.pss), "MB"),
            format: |x| format!("{x:.3}×"),
        },
    ]
}

/// The markdown table of the aims, with the machine, the date and how busy the machine was.
pub(crate) fn table(run: &Run) -> String {
    let n = run.rounds.len();
    let mut out = String::new();
    let busy = run.others.share > machine::BUSY_SHARE;
    let per_round: Vec<String> = run
        .rounds
        .iter()
        .map(|r| format!("{:.0} %", r.others.share * 100.0))
        .collect();
    let _ = writeln!(
        out,
        "`bench --compare`, {}: the column `{}`, median of {n} rounds (spread: largest minus smallest). \
         Machine: {} cores, {}; load average {:.2} at the start, {:.2} at the end. \
         Other processes took {:.0} % of the cores during the run (rounds: {}), the hypervisor {:.0} %: {}.",
        machine::utc_now(),
        run.bridge,
        machine::cores(),
        machine::cpu_model(),
        run.load.0,
        run.load.1,
        run.others.share * 100.0,
        per_round.join(", "),
        run.others.steal * 100.0,
        if busy {
            "**the machine was busy**, the figures are those of a shared hour"
        } else {
            "the machine was quiet"
        },
    );
    out.push('\n');
    out.push_str(
        "| Aim | Median | Spread | Floor (median) | Met |\n| --- | --- | --- | --- | --- |\n",
    );
    for a in aims(run) {
        let (figure, spread, met) = match &a.figures {
            Ok(v) => {
                let m = median(v);
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let met = match a.bound {
                    Bound::AtMost(b) => m <= b,
                    Bound::AtLeast(b) => m >= b,
                };
                (
                    (a.format)(m),
                    (a.format)(hi - lo),
                    if met { "met" } else { "**not met**" },
                )
            }
            Err(why) => (
                format!("not measured: {why}"),
                "–".to_owned(),
                "**not met**",
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {figure} | {spread} | {} | {met} |",
            a.aim, a.floor
        );
    }
    out
}

/// Replaces what lies between the markers of docs/benchmarks.md with `table`.
pub(crate) fn write_docs(table: &str) -> Result<PathBuf, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/benchmarks.md");
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let (before, rest) = text
        .split_once(START)
        .ok_or_else(|| format!("no {START} marker"))?;
    let (_, after) = rest
        .split_once(END)
        .ok_or_else(|| format!("no {END} marker"))?;
    let new = format!("{before}{START}\n{table}{END}{after}");
    std::fs::write(&path, new).map_err(|e| e.to_string())?;
    Ok(path)
}
