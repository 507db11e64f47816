//! The client simulator: the high-level steps `start`, `list`, `call`, `stop` and `tool_ids`,
//! which behave like VS Code's Local harness or the Copilot harness (transcripts/README.md): their ids, key order, initialize params, start-up sequence, re-listing after a list
//! change, progress tokens (UUID strings; the integer 0), answers to the bridge's requests from
//! the script, and the stop sequence with VS Code's timers.
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::format::{ClientStep, Mode, Profile, list_method};
use crate::pattern;
use crate::profile::{copilot_discover, initialize_params, notification, request};
use crate::report::Failure;
use crate::session::{Next, Session};

mod lists;
mod modern;
pub use lists::relists_after;
use lists::{check_list, list, pages, relist, store};

/// VS Code keeps paging while `nextCursor` is present; the simulator stops at this many pages
/// and fails (R4), since VS Code would go on for ever.
const PAGE_CAP: usize = 20;
/// VS Code's stop timers after the end of stdin: the tree's SIGTERM, then the kill.
const TERM_AFTER: Duration = Duration::from_secs(10);
const KILL_AFTER: Duration = Duration::from_secs(20);
/// The bound of a stop when the transcript gives none: 2 × shutdown_grace + 2 s.
const STOP_BOUND_MS: u64 = 6000;

/// Runs one high-level step.
pub async fn run(
    s: &mut Session,
    step: ClientStep,
    opts: &Map<String, Value>,
) -> Result<(), Failure> {
    if s.setup.profile == Profile::Raw && step != ClientStep::ToolIds {
        return Err(Failure::msg(
            "high-level steps need the profile local or copilot",
        ));
    }
    let bound = s.bound(opts.get("within_ms").and_then(Value::as_u64));
    match step {
        ClientStep::Start => start(s, opts, bound).await,
        ClientStep::List => {
            let what = opts.get("value").and_then(Value::as_str).unwrap_or("tools");
            let items = list(s, what, bound).await?;
            check_list(what, &items, opts)
        }
        ClientStep::Call => call(s, opts, bound).await,
        ClientStep::Stop => stop(s, opts).await,
        ClientStep::Listen => modern::listen(s, opts, bound).await,
        ClientStep::ToolIds => tool_ids(s, opts),
    }
}

/// What a wait for a response saw besides the response.
#[derive(Default)]
struct Seen {
    progress: Vec<Value>,
    answers: Vec<Value>,
    /// Requests of the bridge that were answered, with the answer.
    bridge_requests: Vec<Value>,
}

fn next_id(s: &mut Session) -> i64 {
    let id = s.sim.next_id;
    s.sim.next_id += 1;
    id
}

/// Waits for the response to `id`, handling what VS Code handles meanwhile: progress, list
/// changes (re-listed after the step), log messages, and the bridge's requests (answered from
/// `answers` in order).
async fn await_response(
    s: &mut Session,
    id: i64,
    deadline: Instant,
    answers: &mut Vec<Value>,
    seen: &mut Seen,
) -> Result<Value, Failure> {
    let key = json!(id).to_string();
    if let Some(r) = s.sim.stash.remove(&key) {
        return Ok(r);
    }
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let f = match s.next_frame(left).await? {
            Next::Frame(f) => f,
            Next::Eof => {
                // How the bridge ended is a line of the report (runner.rs).
                return Err(Failure::msg(format!(
                    "the bridge's stdout ended before the response to {id}"
                )));
            }
            Next::Timeout => {
                return Err(Failure::msg(format!(
                    "no response to the request {id} in time"
                )));
            }
        };
        let method = f.get("method").and_then(Value::as_str).map(str::to_string);
        match (f.get("id"), method.as_deref()) {
            (Some(rid), None) if *rid == json!(id) => return Ok(f),
            (Some(rid), None) => {
                s.sim.stash.insert(rid.to_string(), f);
            }
            (None, Some("notifications/progress")) => seen.progress.push(f),
            (None, Some("notifications/tools/list_changed")) => s.sim.tools_changed = true,
            (None, Some("notifications/prompts/list_changed")) => s.sim.prompts_changed = true,
            (Some(bid), Some(m)) => {
                let bid = bid.clone();
                answer_bridge_request(s, &bid, m, &f, answers, seen).await?;
            }
            (None, Some(_)) => seen.answers.push(f),
            _ => {}
        }
    }
}

