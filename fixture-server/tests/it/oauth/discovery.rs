//! The sign-in of `--oauth` from the first 401: the discovery chain (RFC 9728, RFC 8414), the
//! registration (RFC 7591), the authorization code with PKCE S256 and the token (RFC 6749, RFC
//! 8707), and what the token endpoint checks (verifier, resource, redirect URI).

use super::*;

#[tokio::test]
async fn the_discovery_chain_goes_from_the_401_to_the_metadata() {
    let auth = Auth::start(&[]);
    let response = auth.call(None, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        challenge_header(&response),
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp:read\"",
            auth.prm()
        )
    );

    let prm = auth
        .get_json("/.well-known/oauth-protected-resource/mcp")
        .await;
    assert_eq!(prm["resource"], auth.url());
    assert_eq!(prm["authorization_servers"], json!([auth.origin]));
    assert_eq!(prm["scopes_supported"], json!(["mcp:read", "mcp:write"]));

    let metadata = auth
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    let origin = &auth.origin;
    assert_eq!(metadata["issuer"], *origin);
    assert!(origin.starts_with("https://127.0.0.1:"));
    assert_eq!(
        metadata["authorization_endpoint"],
        format!("{origin}/authorize")
    );
    assert_eq!(metadata["token_endpoint"], format!("{origin}/token"));
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{origin}/register")
    );
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    assert_eq!(
        metadata["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(metadata["response_types_supported"], json!(["code"]));
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "none"])
    );
    let openid = auth.get_json("/.well-known/openid-configuration").await;
    assert_eq!(openid, metadata);

    let counters = auth.counters().await;
    assert_eq!(counters["mcp_requests"], json!({"all": 1, "challenged": 1}));
    assert_eq!(counters["registrations"], json!([]));
}

#[tokio::test]
async fn registration_authorization_and_token_give_an_mcp_call() {
    let auth = Auth::start(&[]);
    let response = auth
        .register(json!({
            "client_name": "the test client",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        }))
        .await;
    assert_eq!(response.status(), 201);
    let registered = json_body(response).await;
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    assert!(registered.get("client_secret").is_none(), "{registered}");
    assert_eq!(registered["client_name"], "the test client");
    assert_eq!(registered["redirect_uris"], json!([REDIRECT]));
    assert_eq!(registered["application_type"], "native");

    let tokens = auth.sign_in(&client_id, "mcp:read").await;
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 900);
    assert_eq!(tokens["scope"], "mcp:read");
    assert!(tokens["refresh_token"].is_string());
    auth.adds(tokens["access_token"].as_str().unwrap()).await;

    let response = auth
        .call(Some("not-a-token"), "add", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(response.status(), 401);
    assert!(
        challenge_header(&response).starts_with("Bearer error=\"invalid_token\""),
        "{}",
        challenge_header(&response)
    );

    let counters = auth.counters().await;
    assert_eq!(
        counters["registrations"],
        json!([{"client_id": client_id, "client_name": "the test client", "redirect_uris": [REDIRECT]}])
    );
    assert_eq!(counters["token_requests"]["authorization_code"], 1);
    assert_eq!(counters["token_requests"]["refresh_token"], 0);
    assert_eq!(counters["authorization_requests"], 1);
    assert_eq!(counters["mcp_requests"], json!({"all": 2, "challenged": 1}));

    // A confidential registration gets a secret; a bad redirect URI is refused.
    let confidential = json_body(
        auth.register(json!({"client_name": "c", "redirect_uris": ["http://127.0.0.1/callback"]}))
            .await,
    )
    .await;
    assert!(confidential["client_secret"].is_string());
    assert_eq!(
        confidential["token_endpoint_auth_method"],
        "client_secret_basic"
    );
    let bad = auth
        .register(json!({"redirect_uris": ["http://example.com/callback"]}))
        .await;
    oauth_error(bad, 400, "invalid_redirect_uri").await;
}

#[tokio::test]
async fn the_verifier_the_resource_and_the_redirect_uri_are_checked() {
    let auth = Auth::start(&[]);

    // A wrong verifier: invalid_grant, and the code is gone.
    let code = auth.code(PUBLIC, "mcp:read").await;
    let resource = auth.url().to_string();
    let wrong = "another-verifier-that-is-long-enough-0123456789-abcdef";
    let response = auth
        .token(
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", wrong),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_grant").await;
    oauth_error(auth.exchange(PUBLIC, &code).await, 400, "invalid_grant").await;

    // The resource of the token request.
    let code = auth.code(PUBLIC, "mcp:read").await;
    let response = auth
        .token(
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
                ("client_id", PUBLIC),
                ("resource", "https://elsewhere.example/mcp"),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_target").await;
    // A code of another redirect URI.
    let code = auth.code(PUBLIC, "mcp:read").await;
    let response = auth
        .token(
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:41895/callback"),
                ("code_verifier", VERIFIER),
                ("client_id", PUBLIC),
                ("resource", &resource),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_grant").await;

    // Errors in the redirect, with the state.
    for (extra, error) in [
        (
            vec![("resource", "https://elsewhere.example/mcp")],
            "invalid_target",
        ),
        (vec![("resource", "")], "invalid_target"),
        (vec![("code_challenge", "")], "invalid_request"),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("scope", "mcp:admin")], "invalid_scope"),
        (
            vec![("response_type", "token")],
            "unsupported_response_type",
        ),
    ] {
        let url = auth.authorization_url(PUBLIC, "mcp:read", &extra);
        let query = auth.redirected(&url).await;
        assert_eq!(param(&query, "error"), Some(error), "{extra:?}");
        assert_eq!(param(&query, "state"), Some("state-1"));
        assert!(param(&query, "code").is_none());
    }

    // An error page without a redirect where the redirect URI cannot be trusted.
    for (client_id, extra) in [
        ("unknown-client", vec![]),
        (
            PUBLIC,
            vec![("redirect_uri", "http://127.0.0.1:41894/other")],
        ),
        (
            PUBLIC,
            vec![("redirect_uri", "https://evil.example/callback")],
        ),
        (PUBLIC, vec![("redirect_uri", "")]),
    ] {
        let url = auth.authorization_url(client_id, "mcp:read", &extra);
        let response = auth.authorize(&url).await;
        assert_eq!(response.status(), 400, "{client_id} {extra:?}");
        assert!(response.headers().get(LOCATION).is_none());
        assert!(response.text().await.unwrap().contains("not valid"));
    }
}
