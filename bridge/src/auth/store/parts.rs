//! Entries too large for one keychain credential, split in parts (pure). Windows Credential
//! Manager keeps at most 2560 bytes in one credential; a stored sign-in with a long access
//! token and a refresh token can be larger.
//!
//! The first credential starts with a header line `mbv1 <parts> <digest>\n`, where `<digest>`
//! is the start of the SHA-256 of the whole entry; the parts 1 to n-1 follow in credentials of
//! their own (docs/token-stores.md: `/1`, `/2` and so on). A reader that meets the parts of two
//! different writes (two bridges saved at once) sees a digest that does not match, and treats
//! the entry as absent instead of joining pieces of two sign-ins.

use sha2::{Digest, Sha256};

/// The bytes of the header line at most.
const HEADER_MAX: usize = 48;
/// An entry has at most this many parts (a stored sign-in is a few KiB).
pub const MAX_PARTS: usize = 64;
/// The hex digits of the digest in the header.
const DIGEST_HEX: usize = 16;

/// The largest credential of the host's keychain that the store writes.
#[cfg(windows)]
pub const PART_SIZE: usize = 2048;
/// The largest credential of the host's keychain that the store writes.
#[cfg(not(windows))]
pub const PART_SIZE: usize = 16 * 1024;

/// The credentials of `data`, each at most `part_size` bytes; the first has the header.
pub fn split(data: &[u8], part_size: usize) -> Result<Vec<Vec<u8>>, &'static str> {
    let chunk = part_size.saturating_sub(HEADER_MAX).max(1);
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&[]]
    } else {
        data.chunks(chunk).collect()
    };
    if chunks.len() > MAX_PARTS {
        return Err("the entry is too large for the keychain");
    }
    let mut parts: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
    let mut first = format!("mbv1 {} {}\n", chunks.len(), digest(data)).into_bytes();
    first.extend_from_slice(&parts[0]);
    parts[0] = first;
    Ok(parts)
}

/// The header of the first credential: the number of parts, the digest and the first chunk.
pub fn header(first: &[u8]) -> Result<(usize, &str, &[u8]), &'static str> {
    const BAD: &str = "the keychain entry has no valid header";
    let end = first
        .iter()
        .take(HEADER_MAX)
        .position(|b| *b == b'\n')
        .ok_or(BAD)?;
    let line = std::str::from_utf8(&first[..end]).map_err(|_| BAD)?;
    let mut words = line.split(' ');
    let (Some("mbv1"), Some(count), Some(digest), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(BAD);
    };
    let count: usize = count.parse().map_err(|_| BAD)?;
    if !(1..=MAX_PARTS).contains(&count) || digest.len() != DIGEST_HEX {
        return Err(BAD);
    }
    Ok((count, digest, &first[end + 1..]))
}

/// The entry of the first credential and the `rest`; an error when the digest does not match.
pub fn join(first: &[u8], rest: &[Vec<u8>]) -> Result<Vec<u8>, &'static str> {
    let (count, expected, chunk) = header(first)?;
    if rest.len() + 1 != count {
        return Err("a part of the keychain entry is missing");
    }
    let mut data = chunk.to_vec();
    for part in rest {
        data.extend_from_slice(part);
    }
    if digest(&data) != expected {
        return Err("the parts of the keychain entry do not belong together");
    }
    Ok(data)
}

fn digest(data: &[u8]) -> String {
    hex(&Sha256::digest(data)[..DIGEST_HEX / 2])
}

/// Lowercase hexadecimal digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_entry_splits_in_parts_that_join_again() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let parts = split(&data, 1024).expect("split");
        assert_eq!(parts.len(), 6, "976 bytes a part");
        assert!(parts.iter().all(|p| p.len() <= 1024));
        assert_eq!(header(&parts[0]).expect("header").0, 6);
        assert_eq!(join(&parts[0], &parts[1..]), Ok(data.clone()));
        // A small entry is one credential.
        let small = split(b"{}", PART_SIZE).expect("split");
        assert_eq!(small.len(), 1);
        assert_eq!(join(&small[0], &[]), Ok(b"{}".to_vec()));
        assert_eq!(join(&split(b"", 64).expect("empty")[0], &[]), Ok(vec![]));
    }

    #[test]
    fn parts_of_two_writes_or_a_missing_part_are_refused() {
        let a = split(&[b'a'; 3000], 1024).expect("a");
        let b = split(&[b'b'; 3000], 1024).expect("b");
        assert_eq!(a.len(), 4);
        let mixed = [b[1].clone(), b[2].clone(), b[3].clone()];
        assert_eq!(
            join(&a[0], &mixed),
            Err("the parts of the keychain entry do not belong together")
        );
        assert_eq!(
            join(&a[0], &a[1..2]),
            Err("a part of the keychain entry is missing")
        );
        assert!(join(b"no header", &[]).is_err());
        assert!(join(b"mbv1 0 0123456789abcdef\n", &[]).is_err());
        assert!(join(b"mbv1 65 0123456789abcdef\n", &[]).is_err());
        assert!(
            split(&vec![0u8; 100 * 1024], 1024).is_err(),
            "too many parts"
        );
    }
}