/// The next of a call's `answers` to `asked` (a request of the bridge, or an input request of
/// the 2026-07-28 path), checked against its `expect`; `what` names the question and `whose`
/// names what did not match, for the failure.
fn next_answer(
    s: &mut Session,
    answers: &mut Vec<Value>,
    asked: &Value,
    what: &str,
    whose: &str,
) -> Result<Value, Failure> {
    if answers.is_empty() {
        return Err(Failure::mismatch(
            format!("{what} and the script has no answer for it"),
            &json!("<an answer in the call's answers>"),
            asked,
        ));
    }
    let answer = answers.remove(0);
    if let Some(p) = answer.get("expect") {
        pattern::matches(p, asked, &mut s.caps)
            .map_err(|m| Failure::mismatch(format!("{whose} does not match: {m}"), p, asked))?;
    }
    Ok(answer)
}

/// The step's `expect` (if any) against `result`; `what` names the result in the failure.
fn expect_result(
    s: &mut Session,
    opts: &Map<String, Value>,
    result: &Value,
    what: &str,
) -> Result<(), Failure> {
    if let Some(p) = opts.get("expect") {
        pattern::matches(p, result, &mut s.caps)
            .map_err(|m| Failure::mismatch(format!("{what} does not match: {m}"), p, result))?;
    }
    Ok(())
}

async fn answer_bridge_request(
    s: &mut Session,
    bid: &Value,
    method: &str,
    frame: &Value,
    answers: &mut Vec<Value>,
    seen: &mut Seen,
) -> Result<(), Failure> {
    let answer = next_answer(
        s,
        answers,
        frame,
        &format!("the bridge sent {method}"),
        "the request of the bridge",
    )?;
    let mut reply = Map::new();
    reply.insert("jsonrpc".into(), json!("2.0"));
    reply.insert("id".into(), bid.clone());
    if let Some(r) = answer.get("result") {
        reply.insert("result".into(), pattern::substitute(r, &s.caps)?);
    } else if let Some(e) = answer.get("error") {
        reply.insert("error".into(), pattern::substitute(e, &s.caps)?);
    } else {
        return Err(Failure::msg("an answer needs result or error"));
    }
    seen.bridge_requests.push(frame.clone());
    s.send_frame(&Value::Object(reply)).await
}

async fn start(s: &mut Session, opts: &Map<String, Value>, bound: Duration) -> Result<(), Failure> {
    let deadline = Instant::now() + bound;
    let mut none = Vec::new();
    let mut seen = Seen::default();
    // C1: the Copilot harness asks server/discover first; directly, an answer within the
    // runtime's window takes the 2026-07-28 path, with no initialize.
    if s.setup.profile == Profile::Copilot && modern::discover(s, opts, deadline).await? {
        return modern::lists(s, opts, deadline).await;
    }
    let id = next_id(s);
    let init = request(
        s.setup.profile,
        id,
        "initialize",
        initialize_params(s.setup.profile),
    );
    s.send_frame(&init).await?;
    let r = await_response(s, id, deadline, &mut none, &mut seen).await?;
    if let Some(p) = opts.get("expect_error") {
        let err = r.get("error").cloned().unwrap_or(Value::Null);
        return pattern::matches(p, &err, &mut s.caps).map_err(|m| {
            Failure::mismatch(format!("the initialize error does not match: {m}"), p, &r)
        });
    }
    let Some(result) = r.get("result").cloned() else {
        return Err(Failure::mismatch(
            "initialize failed",
            &json!({"result":"<object>"}),
            &r,
        ));
    };
    // R1: what VS Code reads from the result.
    if !result.get("capabilities").is_some_and(Value::is_object) {
        return Err(Failure::mismatch(
            "R1: the initialize result has no capabilities object",
            &json!({"capabilities":"<object>"}),
            &result,
        ));
    }
    let info_ok = result
        .pointer("/serverInfo/name")
        .is_some_and(Value::is_string)
        && result
            .pointer("/serverInfo/version")
            .is_some_and(Value::is_string);
    if !info_ok {
        return Err(Failure::mismatch(
            "R1: serverInfo needs name and version",
            &json!({"serverInfo":{"name":"<string>","version":"<string>"}}),
            &result,
        ));
    }
    expect_result(s, opts, &result, "the initialize result")?;
    s.sim.init_result = Some(result.clone());
    let caps = result.get("capabilities").cloned().unwrap_or_default();
    // setLevel (if logging) before initialized, then the lists at once, without waiting.
    let mut level_id = None;
    if s.setup.profile == Profile::Local && caps.get("logging").is_some() {
        let id = next_id(s);
        let mut p = Map::new();
        p.insert("level".into(), json!("info"));
        let f = request(s.setup.profile, id, "logging/setLevel", p);
        s.send_frame(&f).await?;
        level_id = Some(id);
    }
    s.send_frame(&notification("notifications/initialized", None))
        .await?;
    if opts.get("lists").and_then(Value::as_bool) == Some(false) {
        return Ok(());
    }
    let mut firsts = Vec::new();
    let kinds: &[&str] = if s.setup.profile == Profile::Local {
        &["prompts", "tools"]
    } else {
        &["tools"]
    };
    for kind in kinds {
        if caps.get(*kind).is_some() {
            let id = next_id(s);
            let (method, _) = list_method(kind).unwrap_or(("tools/list", "tools"));
            let f = request(s.setup.profile, id, method, Map::new());
            s.send_frame(&f).await?;
            firsts.push((*kind, id));
        }
    }
    if let Some(id) = level_id {
        let r = await_response(s, id, deadline, &mut none, &mut seen).await?;
        let want = json!({"result":{}});
        pattern::matches(&want, &r, &mut s.caps)
            .map_err(|m| Failure::mismatch(format!("R2: logging/setLevel: {m}"), &want, &r))?;
    }
    for (kind, id) in firsts {
        let items = pages(s, kind, id, deadline, &mut seen).await?;
        store(s, kind, items);
    }
    relist(s, deadline).await
}

