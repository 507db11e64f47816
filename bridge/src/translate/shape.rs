//! R4, R5, R6, O10, O11: the shape of a complete upstream result before VS Code gets it.

use serde_json::{Map, Value};

use super::initialize::SERVER_INFO_KEY;
use super::schema::{self, Fix};
use crate::wire::lazy::{LazyObject, Member};

/// How the upstream server marks the kind of a result (2026-07-28).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultKind {
    /// `complete`, or no `resultType` (an older server).
    Complete,
    /// R8 (M2): the bridge must do the input rounds itself.
    InputRequired,
    /// A kind that the bridge did not negotiate (for example `task`): not valid.
    Unknown(String),
}

/// Reads `resultType`.
pub fn result_kind(result: &Value) -> ResultKind {
    kind_of(result.get("resultType"))
}

/// The kind of a result from its `resultType` member.
pub fn kind_of(result_type: Option<&Value>) -> ResultKind {
    match result_type {
        None => ResultKind::Complete,
        Some(Value::String(s)) if s == "complete" => ResultKind::Complete,
        Some(Value::String(s)) if s == "input_required" => ResultKind::InputRequired,
        Some(other) => ResultKind::Unknown(other.as_str().unwrap_or("?").to_owned()),
    }
}

/// R6: one repair of a tool's input schema, for the info line of the front.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolFix {
    pub tool: String,
    pub fix: Fix,
}

/// True for the list methods whose results have `nextCursor`.
pub fn is_list(method: &str) -> bool {
    matches!(
        method,
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
    )
}

/// Shapes a complete result. Returns `None` when the result is not an object (the caller
/// answers `invalid_response`). Every member that no rule names stays (docs/architecture.md principle 1).
pub fn shape_result(method: &str, result: Value) -> Option<(Value, Vec<ToolFix>)> {
    let Value::Object(mut map) = result else {
        return None;
    };
    map.remove("resultType");
    map.remove("ttlMs");
    map.remove("cacheScope");
    strip_server_info(&mut map);
    // R4: VS Code asks for the next page while `nextCursor` is present, even when it is null.
    if is_list(method) && map.get("nextCursor").is_some_and(|c| !c.is_string()) {
        map.remove("nextCursor");
    }
    let mut fixes = Vec::new();
    match method {
        "tools/list" => shape_tools(&mut map, &mut fixes),
        "tools/call" => shape_call(&mut map),
        _ => {}
    }
    Some((Value::Object(map), fixes))
}

/// R1, R4, R5 of [`shape_result`] on a result whose members are parsed on demand (a hot-path choice of bridge/README.md):
/// only the members that the rules name are read, and the rest go out as received. A result
/// that a rule must walk whole (R6 of `tools/list`, O11 with `structuredContent`) comes back
/// unchanged as `Err`, for [`shape_result`]. The steps and their order are those of
/// [`shape_result`], so that the members come out in the same order.
pub fn shape_object(method: &str, mut map: LazyObject) -> Result<LazyObject, LazyObject> {
    if method == "tools/list"
        || (method == "tools/call" && map.get("structuredContent").is_some_and(|s| !s.is_null()))
    {
        return Err(map);
    }
    map.remove("resultType");
    map.remove("ttlMs");
    map.remove("cacheScope");
    strip_server_info_lazy(&mut map);
    if is_list(method) && map.get("nextCursor").is_some_and(|c| !c.is_string()) {
        map.remove("nextCursor");
    }
    if method == "tools/call" && !map.get("content").is_some_and(Member::is_array) {
        map.insert("content", Member::Value(Value::Array(Vec::new())));
    }
    Ok(map)
}

fn strip_server_info_lazy(map: &mut LazyObject) {
    let Some(Value::Object(mut meta)) = map.get_value("_meta").map(std::borrow::Cow::into_owned)
    else {
        return;
    };
    if meta.remove(SERVER_INFO_KEY).is_none() {
        return;
    }
    if meta.is_empty() {
        map.remove("_meta");
    } else {
        map.insert("_meta", Member::Value(Value::Object(meta)));
    }
}

