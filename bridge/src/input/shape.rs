//! Shape predicates of the input requests (2026-07-28) and of the client's answers
//! (2025-11-25), written from the schemas of both revisions. Pure predicates: they never
//! change a value. Members that a shape does not name are allowed (the schemas have no
//! `additionalProperties: false` there), so unknown members pass through.

use serde_json::{Map, Value};

pub(crate) fn opt(obj: &Map<String, Value>, key: &str, pred: impl Fn(&Value) -> bool) -> bool {
    obj.get(key).is_none_or(pred)
}

pub(crate) fn is_str(v: &Value) -> bool {
    v.is_string()
}

pub(crate) fn is_obj(v: &Value) -> bool {
    v.is_object()
}

/// JSON Schema `integer`: a number with a zero fractional part.
pub(crate) fn is_int(v: &Value) -> bool {
    v.is_i64()
        || v.is_u64()
        || v.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

pub(crate) fn is_str_array(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

fn str_eq(v: &Value, s: &str) -> bool {
    v.as_str() == Some(s)
}

fn str_in(v: &Value, set: &[&str]) -> bool {
    v.as_str().is_some_and(|s| set.contains(&s))
}

fn number_in_unit(v: &Value) -> bool {
    v.as_f64().is_some_and(|f| (0.0..=1.0).contains(&f))
}

/// The mode of an `elicitation/create`: a missing `mode` is form mode (2025-11-25
/// elicitation: clients MUST treat requests without `mode` as form mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitMode {
    Form,
    Url,
}

/// The mode of elicitation params, or `None` for an unknown mode.
pub fn elicit_mode(params: &Value) -> Option<ElicitMode> {
    match params.get("mode") {
        None => Some(ElicitMode::Form),
        Some(v) if str_eq(v, "form") => Some(ElicitMode::Form),
        Some(v) if str_eq(v, "url") => Some(ElicitMode::Url),
        Some(_) => None,
    }
}

/// `ElicitRequestFormParams` (2026-07-28).
pub fn is_form_params(p: &Map<String, Value>) -> bool {
    opt(p, "mode", |v| str_eq(v, "form"))
        && p.get("message").is_some_and(is_str)
        && opt(p, "_meta", is_obj)
        && p.get("requestedSchema").is_some_and(is_requested_schema)
}

/// The restricted `requestedSchema` of a form: an object schema whose properties are all
/// primitive (a property with `type: "object"` fails here).
pub fn is_requested_schema(v: &Value) -> bool {
    let Some(s) = v.as_object() else {
        return false;
    };
    s.get("type").is_some_and(|t| str_eq(t, "object"))
        && s.get("properties")
            .and_then(Value::as_object)
            .is_some_and(|props| props.values().all(is_primitive_schema))
        && opt(s, "required", is_str_array)
        && opt(s, "$schema", is_str)
}

/// `PrimitiveSchemaDefinition`: any of the eight restricted property schemas.
pub fn is_primitive_schema(v: &Value) -> bool {
    let Some(s) = v.as_object() else {
        return false;
    };
    let common = opt(s, "title", is_str) && opt(s, "description", is_str);
    if !common {
        return false;
    }
    let string_schema = || {
        str_eq_member(s, "type", "string")
            && opt(s, "default", is_str)
            && opt(s, "format", |f| {
                str_in(f, &["date", "date-time", "email", "uri"])
            })
            && opt(s, "minLength", is_int)
            && opt(s, "maxLength", is_int)
    };
    let number_schema = || {
        s.get("type")
            .is_some_and(|t| str_in(t, &["integer", "number"]))
            && opt(s, "default", Value::is_number)
            && opt(s, "minimum", Value::is_number)
            && opt(s, "maximum", Value::is_number)
    };
    let boolean_schema =
        || str_eq_member(s, "type", "boolean") && opt(s, "default", Value::is_boolean);
    // Untitled single select, and the legacy titled enum (with enumNames).
    let enum_schema = || {
        str_eq_member(s, "type", "string")
            && s.get("enum").is_some_and(is_str_array)
            && opt(s, "default", is_str)
            && opt(s, "enumNames", is_str_array)
    };
    let titled_single = || {
        str_eq_member(s, "type", "string")
            && s.get("oneOf").is_some_and(is_titled_options)
            && opt(s, "default", is_str)
    };
    let multi_common = || {
        str_eq_member(s, "type", "array")
            && opt(s, "default", is_str_array)
            && opt(s, "minItems", is_int)
            && opt(s, "maxItems", is_int)
    };
    let untitled_multi = || {
        multi_common()
            && s.get("items").and_then(Value::as_object).is_some_and(|i| {
                str_eq_member(i, "type", "string") && i.get("enum").is_some_and(is_str_array)
            })
    };
    let titled_multi = || {
        multi_common()
            && s.get("items")
                .and_then(Value::as_object)
                .is_some_and(|i| i.get("anyOf").is_some_and(is_titled_options))
    };
    string_schema()
        || number_schema()
        || boolean_schema()
        || enum_schema()
        || titled_single()
        || untitled_multi()
        || titled_multi()
}

fn str_eq_member(o: &Map<String, Value>, key: &str, s: &str) -> bool {
    o.get(key).is_some_and(|v| str_eq(v, s))
}

fn is_titled_options(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        a.iter().all(|o| {
            o.as_object().is_some_and(|o| {
                o.get("const").is_some_and(is_str) && o.get("title").is_some_and(is_str)
            })
        })
    })
}

