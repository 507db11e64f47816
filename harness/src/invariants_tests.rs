//! Unit tests of the invariants checker.
use super::*;
use serde_json::json;

fn line(v: Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

fn with_request(id: Value, method: &str) -> Checker {
    let mut c = Checker::default();
    c.client_sent(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":{}}));
    c
}

#[test]
fn a_line_that_is_not_json_breaks_r7() {
    let mut c = Checker::default();
    assert!(c.toward_client(b"hello").is_none());
    assert!(c.problems[0].starts_with("R7"));
}

#[test]
fn a_null_cursor_breaks_r4() {
    let mut c = with_request(json!(4), "tools/list");
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":4,"result":{"tools":[],"nextCursor":null}}),
    ));
    assert!(
        c.problems.iter().any(|p| p.starts_with("R4")),
        "{:?}",
        c.problems
    );
}

#[test]
fn modern_members_and_meta_break_r8() {
    let mut c = with_request(json!(1), "tools/call");
    c.toward_client(&line(json!({"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{}}}})));
    assert_eq!(
        c.problems.iter().filter(|p| p.starts_with("R8")).count(),
        2,
        "{:?}",
        c.problems
    );
}

#[test]
fn falsy_items_break_r6_and_truthy_items_do_not() {
    let mut c = with_request(json!(2), "tools/list");
    let tools = json!([{"name":"t","inputSchema":{"type":"object","properties":{
        "a":{"type":"array"},"b":{"type":"array","items":false},"c":{"type":"array","items":0},
        "d":{"anyOf":[{"type":"array","items":""}]},"ok":{"type":"array","items":{}},
        "t":{"type":"array","items":true}}}}]);
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":2,"result":{"tools":tools}}),
    ));
    let r6: Vec<_> = c.problems.iter().filter(|p| p.starts_with("R6")).collect();
    assert_eq!(r6.len(), 4, "{r6:?}");
    assert!(r6.iter().any(|p| p.contains("/properties/d/anyOf/0")));
}

#[test]
fn a_call_result_without_content_breaks_r5() {
    let mut c = with_request(json!(3), "tools/call");
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":3,"result":{"isError":true}}),
    ));
    assert!(c.problems.iter().any(|p| p.starts_with("R5")));
}

#[test]
fn bridge_requests_need_unique_b_ids() {
    let mut c = Checker::default();
    let req = |id: Value| line(json!({"jsonrpc":"2.0","id":id,"method":"roots/list"}));
    c.toward_client(&req(json!("b-1")));
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    c.toward_client(&req(json!("b-1")));
    c.toward_client(&req(json!(7)));
    assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
}

#[test]
fn an_upstream_cancellation_must_not_reach_vs_code() {
    let mut c = Checker::default();
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}),
    ));
    assert!(c.problems[0].contains("cancel"));
    let mut c = Checker::default();
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":"b-1","method":"roots/list"}),
    ));
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1"}}),
    ));
    assert!(c.problems.is_empty(), "{:?}", c.problems);
}

#[test]
fn each_request_is_answered_at_most_once_and_only_when_sent() {
    let mut c = with_request(json!(1), "ping");
    c.toward_client(&line(json!({"jsonrpc":"2.0","id":1,"result":{}})));
    assert!(c.problems.is_empty());
    c.toward_client(&line(json!({"jsonrpc":"2.0","id":1,"result":{}})));
    c.toward_client(&line(json!({"jsonrpc":"2.0","id":9,"result":{}})));
    assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
    // An error for an id recovered from a line that was not valid is allowed.
    let mut c = Checker::default();
    c.client_sent_raw(r#"{"jsonrpc":"2.0","id":5,"method":"#);
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":5,"error":{"code":-32700,"message":"x"}}),
    ));
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}),
    ));
    assert!(c.problems.is_empty(), "{:?}", c.problems);
}

#[test]
fn no_tasks_in_the_initialize_result() {
    let mut c = with_request(json!(1), "initialize");
    c.toward_client(&line(json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"serverInfo":{"name":"a","version":"1"}}})));
    assert!(c.problems.iter().any(|p| p.starts_with("tasks")));
}

