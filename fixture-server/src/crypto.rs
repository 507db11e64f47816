//! The crypto of the fixture: the provider of its TLS clients (reqwest built with rustls and no provider
//! of its own), ring, installed once per process; and the digest of a received secret.

/// Installs ring as the process's default provider unless one is installed already.
pub fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install it between the check and here: that one stays, which is
        // the same provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// The SHA-256 of `bytes` in lowercase hexadecimal: the fixture compares a secret that it
/// receives (`--header-sha256`, `--env-sha256`) by its digest and never prints it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