/// `ElicitRequestURLParams` (2026-07-28).
pub fn is_url_params(p: &Map<String, Value>) -> bool {
    str_eq_member(p, "mode", "url")
        && p.get("message").is_some_and(is_str)
        && p.get("url").is_some_and(is_str)
        && opt(p, "_meta", is_obj)
}

/// `CreateMessageRequestParams` (2026-07-28). `messages` must not be empty: a sampling
/// request without a message has nothing to sample (docs/rules.md O2: a shape error).
pub fn is_sampling_params(p: &Map<String, Value>) -> bool {
    p.get("messages")
        .and_then(Value::as_array)
        .is_some_and(|m| !m.is_empty() && m.iter().all(is_sampling_message))
        && p.get("maxTokens").is_some_and(is_int)
        && opt(p, "includeContext", |v| {
            str_in(v, &["allServers", "none", "thisServer"])
        })
        && opt(p, "metadata", is_obj)
        && opt(p, "modelPreferences", is_model_preferences)
        && opt(p, "stopSequences", is_str_array)
        && opt(p, "systemPrompt", is_str)
        && opt(p, "temperature", Value::is_number)
        && opt(p, "toolChoice", |v| {
            v.as_object()
                .is_some_and(|o| opt(o, "mode", |m| str_in(m, &["auto", "none", "required"])))
        })
        && opt(p, "tools", |v| {
            v.as_array().is_some_and(|a| a.iter().all(is_tool))
        })
        && opt(p, "_meta", is_obj)
}

fn is_model_preferences(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        opt(o, "hints", |h| {
            h.as_array().is_some_and(|a| {
                a.iter()
                    .all(|x| x.as_object().is_some_and(|x| opt(x, "name", is_str)))
            })
        }) && opt(o, "costPriority", number_in_unit)
            && opt(o, "speedPriority", number_in_unit)
            && opt(o, "intelligencePriority", number_in_unit)
    })
}

fn is_tool(v: &Value) -> bool {
    v.as_object().is_some_and(|t| {
        t.get("name").is_some_and(is_str) && t.get("inputSchema").is_some_and(is_obj)
    })
}

/// `SamplingMessage`: a role and one content block or an array of blocks.
pub fn is_sampling_message(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.get("role")
            .is_some_and(|r| str_in(r, &["user", "assistant"]))
            && m.get("content").is_some_and(is_sampling_content)
            && opt(m, "_meta", is_obj)
    })
}

/// The `content` of a sampling message or result: a block or an array of blocks.
pub fn is_sampling_content(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().all(is_sampling_block),
        other => is_sampling_block(other),
    }
}

