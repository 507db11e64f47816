//! `POST /fixture/overrides`: what a test changes while the fixture runs, so that the same
//! MCP URL (and the sign-in that a bridge stored for it) meets other metadata at its next
//! start: the protected resource metadata naming another authorization server, an
//! authorization endpoint on another origin, no `iss` (RFC 9207), no protected resource
//! metadata (revision 2025-03-26) or its URLs answering another status, another name of the issuer, refused access tokens, the
//! `expires_in` of the token responses, and the `resource` that `/authorize` accepts (of `/mcp`
//! and of each tenant). The body replaces the
//! earlier overrides; `{}` clears them.
use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::AuthServer;
use crate::log;
use crate::sync::lock;

/// The overrides; absent members keep the fixture's own behaviour.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// The `authorization_servers` of the protected resource metadata.
    pub authorization_servers: Option<Vec<String>>,
    /// The `authorization_endpoint` of the authorization server metadata.
    pub authorization_endpoint: Option<String>,
    /// No `authorization_response_iss_parameter_supported` in the metadata and no `iss` in
    /// the redirects (a server without RFC 9207).
    #[serde(default)]
    pub no_iss: bool,
    /// No protected resource metadata (its URLs answer 404) and no `resource_metadata` in the
    /// challenges: a server of revision 2025-03-26, whose authorization server metadata is at
    /// the origin of its URL.
    #[serde(default)]
    pub no_resource_metadata: bool,
    /// With `no_resource_metadata`: the status of the protected resource metadata's URLs in
    /// place of 404 (a broken server: 500, 503, 403…).
    pub resource_metadata_status: Option<u16>,
    /// `/mcp` refuses every access token as not valid (401 `invalid_token`), as after a
    /// revocation.
    #[serde(default)]
    pub refuse_access_tokens: bool,
    /// The `expires_in` of every token response (default: the token lifetime).
    pub expires_in: Option<u64>,
    /// The `resource` of the protected resource metadata, and the only one that `/authorize`
    /// and `/token` accept (default: the fixture's own MCP URL; another name of it, such as
    /// `https://fixture.test:<port>/mcp` behind a proxy, or another server's).
    pub resource: Option<String>,
    /// The `resource` that a tenant's protected resource metadata names, by the tenant's MCP
    /// path (`{"/b/mcp": "https://…/"}`), and the one that the grants accept for it (default:
    /// the tenant's URL).
    pub tenant_resources: Option<HashMap<String, String>>,
    /// The issuer that the authorization server metadata and the `iss` of the redirects name,
    /// and the origin of its endpoints (default: the fixture's origin): another name of the
    /// fixture, such as `https://fixture.test:<port>` that only a proxy resolves.
    pub issuer: Option<String>,
}

impl AuthServer {
    /// The overrides now in force.
    pub(super) fn overrides(&self) -> Overrides {
        lock(&self.overrides).clone()
    }

    /// The issuer that the metadata and the redirects name.
    pub(super) fn issuer_name(&self) -> String {
        self.overrides()
            .issuer
            .unwrap_or_else(|| self.issuer.clone())
    }

    /// The `resource` that the grants accept.
    pub(super) fn accepted_resource(&self) -> String {
        self.overrides()
            .resource
            .unwrap_or_else(|| self.resource.clone())
    }
}

/// `POST /fixture/overrides` with a JSON body: 204, or 400 for a body that is not one.
pub async fn set(State(server): State<Arc<AuthServer>>, body: Bytes) -> StatusCode {
    match serde_json::from_slice::<Overrides>(&body) {
        Ok(overrides) => {
            log::info("oauth", &format!("overrides: {overrides:?}"));
            *lock(&server.overrides) = overrides;
            StatusCode::NO_CONTENT
        }
        Err(e) => {
            log::info("oauth", &format!("overrides refused: {e}"));
            StatusCode::BAD_REQUEST
        }
    }
}
