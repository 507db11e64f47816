//! Fetching the metadata of a sign-in: the protected resource metadata of the MCP server (RFC
//! 9728) and the metadata of its authorization server (RFC 8414 or OpenID Connect Discovery),
//! in the order of [`super::discovery`], with the checks of the specification.

use serde_json::Value;
use url::Url;

use super::challenge::Challenge;
use super::discovery::{
    MetadataUrl, authorization_server_metadata_urls, issuer_matches, resource_metadata_urls,
};
use super::failure::Failure;
use crate::cli::url_rule::{Loopback, is_loopback};
use crate::log::{self, Level};
use crate::webclient::{BodyError, describe, read_body};

/// A metadata document is read up to this size.
const MAX_DOCUMENT: usize = 1 << 20;

/// What the protected resource metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// The resource indicator (RFC 8707) of the tokens.
    pub resource: String,
    pub authorization_servers: Vec<Url>,
    pub scopes_supported: Vec<String>,
}

/// What the authorization server metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub issuer: Url,
    /// The `issuer` exactly as the metadata wrote it: the `iss` of a redirect is compared with
    /// this text (RFC 9207 §2.4), not with `issuer`, which the URL parser may have changed
    /// (`http://host:1` becomes `http://host:1/`).
    pub published_issuer: String,
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3): a redirect without
    /// `iss` is then refused.
    pub iss_parameter_supported: bool,
    /// `token_endpoint_auth_methods_supported` (empty when absent: RFC 8414 then means
    /// `client_secret_basic`).
    pub token_endpoint_auth_methods: Vec<String>,
    pub authorization_endpoint: Url,
    pub token_endpoint: Url,
    pub registration_endpoint: Option<Url>,
    pub client_id_metadata_document_supported: bool,
    pub scopes_supported: Vec<String>,
}

/// The protected resource metadata of `mcp`: the first document of the candidate URLs that
/// answers, whose `resource` must be the one of its URL (RFC 9728 §3.3: else the sign-in
/// fails, [`Failure::ResourceMismatch`]); `None` when every candidate answers 404 (L4:
/// a server of revision 2025-03-26, whose authorization server is at its origin). When none
/// has a document and one answered another status (a 5xx, a 401…), the server is broken, not
/// of that revision: the sign-in fails with that status.
pub async fn resource(
    http: &reqwest::Client,
    mcp: &Url,
    challenge: &Challenge,
) -> Result<Option<Resource>, Failure> {
    let mut refused: Option<String> = None;
    for found in resource_metadata_urls(mcp, challenge.resource_metadata.as_deref()) {
        match fetch_document(http, &found.url).await? {
            Fetched::Document(doc) => return parse_resource(&doc, mcp, &found).map(Some),
            Fetched::NotFound => {}
            Fetched::Refused(what) => {
                refused.get_or_insert(what);
            }
        }
    }
    match refused {
        None => Ok(None),
        Some(what) => Err(Failure::Discovery(format!(
            "the protected resource metadata of the upstream server answered with {what}, not 404: the bridge does not fall back to the authorization server at its origin"
        ))),
    }
}

/// L4: the resource of a server of revision 2025-03-26, which has no protected resource
/// metadata: its authorization server is at the origin of its URL (that revision's
/// authorization base URL), and the tokens are for the MCP URL without its query and
/// fragment (the resource indicator of RFC 8707 §2 has no fragment, and the query of the
/// URL is not the resource's).
pub fn resource_at_origin(mcp: &Url) -> Resource {
    let mut origin = mcp.clone();
    origin.set_path("");
    origin.set_query(None);
    origin.set_fragment(None);
    let mut resource = mcp.clone();
    resource.set_query(None);
    resource.set_fragment(None);
    Resource {
        resource: resource.as_str().to_owned(),
        authorization_servers: vec![origin],
        scopes_supported: Vec::new(),
    }
}

/// The metadata of the authorization server `issuer`, checked (RFC 8414 §3.3, PKCE S256).
pub async fn server(http: &reqwest::Client, issuer: &Url) -> Result<Server, Failure> {
    for url in authorization_server_metadata_urls(issuer) {
        let Some(doc) = fetch_json(http, &url).await? else {
            continue;
        };
        return parse_server(&doc, issuer);
    }
    Err(Failure::Discovery(
        "the authorization server has no metadata".into(),
    ))
}