/// `SamplingMessageContentBlock`: text, image, audio, tool_use or tool_result.
pub fn is_sampling_block(v: &Value) -> bool {
    let Some(b) = v.as_object() else {
        return false;
    };
    let common = opt(b, "_meta", is_obj) && opt(b, "annotations", is_obj);
    common
        && match b.get("type").and_then(Value::as_str) {
            Some("text") => b.get("text").is_some_and(is_str),
            Some("image") | Some("audio") => {
                b.get("data").is_some_and(is_str) && b.get("mimeType").is_some_and(is_str)
            }
            Some("tool_use") => {
                b.get("id").is_some_and(is_str)
                    && b.get("name").is_some_and(is_str)
                    && b.get("input").is_some_and(is_obj)
            }
            Some("tool_result") => {
                b.get("toolUseId").is_some_and(is_str)
                    && b.get("content").and_then(Value::as_array).is_some_and(|c| {
                        c.iter().all(|x| {
                            x.as_object()
                                .is_some_and(|x| x.get("type").is_some_and(is_str))
                        })
                    })
                    && opt(b, "isError", Value::is_boolean)
            }
            _ => false,
        }
}

/// The blocks of a content value (one block or an array of blocks).
pub(crate) fn blocks(content: &Value) -> Vec<&Value> {
    match content {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    }
}

