//! Where the file store keeps its files (docs/token-stores.md): the token directory
//! `%LOCALAPPDATA%\mcp-bridge-vscode\tokens` on Windows, else
//! `$XDG_STATE_HOME/mcp-bridge-vscode/tokens` (an absolute `XDG_STATE_HOME` only, as the XDG
//! specification says), else `~/.local/state/mcp-bridge-vscode/tokens`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::StoreError;
use crate::auth::identity::TOKEN_DIR;

/// The token directory of this user, from the environment.
pub fn token_dir() -> Result<PathBuf, StoreError> {
    token_dir_from(cfg!(windows), |name| std::env::var_os(name))
}

/// The token directory with the environment of `var` (a parameter, so that tests do not
/// change the environment of the test process).
pub fn token_dir_from(
    windows: bool,
    var: impl Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, StoreError> {
    let absolute = |name: &str| {
        var(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() || (windows && p.has_root()))
    };
    let base = if windows {
        absolute("LOCALAPPDATA").ok_or_else(|| {
            StoreError("LOCALAPPDATA is not set: the file store has no directory".into())
        })?
    } else if let Some(state) = absolute("XDG_STATE_HOME") {
        state
    } else {
        absolute("HOME")
            .map(|home| home.join(".local").join("state"))
            .ok_or_else(|| {
                StoreError(
                    "neither XDG_STATE_HOME nor HOME is an absolute path: the file store has no directory"
                        .into(),
                )
            })?
    };
    Ok(TOKEN_DIR.split('/').fold(base, |dir, part| dir.join(part)))
}

/// `path` made absolute with its existing part resolved (links, `..`), for the check that
/// the key file is not inside the token directory, which need not exist yet.
pub fn resolved(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path))
    };
    let mut rest: Vec<OsString> = Vec::new();
    let mut existing = absolute.as_path();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_token_directory_follows_xdg_then_home_then_localappdata() {
        let dir = |windows, pairs: &[(&str, &str)]| token_dir_from(windows, env(pairs));
        assert_eq!(
            dir(false, &[("XDG_STATE_HOME", "/s"), ("HOME", "/h")]),
            Ok(PathBuf::from("/s/mcp-bridge-vscode/tokens"))
        );
        // A relative XDG_STATE_HOME is ignored (the XDG specification).
        assert_eq!(
            dir(false, &[("XDG_STATE_HOME", "rel"), ("HOME", "/h")]),
            Ok(PathBuf::from("/h/.local/state/mcp-bridge-vscode/tokens"))
        );
        assert!(dir(false, &[]).is_err());
        assert!(dir(true, &[("HOME", "/h")]).is_err());
        assert_eq!(
            dir(true, &[("LOCALAPPDATA", "/l")]),
            Ok(PathBuf::from("/l/mcp-bridge-vscode/tokens"))
        );
    }

    #[test]
    fn a_path_that_does_not_exist_yet_resolves_below_its_existing_parent() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let real = tmp.path().canonicalize().expect("canonical");
        assert_eq!(
            resolved(&tmp.path().join("x").join("y")),
            real.join("x").join("y")
        );
        #[cfg(unix)]
        {
            std::fs::create_dir(tmp.path().join("dir")).expect("mkdir");
            std::os::unix::fs::symlink(tmp.path().join("dir"), tmp.path().join("link"))
                .expect("symlink");
            assert_eq!(
                resolved(&tmp.path().join("link").join("new")),
                real.join("dir").join("new")
            );
        }
    }
}
