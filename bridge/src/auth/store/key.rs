//! The key of the file store (docs/token-stores.md): 64 hexadecimal digits from the
//! environment variable `MCP_BRIDGE_TOKEN_KEY` or from the file of `--token-key-file`, not
//! both. The file must be private to the user and outside the token directory, so that a copy
//! of the token directory alone never carries its key. Spaces and newlines around the digits
//! are ignored (an editor adds a final newline).
//!
//! No text of this module ever holds a digit of the key: the errors name the source only.

use std::ffi::OsString;
use std::path::Path;

use super::StoreError;
use super::paths::resolved;

/// The environment variable of the key.
pub const KEY_ENV: &str = "MCP_BRIDGE_TOKEN_KEY";

/// A key file is read up to this size: a key is 64 digits.
const MAX_KEY_FILE: u64 = 4096;

/// The 32 bytes of the key. `Debug` never shows them.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenKey(pub(super) [u8; 32]);

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

impl TokenKey {
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// The key of the options: `env` is the value of `MCP_BRIDGE_TOKEN_KEY` (an empty value counts
/// as not set: a password input that was left empty), `file` the path of `--token-key-file`.
/// `Ok(None)` when neither is given.
pub fn load(
    env: Option<OsString>,
    file: Option<&Path>,
    token_dir: &Path,
) -> Result<Option<TokenKey>, StoreError> {
    let env = env.filter(|v| !v.is_empty());
    match (env, file) {
        (Some(_), Some(_)) => Err(StoreError(format!(
            "{KEY_ENV} and --token-key-file are both given: give the key in one of them"
        ))),
        (Some(value), None) => {
            let text = value.to_str().ok_or_else(|| not_hex(KEY_ENV))?.to_owned();
            parse(&text).map(Some).ok_or_else(|| not_hex(KEY_ENV))
        }
        (None, Some(path)) => read_file(path, token_dir).map(Some),
        (None, None) => Ok(None),
    }
}

fn not_hex(source: &str) -> StoreError {
    StoreError(format!(
        "the token key of {source} is not 64 hexadecimal digits"
    ))
}

/// 64 hexadecimal digits, with spaces and newlines around them.
pub fn parse(text: &str) -> Option<TokenKey> {
    let digits = text.trim().as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (byte, pair) in key.iter_mut().zip(digits.chunks_exact(2)) {
        let high = (pair[0] as char).to_digit(16)?;
        let low = (pair[1] as char).to_digit(16)?;
        *byte = u8::try_from(high * 16 + low).ok()?;
    }
    Some(TokenKey(key))
}

/// Reads `--token-key-file` after its checks: a regular file, outside the token directory,
/// private to the user.
fn read_file(path: &Path, token_dir: &Path) -> Result<TokenKey, StoreError> {
    let why = |text: &str| StoreError(format!("--token-key-file: {text}"));
    let meta =
        std::fs::metadata(path).map_err(|e| why(&format!("cannot read the file: {}", e.kind())))?;
    if !meta.is_file() {
        return Err(why("it is not a regular file"));
    }
    if resolved(path).starts_with(resolved(token_dir)) {
        return Err(why(&format!(
            "the file is inside the token directory {}: keep the key elsewhere, so that a copy of the directory does not carry it",
            token_dir.display()
        )));
    }
    private_to_the_user(&meta).map_err(|error| why(&error.to_string()))?;
    if meta.len() > MAX_KEY_FILE {
        return Err(why("the file is not 64 hexadecimal digits"));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| why(&format!("cannot read the file: {}", e.kind())))?;
    parse(&text).ok_or_else(|| why("the file is not 64 hexadecimal digits"))
}

/// Why a key file is not private to the user (the text follows `--token-key-file: `).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
enum NotPrivate {
    #[cfg_attr(not(unix), allow(dead_code))]
    #[error("the file belongs to another user: only your account may own it")]
    Owner,
    /// The permission bits of the file (`mode & 0o777`).
    #[cfg_attr(not(unix), allow(dead_code))]
    #[error(
        "other users can access the file (mode {0:o}): make it private to your account, for example with chmod 600"
    )]
    Mode(u32),
}