async fn call(s: &mut Session, opts: &Map<String, Value>, bound: Duration) -> Result<(), Failure> {
    let deadline = Instant::now() + bound;
    let name = opts
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut params = Map::new();
    params.insert("name".into(), json!(name));
    let args = pattern::substitute(opts.get("arguments").unwrap_or(&json!({})), &s.caps)?;
    params.insert("arguments".into(), args);
    // A fresh UUID token per call and the chat's keys (Local); 0 on every request (Copilot).
    let token = match (opts.get("progress_token"), s.setup.profile) {
        (Some(Value::Bool(false)), _) => None,
        (Some(t), _) => Some(t.clone()),
        (None, Profile::Copilot) => Some(json!(0)),
        (None, _) => Some(json!(uuid::Uuid::new_v4().to_string())),
    };
    let mut meta = Map::new();
    if let Some(t) = &token {
        meta.insert("progressToken".into(), t.clone());
    }
    if s.setup.profile == Profile::Local {
        meta.insert(
            "vscode.conversationId".into(),
            json!("c0ffee00-1111-4222-8333-444455556666"),
        );
        meta.insert(
            "vscode.requestId".into(),
            json!(uuid::Uuid::new_v4().to_string()),
        );
        meta.insert(
            "traceparent".into(),
            json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        );
    }
    if !meta.is_empty() || s.setup.profile == Profile::Copilot {
        params.insert("_meta".into(), Value::Object(meta));
    }
    let id = next_id(s);
    let f = modern::req(s, id, "tools/call", params.clone());
    s.send_frame(&f).await?;
    if let Some(name) = opts.get("capture_id").and_then(Value::as_str) {
        s.caps.insert(name.to_string(), json!(id));
    }
    if opts.get("no_wait").and_then(Value::as_bool) == Some(true) {
        return Ok(());
    }
    let mut answers = opts
        .get("answers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut seen = Seen::default();
    let mut r = await_response(s, id, deadline, &mut answers, &mut seen).await?;
    if s.sim.modern {
        r = modern::rounds(s, &params, r, deadline, &mut answers, &mut seen).await?;
    }
    // O4: VS Code routes progress by its token; any other token is a bridge bug.
    for p in &seen.progress {
        if p.pointer("/params/progressToken") != token.as_ref() {
            return Err(Failure::mismatch(
                "O4: progress with a token that is not the call's",
                &json!({"params":{"progressToken":token}}),
                p,
            ));
        }
    }
    if let Some(n) = opts.get("progress").and_then(Value::as_u64)
        && seen.progress.len() as u64 != n
    {
        return Err(Failure::mismatch(
            format!(
                "O4: expected {n} progress notifications before the result, got {}",
                seen.progress.len()
            ),
            &json!(n),
            &json!(seen.progress),
        ));
    }
    if !answers.is_empty() {
        let msg = format!(
            "{} answers of the script were not asked for before the response",
            answers.len()
        );
        return Err(Failure::mismatch(msg, &json!(answers), &r));
    }
    // O6 and the quirk Q6 of docs/rules.md: a list change must come before the result, else VS Code's
    // next turn uses the stale list.
    if opts.get("expect_list_changed").and_then(Value::as_bool) == Some(true)
        && !s.sim.tools_changed
    {
        return Err(Failure::mismatch(
            "O6: no notifications/tools/list_changed before the result (VS Code keeps the stale list)",
            &json!({"method":"notifications/tools/list_changed"}),
            &r,
        ));
    }
    if let Some(p) = opts.get("expect_error") {
        let err = r.get("error").cloned().unwrap_or(Value::Null);
        pattern::matches(p, &err, &mut s.caps).map_err(|m| {
            Failure::mismatch(format!("the error of the call does not match: {m}"), p, &r)
        })?;
        if !relists_after(&err) {
            // The process is gone: VS Code marks the server stopped and lists nothing more.
            s.sim.tools_changed = false;
            s.sim.prompts_changed = false;
            return Ok(());
        }
        return relist(s, deadline).await;
    }
    if let Some(e) = r.get("error") {
        // With -32042 and data.elicitations, VS Code opens every URL and retries.
        if e.get("code") == Some(&json!(-32042)) || e.pointer("/data/elicitations").is_some() {
            return Err(Failure::mismatch(
                "quirk -32042: VS Code would open the URLs of data.elicitations",
                &json!({"error":{"code":-32603,"data":"<absent>"}}),
                &r,
            ));
        }
        return Err(Failure::mismatch(
            format!("the call of {name} failed"),
            &json!({"result":"<object>"}),
            &r,
        ));
    }
    let result = r.get("result").cloned().unwrap_or(Value::Null);
    if let Some(want) = opts.get("expect_text") {
        let text: String = result
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|c| c.get("type") == Some(&json!("text")))
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("");
        let want = pattern::substitute(want, &s.caps)?;
        pattern::matches(&want, &json!(text), &mut s.caps).map_err(|m| {
            Failure::mismatch(
                format!("the text of the result does not match: {m}"),
                &want,
                &json!(text),
            )
        })?;
    }
    expect_result(s, opts, &result, "the result")?;
    relist(s, deadline).await
}

