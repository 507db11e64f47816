//! The URL rule of the URL form: `https`, or `http` only to a loopback host; no user
//! information, no fragment, visible ASCII only, a host, a port that is not 0. Each refusal
//! has its hint; no hint repeats a part of the URL (it can carry a secret).
//!
//! Loopback hosts: `localhost`, a name that ends in `.localhost`, an IPv4 address in
//! 127.0.0.0/8 and `[::1]`. Decisions where the list of docs/options.md is silent:
//! - `localhost.` (with the final dot of a fully qualified name) is not a loopback host: a
//!   resolver can send it to DNS.
//! - `[::ffff:127.0.0.1]` (an IPv4-mapped IPv6 address) is not a loopback host: only `[::1]`
//!   is. Use `http://127.0.0.1/` instead.
//! - The URL is parsed as a browser does (WHATWG, the `url` crate), and the HTTP client uses the
//!   same parse: `127.1`, `0x7f.0.0.1` and `%6cocalhost` are the loopback hosts `127.0.0.1`
//!   and `localhost`; upper-case schemes and hosts become lower case.
//! - Non-ASCII (an internationalized host name) is refused: write the `xn--` form.

use url::{Host, Url};

/// The hint when http goes to a host that is not a loopback host (or the scheme is another).
pub const HINT_SCHEME: &str =
    "use https: http is permitted only for a loopback host such as 127.0.0.1";
/// The hint for a user or a password in the URL.
pub const HINT_USERINFO: &str =
    "remove the user and the password from the URL: give a secret with --header-env";
/// The hint for a fragment.
pub const HINT_FRAGMENT: &str = "remove the fragment from the URL";
/// The hint for a URL without a host.
pub const HINT_NO_HOST: &str = "the URL has no host";
/// The hint for the port 0.
pub const HINT_PORT_0: &str = "the port 0 is not valid";
/// The hint for a character that is not visible ASCII.
pub const HINT_ASCII: &str = "write the URL in visible ASCII characters: use the xn-- form of a host name and percent-encoding";
/// The hint for a port that is not a number from 0 to 65535.
pub const HINT_PORT: &str = "the port is not a number from 1 to 65535";
/// The hint for a URL that the parser refuses for another cause.
pub const HINT_PARSE: &str = "the URL cannot be parsed";

/// Checks the URL of the URL form (the argument after the options). The error is the hint.
pub fn check_url(text: &str) -> Result<Url, &'static str> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(HINT_ASCII);
    }
    // The authority as written: the parser drops an empty user (`https://@host`) and takes
    // `https:///x` for the host `x`; both are refused here.
    if let Some((scheme, rest)) = text.split_once("://") {
        if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
            return Err(HINT_SCHEME);
        }
        let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(HINT_USERINFO);
        }
        if authority.is_empty() {
            return Err(HINT_NO_HOST);
        }
    }
    let url = Url::parse(text).map_err(|error| match error {
        url::ParseError::EmptyHost => HINT_NO_HOST,
        url::ParseError::InvalidPort => HINT_PORT,
        _ => HINT_PARSE,
    })?;
    match url.scheme() {
        "https" | "http" => {}
        _ => return Err(HINT_SCHEME),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(HINT_USERINFO);
    }
    if url.fragment().is_some() {
        return Err(HINT_FRAGMENT);
    }
    let Some(host) = url.host() else {
        return Err(HINT_NO_HOST);
    };
    if url.port() == Some(0) {
        return Err(HINT_PORT_0);
    }
    if url.scheme() == "http" && !is_loopback(&host, Loopback::UrlForm) {
        return Err(HINT_SCHEME);
    }
    Ok(url)
}

/// Which loopback rule [`is_loopback`] applies. The two differ on purpose, and the fixed
/// vectors of both (the fuzz targets' `URL_VECTORS`) hold the difference:
/// - the URL form's host is reached by the bridge's own HTTP client and resolver, so the rule
///   is the documented list and nothing more (the module doc says why `localhost.` and
///   `[::ffff:127.0.0.1]` are not in it);
/// - a URL of a URL elicitation is opened by another program (VS Code, then a browser), so
///   the rule (O1) takes the name `localhost` alone, in any case and in its root form
///   `localhost.`, which every resolver and browser keeps on the machine, not the names under
///   `.localhost`; and it takes a loopback address in its IPv4-mapped form as the browser
///   does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loopback {
    /// The URL form: `localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`.
    UrlForm,
    /// O1: `localhost` (any case, trailing dots ignored), 127.0.0.0/8, `[::1]`,
    /// `[::ffff:127.x.x.x]`.
    Elicitation,
}

/// True for a loopback host under `rule` (see [`Loopback`]).
pub fn is_loopback(host: &Host<&str>, rule: Loopback) -> bool {
    match (host, rule) {
        (Host::Domain(name), Loopback::UrlForm) => {
            let name = name.to_ascii_lowercase();
            name == "localhost" || (name.ends_with(".localhost") && !name.starts_with('.'))
        }
        // The WHATWG parser has lowercased the name already.
        (Host::Domain(name), Loopback::Elicitation) => name.trim_end_matches('.') == "localhost",
        (Host::Ipv4(address), _) => address.octets()[0] == 127,
        (Host::Ipv6(address), Loopback::UrlForm) => address.is_loopback(),
        (Host::Ipv6(address), Loopback::Elicitation) => {
            address.is_loopback()
                || address
                    .to_ipv4_mapped()
                    .is_some_and(|v4| v4.octets()[0] == 127)
        }
    }
}

