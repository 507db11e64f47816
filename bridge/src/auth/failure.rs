//! Why a step of the sign-in failed. Each text names no URL, no token, no code and no secret
//! (the model reads errors, and a URL's path or query can hold a key); the error table maps
//! each kind to its cause when the flow is wired to the requests.

/// A failed step of the sign-in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The metadata of the resource or of the authorization server is missing or not valid.
    #[error("the discovery of the authorization server failed: {0}")]
    Discovery(String),
    /// The `resource` of the protected resource metadata is not the identifier of the URL
    /// that the document was found at (RFC 9728 §3.3): the document is not used.
    #[error(
        "the discovery of the authorization server failed: the resource of the protected resource metadata is not the upstream server"
    )]
    ResourceMismatch,
    /// A connection to the authorization server or the metadata failed.
    #[error("the connection failed: {0}")]
    Transport(String),
    /// No client registration that the bridge can use.
    #[error("the authorization server has no client registration that the bridge can use")]
    RegistrationUnavailable,
    /// The authorization server refused the registration.
    #[error("the authorization server refused the registration of the client: {0}")]
    RegistrationRefused(String),
    /// `--client-id` is for another authorization server (`--client-issuer`).
    #[error(
        "the client ID of --client-id is not for the authorization server of the upstream server"
    )]
    IssuerNotRegistered,
    /// The redirect of the sign-in did not carry the authorization server's issuer (RFC 9207):
    /// its code was not used.
    #[error("the answer of the sign-in did not come from the authorization server (its iss)")]
    WrongIssuer,
    /// The token endpoint answered with an OAuth error (its code, sanitized).
    #[error("the authorization server refused the token request: {0}")]
    TokenRefused(String),
}

/// An OAuth error code as it may appear in a line or a detail: `[a-z_]`, at most 48
/// characters (the code comes from a server, and a line must not carry what it chose).
pub fn sanitize(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_lowercase() || *c == '_')
        .take(48)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_keep_only_lowercase_letters_and_underscores() {
        assert_eq!(sanitize("invalid_grant"), "invalid_grant");
        assert_eq!(sanitize("Invalid_Redirect<uri>"), "nvalid_edirecturi");
        assert_eq!(sanitize(&"a".repeat(60)).len(), 48);
    }
}
