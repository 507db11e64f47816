//! Parsing of an `InputRequiredResult` (R8) and the round limits.

use serde_json::Value;

use super::error::InputError;
use crate::errors::Cause;
use crate::translate::shape::{ResultKind, result_kind};

/// At most this many input requests in one round (docs/architecture.md principle 7).
pub const MAX_INPUT_REQUESTS_PER_ROUND: usize = 16;

/// At most this many upstream rounds for one original request (docs/rules.md R8): an upstream that always asks again is called exactly 10 times.
pub const MAX_ROUNDS: u32 = 10;

/// R8: whether an upstream result is an `InputRequiredResult` (`resultType: "input_required"`).
/// Every other result (also one without `resultType`, which 2026-07-28 treats as `complete`) is
/// shaped and answered. One reading of `resultType` for the whole bridge: [`result_kind`].
pub fn is_input_required(result: &Value) -> bool {
    result_kind(result) == ResultKind::InputRequired
}

/// A parsed `InputRequiredResult`: the input requests in the order of the upstream server
/// (the keys are unique, as JSON object keys) and the opaque `requestState`.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequired {
    pub input_requests: Vec<(String, Value)>,
    pub request_state: Option<String>,
}

/// R8: parse an `InputRequiredResult` with the limit of 16 input requests a round.
pub fn parse_input_required(result: &Value) -> Result<InputRequired, InputError> {
    parse_input_required_with_limit(result, MAX_INPUT_REQUESTS_PER_ROUND)
}

/// R8: parse an `InputRequiredResult` with a given limit of input requests.
/// A round above the limit fails before the client sees anything.
pub fn parse_input_required_with_limit(
    result: &Value,
    limit: usize,
) -> Result<InputRequired, InputError> {
    let invalid = |what: &str| InputError::new(Cause::InvalidInputRequest, what);
    let obj = result
        .as_object()
        .ok_or_else(|| invalid("the result is not an object"))?;
    let input_requests = match obj.get("inputRequests") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(_) => return Err(invalid("the inputRequests member is not an object")),
    };
    let request_state = match obj.get("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("the requestState member is not a string")),
    };
    if input_requests.len() > limit {
        return Err(InputError::new(
            Cause::TooManyInputRequests,
            format!(
                "{} input requests in one round, limit: {limit}",
                input_requests.len()
            ),
        ));
    }
    Ok(InputRequired {
        input_requests,
        request_state,
    })
}

/// The round counter of one original request (R8). Round 0 is the first upstream
/// request; each `InputRequiredResult` either allows the next round or fails the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundCounter {
    round: u32,
    max_rounds: u32,
}

impl Default for RoundCounter {
    fn default() -> Self {
        RoundCounter::new()
    }
}

impl RoundCounter {
    pub fn new() -> Self {
        RoundCounter::with_max(MAX_ROUNDS)
    }

    pub fn with_max(max_rounds: u32) -> Self {
        RoundCounter {
            round: 0,
            max_rounds,
        }
    }

