//! The tokens of `--oauth` after the sign-in: refresh tokens rotate and keep the scope, a short
//! lifetime expires and the refresh renews it, and the step-up of the tool `guarded` to
//! `mcp:write`.

use super::*;

#[tokio::test]
async fn refresh_tokens_rotate_and_keep_the_scope() {
    let auth = Auth::start(&[]);
    let tokens = auth.sign_in(PUBLIC, "mcp:read mcp:write").await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", PUBLIC),
                ("scope", "mcp:read"),
            ],
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    let renewed = json_body(response).await;
    assert_eq!(renewed["scope"], "mcp:read");
    assert_ne!(renewed["access_token"], tokens["access_token"]);
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"]);
    auth.adds(renewed["access_token"].as_str().unwrap()).await;

    // The old refresh token is gone; a larger scope is refused.
    let again = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    oauth_error(again, 400, "invalid_grant").await;
    let larger = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", renewed["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
                ("scope", "mcp:read mcp:write"),
            ],
            None,
        )
        .await;
    oauth_error(larger, 400, "invalid_scope").await;
    let counters = auth.counters().await;
    assert_eq!(counters["token_requests"]["refresh_token"], 3);
}

#[tokio::test]
async fn a_short_token_lifetime_expires_and_the_refresh_renews() {
    let auth = Auth::start(&["--token-lifetime", "1"]);
    let tokens = auth.sign_in(PUBLIC, "").await;
    assert_eq!(tokens["expires_in"], 1);
    assert_eq!(tokens["scope"], "mcp:read");
    let access = tokens["access_token"].as_str().unwrap();
    // The token expires after 1 s: poll until the server refuses it (a time event, no order
    // of processes to wait for).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let response = auth
            .call(Some(access), "add", json!({"a": 2, "b": 3}))
            .await;
        if response.status() == 401 {
            assert!(challenge_header(&response).contains("error=\"invalid_token\""));
            break;
        }
        assert_eq!(response.status(), 200);
        assert!(Instant::now() < deadline, "the token did not expire");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    let renewed = json_body(response).await;
    assert_eq!(renewed["expires_in"], 1);
    assert!(renewed["access_token"].is_string());
}

#[tokio::test]
async fn the_tool_guarded_needs_a_step_up_to_mcp_write() {
    let auth = Auth::start(&[]);
    let read = auth.sign_in(PUBLIC, "mcp:read").await;
    let read = read["access_token"].as_str().unwrap();
    let list = request(1, "tools/list", json!({}));
    let response = post(&auth.http, auth.url(), &list)
        .bearer_auth(read)
        .send()
        .await
        .unwrap();
    let tools = json_body(response).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "guarded")
    );

    let response = auth.call(Some(read), "guarded", json!({})).await;
    assert_eq!(response.status(), 403);
    assert_eq!(
        challenge_header(&response),
        format!(
            "Bearer error=\"insufficient_scope\", error_description=\"The tool needs the scope mcp:write\", resource_metadata=\"{}\", scope=\"mcp:read mcp:write\"",
            auth.prm()
        )
    );
    assert_eq!(
        json_body(response).await,
        json!({"error": "insufficient_scope", "error_description": "The tool needs the scope mcp:write"})
    );
    auth.adds(read).await;

    let write = auth.sign_in(PUBLIC, "mcp:read mcp:write").await;
    assert_eq!(write["scope"], "mcp:read mcp:write");
    let response = auth
        .call(write["access_token"].as_str(), "guarded", json!({}))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        text(&json_body(response).await["result"]),
        "guarded: the token has the scope mcp:write"
    );
    let counters = auth.counters().await;
    assert_eq!(counters["mcp_requests"], json!({"all": 4, "challenged": 1}));
}

/// `--revision 2025-11-25`: a client of that revision sends no `Mcp-Method` or `Mcp-Name`, and
/// `guarded` still needs the step-up (the fixture reads the body).
#[tokio::test]
async fn an_older_server_asks_for_the_step_up_of_guarded_from_the_body() {
    let auth = Auth::start(&["--revision", "2025-11-25"]);
    let read = auth.sign_in(PUBLIC, "mcp:read").await;
    let read = read["access_token"].as_str().unwrap();
    let older_post = |token: &str, session: Option<&str>, body: Value| {
        let mut builder = auth
            .http
            .post(auth.url())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .bearer_auth(token)
            .json(&body);
        if let Some(session) = session {
            builder = builder
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        builder.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fixture-test", "version": "1.0.0"}
    }});
    let response = older_post(read, None, initialize).await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "guarded", "arguments": {}}});
    let response = older_post(read, Some(&session), call.clone())
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert!(
        challenge_header(&response).contains("scope=\"mcp:read mcp:write\""),
        "{}",
        challenge_header(&response)
    );

    let write = auth.sign_in(PUBLIC, "mcp:read mcp:write").await;
    let write = write["access_token"].as_str().unwrap();
    let response = older_post(write, Some(&session), call).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    assert!(
        body.contains("guarded: the token has the scope mcp:write"),
        "{body}"
    );
}
