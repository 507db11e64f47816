#![allow(clippy::unwrap_used)] // a test fails by its panic
//! Fuzzing on stable: the rules of an input round. Each target is driven by a seeded generator
//! (`crate::test_support::values::Rng`) over generated and mutated inputs, and checks that
//! the rule does not panic, that it gives the same output for the same input, that it stays
//! within its limits, and the rule's own invariants. The generators and the number of
//! cases: `crate::test_support::fuzz`.

use crate::input::answers::{ClientAnswer, shape_answer};
use crate::input::check::ClientCaps;
use crate::input::complete::{ElicitationIds, UrlSteps};
use crate::input::parse::parse_input_required;
use crate::input::route::plan_round;
use crate::test_support::fuzz::{cases, rng};
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
    for case in 0..cases() * 2 {
        let mut requests = serde_json::Map::new();
        for k in 0..rng.next() % 4 {
            let method = kinds[(rng.next() % 3) as usize];
            let params = if rng.next().is_multiple_of(3) {
                json!({"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"a":value(&mut rng, 2)}}})
            } else {
                value(&mut rng, 4)
            };
            requests.insert(format!("k{k}"), json!({"method": method, "params": params}));
        }
        let round = json!({"resultType":"input_required","inputRequests":requests,"requestState":value(&mut rng, 1)});
        let parsed = parse_input_required(&round);
        assert_eq!(
            format!("{parsed:?}"),
            format!("{:?}", parse_input_required(&round))
        );
        let Ok(parsed) = parsed else { continue };
        for caps in [&all, &ClientCaps::default()] {
            let plan = plan_round(
                &parsed,
                caps,
                &mut UrlSteps::new(),
                &mut ElicitationIds::new(),
            );
            let plan2 = plan_round(
                &parsed,
                caps,
                &mut UrlSteps::new(),
                &mut ElicitationIds::new(),
            );
            assert_eq!(format!("{plan:?}"), format!("{plan2:?}"), "case {case}");
            let Ok(plan) = plan else { continue };
            for q in &plan.questions {
                let answer = match rng.next() % 3 {
                    0 => ClientAnswer::Result(
                        json!({"action":"accept","content":value(&mut rng, 2)}),
                    ),
                    1 => ClientAnswer::Result(value(&mut rng, 3)),
                    _ => ClientAnswer::Error(value(&mut rng, 2)),
                };
                let a = shape_answer(q, &answer);
                assert_eq!(format!("{a:?}"), format!("{:?}", shape_answer(q, &answer)));
            }
        }
    }
}
