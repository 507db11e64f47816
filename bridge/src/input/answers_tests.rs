//! Unit tests of the shaping and collection of VS Code's answers (R8).
use super::*;
use crate::input::check::ALL;
use crate::input::complete::ElicitationIds;
use crate::input::parse::parse_input_required;
use crate::input::route::plan_round;

fn plan_of(result: Value, steps: &mut UrlSteps, eids: &mut ElicitationIds) -> RoundPlan {
    plan_round(&parse_input_required(&result).unwrap(), &ALL, steps, eids).unwrap()
}
fn one(req: Value) -> (RoundPlan, UrlSteps) {
    let mut steps = UrlSteps::new();
    let plan = plan_of(
        json!({"resultType": "input_required", "inputRequests": {"profile": req}}),
        &mut steps,
        &mut ElicitationIds::new(),
    );
    (plan, steps)
}
fn profile_form() -> Value {
    json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Tell us about you",
        "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "maximum": 150},
            "color": {"type": "string", "enum": ["red", "blue"]}},
            "required": ["name"]}}})
}
fn answer(plan: &RoundPlan, a: ClientAnswer) -> Result<Shaped, RoundFailure> {
    shape_answer(&plan.questions[0], &a)
}
fn detail(r: Result<Shaped, RoundFailure>) -> String {
    match r {
        Err(RoundFailure::Bridge(e)) => {
            assert_eq!(e.cause, Cause::InvalidClientAnswer);
            e.detail
        }
        other => panic!("not a bridge failure: {other:?}"),
    }
}

/// O2, O3: the client's error passes unchanged; a line that is not a message fails.
fn error_passes_and_bad_line_fails(plan: &RoundPlan, err: Value) {
    assert_eq!(
        answer(plan, ClientAnswer::Error(err.clone())),
        Err(RoundFailure::Client(err))
    );
    assert_eq!(
        detail(answer(plan, ClientAnswer::BadLine)),
        "input request 'profile': the answer of the client is not a valid message"
    );
}

#[test]
fn o1_form_accept_passes_content_exactly() {
    let (plan, _) = one(profile_form());
    let content = json!({"name": "Bo", "age": 7, "color": "red"});
    let s = answer(
        &plan,
        ClientAnswer::Result(json!({"action": "accept", "content": content, "_meta": {"x": 1}})),
    )
    .unwrap();
    assert_eq!(s.response, json!({"action": "accept", "content": content}));
}

#[test]
fn o1_decline_and_cancel_carry_no_content() {
    let (plan, _) = one(profile_form());
    for a in ["decline", "cancel"] {
        let s = answer(
            &plan,
            ClientAnswer::Result(json!({"action": a, "content": {"name": "x"}})),
        )
        .unwrap();
        assert_eq!(s.response, json!({"action": a}));
    }
}

#[test]
fn o1_client_error_or_bad_line_becomes_cancel() {
    let (plan, _) = one(profile_form());
    for a in [
        ClientAnswer::Error(json!({"code": -32603, "message": "x"})),
        ClientAnswer::BadLine,
    ] {
        assert_eq!(
            answer(&plan, a).unwrap().response,
            json!({"action": "cancel"})
        );
    }
}

#[test]
fn quirk_accepted_content_is_validated_against_the_requested_schema() {
    let (plan, _) = one(profile_form());
    let invalid =
        "input request 'profile': the accepted content is not valid against the requestedSchema";
    for content in [
        Some(json!({"name": 7})),
        Some(json!({"age": 3})),
        None,
        Some(json!({"name": ""})),
        Some(json!({"name": "Bo", "age": "x"})),
        Some(json!({"name": "Bo", "age": 151})),
        Some(json!({"name": "Bo", "color": "green"})),
    ] {
        let mut r = json!({"action": "accept"});
        if let Some(c) = content {
            r["content"] = c;
        }
        assert_eq!(detail(answer(&plan, ClientAnswer::Result(r))), invalid);
    }
    assert_eq!(
        detail(answer(
            &plan,
            ClientAnswer::Result(json!({"action": "maybe"}))
        )),
        "input request 'profile': the elicitation result does not have the shape of the schema"
    );
    assert_eq!(
        detail(answer(
            &plan,
            ClientAnswer::Result(json!({"action": "accept", "content": [1]}))
        )),
        "input request 'profile': the elicitation result does not have the shape of the schema"
    );
}

