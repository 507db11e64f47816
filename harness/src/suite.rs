//! The suite: finds the transcripts, runs them side by side, prints a progress line for each and
//! the summary `N passed, N failed` alone on a line, then the time.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;

use crate::format;
use crate::invariants::Schemas;
use crate::runner;
use crate::session::Binaries;

/// What the suite runs.
pub struct Plan {
    pub files: Vec<PathBuf>,
    pub bins: Binaries,
    pub schemas: Schemas,
    pub jobs: usize,
    pub verbose: bool,
    /// The jitter mode's seed of this run (jitter.rs), printed with every failure.
    pub jitter: Option<u64>,
}

/// The totals of a run.
pub struct Totals {
    pub passed: usize,
    pub failed: usize,
    /// The report of each failed transcript, in the order of the files.
    pub failures: Vec<String>,
}

/// Every `*.jsonl` under the paths (files are taken as given), sorted, filtered by `filter`.
pub fn collect(paths: &[PathBuf], filter: Option<&str>) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("{} is neither a file nor a folder", p.display()));
        }
    }
    out.sort();
    out.dedup();
    if let Some(f) = filter {
        out.retain(|p| p.to_string_lossy().contains(f));
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

/// Runs the plan; the transcripts run side by side, `jobs` at a time, each once per era of
/// its setup (`format::by_era`), started in the order of `plan.files`.
pub async fn run(plan: &Plan) -> Totals {
    let started = Instant::now();
    let runs: Vec<Result<format::Transcript, (PathBuf, String)>> = plan
        .files
        .iter()
        .flat_map(|path| match format::load(path) {
            Ok(t) => format::by_era(t).into_iter().map(Ok).collect(),
            Err(e) => vec![Err((path.clone(), e))],
        })
        .collect();
    let total = runs.len();
    let sem = Arc::new(Semaphore::new(plan.jobs.max(1)));
    let bins = Arc::new(plan.bins.clone());
    let jitter = plan.jitter;
    let mut handles = Vec::new();
    for run in runs {
        let sem = sem.clone();
        let bins = bins.clone();
        let schemas = plan.schemas.clone();
        let verbose = plan.verbose;
        handles.push(tokio::spawn(async move {
            let _permit = sem.acquire_owned().await.ok();
            match run {
                Ok(t) => runner::run(&t, &bins, schemas, verbose, jitter).await,
                Err((path, e)) => runner::Outcome {
                    path: path.display().to_string(),
                    passed: false,
                    skipped: None,
                    report: Some(format!("FAIL {}\n  {e}\n", path.display())),
                    elapsed: std::time::Duration::ZERO,
                    schema_checked: 0,
                },
            }
        }));
    }
    let (mut passed, mut failed, mut skipped, mut checked) = (0, 0, 0, 0);
    let mut reports = Vec::new();
    // Results are printed in file order; the runs themselves overlap.
    for (i, h) in handles.into_iter().enumerate() {
        let outcome = match h.await {
            Ok(o) => o,
            Err(e) => runner::Outcome {
                path: format!("#{}", i + 1),
                passed: false,
                skipped: None,
                report: Some(format!("FAIL (the runner task broke: {e})\n")),
                elapsed: std::time::Duration::ZERO,
                schema_checked: 0,
            },
        };
        checked += outcome.schema_checked;
        if let Some(why) = &outcome.skipped {
            println!("[{:>3}/{total}] skip {} ({why})", i + 1, outcome.path);
            skipped += 1;
            continue;
        }
        let status = if outcome.passed { "ok  " } else { "FAIL" };
        println!(
            "[{:>3}/{total}] {status} {} ({} ms)",
            i + 1,
            outcome.path,
            outcome.elapsed.as_millis()
        );
        if outcome.passed {
            passed += 1;
        } else {
            failed += 1;
            if let Some(mut r) = outcome.report {
                if let Some(seed) = plan.jitter {
                    r.push_str(&replay_line(seed, &outcome.path));
                }
                print!("{r}");
                reports.push(r);
            }
        }
    }
    if !reports.is_empty() {
        println!("\nfailed transcripts:");
        for r in &reports {
            if let Some(first) = r.lines().next() {
                println!("  {}", first.trim_start_matches("FAIL "));
            }
        }
    }
    if plan.schemas.legacy.is_some() {
        println!("schema checks: {checked} frames checked against their definitions");
    } else {
        println!("schema checks: skipped (no --schemas)");
        crate::skip::record("transcripts: the schema checks of every frame (no --schemas)");
    }
    if skipped > 0 {
        // Only the --embedded and --windows runs skip, each transcript with its reason above.
        println!("{passed} passed, {failed} failed, {skipped} skipped");
    } else {
        println!("{passed} passed, {failed} failed");
    }
    if let Some(seed) = plan.jitter {
        println!("jitter seed: {seed}");
    }
    println!("time: {:.1} s", started.elapsed().as_secs_f64());
    Totals {
        passed,
        failed,
        failures: reports,
    }
}

/// The line under a failure of a jittered run: its seed, and the options that replay it.
fn replay_line(seed: u64, label: &str) -> String {
    // The label is the file, with ` [<era>]` when the transcript runs in more than one era.
    let file = label.split(" [").next().unwrap_or(label);
    format!("  jitter seed: {seed} (replay: --jitter {seed} --filter {file})\n")
}