pub(crate) fn parse_resource(
    doc: &Value,
    mcp: &Url,
    found: &MetadataUrl,
) -> Result<Resource, Failure> {
    let resource = doc.get("resource").and_then(Value::as_str).ok_or_else(|| {
        Failure::Discovery("the protected resource metadata has no resource".into())
    })?;
    if !found.resources.iter().any(|r| r == resource) {
        let mut at = found.url.clone();
        at.set_query(None);
        let expected = found.resources.first().map_or("", String::as_str);
        // The named resource is the server's text: quoted, escaped and cut, so that it
        // cannot forge a line.
        let named: String = resource.chars().take(256).collect();
        log::bridge(
            Level::Warn,
            &format!(
                "the protected resource metadata at {at} names the resource {named:?}, but the upstream server is {expected}: the bridge does not use it (RFC 9728 §3.3)"
            ),
        );
        return Err(Failure::ResourceMismatch);
    }
    let authorization_servers: Vec<Url> = strings(doc, "authorization_servers")
        .iter()
        .filter_map(|s| Url::parse(s).ok())
        .filter(|u| endpoint_allowed(u, mcp))
        .collect();
    if authorization_servers.is_empty() {
        return Err(Failure::Discovery(
            "the protected resource metadata names no authorization server".into(),
        ));
    }
    Ok(Resource {
        resource: resource.to_owned(),
        authorization_servers,
        scopes_supported: strings(doc, "scopes_supported"),
    })
}

pub(crate) fn parse_server(doc: &Value, issuer: &Url) -> Result<Server, Failure> {
    if !issuer_matches(doc, issuer) {
        return Err(Failure::Discovery(
            "the issuer of the authorization server metadata is not the authorization server"
                .into(),
        ));
    }
    let endpoint = |key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .and_then(|s| Url::parse(s).ok())
            .filter(|u| endpoint_allowed(u, issuer))
    };
    let (Some(authorization_endpoint), Some(token_endpoint)) = (
        endpoint("authorization_endpoint"),
        endpoint("token_endpoint"),
    ) else {
        return Err(Failure::Discovery(
            "the authorization server metadata has no authorization or token endpoint".into(),
        ));
    };
    let iss_parameter_supported = doc
        .get("authorization_response_iss_parameter_supported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !authorization_endpoint_justified(
        &authorization_endpoint,
        &token_endpoint,
        issuer,
        iss_parameter_supported,
    ) {
        return Err(Failure::Discovery(
            "the authorization endpoint is not the issuer's own, and the authorization server does not name itself in its redirects (RFC 9207)".into(),
        ));
    }
    // OAuth 2.1 and the MCP specification: PKCE with S256 is required.
    if !strings(doc, "code_challenge_methods_supported")
        .iter()
        .any(|m| m == "S256")
    {
        return Err(Failure::Discovery(
            "the authorization server does not support PKCE with S256".into(),
        ));
    }
    Ok(Server {
        issuer: issuer.clone(),
        published_issuer: doc
            .get("issuer")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        iss_parameter_supported,
        token_endpoint_auth_methods: strings(doc, "token_endpoint_auth_methods_supported"),
        authorization_endpoint,
        token_endpoint,
        registration_endpoint: endpoint("registration_endpoint"),
        client_id_metadata_document_supported: doc
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        scopes_supported: strings(doc, "scopes_supported"),
    })
}

