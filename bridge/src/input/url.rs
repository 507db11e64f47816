//! URL safety of URL elicitations (O1; quirk "VS Code opens URLs with other schemes").

use std::net::Ipv6Addr;

use url::{Host, Url};

use crate::cli::url_rule::{Loopback, is_loopback};

/// O1: whether the bridge may send this URL of a URL elicitation to VS Code.
///
/// Allowed: an absolute URL with the scheme `https` (any case), or `http` without user
/// information and with a loopback host: `localhost` (any case, trailing dots ignored), an
/// IPv4 address in 127.0.0.0/8, `[::1]`, or an IPv4-mapped `[::ffff:127.x.x.x]`.
///
/// Why two parsers: VS Code shows and checks the URL with one parser and the browser opens
/// it with another. The browser's parser (WHATWG, the `url` crate) and the RFC 3986 parser
/// (`fluent-uri`) must find the same scheme and the same host text, so that no trick (a
/// backslash, which ends the host only for WHATWG; `http:host` without slashes; a
/// percent-encoded or numeric-shorthand host; user information) makes the host that the
/// user sees differ from the host that the browser opens. A refused URL is not a failure:
/// the upstream server gets `decline` (see `route`).
pub fn url_allowed(raw: &str) -> bool {
    if raw.is_empty() || raw.chars().any(|c| c == '\\' || c == ' ' || c.is_control()) {
        return false;
    }
    let Ok(whatwg) = Url::parse(raw) else {
        return false;
    };
    let https = match whatwg.scheme() {
        "https" => true,
        "http" => false,
        _ => return false,
    };
    let Ok(rfc) = fluent_uri::Iri::parse(raw) else {
        return false;
    };
    if !rfc.scheme().as_str().eq_ignore_ascii_case(whatwg.scheme()) {
        return false;
    }
    let Some(authority) = rfc.authority() else {
        return false;
    };
    let Some(host) = whatwg.host() else {
        return false;
    };
    if !hosts_agree(&host, authority.host()) {
        return false;
    }
    if https {
        return true;
    }
    let no_userinfo = authority.userinfo().is_none()
        && whatwg.username().is_empty()
        && whatwg.password().is_none();
    no_userinfo && is_loopback(&host, Loopback::Elicitation)
}

