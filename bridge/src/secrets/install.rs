//! The command that fixes a missing secret, in the form the user installed the bridge
//! (docs/secrets.md, "A missing secret"). The bridge has no other sign of its install than the
//! path of its own executable, so that path decides:
//!
//! - a folder `node_modules` on the path (npm and npx put the native binary there, also behind
//!   the launcher of the npm package): `npx -y mcp-bridge-vscode@<version>`;
//! - a folder `archive-v0` on the path (the cache of uv, where `uvx` runs the wheel's
//!   binary): `uvx mcp-bridge-vscode@<version>`;
//! - else the path of the executable itself, quoted when it holds a space.
//!
//! The version is the bridge's own, as the entries with a key pin it.

use std::path::Path;

/// The start of the command line that runs this bridge: `npx -y …`, `uvx …` or the path.
pub fn invocation(exe: Option<&Path>, version: &str) -> String {
    let Some(exe) = exe else {
        return "mcp-bridge-vscode".to_owned();
    };
    let has = |folder: &str| {
        exe.components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(folder))
    };
    if has("node_modules") {
        return format!("npx -y mcp-bridge-vscode@{version}");
    }
    if has("archive-v0") {
        return format!("uvx mcp-bridge-vscode@{version}");
    }
    let path = exe.display().to_string();
    if path.contains(' ') {
        format!("\"{path}\"")
    } else {
        path
    }
}

/// `<invocation> secret set <name>` for this process.
pub fn set_command(name: &str, flags: &str) -> String {
    let exe = std::env::current_exe().ok();
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" {flags}")
    };
    format!(
        "{} secret set {name}{flags}",
        invocation(exe.as_deref(), crate::VERSION)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_form_follows_the_path_of_the_executable() {
        let at = |p: &str| invocation(Some(Path::new(p)), "1.2.3");
        assert_eq!(
            at("/home/u/.npm/_npx/ab12/node_modules/mcp-bridge-vscode/bin/mcp-bridge-vscode"),
            "npx -y mcp-bridge-vscode@1.2.3"
        );
        assert_eq!(
            at("/home/u/.cache/uv/archive-v0/XyZ/bin/mcp-bridge-vscode"),
            "uvx mcp-bridge-vscode@1.2.3"
        );
        assert_eq!(
            at("/usr/local/bin/mcp-bridge-vscode"),
            "/usr/local/bin/mcp-bridge-vscode"
        );
        assert_eq!(
            at("/opt/my tools/mcp-bridge-vscode"),
            "\"/opt/my tools/mcp-bridge-vscode\""
        );
        assert_eq!(invocation(None, "1.2.3"), "mcp-bridge-vscode");
    }
}
