//! Lone UTF-16 surrogates in `\u` escapes: JavaScript's JSON.stringify writes them for a
//! string cut in the middle of a pair, and serde_json refuses them. Only a line that failed
//! for this reason comes here, so the fast path of every other line has no extra pass. What an
//! escape and a surrogate half are is said once, in [`super::escape`].

use super::escape::{Half, half, unit_at};

/// Replaces each `\uD800`–`\uDFFF` escape that is not part of a valid pair with `\uFFFD`.
/// Returns `None` when the text has no such escape (the caller then keeps its first error).
pub fn replace_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut in_string = false;
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => {
                if let Some(unit) = unit_at(bytes, i) {
                    let next = unit_at(bytes, i + 6).and_then(half);
                    if half(unit) == Some(Half::High) && next == Some(Half::Low) {
                        i += 12;
                        continue;
                    }
                    if half(unit).is_some() {
                        out.push_str(&text[last..i]);
                        out.push_str("\\ufffd");
                        changed = true;
                        i += 6;
                        last = i;
                        continue;
                    }
                    i += 6;
                } else {
                    i += 2;
                }
            }
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_high_and_low_surrogates_are_replaced_pairs_kept() {
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"x\ud800y"}"#).as_deref(),
            Some(r#"{"a":"x\ufffdy"}"#)
        );
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"\uDC00"}"#).as_deref(),
            Some(r#"{"a":"\ufffd"}"#)
        );
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"\ud800\ud800\udc00"}"#).as_deref(),
            Some(r#"{"a":"\ufffd\ud800\udc00"}"#)
        );
        assert_eq!(replace_lone_surrogates(r#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"\\ud800"}"#),
            None,
            "an escaped backslash is no escape"
        );
        assert_eq!(replace_lone_surrogates(r#"{"a":"é\u0041"}"#), None);
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"\ud800"#).as_deref(),
            Some(r#"{"a":"\ufffd"#)
        );
    }
}
