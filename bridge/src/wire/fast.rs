//! The pass-through parse of a line (a hot-path choice of bridge/README.md): a request with object params or a response
//! with an object result keeps each top-level member of its params or result as the bytes
//! received ([`LazyObject`]). Every other line, and every line that [`Scanner`] does not
//! take as plain JSON, takes the full parse ([`super::parse::parse_line`]), so that both
//! paths accept and refuse the same lines and give the same values. The scanner replaces a
//! serde parse of the envelope: it finds the members with `memchr`, at a fraction of the cost
//! per byte, and reads only `id` and `method` into values.

use serde_json::Value;

use super::lazy::{Key, LazyObject, Member, key_of};
use super::parse::valid_id;
use super::scan::Scanner;

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
    let found = simdutf8::basic::from_utf8(&line)
        .ok()
        .and_then(envelope)
        .and_then(Envelope::sort);
    let Some(found) = found else {
        return Err(line);
    };
    // The members become slices of the one buffer of the line: no copy.
    let buf = bytes::Bytes::from(line);
    let object = |members: Ranges| {
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
type Ranges = Vec<(Key, (usize, usize))>;

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

/// The top-level members of a message that the pass-through reads. A key that comes twice
/// counts with its last value, as in a full parse.
#[derive(Default)]
struct Envelope {
    jsonrpc: Option<bool>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Ranges>,
    result: Option<Ranges>,
    error: bool,
}

impl Envelope {
    fn sort(self) -> Option<Found> {
        if self.jsonrpc != Some(true) {
            return None;
        }
        let id = self.id.filter(valid_id)?;
        match self.method {
            Some(Value::String(method)) => Some(Found::Request {
                id,
                method,
                params: self.params,
            }),
            Some(_) => None,
            None if self.error => None,
            None => Some(Found::Response {
                id,
                result: self.result?,
            }),
        }
    }
}

/// Reads the envelope of one line with [`Scanner`]: `None` when the line is not one plain
/// JSON object, or when `params` or `result` is there and is not an object.
fn envelope(text: &str) -> Option<Envelope> {
    let line = text.as_bytes();
    let mut s = Scanner::new(text);
    s.eat(b'{')?;
    s.enter()?;
    let mut e = Envelope::default();
    let mut first = true;
    while s.next_member(first)? {
        first = false;
        let key = s.key()?;
        match &*key {
            "params" | "result" => {
                let members = members(&mut s)?;
                if key == "params" {
                    e.params = Some(members);
                } else {
                    e.result = Some(members);
                }
            }
            "jsonrpc" => {
                let (start, end) = s.value()?;
                e.jsonrpc = Some(&line[start..end] == b"\"2.0\"");
            }
            "id" | "method" => {
                let (start, end) = s.value()?;
                let value = small_value(text.get(start..end)?)?;
                if key == "id" {
                    e.id = Some(value);
                } else {
                    e.method = Some(value);
                }
            }
            "error" => {
                s.value()?;
                e.error = true;
            }
            _ => {
                s.value()?;
            }
        }
    }
    s.at_end().then_some(e)
}

/// A small value (`id`, `method`) as a full parse reads it. The common forms, a string
/// without escapes and a short unsigned integer, are read directly; serde_json reads the
/// rest. The scanner has checked the syntax of `raw` already.
fn small_value(raw: &str) -> Option<Value> {
    let bytes = raw.as_bytes();
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
        && !bytes.contains(&b'\\')
    {
        return Some(Value::String(inner.to_owned()));
    }
    // 19 digits always fit in a u64, which is how a full parse reads an unsigned integer.
    if !bytes.is_empty() && bytes.len() <= 19 && bytes.iter().all(u8::is_ascii_digit) {
        return raw.parse::<u64>().ok().map(Value::from);
    }
    serde_json::from_str(raw).ok()
}

/// The members of an object value as byte ranges of the line.
fn members(s: &mut Scanner<'_>) -> Option<Ranges> {
    s.eat(b'{')?;
    s.enter()?;
    let mut out = Vec::with_capacity(8);
    let mut first = true;
    while s.next_member(first)? {
        first = false;
        let key = key_of(&s.key()?);
        out.push((key, s.value()?));
    }
    Some(out)
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
    fn small_values_read_as_serde_reads_them() {
        for raw in [
            r#""a""#,
            r#""""#,
            r#""a\"b""#,
            r#""\u00e9""#,
            "0",
            "123",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "-5",
            "1.5",
            "null",
            "true",
            r#"{"a":1}"#,
        ] {
            let serde: Option<Value> = serde_json::from_str(raw).ok();
            assert_eq!(small_value(raw), serde, "{raw}");
        }
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
