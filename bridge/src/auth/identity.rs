//! The names of the bridge toward an authorization server and a keychain, and the key of one
//! stored sign-in (pure). Changing a name orphans the sign-ins stored under it, so a test pins
//! each one.

/// The `client_name` of a registration; the authorization server shows it on its consent page.
pub const CLIENT_NAME: &str = "mcp-bridge-vscode";
/// The service of the keychain entries.
pub const KEYCHAIN_SERVICE: &str = "mcp-bridge-vscode";
/// The folder of the file store under the state directory of the user.
pub const TOKEN_DIR: &str = "mcp-bridge-vscode/tokens";

/// The redirect URI of the loopback receiver: always `127.0.0.1`, never `localhost`, so that
/// no name resolution can send the code elsewhere.
pub fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}/callback")
}

/// One stored sign-in per server URL, account and redirect URI (docs/sign-in.md,
/// docs/token-stores.md): the key of the record and of its index entry.
pub fn storage_key(server_url: &str, account: &str, redirect_port: u16) -> String {
    format!(
        "{CLIENT_NAME}|{account}|{}|{server_url}",
        redirect_uri(redirect_port)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_that_stored_sign_ins_depend_on_stay_as_they_are() {
        assert_eq!(CLIENT_NAME, "mcp-bridge-vscode");
        assert_eq!(KEYCHAIN_SERVICE, "mcp-bridge-vscode");
        assert_eq!(TOKEN_DIR, "mcp-bridge-vscode/tokens");
        assert_eq!(redirect_uri(41894), "http://127.0.0.1:41894/callback");
        assert_eq!(
            storage_key("https://mcp.example.com/mcp", "default", 41894),
            "mcp-bridge-vscode|default|http://127.0.0.1:41894/callback|https://mcp.example.com/mcp"
        );
    }
}
