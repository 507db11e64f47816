//! What one client does at start-up and at the first use, against one process: the Copilot
//! harness's `server/discover` first, `initialize`, `logging/setLevel` (Local, when the server
//! has logging), `notifications/initialized`, the lists with VS Code's paging (prompts and tools
//! at start, resources and templates as the pickers list them), the list changes, and the one
//! `--call` when asked. Nothing else is called.
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::catalog::{self, Check};
use super::conn::{Broken, Conn};
use super::{Problem, Severity};
use crate::copilot_runtime::Runtime;
use crate::format::Profile;
use crate::profile::{AfterDiscover, copilot_discover, initialize_params, notification};

/// VS Code has no page limit; the check stops after this many pages of one list.
pub const PAGE_CAP: usize = 100;
/// How long the check waits for list changes after the lists.
const SETTLE: Duration = Duration::from_millis(300);

/// The four lists: the label, the method, the member of the result, the capability.
pub const LISTS: [(&str, &str, &str, &str); 4] = [
    ("prompts", "prompts/list", "prompts", "prompts"),
    ("tools", "tools/list", "tools", "tools"),
    ("resources", "resources/list", "resources", "resources"),
    (
        "templates",
        "resources/templates/list",
        "resourceTemplates",
        "resources",
    ),
];

/// One full list.
#[derive(Debug, Default, Clone)]
pub struct Listed {
    pub items: Vec<Value>,
    pub pages: usize,
    /// The list was asked for although the capability was not declared.
    pub probed: bool,
}

/// The `--call` and its outcome.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub tool: String,
    pub response: Option<Value>,
    pub error: Option<String>,
    pub ms: u128,
}

/// What one profile saw.
#[derive(Debug)]
pub struct Run {
    pub profile: Profile,
    pub init: Option<Value>,
    pub lists: Vec<(&'static str, Listed)>,
    pub problems: Vec<Problem>,
    pub timings: Map<String, Value>,
    pub asked: Vec<String>,
    pub notifications: Vec<Value>,
    pub not_json: Vec<String>,
    pub stderr: Vec<String>,
    pub call: Option<CallOutcome>,
    /// Copilot: what `server/discover` got (`answer`: result, error with its `code`, or none
    /// within the wait).
    pub discover: Option<Value>,
    /// The Copilot runtime played (its window and its `initialize` budget).
    pub runtime: Runtime,
}

impl Run {
    pub fn list(&self, label: &str) -> &[Value] {
        self.lists
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, l)| l.items.as_slice())
            .unwrap_or(&[])
    }
}

/// Profile names in the report.
pub fn profile_name(p: Profile) -> &'static str {
    match p {
        Profile::Copilot => "copilot",
        _ => "local",
    }
}

fn blocker(p: Profile, check: &'static Check, message: String) -> Problem {
    Problem::new(Severity::Blocker, check, message).profile(p)
}

/// Runs the start-up of `profile` on `conn` and stops the process.
pub async fn run(
    mut conn: Conn,
    profile: Profile,
    runtime: Runtime,
    bound: Duration,
    call: Option<&(String, Value)>,
) -> Run {
    let mut run = run_failed(profile, runtime);
    steps(&mut conn, &mut run, bound, call).await;
    if profile == Profile::Copilot {
        late_discover(&mut conn, &mut run);
    }
    let stop = conn.stop(Duration::from_secs(10)).await;
    match stop {
        Some(d) => {
            run.timings
                .insert("stop_ms".into(), json!(d.as_millis() as u64));
        }
        None => run.problems.push(
            Problem::new(
                Severity::Warning,
                &catalog::STOP,
                "the process still ran 10 s after the end of its stdin; VS Code then sends \
                 SIGTERM to its tree (R7)"
                    .into(),
            )
            .profile(profile),
        ),
    }
    run.asked = std::mem::take(&mut conn.asked);
    run.notifications = std::mem::take(&mut conn.notifications);
    run.not_json = std::mem::take(&mut conn.not_json);
    run.stderr = conn.proc.stderr.snapshot();
    run
}