/// The default `--name` of the URL form: the host of the URL (`[::1]` keeps its brackets).
pub fn host_name(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = "";

    /// (URL, expected hint or OK, the host that the check gives).
    const VECTORS: &[(&str, &str, &str)] = &[
        ("https://mcp.example.com/mcp", OK, "mcp.example.com"),
        ("https://mcp.example.com", OK, "mcp.example.com"),
        (
            "https://mcp.example.com:8443/a/b?x=1&y=%20",
            OK,
            "mcp.example.com",
        ),
        ("HTTPS://MCP.Example.COM/mcp", OK, "mcp.example.com"),
        ("https://127.0.0.1:1/mcp", OK, "127.0.0.1"),
        ("https://[2001:db8::1]/mcp", OK, "[2001:db8::1]"),
        (
            "https://xn--bcher-kva.example/mcp",
            OK,
            "xn--bcher-kva.example",
        ),
        ("https://ex%61mple.com/mcp", OK, "example.com"),
        ("https://mcp.example.com/a%2Fb", OK, "mcp.example.com"),
        ("https://mcp.example.com:65535/", OK, "mcp.example.com"),
        ("http://localhost/mcp", OK, "localhost"),
        ("http://LOCALHOST:8080/mcp", OK, "localhost"),
        ("http://foo.localhost/mcp", OK, "foo.localhost"),
        ("http://a.b.localhost:3000/", OK, "a.b.localhost"),
        ("http://127.0.0.1:3000/mcp", OK, "127.0.0.1"),
        ("http://127.255.255.255/", OK, "127.255.255.255"),
        ("http://127.1/", OK, "127.0.0.1"),
        ("http://0x7f.0.0.1/", OK, "127.0.0.1"),
        ("http://2130706433/", OK, "127.0.0.1"),
        ("http://[::1]:8080/mcp", OK, "[::1]"),
        ("http://[0:0:0:0:0:0:0:1]/", OK, "[::1]"),
        ("http://%6cocalhost/", OK, "localhost"),
        ("Http://localhost/", OK, "localhost"),
        ("http://mcp.example.com/mcp", HINT_SCHEME, ""),
        ("http://128.0.0.1/", HINT_SCHEME, ""),
        ("http://126.255.255.255/", HINT_SCHEME, ""),
        ("http://localhost./", HINT_SCHEME, ""),
        ("http://localhost.example.com/", HINT_SCHEME, ""),
        ("http://notlocalhost/", HINT_SCHEME, ""),
        ("http://[::ffff:127.0.0.1]/", HINT_SCHEME, ""),
        ("http://[::2]/", HINT_SCHEME, ""),
        ("http://0.0.0.0/", HINT_SCHEME, ""),
        ("http://10.0.0.1/", HINT_SCHEME, ""),
        ("ftp://mcp.example.com/", HINT_SCHEME, ""),
        ("ws://localhost/", HINT_SCHEME, ""),
        ("wss://mcp.example.com/", HINT_SCHEME, ""),
        ("file:///etc/passwd", HINT_SCHEME, ""),
        ("https://user:pass@mcp.example.com/", HINT_USERINFO, ""),
        ("https://user@mcp.example.com/", HINT_USERINFO, ""),
        ("https://:pass@mcp.example.com/", HINT_USERINFO, ""),
        ("https://@mcp.example.com/", HINT_USERINFO, ""),
        ("http://user@localhost/", HINT_USERINFO, ""),
        ("https://mcp.example.com/mcp#frag", HINT_FRAGMENT, ""),
        ("https://mcp.example.com/mcp#", HINT_FRAGMENT, ""),
        ("https://mcp.example.com:0/mcp", HINT_PORT_0, ""),
        ("http://localhost:0/", HINT_PORT_0, ""),
        ("https://mcp.example.com:65536/", HINT_PORT, ""),
        ("https://mcp.example.com:x/", HINT_PORT, ""),
        ("https:///mcp", HINT_NO_HOST, ""),
        ("https://", HINT_NO_HOST, ""),
        ("https://?x", HINT_NO_HOST, ""),
        ("https://bücher.example/", HINT_ASCII, ""),
        ("https://mcp.example.com/a b", HINT_ASCII, ""),
        (" https://mcp.example.com/", HINT_ASCII, ""),
        ("https://mcp.example.com/\t", HINT_ASCII, ""),
        ("", HINT_ASCII, ""),
        ("https://[::1/", HINT_PARSE, ""),
        ("https://exa mple.com/", HINT_ASCII, ""),
        ("https://exa%20mple.com/", HINT_PARSE, ""),
    ];

    #[test]
    fn url_rule_vectors() {
        assert!(VECTORS.len() >= 40);
        for &(text, hint, host) in VECTORS {
            match check_url(text) {
                Ok(url) => {
                    assert_eq!(hint, OK, "{text} was accepted");
                    assert_eq!(host_name(&url), host, "{text}");
                }
                Err(got) => assert_eq!(got, hint, "{text}"),
            }
        }
    }

    #[test]
    fn no_hint_repeats_the_url() {
        for &(text, hint, _) in VECTORS {
            if hint != OK {
                assert!(text.is_empty() || !hint.contains(text), "{text}");
            }
        }
    }
}
