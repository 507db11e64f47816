//! The checks before the client sees anything (R8, O1, O2, O3, C2).
//! All input requests of a round are checked first: one failure fails the original request
//! with −32603 and a detail that names the input request, and the client gets no request of
//! that round.

use std::sync::Arc;

use jsonschema::Validator;
use serde_json::{Map, Value};

use super::error::InputError;
use super::forms::compile_requested_schema;
use super::parse::InputRequired;
use super::shape::{self, ElicitMode};
use crate::errors::Cause;

/// Detail texts (without the `input request '<key>': ` prefix).
pub mod what {
    pub const NOT_THE_SHAPE: &str = "the input request does not have the shape of the schema";
    pub const NO_FORM: &str = "the client did not declare elicitation.form";
    pub const NO_URL: &str = "the client did not declare elicitation.url";
    pub const NO_SAMPLING: &str = "the client did not declare sampling";
    pub const NO_SAMPLING_TOOLS: &str =
        "sampling with tools needs sampling.tools, and the client did not declare it";
    pub const NO_ROOTS: &str = "the client did not declare roots";
    pub const SCHEMA_DOES_NOT_COMPILE: &str = "the requestedSchema does not compile";
    pub const TOOL_RESULT_RULES: &str = "the sampling messages do not obey the tool result rules";
}

/// The input kinds that the client declared (the capabilities that the bridge declared
/// upstream: the client's, after the mask). C2: the Copilot harness declares sampling, form
/// and url, but no roots; VS Code never declares `sampling.tools`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCaps {
    pub form: bool,
    pub url: bool,
    pub sampling: bool,
    pub sampling_tools: bool,
    pub roots: bool,
}

impl ClientCaps {
    /// Read the client capabilities object. A capability counts only as a JSON object.
    /// `elicitation: {}` (neither `form` nor `url`) means form mode only (2025-11-25
    /// elicitation, backwards compatibility).
    pub fn from_capabilities(caps: &Value) -> Self {
        fn obj(v: Option<&Value>) -> Option<&Map<String, Value>> {
            v.and_then(Value::as_object)
        }
        let elicitation = obj(caps.get("elicitation"));
        let sampling = obj(caps.get("sampling"));
        fn has(o: Option<&Map<String, Value>>, k: &str) -> bool {
            o.is_some_and(|o| o.get(k).is_some_and(Value::is_object))
        }
        let form_key = has(elicitation, "form");
        let url_key = has(elicitation, "url");
        let neither =
            elicitation.is_some_and(|e| !e.contains_key("form") && !e.contains_key("url"));
        ClientCaps {
            form: form_key || neither,
            url: url_key,
            sampling: sampling.is_some(),
            sampling_tools: has(sampling, "tools"),
            roots: obj(caps.get("roots")).is_some(),
        }
    }
}

/// The client of the unit tests of the input rules: every kind as VS Code declares it (no
/// `sampling.tools`).
#[cfg(test)]
pub(crate) const ALL: ClientCaps = ClientCaps {
    form: true,
    url: true,
    sampling: true,
    sampling_tools: false,
    roots: true,
};

/// The kind of an input request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputKind {
    Form,
    Url,
    Sampling,
    Roots,
}

impl InputKind {
    /// The method of the request to the client.
    pub fn method(self) -> &'static str {
        match self {
            InputKind::Form | InputKind::Url => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }
}

/// An input request that passed every check.
#[derive(Debug, Clone)]
pub struct CheckedRequest {
    pub key: String,
    pub kind: InputKind,
    /// The params for the client: the upstream params minus `task` (the bridge declares no
    /// tasks); `None` for a `roots/list` without params. Every other member is kept.
    pub params: Option<Value>,
    /// The compiled `requestedSchema` of a form.
    pub validator: Option<Arc<Validator>>,
}

/// R8: check every input request of a round, in the upstream server's order; the
/// first failure fails the round.
pub fn check_round(
    round: &InputRequired,
    caps: &ClientCaps,
) -> Result<Vec<CheckedRequest>, InputError> {
    round
        .input_requests
        .iter()
        .map(|(key, request)| check_input_request(key, request, caps))
        .collect()
}

