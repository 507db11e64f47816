//! VS Code's view of a server: the tool ids it would make and its
//! draft-07 check of the input schemas, which omits each tool that fails (R6 check a).
use serde_json::Value;

/// `McpToolName.Prefix`.
const PREFIX: &str = "mcp_";
/// `MaxPrefixLen` (18) minus `mcp_` minus one: the characters of the server name in a prefix.
const NAME_LEN: usize = 13;
/// `McpToolName.MaxLength`.
const MAX_LEN: usize = 64;

/// The name VS Code prefixes tools with: `serverInfo.title || serverInfo.name`.
pub fn preferred_name(server_info: &Value) -> String {
    let title = server_info
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let name = server_info
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("");
    title.unwrap_or(name).to_string()
}

/// The prefix of the `instance`-th server (1-based) with this preferred name: lower case, each
/// run of characters outside `[a-z0-9_.-]` one `_`, cut to 13 characters; the first server gets
/// `_`, the n-th gets `n_` and one character less of the name.
pub fn prefix(name: &str, instance: usize) -> String {
    let mut clean = String::new();
    let mut in_bad_run = false;
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-') {
            clean.push(c);
            in_bad_run = false;
        } else if !in_bad_run {
            clean.push('_');
            in_bad_run = true;
        }
    }
    let suffix = if instance <= 1 {
        "_".to_string()
    } else {
        format!("{instance}_")
    };
    let keep = NAME_LEN + 1 - suffix.len();
    let cut: String = clean.chars().take(keep).collect();
    format!("{PREFIX}{cut}{suffix}")
}

/// The id of a tool: the prefix, then the tool name with `_` for each character outside
/// `[A-Za-z0-9_-]` (a `.` too), cut to 64 characters.
pub fn tool_id(prefix: &str, tool: &str) -> String {
    let name: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{name}").chars().take(MAX_LEN).collect()
}

/// The tools VS Code would omit, each with the reason: its `inputSchema` is not a valid draft-07
/// schema (the workbench validates it against the draft-07 meta-schema).
pub fn omitted_tools(tools: &[Value]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for tool in tools {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let Some(schema) = tool.get("inputSchema") else {
            out.push((name, "no inputSchema".into()));
            continue;
        };
        if let Err(e) = jsonschema::draft7::meta::validate(schema) {
            out.push((name, format!("invalid JSON parameters: {e}")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefixes_cut_the_name_to_13_characters() {
        assert_eq!(prefix("bridge-fixture-server", 1), "mcp_bridge-fixtur_");
        assert_eq!(
            tool_id(&prefix("bridge-fixture-server", 1), "add"),
            "mcp_bridge-fixtur_add"
        );
    }

    #[test]
    fn a_second_server_with_the_same_name_gets_a_suffix() {
        assert_eq!(
            tool_id(&prefix("bridge-fixture-server", 2), "add"),
            "mcp_bridge-fixtu2_add"
        );
    }

    #[test]
    fn bad_characters_become_one_underscore_and_case_is_lowered() {
        assert_eq!(prefix("My  Server!", 1), "mcp_my_server__");
        assert_eq!(prefix("a.b", 1), "mcp_a.b_");
    }

    #[test]
    fn the_title_wins_over_the_name() {
        assert_eq!(
            preferred_name(&json!({"name":"n","title":"Fixture"})),
            "Fixture"
        );
        assert_eq!(preferred_name(&json!({"name":"n"})), "n");
        assert_eq!(preferred_name(&json!({"name":"n","title":""})), "n");
    }

    #[test]
    fn tool_names_lose_dots_and_ids_stop_at_64() {
        assert_eq!(tool_id("mcp_x_", "a.b"), "mcp_x_a_b");
        let long = "t".repeat(100);
        assert_eq!(tool_id("mcp_x_", &long).len(), 64);
    }

    #[test]
    fn draft07_failures_are_omitted_with_a_reason() {
        let tools = vec![
            json!({"name":"ok","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}),
            json!({"name":"bad","inputSchema":{"type":"object","properties":{"a":{"type":"strin"}}}}),
        ];
        let omitted = omitted_tools(&tools);
        assert_eq!(omitted.len(), 1);
        assert_eq!(omitted[0].0, "bad");
    }
}
