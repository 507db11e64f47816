//! `bridge-fixture-server --browse <url> [--ca-file <pem>]`: a test "browser" for a `$BROWSER`
//! script. It GETs the URL and follows up to 5 redirects (https with the trusted CA only, http
//! only to a loopback host), until a response of a loopback redirect URI (an `http` loopback
//! URL whose query has `code` or `error`: the redirect receiver of a client), which it does not
//! follow further. It prints `<status> <url>` of the last response on stdout, with the values
//! of `code` and `state` hidden, and exits 0 when that response came from a redirect receiver
//! with a 2xx or 3xx status, else 1 (2 for a CA file that it cannot use).
use std::io::Write;
use std::time::Duration;

use url::Url;

use super::clients::loopback;
use crate::cli::Browse;
use crate::log;

/// The most redirects that it follows.
const MAX_REDIRECTS: usize = 5;
/// The wait for each response.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the browser; the value is the exit code.
pub async fn run(options: &Browse, default_ca: &str) -> u8 {
    let pem = match &options.ca_file {
        Some(path) => match std::fs::read(path) {
            Ok(pem) => pem,
            Err(e) => {
                log::error(
                    "browse",
                    &format!("cannot read the CA file {}: {e}", path.display()),
                );
                return 2;
            }
        },
        None => default_ca.as_bytes().to_vec(),
    };
    let certificates = match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certificates) if !certificates.is_empty() => certificates,
        _ => {
            log::error("browse", "the CA file has no PEM certificate");
            return 2;
        }
    };
    mcp_bridge_vscode::install_crypto_provider();
    let client = match reqwest::Client::builder()
        .tls_certs_only(certificates)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(TIMEOUT)
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            log::error("browse", &format!("cannot make the HTTP client: {e}"));
            return 1;
        }
    };
    let mut url = match Url::parse(&options.url) {
        Ok(url) => url,
        Err(e) => {
            log::error("browse", &format!("the URL is not valid: {e}"));
            return 1;
        }
    };
    let mut redirects = 0;
    loop {
        if let Err(cause) = allowed(&url) {
            log::error("browse", &format!("{cause}: {}", hidden(&url)));
            return 1;
        }
        let response = match client.get(url.clone()).send().await {
            Ok(response) => response,
            Err(e) => {
                log::error(
                    "browse",
                    &format!("the request of {} failed: {}", hidden(&url), causes(e)),
                );
                return 1;
            }
        };
        let status = response.status();
        let receiver = redirect_receiver(&url);
        if receiver || !status.is_redirection() {
            print(status.as_u16(), &url);
            let ok = status.is_success() || status.is_redirection();
            return if receiver && ok { 0 } else { 1 };
        }
        let Some(next) = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|location| url.join(location).ok())
        else {
            print(status.as_u16(), &url);
            log::error("browse", "a redirect without a valid Location");
            return 1;
        };
        if redirects == MAX_REDIRECTS {
            print(status.as_u16(), &url);
            log::error("browse", &format!("more than {MAX_REDIRECTS} redirects"));
            return 1;
        }
        redirects += 1;
        url = next;
    }
}

/// https to any host, http only to a loopback host.
fn allowed(url: &Url) -> Result<(), &'static str> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback(url) => Ok(()),
        "http" => Err("http goes only to a loopback host"),
        _ => Err("the URL is neither https nor http"),
    }
}

/// A loopback redirect URI: `http` to a loopback host with `code` or `error` in the query.
fn redirect_receiver(url: &Url) -> bool {
    url.scheme() == "http"
        && loopback(url)
        && url
            .query_pairs()
            .any(|(name, _)| name == "code" || name == "error")
}

/// The URL with the values of `code` and `state` hidden.
fn hidden(url: &Url) -> String {
    let mut shown = url.clone();
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(name, value)| {
                let value = if name == "code" || name == "state" {
                    "HIDDEN".to_string()
                } else {
                    value.to_string()
                };
                (name.to_string(), value)
            })
            .collect();
        shown.query_pairs_mut().clear().extend_pairs(pairs);
    }
    shown.to_string()
}

/// The error and its sources, without the URL (it may hold the code).
fn causes(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn print(status: u16, url: &Url) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(format!("{status} {}\n", hidden(url)).as_bytes())
        .and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn knows_a_redirect_receiver_and_hides_the_code() {
        let callback = url("http://127.0.0.1:5/callback?code=abc&state=s1&iss=https%3A%2F%2Fx");
        assert!(redirect_receiver(&callback));
        assert_eq!(
            hidden(&callback),
            "http://127.0.0.1:5/callback?code=HIDDEN&state=HIDDEN&iss=https%3A%2F%2Fx"
        );
        assert!(redirect_receiver(&url(
            "http://127.0.0.1:5/callback?error=access_denied"
        )));
        assert!(!redirect_receiver(&url("http://127.0.0.1:5/start/abc")));
        assert!(!redirect_receiver(&url("https://127.0.0.1:5/cb?code=1")));
        assert!(allowed(&url("http://example.com/")).is_err());
        assert!(allowed(&url("https://example.com/")).is_ok());
        assert!(allowed(&url("file:///etc/passwd")).is_err());
    }
}
