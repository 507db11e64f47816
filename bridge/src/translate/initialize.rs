//! R1, C2, O10, O11: `initialize` of VS Code against `server/discover` of the upstream server.
//!
//! Pure functions: the parameters of `initialize`, the capabilities that go upstream in the
//! `_meta` of every request, and the `initialize` result made from the discover result.

use serde_json::{Map, Value, json};

/// The revision that VS Code gets in the `initialize` result (R1: VS Code ignores it).
pub const REPLY_PROTOCOL_VERSION: &str = "2025-11-25";
/// The key of the server information in the `_meta` of a 2026-07-28 result.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// O11: the Tasks extension never crosses the bridge (the bridge declares no tasks).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// What the bridge keeps of VS Code's `initialize`.
#[derive(Clone, Debug, PartialEq)]
pub struct InitializeParams {
    /// The `clientInfo` object as VS Code sent it (lossless, it goes upstream unchanged).
    pub client_info: Value,
    /// The capabilities as VS Code sent them (`{}` when absent).
    pub capabilities: Value,
    /// L1: the params as VS Code sent them, for the `initialize` of an older upstream server.
    pub raw: Value,
}

impl InitializeParams {
    /// `<name> <version>` of the client, for the info line `initialize from <name> <version>`.
    pub fn client_label(&self) -> String {
        let name = self
            .client_info
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let version = self
            .client_info
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("");
        format!("{name} {version}")
    }
}

/// R1: reads the parameters of `initialize`. `protocolVersion` (string) and `clientInfo` (with
/// string `name` and `version`) are required; without them the request gets -32602.
pub fn parse_initialize(params: Option<&Value>) -> Option<InitializeParams> {
    let params = params?.as_object()?;
    params.get("protocolVersion")?.as_str()?;
    let info = params.get("clientInfo")?;
    info.get("name")?.as_str()?;
    info.get("version")?.as_str()?;
    let capabilities = match params.get("capabilities") {
        Some(Value::Object(caps)) => Value::Object(caps.clone()),
        _ => json!({}),
    };
    Some(InitializeParams {
        client_info: info.clone(),
        capabilities,
        raw: Value::Object(params.clone()),
    })
}