/// Whether the WHATWG host and the RFC 3986 host text name the same host.
fn hosts_agree(whatwg: &Host<&str>, rfc_host: &str) -> bool {
    match whatwg {
        // The WHATWG parser lowercases ASCII; a percent-decoded or IDNA-mapped host differs
        // from its text, and then the two parsers disagree.
        Host::Domain(d) => !d.is_empty() && rfc_host.to_ascii_lowercase() == *d,
        // Only the canonical dotted quad: `127.1` or `0x7f.1` are IPv4 for WHATWG but names
        // for RFC 3986.
        Host::Ipv4(a) => rfc_host == a.to_string(),
        Host::Ipv6(a) => rfc_host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .and_then(|h| h.parse::<Ipv6Addr>().ok())
            .is_some_and(|b| b == *a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test vectors, allowed.
    const ALLOWED: &[&str] = &[
        "https://example.com/auth",
        "HTTPS://example.com/",
        "http://localhost:8080/callback",
        "http://LOCALHOST./x",
        "http://127.0.0.1/x",
        "http://127.9.8.7:1/",
        "http://[::1]:3000/",
        "http://[::ffff:127.0.0.1]/",
    ];

    /// Test vectors, refused.
    const REFUSED: &[&str] = &[
        "http://example.com/auth",
        "http://localhost.example.com/",
        "http://localhost@example.com/",
        "http://evil.com\\@localhost/",
        "http://evil.com\\@127.0.0.1/",
        "http://localhost\\.evil.com/",
        "https://example.com\\@example.org/",
        "http://user:secret@localhost/",
        "http://user@127.0.0.1/",
        "http://128.0.0.1/",
        "http://[::2]/",
        "file://localhost/etc/passwd",
        "file:///etc/passwd",
        "vscode://ms-vscode.extension/x",
        "command:workbench.action.reloadWindow",
        "javascript:alert(1)",
        "data:text/html,x",
        "https://",
        "https://exa mple.com/",
        "",
    ];

    #[test]
    fn o1_url_vectors_allowed() {
        for u in ALLOWED {
            assert!(url_allowed(u), "should be allowed: {u}");
        }
    }

    #[test]
    fn o1_url_vectors_refused() {
        for u in REFUSED {
            assert!(!url_allowed(u), "should be refused: {u}");
        }
    }

    // One test per vector, so that a failure names the vector.
    macro_rules! vector {
        ($name:ident, $url:expr, $allowed:expr) => {
            #[test]
            fn $name() {
                assert_eq!(url_allowed($url), $allowed, "{}", $url);
            }
        };
    }
    vector!(o1_url_allowed_https, "https://example.com/auth", true);
    vector!(
        o1_url_allowed_https_upper_scheme,
        "HTTPS://example.com/",
        true
    );
    vector!(
        o1_url_allowed_localhost_port,
        "http://localhost:8080/callback",
        true
    );
    vector!(
        o1_url_allowed_localhost_upper_trailing_dot,
        "http://LOCALHOST./x",
        true
    );
    vector!(o1_url_allowed_ipv4_loopback, "http://127.0.0.1/x", true);
    vector!(
        o1_url_allowed_ipv4_loopback_range,
        "http://127.9.8.7:1/",
        true
    );
    vector!(o1_url_allowed_ipv6_loopback, "http://[::1]:3000/", true);
    vector!(
        o1_url_allowed_ipv4_mapped_loopback,
        "http://[::ffff:127.0.0.1]/",
        true
    );
    vector!(o1_url_refused_http_remote, "http://example.com/auth", false);
    vector!(
        o1_url_refused_localhost_prefix,
        "http://localhost.example.com/",
        false
    );
    vector!(
        o1_url_refused_localhost_userinfo,
        "http://localhost@example.com/",
        false
    );
    vector!(
        o1_url_refused_backslash_localhost,
        "http://evil.com\\@localhost/",
        false
    );
    vector!(
        o1_url_refused_backslash_ipv4,
        "http://evil.com\\@127.0.0.1/",
        false
    );
    vector!(
        o1_url_refused_backslash_in_host,
        "http://localhost\\.evil.com/",
        false
    );
    vector!(
        o1_url_refused_backslash_https,
        "https://example.com\\@example.org/",
        false
    );
    vector!(
        o1_url_refused_user_password,
        "http://user:secret@localhost/",
        false
    );
    vector!(o1_url_refused_user_ipv4, "http://user@127.0.0.1/", false);
    vector!(
        o1_url_refused_ipv4_outside_loopback,
        "http://128.0.0.1/",
        false
    );
    vector!(o1_url_refused_ipv6_not_loopback, "http://[::2]/", false);
    vector!(
        o1_url_refused_file_localhost,
        "file://localhost/etc/passwd",
        false
    );
    vector!(o1_url_refused_file, "file:///etc/passwd", false);
    vector!(
        o1_url_refused_vscode,
        "vscode://ms-vscode.extension/x",
        false
    );
    vector!(
        o1_url_refused_command,
        "command:workbench.action.reloadWindow",
        false
    );
    vector!(o1_url_refused_javascript, "javascript:alert(1)", false);
    vector!(o1_url_refused_data, "data:text/html,x", false);
    vector!(o1_url_refused_https_without_host, "https://", false);
    vector!(o1_url_refused_space_in_host, "https://exa mple.com/", false);
    vector!(o1_url_refused_empty, "", false);

    #[test]
    fn o1_url_parser_disagreements_are_refused() {
        for u in [
            "http://0x7f.1/",
            "http://127.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http:localhost/x",
            "http:/localhost/x",
            "http:///localhost/x",
            "http://local%68ost/",
            "http://@localhost/",
            "http://localhost:8080@evil.com/",
            "http://[::ffff:128.0.0.1]/",
            "http://127.0.0.1.example.com/",
            "https://exa\tmple.com/",
            "https://example.com/\n",
            " https://example.com/",
            "https://exämple.com/",
            "not a URL",
            "//example.com/",
            "http://localhost.evil.com/",
            "http://[v1.x]/",
        ] {
            assert!(!url_allowed(u), "should be refused: {u:?}");
        }
    }

    #[test]
    fn o1_url_more_allowed_forms() {
        for u in [
            "HTTP://localhost/",
            "http://localhost",
            "http://localhost../x",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://127.255.255.255:65535/a?b=c#d",
            "https://user@example.com/",
            "https://example.com/p%20q?x=%2F",
            "https://[2001:db8::1]/",
            "https://93.184.216.34/",
        ] {
            assert!(url_allowed(u), "should be allowed: {u:?}");
        }
    }
}
