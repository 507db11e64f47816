//! The event filter of the listen stream (O6, O7).

use serde_json::{Map, Value};

/// The `_meta` key that names the subscription of a stream event.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The methods that reach VS Code.
pub const FORWARDED: [&str; 4] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
];

/// What to do with one message of a listen stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `notifications/subscriptions/acknowledged`: internal (the stream becomes active; the
    /// subscription id is for debug lines). Never forwarded.
    Acknowledged {
        subscription_id: Option<Value>,
        notifications: Option<Value>,
    },
    /// A notification for VS Code, ready to write.
    Forward(Value),
    /// Everything else (`notifications/cancelled` — whose ids would collide with VS Code's —
    /// `notifications/message`, `notifications/progress`, `notifications/tasks/status`,
    /// `notifications/roots/list_changed`, wrong-case names, responses, malformed frames).
    Drop,
}

/// O6 / O7: classify one message of a listen stream. Forwarded params lose
/// `_meta["io.modelcontextprotocol/subscriptionId"]`; a `_meta` that becomes empty, or that is
/// not an object, is removed; empty params are removed; non-object params drop the event.
/// `notifications/resources/updated` needs a string `uri`. Every other member stays.
pub fn classify(message: &Value) -> Event {
    let Some(obj) = message.as_object() else {
        return Event::Drop;
    };
    if obj.contains_key("id") {
        // A request or a response is not an event.
        return Event::Drop;
    }
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        return Event::Drop;
    };
    let params = obj.get("params");
    if method == "notifications/subscriptions/acknowledged" {
        return Event::Acknowledged {
            subscription_id: params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
                .cloned(),
            notifications: params.and_then(|p| p.get("notifications")).cloned(),
        };
    }
    if !FORWARDED.contains(&method) {
        return Event::Drop;
    }
    let mut out = Map::new();
    out.insert("jsonrpc".into(), Value::String("2.0".into()));
    out.insert("method".into(), Value::String(method.to_owned()));
    let params = match params {
        None => None,
        Some(Value::Object(p)) => Some(strip_subscription_id(p)),
        Some(_) => return Event::Drop,
    };
    if method == "notifications/resources/updated"
        && !params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .is_some_and(Value::is_string)
    {
        return Event::Drop;
    }
    if let Some(p) = params.filter(|p| !p.is_empty()) {
        out.insert("params".into(), Value::Object(p));
    }
    Event::Forward(Value::Object(out))
}

fn strip_subscription_id(params: &Map<String, Value>) -> Map<String, Value> {
    let mut p = params.clone();
    let keep_meta = match p.get_mut("_meta") {
        Some(Value::Object(meta)) => {
            meta.shift_remove(SUBSCRIPTION_ID_KEY);
            !meta.is_empty()
        }
        Some(_) => false,
        None => true,
    };
    if !keep_meta {
        p.shift_remove("_meta");
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fwd(v: Value) -> Value {
        match classify(&v) {
            Event::Forward(f) => f,
            other => panic!("not forwarded: {v} -> {other:?}"),
        }
    }

    #[test]
    fn o6_list_changes_lose_the_subscription_id() {
        for m in &FORWARDED[..3] {
            let got = fwd(
                json!({"jsonrpc": "2.0", "method": m, "params": {"_meta": {SUBSCRIPTION_ID_KEY: 1}}}),
            );
            assert_eq!(got, json!({"jsonrpc": "2.0", "method": m}));
            assert_eq!(
                fwd(json!({"jsonrpc": "2.0", "method": m})),
                json!({"jsonrpc": "2.0", "method": m})
            );
        }
    }

    #[test]
    fn o7_resource_update_keeps_uri_and_other_members() {
        let got = fwd(
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {SUBSCRIPTION_ID_KEY: "s", "k": 1}, "uri": "file:///a", "title": "A"}}),
        );
        assert_eq!(
            got,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {"k": 1}, "uri": "file:///a", "title": "A"}})
        );
    }

    #[test]
    fn o7_resource_update_needs_a_string_uri() {
        for p in [json!({}), json!({"uri": 1}), json!({"_meta": {}})] {
            assert_eq!(
                classify(&json!({"method": "notifications/resources/updated", "params": p})),
                Event::Drop
            );
        }
        assert_eq!(
            classify(&json!({"method": "notifications/resources/updated"})),
            Event::Drop
        );
    }

    #[test]
    fn o6_non_object_meta_removed_and_non_object_params_dropped() {
        assert_eq!(
            fwd(json!({"method": "notifications/tools/list_changed", "params": {"_meta": 5}})),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
        assert_eq!(
            fwd(
                json!({"method": "notifications/tools/list_changed", "params": {"_meta": {}, "x": 1}})
            ),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"x": 1}})
        );
        for p in [json!([]), json!("x"), json!(null), json!(1)] {
            assert_eq!(
                classify(&json!({"method": "notifications/tools/list_changed", "params": p})),
                Event::Drop
            );
        }
    }

    #[test]
    fn o6_everything_else_is_dropped() {
        for m in [
            "notifications/cancelled",
            "notifications/message",
            "notifications/progress",
            "notifications/tasks/status",
            "notifications/roots/list_changed",
            "notifications/Tools/list_changed",
            "notifications/tools/list_changed ",
            "notifications/elicitation/complete",
        ] {
            assert_eq!(
                classify(&json!({"jsonrpc": "2.0", "method": m, "params": {}})),
                Event::Drop,
                "{m}"
            );
        }
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}})),
            Event::Drop
        );
        assert_eq!(
            classify(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "notifications/tools/list_changed"})
            ),
            Event::Drop
        );
        assert_eq!(classify(&json!({"method": 5})), Event::Drop);
        assert_eq!(classify(&json!([])), Event::Drop);
    }

    #[test]
    fn o6_acknowledgment_is_internal() {
        let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION_ID_KEY: 1}, "notifications": {"toolsListChanged": true}}});
        assert_eq!(
            classify(&ack),
            Event::Acknowledged {
                subscription_id: Some(json!(1)),
                notifications: Some(json!({"toolsListChanged": true})),
            }
        );
        assert_eq!(
            classify(&json!({"method": "notifications/subscriptions/acknowledged"})),
            Event::Acknowledged {
                subscription_id: None,
                notifications: None
            }
        );
    }
}
