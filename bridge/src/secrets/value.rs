//! The value of `secret set` (docs/secrets.md): from `--from-file`, else from a hidden prompt
//! when stdin is a terminal (rpassword: no echo, on POSIX and in the Windows console), else
//! from stdin. Exactly one line ending at the end is stripped (`\n` or `\r\n`), so that a file
//! of an editor or `echo` gives the value without it; a value of several lines stays as it is.
//! An empty value, a value that is not UTF-8 or that holds NUL is refused. Never from argv.
//!
//! No text of this module holds the value.

use std::io::{IsTerminal, Read};
use std::path::Path;

/// A value is read up to this size: an API key, a certificate or a JSON key file fit.
pub const MAX_VALUE: usize = 64 * 1024;

/// The value without exactly one line ending at its end.
pub fn strip_one_line_ending(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.ends_with(b"\r\n") {
        bytes.truncate(bytes.len() - 2);
    } else if bytes.ends_with(b"\n") {
        bytes.truncate(bytes.len() - 1);
    }
    bytes
}

/// The checks of every source, after the strip.
pub fn checked(bytes: Vec<u8>) -> Result<String, String> {
    let bytes = strip_one_line_ending(bytes);
    if bytes.is_empty() {
        return Err("the value is empty: give a value that is not empty".into());
    }
    if bytes.contains(&0) {
        return Err("the value holds a NUL byte, which no environment or header can carry".into());
    }
    String::from_utf8(bytes).map_err(|_| "the value is not UTF-8 text".into())
}

/// Reads at most [`MAX_VALUE`] bytes of `reader`; an error beyond.
fn read_limited(reader: impl Read, what: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_VALUE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what}: {}", e.kind()))?;
    if bytes.len() > MAX_VALUE {
        return Err(format!("{what} is longer than {MAX_VALUE} bytes"));
    }
    Ok(bytes)
}

/// The value of the secret `name` from its source.
pub fn read_value(from_file: Option<&Path>, name: &str) -> Result<String, String> {
    if let Some(path) = from_file {
        let file = std::fs::File::open(path)
            .map_err(|e| format!("cannot read the file of --from-file: {}", e.kind()))?;
        return checked(read_limited(file, "the file of --from-file")?);
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let typed = rpassword::prompt_password(format!(
            "The value of the secret {name} (the input is hidden): "
        ))
        .map_err(|e| format!("cannot read the value from the terminal: {}", e.kind()))?;
        return checked(typed.into_bytes());
    }
    checked(read_limited(stdin.lock(), "stdin")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_line_ending_is_stripped_and_empty_is_refused() {
        assert_eq!(checked(b"key\n".to_vec()), Ok("key".into()));
        assert_eq!(checked(b"key\r\n".to_vec()), Ok("key".into()));
        assert_eq!(checked(b"key\n\n".to_vec()), Ok("key\n".into()));
        assert_eq!(checked(b"a\nb\n".to_vec()), Ok("a\nb".into()));
        assert_eq!(checked(b"key".to_vec()), Ok("key".into()));
        assert!(checked(b"\n".to_vec()).is_err());
        assert!(checked(Vec::new()).is_err());
        assert!(checked(b"a\0b".to_vec()).is_err());
        assert!(checked(vec![0xff, 0xfe]).is_err());
    }

    #[test]
    fn a_value_longer_than_the_limit_is_refused() {
        let long = vec![b'a'; MAX_VALUE + 1];
        assert!(read_limited(long.as_slice(), "stdin").is_err());
        let fits = vec![b'a'; MAX_VALUE];
        assert_eq!(
            read_limited(fits.as_slice(), "stdin").map(|b| b.len()),
            Ok(MAX_VALUE)
        );
    }
}
