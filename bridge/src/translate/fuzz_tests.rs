//! Fuzzing on stable: the translation rules. Each target is driven by a seeded generator
//! (`crate::test_support::values::Rng`) over generated inputs and checks the rules'
//! properties: what `initialize` gives VS Code (R1), what a forwarded request keeps (R3: every
//! member but `_meta` and `task` unchanged, only the `_meta` keys that pass), the shape of
//! results (R4, R5; shaping twice changes nothing more) and the schema repair (idempotent).
//! Each counts the cases that reached its property and fails below a floor. The generators
//! and the number of cases: `crate::test_support::fuzz`.

use crate::test_support::fuzz::{assert_floor, cases, rng};
use crate::test_support::values::value;
use crate::translate::forward::{classify as method_class, forward_params, passes_upstream};
use crate::translate::initialize::{
    ServerInfoFallback, initialize_result, parse_initialize, upstream_capabilities,
};
use crate::translate::schema::{FixKind, output_schema_allowed, repair_input_schema};
use crate::translate::shape::{is_list, shape_result};
use serde_json::{Value, json};

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

/// R3: the forwarded params are the params without `_meta` and `task`, every other member
/// unchanged and in its order; the `_meta` keys that go upstream are those that pass, with
/// their values; VS Code's progress token stays with the bridge.
fn check_forward(case: u64, params: &Value) -> bool {
    let f = forward_params(Some(params.clone()));
    let mut expected = params.as_object().cloned().unwrap_or_default();
    let meta = expected.remove("_meta");
    expected.remove("task");
    let got = f.params.into_map();
    assert_eq!(got, expected, "case {case}");
    assert!(got.keys().eq(expected.keys()), "case {case}: the order");
    let Some(Value::Object(meta)) = meta else {
        assert!(
            f.meta.is_empty() && f.progress_token.is_none(),
            "case {case}"
        );
        return false;
    };
    let passed: Vec<_> = meta.iter().filter(|(k, _)| passes_upstream(k)).collect();
    assert!(f.meta.iter().eq(passed), "case {case}: {:?}", f.meta);
    let token = meta
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_number() || t.is_boolean());
    assert_eq!(f.progress_token.as_ref(), token, "case {case}");
    true
}

#[test]
fn fuzz_translation_rules() {
    let mut rng = rng(3);
    let fallback = ServerInfoFallback {
        name: "n".into(),
        version: "v".into(),
    };
    let run = cases() * 2;
    let (mut with_meta, mut shaped_count) = (0, 0);
    for case in 0..run {
        let v = value(&mut rng, 5);
        let _ = parse_initialize(Some(&v));
        let _ = upstream_capabilities(&v);
        let discover = json!({"resultType":"complete","capabilities":v,"_meta":{"io.modelcontextprotocol/serverInfo":value(&mut rng, 2)}});
        for d in [&v, &discover] {
            let r = initialize_result(d, &fallback);
            assert_eq!(r["protocolVersion"], "2025-11-25");
            assert!(
                r["capabilities"].is_object() && r["serverInfo"]["name"].is_string(),
                "{r}"
            );
        }
        let mut params =
            json!({"name":"t","arguments":value(&mut rng, 3),"x":value(&mut rng, 2),"task":{}});
        if case % 2 == 0 {
            params["_meta"] = json!({"progressToken":value(&mut rng, 0),"vscode.requestId":value(&mut rng, 1),
                "traceparent":"00-1","io.modelcontextprotocol/x":1,"other":value(&mut rng, 1)});
        }
        with_meta += u64::from(check_forward(case, &params));
        let _ = check_forward(case, &v);
        let method = METHODS[(rng.next() as usize) % METHODS.len()];
        let _ = method_class(method);
        let result = if case % 2 == 0 {
            json!({"resultType":"complete","tools":[{"name":"t","inputSchema":value(&mut rng, 6)}],"nextCursor":value(&mut rng, 1),"content":value(&mut rng, 1)})
        } else {
            v.clone()
        };
        if let Some((r, _)) = shape_result(method, result) {
            shaped_count += 1;
            if let Some(c) = r.get("nextCursor").filter(|_| is_list(method)) {
                assert!(c.is_string(), "R4: {r}");
            }
            if method == "tools/call" {
                assert!(r["content"].is_array(), "R5: {r}");
            }
            // The rules hold of their own output: shaping again changes nothing.
            let again = shape_result(method, r.clone()).map(|(a, _)| a);
            assert_eq!(again.as_ref(), Some(&r), "case {case}: not stable");
        }
        // Schema repair: idempotent (a second repair finds nothing more).
        let mut schema = value(&mut rng, 6);
        let _ = repair_input_schema(&mut schema);
        let mut again = schema.clone();
        let second = repair_input_schema(&mut again);
        assert!(
            second.iter().all(|f| f.kind == FixKind::TooDeep),
            "case {case}: not idempotent: {second:?}"
        );
        assert_eq!(schema, again);
        let _ = output_schema_allowed(&schema);
    }
    assert_floor("forward: params with _meta", with_meta, run, 450);
    assert_floor("shape: results shaped", shaped_count, run, 450);
}
