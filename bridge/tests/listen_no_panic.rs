//! M3: no panic on bad input: each pure rule of the listen stream and of the log level gets
//! thousands of generated values (a fixed seed, so that a failure repeats), mixed with pieces of
//! real messages. (From the scratch crate of the rules; the rules of M2 have their own copy.)

use mcp_bridge_vscode::listen::filter::classify;
use mcp_bridge_vscode::listen::replay::{
    Declared, Subscriptions, gap_replay, listen_params, subscription_uri,
};
use mcp_bridge_vscode::translate::level::{LogLevel, log_message_for_client, set_level_params};
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
fn m3_every_listen_rule_takes_any_value_without_a_panic() {
    let mut rng = Rng(0x5eed);
    for _ in 0..20_000 {
        let v = value(&mut rng, 5);
        let _ = classify(&v);
        let _ = classify(&json!({"method": "notifications/resources/updated", "params": v}));
        let _ =
            classify(&json!({"method": "notifications/subscriptions/acknowledged", "params": v}));
        for level in [None, Some(LogLevel::Debug), Some(LogLevel::Emergency)] {
            let _ = log_message_for_client(&v, level);
        }
        let _ = set_level_params(Some(&v));
        let declared = Declared::from_initialize_result(&v);
        if let Some(uri) = subscription_uri(Some(&v)) {
            let subs = Subscriptions::new();
            let _ = subs.subscribe(uri);
            let _ = subs.unsubscribe(uri);
            let _ = listen_params(&declared, &[uri.to_owned()]);
            let _ = gap_replay(&declared, &[uri.to_owned()]);
        }
    }
}
