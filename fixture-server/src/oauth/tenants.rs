//! Two tenants beside `/mcp` on the fixture's origin (`--oauth`): `/a/mcp` and `/b/mcp` serve
//! the same MCP server, but each is its own protected resource with its own protected
//! resource metadata (`/.well-known/oauth-protected-resource/a/mcp`, `…/b/mcp`), its own
//! `resource_metadata` in its challenges, and it accepts only the access tokens issued for its
//! own resource (RFC 8707). So a test sees whether a client sends one tenant's token to the
//! other (the counter `foreign_tokens`), and, with the override `tenant_resources`, what it
//! does when a tenant's metadata names another resource (RFC 9728 §3.3).

use super::AuthServer;

/// The paths of the tenants' MCP endpoints.
pub const TENANTS: [&str; 2] = ["/a/mcp", "/b/mcp"];

/// The path of the MCP endpoint of the fixture itself (as `super::PRM_PATH` names it).
const MCP: &str = "/mcp";

/// The start of the path of the protected resource metadata (RFC 9728 §3.1).
pub const PRM_PREFIX: &str = "/.well-known/oauth-protected-resource";

/// The MCP path whose metadata `metadata_path` is: a tenant's, or `/mcp` for every other one
/// (the root keeps the document of `/mcp`, as before the tenants).
pub fn served_by(metadata_path: &str) -> &str {
    let rest = metadata_path.strip_prefix(PRM_PREFIX).unwrap_or("");
    TENANTS
        .into_iter()
        .find(|tenant| *tenant == rest)
        .unwrap_or(MCP)
}

impl AuthServer {
    /// The resource of the MCP endpoint at `path`: a tenant's URL (or its override), else the
    /// resource of `/mcp` (also for the routes of the 2024-11-05 transport).
    pub(super) fn resource_at(&self, path: &str) -> String {
        if !TENANTS.contains(&path) {
            return self.accepted_resource();
        }
        self.overrides()
            .tenant_resources
            .and_then(|named| named.get(path).cloned())
            .unwrap_or_else(|| format!("{}{path}", self.issuer))
    }

    /// Every resource that `/authorize` and `/token` accept: the one of `/mcp` and each
    /// tenant's.
    pub(super) fn accepted_resources(&self) -> Vec<String> {
        let mut all = vec![self.accepted_resource()];
        all.extend(TENANTS.iter().map(|tenant| self.resource_at(tenant)));
        all
    }

    /// The URL of the protected resource metadata of the MCP endpoint at `path`.
    pub(super) fn prm_url_of(&self, path: &str) -> String {
        let path = if TENANTS.contains(&path) { path } else { MCP };
        format!("{}{PRM_PREFIX}{path}", self.issuer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tenant_has_its_own_metadata_and_the_rest_is_of_mcp() {
        assert_eq!(
            served_by("/.well-known/oauth-protected-resource/a/mcp"),
            "/a/mcp"
        );
        assert_eq!(
            served_by("/.well-known/oauth-protected-resource/b/mcp"),
            "/b/mcp"
        );
        assert_eq!(
            served_by("/.well-known/oauth-protected-resource/mcp"),
            "/mcp"
        );
        assert_eq!(served_by("/.well-known/oauth-protected-resource"), "/mcp");
    }
}