#[test]
fn quirk_choice_form_accept_gives_empty_content() {
    let (plan, _) = one(
        json!({"method": "elicitation/create", "params": {"message": "Delete the file?", "requestedSchema": {"type": "object", "properties": {}}}}),
    );
    let s = answer(
        &plan,
        ClientAnswer::Result(json!({"action": "accept", "content": {"continue": "Continue"}})),
    )
    .unwrap();
    assert_eq!(s.response, json!({"action": "accept", "content": {}}));
    let s = answer(&plan, ClientAnswer::Result(json!({"action": "decline"}))).unwrap();
    assert_eq!(s.response, json!({"action": "decline"}));
}

#[test]
fn o1_url_accept_has_no_content_and_marks_the_step() {
    let (plan, mut steps) = one(
        json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://example.com/auth"}}),
    );
    let s = answer(
        &plan,
        ClientAnswer::Result(json!({"action": "accept", "content": {"x": "y"}})),
    )
    .unwrap();
    assert_eq!(s.response, json!({"action": "accept"}));
    let id = plan.questions[0].params.as_ref().unwrap()["elicitationId"].clone();
    let id = id.as_str().unwrap();
    assert_eq!(s.accepted_step.as_deref(), Some(id));
    let c = collect_answers(
        &plan,
        &[ClientAnswer::Result(json!({"action": "accept"}))],
        &mut steps,
    )
    .unwrap();
    assert_eq!(
        c.input_responses,
        json!({"profile": {"action": "accept"}})
            .as_object()
            .unwrap()
            .clone()
    );
    assert!(steps.steps()[0].accepted);
    assert_eq!(steps.finish(), [id]);
}

