//! No token of a sign-in reaches VS Code (docs/sign-in.md, docs/errors.md): every frame that
//! the bridge writes on stdout, the answers and the errors of a request that fails after the
//! sign-in (the fixture gone while the bridge holds its access token), is searched for the
//! prefixes of the fixture's access tokens, refresh tokens and codes, as is stderr.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{bridge, free_port, initialize_signing_in, oauth_fixture};
use support::{call, request};

/// The prefixes of what the fixture's authorization server issues.
const ISSUED: [&str; 3] = ["bfx_at_", "bfx_rt_", "bfx_code_"];

#[test]
fn no_token_reaches_stdout_in_answers_or_errors_after_a_sign_in() {
    let mut fixture = oauth_fixture(&[]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    let add = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(add["result"]["content"][0]["text"], "5", "{add}");
    // The requests fail with the access token in hand: the error texts are built next to it.
    fixture.kill();
    for id in [3, 4] {
        let failed = b.exchange(&call(id, "add", json!({"a": 1, "b": 1})));
        assert_eq!(failed["error"]["code"], -32603, "{failed}");
    }
    let ping = b.exchange(&request(5, "ping", json!({})));
    assert_eq!(ping["result"], json!({}), "{ping}");
    b.close_and_expect_exit_0();

    // Each frame of stdout, and the floor that proves the search saw the answers and errors.
    let frames: Vec<String> = b.all_frames.iter().map(|f| f.to_string()).collect();
    let errors = frames.iter().filter(|f| f.contains("\"error\"")).count();
    assert!(frames.len() >= 5 && errors >= 2, "{frames:#?}");
    let stderr = b.stderr();
    for prefix in ISSUED {
        for frame in &frames {
            assert!(!frame.contains(prefix), "{prefix} on stdout: {frame}");
        }
        assert!(!stderr.contains(prefix), "{prefix} on stderr:\n{stderr}");
    }
}
