//! Id recovery of a line that cannot be parsed: the error of a
//! broken or long request still carries its id where the bytes allow it.
//!
//! Two byte scanners, both strict: a value that is truncated, a float, an exponent, `null`,
//! a control character or invalid UTF-8 gives no id.

use serde_json::Value;

use super::escape::{escape_end, is_ws};

/// The id of a broken line: first the top-level `"id"` member from the start of the line,
/// else the `"id"` member that ends the line (the TypeScript SDK 1.x writes `id` last).
pub fn recover_id(head: &[u8], tail: &[u8]) -> Option<Value> {
    recover_leading_id(head).or_else(|| recover_trailing_id(tail))
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// A complete JSON string, decoded; `None` when truncated or not valid.
    fn string(&mut self) -> Option<String> {
        self.skip_ws();
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\\' => self.pos = escape_end(self.bytes, self.pos)?,
                b if b < 0x20 => return None,
                _ => self.pos += 1,
            }
        }
        let raw = self.bytes.get(start..self.pos)?;
        serde_json::from_slice::<String>(raw).ok()
    }

    /// An integer id (no fraction, no exponent); big integers are refused because they would
    /// not round-trip.
    fn integer(&mut self) -> Option<Value> {
        self.skip_ws();
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == digits {
            return None;
        }
        // The number must be followed by a delimiter that the head still has.
        match self.peek()? {
            b'.' | b'e' | b'E' => return None,
            b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => return None,
        }
        let text = std::str::from_utf8(self.bytes.get(start..self.pos)?).ok()?;
        if let Ok(n) = text.parse::<i64>() {
            return Some(Value::from(n));
        }
        text.parse::<u64>().ok().map(Value::from)
    }

    /// Skips one complete value of any kind; `None` when it is truncated.
    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while !matches!(self.peek()?, b',' | b'}' | b']') && !self.peek().is_some_and(is_ws)
                {
                    self.pos += 1;
                }
            }
        }
        Some(())
    }
}

/// The top-level `"id"` member found by scanning from the start; nested ids are skipped.
pub fn recover_leading_id(bytes: &[u8]) -> Option<Value> {
    let mut s = Scanner { bytes, pos: 0 };
    s.eat(b'{')?;
    loop {
        let key = s.string()?;
        s.eat(b':')?;
        if key == "id" {
            s.skip_ws();
            return match s.peek()? {
                b'"' => s.string().map(Value::from),
                _ => s.integer(),
            };
        }
        s.skip_value()?;
        s.skip_ws();
        match s.peek()? {
            b',' => s.pos += 1,
            _ => return None,
        }
    }
}

/// The `"id"` member that ends the line: `… , "id" : <value> }` with optional whitespace.
pub fn recover_trailing_id(bytes: &[u8]) -> Option<Value> {
    let trimmed = trim_end(bytes);
    let body = trimmed.strip_suffix(b"}")?;
    let body = trim_end(body);
    let (value, before) = match body.last()? {
        b'"' => {
            let start = string_start(body)?;
            let raw = &body[start..];
            if raw.iter().any(|b| *b < 0x20) {
                return None;
            }
            (
                Value::from(serde_json::from_slice::<String>(raw).ok()?),
                &body[..start],
            )
        }
        _ => {
            let start = body
                .iter()
                .rposition(|b| !(b.is_ascii_digit() || *b == b'-'))
                .map_or(0, |p| p + 1);
            let mut s = Scanner {
                bytes: &body[start..],
                pos: 0,
            };
            let mut with_end = s.bytes.to_vec();
            with_end.push(b'}');
            s.bytes = &with_end;
            let v = s.integer()?;
            (v, &body[..start])
        }
    };
    let before = trim_end(before).strip_suffix(b":")?;
    let before = trim_end(before).strip_suffix(b"\"id\"")?;
    match trim_end(before).last()? {
        b',' | b'{' => Some(value),
        _ => None,
    }
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|b| !is_ws(*b)).map_or(0, |p| p + 1);
    &bytes[..end]
}

/// The position of the quote that opens the string which ends `body` (its last byte is `"`).
fn string_start(body: &[u8]) -> Option<usize> {
    let mut i = body.len().checked_sub(1)?;
    while i > 0 {
        i -= 1;
        if body[i] == b'"' {
            let slashes = body[..i].iter().rev().take_while(|b| **b == b'\\').count();
            if slashes % 2 == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leading_id_kinds() {
        assert_eq!(
            recover_leading_id(br#"{"jsonrpc":"2.0","id":7,"method":"x""#),
            Some(json!(7))
        );
        assert_eq!(recover_leading_id(br#"{"id":"abc","#), Some(json!("abc")));
        assert_eq!(
            recover_leading_id(br#" { "id" : "a\"b\u0041" , "#),
            Some(json!("a\"bA"))
        );
        assert_eq!(recover_leading_id(br#"{"id":-3}"#), Some(json!(-3)));
        assert_eq!(
            recover_leading_id(br#"{"id":18446744073709551615,"#),
            Some(json!(u64::MAX))
        );
        assert_eq!(recover_leading_id(br#"{"id":b-1,"#), None);
    }

    #[test]
    fn leading_id_skips_nested_ids() {
        let line =
            br#"{"method":"tools/call","params":{"id":99,"a":[{"id":5}],"s":"}"},"id":12,"x":1}"#;
        assert_eq!(recover_leading_id(line), Some(json!(12)));
    }

    #[test]
    fn leading_id_refuses_floats_exponents_null_truncation_controls() {
        for bad in [
            &br#"{"id":1.5,"#[..],
            br#"{"id":1e3,"#,
            br#"{"id":null,"#,
            br#"{"id":12"#,
            br#"{"id":"abc"#,
            b"{\"id\":\"a\x01b\",",
            br#"{"id":123456789012345678901234567890,"#,
            br#"{"method":"x","params":{"a":"trunc"#,
            br#"["id",1]"#,
            b"{\"id\":\"\xff\xfe\",",
            br#"{"id":true,"#,
        ] {
            assert_eq!(
                recover_leading_id(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn trailing_id_of_the_typescript_sdk() {
        assert_eq!(
            recover_trailing_id(br#"xxxx"}},"jsonrpc":"2.0","id":4}"#),
            Some(json!(4))
        );
        assert_eq!(
            recover_trailing_id(b"xxxx\"}}, \"id\" : \"s-\\\"1\" }\r\n"),
            Some(json!("s-\"1"))
        );
        assert_eq!(recover_trailing_id(br#"{"id":-12}"#), Some(json!(-12)));
        assert_eq!(
            recover_trailing_id(br#"xx"],"id":"b-3"}"#),
            Some(json!("b-3"))
        );
    }

    #[test]
    fn trailing_id_refuses_other_shapes() {
        for bad in [
            &br#"xx,"id":4}}"#[..],
            br#"xx,"id":4"#,
            br#"xx"id":4}"#,
            br#"xx,"uid":4}"#,
            br#"xx,"id":4.5}"#,
            br#"xx,"id":null}"#,
            br#"xx,"id":1e5}"#,
            br#"id":4}"#,
        ] {
            assert_eq!(
                recover_trailing_id(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn recover_prefers_the_head() {
        assert_eq!(recover_id(br#"{"id":1,"#, br#","id":2}"#), Some(json!(1)));
        assert_eq!(
            recover_id(br#"{"params":{"#, br#","id":2}"#),
            Some(json!(2))
        );
        assert_eq!(recover_id(b"garbage", b"garbage"), None);
    }
}
