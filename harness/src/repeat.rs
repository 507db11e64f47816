//! `harness --repeat N`: N passes over the selected transcripts, each in its own shuffled order
//! at the given `--jobs`, to measure how often they fail by chance (docs/ci.md, "The hunt").
//! With the jitter mode, pass p has the seed `<seed> + p - 1`. At the end, the failures are
//! grouped by their signature (the transcript, the line and the first line of the failure,
//! numbers left out), each group with its count, its passes, its first report and its seed,
//! and with the machine's cores and load average, which say how busy the run was.
use std::collections::BTreeMap;

use crate::suite::{self, Plan};

/// The failures of one signature.
struct Group {
    count: usize,
    passes: Vec<usize>,
    /// The report of the first failure (its diff, its seed and the options that replay it).
    first: String,
}

/// Runs `passes` shuffled passes of the plan; true when none failed. `shuffle` seeds the
/// orders (printed, so that the orders can be run again).
pub async fn run(mut plan: Plan, passes: usize, shuffle: u64) -> bool {
    let jitter = plan.jitter;
    println!(
        "== repeat: {passes} passes, jobs {}, shuffle seed {shuffle}, {}",
        plan.jobs,
        machine()
    );
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let (mut runs, mut failed) = (0, 0);
    for pass in 1..=passes {
        crate::kept::set_pass(pass);
        let mut rng = fastrand::Rng::with_seed(shuffle.wrapping_add(pass as u64));
        rng.shuffle(&mut plan.files);
        plan.jitter = jitter.map(|seed| seed.wrapping_add(pass as u64 - 1));
        let seed = plan
            .jitter
            .map_or_else(|| "no jitter".into(), |s| format!("jitter seed {s}"));
        println!("== pass {pass}/{passes}: {seed}, {}", machine());
        let totals = suite::run(&plan).await;
        runs += totals.passed + totals.failed;
        failed += totals.failed;
        for report in totals.failures {
            let group = groups.entry(signature(&report)).or_insert_with(|| Group {
                count: 0,
                passes: Vec::new(),
                first: report.clone(),
            });
            group.count += 1;
            group.passes.push(pass);
        }
    }
    println!(
        "\n== repeat report: {passes} passes, {runs} transcript runs, {failed} failed, {} \
         signatures; {}",
        groups.len(),
        machine()
    );
    for (signature, group) in &groups {
        let passes: Vec<String> = group.passes.iter().map(usize::to_string).collect();
        println!(
            "-- {} x {signature} (passes {})",
            group.count,
            passes.join(", ")
        );
        print!("{}", group.first);
    }
    failed == 0
}

/// The signature of a failure report: its first lines up to the failure's own message (the
/// transcript, the step's line, the message), with each run of digits as `#`, so that the same
/// failure with other ids, times or ports falls in one group.
pub fn signature(report: &str) -> String {
    let mut lines = report.lines();
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    for line in lines {
        out.push(line.trim());
        if !line.trim_start().starts_with("at line ") {
            break;
        }
    }
    let text = out.join(" | ");
    let mut normalized = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                normalized.push('#');
            }
            in_digits = true;
        } else {
            normalized.push(c);
            in_digits = false;
        }
    }
    normalized
}

/// `nproc N, load average A B C`: how many cores and how busy they were (Linux reads the load
/// from /proc/loadavg; elsewhere it says unknown).
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into());
    format!("nproc {cores}, load average {load}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failure_with_other_numbers_has_one_signature() {
        let a = "FAIL m4/R7.jsonl [2026-07-28]\n  at line 5: {\"expect_silence\":200}\n  \
                 a frame came within 200 ms: id 14\n  frames before it:\n    x 1\n";
        let b = "FAIL m4/R7.jsonl [2026-07-28]\n  at line 5: {\"expect_silence\":200}\n  \
                 a frame came within 200 ms: id 93\n  frames before it:\n    x 7\n";
        assert_eq!(signature(a), signature(b));
        assert!(signature(a).contains("a frame came within # ms"));
        let other = "FAIL m4/R7.jsonl [2026-07-28]\n  at line 6: {\"stop\":{}}\n  no exit\n";
        assert_ne!(signature(a), signature(other));
        let at_end = "FAIL m1/a.jsonl\n  processes of the tree left after the end: [1]\n";
        assert_eq!(
            signature(at_end),
            "FAIL m#/a.jsonl | processes of the tree left after the end: [#]"
        );
    }
}
