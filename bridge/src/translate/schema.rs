//! R6: schema repair for VS Code.
//!
//! The Copilot extension stops every chat request when one tool schema has `type: "array"`
//! with an `items` value that is false in JavaScript (or missing). The bridge gives each such
//! array schema `items: {}`, anywhere in each tool `inputSchema`, and reports one fix per
//! schema with the JSON pointer. VS Code's draft-07 check (R6a) is not the bridge's job.

use serde_json::{Map, Value};

/// The deepest level of a schema that the walk examines (the root is level 0).
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// What the walk did at one place of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixKind {
    /// `items` was missing or falsy (`null`, `0`, `-0`, `0.0`, `""`): now `{}`.
    ItemsAdded,
    /// `items: false` became `items: {}` plus `maxItems` (the tuple length), so the array
    /// still allows no items after the tuple.
    ItemsFalseReplaced,
    /// The schema is deeper than [`MAX_SCHEMA_DEPTH`]; the part below was not examined.
    TooDeep,
}

/// One fix with its RFC 6901 pointer into the input schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub kind: FixKind,
    pub pointer: String,
}

/// Keywords whose value is one schema.
const SINGLE: [&str; 11] = [
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalItems",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value maps names to schemas.
const MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "dependencies",
    "dependentSchemas",
    "$defs",
    "definitions",
];
/// Keywords whose value is an array of schemas.
const ARRAYS: [&str; 4] = ["anyOf", "allOf", "oneOf", "prefixItems"];

