//! Parse only what a rule needs (a hot-path choice of bridge/README.md): a JSON object whose member values stay the bytes
//! received until a rule reads one, and are written back from those bytes.
//!
//! A member is a slice of the line it came in (a [`Bytes`] that shares the line's buffer), so
//! that a 16 MiB text is neither copied nor escaped again on its way through the bridge.
//! The member list mirrors `serde_json::Map` with `preserve_order` exactly: a key that comes
//! twice keeps its first place and its last value, and [`LazyObject::remove`] is a swap
//! remove, so that a result shaped here has its members in the same order as when it is
//! shaped as a `Value`.

use std::borrow::Cow;
use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::out::{COPY_BELOW, FrameBuf};

/// One member value.
#[derive(Clone, Debug)]
pub enum Member {
    /// The JSON text as received: valid, and without anything that a full parse would change
    /// (see [`super::scan::Scanner`]).
    Raw(Bytes),
    /// A value that the bridge parsed or put there.
    Value(Value),
}

impl Member {
    /// The value of the member (parsed when it is raw).
    pub fn value(&self) -> Cow<'_, Value> {
        match self {
            Member::Raw(bytes) => Cow::Owned(parse_raw(bytes)),
            Member::Value(v) => Cow::Borrowed(v),
        }
    }

    pub fn into_value(self) -> Value {
        match self {
            Member::Raw(bytes) => parse_raw(&bytes),
            Member::Value(v) => v,
        }
    }

    /// The first byte of the JSON text: its type, without a parse.
    fn first_byte(&self) -> u8 {
        match self {
            Member::Raw(bytes) => bytes.first().copied().unwrap_or(b'n'),
            Member::Value(Value::Null) => b'n',
            Member::Value(Value::Bool(_)) => b't',
            Member::Value(Value::Number(_)) => b'0',
            Member::Value(Value::String(_)) => b'"',
            Member::Value(Value::Array(_)) => b'[',
            Member::Value(Value::Object(_)) => b'{',
        }
    }

    pub fn is_string(&self) -> bool {
        self.first_byte() == b'"'
    }

    pub fn is_array(&self) -> bool {
        self.first_byte() == b'['
    }

    pub fn is_null(&self) -> bool {
        self.first_byte() == b'n'
    }

    fn write(&self, out: &mut FrameBuf) {
        match self {
            Member::Raw(bytes) => out.push_bytes(bytes),
            Member::Value(v) => out.push_value(v),
        }
    }
}

