//! The lexing rules of a JSON string that the three hand-written readers of `wire` share: the
//! scanner of the pass-through parse (scan.rs), the id recovery of a line that failed
//! (recover.rs) and the repair of lone surrogates (surrogates.rs). One place says what an
//! escape is, what a `\u` code unit is and which units are surrogate halves, so that the three
//! cannot disagree on a line. The rules are serde_json's: an escape is `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`,
//! `\t` or `\u` with four hex digits, and a surrogate half counts only as half of a pair.

/// JSON's whitespace between tokens.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Which half of a UTF-16 surrogate pair a code unit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// D800–DBFF, the first of a pair.
    High,
    /// DC00–DFFF, the second of a pair.
    Low,
}

/// The half that `unit` is, or `None` for a unit that is a character by itself.
pub fn half(unit: u16) -> Option<Half> {
    match unit {
        0xD800..=0xDBFF => Some(Half::High),
        0xDC00..=0xDFFF => Some(Half::Low),
        _ => None,
    }
}

/// The code unit of the `\uXXXX` escape whose backslash is at `at`; `None` when there is no
/// such escape there (another escape, too few bytes, a digit that is not hex).
pub fn unit_at(bytes: &[u8], at: usize) -> Option<u16> {
    if bytes.get(at..at + 2)? != b"\\u" {
        return None;
    }
    bytes.get(at + 2..at + 6)?.iter().try_fold(0u16, |unit, b| {
        let digit = char::from(*b).to_digit(16)?;
        Some(unit << 4 | digit as u16)
    })
}

/// The index after the escape whose backslash is at `at`, a high half and its low half being
/// one escape; `None` when it is not valid, a lone half included.
pub fn escape_end(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 2),
        b'u' => match half(unit_at(bytes, at)?) {
            None => Some(at + 6),
            Some(Half::High) => {
                (half(unit_at(bytes, at + 6)?) == Some(Half::Low)).then_some(at + 12)
            }
            Some(Half::Low) => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_end_where_serde_json_says_they_do() {
        let cases: [(&str, Option<usize>); 12] = [
            (r"\n", Some(2)),
            (r"\/", Some(2)),
            (r"\x", None),
            (r"\u00e9", Some(6)),
            (r"\u00E9", Some(6)),
            (r"\u00g9", None),
            (r"\u00", None),
            (r"\ud83d\ude00", Some(12)),
            (r"\uD83D\uDE00", Some(12)),
            (r"\ud83d", None),
            (r"\ud83d\u0041", None),
            (r"\ude00", None),
        ];
        for (text, end) in cases {
            assert_eq!(escape_end(text.as_bytes(), 0), end, "{text}");
            let serde = serde_json::from_str::<String>(&format!("\"{text}\"")).is_ok();
            assert_eq!(end.is_some_and(|e| e == text.len()), serde, "{text}");
        }
    }

    #[test]
    fn code_units_and_their_halves() {
        assert_eq!(unit_at(br"\uD800", 0), Some(0xD800));
        assert_eq!(unit_at(br"x\u0041", 1), Some(0x41));
        assert_eq!(unit_at(br"\u+041", 0), None);
        assert_eq!(unit_at(br"\n0041", 0), None);
        assert_eq!(half(0xDBFF), Some(Half::High));
        assert_eq!(half(0xDC00), Some(Half::Low));
        assert_eq!(half(0xE000), None);
    }
}