fn ms(since: Instant) -> Value {
    json!(since.elapsed().as_millis() as u64)
}

async fn steps(conn: &mut Conn, run: &mut Run, bound: Duration, call: Option<&(String, Value)>) {
    let p = run.profile;
    let t0 = conn.started;
    if p == Profile::Copilot && !copilot_probe(conn, run).await {
        return;
    }
    let t_init = Instant::now();
    // The Copilot runtime gives initialize its budget and then gives the server up.
    let budget = run.runtime.budget;
    let wait = if p == Profile::Copilot {
        bound.min(budget)
    } else {
        bound
    };
    let init = match conn.call("initialize", initialize_params(p), wait).await {
        Ok(r) => r,
        Err(Broken::Timeout) if p == Profile::Copilot && budget <= bound => {
            let cause = stderr_cause(conn).await;
            run.problems.push(blocker(
                p,
                &catalog::STARTUP_TIME,
                format!(
                    "no answer to initialize within the {} ms budget of the Copilot runtime {}: \
                     it records a failure and does not start the server again in the \
                     session{cause}",
                    budget.as_millis(),
                    run.runtime.version.name()
                ),
            ));
            return;
        }
        Err(e) => {
            let cause = stderr_cause(conn).await;
            run.problems.push(blocker(
                p,
                &catalog::INITIALIZE,
                format!("initialize: {e}: the server does not start{cause}"),
            ));
            return;
        }
    };
    run.timings.insert("initialize_ms".into(), ms(t_init));
    let Some(result) = init.get("result").cloned() else {
        let err = init.get("error").cloned().unwrap_or(Value::Null);
        let message = err.get("message").and_then(Value::as_str).unwrap_or("?");
        let detail = err
            .pointer("/data/detail")
            .and_then(Value::as_str)
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        let code = err.get("code").cloned().unwrap_or(Value::Null);
        let data_cause = err
            .pointer("/data/cause")
            .and_then(Value::as_str)
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        let cause = stderr_cause(conn).await;
        run.problems.push(blocker(
            p,
            &catalog::INITIALIZE,
            format!("initialize failed: {code} {message}{detail}{data_cause}{cause}"),
        ));
        return;
    };
    run.init = Some(result.clone());
    let caps = result.get("capabilities").cloned().unwrap_or_default();
    if p == Profile::Local && caps.get("logging").is_some() {
        let mut params = Map::new();
        params.insert("level".into(), json!("info"));
        // VS Code does not wait for this answer.
        let _ = conn.send_request("logging/setLevel", params).await;
    }
    if let Err(e) = conn
        .send(&notification("notifications/initialized", None))
        .await
    {
        run.problems
            .push(blocker(p, &catalog::INITIALIZE, format!("{e}")));
        return;
    }
    for (label, method, member, cap) in LISTS {
        let declared = caps.get(cap).is_some();
        // Without the tools capability VS Code never lists tools: the check asks anyway, to
        // say whether tools are hidden.
        if !declared && label != "tools" {
            continue;
        }
        let t = Instant::now();
        match list(conn, method, member, bound).await {
            Ok((mut listed, cursor_problem)) => {
                listed.probed = !declared;
                if let Some(m) = cursor_problem {
                    run.problems.push(blocker(p, &catalog::CURSOR, m));
                }
                run.timings.insert(format!("{label}_ms"), ms(t));
                run.lists.push((label, listed));
            }
            Err(e) if declared => {
                run.problems
                    .push(blocker(p, &catalog::LIST, format!("{method} failed: {e}")))
            }
            Err(_) => {}
        }
        if label == "tools" {
            run.timings.insert("ready_ms".into(), ms(t0));
        }
    }
    conn.settle(SETTLE).await;
    relist_after_changes(conn, run, bound).await;
    if let Some((tool, args)) = call {
        let t = Instant::now();
        let response = conn
            .call("tools/call", call_params(p, tool, args), bound)
            .await;
        run.call = Some(match response {
            Ok(r) => CallOutcome {
                tool: tool.clone(),
                response: Some(r),
                error: None,
                ms: t.elapsed().as_millis(),
            },
            Err(e) => CallOutcome {
                tool: tool.clone(),
                response: None,
                error: Some(e.to_string()),
                ms: t.elapsed().as_millis(),
            },
        });
        conn.settle(SETTLE).await;
        relist_after_changes(conn, run, bound).await;
    }
}

