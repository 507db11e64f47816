use std::sync::{Arc, Barrier};

use super::*;
use crate::auth::identity::storage_key;
use crate::auth::store::TokenStore;
use crate::auth::store::indexed::Indexed;
use crate::auth::store::indexed::tests::record;

fn key(byte: u8) -> TokenKey {
    TokenKey([byte; 32])
}

fn store(dir: &Path, byte: u8) -> Indexed<FileStore> {
    Indexed::new(FileStore::open(dir, key(byte)).expect("open"))
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read"))
        })
        .collect();
    all.sort();
    all
}

#[test]
fn records_round_trip_encrypted_under_names_without_the_url() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("state").join("tokens");
    let store = store(&dir, 7);
    let url = "https://mcp.example.com/mcp?api_key=planted-url-secret";
    let k = storage_key(url, "default", 41894);
    store
        .save(&k, &record("planted-access-token"))
        .expect("save");
    assert_eq!(store.load(&k), Ok(Some(record("planted-access-token"))));
    for (name, bytes) in files(&dir) {
        assert!(!name.contains("mcp.example.com"), "{name}");
        assert!(name.ends_with(".tok") || name == ".lock", "{name}");
        let text = String::from_utf8_lossy(&bytes);
        for secret in [
            "planted-access-token",
            "planted-url-secret",
            "mcp.example.com",
        ] {
            assert!(!text.contains(secret), "{name} shows {secret}");
        }
    }
    // Another key reads nothing (and does not even find the same file names).
    let other = self::store(&dir, 8);
    assert_eq!(other.load(&k), Ok(None));
    assert_eq!(other.list(), Ok(vec![]));
}

#[cfg(unix)]
#[test]
fn the_directory_and_the_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("tokens");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let store = store(&dir, 1);
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "an existing directory becomes private");
    store.save("k", &record("t")).expect("save");
    for (name, _) in files(&dir) {
        if name != ".lock" {
            assert_eq!(mode(&dir.join(&name)), 0o600, "{name}");
        }
    }
}

#[test]
fn a_file_that_does_not_decrypt_is_absent_and_nothing_else_is_lost() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("tokens");
    let store = store(&dir, 3);
    store.save("a", &record("ta")).expect("save a");
    store.save("b", &record("tb")).expect("save b");
    let path_a = store.entries().path("a");
    let mut bytes = std::fs::read(&path_a).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path_a, &bytes).expect("corrupt");
    assert_eq!(store.load("a"), Ok(None));
    assert_eq!(store.load("b"), Ok(Some(record("tb"))));
    // A truncated file, a foreign file, and a file copied over another one.
    std::fs::write(&path_a, b"MBV1short").expect("truncate");
    assert_eq!(store.load("a"), Ok(None));
    std::fs::write(&path_a, b"hello").expect("foreign");
    assert_eq!(store.load("a"), Ok(None));
    std::fs::copy(store.entries().path("b"), &path_a).expect("copy");
    assert_eq!(
        store.load("a"),
        Ok(None),
        "the storage key is the associated data"
    );
    assert_eq!(store.list(), Ok(vec!["a".to_owned(), "b".to_owned()]));
    // A save replaces the broken file.
    store.save("a", &record("ta2")).expect("save again");
    assert_eq!(store.load("a"), Ok(Some(record("ta2"))));
}

#[test]
fn two_bridges_that_write_at_once_lose_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("tokens");
    const EACH: usize = 40;
    let start = Arc::new(Barrier::new(2));
    let writers: Vec<_> = ["x", "y"]
        .into_iter()
        .map(|who| {
            let dir = dir.clone();
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                // Two stores on one directory: two processes of the same user.
                let store = store(&dir, 9);
                start.wait();
                for i in 0..EACH {
                    store
                        .save(&format!("{who}{i}"), &record(&format!("{who}-{i}")))
                        .expect("save");
                    // Both also rewrite one shared record.
                    store.save("shared", &record(who)).expect("save shared");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    let store = store(&dir, 9);
    let listed = store.list().expect("list");
    assert_eq!(listed.len(), 2 * EACH + 1, "every save is in the index");
    for who in ["x", "y"] {
        for i in 0..EACH {
            assert_eq!(
                store.load(&format!("{who}{i}")),
                Ok(Some(record(&format!("{who}-{i}"))))
            );
        }
    }
    let shared = store.load("shared").expect("load").expect("present");
    assert!(
        shared == record("x") || shared == record("y"),
        "one whole record"
    );
    let temporary: Vec<_> = files(&dir)
        .into_iter()
        .filter(|(n, _)| n.starts_with(".tmp-"))
        .collect();
    assert!(temporary.is_empty(), "no temporary file is left");
}

#[test]
fn the_directory_cannot_be_a_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("tokens");
    std::fs::write(&dir, b"x").expect("write");
    let error = FileStore::open(&dir, key(1))
        .err()
        .expect("not a directory");
    assert!(error.0.contains("is not a directory"), "{error}");
}
