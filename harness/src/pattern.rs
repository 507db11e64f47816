//! The partial matcher of transcripts: a pattern is a JSON value that an actual frame must
//! satisfy.
//!
//! - An object pattern matches an object that has every member of the pattern (a subset match);
//!   other members are allowed unless the pattern has the member `"<exact>": true`.
//! - The value `"<absent>"` requires that the member is absent.
//! - An array pattern matches an array of the same length, element by element; a last element
//!   `"<...>"` allows more elements after the ones given.
//! - Typed wildcards: `"<any>"`, `"<present>"`, `"<string>"`, `"<number>"`, `"<integer>"`,
//!   `"<boolean>"`, `"<null>"`, `"<object>"`, `"<array>"`, `"<uuid>"`, and `"<re:REGEX>"` for a
//!   string that matches REGEX (`"<re:REGEX@name>"` also binds it to `name`, a capture name).
//! - `"<not:VALUE>"`: any present value that differs from VALUE: `${name}` alone is the captured
//!   value (its type kept), text that is JSON is that JSON value (`<not:0>` is the integer 0),
//!   other text is a string (with `${name}` references replaced). `"<not:VALUE@name>"` also
//!   binds the actual value to `name` (a capture name: letters, digits, `_`, `-`).
//! - Captures: `"<TYPE@name>"` matches like `"<TYPE>"` and binds the actual value to `name`;
//!   `"${name}"` stands for the bound value (the whole value when the string is only the
//!   reference, else its text inside the string). A name bound twice must keep its value.
//! - Every other value must be equal; numbers compare by value (1 and 1.0 are equal), never
//!   across types (0 and "0" differ).
use std::collections::HashMap;

use serde_json::{Map, Value};

/// The values captured by the patterns of one transcript.
pub type Captures = HashMap<String, Value>;

/// Why a value did not match: the JSON pointer of the place and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub pointer: String,
    pub reason: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "at {at}: {}", self.reason)
    }
}

