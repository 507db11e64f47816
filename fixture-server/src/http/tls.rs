//! The TLS of the HTTP mode: the test PKI of `certs/` (see `certs/README.md`), embedded in the
//! binary so that the fixture runs from any directory.
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The test CA (`certs/ca.crt`): the trust of `--browse` and of the fetch of client ID
/// metadata documents (besides the roots of the system).
pub const CA_CRT: &str = include_str!("../../certs/ca.crt");
const SERVER_CRT: &str = include_str!("../../certs/server.crt");
const SERVER_KEY: &str = include_str!("../../certs/server.key");
const UNTRUSTED_SERVER_CRT: &str = include_str!("../../certs/untrusted-server.crt");
const UNTRUSTED_SERVER_KEY: &str = include_str!("../../certs/untrusted-server.key");

/// The rustls configuration of the server certificate signed by `certs/ca.crt`, or with
/// `untrusted` the one signed by `certs/untrusted-ca.crt`. ALPN offers `http/1.1` only: one
/// request per stream of bytes, so that a closed connection is a closed response stream.
pub fn config(untrusted: bool) -> Result<Arc<ServerConfig>, String> {
    let (crt, key) = if untrusted {
        (UNTRUSTED_SERVER_CRT, UNTRUSTED_SERVER_KEY)
    } else {
        (SERVER_CRT, SERVER_KEY)
    };
    let chain = CertificateDer::pem_slice_iter(crt.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the embedded certificate is not valid PEM: {e}"))?;
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
        .map_err(|e| format!("the embedded key is not valid PEM: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("cannot use the embedded certificate: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_certificates_load() {
        assert!(super::config(false).is_ok());
        assert!(super::config(true).is_ok());
    }
}