/// The Copilot CLI's probe (C1): `server/discover` first; `initialize` follows once an answer
/// came or the runtime's window passed, unless the runtime gives the server up (1.0.82 after
/// -32602). After a discover result in time runtime 1.0.102 takes the 2026-07-28 path instead
/// (the starts of starts.rs play it); this run goes on with `initialize`, the face that the
/// bridge's path and an older server show. False when the Copilot harness would not go on.
async fn copilot_probe(conn: &mut Conn, run: &mut Run) -> bool {
    let p = run.profile;
    if let Err(e) = conn.send(&copilot_discover()).await {
        let m = format!("cannot write server/discover: {e}");
        run.problems.push(blocker(p, &catalog::START, m));
        return false;
    }
    let id = conn.take_id();
    let t = Instant::now();
    let answer = match conn.response(id, run.runtime.window).await {
        Ok(a) => Some(a),
        Err(Broken::Timeout) => None,
        Err(e) => {
            run.problems.push(blocker(
                p,
                &catalog::DISCOVER_STOPS,
                format!(
                    "the server stops on the Copilot harness's first request, \
                     server/discover ({e}); the harness then records a failure for good"
                ),
            ));
            return false;
        }
    };
    run.discover = Some(match &answer {
        None => json!({"answer": "none", "waited_ms": t.elapsed().as_millis() as u64}),
        Some(a) => match a.get("error") {
            Some(e) => json!({"answer": "error", "code": e.get("code"), "ms": ms(t)}),
            None => json!({"answer": "result", "ms": ms(t)}),
        },
    });
    if run.runtime.after_discover(answer.as_ref()) == AfterDiscover::Abort {
        let m = invalid_params(
            answer.as_ref(),
            "the Copilot CLI aborts the start of the server and sends no initialize",
        );
        run.problems
            .push(blocker(p, &catalog::DISCOVER_INVALID_PARAMS, m));
        return false;
    }
    true
}

fn invalid_params(answer: Option<&Value>, then: &str) -> String {
    let message = answer
        .and_then(|a| a.pointer("/error/message"))
        .and_then(Value::as_str)
        .unwrap_or("");
    format!(
        "server/discover answered -32602 ({}): {then}; answer -32601 (method not found) \
         instead, or put the bridge in front",
        message.chars().take(160).collect::<String>()
    )
}

/// A discover answer that came after the Copilot harness had sent `initialize`. A -32602 is
/// the same blocker: whether it comes within the wait depends only on how fast the server
/// starts on the user's machine, and within it the Copilot CLI aborts.
fn late_discover(conn: &mut Conn, run: &mut Run) {
    let none = run.discover.as_ref().is_some_and(|d| d["answer"] == "none");
    let Some(late) = none.then(|| conn.stashed(0)).flatten() else {
        return;
    };
    if let Some(d) = run.discover.as_mut() {
        d["late_answer"] = json!(if late.get("error").is_some() {
            "error"
        } else {
            "result"
        });
        d["late_code"] = late.pointer("/error/code").cloned().unwrap_or(Value::Null);
    }
    if run.runtime.after_discover(Some(&late)) == AfterDiscover::Abort {
        let then = format!(
            "it came after the {} ms that the Copilot CLI waits, so here it had sent \
             initialize already; on a start within that wait it aborts the server",
            run.runtime.window.as_millis()
        );
        let m = invalid_params(Some(&late), &then);
        run.problems
            .push(blocker(run.profile, &catalog::DISCOVER_INVALID_PARAMS, m));
    }
}

