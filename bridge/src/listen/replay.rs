//! What the initialize result declares, the `subscriptions/listen` params, the gap replay and
//! the set of subscribed URIs (R2, O6, O7 and the quirks about order; the 2026-07-28
//! specification, basic/patterns/subscriptions).

use serde_json::{Map, Value, json};

/// The lists and features that the initialize result (sent to VS Code) declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared {
    pub tools_list_changed: bool,
    pub prompts_list_changed: bool,
    pub resources_list_changed: bool,
    pub resources_subscribe: bool,
    pub logging: bool,
}

impl Declared {
    /// Read the `capabilities` of an initialize result (or of a discover result): each flag only
    /// when it is JSON `true` inside an object; `logging` when it is an object.
    pub fn from_initialize_result(result: &Value) -> Self {
        let caps = result.get("capabilities");
        let flag = |cap: &str, key: &str| {
            caps.and_then(|c| c.get(cap))
                .filter(|c| c.is_object())
                .and_then(|c| c.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        Declared {
            tools_list_changed: flag("tools", "listChanged"),
            prompts_list_changed: flag("prompts", "listChanged"),
            resources_list_changed: flag("resources", "listChanged"),
            resources_subscribe: flag("resources", "subscribe"),
            logging: caps
                .and_then(|c| c.get("logging"))
                .is_some_and(Value::is_object),
        }
    }

    /// R2: whether `notifications/initialized` starts the listener (a list change or
    /// `resources.subscribe` is declared).
    pub fn listens(&self) -> bool {
        self.any_list() || self.resources_subscribe
    }

    /// Whether any list change is declared.
    pub fn any_list(&self) -> bool {
        self.tools_list_changed || self.prompts_list_changed || self.resources_list_changed
    }

    /// The list-change methods of the declared lists, in the order tools, prompts, resources.
    pub fn list_change_methods(&self) -> Vec<&'static str> {
        [
            (self.tools_list_changed, "notifications/tools/list_changed"),
            (
                self.prompts_list_changed,
                "notifications/prompts/list_changed",
            ),
            (
                self.resources_list_changed,
                "notifications/resources/list_changed",
            ),
        ]
        .into_iter()
        .filter_map(|(on, m)| on.then_some(m))
        .collect()
    }
}

/// O6 / O7: the `notifications` filter of `subscriptions/listen`: `true` for each declared
/// list, plus `resourceSubscriptions` when URIs exist.
pub fn listen_filter(declared: &Declared, uris: &[String]) -> Value {
    let mut f = Map::new();
    if declared.tools_list_changed {
        f.insert("toolsListChanged".into(), Value::Bool(true));
    }
    if declared.prompts_list_changed {
        f.insert("promptsListChanged".into(), Value::Bool(true));
    }
    if declared.resources_list_changed {
        f.insert("resourcesListChanged".into(), Value::Bool(true));
    }
    if !uris.is_empty() {
        f.insert(
            "resourceSubscriptions".into(),
            Value::Array(uris.iter().cloned().map(Value::String).collect()),
        );
    }
    Value::Object(f)
}

/// The params of `subscriptions/listen` without `_meta` (the upstream client adds the
/// protocol `_meta` and the log level: see `upstream::envelope`).
pub fn listen_params(declared: &Declared, uris: &[String]) -> Value {
    json!({"notifications": listen_filter(declared, uris)})
}

/// Whether a listen stream is needed at all: a declared list or a subscribed URI.
pub fn needs_stream(declared: &Declared, uris: &[String]) -> bool {
    declared.any_list() || !uris.is_empty()
}

/// Quirk "VS Code lists the tools at the same time as notifications/initialized": the gap
/// replay after an acknowledgment: one list change per declared list (tools, prompts,
/// resources) and one `notifications/resources/updated {uri}` per subscribed URI. List
/// changes have no params.
pub fn gap_replay(declared: &Declared, uris: &[String]) -> Vec<Value> {
    let lists = declared
        .list_change_methods()
        .into_iter()
        .map(|m| json!({"jsonrpc": "2.0", "method": m}));
    let updates = uris.iter().map(|u| {
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": u}})
    });
    lists.chain(updates).collect()
}

/// The params of `resources/subscribe` / `resources/unsubscribe`: `{uri}` with a string URI;
/// anything else → −32602 (`None`).
pub fn subscription_uri(params: Option<&Value>) -> Option<&str> {
    params?.get("uri")?.as_str()
}

/// The outcome of a subscription change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Already subscribed, or not subscribed: answer `{}` at once, no new stream.
    Unchanged,
    /// Open a stream with this full URI set; its first acknowledgment answers `{}` and makes it
    /// active, then the old stream is cancelled. On failure the old set stays.
    NewSet(Vec<String>),
}

/// The subscribed URIs, in the order of subscription (O7).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscriptions {
    uris: Vec<String>,
}

impl Subscriptions {
    pub fn uris(&self) -> &[String] {
        &self.uris
    }

    /// O7: `resources/subscribe`.
    pub fn subscribe(&self, uri: &str) -> Change {
        if self.uris.iter().any(|u| u == uri) {
            return Change::Unchanged;
        }
        let mut set = self.uris.clone();
        set.push(uri.to_owned());
        Change::NewSet(set)
    }

