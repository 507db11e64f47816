//! M2 (R8): no panic on bad input: every public rule gets thousands of generated values (a fixed seed,
//! so that a failure repeats), mixed with pieces of real messages.

use crate::input::answers::{ClientAnswer, retry_params, shape_answer};
use crate::input::check::{ClientCaps, check_input_request};
use crate::input::complete::{ElicitationIds, UrlSteps, asked_urls};
use crate::input::parse::parse_input_required;
use crate::input::route::plan_round;
use crate::input::shape;
use crate::input::state::refused_state_response;
use crate::input::url::url_allowed;
use crate::test_support::values::{Rng, value};
use serde_json::json;

#[test]
fn every_rule_takes_any_value_without_a_panic() {
    let mut rng = Rng(0x5eed);
    let caps = [
        ClientCaps {
            form: true,
            url: true,
            sampling: true,
            sampling_tools: true,
            roots: true,
        },
        ClientCaps::default(),
    ];
    let mut eids = ElicitationIds::new();
    for i in 0..20_000 {
        let v = value(&mut rng, 5);
        let c = &caps[i % 2];
        let _ = parse_input_required(&v);
        let _ = check_input_request("k", &v, c);
        let _ = asked_urls(&v);
        let wrapped = json!({"resultType": "input_required", "inputRequests": {"a": v.clone()}});
        let mut steps = UrlSteps::new();
        if let Ok(plan) = plan_round(
            &parse_input_required(&wrapped).unwrap(),
            c,
            &mut steps,
            &mut eids,
        ) {
            for q in &plan.questions {
                for a in [
                    ClientAnswer::Result(v.clone()),
                    ClientAnswer::Error(v.clone()),
                    ClientAnswer::BadLine,
                ] {
                    let _ = shape_answer(q, &a);
                }
            }
        }
        let _ = steps.observe(&v);
        let _ = shape::is_elicit_result(&v);
        let _ = shape::is_create_message_result(&v);
        let _ = shape::is_list_roots_result(&v);
        let _ = shape::is_primitive_schema(&v);
        if let Some(a) = v.as_array() {
            let _ = shape::obeys_tool_result_rules(a);
        }
        let _ = refused_state_response("tools/call", &v);
        let _ = refused_state_response("prompts/get", &v);
        let _ = retry_params(&v, v.as_object(), v.as_str());
        if let Some(s) = v.as_str() {
            let _ = url_allowed(s);
        }
    }
}

#[test]
fn url_rule_takes_any_text_without_a_panic() {
    let mut rng = Rng(7);
    let pieces = [
        "http",
        "https",
        ":",
        "/",
        "//",
        "@",
        "[",
        "]",
        "::1",
        "127.0.0.1",
        "localhost",
        ".",
        "\\",
        "%",
        "%41",
        "#",
        "?",
        "ä",
        "\u{0}",
        " ",
        ":80",
        "xn--",
        "0x7f",
    ];
    for _ in 0..20_000 {
        let s: String = (0..rng.next() % 10).map(|_| rng.pick(&pieces)).collect();
        let _ = url_allowed(&s);
    }
}
