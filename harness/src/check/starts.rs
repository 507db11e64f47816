//! The starts of `harness check`: the Copilot runtime's own start of a stdio server, directly,
//! without the bridge, once per `--starts` (each a fresh process), timed against the
//! runtime's discover window and `initialize` budget (`crate::copilot_runtime`).
//!
//! A start sends `server/discover`; without an answer in the window, or after an error, it
//! sends `initialize` on the same connection and gives it the budget (`startup.time`). After a
//! discover result in time it takes the 2026-07-28 path (`tools/list` with the `_meta`
//! envelope, the frame of the transcripts' client in client/modern.rs; no tools there is
//! `list`) and then probes the era lock: `initialize` on the same connection, as the runtime
//! would send it had the answer come later (`discover.era-lock`). An answer after the window is
//! `discover.late`.
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::conn::{Broken, Conn};
use super::{Problem, Severity, catalog};
use crate::copilot_runtime::{Runtime, modern_request};
use crate::format::Profile;
use crate::profile::{AfterDiscover, copilot_discover, initialize_params};

/// How long a start waits for a discover answer that came neither in the window nor before
/// the `initialize` answer (it may still be on its way behind a slow start).
const LATE_DISCOVER_WAIT: Duration = Duration::from_secs(2);

/// What one start saw; times in milliseconds from the spawn, `initialize_ms` from its send.
#[derive(Debug, Clone, Default)]
pub struct Start {
    pub n: u32,
    /// When the discover answer came (None: not before the start ended).
    pub discover_ms: Option<u64>,
    /// `result`, `error` or `none`, and the error's code.
    pub discover_answer: &'static str,
    pub discover_code: Option<i64>,
    /// When the runtime sent `initialize` (None: it took the 2026-07-28 path or gave up).
    pub initialize_sent_ms: Option<u64>,
    /// How long the `initialize` answer took after its send (the budget's measure).
    pub initialize_ms: Option<u64>,
    /// `result`, `error`, `none` (not within the budget) or `closed`, and the error's code.
    pub initialize_answer: &'static str,
    pub initialize_code: Option<i64>,
    /// The path that the runtime took: `2026-07-28`, `initialize`, `aborted` (1.0.82 after
    /// -32602) or `failed` (the process did not start or closed its stdout).
    pub path: &'static str,
    /// On the 2026-07-28 path: the era probe's `initialize` answer (`result`, `error`, …).
    pub era_probe: Option<(&'static str, Option<i64>)>,
    /// On the 2026-07-28 path: the answer to the runtime's `tools/list` (`result`, `error`, …).
    pub modern_list: Option<(&'static str, Option<i64>)>,
}

fn since(t0: Instant) -> u64 {
    t0.elapsed().as_millis() as u64
}

fn kind(frame: &Value) -> (&'static str, Option<i64>) {
    match frame.get("error") {
        Some(e) => ("error", e.get("code").and_then(Value::as_i64)),
        None => ("result", None),
    }
}

fn is_modern_result(frame: &Value) -> bool {
    frame
        .pointer("/result/supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|x| x == "2026-07-28"))
}

/// One start of `program args` as the runtime starts it; the problems it found.
pub async fn run(
    program: &Path,
    args: &[String],
    runtime: &Runtime,
    bound: Duration,
    n: u32,
) -> (Start, Vec<Problem>) {
    let tag = format!(
        "check-start-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    );
    let mut start = Start {
        n,
        discover_answer: "none",
        initialize_answer: "none",
        path: "failed",
        ..Start::default()
    };
    let Ok(mut conn) = Conn::spawn(program, args, Profile::Copilot, &tag) else {
        // The run of the Copilot profile reports the cause (`start`).
        return (start, Vec::new());
    };
    let mut discover = None;
    steps(&mut conn, runtime, bound, &mut start, &mut discover).await;
    conn.stop(Duration::from_secs(2)).await;
    crate::process::kill_tree(&tag);
    let problems = problems(&start, discover.as_ref(), runtime);
    (start, problems)
}

async fn steps(
    conn: &mut Conn,
    runtime: &Runtime,
    bound: Duration,
    start: &mut Start,
    discover: &mut Option<Value>,
) {
    let t0 = conn.started;
    if conn.send(&copilot_discover()).await.is_err() {
        return;
    }
    let id = conn.take_id();
    match conn.response(id, runtime.window).await {
        Ok(answer) => {
            start.discover_ms = Some(since(t0));
            *discover = Some(answer);
        }
        Err(Broken::Timeout) => {}
        // The run of the Copilot profile reports it (`discover.stops`).
        Err(_) => return,
    }
    match runtime.after_discover(discover.as_ref()) {
        AfterDiscover::Abort => start.path = "aborted",
        AfterDiscover::Modern => {
            start.path = "2026-07-28";
            // The runtime's next request on this path, the frame of the transcripts' client
            // (client/modern.rs): without tools here, the Copilot harness has none.
            let id = conn.take_id();
            let list = modern_request(id, "tools/list", serde_json::Map::new());
            start.modern_list = Some(match conn.send(&list).await {
                Ok(()) => match conn.response(id, bound).await {
                    Ok(frame) => kind(&frame),
                    Err(Broken::Timeout) => ("none", None),
                    Err(_) => ("closed", None),
                },
                Err(_) => ("closed", None),
            });
            let wait = bound.min(runtime.budget);
            let probe = conn
                .call("initialize", initialize_params(Profile::Copilot), wait)
                .await;
            start.era_probe = Some(match &probe {
                Ok(frame) => kind(frame),
                Err(Broken::Timeout) => ("none", None),
                Err(_) => ("closed", None),
            });
        }
        AfterDiscover::Initialize => {
            start.path = "initialize";
            start.initialize_sent_ms = Some(since(t0));
            let sent = Instant::now();
            let answer = conn
                .call(
                    "initialize",
                    initialize_params(Profile::Copilot),
                    runtime.budget,
                )
                .await;
            match answer {
                Ok(frame) => {
                    start.initialize_ms = Some(since(sent));
                    (start.initialize_answer, start.initialize_code) = kind(&frame);
                }
                Err(Broken::Timeout) => start.initialize_answer = "none",
                Err(_) => start.initialize_answer = "closed",
            }
            if discover.is_none() {
                let late = match conn.stashed(id) {
                    Some(frame) => Some(frame),
                    None => conn.response(id, LATE_DISCOVER_WAIT).await.ok(),
                };
                if let Some(frame) = late {
                    // The stash keeps no arrival time: the answer came at the latest now.
                    start.discover_ms = Some(since(t0));
                    *discover = Some(frame);
                }
            }
        }
    }
    if let Some(frame) = discover.as_ref() {
        (start.discover_answer, start.discover_code) = kind(frame);
    }
}

/// The problems of one start (all of the Copilot harness, found directly).
fn problems(start: &Start, discover: Option<&Value>, runtime: &Runtime) -> Vec<Problem> {
    let mut out = Vec::new();
    let n = start.n;
    let window = runtime.window.as_millis() as u64;
    let budget = runtime.budget.as_millis() as u64;
    let version = runtime.version.name();
    let problem = |severity, check, m: String| {
        Problem::new(severity, check, format!("start {n}: {m}"))
            .profile(Profile::Copilot)
            .direct()
    };
    let late = start.discover_ms.filter(|ms| *ms > window);
    if let Some(ms) = late {
        out.push(problem(
            Severity::Warning,
            &catalog::DISCOVER_LATE,
            format!(
                "server/discover answered after {ms} ms, later than the {window} ms that runtime \
                 {version} waits: it had sent initialize on the same connection already"
            ),
        ));
    }
    let locked = discover.is_some_and(is_modern_result);
    let refused = |answer: &'static str, code: Option<i64>| {
        let code = code.map_or("an error".to_string(), |c| c.to_string());
        (answer == "error").then_some(code)
    };
    if let (true, Some(ms), Some(code)) = (
        locked,
        late,
        refused(start.initialize_answer, start.initialize_code),
    ) {
        out.push(problem(
            Severity::Blocker,
            &catalog::DISCOVER_ERA_LOCK,
            format!(
                "the runtime's initialize (sent at the end of its {window} ms window) got {code} \
                 after the server/discover result at {ms} ms locked the connection to \
                 2026-07-28: the server never starts in the Copilot harness; the bridge answers \
                 server/discover at once and never sends initialize upstream (C1)"
            ),
        ));
    }
    if let (true, Some(ms), Some((answer, code))) = (locked, start.discover_ms, start.era_probe)
        && let Some(code) = refused(answer, code)
    {
        let margin = window.saturating_sub(ms);
        out.push(problem(
            Severity::Warning,
            &catalog::DISCOVER_ERA_LOCK,
            format!(
                "the server locks its connection at server/discover (an initialize after it got \
                 {code}); its answer came in {ms} ms, {margin} ms inside the {window} ms window \
                 of runtime {version}: a start slower by {margin} ms never starts in the \
                 Copilot harness"
            ),
        ));
    }
    if let Some((answer, code)) = start.modern_list.filter(|(a, _)| *a != "result") {
        let got = code.map_or(answer.to_string(), |c| format!("the error {c}"));
        out.push(problem(
            Severity::Blocker,
            &catalog::LIST,
            format!(
                "on the 2026-07-28 path that runtime {version} takes after a discover result in \
                 time, tools/list (with the revision's _meta) got {got}: the Copilot harness \
                 shows no tools of this server"
            ),
        ));
    }
    if start.path == "initialize" && start.initialize_answer == "none" {
        let sent = start.initialize_sent_ms.unwrap_or(0);
        out.push(problem(
            Severity::Blocker,
            &catalog::STARTUP_TIME,
            format!(
                "no answer to initialize (sent at {sent} ms) within the {budget} ms budget of \
                 runtime {version}: it records a failure and does not start the server again \
                 in the session"
            ),
        ));
    }
    out
}

/// The start in the JSON report (docs/harness-report.schema.json, `starts`).
pub fn json(start: &Start, runtime: &Runtime) -> Value {
    json!({
        "start": start.n,
        "path": start.path,
        "discover_ms": start.discover_ms,
        "discover_answer": start.discover_answer,
        "discover_code": start.discover_code,
        "window_ms": runtime.window.as_millis() as u64,
        "initialize_sent_ms": start.initialize_sent_ms,
        "initialize_ms": start.initialize_ms,
        "initialize_answer": start.initialize_answer,
        "initialize_code": start.initialize_code,
        "budget_ms": runtime.budget.as_millis() as u64,
        "era_probe": start.era_probe.map(|(answer, code)| json!({"answer": answer, "code": code})),
    })
}

/// The start in one line of the table.
pub fn line(start: &Start, runtime: &Runtime) -> String {
    let window = runtime.window.as_millis();
    let budget = runtime.budget.as_millis();
    let code = |c: Option<i64>| c.map(|c| format!(" {c}")).unwrap_or_default();
    let discover = match start.discover_ms {
        Some(ms) => format!(
            "discover {}{} at {ms} ms (window {window} ms)",
            start.discover_answer,
            code(start.discover_code)
        ),
        None => format!("discover no answer (window {window} ms)"),
    };
    let rest = match (start.path, start.initialize_sent_ms) {
        ("initialize", Some(sent)) => match start.initialize_ms {
            Some(ms) => format!(
                "initialize sent at {sent} ms, {}{} in {ms} ms of the {budget} ms budget",
                start.initialize_answer,
                code(start.initialize_code)
            ),
            None => format!(
                "initialize sent at {sent} ms, {} within the {budget} ms budget",
                start.initialize_answer
            ),
        },
        ("2026-07-28", _) => match start.era_probe {
            Some((answer, c)) => format!(
                "the 2026-07-28 path; initialize after it (the era probe): {answer}{}",
                code(c)
            ),
            None => "the 2026-07-28 path".into(),
        },
        (path, _) => path.to_string(),
    };
    format!("start {}  {discover}; {rest}", start.n)
}
