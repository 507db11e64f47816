#![allow(clippy::unwrap_used)] // a test fails by its panic
//! M2 (R8): no panic on bad input: every public rule gets thousands of generated values (a fixed seed,
//! so that a failure repeats), mixed with pieces of real messages.

use mcp_bridge_vscode::input::answers::{ClientAnswer, retry_params, shape_answer};
use mcp_bridge_vscode::input::check::{ClientCaps, check_input_request};
use mcp_bridge_vscode::input::complete::{ElicitationIds, UrlSteps, asked_urls};
use mcp_bridge_vscode::input::parse::parse_input_required;
use mcp_bridge_vscode::input::route::plan_round;
use mcp_bridge_vscode::input::shape;
use mcp_bridge_vscode::input::state::refused_state_response;
use mcp_bridge_vscode::input::url::url_allowed;
use serde_json::{Map, Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[(self.next() as usize) % items.len()]
    }
}

const WORDS: &[&str] = &[
    "method",
    "params",
    "mode",
    "form",
    "url",
    "message",
    "requestedSchema",
    "type",
    "object",
    "properties",
    "string",
    "array",
    "items",
    "enum",
    "required",
    "elicitation/create",
    "sampling/createMessage",
    "roots/list",
    "messages",
    "role",
    "user",
    "assistant",
    "content",
    "text",
    "tool_use",
    "tool_result",
    "toolUseId",
    "id",
    "input",
    "maxTokens",
    "tools",
    "toolChoice",
    "action",
    "accept",
    "decline",
    "cancel",
    "resultType",
    "input_required",
    "inputRequests",
    "requestState",
    "level",
    "data",
    "_meta",
    "uri",
    "roots",
    "model",
    "https://example.com/",
    "http://localhost/",
    "javascript:x",
    "file:///a",
    "notifications/tools/list_changed",
    "notifications/resources/updated",
    "capabilities",
    "listChanged",
    "minLength",
    "pattern",
    "(",
    "\\",
    "",
];

fn value(rng: &mut Rng, depth: u32) -> Value {
    match rng.next() % if depth == 0 { 5 } else { 8 } {
        0 => Value::Null,
        1 => json!(rng.next().is_multiple_of(3)),
        2 => json!((rng.next() % 200) as i64 - 100),
        3 => json!(((rng.next() % 1000) as f64) / 7.0 - 50.0),
        4 => json!(rng.pick(WORDS)),
        5 | 6 => {
            let mut m = Map::new();
            for _ in 0..rng.next() % 5 {
                let k = rng.pick(WORDS).to_owned();
                m.insert(k, value(rng, depth - 1));
            }
            Value::Object(m)
        }
        _ => Value::Array((0..rng.next() % 4).map(|_| value(rng, depth - 1)).collect()),
    }
}

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
