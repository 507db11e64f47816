//! Where the sign-in looks for its metadata (pure): the protected resource metadata of the MCP
//! server (RFC 9728) and the metadata of its authorization server (RFC 8414, then OpenID
//! Connect Discovery), in the order of the MCP authorization specification, and the checks of
//! what comes back (the issuer, the resource).

use serde_json::Value;
use url::Url;

/// One URL of protected resource metadata and the `resource` values that its document may
/// name (RFC 9728 §3.3, docs/sign-in.md "Bound to the issuer"): a document found through the
/// challenge's `resource_metadata` names the URL of the request; one found at a well-known URI
/// names the identifier into which the well-known string was inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataUrl {
    pub url: Url,
    /// The accepted spellings of that one identifier (the root with and without its slash).
    pub resources: Vec<String>,
}

/// The URLs of the protected resource metadata, in order: the `resource_metadata` of the
/// challenge when it has one (and it is https, or http on the MCP server's own origin), then
/// the well-known URI at the path of the MCP endpoint, then at the root.
pub fn resource_metadata_urls(mcp: &Url, from_challenge: Option<&str>) -> Vec<MetadataUrl> {
    let mut urls = well_known_resource_urls(mcp);
    if let Some(url) = from_challenge.and_then(|u| Url::parse(u).ok())
        && (url.scheme() == "https" || same_origin(&url, mcp))
    {
        // Through the challenge, the document names the URL of the request. When that URL is
        // itself one of the well-known URIs of the server, the identifier of that URI holds
        // too: it is the same document that the fallback would read.
        let mut resources = identifiers(&path_of(mcp), mcp);
        if let Some(known) = urls.iter().find(|known| known.url == url) {
            for resource in &known.resources {
                if !resources.contains(resource) {
                    resources.push(resource.clone());
                }
            }
        }
        urls.retain(|known| known.url != url);
        urls.insert(0, MetadataUrl { url, resources });
    }
    urls
}

/// RFC 9728 §3.1: the well-known URI inserted between the host and the path of the MCP URL
/// (its query left out, a path of `/` being the root), then at the root.
fn well_known_resource_urls(mcp: &Url) -> Vec<MetadataUrl> {
    let mut urls = Vec::new();
    let path = path_of(mcp);
    if !path.is_empty() {
        urls.extend(
            well_known(mcp, "oauth-protected-resource", &path).map(|url| MetadataUrl {
                url,
                resources: identifiers(&path, mcp),
            }),
        );
    }
    urls.extend(
        well_known(mcp, "oauth-protected-resource", "").map(|url| MetadataUrl {
            url,
            resources: identifiers("", mcp),
        }),
    );
    urls
}

/// The path of a resource identifier: the URL's path, empty for the root (`/`).
fn path_of(mcp: &Url) -> String {
    match mcp.path() {
        "/" => String::new(),
        path => path.to_owned(),
    }
}

/// The resource identifier of `path` at the origin of `mcp` as the bridge sends its requests
/// (the URL parser's lowercase scheme and host, no default port; RFC 9728 §1.2: no query, no
/// fragment). The root has two spellings: `https://host` and `https://host/` name the same
/// request (RFC 3986 §6.2.3), and the MCP specification prefers the first.
fn identifiers(path: &str, mcp: &Url) -> Vec<String> {
    let mut url = mcp.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.set_path(path);
    let text = url.as_str().to_owned();
    if path.is_empty() {
        let bare = text.trim_end_matches('/').to_owned();
        vec![bare, text]
    } else {
        vec![text]
    }
}

/// Every `resource` that a stored sign-in of `mcp` can have: the identifier of its URL or of
/// its origin (the root well-known URI), so that a record of another resource (of an older
/// bridge's rule, or a store that mixed them up) is never sent to this URL.
pub fn resources_of(mcp: &Url) -> Vec<String> {
    let mut all = identifiers(&path_of(mcp), mcp);
    for root in identifiers("", mcp) {
        if !all.contains(&root) {
            all.push(root);
        }
    }
    all
}

/// The URLs of the authorization server metadata of `issuer`, in order: with a path, RFC 8414
/// with path insertion, OpenID Connect with path insertion, OpenID Connect with the path
/// appended; without a path, RFC 8414 then OpenID Connect.
pub fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if path.is_empty() {
        urls.extend(well_known(issuer, "oauth-authorization-server", ""));
        urls.extend(well_known(issuer, "openid-configuration", ""));
    } else {
        urls.extend(well_known(issuer, "oauth-authorization-server", path));
        urls.extend(well_known(issuer, "openid-configuration", path));
        let mut appended = issuer.clone();
        appended.set_query(None);
        appended.set_fragment(None);
        appended.set_path(&format!("{path}/.well-known/openid-configuration"));
        urls.push(appended);
    }
    urls
}

