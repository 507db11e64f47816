//! Where the sign-in looks for its metadata (pure): the protected resource metadata of the MCP
//! server (RFC 9728) and the metadata of its authorization server (RFC 8414, then OpenID
//! Connect Discovery), in the order of the MCP authorization specification, and the checks of
//! what comes back (the issuer, the resource).

use serde_json::Value;
use url::Url;

/// The URLs of the protected resource metadata, in order: the `resource_metadata` of the
/// challenge when it has one (and it is https, or http on the MCP server's own origin), then
/// the well-known URI at the path of the MCP endpoint, then at the root.
pub fn resource_metadata_urls(mcp: &Url, from_challenge: Option<&str>) -> Vec<Url> {
    let mut urls = Vec::new();
    if let Some(url) = from_challenge.and_then(|u| Url::parse(u).ok())
        && (url.scheme() == "https" || same_origin(&url, mcp))
    {
        urls.push(url);
    }
    let path = mcp.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.extend(well_known(mcp, "oauth-protected-resource", path));
    }
    urls.extend(well_known(mcp, "oauth-protected-resource", ""));
    dedup(urls)
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

fn dedup(urls: Vec<Url>) -> Vec<Url> {
    let mut out: Vec<Url> = Vec::new();
    for url in urls {
        if !out.contains(&url) {
            out.push(url);
        }
    }
    out
}

/// RFC 8414 §3.3: the metadata is used only when its `issuer` is the issuer whose well-known
/// URI gave it (the comparison is of the text, without a final slash).
pub fn issuer_matches(metadata: &Value, issuer: &Url) -> bool {
    metadata
        .get("issuer")
        .and_then(Value::as_str)
        .is_some_and(|got| got.trim_end_matches('/') == issuer.as_str().trim_end_matches('/'))
}

/// RFC 9728 §3.3 and `logout` (docs/token-stores.md): the `resource` of the metadata covers the MCP
/// URL when it has the same origin and its path is the URL's path or a prefix of it at a
/// segment boundary.
pub fn resource_covers(resource: &str, mcp: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if !same_origin(&resource, mcp) || resource.query().is_some() {
        return false;
    }
    let prefix = resource.path().trim_end_matches('/');
    let path = mcp.path();
    path == prefix
        || path.trim_end_matches('/') == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
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

    #[test]
    fn protected_resource_metadata_comes_from_the_challenge_then_the_well_known_uris() {
        let mcp = url("https://example.com/public/mcp?key=1");
        assert_eq!(
            texts(resource_metadata_urls(&mcp, None)),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            texts(resource_metadata_urls(
                &mcp,
                Some("https://meta.example.com/prm")
            ))[0],
            "https://meta.example.com/prm"
        );
        // An http URL of another origin is not followed.
        assert_eq!(
            resource_metadata_urls(&mcp, Some("http://evil.example/prm")).len(),
            2
        );
        let root = url("http://127.0.0.1:8/");
        assert_eq!(
            texts(resource_metadata_urls(
                &root,
                Some("http://127.0.0.1:8/.well-known/oauth-protected-resource")
            )),
            ["http://127.0.0.1:8/.well-known/oauth-protected-resource"]
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

    #[test]
    fn a_resource_covers_its_url_and_the_urls_below_it() {
        let mcp = url("https://example.com/public/mcp");
        assert!(resource_covers("https://example.com/public/mcp", &mcp));
        assert!(resource_covers("https://example.com/public", &mcp));
        assert!(resource_covers("https://example.com/", &mcp));
        assert!(!resource_covers("https://example.com/pub", &mcp));
        assert!(!resource_covers("https://example.com:444/public/mcp", &mcp));
        assert!(!resource_covers("http://example.com/public/mcp", &mcp));
        assert!(!resource_covers(
            "https://example.com/public/mcp/more",
            &mcp
        ));
        assert!(!resource_covers("not a url", &mcp));
    }
}
