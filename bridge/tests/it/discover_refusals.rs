//! L1, L4 (docs/rules.md, the decision table of L4) on the real binary: what a refused
//! `server/discover` says of the server, against the fixture's `--discover-error` at a URL (a
//! 400 with each body) and on stdio (the same errors). A recognized error of 2026-07-28 is a
//! modern server's answer and reaches VS Code; -32022 follows its `data.supported`; any other
//! 400 body is an older server.

use crate::support;

use serde_json::{Value, json};
use support::https_fixture::HttpsFixture;
use support::{Bridge, call};

/// The fixture over plain http on 127.0.0.1 with `--discover-error <refusal>` (and the older
/// revision with `older`).
fn url_fixture(refusal: &str, older: bool) -> HttpsFixture {
    // `=`: the value starts with a minus sign.
    let option = format!("--discover-error={refusal}");
    let mut args = vec!["--plain-http", option.as_str()];
    if older {
        args.extend(["--revision", "2025-11-25"]);
    }
    HttpsFixture::start(&args, &[])
}

/// The bridge in front of the fixture at `url`.
fn at_url(url: &str) -> Bridge {
    Bridge::start_with_env_removed(&[url], &[], &support::MACHINE_VARS)
}

/// The bridge in front of the fixture on stdio with `--discover-error <refusal>`, older.
fn on_stdio(refusal: &str) -> Bridge {
    let fixture = support::fixture_bin().to_string_lossy().into_owned();
    let option = format!("--discover-error={refusal}");
    Bridge::start(&["--", &fixture, "--revision", "2025-11-25", &option])
}

/// VS Code's `initialize`, answered with an error: the error object.
fn refused_initialize(b: &mut Bridge) -> Value {
    let r = b.exchange(&support::vscode_initialize(1));
    assert!(
        r.get("error").is_some(),
        "initialize succeeded: {r}\nstderr:\n{}",
        b.stderr()
    );
    r["error"].clone()
}

/// An older server's start: `initialize` succeeds through the older dialect, and a call works.
fn works_as_older(b: &mut Bridge) {
    let result = b.initialize();
    assert_eq!(result["protocolVersion"], "2025-11-25", "{result}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let r = b.exchange(&call(2, "echo", json!({"text": "hi"})));
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    b.expect_text("it is a server of an older revision");
}

#[test]
fn l4_a_400_with_a_header_mismatch_is_a_modern_server_whose_error_reaches_vscode() {
    let fixture = url_fixture("-32020", false);
    let mut b = at_url(&fixture.url);
    let error = refused_initialize(&mut b);
    assert_eq!(error["code"], -32020, "{error}");
    b.expect_text("server/discover failed: the upstream server answered with the error -32020");
    assert!(
        !b.stderr().contains("older revision"),
        "no fallback:\n{}",
        b.stderr()
    );
    b.close_and_expect_exit_0();
}

#[test]
fn l4_a_400_with_a_missing_capability_is_a_modern_server_whose_error_reaches_vscode() {
    let fixture = url_fixture("-32021", false);
    let mut b = at_url(&fixture.url);
    let error = refused_initialize(&mut b);
    assert_eq!(error["code"], -32021, "{error}");
    assert!(
        !b.stderr().contains("older revision"),
        "no fallback:\n{}",
        b.stderr()
    );
    b.close_and_expect_exit_0();
}

#[test]
fn l4_a_400_with_a_32022_naming_an_older_revision_takes_initialize() {
    let fixture = url_fixture("-32022:2025-11-25", true);
    let mut b = at_url(&fixture.url);
    works_as_older(&mut b);
    b.expect_text("answered server/discover with the error -32022");
    b.close_and_expect_exit_0();
}

#[test]
fn l4_a_400_with_a_32022_naming_no_revision_of_the_bridge_names_them_escaped() {
    let fixture = url_fixture("-32022:2030-01-01,x\"y", false);
    let mut b = at_url(&fixture.url);
    let error = refused_initialize(&mut b);
    let detail = error["data"]["detail"].as_str().unwrap_or_default();
    assert_eq!(
        detail,
        r#"the upstream server supports none of the revisions of the bridge; it names "2030-01-01", "x\"y""#,
        "{error}"
    );
    b.expect_text(r#"server/discover failed: the upstream server supports none of the revisions of the bridge; it names "2030-01-01", "x\"y""#);
    b.close_and_expect_exit_0();
}

#[test]
fn l4_a_400_with_a_page_is_an_older_server() {
    let fixture = url_fixture("html", true);
    let mut b = at_url(&fixture.url);
    works_as_older(&mut b);
    b.expect_text("answered server/discover with the HTTP status 400");
    b.close_and_expect_exit_0();
}

#[test]
fn l1_on_stdio_a_32022_naming_an_older_revision_takes_initialize() {
    let mut b = on_stdio("-32022:2025-06-18,2025-11-25");
    works_as_older(&mut b);
    b.expect_text("answered server/discover with the error -32022");
    b.close_and_expect_exit_0();
}

#[test]
fn l1_on_stdio_a_32022_naming_no_revision_of_the_bridge_fails_initialize_with_the_names() {
    let mut b = on_stdio("-32022:2030-01-01");
    let error = refused_initialize(&mut b);
    assert_eq!(
        error["data"]["detail"],
        r#"the upstream server supports none of the revisions of the bridge; it names "2030-01-01""#,
        "{error}"
    );
    b.close_and_expect_exit_0();
}

#[test]
fn l1_on_stdio_a_header_mismatch_is_a_modern_servers_error() {
    let mut b = on_stdio("-32020");
    let error = refused_initialize(&mut b);
    assert_eq!(error["code"], -32020, "{error}");
    b.close_and_expect_exit_0();
}