/// Mix-up (RFC 9207, docs/sign-in.md "Bound to the issuer"): one redirect URI serves every
/// authorization server, so a redirect is known to come from the issuer only by its `iss`, or
/// by the authorization endpoint being the issuer's own: on its origin, and below its path or
/// in the folder of its token endpoint. An endpoint elsewhere (another server's authorization
/// endpoint, whose code would go to this issuer's token endpoint with the verifier) is
/// accepted only when the redirect must carry `iss`. The path matters for an origin that
/// several issuers share (`https://host/tenant-a`, `https://host/tenant-b`); the folder of the
/// token endpoint admits a server whose endpoints are beside its issuer's path, not below it
/// (`…/{tenant}/v2.0` with `…/{tenant}/oauth2/v2.0/authorize` and `…/token`).
fn authorization_endpoint_justified(
    endpoint: &Url,
    token_endpoint: &Url,
    issuer: &Url,
    iss_required: bool,
) -> bool {
    let below_issuer = || {
        let base = issuer.path().trim_end_matches('/');
        endpoint
            .path()
            .strip_prefix(base)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    let folder = |url: &Url| url.path().rsplit_once('/').map(|(dir, _)| dir.to_owned());
    let beside_token = || {
        endpoint.origin() == token_endpoint.origin() && folder(endpoint) == folder(token_endpoint)
    };
    iss_required || (endpoint.origin() == issuer.origin() && (below_issuer() || beside_token()))
}

fn strings(doc: &Value, key: &str) -> Vec<String> {
    doc.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// An endpoint named by a document of `base` (the MCP URL, or the issuer): https, or http
/// to a loopback host when `base` is itself on a loopback host, as for the URL of the bridge.
/// A remote server never sends the bridge to plain http on this machine, where any local
/// program may listen on the port and take the code and the verifier.
fn endpoint_allowed(url: &Url, base: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && loopback_host(url) && loopback_host(base))
}

fn loopback_host(url: &Url) -> bool {
    url.host()
        .is_some_and(|h| is_loopback(&h, Loopback::UrlForm))
}

/// What one URL of metadata answered.
enum Fetched {
    Document(Value),
    /// 404: no document here.
    NotFound,
    /// Another status than a success or 404 ("the HTTP status 503"), or a body that is not
    /// JSON: what it was.
    Refused(String),
}

/// A JSON document, `None` for a 404 (or another status that says "not here"), an error for a
/// broken connection. The error names no URL.
async fn fetch_json(http: &reqwest::Client, url: &Url) -> Result<Option<Value>, Failure> {
    Ok(match fetch_document(http, url).await? {
        Fetched::Document(doc) => Some(doc),
        Fetched::NotFound | Fetched::Refused(_) => None,
    })
}

/// The document at `url`, a 404, or another status; an error for a broken connection. The
/// error names no URL.
async fn fetch_document(http: &reqwest::Client, url: &Url) -> Result<Fetched, Failure> {
    let response = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| Failure::Transport(describe(&e)))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(Fetched::NotFound);
    }
    if !status.is_success() {
        return Ok(Fetched::Refused(format!(
            "the HTTP status {}",
            status.as_u16()
        )));
    }
    let body = read_body(response, MAX_DOCUMENT)
        .await
        .map_err(|e| match e {
            BodyError::TooLong => Failure::Discovery("a metadata document is too long".into()),
            BodyError::Broken(why) => Failure::Transport(why),
        })?;
    Ok(match serde_json::from_slice(&body) {
        Ok(doc) => Fetched::Document(doc),
        Err(_) => Fetched::Refused("a body that is not JSON".into()),
    })
}

