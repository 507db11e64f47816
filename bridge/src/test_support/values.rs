//! Generated JSON values for the no-panic tests (R8, M3): a small seeded generator, so that a
//! failure repeats, whose strings are pieces of real messages.

use serde_json::{Map, Value, json};

/// A linear congruential generator; the seed fixes the sequence.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[(self.next() as usize) % items.len()]
    }
}

/// Pieces of real messages: the keys and the strings of the values.
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

/// A JSON value of at most `depth` levels below it.
pub fn value(rng: &mut Rng, depth: u32) -> Value {
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
