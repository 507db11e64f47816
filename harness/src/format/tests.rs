//! The parser's tests.
#![allow(clippy::unwrap_used)]
use super::*;

fn p(text: &str) -> Result<Transcript, String> {
    parse(Path::new("t.jsonl"), text)
}

#[test]
fn parses_setup_and_steps_with_line_numbers() {
    let t = p(r#"# a comment
{"setup":{"profile":"local","upstream":{"scripted":{"stubborn":true}},"args":["--name","x"]}}

{"send":{"jsonrpc":"2.0","id":1,"method":"ping"},"note":"why"}
{"expect":{"id":1,"result":{}},"within_ms":100}
{"expect":[{"id":2},{"id":3}],"order":"any"}
{"send_hex":"7b 0a"}
"#)
    .unwrap();
    assert_eq!(t.setup.profile, Profile::Local);
    assert!(
        matches!(&t.setup.upstream, Upstream::Scripted(s) if s.stubborn && s.discover.is_some())
    );
    assert_eq!(t.steps.len(), 4);
    assert_eq!(t.steps[0].line, 4);
    assert!(
        matches!(&t.steps[2].action, Action::Expect { patterns, order: Order::Any, .. } if patterns.len() == 2)
    );
    assert!(matches!(&t.steps[3].action, Action::SendHex(b) if b == &vec![0x7b, 0x0a]));
}

#[test]
fn refuses_unknown_members_and_directives() {
    assert!(
        p(r#"{"expect":{"id":1},"whithin_ms":3}"#)
            .unwrap_err()
            .contains("whithin_ms")
    );
    assert!(
        p(r#"{"expct":{}}"#)
            .unwrap_err()
            .contains("unknown directive")
    );
    assert!(p(r#"{"setup":{"profil":"local"}}"#).is_err());
    assert!(
        p("{\"send\":1}\n{\"setup\":{}}")
            .unwrap_err()
            .contains("first")
    );
    assert!(p(r#"{"upstream_reply":{"result":{},"error":{}}}"#).is_err());
    assert!(p(r#"{"expect_stderr":"("}"#).is_err());
    assert!(p(r#"{"expect_stderr_order":["^a$"]}"#).is_err());
    assert!(p(r#"{"expect_stderr_order":["^a$","("]}"#).is_err());
    assert!(p(r#"{"expect_exit":"HUP"}"#).is_err());
}

#[test]
fn exit_by_signal_and_ordered_stderr() {
    let t = p(r#"{"expect_exit":"TERM","within_ms":3000}
{"expect_exit":null}
{"expect_exit":1}
{"expect_stderr_order":["^a$","^b$"],"within_ms":2000}
"#)
    .unwrap();
    assert!(matches!(&t.steps[0].action,
            Action::ExpectExit { code: None, signal: Some(s), within_ms: Some(3000) } if s == "TERM"));
    assert!(matches!(
        &t.steps[1].action,
        Action::ExpectExit {
            code: None,
            signal: None,
            ..
        }
    ));
    assert!(matches!(
        &t.steps[2].action,
        Action::ExpectExit {
            code: Some(1),
            signal: None,
            ..
        }
    ));
    assert!(matches!(&t.steps[3].action,
            Action::ExpectStderrOrder { regexes, within_ms: Some(2000) } if regexes.len() == 2));
}

#[test]
fn manual_discover_and_auto_replies() {
    let t = p(r#"{"setup":{"upstream":{"scripted":{"discover":"manual","auto":{"subscriptions/listen":"hang"}}}}}"#)
            .unwrap();
    let Upstream::Scripted(s) = t.setup.upstream else {
        panic!("scripted")
    };
    assert!(s.discover.is_none());
    assert_eq!(s.auto.len(), 1);
    assert!(p(r#"{"setup":{"upstream":{"scripted":{"auto":{"x":{}}}}}}"#).is_err());
}

#[test]
fn client_step_values_hold_options_too() {
    let t = p(r#"{"setup":{"profile":"local"}}
{"start":{"expect":{"a":1}}}
{"stop":{},"code":0,"within_ms":2000}
{"call":"add","arguments":{"a":1},"expect_text":"2"}
"#)
    .unwrap();
    let Action::Client { opts, .. } = &t.steps[0].action else {
        panic!("a client step")
    };
    assert_eq!(opts["expect"], serde_json::json!({"a":1}));
    let Action::Client { opts, .. } = &t.steps[1].action else {
        panic!("a client step")
    };
    assert_eq!(opts["within_ms"], serde_json::json!(2000));
    let Action::Client { opts, .. } = &t.steps[2].action else {
        panic!("a client step")
    };
    assert_eq!(opts["value"], serde_json::json!("add"));
    assert!(
        p(r#"{"stop":{"code":0},"code":1}"#)
            .unwrap_err()
            .contains("twice")
    );
    assert!(
        p(r#"{"call":"add","bogus":1}"#)
            .unwrap_err()
            .contains("bogus")
    );
}

#[test]
fn client_step_options_are_checked() {
    use serde_json::json;
    let mut o = Map::new();
    o.insert("value".into(), json!("tools"));
    assert!(check_options(ClientStep::List, &o).is_ok());
    o.insert("bogus".into(), json!(1));
    assert!(check_options(ClientStep::List, &o).is_err());
    let mut o = Map::new();
    o.insert("value".into(), json!("nope"));
    assert!(check_options(ClientStep::List, &o).is_err());
    let o = Map::new();
    assert!(check_options(ClientStep::Call, &o).is_err());
}

#[test]
fn the_fixture_is_needed_only_when_a_transcript_starts_it() {
    let uses = |text: &str| uses_fixture(&p(text).unwrap());
    assert!(uses(r#"{"setup":{"upstream":"fixture"}}"#));
    assert!(
        uses(r#"{"send":{}}"#),
        "the default upstream is the fixture"
    );
    assert!(!uses(r#"{"setup":{"upstream":"scripted"}}"#));
    assert!(!uses(r#"{"setup":{"upstream":"none","args":["--help"]}}"#));
    assert!(uses(
        r#"{"setup":{"upstream":{"command":["sh","-c","exec ${fixture}"]}}}"#
    ));
}