/// R8: check one input request: its shape (a 2026-07-28 `InputRequest`), the
/// capability that the client declared for it, and its kind's own rules.
pub fn check_input_request(
    key: &str,
    request: &Value,
    caps: &ClientCaps,
) -> Result<CheckedRequest, InputError> {
    let invalid = |what: &str| InputError::for_key(Cause::InvalidInputRequest, key, what);
    let undeclared = |what: &str| InputError::for_key(Cause::UndeclaredInputRequest, key, what);
    let shape_err = || invalid(what::NOT_THE_SHAPE);

    let obj = request.as_object().ok_or_else(shape_err)?;
    let method = obj
        .get("method")
        .and_then(Value::as_str)
        .ok_or_else(shape_err)?;
    let params = obj.get("params");
    let params_obj = match params {
        None => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return Err(shape_err()),
    };
    let mut checked = CheckedRequest {
        key: key.to_owned(),
        kind: InputKind::Roots,
        params: params.map(without_task),
        validator: None,
    };
    match method {
        "elicitation/create" => {
            let p = params_obj.ok_or_else(shape_err)?;
            match shape::elicit_mode(&Value::Object(p.clone())) {
                Some(ElicitMode::Form) => {
                    if !shape::is_form_params(p) {
                        return Err(shape_err());
                    }
                    if !caps.form {
                        return Err(undeclared(what::NO_FORM));
                    }
                    let schema = p.get("requestedSchema").ok_or_else(shape_err)?;
                    let validator = compile_requested_schema(schema)
                        .map_err(|_| invalid(what::SCHEMA_DOES_NOT_COMPILE))?;
                    checked.kind = InputKind::Form;
                    checked.validator = Some(Arc::new(validator));
                }
                Some(ElicitMode::Url) => {
                    if !shape::is_url_params(p) {
                        return Err(shape_err());
                    }
                    if !caps.url {
                        return Err(undeclared(what::NO_URL));
                    }
                    checked.kind = InputKind::Url;
                }
                None => return Err(shape_err()),
            }
        }
        "sampling/createMessage" => {
            let p = params_obj.ok_or_else(shape_err)?;
            if !shape::is_sampling_params(p) {
                return Err(shape_err());
            }
            if !caps.sampling {
                return Err(undeclared(what::NO_SAMPLING));
            }
            // O2: VS Code declares no sampling.tools and ignores tools: never send them.
            if shape::sampling_uses_tools(p) && !caps.sampling_tools {
                return Err(undeclared(what::NO_SAMPLING_TOOLS));
            }
            let messages = p
                .get("messages")
                .and_then(Value::as_array)
                .ok_or_else(shape_err)?;
            if !shape::obeys_tool_result_rules(messages) {
                return Err(invalid(what::TOOL_RESULT_RULES));
            }
            // includeContext is passed on as it is (O2: VS Code ignores it).
            checked.kind = InputKind::Sampling;
        }
        "roots/list" => {
            if params_obj.is_some_and(|p| !shape::opt(p, "_meta", shape::is_obj)) {
                return Err(shape_err());
            }
            // C2: the Copilot harness declares no roots.
            if !caps.roots {
                return Err(undeclared(what::NO_ROOTS));
            }
            checked.kind = InputKind::Roots;
        }
        _ => return Err(shape_err()),
    }
    Ok(checked)
}