    /// O7: `resources/unsubscribe` (VS Code never sends it; the bridge accepts it).
    pub fn unsubscribe(&self, uri: &str) -> Change {
        if !self.uris.iter().any(|u| u == uri) {
            return Change::Unchanged;
        }
        Change::NewSet(self.uris.iter().filter(|u| *u != uri).cloned().collect())
    }

    /// The new set is in force (its stream acknowledged, or no stream is needed).
    pub fn commit(&mut self, set: Vec<String>) {
        self.uris = set;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Declared {
        Declared::from_initialize_result(&json!({"capabilities": {"logging": {},
            "prompts": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
            "tools": {"listChanged": true}}}))
    }

    #[test]
    fn r2_declared_flags_need_json_true() {
        assert_eq!(
            all(),
            Declared {
                tools_list_changed: true,
                prompts_list_changed: true,
                resources_list_changed: true,
                resources_subscribe: true,
                logging: true
            }
        );
        let d = Declared::from_initialize_result(
            &json!({"capabilities": {"tools": {"listChanged": "true"}, "prompts": {"listChanged": 1}, "resources": {"subscribe": false}, "logging": true}}),
        );
        assert_eq!(d, Declared::default());
        assert!(!d.listens());
        assert_eq!(
            Declared::from_initialize_result(&json!({})),
            Declared::default()
        );
        let sub_only = Declared::from_initialize_result(
            &json!({"capabilities": {"resources": {"subscribe": true}}}),
        );
        assert!(sub_only.listens() && !sub_only.any_list());
    }

    #[test]
    fn o6_listen_params_of_the_declared_lists() {
        assert_eq!(
            listen_params(&all(), &[]).to_string(),
            r#"{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}}"#
        );
        let tools_only = Declared {
            tools_list_changed: true,
            ..Declared::default()
        };
        assert_eq!(
            listen_params(&tools_only, &[]),
            json!({"notifications": {"toolsListChanged": true}})
        );
        let sub_only = Declared {
            resources_subscribe: true,
            ..Declared::default()
        };
        assert_eq!(
            listen_params(&sub_only, &["file:///a".into()]),
            json!({"notifications": {"resourceSubscriptions": ["file:///a"]}})
        );
    }

    #[test]
    fn o7_listen_filter_matches_the_schema_shape() {
        let f = listen_filter(&all(), &["a".into(), "b".into()]);
        assert_eq!(f["resourceSubscriptions"], json!(["a", "b"]));
        for (k, v) in f.as_object().expect("a value") {
            assert!(
                [
                    "toolsListChanged",
                    "promptsListChanged",
                    "resourcesListChanged",
                    "resourceSubscriptions"
                ]
                .contains(&k.as_str())
            );
            assert!(v.is_boolean() || v.is_array());
        }
    }

    #[test]
    fn quirk_gap_replay_one_change_per_list_and_one_update_per_uri() {
        let frames: Vec<String> = gap_replay(&all(), &["file:///a".into(), "file:///b".into()])
            .iter()
            .map(Value::to_string)
            .collect();
        assert_eq!(
            frames,
            [
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///b"}}"#,
            ]
        );
        // A server with tools and resources list changes: tools then resources.
        let d = Declared {
            tools_list_changed: true,
            resources_list_changed: true,
            ..Declared::default()
        };
        let methods: Vec<_> = gap_replay(&d, &[])
            .iter()
            .map(|f| f["method"].as_str().expect("a value").to_owned())
            .collect();
        assert_eq!(
            methods,
            [
                "notifications/tools/list_changed",
                "notifications/resources/list_changed"
            ]
        );
        assert!(gap_replay(&Declared::default(), &[]).is_empty());
    }

    #[test]
    fn o7_subscription_changes() {
        let mut s = Subscriptions::default();
        assert_eq!(s.unsubscribe("a"), Change::Unchanged);
        let Change::NewSet(set) = s.subscribe("a") else {
            panic!()
        };
        assert_eq!(set, ["a"]);
        // Not committed yet (the new stream failed): the old set stays.
        assert!(s.uris().is_empty());
        s.commit(set);
        assert_eq!(s.subscribe("a"), Change::Unchanged);
        let Change::NewSet(set) = s.subscribe("b") else {
            panic!()
        };
        s.commit(set);
        assert_eq!(s.uris(), ["a", "b"]);
        assert_eq!(s.unsubscribe("a"), Change::NewSet(vec!["b".into()]));
    }

    #[test]
    fn o7_last_unsubscribe_without_lists_needs_no_stream() {
        let sub_only = Declared {
            resources_subscribe: true,
            ..Declared::default()
        };
        assert!(!needs_stream(&sub_only, &[]));
        assert!(needs_stream(&sub_only, &["a".into()]));
        assert!(needs_stream(&all(), &[]));
    }

    #[test]
    fn o7_subscription_params() {
        assert_eq!(
            subscription_uri(Some(&json!({"uri": "file:///a"}))),
            Some("file:///a")
        );
        for bad in [json!({}), json!({"uri": 1}), json!([]), json!("file:///a")] {
            assert_eq!(subscription_uri(Some(&bad)), None);
        }
        assert_eq!(subscription_uri(None), None);
    }
}
