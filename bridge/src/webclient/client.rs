//! The HTTP client of the URL form: rustls with the system's CA certificates plus those of
//! `--ca-file`, the proxy of `HTTPS_PROXY` / `ALL_PROXY` (credentials in the proxy URL) with
//! `NO_PROXY` chosen for each request (never a proxy for a loopback host), and a loopback
//! name only at loopback addresses ([`super::resolve`]).

use std::path::Path;
use std::time::Duration;

use reqwest::{Certificate, ClientBuilder, NoProxy, Proxy};

/// What a client is made from: the certificates of `--ca-file`, read at start (the proxies
/// come from the environment, decided per request).
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub extra_roots: Vec<Certificate>,
}

/// Why the client cannot be made (an invalid proxy variable, for example); the text names no
/// URL and no header value.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClientError(String);

/// Connecting takes at most this long; the time limit of a request is the front's.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Why `--ca-file` cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("cannot read the file: {0}")]
    Read(std::io::ErrorKind),
    #[error("the file has no PEM certificate")]
    NoCertificate,
    #[error("the file has a certificate that is not valid")]
    Invalid,
}

/// Reads the PEM certificates of `--ca-file`.
pub fn load_ca_file(path: &Path) -> Result<Vec<Certificate>, CaError> {
    let pem = std::fs::read(path).map_err(|e| CaError::Read(e.kind()))?;
    let certs = Certificate::from_pem_bundle(&pem).map_err(|_| CaError::Invalid)?;
    if certs.is_empty() {
        return Err(CaError::NoCertificate);
    }
    Ok(certs)
}

/// The process-wide crypto provider of rustls (ring); idempotent.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Makes the client.
pub fn build_client(opts: &ClientOptions) -> Result<reqwest::Client, ClientError> {
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        // An MCP endpoint does not redirect; a redirect could carry the headers elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .tls_certs_merge(opts.extra_roots.iter().cloned())
        .dns_resolver(std::sync::Arc::new(super::resolve::CheckedResolver));
    builder = with_proxies(builder)?;
    builder.build().map_err(|e| ClientError(describe(&e)))
}

/// The hosts of the loopback rule of the URL form
/// ([`crate::cli::url_rule::Loopback::UrlForm`]) in the syntax of `NO_PROXY`: `localhost`
/// also stands for the names under it.
const LOOPBACK_NO_PROXY: &str = "localhost,127.0.0.0/8,::1";

/// The proxies of `HTTPS_PROXY` and `ALL_PROXY` with `NO_PROXY`, decided for each request by
/// its own URL: a loopback host never goes through a proxy, and a remote one (an
/// authorization server of a local MCP server) does, whatever the MCP URL is. The proxy's
/// credentials stay in its URL (reqwest sends them as `Proxy-Authorization`).
fn with_proxies(builder: ClientBuilder) -> Result<ClientBuilder, ClientError> {
    // Not the system's proxies of reqwest: they would not know the loopback rule.
    let mut builder = builder.no_proxy();
    let mut exempt = LOOPBACK_NO_PROXY.to_owned();
    if let Some(list) = first_env(&["NO_PROXY", "no_proxy"]) {
        exempt.push(',');
        exempt.push_str(&list);
    }
    let https = first_env(&["HTTPS_PROXY", "https_proxy"]).map(|u| Proxy::https(u.as_str()));
    let all = first_env(&["ALL_PROXY", "all_proxy"]).map(|u| Proxy::all(u.as_str()));
    for proxy in [https, all].into_iter().flatten() {
        let proxy = proxy.map_err(|e| ClientError(describe(&e)))?;
        builder = builder.proxy(proxy.no_proxy(NoProxy::from_string(&exempt)));
    }
    Ok(builder)
}

/// The first of the variables that is set and not empty.
fn first_env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .find(|v| !v.trim().is_empty())
}

/// The text of an error of reqwest without its URL (a path or a query can hold a key): the
/// error and its causes, joined by `: `.
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        let text = match e.downcast_ref::<reqwest::Error>() {
            Some(r) if r.url().is_some() => {
                // `without_url` needs an owned error; the kind says enough.
                kind_of(r).to_owned()
            }
            _ => e.to_string(),
        };
        if !text.is_empty() && parts.last() != Some(&text) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

fn kind_of(e: &reqwest::Error) -> &'static str {
    if e.is_connect() {
        "cannot connect"
    } else if e.is_timeout() {
        "time out"
    } else if e.is_body() || e.is_decode() {
        "the response body failed"
    } else if e.is_request() {
        "the request failed"
    } else if e.is_builder() {
        "the client is not valid"
    } else {
        "the HTTP exchange failed"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_cannot_be_used_says_why() {
        let dir = tempfile::tempdir().expect("dir");
        let missing = dir.path().join("missing.pem");
        assert!(matches!(load_ca_file(&missing), Err(CaError::Read(_))));
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").expect("write");
        assert!(matches!(
            load_ca_file(&empty),
            Err(CaError::NoCertificate | CaError::Invalid)
        ));
    }
}