#[test]
fn o1_continue_form_answers_map_to_the_url_answer() {
    let mut steps = UrlSteps::new();
    let mut eids = ElicitationIds::new();
    let r = json!({"resultType": "input_required", "inputRequests": {"auth": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://example.com/auth"}}}});
    let first = plan_of(r.clone(), &mut steps, &mut eids);
    collect_answers(
        &first,
        &[ClientAnswer::Result(json!({"action": "accept"}))],
        &mut steps,
    )
    .unwrap();
    assert!(steps.observe(&r).is_empty());
    let second = plan_of(r, &mut steps, &mut eids);
    assert!(matches!(
        second.questions[0].route,
        Route::UrlContinue { .. }
    ));
    let ok = |a: ClientAnswer| shape_answer(&second.questions[0], &a).unwrap().response;
    assert_eq!(
        ok(ClientAnswer::Result(
            json!({"action": "accept", "content": {"continue": "Continue"}})
        )),
        json!({"action": "accept"})
    );
    assert_eq!(
        ok(ClientAnswer::Result(json!({"action": "decline"}))),
        json!({"action": "decline"})
    );
    assert_eq!(
        ok(ClientAnswer::Result(json!({"action": "cancel"}))),
        json!({"action": "cancel"})
    );
    assert_eq!(ok(ClientAnswer::BadLine), json!({"action": "cancel"}));
    assert_eq!(
        ok(ClientAnswer::Error(json!({"code": 1, "message": "m"}))),
        json!({"action": "cancel"})
    );
}

fn sampling() -> Value {
    json!({"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 9}})
}

#[test]
fn o2_sampling_result_passes_raw() {
    let (plan, _) = one(sampling());
    let r = json!({"role": "assistant", "content": {"type": "text", "text": "Hello!"}, "model": "gpt", "stopReason": "endTurn", "_meta": {"k": 1}, "extra": [1]});
    assert_eq!(
        answer(&plan, ClientAnswer::Result(r.clone()))
            .unwrap()
            .response,
        r
    );
}

#[test]
fn o2_sampling_error_passes_unchanged_and_bad_answers_fail() {
    let (plan, _) = one(sampling());
    let err = json!({"code": -32000, "message": "The user refused the request.", "data": {"x": 1}});
    error_passes_and_bad_line_fails(&plan, err);
    assert_eq!(
        detail(answer(
            &plan,
            ClientAnswer::Result(json!({"role": "assistant"}))
        )),
        "input request 'profile': the sampling result does not have the shape of the schema"
    );
}

#[test]
fn o3_only_file_roots_go_upstream() {
    let (plan, mut steps) = one(json!({"method": "roots/list"}));
    let r = json!({"roots": [
        {"uri": "file:///c%3A/ws", "name": "ws", "_meta": {"k": 1}},
        {"uri": "vscode-remote://ssh/x"},
        {"uri": "https://example.com/"},
        {"uri": "FILE:///upper"},
        {"uri": "file:///b"}], "_meta": {"m": 2}});
    let s = answer(&plan, ClientAnswer::Result(r)).unwrap();
    assert_eq!(
        s.response,
        json!({"roots": [{"uri": "file:///c%3A/ws", "name": "ws", "_meta": {"k": 1}}, {"uri": "file:///b"}], "_meta": {"m": 2}})
    );
    assert_eq!(
        s.dropped_roots,
        [
            "vscode-remote://ssh/x",
            "https://example.com/",
            "FILE:///upper"
        ]
    );
    let c = collect_answers(
        &plan,
        &[ClientAnswer::Result(json!({"roots": [{"uri": "x:y"}]}))],
        &mut steps,
    )
    .unwrap();
    assert_eq!(c.input_responses["profile"], json!({"roots": []}));
    assert_eq!(c.dropped_roots, [("profile".to_owned(), "x:y".to_owned())]);
}

#[test]
fn o3_roots_error_passes_and_bad_answers_fail() {
    let (plan, _) = one(json!({"method": "roots/list"}));
    let err = json!({"code": -32603, "message": "no"});
    error_passes_and_bad_line_fails(&plan, err);
    assert_eq!(
        detail(answer(
            &plan,
            ClientAnswer::Result(json!({"roots": [{"name": "x"}]}))
        )),
        "input request 'profile': the roots result does not have the shape of the schema"
    );
}

#[test]
fn r8_input_responses_follow_the_upstream_order_with_presets() {
    let mut steps = UrlSteps::new();
    let mut eids = ElicitationIds::new();
    let r = json!({"resultType": "input_required", "requestState": "s-1", "inputRequests": {
        "where": {"method": "roots/list"},
        "bad": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "file:///etc/passwd"}},
        "profile": profile_form()}});
    let plan = plan_of(r, &mut steps, &mut eids);
    assert_eq!(plan.questions.len(), 2);
    // Answered in reverse order by the client: the order of the slots stays.
    let c = collect_answers(
        &plan,
        &[
            ClientAnswer::Result(json!({"roots": []})),
            ClientAnswer::Result(json!({"action": "accept", "content": {"name": "Bo"}})),
        ],
        &mut steps,
    )
    .unwrap();
    let keys: Vec<_> = c.input_responses.keys().cloned().collect();
    assert_eq!(keys, ["where", "bad", "profile"]);
    assert_eq!(c.input_responses["bad"], json!({"action": "decline"}));
    let original = json!({"name": "multi", "arguments": {"a": 1}, "inputResponses": {"old": 1}, "requestState": "old"});
    let retry = retry_params_for(&original, &plan, &c);
    assert_eq!(
        retry.to_string(),
        r#"{"name":"multi","arguments":{"a":1},"inputResponses":{"where":{"roots":[]},"bad":{"action":"decline"},"profile":{"action":"accept","content":{"name":"Bo"}}},"requestState":"s-1"}"#
    );
}

#[test]
fn r8_a_failing_answer_still_marks_accepted_urls() {
    let mut steps = UrlSteps::new();
    let mut eids = ElicitationIds::new();
    let r = json!({"resultType": "input_required", "inputRequests": {
        "model": sampling(),
        "auth": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://example.com/auth"}}}});
    let plan = plan_of(r, &mut steps, &mut eids);
    let err = json!({"code": -32000, "message": "The user refused the request."});
    let out = collect_answers(
        &plan,
        &[
            ClientAnswer::Error(err.clone()),
            ClientAnswer::Result(json!({"action": "accept"})),
        ],
        &mut steps,
    );
    assert_eq!(out, Err(RoundFailure::Client(err)));
    let id = steps.steps()[0].elicitation_id.clone();
    assert_eq!(steps.finish(), [id]);
}

#[test]
fn r8_retry_params() {
    let responses = json!({"k": {"action": "cancel"}})
        .as_object()
        .unwrap()
        .clone();
    // State-only round: no inputResponses.
    assert_eq!(
        retry_params(
            &json!({"name": "t", "requestState": "a", "inputResponses": {}}),
            None,
            Some("b")
        ),
        json!({"name": "t", "requestState": "b"})
    );
    // No state in the new round: none in the retry.
    assert_eq!(
        retry_params(
            &json!({"name": "t", "requestState": "a"}),
            Some(&responses),
            None
        ),
        json!({"name": "t", "inputResponses": {"k": {"action": "cancel"}}})
    );
    assert_eq!(retry_params(&json!(null), None, None), json!({}));
    // The original keeps its other members (_meta is the SDK's, arguments unchanged).
    let orig = json!({"uri": "ui://x", "x-ext": {"a": [1, 2]}});
    assert_eq!(
        retry_params(&orig, None, Some("s")),
        json!({"uri": "ui://x", "x-ext": {"a": [1, 2]}, "requestState": "s"})
    );
}
