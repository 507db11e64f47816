#![allow(clippy::unwrap_used)] // a test fails by its panic
//! Fuzzing on stable: the translation rules. Each target is driven by a seeded generator
//! (`crate::test_support::values::Rng`) over generated and mutated inputs, and checks that
//! the rule does not panic, that it gives the same output for the same input, that it stays
//! within its limits, and the rule's own invariants. The generators and the number of
//! cases: `crate::test_support::fuzz`.

use crate::test_support::fuzz::{cases, rng};
use crate::test_support::values::value;
use crate::translate::forward::{classify as method_class, forward_params};
use crate::translate::initialize::{
    ServerInfoFallback, initialize_result, parse_initialize, upstream_capabilities,
};
use crate::translate::schema::{FixKind, output_schema_allowed, repair_input_schema};
use crate::translate::shape::{is_list, shape_result};
use serde_json::json;

// ---------------------------------------------------------------------------------------
// Target: the translation rules (initialize, forward, shape, schema repair)

const METHODS: &[&str] = &[
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "x/unknown",
];

#[test]
fn fuzz_translation_rules() {
    let mut rng = rng(3);
    let fallback = ServerInfoFallback {
        name: "n".into(),
        version: "v".into(),
    };
    for case in 0..cases() * 2 {
        let v = value(&mut rng, 5);
        let p = parse_initialize(Some(&v));
        assert_eq!(
            format!("{p:?}"),
            format!("{:?}", parse_initialize(Some(&v)))
        );
        let caps = upstream_capabilities(&v);
        assert_eq!(caps, upstream_capabilities(&v));
        let discover = json!({"resultType":"complete","capabilities":v,"_meta":{"io.modelcontextprotocol/serverInfo":value(&mut rng, 2)}});
        for d in [&v, &discover] {
            let r = initialize_result(d, &fallback);
            assert_eq!(r, initialize_result(d, &fallback), "case {case}");
            assert_eq!(r["protocolVersion"], "2025-11-25");
            assert!(
                r["capabilities"].is_object() && r["serverInfo"]["name"].is_string(),
                "{r}"
            );
        }
        let f = forward_params(Some(v.clone()));
        assert_eq!(
            format!("{f:?}"),
            format!("{:?}", forward_params(Some(v.clone())))
        );
        let method = METHODS[(rng.next() as usize) % METHODS.len()];
        let _ = method_class(method);
        let result = if case % 2 == 0 {
            json!({"resultType":"complete","tools":[{"name":"t","inputSchema":value(&mut rng, 6)}],"nextCursor":value(&mut rng, 1),"content":value(&mut rng, 1)})
        } else {
            v.clone()
        };
        let shaped = shape_result(method, result.clone());
        assert_eq!(
            format!("{shaped:?}"),
            format!("{:?}", shape_result(method, result))
        );
        if let Some((r, _)) = &shaped {
            if let Some(c) = r.get("nextCursor").filter(|_| is_list(method)) {
                assert!(c.is_string(), "R4: {r}");
            }
            if method == "tools/call" {
                assert!(r["content"].is_array(), "R5: {r}");
            }
        }
        // Schema repair: deterministic and idempotent (a second repair finds nothing more).
        let mut schema = value(&mut rng, 6);
        let mut again = schema.clone();
        let fixes = repair_input_schema(&mut schema);
        assert_eq!(
            format!("{fixes:?}"),
            format!("{:?}", repair_input_schema(&mut again))
        );
        assert_eq!(schema, again);
        let second = repair_input_schema(&mut again);
        assert!(
            second.iter().all(|f| f.kind == FixKind::TooDeep),
            "case {case}: not idempotent: {second:?}"
        );
        assert_eq!(schema, again);
        let _ = output_schema_allowed(&schema);
    }
}