/// A parsed wildcard string.
#[derive(Debug, Clone, PartialEq)]
enum Wild {
    Any,
    Present,
    Absent,
    Type(&'static str),
    Uuid,
    Regex(String),
    /// Present and different from the value of the text (resolved against the captures).
    Not(String),
}

/// Reads `"<...>"` as a wildcard with its optional capture name. Strings that are not one of the
/// forms are literal values.
fn wildcard(s: &str) -> Option<(Wild, Option<&str>)> {
    let inner = s.strip_prefix('<')?.strip_suffix('>')?;
    let is_name = |n: &str| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if let Some(re) = inner.strip_prefix("re:") {
        return Some(match re.rsplit_once('@') {
            Some((re, name)) if is_name(name) => (Wild::Regex(re.to_string()), Some(name)),
            _ => (Wild::Regex(re.to_string()), None),
        });
    }
    if let Some(text) = inner.strip_prefix("not:") {
        return Some(match text.rsplit_once('@') {
            Some((value, name)) if is_name(name) => (Wild::Not(value.to_string()), Some(name)),
            _ => (Wild::Not(text.to_string()), None),
        });
    }
    let (kind, name) = match inner.split_once('@') {
        Some((k, n)) if !n.is_empty() => (k, Some(n)),
        Some(_) => return None,
        None => (inner, None),
    };
    let wild = match kind {
        "any" => Wild::Any,
        "present" => Wild::Present,
        "absent" => Wild::Absent,
        "uuid" => Wild::Uuid,
        "string" => Wild::Type("string"),
        "number" => Wild::Type("number"),
        "integer" => Wild::Type("integer"),
        "boolean" => Wild::Type("boolean"),
        "null" => Wild::Type("null"),
        "object" => Wild::Type("object"),
        "array" => Wild::Type("array"),
        _ => return None,
    };
    Some((wild, name))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    parts.len() == 5
        && parts
            .iter()
            .zip(lens)
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Replaces every `${name}` of `template` by its captured value. Fails on an unknown name, so
/// that a typo never turns into a literal that silently matches nothing.
pub fn substitute(template: &Value, caps: &Captures) -> Result<Value, String> {
    Ok(match template {
        Value::String(s) => substitute_str(s, caps)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, caps))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), substitute(v, caps)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn substitute_str(s: &str, caps: &Captures) -> Result<Value, String> {
    if !s.contains("${") {
        return Ok(Value::String(s.to_string()));
    }
    // The whole string is one reference: keep the captured type (an integer id stays one).
    if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
        && !name.contains('}')
    {
        return caps
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no capture named '{name}'"));
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unclosed ${{ in '{s}'"))?;
        let name = &after[..end];
        let value = caps
            .get(name)
            .ok_or_else(|| format!("no capture named '{name}'"))?;
        match value {
            Value::String(t) => out.push_str(t),
            other => out.push_str(&other.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

/// Matches `actual` against `pattern`. Captures bind only when the whole match succeeds, so a
/// failed alternative (free order) leaves no stale binding.
pub fn matches(pattern: &Value, actual: &Value, caps: &mut Captures) -> Result<(), Mismatch> {
    let mut bound = caps.clone();
    match_at(pattern, Some(actual), &mut bound, &mut String::new())?;
    *caps = bound;
    Ok(())
}

fn fail(pointer: &str, reason: impl Into<String>) -> Result<(), Mismatch> {
    Err(Mismatch {
        pointer: pointer.to_string(),
        reason: reason.into(),
    })
}

fn match_at(
    pattern: &Value,
    actual: Option<&Value>,
    caps: &mut Captures,
    ptr: &mut String,
) -> Result<(), Mismatch> {
    if let Value::String(s) = pattern {
        if let Some((wild, name)) = wildcard(s) {
            return match_wild(&wild, name, actual, caps, ptr);
        }
        if s.contains("${") {
            let resolved = substitute_str(s, caps).map_err(|reason| Mismatch {
                pointer: ptr.clone(),
                reason,
            })?;
            return match_at(&resolved, actual, caps, ptr);
        }
    }
    let Some(actual) = actual else {
        return fail(ptr, format!("missing, expected {pattern}"));
    };
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            let exact = p.get("<exact>") == Some(&Value::Bool(true));
            for (k, pv) in p {
                if k == "<exact>" {
                    continue;
                }
                let len = ptr.len();
                ptr.push('/');
                ptr.push_str(&k.replace('~', "~0").replace('/', "~1"));
                let r = match_at(pv, a.get(k), caps, ptr);
                ptr.truncate(len);
                r?;
            }
            if exact && let Some(extra) = a.keys().find(|k| !p.contains_key(*k)) {
                return fail(ptr, format!("unexpected member '{extra}'"));
            }
            Ok(())
        }
        (Value::Array(p), Value::Array(a)) => {
            let open = p.last() == Some(&Value::String("<...>".into()));
            let fixed = if open { &p[..p.len() - 1] } else { &p[..] };
            if a.len() < fixed.len() || (!open && a.len() != fixed.len()) {
                return fail(
                    ptr,
                    format!(
                        "expected {} elements{}, got {}",
                        fixed.len(),
                        if open { " or more" } else { "" },
                        a.len()
                    ),
                );
            }
            for (i, pv) in fixed.iter().enumerate() {
                let len = ptr.len();
                ptr.push_str(&format!("/{i}"));
                let r = match_at(pv, a.get(i), caps, ptr);
                ptr.truncate(len);
                r?;
            }
            Ok(())
        }
        (Value::Number(p), Value::Number(a)) => {
            let same = p == a || matches!((p.as_f64(), a.as_f64()), (Some(x), Some(y)) if x == y);
            if same {
                Ok(())
            } else {
                fail(ptr, format!("expected {p}, got {a}"))
            }
        }
        (p, a) if p == a => Ok(()),
        (p, a) => fail(ptr, format!("expected {p}, got {a}")),
    }
}

fn match_wild(
    wild: &Wild,
    name: Option<&str>,
    actual: Option<&Value>,
    caps: &mut Captures,
    ptr: &str,
) -> Result<(), Mismatch> {
    let ok = match (wild, actual) {
        (Wild::Absent, None) => return Ok(()),
        (Wild::Absent, Some(a)) => return fail(ptr, format!("must be absent, got {a}")),
        // A capture needs a value to bind; only the plain `<any>` accepts an absent member.
        (Wild::Any, None) if name.is_none() => return Ok(()),
        (_, None) => return fail(ptr, "missing"),
        (Wild::Any | Wild::Present, Some(_)) => true,
        (Wild::Type("number"), Some(a)) => a.is_number(),
        (Wild::Type(t), Some(a)) => type_name(a) == *t,
        (Wild::Uuid, Some(a)) => a.as_str().is_some_and(is_uuid),
        (Wild::Regex(re), Some(a)) => {
            let re = regex::Regex::new(re).map_err(|e| Mismatch {
                pointer: ptr.to_string(),
                reason: format!("bad regex: {e}"),
            })?;
            a.as_str().is_some_and(|s| re.is_match(s))
        }
        (Wild::Not(text), Some(a)) => {
            let other = not_value(text, caps).map_err(|reason| Mismatch {
                pointer: ptr.to_string(),
                reason,
            })?;
            if same(&other, a) {
                return fail(ptr, format!("expected a value other than {other}, got {a}"));
            }
            true
        }
    };
    let Some(actual) = actual else { return Ok(()) };
    if !ok {
        let want = match wild {
            Wild::Type(t) => (*t).to_string(),
            Wild::Uuid => "a UUID string".into(),
            Wild::Regex(re) => format!("a string matching /{re}/"),
            _ => "a value".into(),
        };
        return fail(ptr, format!("expected {want}, got {actual}"));
    }
    if let Some(name) = name {
        if let Some(old) = caps.get(name) {
            if old != actual {
                return fail(ptr, format!("capture '{name}' was {old}, now {actual}"));
            }
        } else {
            caps.insert(name.to_string(), actual.clone());
        }
    }
    Ok(())
}

/// The value that `<not:TEXT>` excludes: a capture alone keeps its type, JSON text is that
/// value, other text is a string.
fn not_value(text: &str, caps: &Captures) -> Result<Value, String> {
    if text.starts_with("${") {
        return substitute_str(text, caps);
    }
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(v);
    }
    substitute_str(text, caps)
}

/// Equality with numbers compared by value (1 and 1.0), never across types.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(p: Value, a: Value) -> Result<Captures, Mismatch> {
        let mut c = Captures::new();
        matches(&p, &a, &mut c).map(|_| c)
    }

    #[test]
    fn objects_match_as_subsets() {
        assert!(m(json!({"id":1}), json!({"id":1,"result":{}})).is_ok());
        assert!(
            m(
                json!({"result":{"tools":[]}}),
                json!({"result":{"tools":[],"x":1}})
            )
            .is_ok()
        );
        let e = m(json!({"id":2}), json!({"id":1})).unwrap_err();
        assert_eq!(e.pointer, "/id");
    }

    #[test]
    fn exact_objects_refuse_extra_members() {
        assert!(m(json!({"<exact>":true,"a":1}), json!({"a":1})).is_ok());
        let e = m(json!({"<exact>":true,"a":1}), json!({"a":1,"b":2})).unwrap_err();
        assert!(e.reason.contains("'b'"));
    }

    #[test]
    fn absent_members() {
        assert!(m(json!({"nextCursor":"<absent>"}), json!({"tools":[]})).is_ok());
        let e = m(
            json!({"result":{"nextCursor":"<absent>"}}),
            json!({"result":{"nextCursor":null}}),
        )
        .unwrap_err();
        assert_eq!(e.pointer, "/result/nextCursor");
        assert!(m(json!({"a":"<any>"}), json!({})).is_ok());
        assert!(m(json!({"a":"<any@x>"}), json!({})).is_err());
        assert!(m(json!({"a":"<present>"}), json!({})).is_err());
    }

    #[test]
    fn typed_wildcards() {
        assert!(m(json!("<string>"), json!("x")).is_ok());
        assert!(m(json!("<string>"), json!(1)).is_err());
        assert!(m(json!("<integer>"), json!(0)).is_ok());
        assert!(m(json!("<integer>"), json!(0.5)).is_err());
        assert!(m(json!("<number>"), json!(0.5)).is_ok());
        assert!(m(json!("<boolean>"), json!(false)).is_ok());
        assert!(m(json!("<null>"), json!(null)).is_ok());
        assert!(m(json!("<object>"), json!([])).is_err());
        assert!(m(json!("<array>"), json!([])).is_ok());
        assert!(
            m(
                json!("<uuid>"),
                json!("3f1c2e0a-8d0b-4f7e-9a51-6c2d1b7e9f10")
            )
            .is_ok()
        );
        assert!(m(json!("<uuid>"), json!("b-1")).is_err());
        assert!(m(json!("<re:^b-[0-9]+$>"), json!("b-12")).is_ok());
        assert!(m(json!("<re:^b-[0-9]+$>"), json!(12)).is_err());
    }

    #[test]
    fn a_regex_can_capture_the_string_it_matched() {
        let mut c = Captures::new();
        let p = json!("<re:^elicitation-[0-9a-f]{16}-1$@e1>");
        assert!(matches(&p, &json!("elicitation-1"), &mut c).is_err());
        assert!(!c.contains_key("e1"));
        assert!(matches(&p, &json!("elicitation-0123456789abcdef-1"), &mut c).is_ok());
        assert_eq!(c["e1"], json!("elicitation-0123456789abcdef-1"));
        assert!(
            matches(
                &json!("${e1}"),
                &json!("elicitation-0123456789abcdef-1"),
                &mut c
            )
            .is_ok()
        );
        // Bound twice, the value must stay.
        assert!(matches(&p, &json!("elicitation-fedcba9876543210-1"), &mut c).is_err());
        // An `@` that does not start a capture name is part of the regex.
        assert!(m(json!("<re:^a@b\\.c$>"), json!("a@b.c")).is_ok());
    }

    #[test]
    fn not_excludes_a_literal_or_a_captured_value() {
        let uuid = "3f1c2e0a-8d0b-4f7e-9a51-6c2d1b7e9f10";
        assert!(m(json!(format!("<not:{uuid}>")), json!(uuid)).is_err());
        assert!(m(json!(format!("<not:{uuid}>")), json!(2)).is_ok());
        // JSON text is that value: the integer 0, not the string "0".
        assert!(m(json!("<not:0>"), json!(0)).is_err());
        assert!(m(json!("<not:0>"), json!(0.0)).is_err());
        assert!(m(json!("<not:0>"), json!("0")).is_ok());
        assert!(m(json!({"a":"<not:0>"}), json!({})).is_err());
        // A capture keeps its type; the actual value can be bound too.
        let mut c = Captures::new();
        c.insert("up1".into(), json!(3));
        assert!(matches(&json!("<not:${up1}@up2>"), &json!(3), &mut c).is_err());
        assert!(!c.contains_key("up2"));
        assert!(matches(&json!("<not:${up1}@up2>"), &json!(4), &mut c).is_ok());
        assert_eq!(c["up2"], json!(4));
        assert!(matches(&json!("<not:${nope}>"), &json!(4), &mut c).is_err());
        // An `@` that does not start a capture name is part of the text.
        assert!(m(json!("<not:a@b.c>"), json!("a@b.c")).is_err());
    }

    #[test]
    fn numbers_compare_by_value_but_not_across_types() {
        assert!(m(json!(1), json!(1.0)).is_ok());
        assert!(m(json!(0), json!("0")).is_err());
        assert!(m(json!(null), json!(null)).is_ok());
    }

    #[test]
    fn arrays_have_a_fixed_length_unless_open() {
        assert!(m(json!([1, 2]), json!([1, 2])).is_ok());
        assert!(m(json!([1]), json!([1, 2])).is_err());
        assert!(m(json!([1, "<...>"]), json!([1, 2, 3])).is_ok());
        assert!(m(json!([1, 2, "<...>"]), json!([1])).is_err());
        let e = m(json!([{"a":1}]), json!([{"a":2}])).unwrap_err();
        assert_eq!(e.pointer, "/0/a");
    }

    #[test]
    fn captures_bind_and_are_reused() {
        let c = m(
            json!({"id":"<string@b>","method":"elicitation/create"}),
            json!({"id":"b-1","method":"elicitation/create"}),
        )
        .unwrap();
        assert_eq!(c["b"], json!("b-1"));
        let mut c = c;
        assert!(
            matches(
                &json!({"requestId":"${b}"}),
                &json!({"requestId":"b-1"}),
                &mut c
            )
            .is_ok()
        );
        assert!(
            matches(
                &json!({"requestId":"${b}"}),
                &json!({"requestId":"b-2"}),
                &mut c
            )
            .is_err()
        );
        // A second binding of the same name must agree.
        assert!(matches(&json!("<string@b>"), &json!("b-3"), &mut c).is_err());
        // A failed match binds nothing.
        let mut c = Captures::new();
        assert!(matches(&json!({"a":"<any@x>","b":1}), &json!({"a":5,"b":2}), &mut c).is_err());
        assert!(c.is_empty());
    }

    #[test]
    fn substitution_keeps_types_and_embeds_text() {
        let mut c = Captures::new();
        c.insert("id".into(), json!(7));
        c.insert("e".into(), json!("e-1"));
        let v = substitute(&json!({"id":"${id}","t":"x ${e} ${id}"}), &c).unwrap();
        assert_eq!(v, json!({"id":7,"t":"x e-1 7"}));
        assert!(substitute(&json!("${nope}"), &c).is_err());
    }

    #[test]
    fn literal_angle_strings_that_are_not_wildcards_stay_literal() {
        assert!(m(json!("<b>bold</b>"), json!("<b>bold</b>")).is_ok());
        assert!(m(json!("<unknown>"), json!("<unknown>")).is_ok());
    }
}
