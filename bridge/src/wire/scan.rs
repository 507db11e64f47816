//! The gate of the pass-through path (issue 15): a fast scan that says whether a line may keep
//! its member values as the bytes received.
//!
//! serde_json checks the syntax of a member that it keeps raw (`RawValue`), but not three
//! things that a full parse into a `Value` decides: the nesting limit ([`super::parse::MAX_DEPTH`]),
//! lone escaped surrogates (replaced by U+FFFD, see [`super::surrogates`]) and the range of
//! numbers (`1e400` is refused). A line that has none of them is accepted by both paths, and
//! each value reads the same; any other line takes the full parse. A message with a line break
//! between its tokens (an HTTP body, an SSE event) takes it too: its members are written into
//! one line of VS Code's stdout. The scan is conservative:
//! it may send a line to the full parse that the pass-through could have kept, never the
//! reverse.

/// Nesting deeper than this takes the full parse, which owns the limit and its error.
const PLAIN_DEPTH: usize = 100;
/// Numbers with a fraction longer than this take the full parse (17 significant digits
/// name every float).
const PLAIN_DECIMAL: usize = 18;
/// Integers longer than this take the full parse: a float holds up to about 1.8e308, and a
/// longer integer is refused by it.
const PLAIN_INTEGER: usize = 300;

/// True when the JSON text `line` (or what a parse would refuse of it) has no nesting deeper
/// than [`PLAIN_DEPTH`], no `\uD800`–`\uDFFF` escape that is not half of a pair, no number
/// with an exponent, no fraction longer than [`PLAIN_DECIMAL`] and no integer longer than
/// [`PLAIN_INTEGER`]. Strings are skipped with `memchr`, so that a large string costs little
/// more than a copy.
pub fn plain(line: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = line.get(i) {
        match b {
            b'"' => match skip_string(line, i + 1) {
                Some(end) => i = end,
                None => return false,
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > PLAIN_DEPTH {
                    return false;
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let len = line[i..]
                    .iter()
                    .take_while(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                let number = &line[i..i + len];
                let limit = if number.contains(&b'.') {
                    PLAIN_DECIMAL
                } else {
                    PLAIN_INTEGER
                };
                if len > limit || number.iter().any(|c| matches!(c, b'e' | b'E')) {
                    return false;
                }
                i += len;
            }
            // A line break between tokens: a body of HTTP or an event of SSE may have one, and
            // a member written as received would break the line of its frame.
            b'\n' | b'\r' => return false,
            // Literals, other whitespace, `,` and `:`; anything else is the parser's to refuse.
            _ => i += 1,
        }
    }
    true
}

/// Skips a string from just after its opening quote; returns the index after its closing
/// quote, or `None` for a lone escaped surrogate or a string without its end.
fn skip_string(line: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i += memchr::memchr2(b'"', b'\\', line.get(i..)?)?;
        if line[i] == b'"' {
            return Some(i + 1);
        }
        match line.get(i + 1) {
            Some(b'u') => match surrogate(line.get(i + 2..i + 6)?) {
                None => i += 6,
                // A high half followed by a low half is one character on both paths.
                Some(true) if line.get(i + 6..i + 8) == Some(b"\\u") => {
                    if surrogate(line.get(i + 8..i + 12)?) != Some(false) {
                        return None;
                    }
                    i += 12;
                }
                Some(_) => return None,
            },
            Some(_) => i += 2,
            None => return None,
        }
    }
}

/// For the four hex digits of a `\u` escape: `Some(true)` for a high surrogate
/// (D800–DBFF), `Some(false)` for a low one (DC00–DFFF), `None` for any other.
fn surrogate(hex: &[u8]) -> Option<bool> {
    if !matches!(hex.first(), Some(b'd' | b'D')) {
        return None;
    }
    match hex.get(1) {
        Some(b'8' | b'9' | b'a' | b'b' | b'A' | b'B') => Some(true),
        Some(b'c'..=b'f' | b'C'..=b'F') => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_lines_are_plain() {
        assert!(plain(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"b\\c\n\u00e9"}],"n":-12.5,"ok":true,"x":null}}"#));
        assert!(plain(
            br#"{"id":18446744073709551615,"n":-9223372036854775808}"#
        ));
        assert!(
            plain(br#"{"t":"\ud83d\ude00 \uD83D\uDE00"}"#),
            "a pair is one character"
        );
        assert!(plain(format!("[{}]", "9".repeat(PLAIN_INTEGER)).as_bytes()));
        assert!(plain(br#"{"s":"[[[[[[{{{{ not nesting \ud7ff"}"#));
    }

    #[test]
    fn what_a_full_parse_decides_is_not_plain() {
        assert!(!plain(br#"{"t":"\ud800"}"#));
        assert!(!plain(br#"{"t":"\uDC00x"}"#));
        assert!(!plain(br#"{"t":"\ud83d"}"#));
        assert!(!plain(br#"{"t":"\ud83d\u0041"}"#));
        assert!(!plain(br#"{"t":"\ude00\ud83d"}"#));
        assert!(!plain(br#"{"n":1e400}"#));
        assert!(!plain(br#"{"n":1E2}"#));
        assert!(!plain(br#"{"n":0.1234567890123456789}"#));
        assert!(!plain(
            format!("[{}]", "9".repeat(PLAIN_INTEGER + 1)).as_bytes()
        ));
        assert!(
            !plain(b"{\"a\":\n1}"),
            "a member must not carry a line break"
        );
        assert!(!plain(b"{\"a\":[1,\r\n2]}"));
        assert!(!plain(br#"{"s":"no end"#));
        assert!(!plain(br#"{"s":"\"#));
        let mut deep = Vec::new();
        deep.extend(std::iter::repeat_n(b'[', PLAIN_DEPTH + 1));
        deep.extend(std::iter::repeat_n(b']', PLAIN_DEPTH + 1));
        assert!(!plain(&deep));
        let mut ok = Vec::new();
        ok.extend(std::iter::repeat_n(b'[', PLAIN_DEPTH));
        ok.extend(std::iter::repeat_n(b']', PLAIN_DEPTH));
        assert!(plain(&ok));
    }
}
