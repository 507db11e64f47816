//! The encrypted file store (docs/token-stores.md, `--token-store file`): one file
//! per entry in the token directory, XChaCha20-Poly1305 with the token key.
//!
//! - The name of a file is the start of a SHA-256 of the key and the storage key: it never
//!   shows the URL (whose query can hold a secret), and without the key nobody can tell which
//!   server a file belongs to.
//! - A file is `MBV1`, a random 24-byte nonce and the ciphertext, with the storage key as the
//!   associated data: a file that was renamed or copied over another one does not decrypt.
//! - A write goes to a temporary file in the same directory and is renamed over the old one,
//!   so a reader sees the old or the new file, never a part; two bridges that write at once
//!   each rename a whole file. The index is changed under an advisory lock of `.lock`.
//! - The directory is private to the user (0700 on POSIX; on Windows a protected DACL for the
//!   user alone, inherited by its files); its parents get the default mode.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

use super::StoreError;
use super::indexed::{Entries, unreadable};
use super::key::TokenKey;
use super::parts::hex;

const MAGIC: &[u8; 4] = b"MBV1";
const NONCE: usize = 24;
/// The suffix of the files of entries.
const SUFFIX: &str = ".tok";
/// A file is read up to this size: a stored sign-in is a few KiB.
const MAX_FILE: u64 = 1 << 20;

/// The encrypted files in the token directory.
pub struct FileStore {
    dir: PathBuf,
    key: TokenKey,
    cipher: XChaCha20Poly1305,
}

impl FileStore {
    /// Makes the directory (private) when it is missing; an error when it cannot be made or
    /// belongs to another user.
    pub fn open(dir: &Path, key: TokenKey) -> Result<FileStore, StoreError> {
        make_private_dir(dir)?;
        let cipher = XChaCha20Poly1305::new_from_slice(key.bytes())
            .map_err(|_| StoreError("the token key has the wrong length".into()))?;
        Ok(FileStore {
            dir: dir.to_path_buf(),
            key,
            cipher,
        })
    }

    /// The file of `key`.
    fn path(&self, key: &str) -> PathBuf {
        let mut hash = Sha256::new();
        hash.update(b"mcp-bridge-vscode token file\0");
        hash.update(self.key.bytes());
        hash.update(key.as_bytes());
        self.dir
            .join(format!("{}{SUFFIX}", hex(&hash.finalize()[..20])))
    }

    fn seal(&self, key: &str, plain: &[u8]) -> Result<Vec<u8>, StoreError> {
        let nonce = XNonce::generate();
        let sealed = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plain,
                    aad: key.as_bytes(),
                },
            )
            .map_err(|_| StoreError("the encryption failed".into()))?;
        let mut out = Vec::with_capacity(MAGIC.len() + NONCE + sealed.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn open_sealed(&self, key: &str, file: &[u8]) -> Result<Vec<u8>, &'static str> {
        let rest = file
            .strip_prefix(MAGIC.as_slice())
            .ok_or("the file is not a file of the store")?;
        if rest.len() < NONCE {
            return Err("the file is too short");
        }
        let (nonce, sealed) = rest.split_at(NONCE);
        let nonce = XNonce::try_from(nonce).map_err(|_| "the file is too short")?;
        self.cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: sealed,
                    aad: key.as_bytes(),
                },
            )
            .map_err(|_| "the file does not decrypt with the token key")
    }
}

impl Entries for FileStore {
    fn what(&self) -> &'static str {
        "file"
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key);
        let bytes = match read_limited(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot read a file of the store", &e)),
        };
        match self.open_sealed(key, &bytes) {
            Ok(plain) => Ok(Some(plain)),
            Err(why) => {
                unreadable("file", why);
                Ok(None)
            }
        }
    }

    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let sealed = self.seal(key, bytes)?;
        // tempfile makes the file with mode 0600 and a random name, in the same directory, so
        // that the rename is atomic.
        let mut temp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)
            .map_err(|e| io_error("cannot write a file of the store", &e))?;
        temp.write_all(&sealed)
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| io_error("cannot write a file of the store", &e))?;
        temp.persist(self.path(key))
            .map_err(|e| io_error("cannot write a file of the store", &e.error))?;
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<bool, StoreError> {
        match std::fs::remove_file(self.path(key)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_error("cannot delete a file of the store", &e)),
        }
    }

    fn lock(&self) -> Result<Option<Box<dyn Send>>, StoreError> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(".lock"))
            .map_err(|e| io_error("cannot lock the index of the store", &e))?;
        // fs4's lock, by its path: the inherent `File::lock` of newer Rust is past our MSRV.
        fs4::FileExt::lock(&file)
            .map_err(|e| io_error("cannot lock the index of the store", &e))?;
        Ok(Some(Box::new(file)))
    }
}

fn io_error(what: &str, error: &std::io::Error) -> StoreError {
    StoreError(format!("{what}: {}", error.kind()))
}

fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    File::open(path)?.take(MAX_FILE).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes `dir` with mode 0700 (its parents with the default mode); an existing directory of
/// the user becomes 0700.
fn make_private_dir(dir: &Path) -> Result<(), StoreError> {
    let failed = |e: &std::io::Error| {
        StoreError(format!(
            "cannot make the token directory {}: {}",
            dir.display(),
            e.kind()
        ))
    };
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| failed(&e))?;
    }
    #[cfg_attr(not(unix), expect(unused_mut, reason = "the mode is POSIX only"))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(failed(&e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| failed(&e))?;
    if !meta.is_dir() {
        return Err(StoreError(format!(
            "the token directory {} is not a directory",
            dir.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.uid() != nix::unistd::geteuid().as_raw() {
            return Err(StoreError(format!(
                "the token directory {} belongs to another user",
                dir.display()
            )));
        }
        if meta.mode() & 0o777 != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| failed(&e))?;
        }
    }
    #[cfg(windows)]
    private_windows::make_owner_only(dir).map_err(|e| failed(&e))?;
    Ok(())
}

/// The Windows counterpart of mode 0700 for the directory.
#[cfg(windows)]
#[path = "private_windows.rs"]
mod private_windows;

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
