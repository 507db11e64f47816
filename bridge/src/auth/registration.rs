//! The client of the bridge at an authorization server, in the order of docs/sign-in.md: `--client-id`
//! (with `--client-issuer`; the secret only from `MCP_BRIDGE_CLIENT_SECRET`), then a client ID
//! metadata document when the server supports it and `--client-metadata-url` names one, then
//! dynamic client registration (RFC 7591) with the exact redirect URI.
//!
//! The project publishes no client ID metadata document yet, so there is no default document:
//! a default that no server can fetch would only fail (bridge/README.md says how to publish
//! one and pass it with `--client-metadata-url`).

use serde_json::{Value, json};
use url::Url;

use super::failure::{Failure, sanitize};
use super::identity::CLIENT_NAME;
use super::metadata::Server;
use crate::webclient::{BodyError, describe, read_body};

/// A registration answer is read up to this size.
const MAX_ANSWER: usize = 64 << 10;

/// How the bridge authenticates at the token endpoint.
#[derive(Clone, Debug)]
pub enum TokenAuth {
    /// A public client (PKCE alone).
    None,
    /// A confidential client with the secret of `MCP_BRIDGE_CLIENT_SECRET` or of the
    /// registration: the method that the registration answer names, else
    /// `client_secret_basic`, or `client_secret_post` when the metadata of the authorization
    /// server names that and not the other (see `tokens::secret_auth_type`).
    Basic(oauth2::ClientSecret),
}

/// The client of the bridge at one authorization server.
#[derive(Clone, Debug)]
pub struct Registration {
    pub client_id: String,
    pub auth: TokenAuth,
    /// True when the registration came from this run (dynamic registration): a stored
    /// sign-in keeps it.
    pub dynamic: bool,
    /// The `token_endpoint_auth_method` of the registration answer (RFC 7591 §3.2.1: the
    /// server's answer is what counts); None when no registration answer named one.
    pub method: Option<String>,
}

/// What the command line and the environment say about the client.
#[derive(Clone, Debug, Default)]
pub struct ClientChoice {
    pub client_id: Option<String>,
    pub client_issuer: Option<Url>,
    pub client_secret: Option<oauth2::ClientSecret>,
    pub metadata_url: Option<Url>,
}

/// Finds the client of the bridge at `server`, registering one when that is the way.
pub async fn register(
    http: &reqwest::Client,
    server: &Server,
    choice: &ClientChoice,
    redirect_uri: &str,
) -> Result<Registration, Failure> {
    if let Some(client_id) = &choice.client_id {
        return pre_registered(server, choice, client_id);
    }
    if let Some(url) = &choice.metadata_url
        && server.client_id_metadata_document_supported
    {
        return Ok(Registration {
            client_id: url.to_string(),
            auth: TokenAuth::None,
            dynamic: false,
            method: None,
        });
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(Failure::RegistrationUnavailable);
    };
    let response = http
        .post(endpoint.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(registration_request(redirect_uri).to_string())
        .send()
        .await
        .map_err(|e| Failure::Transport(describe(&e)))?;
    let status = response.status();
    let body = read_bounded(response).await?;
    let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        let code = answer
            .get("error")
            .and_then(Value::as_str)
            .map(sanitize)
            .unwrap_or_else(|| format!("HTTP status {}", status.as_u16()));
        return Err(Failure::RegistrationRefused(code));
    }
    parse_registration(&answer)
}

/// `--client-id`: bound to `--client-issuer` when given; a secret needs the issuer, so that it
/// goes only to that authorization server.
fn pre_registered(
    server: &Server,
    choice: &ClientChoice,
    client_id: &str,
) -> Result<Registration, Failure> {
    if let Some(issuer) = &choice.client_issuer
        && issuer.as_str().trim_end_matches('/') != server.issuer.as_str().trim_end_matches('/')
    {
        return Err(Failure::IssuerNotRegistered);
    }
    let auth = match (&choice.client_secret, &choice.client_issuer) {
        (Some(secret), Some(_)) => TokenAuth::Basic(secret.clone()),
        (Some(_), None) => return Err(Failure::IssuerNotRegistered),
        (None, _) => TokenAuth::None,
    };
    Ok(Registration {
        client_id: client_id.to_owned(),
        auth,
        dynamic: false,
        method: None,
    })
}

/// RFC 7591 metadata of a native public client with the exact redirect URI.
pub fn registration_request(redirect_uri: &str) -> Value {
    json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    })
}

fn parse_registration(answer: &Value) -> Result<Registration, Failure> {
    let Some(client_id) = answer.get("client_id").and_then(Value::as_str) else {
        return Err(Failure::RegistrationRefused(
            "the answer has no client_id".into(),
        ));
    };
    let auth = match answer.get("client_secret").and_then(Value::as_str) {
        Some(secret) => TokenAuth::Basic(oauth2::ClientSecret::new(secret.to_owned())),
        None => TokenAuth::None,
    };
    let method = answer
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Registration {
        client_id: client_id.to_owned(),
        auth,
        dynamic: true,
        method,
    })
}

