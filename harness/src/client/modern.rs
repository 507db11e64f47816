//! The Copilot runtime's own 2026-07-28 path (runtime 1.0.102 and later), for a server that the
//! harness checks directly (`"direct": true`): when `server/discover` is answered within the
//! runtime's window, the runtime sends no `initialize`; each request carries the envelope of
//! the revision on `_meta` (`copilot_runtime::modern_request`), a call answers its input
//! rounds (`resultType: "input_required"`) by retrying with `inputResponses` and the
//! `requestState`, and list changes come on a `subscriptions/listen` stream
//! (docs/harness.md, "The Copilot runtime's 2026-07-28 path").
use std::collections::VecDeque;

use super::*;
use crate::copilot_runtime::{Runtime, modern_request};
use crate::profile::AfterDiscover;

/// A request of the simulator: the runtime's 2026-07-28 form after a modern start, else the
/// profile's own.
pub(super) fn req(s: &Session, id: i64, method: &str, params: Map<String, Value>) -> Value {
    if s.sim.modern {
        modern_request(id, method, params)
    } else {
        request(s.setup.profile, id, method, params)
    }
}

/// The Copilot harness's first request, `server/discover` (id 0). Through the bridge its
/// answer must be -32601 (C1). Directly, the runtime's choice decides: true when it takes the
/// 2026-07-28 path (a discover result within the window); false when it goes on with
/// `initialize` (an error, or no answer within the window).
pub(super) async fn discover(
    s: &mut Session,
    opts: &Map<String, Value>,
    deadline: Instant,
) -> Result<bool, Failure> {
    s.send_frame(&copilot_discover()).await?;
    s.sim.next_id = s.sim.next_id.max(1);
    let mut none = Vec::new();
    let mut seen = Seen::default();
    if !s.setup.direct {
        let r = await_response(s, 0, deadline, &mut none, &mut seen).await?;
        let want = json!({"id":0,"error":{"code":-32601}});
        return pattern::matches(&want, &r, &mut s.caps)
            .map(|()| false)
            .map_err(|m| {
                Failure::mismatch(
                    format!("C1: server/discover must get -32601: {m}"),
                    &want,
                    &r,
                )
            });
    }
    let runtime = Runtime::default();
    let window = (Instant::now() + runtime.window).min(deadline);
    let answer = match await_response(s, 0, window, &mut none, &mut seen).await {
        Ok(r) => Some(r),
        // No answer within the window: the runtime sends `initialize` on the same connection.
        Err(_) if Instant::now() >= window => None,
        Err(e) => return Err(e),
    };
    if runtime.after_discover(answer.as_ref()) != AfterDiscover::Modern {
        return Ok(false);
    }
    let result = answer
        .as_ref()
        .and_then(|a| a.get("result"))
        .cloned()
        .unwrap_or_default();
    expect_result(s, opts, &result, "the server/discover result")?;
    s.sim.modern = true;
    s.sim.init_result = Some(result);
    Ok(true)
}

/// The lists after a modern start: the tools (the Copilot harness lists nothing else), each
/// request with the envelope, then the lists again after any list change.
pub(super) async fn lists(
    s: &mut Session,
    opts: &Map<String, Value>,
    deadline: Instant,
) -> Result<(), Failure> {
    if opts.get("lists").and_then(Value::as_bool) == Some(false) {
        return Ok(());
    }
    let declared = s
        .sim
        .init_result
        .as_ref()
        .is_some_and(|r| r.pointer("/capabilities/tools").is_some());
    if declared {
        let bound = deadline.saturating_duration_since(Instant::now());
        list(s, "tools", bound).await?;
    }
    relist(s, deadline).await
}

