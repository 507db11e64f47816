//! The gate of the pass-through path (a hot-path choice of bridge/README.md): a fast scan that checks the syntax of a line
//! and says whether it may keep its member values as the bytes received.
//!
//! Besides the syntax, three things that a full parse into a `Value` decides: the nesting
//! limit ([`super::parse::MAX_DEPTH`]), lone escaped surrogates (replaced by U+FFFD, see [`super::surrogates`]) and the range of
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

/// A validating scanner of one line of JSON: it finds where each value begins and ends, and
/// accepts a value only when it is valid JSON that a full parse reads the same way: no
/// nesting deeper than [`PLAIN_DEPTH`], no `\uD800`–`\uDFFF` escape that is not half of a
/// pair, no number with an exponent, no fraction longer than [`PLAIN_DECIMAL`], no integer
/// longer than [`PLAIN_INTEGER`] and no line break between tokens. `None` means "not
/// plain": the line takes the full parse, which gives the error where there is one. The
/// scanner reads a `&str`, so UTF-8 is checked once for the whole line, and a key without
/// escapes is a slice of it.
///
/// Strings are skipped with `memchr` and checked for control characters with a loop that
/// the compiler vectorises, so that a large string costs little more than a copy.
pub struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
}

/// Strings up to this length are scanned byte by byte: most are keys and names, which end
/// before `memchr` pays for its setup.
const SHORT_STRING: usize = 32;