async fn read_bounded(response: reqwest::Response) -> Result<Vec<u8>, Failure> {
    read_body(response, MAX_ANSWER).await.map_err(|e| match e {
        BodyError::TooLong => Failure::RegistrationRefused("the answer is too long".into()),
        BodyError::Broken(why) => Failure::Transport(why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(cimd: bool, registration: bool) -> Server {
        Server {
            registration_endpoint: registration
                .then(|| Url::parse("https://as.example/register").expect("url")),
            client_id_metadata_document_supported: cimd,
            ..Server::example()
        }
    }

    fn http() -> reqwest::Client {
        crate::webclient::install_crypto_provider();
        reqwest::Client::new()
    }

    #[tokio::test]
    async fn the_client_id_comes_first_and_its_secret_needs_the_issuer() {
        let mut choice = ClientChoice {
            client_id: Some("pre".into()),
            ..Default::default()
        };
        let r = register(&http(), &server(true, true), &choice, "x").await;
        assert!(
            matches!(r, Ok(Registration { ref client_id, auth: TokenAuth::None, dynamic: false, .. }) if client_id == "pre")
        );
        choice.client_secret = Some(oauth2::ClientSecret::new("s3cret".into()));
        let r = register(&http(), &server(true, true), &choice, "x").await;
        assert!(matches!(r, Err(Failure::IssuerNotRegistered)));
        choice.client_issuer = Some(Url::parse("https://as.example/").expect("url"));
        let r = register(&http(), &server(true, true), &choice, "x").await;
        assert!(matches!(
            r,
            Ok(Registration {
                auth: TokenAuth::Basic(_),
                ..
            })
        ));
        choice.client_issuer = Some(Url::parse("https://other.example").expect("url"));
        let r = register(&http(), &server(true, true), &choice, "x").await;
        assert!(matches!(r, Err(Failure::IssuerNotRegistered)));
    }

    #[tokio::test]
    async fn a_metadata_document_when_the_server_supports_it_else_registration() {
        let choice = ClientChoice {
            metadata_url: Some(Url::parse("https://example.com/client.json").expect("url")),
            ..Default::default()
        };
        let r = register(&http(), &server(true, false), &choice, "x").await;
        assert!(
            matches!(r, Ok(Registration { ref client_id, .. }) if client_id == "https://example.com/client.json")
        );
        let r = register(&http(), &server(false, false), &choice, "x").await;
        assert!(matches!(r, Err(Failure::RegistrationUnavailable)));
        let r = register(
            &http(),
            &server(false, false),
            &ClientChoice::default(),
            "x",
        )
        .await;
        assert!(matches!(r, Err(Failure::RegistrationUnavailable)));
    }

    #[test]
    fn the_registration_request_and_its_answer() {
        let req = registration_request("http://127.0.0.1:41894/callback");
        assert_eq!(
            req["redirect_uris"],
            json!(["http://127.0.0.1:41894/callback"])
        );
        assert_eq!(req["client_name"], "mcp-bridge-vscode");
        assert_eq!(req["token_endpoint_auth_method"], "none");
        assert!(matches!(
            parse_registration(&json!({"client_id":"c1"})),
            Ok(Registration {
                auth: TokenAuth::None,
                dynamic: true,
                ..
            })
        ));
        assert!(matches!(
            parse_registration(&json!({"client_id":"c1","client_secret":"s"})),
            Ok(Registration {
                auth: TokenAuth::Basic(_),
                ..
            })
        ));
        assert!(matches!(
            parse_registration(&json!({"client_id":"c1","client_secret":"s",
                "token_endpoint_auth_method":"client_secret_post"})),
            Ok(Registration { method: Some(ref m), .. }) if m == "client_secret_post"
        ));
        assert!(parse_registration(&json!({})).is_err());
    }
}

#[cfg(test)]
mod document_tests {
    use super::*;

    /// The client ID metadata document that the repository ships (bridge/client-metadata/):
    /// a public native client whose only redirect URI is the default one, and whose metadata
    /// are those of the dynamic registration, so that both ways give the same client.
    #[test]
    fn m4_the_shipped_client_metadata_document_matches_the_registration() {
        let text = include_str!("../../client-metadata/client.json");
        let doc: Value = serde_json::from_str(text).expect("json");
        let registration = registration_request("http://127.0.0.1:41894/callback");
        for key in [
            "client_name",
            "redirect_uris",
            "grant_types",
            "response_types",
            "token_endpoint_auth_method",
            "application_type",
        ] {
            assert_eq!(doc[key], registration[key], "{key}");
        }
        let id = doc["client_id"].as_str().expect("client_id");
        assert!(
            id.starts_with("https://") && id.ends_with("/client.json"),
            "{id}"
        );
        assert!(doc.get("client_secret").is_none());
    }
}
