//! The pass-through parse of a line (issue 15): a request with object params or a response
//! with an object result keeps each top-level member of its params or result as the bytes
//! received ([`LazyObject`]). Every other line, and every line that [`super::scan::plain`]
//! does not pass, takes the full parse ([`super::parse::parse_line`]), so that both paths
//! accept and refuse the same lines and give the same values.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::lazy::{LazyObject, Member};
use super::parse::valid_id;
use super::scan;

/// A line on the pass-through path.
#[derive(Debug)]
pub enum Fast {
    /// A request (the same checks as [`super::parse::classify`]); `params` absent or an object.
    Request {
        id: Value,
        method: String,
        params: Option<LazyObject>,
    },
    /// A response with an object `result`.
    Response { id: Value, result: LazyObject },
}

/// Parses `line` on the pass-through path, or gives it back for the full parse.
pub fn parse_fast(line: Vec<u8>) -> Result<Fast, Vec<u8>> {
    let found = match std::str::from_utf8(&line) {
        Ok(text) if scan::plain(&line) => serde_json::from_str::<Envelope<'_>>(text)
            .ok()
            .and_then(|e| e.sort(text.as_ptr() as usize)),
        _ => None,
    };
    let Some(found) = found else {
        return Err(line);
    };
    // The members become slices of the one buffer of the line: no copy.
    let buf = Bytes::from(line);
    let object = |members: Vec<(String, (usize, usize))>| {
        LazyObject::from_members(
            members
                .into_iter()
                .map(|(k, (start, end))| (k, Member::Raw(buf.slice(start..end))))
                .collect(),
        )
    };
    Ok(match found {
        Found::Request { id, method, params } => Fast::Request {
            id,
            method,
            params: params.map(object),
        },
        Found::Response { id, result } => Fast::Response {
            id,
            result: object(result),
        },
    })
}

/// Members as byte ranges of the line.
type Ranges = Vec<(String, (usize, usize))>;

enum Found {
    Request {
        id: Value,
        method: String,
        params: Option<Ranges>,
    },
    Response {
        id: Value,
        result: Ranges,
    },
}

/// The members of a JSON-RPC message that decide its kind; a repeated one keeps its last
/// value, as in a `Value`.
#[derive(Default)]
struct Envelope<'a> {
    /// `Some(true)` for the text `"2.0"`.
    jsonrpc: Option<bool>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Members<'a>>,
    result: Option<Members<'a>>,
    error: bool,
}

impl<'a> Envelope<'a> {
    /// The kind of the message, with the rules of [`super::parse::classify`]; `None` for
    /// whatever the full parse should handle (notifications, errors, invalid messages).
    fn sort(self, base: usize) -> Option<Found> {
        if self.jsonrpc != Some(true) {
            return None;
        }
        let id = self.id.filter(valid_id)?;
        match self.method {
            Some(Value::String(method)) => Some(Found::Request {
                id,
                method,
                params: self.params.map(|m| m.ranges(base)),
            }),
            Some(_) => None,
            None if self.error => None,
            None => Some(Found::Response {
                id,
                result: self.result?.ranges(base),
            }),
        }
    }
}

/// The members of an object as raw texts of the line.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl Members<'_> {
    fn ranges(self, base: usize) -> Ranges {
        self.0
            .into_iter()
            .map(|(k, raw)| {
                let start = raw.get().as_ptr() as usize - base;
                (k, (start, start + raw.get().len()))
            })
            .collect()
    }
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut e = Envelope::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match &*key {
                "jsonrpc" => {
                    // Read as its text (no allocation): any other spelling of "2.0" (an
                    // escape) takes the full parse, which decides.
                    let version = map.next_value::<&RawValue>()?;
                    e.jsonrpc = Some(version.get() == "\"2.0\"");
                }
                "id" => e.id = Some(map.next_value()?),
                "method" => e.method = Some(map.next_value()?),
                "params" => e.params = Some(map.next_value()?),
                "result" => e.result = Some(map.next_value()?),
                "error" => {
                    map.next_value::<IgnoredAny>()?;
                    e.error = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(e)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    /// Only an object: anything else fails the pass-through parse (the full parse decides).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            members.push((key.into_owned(), map.next_value::<&RawValue>()?));
        }
        Ok(Members(members))
    }
}

/// A key, borrowed from the line when it has no escapes (no allocation for the envelope).
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::parse::{Message, Parsed, parse_line};
    use serde_json::json;

    fn fast(line: &str) -> Option<Fast> {
        parse_fast(line.as_bytes().to_vec()).ok()
    }

    #[test]
    fn requests_and_results_take_the_pass_through() {
        let line = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo", "arguments":{"text":"a\"b"}}}"#;
        match fast(line) {
            Some(Fast::Request { id, method, params }) => {
                assert_eq!(id, json!(3));
                assert_eq!(method, "tools/call");
                let params = params.map(LazyObject::into_map).map(Value::Object);
                let Parsed::Message(Message::Request { params: full, .. }) =
                    parse_line(line.as_bytes())
                else {
                    panic!("full parse");
                };
                assert_eq!(params, full);
            }
            other => panic!("{other:?}"),
        }
        match fast(r#"{"result":{"content":[],"x":{"y":1}},"id":"s","jsonrpc":"2.0"}"#) {
            Some(Fast::Response { id, result }) => {
                assert_eq!(id, json!("s"));
                assert_eq!(
                    Value::Object(result.into_map()),
                    json!({"content":[],"x":{"y":1}})
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            fast(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Some(Fast::Request { params: None, .. })
        ));
    }

    #[test]
    fn everything_else_takes_the_full_parse() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"n":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"t":"a"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"t":"	"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\n1}}",
        ] {
            assert!(fast(line).is_none(), "{line}");
        }
        assert!(parse_fast(b"{\"s\":\"\xff\"}".to_vec()).is_err());
    }
}
