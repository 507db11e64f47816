//! Routing of a round to the client (O1, O2, O3, quirks): which input
//! request goes to the client as it is, which becomes a one-choice form, which URL gets an
//! `elicitationId` or the Continue form, and which refused URL is answered `decline` at once.

use std::sync::Arc;

use jsonschema::Validator;
use serde_json::{Map, Value, json};

use super::check::{CheckedRequest, ClientCaps, InputKind, check_round};
use super::complete::{ElicitationIds, UrlSteps};
use super::error::InputError;
use super::forms::{choice_form, continue_form, has_no_property};
use super::parse::InputRequired;
use super::texts;
use super::url::url_allowed;

/// How one input request reaches the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// As it is: a form with properties, a sampling request, a roots request.
    AsIs,
    /// Quirk "VS Code cannot show a form without a property": the choice form.
    ChoiceForm,
    /// O1: a URL elicitation with the step's `elicitationId` injected.
    UrlStep { url: String, elicitation_id: String },
    /// O1: a URL accepted earlier and asked again: the Continue form (the client declares
    /// form mode).
    UrlContinue { url: String, elicitation_id: String },
}

/// One request of the bridge to the client in a round.
#[derive(Debug, Clone)]
pub struct Question {
    pub key: String,
    pub kind: InputKind,
    pub route: Route,
    /// The params of the request to the client (`None`: a `roots/list` without params).
    pub params: Option<Value>,
    /// The compiled `requestedSchema` of a form sent as it is.
    pub validator: Option<Arc<Validator>>,
}

impl Question {
    pub fn method(&self) -> &'static str {
        self.kind.method()
    }
}

/// The plan of one round: the questions for the client, the answers that the bridge gives
/// itself, the warnings to log, and the order of the keys for `inputResponses`.
#[derive(Debug, Clone, Default)]
pub struct RoundPlan {
    /// Every input-request key of the round, in the upstream server's order.
    pub keys: Vec<String>,
    pub questions: Vec<Question>,
    /// Answers without a question: a refused URL is answered `{"action":"decline"}`.
    pub preset: Vec<(String, Value)>,
    /// Warning lines (texts exact) for the log.
    pub warnings: Vec<String>,
    pub request_state: Option<String>,
}

impl RoundPlan {
    /// Whether the round asked for input (then the retry carries `inputResponses`).
    pub fn has_input_requests(&self) -> bool {
        !self.keys.is_empty()
    }
}

/// R8: check a parsed round and route it. A failing check fails the round, and
/// the client gets none of its requests.
pub fn plan_round(
    round: &InputRequired,
    caps: &ClientCaps,
    steps: &mut UrlSteps,
    elicitation_ids: &mut ElicitationIds,
) -> Result<RoundPlan, InputError> {
    let checked = check_round(round, caps)?;
    let mut plan = route_round(checked, caps, steps, elicitation_ids);
    plan.request_state = round.request_state.clone();
    Ok(plan)
}