/// POSIX: the user owns the file and the group and the others have no access (mode 0600 or
/// 0400).
#[cfg(unix)]
fn private_to_the_user(meta: &std::fs::Metadata) -> Result<(), NotPrivate> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(NotPrivate::Owner);
    }
    if meta.mode() & 0o077 != 0 {
        return Err(NotPrivate::Mode(meta.mode() & 0o777));
    }
    Ok(())
}

/// Windows: the access control list is not examined (the bridge has no unsafe code for the
/// security API); the user profile folders are private by default (README, "Token stores").
#[cfg(not(unix))]
fn private_to_the_user(_: &std::fs::Metadata) -> Result<(), NotPrivate> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

    #[test]
    fn a_key_is_64_hex_digits_with_whitespace_around_them() {
        let key = parse(&format!(" \n{HEX}\r\n")).expect("valid");
        assert_eq!(key.0[1], 0x11);
        assert_eq!(key.0[31], 0xff);
        assert_eq!(parse(&HEX[1..]), None, "63 digits");
        assert_eq!(parse(&format!("{HEX}0")), None, "65 digits");
        assert_eq!(parse(&HEX.replace('0', "g")), None, "not hex");
        assert_eq!(parse(&format!("{} {}", &HEX[..32], &HEX[32..])), None);
        assert_eq!(parse(&"é".repeat(32)), None, "not ASCII");
        assert_eq!(format!("{key:?}"), "TokenKey(..)", "Debug shows no byte");
    }

    #[test]
    fn the_key_comes_from_the_variable_or_the_file_never_both() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tokens");
        let file = tmp.path().join("key");
        write_private(&file, HEX);
        assert_eq!(load(None, None, &dir), Ok(None));
        assert_eq!(
            load(Some("".into()), None, &dir),
            Ok(None),
            "empty is unset"
        );
        assert!(load(Some(HEX.into()), None, &dir).expect("env").is_some());
        assert!(load(None, Some(&file), &dir).expect("file").is_some());
        let both = load(Some(HEX.into()), Some(&file), &dir).expect_err("both");
        assert!(both.0.contains("both given"), "{both}");
        let bad = load(Some("abc".into()), None, &dir).expect_err("short");
        assert_eq!(
            bad.0,
            "the token key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits"
        );
        write_private(&file, "xyz");
        let bad = load(None, Some(&file), &dir).expect_err("not hex");
        assert!(bad.0.contains("not 64 hexadecimal digits"), "{bad}");
        assert!(!bad.0.contains("xyz"), "no content in the error");
        let missing = load(None, Some(&tmp.path().join("none")), &dir).expect_err("missing");
        assert!(missing.0.contains("cannot read the file"), "{missing}");
    }

    #[test]
    fn the_key_file_must_be_outside_the_token_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tokens");
        std::fs::create_dir(&dir).expect("mkdir");
        let inside = dir.join("key");
        write_private(&inside, HEX);
        let error = load(None, Some(&inside), &dir).expect_err("inside");
        assert!(error.0.contains("inside the token directory"), "{error}");
        // Also through `..` and when the directory does not exist yet.
        let sub = tmp.path().join("state");
        std::fs::create_dir(&sub).expect("mkdir");
        let error =
            load(None, Some(&sub.join("..").join("tokens").join("key")), &dir).expect_err("dotdot");
        assert!(error.0.contains("inside the token directory"), "{error}");
        let future = tmp.path().join("future");
        let key = future.join("key");
        std::fs::create_dir(&future).expect("mkdir");
        write_private(&key, HEX);
        assert!(load(None, Some(&key), &future.join("t")).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_must_be_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join("key");
        write_private(&file, HEX);
        let dir = tmp.path().join("tokens");
        for mode in [0o640, 0o604, 0o660, 0o644] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("chmod");
            let error = load(None, Some(&file), &dir).expect_err("not private");
            assert!(
                error.0.contains("other users can access the file"),
                "{error}"
            );
            assert!(error.0.contains("chmod 600"), "{error}");
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("chmod");
            assert!(load(None, Some(&file), &dir).is_ok(), "mode {mode:o}");
        }
        let error = load(None, Some(tmp.path()), &dir).expect_err("a directory");
        assert!(error.0.contains("not a regular file"), "{error}");
    }

    fn write_private(path: &Path, text: &str) {
        std::fs::write(path, format!("{text}\n")).expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }
}