/// `<origin>/.well-known/<name><path>`.
fn well_known(base: &Url, name: &str, path: &str) -> Option<Url> {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.set_path(&format!("/.well-known/{name}{path}"));
    Some(url)
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// RFC 8414 §3.3: the metadata is used only when its `issuer` is the issuer whose well-known
/// URI gave it (the comparison is of the text, without a final slash).
pub fn issuer_matches(metadata: &Value, issuer: &Url) -> bool {
    metadata
        .get("issuer")
        .and_then(Value::as_str)
        .is_some_and(|got| got.trim_end_matches('/') == issuer.as_str().trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    fn texts(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(String::from).collect()
    }

    /// Each metadata URL with the `resource` its document must name.
    fn pairs(urls: Vec<MetadataUrl>) -> Vec<(String, Vec<String>)> {
        urls.into_iter()
            .map(|m| (m.url.to_string(), m.resources))
            .collect()
    }

    fn owned(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn protected_resource_metadata_comes_from_the_challenge_then_the_well_known_uris() {
        let mcp = url("https://example.com/public/mcp?key=1");
        let found = resource_metadata_urls(&mcp, None);
        assert_eq!(
            texts(found.into_iter().map(|m| m.url).collect()),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls(&mcp, Some("https://meta.example.com/prm"))[0].url,
            url("https://meta.example.com/prm")
        );
        // An http URL of another origin is not followed.
        assert_eq!(
            resource_metadata_urls(&mcp, Some("http://evil.example/prm")).len(),
            2
        );
        let root = url("http://127.0.0.1:8/");
        assert_eq!(
            texts(
                resource_metadata_urls(
                    &root,
                    Some("http://127.0.0.1:8/.well-known/oauth-protected-resource")
                )
                .into_iter()
                .map(|m| m.url)
                .collect()
            ),
            ["http://127.0.0.1:8/.well-known/oauth-protected-resource"]
        );
    }

    /// RFC 9728 §3.3: through the challenge, the URL of the request (without its query, which
    /// no resource identifier has); at a well-known URI, the identifier it was made from.
    #[test]
    fn rfc_9728_each_metadata_url_names_exactly_one_resource() {
        let mcp = url("https://Host.example:443/a/mcp?key=1");
        assert_eq!(
            pairs(resource_metadata_urls(
                &mcp,
                Some("https://host.example/prm/a")
            )),
            [
                (
                    "https://host.example/prm/a".to_owned(),
                    owned(&["https://host.example/a/mcp"])
                ),
                (
                    "https://host.example/.well-known/oauth-protected-resource/a/mcp".to_owned(),
                    owned(&["https://host.example/a/mcp"])
                ),
                (
                    "https://host.example/.well-known/oauth-protected-resource".to_owned(),
                    owned(&["https://host.example", "https://host.example/"])
                ),
            ]
        );
        // The challenge names the root well-known URI: its document may name the origin, as
        // the fallback would read it, or the URL of the request.
        assert_eq!(
            pairs(resource_metadata_urls(
                &mcp,
                Some("https://host.example/.well-known/oauth-protected-resource")
            ))[0]
                .1,
            owned(&[
                "https://host.example/a/mcp",
                "https://host.example",
                "https://host.example/"
            ])
        );
        // A final slash of a path is part of the path (RFC 9728 §3.1 removes only the one
        // after the host).
        let slash = url("https://host.example/mcp/");
        assert_eq!(
            pairs(resource_metadata_urls(&slash, None))[0],
            (
                "https://host.example/.well-known/oauth-protected-resource/mcp/".to_owned(),
                owned(&["https://host.example/mcp/"])
            )
        );
    }

    #[test]
    fn a_stored_sign_in_fits_its_url_or_its_origin() {
        assert_eq!(
            resources_of(&url("https://host.example/a/mcp?key=1")),
            owned(&[
                "https://host.example/a/mcp",
                "https://host.example",
                "https://host.example/"
            ])
        );
        assert_eq!(
            resources_of(&url("http://127.0.0.1:8")),
            owned(&["http://127.0.0.1:8", "http://127.0.0.1:8/"])
        );
    }

    #[test]
    fn authorization_server_metadata_in_the_order_of_the_specification() {
        assert_eq!(
            texts(authorization_server_metadata_urls(&url(
                "https://auth.example.com/tenant1"
            ))),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            texts(authorization_server_metadata_urls(&url(
                "https://auth.example.com"
            ))),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn the_issuer_must_be_the_one_asked_for() {
        let issuer = url("https://honest.example");
        assert!(issuer_matches(
            &json!({"issuer":"https://honest.example"}),
            &issuer
        ));
        assert!(issuer_matches(
            &json!({"issuer":"https://honest.example/"}),
            &issuer
        ));
        assert!(!issuer_matches(
            &json!({"issuer":"https://attacker.example"}),
            &issuer
        ));
        assert!(!issuer_matches(&json!({}), &issuer));
    }
}
