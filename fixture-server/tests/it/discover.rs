//! Discovery, the lists and the `_meta` envelope: the identity and capabilities in
//! `server/discover` (R1), every tool of the list with its annotations, the pages of
//! `--many-tools` (R4), prompts, resources, completion, and the refusals of the envelope.

use crate::support::{Server, meta};
use harness::fixture::TOOLS;
use serde_json::{Value, json};

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn discover_names_the_versions_the_capabilities_and_the_server() {
    let mut server = Server::new();
    let result = server.result(1, "server/discover", json!({}));
    let versions = result["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")), "{result}");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["capabilities"],
        json!({
            "extensions": {"io.modelcontextprotocol/ui": {}},
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "tools": {"listChanged": true}
        })
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "bridge-fixture-server", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(
        result["instructions"],
        "The upstream server of the mcp-bridge-vscode tests."
    );
}

#[test]
fn the_tool_list_has_every_tool_and_its_annotations() {
    let mut server = Server::new();
    let list = server.result(1, "tools/list", json!({}));
    assert_eq!(
        names(&list, "tools"),
        harness::fixture::tool_names().collect::<Vec<_>>()
    );
    assert!(list.get("nextCursor").is_none(), "{list}");
    for tool in list["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let read_only = tool["annotations"]["readOnlyHint"] == json!(true);
        assert_eq!(read_only, TOOLS.contains(&(name, true)), "{tool}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    let show = &list["tools"][21];
    assert_eq!(show["_meta"]["ui"]["resourceUri"], "ui://fixture/view");
    let bare = &list["tools"][4]["inputSchema"];
    assert!(bare["properties"]["values"].get("items").is_none());
    assert_eq!(bare["properties"]["pair"]["items"], json!(false));
    let structured = &list["tools"][5];
    assert_eq!(
        structured["outputSchema"]["required"],
        json!(["text", "length"])
    );
}

#[test]
fn many_tools_come_in_pages_without_a_null_cursor() {
    let mut server = Server::start(&["--many-tools", "120"]);
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1..10 {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let page = server.result(id, "tools/list", params);
        all.extend(names(&page, "tools"));
        match page.get("nextCursor") {
            Some(Value::String(next)) => cursor = Some(next.clone()),
            None => break,
            Some(other) => panic!("a cursor that is not a string: {other}"),
        }
    }
    assert_eq!(all.len(), 22 + 120);
    assert_eq!(all[22], "tool_0");
    assert_eq!(all.last().unwrap(), "tool_119");
    let result = server.call(20, "tool_7", json!({}));
    assert_eq!(crate::support::text(&result), "tool_7");
    let error = server.error(21, "tools/call", json!({"name": "tool_120"}));
    assert_eq!(error["code"], -32602);
    let error = server.error(22, "tools/list", json!({"cursor": "nonsense"}));
    assert_eq!(error["code"], -32602);
}

#[test]
fn prompts_resources_and_completion() {
    let mut server = Server::new();
    let prompts = server.result(1, "prompts/list", json!({}));
    assert_eq!(names(&prompts, "prompts"), ["greet", "ask_name", "toggled"]);
    assert_eq!(prompts["prompts"][0]["arguments"][0]["required"], true);
    let greet = server.result(
        2,
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(greet["messages"][0]["content"]["text"], "Hello, Ada.");
    assert_eq!(greet["description"], "A greeting");
    let toggled = server.result(3, "prompts/get", json!({"name": "toggled"}));
    assert_eq!(toggled["messages"][0]["content"]["text"], "toggled");
    let error = server.error(4, "prompts/get", json!({"name": "greet"}));
    assert_eq!(error["code"], -32602);

    let resources = server.result(5, "resources/list", json!({}));
    assert_eq!(
        resources["resources"],
        json!([
            {"uri": "file:///fixture/notes.txt", "name": "notes", "description": "The notes of the fixture", "mimeType": "text/plain"},
            {"uri": "ui://fixture/view", "name": "view", "description": "The view of the tool show", "mimeType": "text/html;profile=mcp-app"}
        ])
    );
    let notes = server.result(
        6,
        "resources/read",
        json!({"uri": "file:///fixture/notes.txt"}),
    );
    assert_eq!(notes["contents"][0]["text"], "The notes of the fixture.");
    let view = server.result(7, "resources/read", json!({"uri": "ui://fixture/view"}));
    assert_eq!(view["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        view["contents"][0]["text"],
        "<p>The view of the fixture.</p>"
    );
    let error = server.error(8, "resources/read", json!({"uri": "file:///nothing"}));
    assert_eq!(error["code"], -32602);
    let templates = server.result(9, "resources/templates/list", json!({}));
    assert_eq!(templates["resourceTemplates"], json!([]));

    let completion = server.result(
        10,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
    );
    assert_eq!(
        completion["completion"],
        json!({"values": ["alpha", "beta"], "total": 2, "hasMore": false})
    );
}

#[test]
fn a_request_needs_the_meta_envelope() {
    let mut server = Server::new();
    // Before any session, and after the session began: -32602 each time.
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}));
    let (_, response) = server.response(1);
    assert_eq!(response["error"]["code"], -32602, "{response}");
    server.result(2, "tools/list", json!({}));
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}}));
    let (_, response) = server.response(3);
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let mut bad_level = meta();
    bad_level["io.modelcontextprotocol/logLevel"] = json!("loud");
    let error = server.error(4, "tools/call", json!({"name": "log", "_meta": bad_level}));
    assert_eq!(error["code"], -32602);
    let error = server.error(5, "tools/call", json!({"name": "no_such_tool"}));
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (json!(-32602), json!("Unknown tool: no_such_tool"))
    );
}
