#![allow(clippy::unwrap_used)] // a test fails by its panic
//! Whole input rounds of one original request, driven by a tiny stand-in for the I/O layer
//! (`front::rounds` is the real one):
//! how the pure rules fit together (R8, O1, O2, §3.1 loop, §3.7 order of the complete
//! notifications before the response).

use mcp_bridge_vscode::front::client_requests::request_frame;
use mcp_bridge_vscode::input::answers::{ClientAnswer, collect_answers, retry_params_for};
use mcp_bridge_vscode::input::check::ClientCaps;
use mcp_bridge_vscode::input::complete::{ElicitationIds, UrlSteps, elicitation_complete};
use mcp_bridge_vscode::input::parse::{RoundCounter, is_input_required, parse_input_required};
use mcp_bridge_vscode::input::route::{Route, plan_round};
use mcp_bridge_vscode::input::state::{RefusedState, is_refused_state, refused_state_response};
use serde_json::{Value, json};

const VSCODE: ClientCaps = ClientCaps {
    form: true,
    url: true,
    sampling: true,
    sampling_tools: false,
    roots: true,
};

/// What the stand-in wrote to VS Code, in order.
#[derive(Default)]
struct Out {
    frames: Vec<Value>,
    upstream_params: Vec<Value>,
}

/// Run one original request: `upstream` answers each round's params; `client` answers each
/// question (by its route). Returns the frames for VS Code (requests of the bridge, complete
/// notifications, and the final response last).
fn run(
    original: Value,
    mut upstream: impl FnMut(&Value) -> Result<Value, Value>,
    mut client: impl FnMut(&Route, &Value) -> ClientAnswer,
    ids: &mut u64,
    eids: &mut ElicitationIds,
) -> Out {
    let mut out = Out::default();
    let mut steps = UrlSteps::new();
    let mut rounds = RoundCounter::new();
    let mut params = original.clone();
    let mut carried_state = false;
    let response = loop {
        out.upstream_params.push(params.clone());
        let raw = match upstream(&params) {
            Ok(r) => r,
            Err(e) if is_refused_state(carried_state, &e) => {
                match refused_state_response("tools/call", &e) {
                    RefusedState::Result(r) => break json!({"result": r}),
                    RefusedState::Error(e) => break json!({"error": e}),
                }
            }
            Err(e) => break json!({"error": e}),
        };
        for id in steps.observe(&raw) {
            out.frames.push(elicitation_complete(&id));
        }
        if !is_input_required(&raw) {
            break json!({"result": raw});
        }
        if let Err(e) = rounds.input_required() {
            break json!({"error": e.to_error_object()});
        }
        let parsed = match parse_input_required(&raw) {
            Ok(p) => p,
            Err(e) => break json!({"error": e.to_error_object()}),
        };
        let plan = match plan_round(&parsed, &VSCODE, &mut steps, eids) {
            Ok(p) => p,
            Err(e) => break json!({"error": e.to_error_object()}),
        };
        for q in &plan.questions {
            *ids += 1;
            out.frames.push(request_frame(
                &format!("b-{ids}"),
                q.method(),
                q.params.clone(),
            ));
        }
        // The client answers in reverse order; the answers keep the order of the questions.
        let mut answers = vec![ClientAnswer::BadLine; plan.questions.len()];
        for (i, q) in plan.questions.iter().enumerate().rev() {
            answers[i] = client(&q.route, q.params.as_ref().unwrap_or(&Value::Null));
        }
        match collect_answers(&plan, &answers, &mut steps) {
            Ok(c) => {
                params = retry_params_for(&original, &plan, &c);
                carried_state = plan.request_state.is_some();
            }
            Err(f) => break json!({"error": f.to_error_object()}),
        }
    };
    for id in steps.finish() {
        out.frames.push(elicitation_complete(&id));
    }
    out.frames.push(response);
    out
}

/// [`run`] as the first request of a connection: the ids start anew.
fn run_alone(
    original: Value,
    upstream: impl FnMut(&Value) -> Result<Value, Value>,
    client: impl FnMut(&Route, &Value) -> ClientAnswer,
) -> Out {
    run(
        original,
        upstream,
        client,
        &mut 0,
        &mut ElicitationIds::new(),
    )
}

fn url_round(url: &str, state: &str) -> Value {
    json!({"resultType": "input_required", "requestState": state, "inputRequests": {
        "auth": {"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": url}}}})
}

fn methods(out: &Out) -> Vec<String> {
    out.frames
        .iter()
        .map(|f| {
            f.get("method")
                .and_then(Value::as_str)
                .unwrap_or("response")
                .to_owned()
        })
        .collect()
}