fn block_type(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

/// O2: whether sampling params use tools: `tools`, `toolChoice`, or a `tool_use` /
/// `tool_result` content block in any message.
pub fn sampling_uses_tools(p: &Map<String, Value>) -> bool {
    p.contains_key("tools")
        || p.contains_key("toolChoice")
        || p.get("messages")
            .and_then(Value::as_array)
            .is_some_and(|ms| {
                ms.iter().any(|m| {
                    m.get("content").is_some_and(|c| {
                        blocks(c)
                            .into_iter()
                            .any(|b| matches!(block_type(b), Some("tool_use" | "tool_result")))
                    })
                })
            })
}

/// The tool result rules of sampling (2026-07-28 client/sampling, "Message Content
/// Constraints"): a message with a tool result has only tool results and the role `user`; a
/// tool use has the role `assistant`; every assistant message with tool uses is followed at
/// once by a user message of tool results whose ids are exactly the ids of those tool uses;
/// a tool-result message follows such an assistant message.
pub fn obeys_tool_result_rules(messages: &[Value]) -> bool {
    let mut pending: Option<Vec<&str>> = None;
    for m in messages {
        let role = m.get("role").and_then(Value::as_str);
        let bs = m.get("content").map(blocks).unwrap_or_default();
        let results: Vec<&str> = bs
            .iter()
            .filter(|b| block_type(b) == Some("tool_result"))
            .filter_map(|b| b.get("toolUseId").and_then(Value::as_str))
            .collect();
        let n_results = bs
            .iter()
            .filter(|b| block_type(b) == Some("tool_result"))
            .count();
        let uses: Vec<&str> = bs
            .iter()
            .filter(|b| block_type(b) == Some("tool_use"))
            .filter_map(|b| b.get("id").and_then(Value::as_str))
            .collect();
        let n_uses = bs
            .iter()
            .filter(|b| block_type(b) == Some("tool_use"))
            .count();
        if let Some(expected) = pending.take() {
            // The message after tool uses: only tool results, matching ids exactly.
            if role != Some("user") || n_results == 0 || n_results != bs.len() {
                return false;
            }
            let mut got = results.clone();
            let mut want = expected;
            got.sort_unstable();
            want.sort_unstable();
            if got != want {
                return false;
            }
            continue;
        }
        if n_results > 0 {
            // A tool result without the tool uses right before it.
            return false;
        }
        if n_uses > 0 {
            if role != Some("assistant") {
                return false;
            }
            pending = Some(uses);
        }
    }
    pending.is_none()
}

/// `ElicitResult` (2025-11-25). Content values are strings, numbers, booleans or arrays of
/// strings: the schema names `integer`, but a form property of `type: "number"` can carry a
/// fraction, and the SDKs accept any number; the `requestedSchema` decides.
pub fn is_elicit_result(v: &Value) -> bool {
    v.as_object().is_some_and(|r| {
        r.get("action")
            .is_some_and(|a| str_in(a, &["accept", "decline", "cancel"]))
            && opt(r, "content", |c| {
                c.as_object().is_some_and(|c| {
                    c.values().all(|x| {
                        x.is_string() || x.is_number() || x.is_boolean() || is_str_array(x)
                    })
                })
            })
            && opt(r, "_meta", is_obj)
    })
}

/// `CreateMessageResult` (2025-11-25).
pub fn is_create_message_result(v: &Value) -> bool {
    v.as_object().is_some_and(|r| {
        r.get("content").is_some_and(is_sampling_content)
            && r.get("model").is_some_and(is_str)
            && r.get("role")
                .is_some_and(|x| str_in(x, &["user", "assistant"]))
            && opt(r, "stopReason", is_str)
            && opt(r, "_meta", is_obj)
    })
}

/// `ListRootsResult` (2025-11-25).
pub fn is_list_roots_result(v: &Value) -> bool {
    v.as_object().is_some_and(|r| {
        r.get("roots")
            .and_then(Value::as_array)
            .is_some_and(|roots| {
                roots.iter().all(|root| {
                    root.as_object().is_some_and(|o| {
                        o.get("uri").is_some_and(is_str)
                            && opt(o, "name", is_str)
                            && opt(o, "_meta", is_obj)
                    })
                })
            })
            && opt(r, "_meta", is_obj)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(v: Value) -> Vec<Value> {
        v.as_array().unwrap().clone()
    }

    #[test]
    fn o2_tool_result_rules() {
        let text = |role: &str| json!({"role": role, "content": {"type": "text", "text": "x"}});
        let uses = |ids: &[&str]| json!({"role": "assistant", "content": ids.iter().map(|i| json!({"type": "tool_use", "id": i, "name": "w", "input": {}})).collect::<Vec<_>>()});
        let results = |ids: &[&str]| json!({"role": "user", "content": ids.iter().map(|i| json!({"type": "tool_result", "toolUseId": i, "content": []})).collect::<Vec<_>>()});
        assert!(obeys_tool_result_rules(&[text("user")]));
        assert!(obeys_tool_result_rules(&[
            text("user"),
            uses(&["a", "b"]),
            results(&["b", "a"]),
            text("assistant")
        ]));
        // Missing result for b.
        assert!(!obeys_tool_result_rules(&[
            text("user"),
            uses(&["a", "b"]),
            results(&["a"])
        ]));
        // Unknown result.
        assert!(!obeys_tool_result_rules(&[
            uses(&["a"]),
            results(&["a", "z"])
        ]));
        // A result without a use.
        assert!(!obeys_tool_result_rules(&[text("user"), results(&["a"])]));
        // Uses not followed by results.
        assert!(!obeys_tool_result_rules(&[text("user"), uses(&["a"])]));
        assert!(!obeys_tool_result_rules(&[uses(&["a"]), text("user")]));
        // Mixed content with a tool result.
        let mixed = json!({"role": "user", "content": [
            {"type": "text", "text": "Here are the results:"},
            {"type": "tool_result", "toolUseId": "a", "content": []}]});
        assert!(!obeys_tool_result_rules(&[uses(&["a"]), mixed]));
        // A tool use by the user.
        let user_use = json!({"role": "user", "content": {"type": "tool_use", "id": "a", "name": "w", "input": {}}});
        assert!(!obeys_tool_result_rules(&msgs(json!([
            user_use,
            results(&["a"])
        ]))));
        // A single (non-array) tool result block.
        let single = json!({"role": "user", "content": {"type": "tool_result", "toolUseId": "a", "content": []}});
        assert!(obeys_tool_result_rules(&[uses(&["a"]), single]));
    }

    #[test]
    fn o2_tool_use_detection() {
        let p = |v: Value| v.as_object().unwrap().clone();
        let base = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}], "maxTokens": 5});
        assert!(!sampling_uses_tools(&p(base.clone())));
        let mut with_tools = base.clone();
        with_tools["tools"] = json!([]);
        assert!(sampling_uses_tools(&p(with_tools)));
        let mut with_choice = base.clone();
        with_choice["toolChoice"] = json!({"mode": "none"});
        assert!(sampling_uses_tools(&p(with_choice)));
        let block = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"},
            {"type": "tool_result", "toolUseId": "a", "content": []}]}], "maxTokens": 5});
        assert!(sampling_uses_tools(&p(block)));
    }

    #[test]
    fn form_property_shapes() {
        for ok in [
            json!({"type": "string"}),
            json!({"type": "string", "format": "email", "minLength": 1, "maxLength": 9, "title": "t", "default": "d"}),
            json!({"type": "integer", "minimum": 1, "maximum": 2.5}),
            json!({"type": "number", "default": 0.5}),
            json!({"type": "boolean", "default": true}),
            json!({"type": "string", "enum": ["a", "b"]}),
            json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
            json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
            json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 1}),
            json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
            json!({"type": "string", "x-extension": {"nested": true}}),
            json!({"type": "string", "minLength": 1.0}),
        ] {
            assert!(is_primitive_schema(&ok), "{ok}");
        }
        for bad in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}}),
            json!({"type": "array"}),
            json!({"type": "array", "items": {"type": "integer"}}),
            json!({"type": "string", "format": "uuid"}),
            json!({"type": "string", "minLength": 1.5}),
            json!({"type": "string", "title": 1}),
            json!({"type": "boolean", "default": "yes"}),
            json!({"type": "array", "items": {"anyOf": [{"const": "a"}]}}),
            json!({"type": "null"}),
            json!({}),
            json!("string"),
        ] {
            assert!(!is_primitive_schema(&bad), "{bad}");
        }
    }

    #[test]
    fn elicit_result_shapes() {
        for ok in [
            json!({"action": "accept", "content": {"a": "x", "b": 1, "c": 1.5, "d": true, "e": ["x"]}}),
            json!({"action": "decline"}),
            json!({"action": "cancel", "_meta": {}}),
            json!({"action": "accept", "extra": 1}),
        ] {
            assert!(is_elicit_result(&ok), "{ok}");
        }
        for bad in [
            json!({"action": "maybe"}),
            json!({}),
            json!({"action": "accept", "content": []}),
            json!({"action": "accept", "content": {"a": {"b": 1}}}),
            json!({"action": "accept", "content": {"a": null}}),
            json!({"action": "accept", "content": {"a": [1]}}),
            json!({"action": "accept", "_meta": 1}),
            json!("accept"),
        ] {
            assert!(!is_elicit_result(&bad), "{bad}");
        }
    }

    #[test]
    fn sampling_and_roots_result_shapes() {
        assert!(is_create_message_result(
            &json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"})
        ));
        assert!(is_create_message_result(
            &json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "model": "m"})
        ));
        assert!(!is_create_message_result(
            &json!({"role": "assistant", "content": {"type": "text"}, "model": "m"})
        ));
        assert!(!is_create_message_result(
            &json!({"role": "bot", "content": {"type": "text", "text": "x"}, "model": "m"})
        ));
        assert!(!is_create_message_result(
            &json!({"role": "assistant", "content": {"type": "text", "text": "x"}})
        ));
        assert!(is_list_roots_result(
            &json!({"roots": [{"uri": "file:///a", "name": "a"}]})
        ));
        assert!(is_list_roots_result(&json!({"roots": []})));
        assert!(!is_list_roots_result(&json!({"roots": [{"name": "a"}]})));
        assert!(!is_list_roots_result(&json!({"roots": {}})));
        assert!(!is_list_roots_result(&json!({})));
    }

    #[test]
    fn o1_missing_mode_is_form_mode() {
        assert_eq!(elicit_mode(&json!({})), Some(ElicitMode::Form));
        assert_eq!(
            elicit_mode(&json!({"mode": "form"})),
            Some(ElicitMode::Form)
        );
        assert_eq!(elicit_mode(&json!({"mode": "url"})), Some(ElicitMode::Url));
        assert_eq!(elicit_mode(&json!({"mode": "URL"})), None);
        assert_eq!(elicit_mode(&json!({"mode": null})), None);
    }
}
