//! The crypto provider of the fixture's TLS clients (reqwest built with rustls and no provider
//! of its own): ring, the one provider of the workspace, installed once per process.

/// Installs ring as the process's default provider unless one is installed already.
pub fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install it between the check and here: that one stays, which is
        // the same provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
