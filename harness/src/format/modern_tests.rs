//! The format's side of the Copilot runtime's 2026-07-28 path: `direct` at a URL and the
//! `listen` step.
use std::path::Path;

use serde_json::json;

use super::{Action, ClientStep, Transcript, parse};

fn p(text: &str) -> Result<Transcript, String> {
    parse(Path::new("t.jsonl"), text)
}

#[test]
fn direct_takes_the_https_fixture_at_mcp_and_refuses_other_paths_and_sign_ins() {
    assert!(p(r#"{"setup":{"direct":true,"upstream":{"https":[]}}}"#).is_ok());
    let path = r#"{"setup":{"direct":true,"upstream":{"https":{"args":["--revision","2025-11-25"],"path":"/sse"}}}}"#;
    assert!(p(path).unwrap_err().contains("direct"));
    let sign_in =
        r#"{"setup":{"direct":true,"upstream":{"https":{"args":["--oauth"],"sign_in":true}}}}"#;
    assert!(p(sign_in).unwrap_err().contains("direct"));
    let scripted = r#"{"setup":{"direct":true,"upstream":"scripted"}}"#;
    assert!(p(scripted).unwrap_err().contains("direct"));
}

#[test]
fn listen_takes_its_object_as_the_filter_and_its_options_beside_it() {
    let t = p(r#"{"listen":{"toolsListChanged":true},"capture_id":"l","expect":{}}"#).unwrap();
    let Action::Client { step, opts } = &t.steps[0].action else {
        panic!("a client step")
    };
    assert_eq!(*step, ClientStep::Listen);
    assert_eq!(opts["value"], json!({"toolsListChanged":true}));
    assert_eq!(opts["capture_id"], json!("l"));
    assert!(p(r#"{"listen":"tools"}"#).unwrap_err().contains("listen"));
    assert!(
        p(r#"{"listen":{},"answers":[]}"#)
            .unwrap_err()
            .contains("answers")
    );
}