/// Raw text passed the checks of a full parse before it was kept ([`super::scan::Scanner`]
/// checks the syntax and what a full parse would read differently), so this parse does not
/// fail; if it ever did, the member would
/// read as `null` rather than stop the bridge.
fn parse_raw(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// A JSON object whose members are parsed on demand.
#[derive(Clone, Debug, Default)]
pub struct LazyObject {
    members: Vec<(Key, Member)>,
}

/// The key of a member: a key that results and params often have is a static text, so that
/// a message of a few members allocates no key (a hot-path choice of bridge/README.md).
pub type Key = Cow<'static, str>;

/// Keys of the top level of params and results, by how often they come.
const COMMON_KEYS: [&str; 22] = [
    "content",
    "isError",
    "resultType",
    "structuredContent",
    "_meta",
    "name",
    "arguments",
    "tools",
    "nextCursor",
    "cursor",
    "resources",
    "resourceTemplates",
    "prompts",
    "contents",
    "messages",
    "description",
    "uri",
    "completion",
    "ref",
    "argument",
    "inputResponses",
    "requestState",
];

/// The key `text` as a [`Key`]: static when it is a common one.
pub fn key_of(text: &str) -> Key {
    match COMMON_KEYS.iter().find(|k| **k == text) {
        Some(k) => Cow::Borrowed(*k),
        None => Cow::Owned(text.to_owned()),
    }
}

impl LazyObject {
    pub fn new() -> LazyObject {
        LazyObject::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.members.iter().position(|(k, _)| k == key)
    }

    pub fn get(&self, key: &str) -> Option<&Member> {
        self.position(key).map(|i| &self.members[i].1)
    }

    /// The value of a member, parsed when it is raw.
    pub fn get_value(&self, key: &str) -> Option<Cow<'_, Value>> {
        self.get(key).map(Member::value)
    }

    /// Like `Map::insert` of serde_json: a key that is there keeps its place.
    pub fn insert(&mut self, key: impl Into<Key>, member: Member) {
        let key = key.into();
        match self.position(&key) {
            Some(i) => self.members[i].1 = member,
            None => self.members.push((key, member)),
        }
    }

    /// Like `Map::remove` of serde_json with `preserve_order`: the last member takes the
    /// place of the removed one.
    pub fn remove(&mut self, key: &str) -> Option<Member> {
        let i = self.position(key)?;
        Some(self.members.swap_remove(i).1)
    }

    /// Every member parsed (for the rules that walk a whole result, and the input rounds).
    pub fn into_map(self) -> Map<String, Value> {
        self.members
            .into_iter()
            .map(|(k, m)| (k.into_owned(), m.into_value()))
            .collect()
    }

    pub fn to_map(&self) -> Map<String, Value> {
        self.clone().into_map()
    }

    /// About the bytes that [`LazyObject::write`] copies into a frame's buffer (a large raw
    /// member is a piece of its own and copies nothing), so that the buffer is sized once.
    pub fn copied_len(&self) -> usize {
        let members: usize = self
            .members
            .iter()
            .map(|(k, m)| {
                k.len()
                    + 4
                    + match m {
                        Member::Raw(b) if b.len() < COPY_BELOW => b.len(),
                        Member::Raw(_) => 0,
                        Member::Value(_) => VALUE_GUESS,
                    }
            })
            .sum();
        members + 2
    }

    /// Writes `{…}` with the members in their order; raw members go out as received.
    pub fn write(&self, out: &mut FrameBuf) {
        self.write_members(out, None);
    }

    /// Writes the object with the member `key` set to the JSON text `value`, where
    /// [`LazyObject::insert`] would put it (in its place, or last), without changing the
    /// object: the `_meta` of an upstream request goes out this way, so that the params of
    /// VS Code are written without a copy of their list.
    pub fn write_setting(&self, out: &mut FrameBuf, key: &str, value: &[u8]) {
        self.write_members(out, Some((key, value)));
    }

    fn write_members(&self, out: &mut FrameBuf, mut set: Option<(&str, &[u8])>) {
        out.push(b"{");
        for (i, (k, member)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(b",");
            }
            out.push_value_str(k);
            out.push(b":");
            match set {
                Some((key, value)) if k == key => {
                    out.push(value);
                    set = None;
                }
                _ => member.write(out),
            }
        }
        if let Some((key, value)) = set {
            if !self.members.is_empty() {
                out.push(b",");
            }
            out.push_value_str(key);
            out.push(b":");
            out.push(value);
        }
        out.push(b"}");
    }

    /// Builds an object from the members of a parse, in their order (a repeated key as in
    /// [`LazyObject::insert`]).
    pub(crate) fn from_members(members: Vec<(Key, Member)>) -> LazyObject {
        // Results have a few members; an index only for many, so that a large object never
        // costs a quadratic search.
        if members.len() <= 32 {
            let unique = members
                .iter()
                .enumerate()
                .all(|(i, (k, _))| members[..i].iter().all(|(seen, _)| seen != k));
            if unique {
                // The common case: the list is the object as it is.
                return LazyObject { members };
            }
        }
        let mut index: HashMap<Key, usize> = HashMap::with_capacity(members.len());
        let mut out: Vec<(Key, Member)> = Vec::with_capacity(members.len());
        for (k, m) in members {
            match index.get(&k) {
                Some(&i) => out[i].1 = m,
                None => {
                    index.insert(k.clone(), out.len());
                    out.push((k, m));
                }
            }
        }
        LazyObject { members: out }
    }
}