/// VS Code's stop: close stdin; at 10 s SIGTERM to the tree; at 20 s the kill. The bridge
/// must be gone, with its code, within the bound, before the first signal (R7).
async fn stop(s: &mut Session, opts: &Map<String, Value>) -> Result<(), Failure> {
    let code = opts
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(0);
    let within = Duration::from_millis(
        opts.get("within_ms")
            .and_then(Value::as_u64)
            .unwrap_or(STOP_BOUND_MS),
    );
    let timers = opts.get("timers").and_then(Value::as_bool).unwrap_or(true);
    s.note("stop: close stdin".into());
    s.bridge.close_stdin();
    let t0 = Instant::now();
    if s.bridge.wait_exit(within).await.is_none() {
        if timers {
            s.bridge
                .wait_exit(TERM_AFTER.saturating_sub(t0.elapsed()))
                .await;
            if s.bridge.exit.is_none() {
                s.note("stop: VS Code sends SIGTERM to the tree (10 s)".into());
                s.bridge.signal("TERM", true);
                s.bridge
                    .wait_exit(KILL_AFTER.saturating_sub(t0.elapsed()))
                    .await;
            }
            if s.bridge.exit.is_none() {
                s.note("stop: VS Code kills the tree (20 s)".into());
                s.bridge.signal("KILL", true);
            }
        }
        return Err(Failure::msg(format!(
            "R7: the bridge did not stop within {} ms after the end of stdin",
            within.as_millis()
        )));
    }
    crate::exit::expect_exit(s, Some(code), Duration::ZERO).await
}

fn tool_ids(s: &mut Session, opts: &Map<String, Value>) -> Result<(), Failure> {
    let info = s
        .sim
        .init_result
        .as_ref()
        .and_then(|r| r.get("serverInfo"))
        .cloned()
        .unwrap_or_default();
    let instance = opts.get("instance").and_then(Value::as_u64).unwrap_or(1) as usize;
    let prefix = crate::vscode::prefix(&crate::vscode::preferred_name(&info), instance);
    let ids: HashMap<String, String> = s
        .sim
        .tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(|n| (n.to_string(), crate::vscode::tool_id(&prefix, n)))
        .collect();
    if let Some(want) = opts.get("value").and_then(Value::as_object) {
        for (tool, id) in want {
            let got = ids.get(tool).cloned();
            if got.as_deref() != id.as_str() {
                return Err(Failure::mismatch(
                    format!("VS Code's id of the tool {tool}"),
                    id,
                    &json!(got),
                ));
            }
        }
    }
    if let Some(want) = opts.get("omitted").and_then(Value::as_array) {
        let omitted = crate::vscode::omitted_tools(&s.sim.tools);
        let mut names: Vec<&str> = omitted.iter().map(|(n, _)| n.as_str()).collect();
        let mut w: Vec<&str> = want.iter().filter_map(Value::as_str).collect();
        names.sort();
        w.sort();
        if names != w {
            let detail: Vec<String> = omitted.iter().map(|(n, r)| format!("{n}: {r}")).collect();
            return Err(Failure::mismatch(
                "R6 (a): the tools that VS Code would omit",
                &json!(w),
                &json!(detail),
            ));
        }
    }
    Ok(())
}