/// Answers the input rounds of a call: while its result is `input_required`, each input
/// request gets the next answer of the script (its `expect` matched against the input
/// request), and the call goes again with `inputResponses` and the `requestState` as given.
/// Returns the final response.
pub(super) async fn rounds(
    s: &mut Session,
    params: &Map<String, Value>,
    mut response: Value,
    deadline: Instant,
    answers: &mut Vec<Value>,
    seen: &mut Seen,
) -> Result<Value, Failure> {
    for _ in 0..ROUND_CAP {
        let Some(result) = response.get("result").filter(|r| is_input_required(r)) else {
            return Ok(response);
        };
        let result = result.clone();
        let mut responses = Map::new();
        let requests = result.get("inputRequests").and_then(Value::as_object);
        for (key, input) in requests.into_iter().flatten() {
            responses.insert(key.clone(), input_answer(s, key, input, answers)?);
        }
        let mut again = params.clone();
        again.insert("inputResponses".into(), Value::Object(responses));
        match result.get("requestState") {
            Some(state) => again.insert("requestState".into(), state.clone()),
            None => again.remove("requestState"),
        };
        let id = next_id(s);
        s.send_frame(&req(s, id, "tools/call", again)).await?;
        response = await_response(s, id, deadline, &mut Vec::new(), seen).await?;
    }
    Err(Failure::msg(format!(
        "the call still asked for input after {ROUND_CAP} rounds"
    )))
}

/// The runtime gives up a call after this many input rounds.
const ROUND_CAP: usize = 16;

fn is_input_required(result: &Value) -> bool {
    result.get("resultType") == Some(&json!("input_required"))
}

/// The script's next answer to the input request `key`: its `result` (an input response is
/// always a result; the runtime declines a form in the result itself).
fn input_answer(
    s: &mut Session,
    key: &str,
    input: &Value,
    answers: &mut Vec<Value>,
) -> Result<Value, Failure> {
    let answer = next_answer(
        s,
        answers,
        input,
        &format!("the server asked for the input {key}"),
        &format!("the input request {key}"),
    )?;
    let result = answer
        .get("result")
        .ok_or_else(|| Failure::msg("an answer to an input request needs a result"))?;
    Ok(pattern::substitute(result, &s.caps)?)
}

/// `{"listen":{…filter…}}`: the runtime's `subscriptions/listen` with the notifications it
/// opts in to; the step ends with the server's acknowledgment (its `expect` matched against
/// the acknowledgment's params). The stream stays open: its notifications reach the later
/// steps (a list change makes the simulator list again), its result comes at the end.
pub(super) async fn listen(
    s: &mut Session,
    opts: &Map<String, Value>,
    bound: Duration,
) -> Result<(), Failure> {
    if !s.sim.modern {
        return Err(Failure::msg(
            "listen needs the 2026-07-28 path (start a server directly that answers server/discover)",
        ));
    }
    let deadline = Instant::now() + bound;
    let mut params = Map::new();
    let filter = pattern::substitute(opts.get("value").unwrap_or(&json!({})), &s.caps)?;
    params.insert("notifications".into(), filter);
    let id = next_id(s);
    s.send_frame(&req(s, id, "subscriptions/listen", params))
        .await?;
    if let Some(name) = opts.get("capture_id").and_then(Value::as_str) {
        s.caps.insert(name.to_string(), json!(id));
    }
    let mut other = VecDeque::new();
    let ack = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let f = s.next_frame(left).await?.frame(bound)?;
        if f.get("method") == Some(&json!("notifications/subscriptions/acknowledged")) {
            break f;
        }
        if f.get("id") == Some(&json!(id)) {
            return Err(Failure::mismatch(
                "subscriptions/listen was answered without an acknowledgment",
                &json!({"method":"notifications/subscriptions/acknowledged"}),
                &f,
            ));
        }
        other.push_back(f);
    };
    // What came before the acknowledgment is for the next steps, in its order.
    other.append(&mut s.pending);
    s.pending = other;
    let got = ack.get("params").cloned().unwrap_or_default();
    if let Some(p) = opts.get("expect") {
        pattern::matches(p, &got, &mut s.caps).map_err(|m| {
            Failure::mismatch(format!("the acknowledgment does not match: {m}"), p, &got)
        })?;
    }
    Ok(())
}