/// The cause on stderr: the last warning or error line of the bridge, else the last line.
async fn stderr_cause(conn: &mut Conn) -> String {
    // The log line may come just after the response.
    let _ = conn.proc.wait_exit(Duration::from_millis(200)).await;
    let lines = conn.proc.stderr.snapshot();
    let pick = lines
        .iter()
        .rev()
        .find(|l| l.contains(": warning: ") || l.contains(": error: "))
        .or(lines.last());
    match pick {
        Some(l) => format!("; stderr: {}", l.chars().take(300).collect::<String>()),
        None => String::new(),
    }
}

/// VS Code lists again after `notifications/*/list_changed`.
async fn relist_after_changes(conn: &mut Conn, run: &mut Run, bound: Duration) {
    let changed: Vec<String> = conn
        .notifications
        .iter()
        .filter_map(|n| n.get("method").and_then(Value::as_str))
        .filter(|m| m.ends_with("/list_changed"))
        .map(str::to_string)
        .collect();
    for (label, method, member, _) in LISTS {
        let note = format!(
            "notifications/{}/list_changed",
            method.trim_end_matches("/list")
        );
        if label != "templates"
            && changed.contains(&note)
            && let Ok((listed, _)) = list(conn, method, member, bound).await
            && let Some(slot) = run.lists.iter_mut().find(|(l, _)| *l == label)
        {
            slot.1.items = listed.items;
            slot.1.pages = listed.pages;
        }
    }
    // Each change is followed once.
    conn.notifications.retain(|n| {
        !n.get("method")
            .and_then(Value::as_str)
            .is_some_and(|m| m.ends_with("/list_changed"))
    });
}

/// A full list with VS Code's paging; the second value names a cursor that VS Code would
/// mishandle (R4).
async fn list(
    conn: &mut Conn,
    method: &str,
    member: &str,
    bound: Duration,
) -> Result<(Listed, Option<String>), String> {
    let mut listed = Listed::default();
    let mut params = Map::new();
    loop {
        let r = conn
            .call(method, params.clone(), bound)
            .await
            .map_err(|e| e.to_string())?;
        let Some(result) = r.get("result") else {
            let err = r.get("error").cloned().unwrap_or(Value::Null);
            return Err(format!("the error {err}"));
        };
        listed.pages += 1;
        listed.items.extend(
            result
                .get(member)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        let Some(cursor) = result.get("nextCursor") else {
            return Ok((listed, None));
        };
        if !cursor.is_string() {
            let m = format!(
                "{method} answers nextCursor {cursor}: VS Code asks for the next page while \
                 nextCursor is present, with {{\"cursor\":{cursor}}}, for ever when the answer \
                 stays the same (R4)"
            );
            return Ok((listed, Some(m)));
        }
        if listed.pages >= PAGE_CAP {
            let m = format!(
                "{method} still has nextCursor after {PAGE_CAP} pages ({} items)",
                listed.items.len()
            );
            return Ok((listed, Some(m)));
        }
        params = Map::new();
        params.insert("cursor".into(), cursor.clone());
    }
}

/// The params of VS Code's `tools/call`: a UUID progress token and the chat's keys (Local), or
/// the token 0 (Copilot, added by the frame builder).
fn call_params(p: Profile, tool: &str, args: &Value) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("name".into(), json!(tool));
    params.insert("arguments".into(), args.clone());
    if p == Profile::Local {
        params.insert(
            "_meta".into(),
            json!({
                "progressToken": uuid::Uuid::new_v4().to_string(),
                "vscode.conversationId": uuid::Uuid::new_v4().to_string(),
                "vscode.requestId": uuid::Uuid::new_v4().to_string()
            }),
        );
    }
    params
}

/// The run of a profile whose process did not start.
pub fn run_failed(profile: Profile, runtime: Runtime) -> Run {
    Run {
        runtime,
        profile,
        init: None,
        lists: Vec::new(),
        problems: Vec::new(),
        timings: Map::new(),
        asked: Vec::new(),
        notifications: Vec::new(),
        not_json: Vec::new(),
        stderr: Vec::new(),
        call: None,
        discover: None,
    }
}
