//! The listen stream reads the list flags that the bridge declared to VS Code in its own
//! `initialize` result (R1, O6): only flags that are JSON `true` count.

use serde_json::json;

use crate::listen::replay::Declared;
use crate::translate::initialize::result_capabilities;

#[test]
fn o6_declared_flags_of_the_initialize_result_need_json_true() {
    let discover = json!({"supportedVersions":["2026-07-28"],
      "capabilities":{"logging":{},"completions":{},"prompts":{"listChanged":true},
        "resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}});
    let result = json!({"capabilities": result_capabilities(&discover)});
    let d = Declared::from_initialize_result(&result);
    assert!(d.tools_list_changed && d.prompts_list_changed && d.resources_list_changed);
    assert!(d.resources_subscribe && d.logging && d.listens());
    let d = Declared::from_initialize_result(
        &json!({"capabilities":{"tools":{"listChanged":"yes"},"logging":true}}),
    );
    assert_eq!(d, Declared::default());
    assert!(!d.listens());
}