#[test]
fn o1_ask_url_twice_continue_form_then_complete_before_the_response() {
    let mut n = 0;
    let upstream = |_: &Value| {
        n += 1;
        Ok(match n {
            1 | 2 => url_round("https://example.com/auth", "s"),
            _ => json!({"content": [{"type": "text", "text": "url: accept"}]}),
        })
    };
    let client = |route: &Route, _: &Value| match route {
        Route::UrlStep { .. } => ClientAnswer::Result(json!({"action": "accept"})),
        Route::UrlContinue { .. } => {
            ClientAnswer::Result(json!({"action": "accept", "content": {"continue": "Continue"}}))
        }
        other => panic!("unexpected {other:?}"),
    };
    let out = run_alone(
        json!({"name": "ask_url_twice", "arguments": {}}),
        upstream,
        client,
    );
    assert_eq!(
        methods(&out),
        [
            "elicitation/create",
            "elicitation/create",
            "notifications/elicitation/complete",
            "response"
        ]
    );
    assert_eq!(out.frames[0]["id"], "b-1");
    assert_eq!(out.frames[0]["params"]["elicitationId"], "elicitation-1");
    assert_eq!(
        out.frames[1]["params"]["message"],
        "Complete the step in the web browser. Then select Continue."
    );
    assert_eq!(out.frames[2]["params"]["elicitationId"], "elicitation-1");
    assert_eq!(
        out.upstream_params[2]["inputResponses"],
        json!({"auth": {"action": "accept"}})
    );
    assert_eq!(out.upstream_params[2]["requestState"], "s");
}

#[test]
fn r8_state_only_rounds_hit_the_round_limit_after_ten_upstream_calls() {
    let mut calls = 0;
    let upstream = |_: &Value| {
        calls += 1;
        Ok(json!({"resultType": "input_required", "requestState": "again"}))
    };
    let out = run_alone(json!({"name": "loop"}), upstream, |_, _| unreachable!());
    assert_eq!(calls, 10);
    assert_eq!(out.frames.len(), 1);
    assert_eq!(out.frames[0]["error"]["data"]["cause"], "too_many_rounds");
    assert_eq!(
        out.upstream_params[1],
        json!({"name": "loop", "requestState": "again"})
    );
}

#[test]
fn r8_refused_state_after_a_form_gives_an_error_result() {
    let mut n = 0;
    let upstream = |_: &Value| {
        n += 1;
        if n == 1 {
            Ok(
                json!({"resultType": "input_required", "requestState": "s-1", "inputRequests": {
                "name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}),
            )
        } else {
            Err(
                json!({"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}}),
            )
        }
    };
    let out = run_alone(json!({"name": "ask_form"}), upstream, |_, _| {
        ClientAnswer::Result(json!({"action": "accept", "content": {"name": "Bo"}}))
    });
    let last = out.frames.last().unwrap();
    assert_eq!(last["result"]["isError"], true);
}

#[test]
fn o1_accepted_url_completes_when_a_later_answer_fails_the_call() {
    let upstream = |_: &Value| {
        Ok(json!({"resultType": "input_required", "inputRequests": {
            "auth": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "http://localhost:8080/cb"}},
            "model": {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}}}}))
    };
    let refusal =
        json!({"code": -32000, "message": "The user refused the request.", "data": {"x": 1}});
    let r2 = refusal.clone();
    let client = move |route: &Route, _: &Value| match route {
        Route::UrlStep { .. } => ClientAnswer::Result(json!({"action": "accept"})),
        _ => ClientAnswer::Error(r2.clone()),
    };
    let out = run_alone(json!({"name": "multi"}), upstream, client);
    assert_eq!(
        methods(&out),
        [
            "elicitation/create",
            "sampling/createMessage",
            "notifications/elicitation/complete",
            "response"
        ]
    );
    // O2: the client's error reaches the original request unchanged.
    assert_eq!(out.frames[3]["error"], refusal);
    assert_eq!(out.upstream_params.len(), 1);
}

#[test]
fn r8_ids_continue_across_requests_of_a_connection() {
    let mut ids = 0;
    let mut eids = ElicitationIds::new();
    for expected in ["b-1", "b-2"] {
        let mut n = 0;
        let upstream = |_: &Value| {
            n += 1;
            Ok(if n == 1 {
                url_round("https://example.com/auth", "s")
            } else {
                json!({"content": []})
            })
        };
        let out = run(
            json!({}),
            upstream,
            |_, _| ClientAnswer::Result(json!({"action": "decline"})),
            &mut ids,
            &mut eids,
        );
        assert_eq!(out.frames[0]["id"], expected);
        // Declined: no complete notification.
        assert_eq!(methods(&out), ["elicitation/create", "response"]);
    }
    assert_eq!(eids.next_id(), "elicitation-3");
}

#[test]
fn r8_a_bad_round_sends_nothing_to_the_client() {
    let upstream = |_: &Value| {
        let map: serde_json::Map<String, Value> = (0..17)
            .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
            .collect();
        Ok(json!({"resultType": "input_required", "inputRequests": map}))
    };
    let out = run_alone(json!({}), upstream, |_, _| unreachable!());
    assert_eq!(methods(&out), ["response"]);
    assert_eq!(
        out.frames[0]["error"]["data"],
        json!({"cause": "too_many_input_requests", "detail": "17 input requests in one round, limit: 16"})
    );
}
