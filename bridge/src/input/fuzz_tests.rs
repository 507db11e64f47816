//! Fuzzing on stable: the rules of an input round. Each target is driven by a seeded
//! generator (`crate::test_support::values::Rng`) over generated inputs and checks the
//! rules' properties: the parse keeps every key of the round in the server's order and its
//! `requestState`; a plan covers those keys, asks each question once and keeps the state.
//! Each counts the cases that reached its property and fails below a floor. The generators
//! and the number of cases: `crate::test_support::fuzz`.

use crate::input::answers::{ClientAnswer, shape_answer};
use crate::input::check::ClientCaps;
use crate::input::complete::{ElicitationIds, UrlSteps};
use crate::input::parse::parse_input_required;
use crate::input::route::plan_round;
use crate::test_support::fuzz::{assert_floor, cases, rng};
use crate::test_support::values::value;
use serde_json::json;

// ---------------------------------------------------------------------------------------
// Target: the input round (parse, check, answer shaping)

#[test]
fn fuzz_input_round() {
    let mut rng = rng(4);
    let all = ClientCaps {
        form: true,
        url: true,
        sampling: true,
        sampling_tools: true,
        roots: true,
    };
    let kinds = ["elicitation/create", "sampling/createMessage", "roots/list"];
    let run = cases() * 2;
    let (mut parsed_count, mut asked, mut shaped) = (0, 0, 0);
    for case in 0..run {
        let mut requests = serde_json::Map::new();
        // Two rounds in three have only valid requests, so that the plan and the answers are
        // reached; the third has random params.
        let valid = !rng.next().is_multiple_of(3);
        for k in 0..rng.next() % 4 {
            let pick = (rng.next() % 3) as usize;
            let method = kinds[pick];
            let params = match (valid, pick) {
                (true, 0) => {
                    json!({"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}})
                }
                (true, 1) => {
                    json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10})
                }
                (true, _) => json!({}),
                _ if rng.next().is_multiple_of(3) => {
                    json!({"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"a":value(&mut rng, 2)}}})
                }
                _ => value(&mut rng, 4),
            };
            requests.insert(format!("k{k}"), json!({"method": method, "params": params}));
        }
        let state = if rng.next().is_multiple_of(2) {
            json!(format!("s{case}"))
        } else {
            value(&mut rng, 1)
        };
        let round =
            json!({"resultType":"input_required","inputRequests":requests,"requestState":state});
        let Ok(parsed) = parse_input_required(&round) else {
            continue;
        };
        parsed_count += 1;
        let keys: Vec<&String> = parsed.input_requests.iter().map(|(k, _)| k).collect();
        assert!(
            keys.iter().copied().eq(requests.keys()),
            "case {case}: the keys"
        );
        assert_eq!(
            parsed.request_state.as_deref(),
            state.as_str(),
            "case {case}: the requestState"
        );
        for caps in [&all, &ClientCaps::default()] {
            let plan = plan_round(
                &parsed,
                caps,
                &mut UrlSteps::new(),
                &mut ElicitationIds::new(),
            );
            let Ok(plan) = plan else { continue };
            assert!(plan.keys.iter().eq(keys.iter().copied()), "case {case}");
            assert_eq!(plan.request_state, parsed.request_state, "case {case}");
            let mut seen = std::collections::HashSet::new();
            for q in &plan.questions {
                assert!(keys.contains(&&q.key), "case {case}: {}", q.key);
                assert!(seen.insert(q.key.clone()), "case {case}: {} twice", q.key);
            }
            for q in &plan.questions {
                asked += 1;
                let answer = match rng.next() % 3 {
                    0 => ClientAnswer::Result(
                        json!({"action":"accept","content":value(&mut rng, 2)}),
                    ),
                    1 => ClientAnswer::Result(value(&mut rng, 3)),
                    _ => ClientAnswer::Error(value(&mut rng, 2)),
                };
                shaped += u64::from(shape_answer(q, &answer).is_ok());
            }
        }
    }
    assert_floor("input rounds parsed", parsed_count, run, 300);
    assert_floor("input questions asked", asked, run, 300);
    assert_floor("input answers shaped", shaped, run, 40);
}
