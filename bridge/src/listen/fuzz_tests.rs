//! Fuzzing on stable: the filter of the listen stream (O6, O7). Each target is driven by a
//! seeded generator (`crate::test_support::values::Rng`) over generated inputs and checks the
//! rule against a model: what is forwarded is a notification of a forwarded method whose
//! params are those received without the subscription id (every other member kept, in its
//! order); the `notifications` filter has a member for each declared list and for the URIs.
//! Each counts the cases that reached its property and fails below a floor. The generators
//! and the number of cases: `crate::test_support::fuzz`.

use crate::listen::filter::{Event, FORWARDED, SUBSCRIPTION_ID_KEY, classify as listen_classify};
use crate::listen::replay::{Declared, listen_filter};
use crate::test_support::fuzz::{assert_floor, cases, rng};
use crate::test_support::values::{Rng, value};
use serde_json::{Map, Value, json};

/// The params that VS Code must get for `params` (O7): `_meta` without the subscription id,
/// gone when it becomes empty or is not an object; `None` when nothing is left.
fn expected_params(params: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut p = params.clone();
    let keep = match p.get_mut("_meta") {
        Some(Value::Object(meta)) => {
            meta.shift_remove(SUBSCRIPTION_ID_KEY);
            !meta.is_empty()
        }
        Some(_) => false,
        None => true,
    };
    if !keep {
        p.shift_remove("_meta");
    }
    (!p.is_empty()).then_some(p)
}

fn params(rng: &mut Rng) -> Value {
    let mut p = match value(rng, 3) {
        Value::Object(m) => m,
        other => {
            if rng.next().is_multiple_of(4) {
                return other;
            }
            Map::new()
        }
    };
    if rng.next().is_multiple_of(2) {
        p.insert("uri".into(), json!("file:///a"));
    }
    match rng.next() % 3 {
        0 => {
            let mut meta = Map::new();
            meta.insert(SUBSCRIPTION_ID_KEY.into(), value(rng, 1));
            if rng.next().is_multiple_of(2) {
                meta.insert("x".into(), value(rng, 1));
            }
            p.insert("_meta".into(), Value::Object(meta));
        }
        1 => {
            p.insert("_meta".into(), value(rng, 1));
        }
        _ => {}
    }
    Value::Object(p)
}

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
    let run = cases() * 4;
    let (mut forwarded, mut filters) = (0, 0);
    for case in 0..run {
        let m = methods[(rng.next() % 5) as usize];
        let p = params(&mut rng);
        let frame = json!({"jsonrpc":"2.0","method":m,"params":p});
        match listen_classify(&frame) {
            Event::Forward(f) => {
                forwarded += 1;
                assert!(FORWARDED.contains(&m), "case {case}: {m} forwarded");
                let f = f.as_object().unwrap();
                assert_eq!(f["jsonrpc"], "2.0");
                assert_eq!(f["method"], m);
                assert!(!f.contains_key("id"), "case {case}");
                let expected = expected_params(p.as_object().unwrap());
                let got = f.get("params").and_then(Value::as_object);
                assert_eq!(got, expected.as_ref(), "case {case}: {frame}");
                if let (Some(g), Some(e)) = (got, &expected) {
                    assert!(g.keys().eq(e.keys()), "case {case}: the order");
                }
            }
            Event::Acknowledged { .. } => {
                assert_eq!(m, "notifications/subscriptions/acknowledged", "case {case}")
            }
            Event::Drop => assert!(
                !FORWARDED.contains(&m)
                    || !p.is_object()
                    || (m == "notifications/resources/updated" && !p["uri"].is_string()),
                "case {case}: dropped {frame}"
            ),
        }

        let flag = |rng: &mut Rng| match rng.next() % 3 {
            0 => json!(true),
            1 => json!(false),
            _ => value(rng, 0),
        };
        let caps = json!({"capabilities":{
            "tools":{"listChanged":flag(&mut rng)},
            "prompts":{"listChanged":flag(&mut rng)},
            "resources":{"listChanged":flag(&mut rng),"subscribe":flag(&mut rng)}}});
        let declared = Declared::from_initialize_result(&caps);
        let uris: Vec<String> = (0..rng.next() % 3)
            .map(|i| format!("file:///{i}"))
            .collect();
        let f = listen_filter(&declared, &uris);
        let c = &caps["capabilities"];
        let mut expected = Map::new();
        for (cap, key) in [
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ] {
            if c[cap]["listChanged"] == json!(true) {
                expected.insert(key.into(), json!(true));
            }
        }
        if !uris.is_empty() {
            expected.insert("resourceSubscriptions".into(), json!(uris));
        }
        filters += u64::from(!expected.is_empty());
        assert_eq!(f, Value::Object(expected), "case {case}: {caps}");
    }
    assert_floor("listen: events forwarded", forwarded, run, 150);
    assert_floor("listen: filters with a member", filters, run, 500);
}
