#![allow(clippy::unwrap_used)] // a test fails by its panic
//! Fuzzing on stable: the filter of the listen stream. Each target is driven by a seeded generator
//! (`crate::test_support::values::Rng`) over generated and mutated inputs, and checks that
//! the rule does not panic, that it gives the same output for the same input, that it stays
//! within its limits, and the rule's own invariants. The generators and the number of
//! cases: `crate::test_support::fuzz`.

use crate::listen::filter::classify as listen_classify;
use crate::listen::replay::{Declared, listen_filter};
use crate::test_support::fuzz::{cases, rng};
use crate::test_support::values::value;
use serde_json::json;

// ---------------------------------------------------------------------------------------
// Target: the listen filter

#[test]
fn fuzz_listen_filter() {
    let mut rng = rng(5);
    let methods = [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
        "notifications/message",
        "x",
    ];
    for _ in 0..cases() * 4 {
        let m = methods[(rng.next() % 5) as usize];
        let frame = json!({"jsonrpc":"2.0","method":m,"params":value(&mut rng, 4)});
        let e = listen_classify(&frame);
        assert_eq!(format!("{e:?}"), format!("{:?}", listen_classify(&frame)));
        let declared = Declared::from_initialize_result(&value(&mut rng, 4));
        let uris: Vec<String> = (0..rng.next() % 3)
            .map(|i| format!("file:///{i}"))
            .collect();
        assert_eq!(
            listen_filter(&declared, &uris),
            listen_filter(&declared, &uris)
        );
    }
}
