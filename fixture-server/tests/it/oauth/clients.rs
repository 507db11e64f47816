//! The clients of `--oauth`: each pre-registered client, a client ID metadata document in
//! place of a registration (and its refusal with `--no-cimd`), the user's denial and the
//! clients that the server forgot.

use super::*;

#[tokio::test]
async fn each_pre_registered_client_signs_in() {
    let auth = Auth::start(&["--no-registration"]);
    let metadata = auth
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert!(
        metadata.get("registration_endpoint").is_none(),
        "{metadata}"
    );
    let response = auth.register(json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(response.status(), 404);

    // The public client, on another port of its loopback redirect URI.
    let tokens = auth.sign_in(PUBLIC, "mcp:read").await;
    auth.adds(tokens["access_token"].as_str().unwrap()).await;

    // The confidential client with client_secret_basic.
    let resource = auth.url().to_string();
    let code = auth.code(CONFIDENTIAL, "mcp:read").await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("resource", resource.as_str()),
    ];
    let response = auth.token(&form, Some((CONFIDENTIAL, SECRET))).await;
    assert_eq!(response.status(), 200);
    let tokens = json_body(response).await;
    auth.adds(tokens["access_token"].as_str().unwrap()).await;
    let refresh = tokens["refresh_token"].as_str().unwrap();

    // Without its secret, or with a wrong one: invalid_client (401).
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", CONFIDENTIAL),
            ],
            None,
        )
        .await;
    oauth_error(response, 401, "invalid_client").await;
    let response = auth
        .token(
            &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
            Some((CONFIDENTIAL, "wrong-secret")),
        )
        .await;
    assert_eq!(
        response.headers()[WWW_AUTHENTICATE],
        "Basic realm=\"bridge-fixture\""
    );
    oauth_error(response, 401, "invalid_client").await;
    // client_secret_post works too.
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", CONFIDENTIAL),
                ("client_secret", SECRET),
            ],
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    // A refresh token of one client is not for another one.
    let renewed = json_body(response).await;
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", renewed["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_grant").await;
    // Not a form: invalid_request.
    let response = auth
        .http
        .post(format!("{}/token", auth.origin))
        .json(&json!({"grant_type": "refresh_token"}))
        .send()
        .await
        .unwrap();
    oauth_error(response, 400, "invalid_request").await;
}

#[tokio::test]
async fn a_client_id_metadata_document_needs_no_registration() {
    let auth = Auth::start(&["--cimd"]);
    let document_url = format!("{}/fixture/client.json", auth.origin);
    let response = auth.http.get(&document_url).send().await.unwrap();
    assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
    let document = json_body(response).await;
    assert_eq!(
        document,
        json!({
            "client_id": document_url,
            "client_name": "bridge-fixture metadata client",
            "redirect_uris": ["http://127.0.0.1/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        })
    );
    let tokens = auth.sign_in(&document_url, "mcp:read").await;
    auth.adds(tokens["access_token"].as_str().unwrap()).await;

    // A document whose client_id is not its URL: an error page.
    let url = auth.authorization_url(&format!("{}/fixture/other.json", auth.origin), "", &[]);
    assert_eq!(auth.authorize(&url).await.status(), 400);

    let counters = auth.counters().await;
    assert_eq!(counters["registrations"], json!([]));
    assert!(counters["client_metadata_fetches"].as_u64().unwrap() >= 2);
}

#[tokio::test]
async fn no_cimd_refuses_a_client_id_url() {
    let auth = Auth::start(&["--no-cimd"]);
    let metadata = auth
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert_eq!(metadata["client_id_metadata_document_supported"], false);
    let url = auth.authorization_url("https://127.0.0.1:1/client.json", "", &[]);
    assert_eq!(auth.authorize(&url).await.status(), 400);
    assert_eq!(auth.counters().await["client_metadata_fetches"], 0);
}

#[tokio::test]
async fn deny_answers_access_denied_with_the_state() {
    let auth = Auth::start(&["--deny"]);
    let url = auth.authorization_url(PUBLIC, "mcp:read", &[]);
    let query = auth.redirected(&url).await;
    assert_eq!(param(&query, "error"), Some("access_denied"));
    assert_eq!(param(&query, "state"), Some("state-1"));
    assert!(param(&query, "code").is_none());
}

#[tokio::test]
async fn forgotten_clients_get_invalid_client() {
    let auth = Auth::start(&[]);
    let registered = json_body(
        auth.register(json!({
            "client_name": "forgettable",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        }))
        .await,
    )
    .await;
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    let tokens = auth.sign_in(&client_id, "mcp:read").await;
    let response = auth
        .http
        .post(format!("{}/fixture/forget-clients", auth.origin))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);

    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", &client_id),
            ],
            None,
        )
        .await;
    oauth_error(response, 401, "invalid_client").await;
    let url = auth.authorization_url(&client_id, "mcp:read", &[]);
    let response = auth.authorize(&url).await;
    assert_eq!(response.status(), 400);
    assert!(response.headers().get(LOCATION).is_none());
    // Its access token stays valid until it expires; the counters keep the registration.
    auth.adds(tokens["access_token"].as_str().unwrap()).await;
    let counters = auth.counters().await;
    assert_eq!(counters["registrations"][0]["client_name"], "forgettable");
}