fn object_members(value: &Value) -> Option<Map<String, Value>> {
    let map = value.as_object()?;
    Some(
        map.iter()
            .filter(|(_, v)| v.is_object())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

fn keep_objects(source: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| {
            source
                .get(*k)
                .filter(|v| v.is_object())
                .map(|v| ((*k).to_owned(), v.clone()))
        })
        .collect()
}

/// R1, C2: the client capabilities of 2026-07-28 from those of VS Code. Each member is
/// re-shaped on its own, and a member that does not fit is dropped alone: `roots` loses
/// `listChanged`, `sampling` keeps `context`/`tools` objects, `elicitation` keeps `form`/`url`
/// objects, `experimental` and `extensions` keep their object members, the Tasks extension and
/// `tasks` never go upstream.
pub fn upstream_capabilities(client: &Value) -> Value {
    let mut out = Map::new();
    let Some(caps) = client.as_object() else {
        return Value::Object(out);
    };
    if let Some(experimental) = caps.get("experimental").and_then(object_members) {
        out.insert("experimental".into(), Value::Object(experimental));
    }
    if caps.get("roots").is_some_and(Value::is_object) {
        out.insert("roots".into(), json!({}));
    }
    if let Some(sampling) = caps.get("sampling").and_then(Value::as_object) {
        out.insert(
            "sampling".into(),
            Value::Object(keep_objects(sampling, &["context", "tools"])),
        );
    }
    if let Some(elicitation) = caps.get("elicitation").and_then(Value::as_object) {
        out.insert(
            "elicitation".into(),
            Value::Object(keep_objects(elicitation, &["form", "url"])),
        );
    }
    if let Some(mut extensions) = caps.get("extensions").and_then(object_members) {
        extensions.remove(TASKS_EXTENSION);
        out.insert("extensions".into(), Value::Object(extensions));
    }
    Value::Object(out)
}

/// R1: the server information when the upstream server sends none that is valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInfoFallback {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

/// R1: the fallback name: `--name`, else the file name of the command without its extension,
/// else the name of the bridge. Both `/` and `\` separate folders, so that a Windows path
/// gives the same name on every host.
pub fn fallback_name(name_option: Option<&str>, command: &str) -> String {
    if let Some(name) = name_option.filter(|n| !n.is_empty()) {
        return name.to_owned();
    }
    let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let stem = match file.rfind('.') {
        Some(0) | None => file,
        Some(dot) => &file[..dot],
    };
    if stem.is_empty() {
        crate::log::TAG.to_owned()
    } else {
        stem.to_owned()
    }
}

fn valid_icon(icon: &Value) -> bool {
    let Some(icon) = icon.as_object() else {
        return false;
    };
    icon.get("src").is_some_and(Value::is_string)
        && icon.get("mimeType").is_none_or(Value::is_string)
        && icon
            .get("sizes")
            .is_none_or(|s| s.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
        && icon
            .get("theme")
            .is_none_or(|t| t == "light" || t == "dark")
}

/// R1, O10: the server information of the discover result, when it is a valid
/// `Implementation` (non-empty name, version, valid optional members). Only `name`, `title`,
/// `version`, `icons`, `description` and `websiteUrl` are kept.
pub fn server_info(discover: &Value) -> Option<Value> {
    let info = discover.get("_meta")?.get(SERVER_INFO_KEY)?.as_object()?;
    let name = info.get("name")?.as_str()?;
    if name.is_empty() {
        return None;
    }
    info.get("version")?.as_str()?;
    for key in ["title", "description", "websiteUrl"] {
        if info.get(key).is_some_and(|v| !v.is_string()) {
            return None;
        }
    }
    if let Some(icons) = info.get("icons")
        && !icons.as_array().is_some_and(|a| a.iter().all(valid_icon))
    {
        return None;
    }
    let mut out = Map::new();
    for key in [
        "name",
        "title",
        "version",
        "icons",
        "description",
        "websiteUrl",
    ] {
        if let Some(v) = info.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    Some(Value::Object(out))
}

/// R1, O11: the capabilities of the `initialize` result: the object members of the discover
/// capabilities, never `tasks`, and `extensions` without the Tasks extension.
pub fn result_capabilities(discover: &Value) -> Value {
    let mut out = Map::new();
    if let Some(caps) = discover.get("capabilities").and_then(Value::as_object) {
        for (key, value) in caps {
            if key == "tasks" || !value.is_object() {
                continue;
            }
            if key == "extensions" {
                let mut ext = object_members(value).unwrap_or_default();
                ext.remove(TASKS_EXTENSION);
                out.insert(key.clone(), Value::Object(ext));
            } else {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// R1: the `initialize` result from the discover result. `protocolVersion` is always
/// 2025-11-25; `instructions` stays (O10); `resultType`, `ttlMs`, `cacheScope`,
/// `supportedVersions` and `_meta` never reach VS Code.
pub fn initialize_result(discover: &Value, fallback: &ServerInfoFallback) -> Value {
    let info = server_info(discover)
        .unwrap_or_else(|| json!({"name": fallback.name, "version": fallback.version}));
    let mut out = Map::new();
    out.insert(
        "protocolVersion".into(),
        Value::from(REPLY_PROTOCOL_VERSION),
    );
    out.insert("capabilities".into(), result_capabilities(discover));
    out.insert("serverInfo".into(), info);
    if let Some(instructions) = discover.get("instructions").filter(|v| v.is_string()) {
        out.insert("instructions".into(), instructions.clone());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vscode_initialize() -> Value {
        json!({"protocolVersion":"2025-11-25",
            "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},
              "tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}},
              "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},
            "clientInfo":{"name":"Visual Studio Code","version":"1.140.0"}})
    }

    #[test]
    fn r1_parse_initialize_of_vscode() {
        let p = parse_initialize(Some(&vscode_initialize())).expect("valid");
        assert_eq!(
            p.client_info,
            json!({"name":"Visual Studio Code","version":"1.140.0"})
        );
        assert_eq!(p.client_label(), "Visual Studio Code 1.140.0");
        assert!(p.capabilities.get("tasks").is_some());
    }

    #[test]
    fn r1_parse_initialize_refuses_missing_members() {
        for bad in [
            json!({}),
            json!({"clientInfo":{"name":"a","version":"1"}}),
            json!({"protocolVersion":"2025-11-25"}),
            json!({"protocolVersion":"2025-11-25","clientInfo":{"name":"a"}}),
            json!({"protocolVersion":"2025-11-25","clientInfo":{"version":"1"}}),
            json!({"protocolVersion":1,"clientInfo":{"name":"a","version":"1"}}),
            json!({"protocolVersion":"x","clientInfo":{"name":1,"version":"1"}}),
            json!([1]),
        ] {
            assert_eq!(parse_initialize(Some(&bad)), None, "{bad}");
        }
        assert_eq!(parse_initialize(None), None);
        let p = parse_initialize(Some(
            &json!({"protocolVersion":"x","clientInfo":{"name":"a","version":"1"},"capabilities":7}),
        ));
        assert_eq!(p.map(|p| p.capabilities), Some(json!({})));
    }

    #[test]
    fn r1_upstream_capabilities_of_vscode() {
        let caps = vscode_initialize()["capabilities"].clone();
        let mut with_exp = caps.clone();
        with_exp["experimental"] = json!({"x":{"a":1},"y":2});
        with_exp["extensions"]["io.modelcontextprotocol/tasks"] = json!({});
        assert_eq!(
            upstream_capabilities(&with_exp),
            json!({"experimental":{"x":{"a":1}},"roots":{},"sampling":{},"elicitation":{"form":{},"url":{}},
                   "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}})
        );
    }

    #[test]
    fn c2_upstream_capabilities_of_the_copilot_harness() {
        let caps = json!({"sampling":{},"elicitation":{"form":{},"url":{}}});
        assert_eq!(upstream_capabilities(&caps), caps);
    }

    #[test]
    fn r1_invalid_capability_members_are_dropped_one_by_one() {
        let caps = json!({"roots":true,"elicitation":[],"sampling":{"context":7,"tools":{},"other":{}},
                          "experimental":3,"extensions":{"a":1,"b":{}},"unknown":{}});
        assert_eq!(
            upstream_capabilities(&caps),
            json!({"sampling":{"tools":{}},"extensions":{"b":{}}})
        );
        let caps = json!({"elicitation":{"form":true,"url":{}},"roots":{"listChanged":false}});
        assert_eq!(
            upstream_capabilities(&caps),
            json!({"roots":{},"elicitation":{"url":{}}})
        );
        assert_eq!(upstream_capabilities(&json!(null)), json!({}));
        assert_eq!(
            upstream_capabilities(&json!({"elicitation":{}})),
            json!({"elicitation":{}})
        );
    }

    fn discover() -> Value {
        json!({"resultType":"complete","ttlMs":60000,"cacheScope":"public","supportedVersions":["2026-07-28"],
          "capabilities":{"experimental":{"e":{}},"logging":{},"completions":{},"prompts":{"listChanged":true},
            "resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"tasks":{"list":{}},
            "extensions":{"io.modelcontextprotocol/ui":{},"io.modelcontextprotocol/tasks":{}}},
          "instructions":"Use the tools.",
          "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fixture","title":"Fixture","version":"1.2.3",
            "icons":[{"src":"data:image/png;base64,AA==","mimeType":"image/png"}],"description":"A server.",
            "websiteUrl":"https://example.com","extra":1}}})
    }

    fn fallback() -> ServerInfoFallback {
        ServerInfoFallback {
            name: "fallback".into(),
            version: "0.1.0".into(),
        }
    }

    #[test]
    fn r1_initialize_result_from_discover() {
        assert_eq!(
            initialize_result(&discover(), &fallback()),
            json!({"protocolVersion":"2025-11-25","capabilities":{"experimental":{"e":{}},"logging":{},"completions":{},
              "prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},
              "extensions":{"io.modelcontextprotocol/ui":{}}},
             "serverInfo":{"name":"fixture","title":"Fixture","version":"1.2.3",
               "icons":[{"src":"data:image/png;base64,AA==","mimeType":"image/png"}],"description":"A server.",
               "websiteUrl":"https://example.com"},"instructions":"Use the tools."})
        );
    }

    #[test]
    fn r1_capabilities_keep_object_members_only_and_never_tasks() {
        let d = json!({"capabilities":{"tools":true,"logging":{},"tasks":{},"prompts":null,"x-new":{"a":1},
            "extensions":{"io.modelcontextprotocol/tasks":{},"n":3,"ok":{}}}});
        assert_eq!(
            result_capabilities(&d),
            json!({"logging":{},"x-new":{"a":1},"extensions":{"ok":{}}})
        );
        assert_eq!(result_capabilities(&json!({})), json!({}));
        assert_eq!(result_capabilities(&json!({"capabilities":[1]})), json!({}));
    }

    #[test]
    fn r1_server_info_fallback_cases() {
        let base = discover();
        let cases: Vec<Value> = vec![
            json!(null),
            json!({}),
            json!({"name":"","version":"1"}),
            json!({"name":"n"}),
            json!({"version":"1"}),
            json!({"name":1,"version":"1"}),
            json!({"name":"n","version":"1","title":3}),
            json!({"name":"n","version":"1","icons":{}}),
            json!({"name":"n","version":"1","icons":[{"mimeType":"image/png"}]}),
            json!({"name":"n","version":"1","icons":[{"src":"data:","sizes":"48x48"}]}),
            json!({"name":"n","version":"1","icons":[{"src":"data:","theme":"blue"}]}),
            json!({"name":"n","version":"1","websiteUrl":false}),
        ];
        for info in cases {
            let mut d = base.clone();
            d["_meta"]["io.modelcontextprotocol/serverInfo"] = info.clone();
            let r = initialize_result(&d, &fallback());
            assert_eq!(
                r["serverInfo"],
                json!({"name":"fallback","version":"0.1.0"}),
                "{info}"
            );
        }
        let mut d = base.clone();
        d.as_object_mut().map(|m| m.remove("_meta"));
        assert_eq!(
            initialize_result(&d, &fallback())["serverInfo"]["name"],
            "fallback"
        );
        let mut d = base;
        d["_meta"]["io.modelcontextprotocol/serverInfo"] = json!({"name":"n","version":"1","icons":[{"src":"data:x","sizes":["48x48"],"theme":"dark"}]});
        assert_eq!(
            initialize_result(&d, &fallback())["serverInfo"],
            json!({"name":"n","version":"1","icons":[{"src":"data:x","sizes":["48x48"],"theme":"dark"}]})
        );
    }

    #[test]
    fn r1_instructions_kept_only_as_string() {
        let r = initialize_result(&json!({"instructions":5}), &fallback());
        assert!(r.get("instructions").is_none());
        assert!(r.get("_meta").is_none());
        assert!(r.get("resultType").is_none());
    }

    #[test]
    fn r1_fallback_name_from_option_or_command() {
        assert_eq!(fallback_name(Some("demo"), "/x/y"), "demo");
        assert_eq!(fallback_name(Some(""), "/x/server.js"), "server");
        assert_eq!(
            fallback_name(None, "/abs/bridge-fixture-server"),
            "bridge-fixture-server"
        );
        assert_eq!(fallback_name(None, "C:\\tools\\srv.exe"), "srv");
        assert_eq!(fallback_name(None, "node"), "node");
        assert_eq!(fallback_name(None, "a.tar.gz"), "a.tar");
        assert_eq!(fallback_name(None, ".hidden"), ".hidden");
        assert_eq!(fallback_name(None, "/x/"), "mcp-bridge-vscode");
        assert_eq!(fallback_name(None, ""), "mcp-bridge-vscode");
    }
}