#[test]
fn upstream_requests_carry_only_allowed_meta() {
    let mut c = Checker::default();
    c.at_upstream(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{},"_meta":{
        "progressToken":1,"vscode.conversationId":"c","baggage":"b",
        "io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"tasks":{}}}}}).to_string());
    let joined = c.problems.join("\n");
    assert!(joined.contains("task"), "{joined}");
    assert!(joined.contains("baggage"));
    assert!(joined.contains("roots.listChanged"));
    assert!(!joined.contains("vscode.conversationId"));
}

#[test]
fn frames_are_checked_against_their_own_definition() {
    let Some(dir) = crate::schema::default_spec_dir() else {
        crate::skip::skip("harness invariants schema test: no specification folder (MCP_SPEC_DIR)");
        return;
    };
    let legacy = SchemaSet::load(&dir, crate::schema::LEGACY)
        .map(Arc::new)
        .ok();
    let mut c = Checker::new(Schemas {
        legacy,
        modern: None,
    });
    c.client_sent(&json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}));
    c.toward_client(&line(
        json!({"jsonrpc":"2.0","id":4,"result":{"tools":[{"inputSchema":{"type":"object"}}]}}),
    ));
    assert!(
        c.problems.iter().any(|p| p.contains("ListToolsResult")),
        "{:?}",
        c.problems
    );
}

/// A checker of an older upstream with both schema sets, or `None` without the specification.
fn older_upstream_checker() -> Option<Checker> {
    let Some(dir) = crate::schema::default_spec_dir() else {
        crate::skip::skip(
            "harness older-upstream schema test: no specification folder (MCP_SPEC_DIR)",
        );
        return None;
    };
    let load = |revision| SchemaSet::load(&dir, revision).map(Arc::new).ok();
    let mut c = Checker::new(Schemas {
        legacy: load(crate::schema::LEGACY),
        modern: load(crate::schema::MODERN),
    });
    c.upstream_legacy = true;
    Some(c)
}

#[test]
fn an_older_upstream_and_the_bridges_answers_are_checked_against_2025_11_25() {
    let Some(mut c) = older_upstream_checker() else {
        return;
    };
    // The detection's server/discover is a request of 2026-07-28; initialize of 2025-11-25.
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    c.at_upstream(
        &json!({"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":meta}})
            .to_string(),
    );
    c.at_upstream(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}).to_string());
    c.from_upstream(&json!({"jsonrpc":"2.0","id":0,"method":"roots/list"}).to_string());
    c.at_upstream(
        &json!({"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///w"}]}}).to_string(),
    );
    assert!(c.problems.is_empty(), "{:?}", c.problems);

    c.from_upstream(&json!({"jsonrpc":"2.0","id":1,"method":"roots/list"}).to_string());
    c.at_upstream(&json!({"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":5}]}}).to_string());
    assert!(
        c.problems
            .iter()
            .any(|p| p.contains("schema 2025-11-25") && p.contains("ListRootsResult")),
        "{:?}",
        c.problems
    );
}

#[test]
fn an_answer_to_no_request_of_the_older_upstream_is_a_problem() {
    let Some(mut c) = older_upstream_checker() else {
        return;
    };
    c.at_upstream(&json!({"jsonrpc":"2.0","id":7,"result":{}}).to_string());
    assert!(
        c.problems
            .iter()
            .any(|p| p.contains("which the upstream did not ask")),
        "{:?}",
        c.problems
    );
}

#[test]
fn a_frame_of_the_older_upstream_that_breaks_its_schema_is_a_problem() {
    let Some(mut c) = older_upstream_checker() else {
        return;
    };
    c.from_upstream(
        &json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}})
            .to_string(),
    );
    assert!(
        c.problems
            .iter()
            .any(|p| p.contains("ResourceUpdatedNotification")),
        "{:?}",
        c.problems
    );
}