/// Route checked input requests.
pub fn route_round(
    checked: Vec<CheckedRequest>,
    caps: &ClientCaps,
    steps: &mut UrlSteps,
    elicitation_ids: &mut ElicitationIds,
) -> RoundPlan {
    let mut plan = RoundPlan::default();
    for c in checked {
        plan.keys.push(c.key.clone());
        let original_params = c.params.clone();
        let params = c.params.unwrap_or_else(|| Value::Object(Map::new()));
        let question = |route, params, validator| Question {
            key: c.key.clone(),
            kind: c.kind,
            route,
            params,
            validator,
        };
        match c.kind {
            InputKind::Form => {
                let empty = params.get("requestedSchema").is_some_and(has_no_property);
                if empty {
                    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                    plan.questions.push(question(
                        Route::ChoiceForm,
                        Some(choice_form(message)),
                        None,
                    ));
                } else {
                    plan.questions
                        .push(question(Route::AsIs, Some(params), c.validator.clone()));
                }
            }
            InputKind::Url => {
                let url = params
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if !url_allowed(&url) {
                    plan.preset
                        .push((c.key.clone(), json!({"action": "decline"})));
                    plan.warnings.push(texts::refused_url(&c.key));
                    continue;
                }
                let accepted_before = steps.open_step(&url).is_some_and(|s| s.accepted);
                let step = steps.step_for(&url, elicitation_ids);
                if accepted_before && caps.form {
                    let route = Route::UrlContinue {
                        url,
                        elicitation_id: step.elicitation_id,
                    };
                    plan.questions
                        .push(question(route, Some(continue_form()), None));
                } else {
                    let mut p = params;
                    if let Some(obj) = p.as_object_mut() {
                        obj.insert(
                            "elicitationId".into(),
                            Value::String(step.elicitation_id.clone()),
                        );
                    }
                    let route = Route::UrlStep {
                        url,
                        elicitation_id: step.elicitation_id,
                    };
                    plan.questions.push(question(route, Some(p), None));
                }
            }
            InputKind::Sampling | InputKind::Roots => {
                plan.questions
                    .push(question(Route::AsIs, original_params, None));
            }
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::check::ALL;
    use crate::input::forms::{CONTINUE_MESSAGE, continue_schema};

    fn round(reqs: Vec<(&str, Value)>, state: Option<&str>) -> InputRequired {
        InputRequired {
            input_requests: reqs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            request_state: state.map(str::to_owned),
        }
    }
    fn url_req(u: &str) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": u}})
    }
    fn empty_form(msg: &str) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": msg, "requestedSchema": {"type": "object", "properties": {}}}})
    }

    #[test]
    fn quirk_form_without_property_becomes_choice_form() {
        let r = round(vec![("confirm", empty_form("Delete the file?"))], None);
        let plan = plan_round(&r, &ALL, &mut UrlSteps::new(), &mut ElicitationIds::new()).unwrap();
        assert_eq!(plan.questions[0].route, Route::ChoiceForm);
        assert_eq!(
            plan.questions[0].params.as_ref().unwrap(),
            &choice_form("Delete the file?")
        );
    }

    #[test]
    fn o1_url_gets_elicitation_id_and_keeps_its_members() {
        let mut req = url_req("https://example.com/auth");
        req["params"]["_meta"] = json!({"m": 1});
        req["params"]["task"] = json!({});
        let r = round(vec![("auth", req)], Some("s-1"));
        let mut eids = ElicitationIds::new();
        let plan = plan_round(&r, &ALL, &mut UrlSteps::new(), &mut eids).unwrap();
        assert_eq!(plan.request_state.as_deref(), Some("s-1"));
        let p = plan.questions[0].params.as_ref().unwrap();
        let id = p["elicitationId"].as_str().unwrap();
        assert!(id.starts_with("elicitation-") && id.ends_with("-1"), "{id}");
        assert_eq!(
            p,
            &json!({"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "_meta": {"m": 1}, "elicitationId": id})
        );
    }

    #[test]
    fn o1_refused_url_is_declined_with_the_warning_and_never_asked() {
        let r = round(
            vec![
                ("auth", url_req("javascript:alert(1)")),
                ("ok", url_req("http://127.0.0.1/x")),
            ],
            None,
        );
        let mut eids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let plan = plan_round(&r, &ALL, &mut steps, &mut eids).unwrap();
        assert_eq!(
            plan.preset,
            vec![("auth".to_owned(), json!({"action": "decline"}))]
        );
        assert_eq!(
            plan.warnings,
            [
                "input request 'auth': the bridge refused the URL of a URL elicitation, and the upstream server gets decline"
            ]
        );
        assert_eq!(plan.questions.len(), 1);
        assert_eq!(plan.keys, ["auth", "ok"]);
        // The refused URL took no elicitation id.
        let Route::UrlStep {
            url,
            elicitation_id,
        } = &plan.questions[0].route
        else {
            panic!("{:?}", plan.questions[0].route);
        };
        assert_eq!(url, "http://127.0.0.1/x");
        assert!(elicitation_id.ends_with("-1"), "{elicitation_id}");
    }

    #[test]
    fn o1_url_accepted_earlier_gets_the_continue_form() {
        let mut eids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let r = round(vec![("auth", url_req("https://example.com/auth"))], None);
        let first = plan_round(&r, &ALL, &mut steps, &mut eids).unwrap();
        let id = first.questions[0].params.as_ref().unwrap()["elicitationId"].clone();
        let id = id.as_str().unwrap();
        steps.mark_accepted(id);
        let plan = plan_round(&r, &ALL, &mut steps, &mut eids).unwrap();
        let q = &plan.questions[0];
        assert_eq!(
            q.route,
            Route::UrlContinue {
                url: "https://example.com/auth".into(),
                elicitation_id: id.into()
            }
        );
        let p = q.params.as_ref().unwrap();
        assert_eq!(p["message"], CONTINUE_MESSAGE);
        assert_eq!(p["requestedSchema"], continue_schema());
        assert!(p.get("url").is_none() && p.get("elicitationId").is_none());
    }

    #[test]
    fn o1_client_without_form_gets_the_same_url_and_id_again() {
        let caps = ClientCaps { form: false, ..ALL };
        let mut eids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let r = round(vec![("auth", url_req("https://example.com/auth"))], None);
        let first = plan_round(&r, &caps, &mut steps, &mut eids).unwrap();
        let id = first.questions[0].params.as_ref().unwrap()["elicitationId"].clone();
        let id = id.as_str().unwrap();
        steps.mark_accepted(id);
        let plan = plan_round(&r, &caps, &mut steps, &mut eids).unwrap();
        assert_eq!(
            plan.questions[0].route,
            Route::UrlStep {
                url: "https://example.com/auth".into(),
                elicitation_id: id.into()
            }
        );
        assert_eq!(
            plan.questions[0].params.as_ref().unwrap()["elicitationId"],
            id
        );
    }

    #[test]
    fn r8_state_only_round_has_no_question() {
        let r = round(vec![], Some("again"));
        let plan = plan_round(&r, &ALL, &mut UrlSteps::new(), &mut ElicitationIds::new()).unwrap();
        assert!(!plan.has_input_requests());
        assert!(plan.questions.is_empty());
        assert_eq!(plan.request_state.as_deref(), Some("again"));
    }

    #[test]
    fn r8_failed_check_routes_nothing() {
        let r = round(
            vec![
                ("auth", url_req("https://example.com/auth")),
                ("bad", json!({"method": "tools/call"})),
            ],
            None,
        );
        let mut steps = UrlSteps::new();
        let mut eids = ElicitationIds::new();
        assert!(plan_round(&r, &ALL, &mut steps, &mut eids).is_err());
        // No step and no elicitation id were taken.
        assert!(steps.steps().is_empty());
        assert!(eids.next_id().ends_with("-1"));
    }
}