/// The params minus `task`: the bridge declares no tasks to the client.
fn without_task(params: &Value) -> Value {
    let mut p = params.clone();
    if let Some(obj) = p.as_object_mut() {
        obj.shift_remove("task");
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Tell us",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}})
    }
    fn url() -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/auth"}})
    }
    fn sample() -> Value {
        json!({"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}})
    }

    fn detail(key: &str, req: Value, caps: ClientCaps) -> (Cause, String) {
        let e = check_input_request(key, &req, &caps).unwrap_err();
        (e.cause, e.detail)
    }

    #[test]
    fn c2_capabilities_of_the_two_harnesses() {
        let local = ClientCaps::from_capabilities(&json!({"roots": {"listChanged": true},
            "sampling": {}, "elicitation": {"form": {}, "url": {}}, "tasks": {}}));
        assert_eq!(
            local,
            ClientCaps {
                form: true,
                url: true,
                sampling: true,
                sampling_tools: false,
                roots: true
            }
        );
        let copilot = ClientCaps::from_capabilities(
            &json!({"sampling": {}, "elicitation": {"form": {}, "url": {}}}),
        );
        assert_eq!(
            copilot,
            ClientCaps {
                form: true,
                url: true,
                sampling: true,
                sampling_tools: false,
                roots: false
            }
        );
        assert!(ClientCaps::from_capabilities(&json!({"elicitation": {}})).form);
        let url_only = ClientCaps::from_capabilities(&json!({"elicitation": {"url": {}}}));
        assert!(!url_only.form && url_only.url);
        assert!(ClientCaps::from_capabilities(&json!({"sampling": {"tools": {}}})).sampling_tools);
        assert_eq!(
            ClientCaps::from_capabilities(&json!({"roots": null, "sampling": true})),
            ClientCaps::default()
        );
        assert_eq!(
            ClientCaps::from_capabilities(&json!(null)),
            ClientCaps::default()
        );
    }

    #[test]
    fn o1_form_passes_and_compiles() {
        let c = check_input_request("profile", &form(), &ALL).unwrap();
        assert_eq!(c.kind, InputKind::Form);
        assert!(c.validator.is_some());
        assert_eq!(c.params.unwrap(), form()["params"]);
        // A form without mode is a form.
        let mut f = form();
        f["params"].as_object_mut().unwrap().remove("mode");
        assert_eq!(
            check_input_request("f", &f, &ALL).unwrap().kind,
            InputKind::Form
        );
    }

    #[test]
    fn r8_params_lose_task_and_keep_everything_else() {
        let mut f = form();
        f["params"]["task"] = json!({"ttl": 1});
        f["params"]["_meta"] = json!({"k": 1});
        f["params"]["x-extra"] = json!([1]);
        let c = check_input_request("f", &f, &ALL).unwrap();
        let p = c.params.unwrap();
        assert!(p.get("task").is_none());
        assert_eq!(p["_meta"], json!({"k": 1}));
        assert_eq!(p["x-extra"], json!([1]));
        let r = check_input_request("r", &json!({"method": "roots/list"}), &ALL).unwrap();
        assert_eq!(r.params, None);
        let r = check_input_request(
            "r",
            &json!({"method": "roots/list", "params": {"task": {}}}),
            &ALL,
        )
        .unwrap();
        assert_eq!(r.params, Some(json!({})));
    }

    #[test]
    fn r8_shape_failures() {
        let shape = (
            Cause::InvalidInputRequest,
            "input request 'k': the input request does not have the shape of the schema".to_owned(),
        );
        for bad in [
            json!({"method": "tools/call", "params": {"name": "x"}}),
            json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}),
            json!({"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]}}),
            json!("roots/list"),
            json!(null),
            json!({"params": {}}),
            json!({"method": "roots/list", "params": []}),
            json!({"method": "roots/list", "params": {"_meta": 1}}),
            json!({"method": "elicitation/create"}),
            json!({"method": "elicitation/create", "params": {"mode": "popup", "message": "x"}}),
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "x"}}),
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "x", "url": 5}}),
            json!({"method": "elicitation/create", "params": {"message": "x", "requestedSchema": {"type": "object", "properties": {"o": {"type": "object"}}}}}),
            json!({"method": "elicitation/create", "params": {"message": "x", "requestedSchema": {"type": "array", "properties": {}}}}),
            json!({"method": "elicitation/create", "params": {"message": 1, "requestedSchema": {"type": "object", "properties": {}}}}),
            json!({"method": "Elicitation/Create", "params": {"message": "x", "requestedSchema": {"type": "object", "properties": {}}}}),
        ] {
            assert_eq!(detail("k", bad.clone(), ALL), shape, "{bad}");
        }
    }

    #[test]
    fn o1_o2_o3_c2_undeclared_input_kinds() {
        let none = ClientCaps::default();
        assert_eq!(
            detail("profile", form(), none),
            (
                Cause::UndeclaredInputRequest,
                "input request 'profile': the client did not declare elicitation.form".into()
            )
        );
        assert_eq!(
            detail("auth", url(), none),
            (
                Cause::UndeclaredInputRequest,
                "input request 'auth': the client did not declare elicitation.url".into()
            )
        );
        assert_eq!(
            detail("model", sample(), none),
            (
                Cause::UndeclaredInputRequest,
                "input request 'model': the client did not declare sampling".into()
            )
        );
        assert_eq!(
            detail("where", json!({"method": "roots/list"}), none),
            (
                Cause::UndeclaredInputRequest,
                "input request 'where': the client did not declare roots".into()
            )
        );
    }

    #[test]
    fn o2_sampling_with_tools_is_refused_without_sampling_tools() {
        let expect = (Cause::UndeclaredInputRequest, "input request 'plan': sampling with tools needs sampling.tools, and the client did not declare it".to_owned());
        let mut t = sample();
        t["params"]["tools"] = json!([{"name": "w", "inputSchema": {"type": "object"}}]);
        assert_eq!(detail("plan", t.clone(), ALL), expect);
        let mut c = sample();
        c["params"]["toolChoice"] = json!({"mode": "auto"});
        assert_eq!(detail("plan", c, ALL), expect);
        let b = json!({"method": "sampling/createMessage", "params": {"maxTokens": 5, "messages": [
            {"role": "user", "content": {"type": "text", "text": "x"}},
            {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "w", "input": {}}},
            {"role": "user", "content": {"type": "tool_result", "toolUseId": "a", "content": []}}]}});
        assert_eq!(detail("plan", b.clone(), ALL), expect);
        // With sampling.tools declared, the same requests pass.
        let with_tools = ClientCaps {
            sampling_tools: true,
            ..ALL
        };
        assert_eq!(
            check_input_request("plan", &t, &with_tools).unwrap().kind,
            InputKind::Sampling
        );
        assert_eq!(
            check_input_request("plan", &b, &with_tools).unwrap().kind,
            InputKind::Sampling
        );
    }

    #[test]
    fn o2_tool_result_rules_are_checked() {
        let with_tools = ClientCaps {
            sampling_tools: true,
            ..ALL
        };
        let b = json!({"method": "sampling/createMessage", "params": {"maxTokens": 5, "messages": [
            {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "w", "input": {}}},
            {"role": "user", "content": {"type": "text", "text": "no result"}}]}});
        assert_eq!(
            detail("plan", b, with_tools),
            (
                Cause::InvalidInputRequest,
                "input request 'plan': the sampling messages do not obey the tool result rules"
                    .into()
            )
        );
    }

    #[test]
    fn o2_include_context_passes_as_it_is() {
        let mut s = sample();
        s["params"]["includeContext"] = json!("allServers");
        let c = check_input_request("m", &s, &ALL).unwrap();
        assert_eq!(c.params.unwrap()["includeContext"], "allServers");
    }

    #[test]
    fn o1_requested_schema_that_does_not_compile() {
        let f = json!({"method": "elicitation/create", "params": {"message": "x", "requestedSchema": {"type": "object",
            "properties": {"a": {"type": "string", "minLength": -1}}}}});
        assert_eq!(
            detail("f", f, ALL),
            (
                Cause::InvalidInputRequest,
                "input request 'f': the requestedSchema does not compile".into()
            )
        );
    }

    #[test]
    fn r8_a_round_fails_at_its_first_bad_request() {
        let round = InputRequired {
            input_requests: vec![
                ("ok".into(), form()),
                ("plan".into(), json!({"method": "tools/call"})),
                ("where".into(), json!({"method": "roots/list"})),
            ],
            request_state: None,
        };
        let e = check_round(
            &round,
            &ClientCaps {
                roots: false,
                ..ALL
            },
        )
        .unwrap_err();
        assert_eq!(
            e.detail,
            "input request 'plan': the input request does not have the shape of the schema"
        );
        let ok = InputRequired {
            input_requests: vec![
                ("a".into(), form()),
                ("b".into(), url()),
                ("c".into(), sample()),
            ],
            request_state: None,
        };
        let kinds: Vec<_> = check_round(&ok, &ALL)
            .unwrap()
            .iter()
            .map(|c| c.kind)
            .collect();
        assert_eq!(
            kinds,
            [InputKind::Form, InputKind::Url, InputKind::Sampling]
        );
    }

    #[test]
    fn r8_a_refused_url_is_not_a_check_failure() {
        let mut u = url();
        u["params"]["url"] = json!("javascript:alert(1)");
        assert_eq!(
            check_input_request("auth", &u, &ALL).unwrap().kind,
            InputKind::Url
        );
    }
}