/// The metadata of `https://as.example` with nothing optional: the start of the test servers
/// of the sign-in's modules.
#[cfg(test)]
impl Server {
    pub(crate) fn example() -> Server {
        let u = |s: &str| Url::parse(s).expect("url");
        Server {
            issuer: u("https://as.example"),
            published_issuer: "https://as.example".into(),
            iss_parameter_supported: false,
            token_endpoint_auth_methods: vec![],
            authorization_endpoint: u("https://as.example/authorize"),
            token_endpoint: u("https://as.example/token"),
            registration_endpoint: None,
            client_id_metadata_document_supported: false,
            scopes_supported: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    /// The well-known URI at the path of `mcp`, the first candidate without a challenge.
    fn at_path(mcp: &Url) -> MetadataUrl {
        resource_metadata_urls(mcp, None).remove(0)
    }

    #[test]
    fn the_protected_resource_metadata_must_cover_the_server_and_name_a_server() {
        let mcp = url("https://127.0.0.1:9/mcp");
        let doc = json!({"resource":"https://127.0.0.1:9/mcp","authorization_servers":["https://127.0.0.1:9","ftp://x"],"scopes_supported":["mcp:read"]});
        assert_eq!(
            parse_resource(&doc, &mcp, &at_path(&mcp)),
            Ok(Resource {
                resource: "https://127.0.0.1:9/mcp".into(),
                authorization_servers: vec![url("https://127.0.0.1:9")],
                scopes_supported: vec!["mcp:read".into()],
            })
        );
        assert!(
            parse_resource(
                &json!({"resource":"https://other/mcp","authorization_servers":["https://a"]}),
                &mcp,
                &at_path(&mcp)
            )
            .is_err()
        );
        assert!(
            parse_resource(
                &json!({"resource":"https://127.0.0.1:9/mcp","authorization_servers":[]}),
                &mcp,
                &at_path(&mcp)
            )
            .is_err()
        );
        assert!(
            parse_resource(
                &json!({"authorization_servers":["https://a"]}),
                &mcp,
                &at_path(&mcp)
            )
            .is_err()
        );
        assert!(parse_resource(&json!({"resource":"https://127.0.0.1:9/mcp","authorization_servers":["http://a.example"]}), &mcp, &at_path(&mcp)).is_err());
    }

    /// RFC 9728 §3.3: a tenant's metadata never names the whole host or another tenant, and
    /// the root's names the origin only there.
    #[test]
    fn rfc_9728_the_resource_is_the_identifier_of_its_metadata_url() {
        let mcp = url("https://host.example/b/mcp");
        let doc = |resource: &str| json!({"resource": resource, "authorization_servers": ["https://as.example"]});
        let [challenge, path, root] = <[MetadataUrl; 3]>::try_from(resource_metadata_urls(
            &mcp,
            Some("https://host.example/prm/b"),
        ))
        .expect("three candidates");
        for found in [&challenge, &path] {
            assert!(parse_resource(&doc("https://host.example/b/mcp"), &mcp, found).is_ok());
            for other in [
                "https://host.example/",
                "https://host.example",
                "https://host.example/b",
                "https://host.example/a/mcp",
                "https://host.example/b/mcp/",
                "https://HOST.example/b/mcp",
                "https://host.example:443/b/mcp",
                "https://host.example/b/mcp?key=1",
            ] {
                assert_eq!(
                    parse_resource(&doc(other), &mcp, found),
                    Err(Failure::ResourceMismatch),
                    "{other} at {}",
                    found.url
                );
            }
        }
        for origin in ["https://host.example", "https://host.example/"] {
            assert!(parse_resource(&doc(origin), &mcp, &root).is_ok());
        }
        assert_eq!(
            parse_resource(&doc("https://host.example/b/mcp"), &mcp, &root),
            Err(Failure::ResourceMismatch)
        );
    }

    #[test]
    fn the_server_metadata_needs_its_issuer_both_endpoints_and_s256() {
        let issuer = url("https://as.example");
        let good = json!({"issuer":"https://as.example","authorization_endpoint":"https://as.example/authorize",
            "token_endpoint":"https://as.example/token","registration_endpoint":"https://as.example/register",
            "code_challenge_methods_supported":["S256"],"client_id_metadata_document_supported":true});
        let server = parse_server(&good, &issuer).expect("valid");
        assert_eq!(server.token_endpoint, url("https://as.example/token"));
        assert!(server.client_id_metadata_document_supported);
        assert!(server.registration_endpoint.is_some());
        assert_eq!(
            server.published_issuer, "https://as.example",
            "as written, no final slash"
        );
        assert!(!server.iss_parameter_supported);
        let mut with_iss = good.clone();
        with_iss["authorization_response_iss_parameter_supported"] = json!(true);
        assert!(
            parse_server(&with_iss, &issuer)
                .expect("valid")
                .iss_parameter_supported
        );
        let mut wrong_issuer = good.clone();
        wrong_issuer["issuer"] = json!("https://attacker.example");
        assert!(parse_server(&wrong_issuer, &issuer).is_err());
        let mut plain_only = good.clone();
        plain_only["code_challenge_methods_supported"] = json!(["plain"]);
        assert!(parse_server(&plain_only, &issuer).is_err());
        let mut no_token = good;
        no_token["token_endpoint"] = json!("http://as.example/token");
        assert!(parse_server(&no_token, &issuer).is_err());
    }

    #[test]
    fn a_remote_issuer_names_no_plain_http_endpoint_on_this_machine() {
        let doc = |issuer: &str, token: &str| {
            json!({"issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": token, "code_challenge_methods_supported": ["S256"]})
        };
        let remote = url("https://as.example");
        assert!(
            parse_server(
                &doc("https://as.example", "http://127.0.0.1:9/token"),
                &remote
            )
            .is_err()
        );
        let local = url("http://127.0.0.1:8");
        assert!(
            parse_server(
                &doc("http://127.0.0.1:8", "http://127.0.0.1:9/token"),
                &local
            )
            .is_ok()
        );
        let mcp = url("https://mcp.example/mcp");
        let prm = json!({"resource": "https://mcp.example/mcp",
            "authorization_servers": ["http://127.0.0.1:9"]});
        assert!(parse_resource(&prm, &mcp, &at_path(&mcp)).is_err());
        let local_mcp = url("http://127.0.0.1:8/mcp");
        let prm = json!({"resource": "http://127.0.0.1:8/mcp",
            "authorization_servers": ["http://127.0.0.1:9"]});
        assert!(parse_resource(&prm, &local_mcp, &at_path(&local_mcp)).is_ok());
    }

    #[test]
    fn l4_the_resource_at_the_origin_is_the_mcp_url_without_its_query_and_fragment() {
        let r = resource_at_origin(&url("https://mcp.example/v1/mcp?tenant=a#top"));
        assert_eq!(r.resource, "https://mcp.example/v1/mcp");
        assert_eq!(r.authorization_servers, vec![url("https://mcp.example")]);
    }

    #[test]
    fn an_authorization_endpoint_elsewhere_needs_the_iss_of_rfc_9207() {
        let issuer = url("https://as.example");
        let mut doc = json!({"issuer":"https://as.example",
            "authorization_endpoint":"https://other.example/authorize",
            "token_endpoint":"https://as.example/token","code_challenge_methods_supported":["S256"]});
        assert!(parse_server(&doc, &issuer).is_err());
        doc["authorization_response_iss_parameter_supported"] = json!(true);
        assert!(parse_server(&doc, &issuer).is_ok());
        doc["authorization_response_iss_parameter_supported"] = json!(false);
        doc["authorization_endpoint"] = json!("https://as.example/o/authorize");
        assert!(parse_server(&doc, &issuer).is_ok());
    }

    /// A mock issuer on the origin of the honest one (`/evil` beside `/honest`) that names the
    /// honest authorization endpoint and its own token endpoint: without `iss`, the code of
    /// the honest server would reach the mock's token endpoint.
    #[test]
    fn rfc_9207_a_mock_issuer_on_the_same_origin_needs_the_iss_for_another_issuers_endpoint() {
        let doc = |issuer: &str, authorize: &str, token: &str, iss: bool| {
            json!({"issuer": issuer, "authorization_endpoint": authorize, "token_endpoint": token,
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": iss})
        };
        let evil = url("https://host.example/evil");
        let mix_up = |iss| {
            doc(
                "https://host.example/evil",
                "https://host.example/honest/authorize",
                "https://host.example/evil/token",
                iss,
            )
        };
        assert!(parse_server(&mix_up(false), &evil).is_err());
        assert!(parse_server(&mix_up(true), &evil).is_ok());
        // The issuer's own endpoints, below its path or beside its token endpoint.
        for (issuer, authorize, token) in [
            (
                "https://host.example/evil",
                "https://host.example/evil/authorize",
                "https://host.example/evil/token",
            ),
            (
                "https://host.example",
                "https://host.example/authorize",
                "https://host.example/oauth/token",
            ),
            (
                "https://login.example/tid/v2.0",
                "https://login.example/tid/oauth2/v2.0/authorize",
                "https://login.example/tid/oauth2/v2.0/token",
            ),
        ] {
            assert!(
                parse_server(&doc(issuer, authorize, token, false), &url(issuer)).is_ok(),
                "{authorize}"
            );
        }
        // A path that only starts with the issuer's is another issuer's.
        assert!(
            parse_server(
                &doc(
                    "https://host.example/ev",
                    "https://host.example/evil/authorize",
                    "https://host.example/ev/token",
                    false
                ),
                &url("https://host.example/ev")
            )
            .is_err()
        );
    }
}