    /// The current round (0 for the first upstream request).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The current round answered `input_required`: the next round, or `too_many_rounds`
    /// when the upstream server asked in `max_rounds` rounds (detail `<n> rounds, limit: <m>`;
    /// log `texts::too_many_rounds`).
    pub fn input_required(&mut self) -> Result<u32, InputError> {
        let asked = self.round.saturating_add(1);
        if asked >= self.max_rounds {
            return Err(InputError::new(
                Cause::TooManyRounds,
                format!("{asked} rounds, limit: {}", self.max_rounds),
            ));
        }
        self.round = asked;
        Ok(asked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> InputError {
        parse_input_required(&v).unwrap_err()
    }

    #[test]
    fn r8_input_required_is_recognised_only_by_result_type() {
        assert!(is_input_required(
            &json!({"resultType": "input_required", "requestState": "s"})
        ));
        assert!(!is_input_required(&json!({"resultType": "complete"})));
        assert!(!is_input_required(&json!({"content": []})));
        assert!(!is_input_required(&json!({"resultType": "Input_Required"})));
        assert!(!is_input_required(&json!("input_required")));
        assert!(!is_input_required(&json!([])));
    }

    #[test]
    fn r8_parse_keeps_order_and_state() {
        let v = json!({"resultType": "input_required",
            "inputRequests": {"z": {"method": "roots/list"}, "a": {"method": "roots/list"}},
            "requestState": "s-1"});
        let p = parse_input_required(&v).unwrap();
        let keys: Vec<_> = p.input_requests.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a"]);
        assert_eq!(p.request_state.as_deref(), Some("s-1"));
        assert!(!p.input_requests.is_empty());
    }

    #[test]
    fn r8_missing_or_null_members_are_empty() {
        for v in [
            json!({"resultType": "input_required"}),
            json!({"resultType": "input_required", "inputRequests": null, "requestState": null}),
        ] {
            let p = parse_input_required(&v).unwrap();
            assert!(p.input_requests.is_empty());
            assert_eq!(p.request_state, None);
        }
        let p =
            parse_input_required(&json!({"inputRequests": {}, "requestState": "again"})).unwrap();
        assert!(p.input_requests.is_empty());
        assert_eq!(p.request_state.as_deref(), Some("again"));
    }

    #[test]
    fn r8_parse_texts_of_section_3_2() {
        for v in [json!([]), json!("x"), json!(null), json!(1)] {
            let e = err(v);
            assert_eq!(e.cause, Cause::InvalidInputRequest);
            assert_eq!(e.detail, "the result is not an object");
        }
        for bad in [json!([]), json!("x"), json!(1), json!(true)] {
            let e = err(json!({"inputRequests": bad}));
            assert_eq!(e.cause, Cause::InvalidInputRequest);
            assert_eq!(e.detail, "the inputRequests member is not an object");
        }
        for bad in [json!(1), json!({}), json!([]), json!(false)] {
            let e = err(json!({"requestState": bad}));
            assert_eq!(e.cause, Cause::InvalidInputRequest);
            assert_eq!(e.detail, "the requestState member is not a string");
        }
    }

    #[test]
    fn r8_sixteen_input_requests_pass_and_seventeen_fail() {
        let round = |n: usize| {
            let map: serde_json::Map<String, Value> = (0..n)
                .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
                .collect();
            json!({"resultType": "input_required", "inputRequests": map})
        };
        assert_eq!(
            parse_input_required(&round(16))
                .unwrap()
                .input_requests
                .len(),
            16
        );
        let e = err(round(17));
        assert_eq!(e.cause, Cause::TooManyInputRequests);
        assert_eq!(e.detail, "17 input requests in one round, limit: 16");
        let e = parse_input_required_with_limit(&round(3), 2).unwrap_err();
        assert_eq!(e.detail, "3 input requests in one round, limit: 2");
    }

    #[test]
    fn r8_an_upstream_that_always_asks_is_called_exactly_ten_times() {
        let mut rounds = RoundCounter::new();
        let mut upstream_calls = 1; // round 0
        loop {
            match rounds.input_required() {
                Ok(r) => {
                    assert_eq!(r, rounds.round());
                    upstream_calls += 1;
                }
                Err(e) => {
                    assert_eq!(e.cause, Cause::TooManyRounds);
                    assert_eq!(e.detail, "10 rounds, limit: 10");
                    break;
                }
            }
        }
        assert_eq!(upstream_calls, 10);
    }

    #[test]
    fn r8_round_limit_of_one_fails_at_the_first_input_required() {
        let mut rounds = RoundCounter::with_max(1);
        assert_eq!(
            rounds.input_required().unwrap_err().detail,
            "1 rounds, limit: 1"
        );
        let mut rounds = RoundCounter::with_max(0);
        assert!(rounds.input_required().is_err());
    }
}