/// The bytes that end a plain run of a string: the quote, the backslash and the control
/// characters (which JSON refuses in a string).
pub(crate) static STOPS_PLAIN_RUN: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        table[c] = true;
        c += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            text,
            pos: 0,
            depth: 0,
        }
    }

    fn line(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips spaces and tabs (a line break is never plain).
    pub fn ws(&mut self) {
        while matches!(self.line().get(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Whitespace, then the byte `b`.
    pub fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.line().get(self.pos) == Some(&b)).then(|| self.pos += 1)
    }

    /// Whitespace, then the next byte without taking it.
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.line().get(self.pos).copied()
    }

    /// True when only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.ws();
        self.pos == self.line().len()
    }

    /// Enters an object or an array (its opening byte is taken by the caller).
    pub fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= PLAIN_DEPTH).then_some(())
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Whitespace, then what follows in an object just entered: `Some(true)` when a member
    /// follows (after the `,` that separates members; none before the first), `Some(false)`
    /// at its end (the `}` is taken), `None` when neither is valid.
    pub fn next_member(&mut self, first: bool) -> Option<bool> {
        match self.peek()? {
            b'}' => {
                self.pos += 1;
                self.leave();
                Some(false)
            }
            b',' if !first => {
                self.pos += 1;
                Some(true)
            }
            _ => first.then_some(true),
        }
    }

    /// Whitespace, a key and its `:`: the key's text (escapes decoded).
    pub fn key(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let (start, end, escaped) = self.key_range()?;
        if escaped {
            let raw = &self.line()[start..end];
            return serde_json::from_slice::<String>(raw).ok().map(Into::into);
        }
        // The quotes are ASCII, so the text between them is a slice of the checked line.
        self.text.get(start + 1..end - 1).map(Into::into)
    }

    /// Whitespace, a key and its `:`: the key's range, quotes included, and whether it holds
    /// an escape.
    fn key_range(&mut self) -> Option<(usize, usize, bool)> {
        self.ws();
        let key = self.string()?;
        self.eat(b':')?;
        Some(key)
    }

    /// Whitespace and one value: its range in the line.
    pub fn value(&mut self) -> Option<(usize, usize)> {
        self.ws();
        let start = self.pos;
        match *self.line().get(self.pos)? {
            b'"' => return self.value_range_of_string(),
            b'{' => {
                self.pos += 1;
                self.enter()?;
                let mut first = true;
                while self.next_member(first)? {
                    first = false;
                    self.key_range()?;
                    self.value()?;
                }
            }
            b'[' => {
                self.pos += 1;
                self.enter()?;
                if self.peek()? == b']' {
                    self.pos += 1;
                } else {
                    loop {
                        self.value()?;
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b']' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.leave();
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some((start, self.pos))
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.pos + word.len();
        (self.line().get(self.pos..end) == Some(word)).then(|| self.pos = end)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`; an exponent is not plain.
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        let digits = |s: &Self, from: usize| {
            s.line()[from..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count()
        };
        if self.line()[self.pos] == b'-' {
            self.pos += 1;
        }
        let int = digits(self, self.pos);
        if int == 0 || (int > 1 && self.line()[self.pos] == b'0') {
            return None;
        }
        self.pos += int;
        let mut limit = PLAIN_INTEGER;
        if self.line().get(self.pos) == Some(&b'.') {
            let frac = digits(self, self.pos + 1);
            if frac == 0 {
                return None;
            }
            self.pos += 1 + frac;
            limit = PLAIN_DECIMAL;
        }
        let exponent = matches!(self.line().get(self.pos), Some(b'e' | b'E'));
        (!exponent && self.pos - start <= limit).then_some(())
    }

    /// A string from its opening quote: its range, quotes included.
    fn value_range_of_string(&mut self) -> Option<(usize, usize)> {
        self.string().map(|(start, end, _)| (start, end))
    }

    /// A string from its opening quote: its range, quotes included, and whether it holds an
    /// escape (a key without one is a slice of the line). Inlined for the common case, a
    /// short string without an escape, which ends in the first loop; the rest is
    /// [`Scanner::string_rest`].
    #[inline]
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        let line = self.line();
        let start = self.pos;
        if line.get(start) != Some(&b'"') {
            return None;
        }
        let i = self.plain_run(start + 1);
        if line.get(i) == Some(&b'"') {
            self.pos = i + 1;
            return Some((start, self.pos, false));
        }
        self.string_rest(start, i)
    }

    /// The end of a plain run from `i` within [`SHORT_STRING`] bytes, byte by byte with one
    /// table lookup per byte: most strings are keys and names, which end before `memchr`
    /// pays for its setup.
    #[inline]
    fn plain_run(&self, mut i: usize) -> usize {
        let line = self.line();
        let short_end = (i + SHORT_STRING).min(line.len());
        while i < short_end && !STOPS_PLAIN_RUN[usize::from(line[i])] {
            i += 1;
        }
        i
    }

    /// The rest of a string from `i`, after a first plain run that did not end at its
    /// closing quote: a long run, an escape or a control character.
    #[inline(never)]
    fn string_rest(&mut self, start: usize, mut i: usize) -> Option<(usize, usize, bool)> {
        let line = self.line();
        let mut escaped = false;
        loop {
            let c = *line.get(i)?;
            if !STOPS_PLAIN_RUN[usize::from(c)] {
                // A run longer than SHORT_STRING: `memchr` finds its end.
                let rest = &line[i..];
                let n = memchr::memchr2(b'"', b'\\', rest)?;
                // No control character in a string (JSON); `fold` rather than `any`, so
                // that the loop has no early exit and vectorises.
                if rest[..n].iter().fold(false, |bad, &c| bad | (c < 0x20)) {
                    return None;
                }
                i += n;
                continue;
            }
            match c {
                b'"' => {
                    self.pos = i + 1;
                    return Some((start, self.pos, escaped));
                }
                b'\\' => {
                    escaped = true;
                    i = self.escape(i)?;
                    i = self.plain_run(i);
                }
                // A control character.
                _ => return None,
            }
        }
    }

    /// One escape at `i` (its backslash); the index after it, or `None` when it is not
    /// valid or a lone surrogate half (the rules of [`super::escape`]).
    fn escape(&self, i: usize) -> Option<usize> {
        super::escape::escape_end(self.line(), i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_of_every_length_agree_with_serde_wherever_a_special_byte_is() {
        // Around SHORT_STRING, where the scan changes from bytes to memchr.
        let specials: [&[u8]; 7] = [b"\x01", b"\t", b"\\n", b"\\u00e9", b"\\x", b"\\", b"\""];
        for len in 0..80 {
            for place in 0..=len {
                for special in specials {
                    let mut line = b"\"".to_vec();
                    line.extend(std::iter::repeat_n(b'a', place));
                    line.extend_from_slice(special);
                    line.extend(std::iter::repeat_n(b'b', len - place));
                    line.push(b'"');
                    let serde = serde_json::from_slice::<serde_json::Value>(&line).is_ok();
                    assert_eq!(plain(&line), serde, "{}", String::from_utf8_lossy(&line));
                }
            }
        }
    }

    /// One whole value that the scanner accepts.
    fn plain(line: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(line) else {
            return false;
        };
        let mut s = Scanner::new(text);
        s.value().is_some() && s.at_end()
    }

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
    fn what_is_not_json_is_not_plain() {
        for bad in [
            "01",
            "-",
            "-01",
            "1.",
            ".5",
            "+1",
            "1 2",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{\"a\":}",
            "{a:1}",
            "{1:2}",
            "{\"a\":1 \"b\":2}",
            "tru",
            "nul",
            "True",
            "\"\\x\"",
            "\"\\u12G4\"",
            "\"\\u12\"",
            "\"a\u{1}b\"",
            "\"tab\there\"",
            "\"abc",
            "[",
            "{",
            "}",
            "]",
            "",
            " ",
            "\"\\\"",
        ] {
            assert!(!plain(bad.as_bytes()), "{bad:?}");
            assert!(
                serde_json::from_str::<serde_json::Value>(bad).is_err(),
                "the vector {bad:?} is JSON"
            );
        }
        for good in [
            "0",
            "-0",
            "-1.25",
            "[]",
            "{}",
            " [ 1 , { \"a\" : [ ] } ] ",
            "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
            "\"\\u00e9\\uABCD\"",
            "true",
            "false",
            "null",
            "{\"a\":1,\"a\":2}",
        ] {
            assert!(plain(good.as_bytes()), "{good:?}");
        }
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