fn strip_server_info(map: &mut Map<String, Value>) {
    let empty = match map.get_mut("_meta") {
        Some(Value::Object(meta)) => meta.remove(SERVER_INFO_KEY).is_some() && meta.is_empty(),
        _ => false,
    };
    if empty {
        map.remove("_meta");
    }
}

/// R6: `items: {}` for falsy array items in every `inputSchema`, and no `outputSchema` whose
/// root is not `type: "object"` (2025-11-25 allows only object roots, and a validating client
/// refuses the whole list for one such schema).
fn shape_tools(map: &mut Map<String, Value>, fixes: &mut Vec<ToolFix>) {
    let Some(Value::Array(tools)) = map.get_mut("tools") else {
        return;
    };
    for tool in tools.iter_mut() {
        let Value::Object(tool) = tool else {
            continue;
        };
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(input) = tool.get_mut("inputSchema") {
            for fix in schema::repair_input_schema(input) {
                fixes.push(ToolFix {
                    tool: name.clone(),
                    fix,
                });
            }
        }
        if tool
            .get("outputSchema")
            .is_some_and(|s| !schema::output_schema_allowed(s))
        {
            tool.remove("outputSchema");
        }
    }
}

/// R5: a `tools/call` result always has a `content` array (VS Code iterates it without a
/// check). O11: `structuredContent` stays as sent; when there is no text block, its JSON text
/// is added as one, as 2025-11-25 asks of a server with structured content.
fn shape_call(map: &mut Map<String, Value>) {
    if !map.get("content").is_some_and(Value::is_array) {
        map.insert("content".into(), Value::Array(Vec::new()));
    }
    let structured = match map.get("structuredContent") {
        Some(Value::Null) | None => return,
        Some(s) => s.to_string(),
    };
    if let Some(Value::Array(content)) = map.get_mut("content") {
        let has_text = content
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("text"));
        if !has_text {
            let mut block = Map::new();
            block.insert("type".into(), Value::from("text"));
            block.insert("text".into(), Value::from(structured));
            content.push(Value::Object(block));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::schema::FixKind;
    use serde_json::json;

    fn shape(method: &str, v: Value) -> Value {
        shape_result(method, v)
            .map(|(v, _)| v)
            .unwrap_or(Value::Null)
    }

    #[test]
    fn result_kinds() {
        assert_eq!(result_kind(&json!({})), ResultKind::Complete);
        assert_eq!(
            result_kind(&json!({"resultType":"complete"})),
            ResultKind::Complete
        );
        assert_eq!(
            result_kind(&json!({"resultType":"input_required"})),
            ResultKind::InputRequired
        );
        assert_eq!(
            result_kind(&json!({"resultType":"task"})),
            ResultKind::Unknown("task".into())
        );
        assert_eq!(
            result_kind(&json!({"resultType":3})),
            ResultKind::Unknown("?".into())
        );
    }

    #[test]
    fn r1_cache_members_and_server_info_removed_other_meta_kept() {
        let r = shape(
            "prompts/get",
            json!({"resultType":"complete","ttlMs":5,"cacheScope":"public","messages":[],
                   "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"},"k":1}}),
        );
        assert_eq!(r, json!({"messages":[],"_meta":{"k":1}}));
        let r = shape(
            "prompts/get",
            json!({"_meta":{"io.modelcontextprotocol/serverInfo":{}}}),
        );
        assert_eq!(r, json!({}));
        let r = shape("prompts/get", json!({"_meta":{}}));
        assert_eq!(r, json!({"_meta":{}}), "an empty _meta of the server stays");
    }

    #[test]
    fn r4_non_string_next_cursor_removed_on_lists_only() {
        for m in [
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        ] {
            for c in [json!(null), json!(2), json!({}), json!(false)] {
                let r = shape(m, json!({"nextCursor":c}));
                assert!(r.get("nextCursor").is_none(), "{m} {c}");
            }
            assert_eq!(shape(m, json!({"nextCursor":"p2"}))["nextCursor"], "p2");
            assert_eq!(shape(m, json!({"nextCursor":""}))["nextCursor"], "");
        }
        assert_eq!(
            shape("prompts/get", json!({"nextCursor":null}))["nextCursor"],
            Value::Null
        );
    }

    #[test]
    fn r5_call_result_gets_a_content_array() {
        assert_eq!(
            shape(
                "tools/call",
                json!({"resultType":"complete","isError":true})
            ),
            json!({"isError":true,"content":[]})
        );
        assert_eq!(
            shape("tools/call", json!({"content":"x"})),
            json!({"content":[]})
        );
        let ok = json!({"content":[{"type":"text","text":"5"}]});
        assert_eq!(shape("tools/call", ok.clone()), ok);
    }

    #[test]
    fn o11_structured_content_kept_and_text_block_added() {
        assert_eq!(
            shape("tools/call", json!({"structuredContent":[1,2]})),
            json!({"structuredContent":[1,2],"content":[{"type":"text","text":"[1,2]"}]})
        );
        assert_eq!(
            shape(
                "tools/call",
                json!({"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"text":"hi","length":2}})
            ),
            json!({"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"{\"text\":\"hi\",\"length\":2}"}],
                   "structuredContent":{"text":"hi","length":2}})
        );
        let with_text =
            json!({"content":[{"type":"text","text":"2 bytes"}],"structuredContent":{"a":1}});
        assert_eq!(shape("tools/call", with_text.clone()), with_text);
        assert_eq!(
            shape("tools/call", json!({"structuredContent":null})),
            json!({"structuredContent":null,"content":[]})
        );
        assert_eq!(
            shape("tools/call", json!({"structuredContent":0}))["content"],
            json!([{"type":"text","text":"0"}])
        );
    }

    #[test]
    fn r6_tools_list_repairs_and_reports_fixes() {
        let (r, fixes) = shape_result(
            "tools/list",
            json!({"tools":[
                {"name":"bare","inputSchema":{"type":"object","properties":{"v":{"type":"array"}}},"annotations":{"readOnlyHint":true},"icons":[{"src":"data:x"}]},
                {"name":"out","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"type":"integer"}}},
                {"name":"keep","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}},
                {"name":"truth","inputSchema":{"type":"object"},"outputSchema":true},
                "not a tool"
            ],"nextCursor":null}),
        )
        .expect("object");
        assert_eq!(
            fixes,
            vec![ToolFix {
                tool: "bare".into(),
                fix: Fix {
                    kind: FixKind::ItemsAdded,
                    pointer: "/properties/v".into()
                }
            }]
        );
        assert_eq!(
            r["tools"][0]["inputSchema"]["properties"]["v"]["items"],
            json!({})
        );
        assert_eq!(r["tools"][0]["annotations"], json!({"readOnlyHint":true}));
        assert_eq!(r["tools"][0]["icons"], json!([{"src":"data:x"}]));
        assert!(r["tools"][1].get("outputSchema").is_none());
        assert_eq!(r["tools"][2]["outputSchema"], json!({"type":"object"}));
        assert!(r["tools"][3].get("outputSchema").is_none());
        assert_eq!(r["tools"][4], "not a tool");
        assert!(r.get("nextCursor").is_none());
    }

    #[test]
    fn non_object_result_is_refused() {
        assert!(shape_result("tools/call", json!([1])).is_none());
        assert!(shape_result("tools/list", json!(null)).is_none());
    }

    #[test]
    fn unknown_members_pass_unchanged() {
        let r = json!({"contents":[{"uri":"ui://app","mimeType":"text/html;profile=mcp-app","text":"<p>","_meta":{"ui":{}}}],"x-extra":{"deep":[1,{"a":null}]}});
        assert_eq!(shape("resources/read", r.clone()), r);
    }
}