/// RFC 6901 escaping of one reference token.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// False in JavaScript: `null`, `false`, `0`, `-0`, `0.0` and `""` (NaN has no JSON form).
pub fn js_falsy(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f == 0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// R6: repairs one input schema in place and returns the fixes. A second walk finds nothing.
pub fn repair_input_schema(schema: &mut Value) -> Vec<Fix> {
    let mut fixes = Vec::new();
    let mut pointer = String::new();
    walk(schema, 0, &mut pointer, &mut fixes);
    fixes
}

fn walk(schema: &mut Value, depth: usize, pointer: &mut String, fixes: &mut Vec<Fix>) {
    let Value::Object(node) = schema else {
        return;
    };
    if depth > MAX_SCHEMA_DEPTH {
        fixes.push(Fix {
            kind: FixKind::TooDeep,
            pointer: pointer.clone(),
        });
        return;
    }
    fix_node(node, pointer, fixes);
    for key in SINGLE {
        if let Some(child) = node.get_mut(key) {
            descend(child, depth, pointer, &[key], fixes);
        }
    }
    for key in MAPS {
        if let Some(Value::Object(map)) = node.get_mut(key) {
            for (name, child) in map.iter_mut() {
                descend(child, depth, pointer, &[key, name], fixes);
            }
        }
    }
    for key in ARRAYS {
        if let Some(Value::Array(list)) = node.get_mut(key) {
            for (i, child) in list.iter_mut().enumerate() {
                descend(child, depth, pointer, &[key, &i.to_string()], fixes);
            }
        }
    }
    match node.get_mut("items") {
        Some(Value::Array(list)) => {
            for (i, child) in list.iter_mut().enumerate() {
                descend(child, depth, pointer, &["items", &i.to_string()], fixes);
            }
        }
        Some(child) => descend(child, depth, pointer, &["items"], fixes),
        None => {}
    }
}

fn descend(
    child: &mut Value,
    depth: usize,
    pointer: &mut String,
    tokens: &[&str],
    fixes: &mut Vec<Fix>,
) {
    // An empty object has nothing to examine (this also covers an `items: {}` just added).
    if child.as_object().is_none_or(Map::is_empty) {
        return;
    }
    let len = pointer.len();
    for token in tokens {
        pointer.push('/');
        pointer.push_str(&escape_token(token));
    }
    walk(child, depth + 1, pointer, fixes);
    pointer.truncate(len);
}

fn fix_node(node: &mut Map<String, Value>, pointer: &str, fixes: &mut Vec<Fix>) {
    if node.get("type").and_then(Value::as_str) != Some("array") {
        return;
    }
    match node.get("items") {
        Some(Value::Bool(false)) => {
            let tuple = node
                .get("prefixItems")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            node.insert("items".into(), Value::Object(Map::new()));
            if !node.contains_key("maxItems") {
                node.insert("maxItems".into(), Value::from(tuple));
            }
            fixes.push(Fix {
                kind: FixKind::ItemsFalseReplaced,
                pointer: pointer.to_owned(),
            });
        }
        Some(items) if !js_falsy(items) => {}
        _ => {
            node.insert("items".into(), Value::Object(Map::new()));
            fixes.push(Fix {
                kind: FixKind::ItemsAdded,
                pointer: pointer.to_owned(),
            });
        }
    }
}

/// R6: true when an `outputSchema` can stay: its root has `type: "object"`.
pub fn output_schema_allowed(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(fixes: &[Fix]) -> Vec<(&str, FixKind)> {
        fixes
            .iter()
            .map(|f| (f.pointer.as_str(), f.kind.clone()))
            .collect()
    }

    #[test]
    fn r6_fixture_bare_array() {
        let mut s = json!({"type":"object","properties":{
            "values":{"type":"array","description":"Any values"},
            "pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false},
            "choice":{"anyOf":[{"type":"array"},{"type":"string"}]}},
            "required":["values"],"additionalProperties":false});
        let fixes = repair_input_schema(&mut s);
        assert_eq!(
            pointers(&fixes),
            vec![
                ("/properties/values", FixKind::ItemsAdded),
                ("/properties/pair", FixKind::ItemsFalseReplaced),
                ("/properties/choice/anyOf/0", FixKind::ItemsAdded),
            ]
        );
        assert_eq!(s["properties"]["values"]["items"], json!({}));
        assert_eq!(s["properties"]["pair"]["items"], json!({}));
        assert_eq!(s["properties"]["pair"]["maxItems"], json!(2));
        assert_eq!(s["properties"]["choice"]["anyOf"][0]["items"], json!({}));
        assert!(repair_input_schema(&mut s).is_empty(), "idempotent");
    }

    #[test]
    fn r6_every_falsy_items_value() {
        for items in [json!(null), json!(0), json!(-0.0), json!(0.0), json!("")] {
            let mut s = json!({"type":"array","items":items});
            let fixes = repair_input_schema(&mut s);
            assert_eq!(pointers(&fixes), vec![("", FixKind::ItemsAdded)], "{items}");
            assert_eq!(s, json!({"type":"array","items":{}}));
        }
        let mut s = json!({"type":"array"});
        assert_eq!(
            pointers(&repair_input_schema(&mut s)),
            vec![("", FixKind::ItemsAdded)]
        );
    }

    #[test]
    fn r6_items_false_keeps_an_existing_max_items() {
        let mut s = json!({"type":"array","items":false,"maxItems":5});
        repair_input_schema(&mut s);
        assert_eq!(s, json!({"type":"array","items":{},"maxItems":5}));
        let mut s = json!({"type":"array","items":false});
        repair_input_schema(&mut s);
        assert_eq!(s, json!({"type":"array","items":{},"maxItems":0}));
    }

    #[test]
    fn r6_truthy_items_type_arrays_and_other_cases_untouched() {
        for s in [
            json!({"type":"array","items":1}),
            json!({"type":"array","items":"x"}),
            json!({"type":"array","items":true}),
            json!({"type":"array","items":{}}),
            json!({"type":"array","items":[]}),
            json!({"type":["array","null"]}),
            json!({"type":"Array"}),
            json!({"type":"object"}),
            json!({}),
            json!(true),
        ] {
            let mut copy = s.clone();
            assert!(repair_input_schema(&mut copy).is_empty(), "{s}");
            assert_eq!(copy, s);
        }
    }

    #[test]
    fn r6_full_keyword_walk() {
        let bare = json!({"type":"array"});
        let mut s = json!({
            "additionalProperties": bare, "not": bare, "if": bare, "then": bare, "else": bare,
            "contains": bare, "additionalItems": bare, "propertyNames": bare,
            "unevaluatedItems": bare, "unevaluatedProperties": bare, "contentSchema": bare,
            "properties": {"p": bare}, "patternProperties": {"^x": bare},
            "dependencies": {"d": bare, "list": ["a"]}, "dependentSchemas": {"s": bare},
            "$defs": {"a/b": bare}, "definitions": {"t~": bare},
            "anyOf": [bare], "allOf": [bare], "oneOf": [bare], "prefixItems": [bare],
            "items": [bare]
        });
        let fixes = repair_input_schema(&mut s);
        let got: Vec<&str> = fixes.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(
            got,
            vec![
                "/additionalProperties",
                "/not",
                "/if",
                "/then",
                "/else",
                "/contains",
                "/additionalItems",
                "/propertyNames",
                "/unevaluatedItems",
                "/unevaluatedProperties",
                "/contentSchema",
                "/properties/p",
                "/patternProperties/^x",
                "/dependencies/d",
                "/dependentSchemas/s",
                "/$defs/a~1b",
                "/definitions/t~0",
                "/anyOf/0",
                "/allOf/0",
                "/oneOf/0",
                "/prefixItems/0",
                "/items/0",
            ]
        );
        assert!(fixes.iter().all(|f| f.kind == FixKind::ItemsAdded));
    }

    #[test]
    fn r6_nested_items_object_and_escaping() {
        let mut s = json!({"type":"array","items":{"type":"array","items":{"properties":{"a/b~c":{"type":"array"}}}}});
        let fixes = repair_input_schema(&mut s);
        assert_eq!(
            pointers(&fixes),
            vec![("/items/items/properties/a~1b~0c", FixKind::ItemsAdded)]
        );
    }

    #[test]
    fn r6_depth_limit_64() {
        // Level 64 is still examined; level 65 is too deep.
        let mut deep = json!({"type":"array"});
        for _ in 0..64 {
            deep = json!({"not": deep});
        }
        let fixes = repair_input_schema(&mut deep.clone());
        assert_eq!(fixes.len(), 1);
        assert_eq!(fixes[0].kind, FixKind::ItemsAdded);
        assert_eq!(fixes[0].pointer, "/not".repeat(64));
        let mut deeper = json!({"not": deep});
        let fixes = repair_input_schema(&mut deeper);
        assert_eq!(
            pointers(&fixes),
            vec![(&*"/not".repeat(65), FixKind::TooDeep)]
        );
    }

    #[test]
    fn r6_js_falsy() {
        for v in [
            json!(null),
            json!(false),
            json!(0),
            json!(-0.0),
            json!(0.0),
            json!(""),
        ] {
            assert!(js_falsy(&v), "{v}");
        }
        for v in [
            json!(true),
            json!(1),
            json!(-1),
            json!(0.1),
            json!("0"),
            json!(" "),
            json!([]),
            json!({}),
        ] {
            assert!(!js_falsy(&v), "{v}");
        }
    }

    #[test]
    fn r6_output_schema_needs_an_object_root() {
        assert!(output_schema_allowed(&json!({"type":"object"})));
        for s in [
            json!({"type":"array"}),
            json!(true),
            json!({}),
            json!({"type":["object"]}),
            json!({"type":"Object"}),
        ] {
            assert!(!output_schema_allowed(&s), "{s}");
        }
    }
}
