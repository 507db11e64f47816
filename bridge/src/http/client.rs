//! The HTTP client of the URL form: rustls with the system's CA certificates plus those of
//! `--ca-file`, the proxy of `HTTPS_PROXY` / `ALL_PROXY` (credentials in the proxy URL) with
//! `NO_PROXY`, and never a proxy for a loopback host.

use std::path::Path;
use std::time::Duration;

use reqwest::Certificate;
use url::Url;

use crate::cli::url_rule::{Loopback, is_loopback};

/// What a client is made from: the URL it serves (a loopback host goes without a proxy) and
/// the certificates of `--ca-file`, read at start.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub url: Url,
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
        .tls_certs_merge(opts.extra_roots.iter().cloned());
    if loopback_url(&opts.url) {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| ClientError(describe(&e)))
}

/// A loopback host never uses a proxy (the URL rule of the command line decides what is one).
fn loopback_url(url: &Url) -> bool {
    url.host()
        .is_some_and(|host| is_loopback(&host, Loopback::UrlForm))
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