impl From<Map<String, Value>> for LazyObject {
    fn from(map: Map<String, Value>) -> LazyObject {
        LazyObject {
            members: map
                .into_iter()
                .map(|(k, v)| (Key::Owned(k), Member::Value(v)))
                .collect(),
        }
    }
}

/// The result of an upstream request: an object parsed on demand, or any value (a result
/// that took the full parse).
#[derive(Clone, Debug)]
pub enum Body {
    Object(LazyObject),
    Value(Value),
}

impl Body {
    pub fn into_value(self) -> Value {
        match self {
            Body::Object(o) => Value::Object(o.into_map()),
            Body::Value(v) => v,
        }
    }

    pub fn write(&self, out: &mut FrameBuf) {
        match self {
            Body::Object(o) => o.write(out),
            Body::Value(v) => out.push_value(v),
        }
    }

    /// About the bytes that [`Body::write`] copies into a frame's buffer.
    pub fn copied_len(&self) -> usize {
        match self {
            Body::Object(o) => o.copied_len(),
            Body::Value(_) => VALUE_GUESS,
        }
    }
}

/// The guess for a member that is a value, not bytes: a buffer that grows costs little more.
const VALUE_GUESS: usize = 128;

impl From<Value> for Body {
    fn from(v: Value) -> Body {
        Body::Value(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(s: &str) -> Member {
        Member::Raw(Bytes::copy_from_slice(s.as_bytes()))
    }

    fn text(o: &LazyObject) -> String {
        let mut out = FrameBuf::new();
        o.write(&mut out);
        String::from_utf8(out.into_frame().to_vec()).unwrap_or_default()
    }

    #[test]
    fn order_mirrors_the_map_of_serde_json() {
        let mut map = json!({"a":1,"b":2,"c":3,"d":4})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut lazy = LazyObject::from_members(vec![
            ("a".into(), raw("1")),
            ("b".into(), raw("2")),
            ("c".into(), raw("3")),
            ("d".into(), raw("4")),
        ]);
        map.remove("a");
        lazy.remove("a");
        map.insert("b".into(), json!(5));
        lazy.insert("b", Member::Value(json!(5)));
        map.insert("e".into(), json!(6));
        lazy.insert("e", Member::Value(json!(6)));
        assert_eq!(text(&lazy), serde_json::to_string(&map).unwrap_or_default());
        assert_eq!(lazy.into_map(), map);
    }

    #[test]
    fn a_repeated_key_keeps_its_place_and_its_last_value() {
        let lazy = LazyObject::from_members(vec![
            ("a".into(), raw("1")),
            ("b".into(), raw("2")),
            ("a".into(), raw("3")),
        ]);
        let parsed: Value = serde_json::from_str(r#"{"a":1,"b":2,"a":3}"#).unwrap_or_default();
        assert_eq!(text(&lazy), parsed.to_string());
    }

    #[test]
    fn many_members_with_repeats_keep_the_rules() {
        let members: Vec<(Key, Member)> = (0..100)
            .map(|i| (format!("k{}", i % 40).into(), raw(&i.to_string())))
            .collect();
        let text_of = |o: &LazyObject| text(o);
        let lazy = LazyObject::from_members(members);
        let mut json = String::from("{");
        for i in 0..100 {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&format!("\"k{}\":{i}", i % 40));
        }
        json.push('}');
        let parsed: Value = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(text_of(&lazy), parsed.to_string());
    }

    #[test]
    fn types_from_the_first_byte() {
        assert!(raw("\"x\"").is_string());
        assert!(raw("[1]").is_array());
        assert!(raw("null").is_null());
        assert!(!raw("{}").is_array());
        assert!(Member::Value(json!([])).is_array());
        assert_eq!(
            raw(r#"{"k":[1,"\u00e9"]}"#).into_value(),
            json!({"k":[1,"é"]})
        );
    }

    #[test]
    fn keys_are_escaped_on_the_way_out() {
        let lazy = LazyObject::from_members(vec![("a\"\n".into(), raw("1"))]);
        assert_eq!(text(&lazy), r#"{"a\"\n":1}"#);
    }
}
