//! The references to the bridge's own secrets on the command line (docs/secrets.md):
//! `--secret-env <var>=<name>` (the command form: the variable `<var>` of the upstream command
//! gets the secret `<name>`) and `--secret-header "<header>=<text with {name}>"` (the URL form:
//! the header gets the text, each `{name}` replaced by that secret).
//!
//! The syntax has no `$`, so that no client and no shell expands it, and it is the same on
//! every system. A secret name follows the rule of `--account` ([`secret_name`]). The values
//! are never on the command line: only names. The error texts name the option, never a value.

use super::ArgError;
use super::headers::{HeaderSpec, check_name, is_value};
pub use super::template::{Piece, Template};

/// The hint of a secret name that is not valid.
pub const NAME_HINT: &str = "use a secret name of 1 to 64 letters, digits, -, ., _, @ or +";

/// True for a secret name: 1 to 64 letters, digits, `-`, `.`, `_`, `@` or `+` (the rule of
/// `--account`), so that a name never holds a brace, a space or a path separator.
pub fn is_secret_name(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._@+".contains(&b))
}

/// A secret name of `option`.
pub fn secret_name(option: &'static str, text: &str) -> Result<String, ArgError> {
    if !is_secret_name(text) {
        return Err(ArgError::InvalidValue(option, NAME_HINT));
    }
    Ok(text.to_owned())
}

/// `--secret-env <var>=<name>`: the variable of the upstream command and the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretEnv {
    pub var: String,
    pub name: String,
}

/// Parses the value of `--secret-env`. The variable is a portable name: a letter or `_`, then
/// letters, digits and `_`.
pub fn parse_secret_env(text: &str) -> Result<SecretEnv, ArgError> {
    const OPTION: &str = "--secret-env";
    let (var, name) = text
        .split_once('=')
        .ok_or(ArgError::InvalidValue(OPTION, "use <var>=<name>"))?;
    let portable = var
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !portable {
        return Err(ArgError::InvalidValue(
            OPTION,
            "the name of the environment variable is not valid: use letters, digits and _",
        ));
    }
    Ok(SecretEnv {
        var: var.to_owned(),
        name: secret_name(OPTION, name)?,
    })
}

/// Parses the value of `--secret-header`: `<header>=<text>`, where the text holds one or more
/// `{name}` and otherwise visible ASCII, spaces and tabs, without other braces.
pub fn parse_secret_header(text: &str) -> Result<HeaderSpec, ArgError> {
    const OPTION: &str = "--secret-header";
    let (name, rest) = text.split_once('=').ok_or(ArgError::InvalidValue(
        OPTION,
        "use <header>=<text with {name}>",
    ))?;
    let name = check_name(OPTION, name.trim())?;
    let mut pieces = Vec::new();
    let mut rest = rest;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                pieces.push(Piece::Text(rest.to_owned()));
                rest = "";
            }
            Some(at) if rest.as_bytes()[at] == b'{' => {
                if at > 0 {
                    pieces.push(Piece::Text(rest[..at].to_owned()));
                }
                let end = rest[at..].find('}').ok_or(ArgError::InvalidValue(
                    OPTION,
                    "a { has no } after the secret name",
                ))?;
                pieces.push(Piece::Secret(secret_name(OPTION, &rest[at + 1..at + end])?));
                rest = &rest[at + end + 1..];
            }
            Some(_) => {
                return Err(ArgError::InvalidValue(OPTION, "a } has no { before it"));
            }
        }
    }
    if !pieces.iter().any(|p| matches!(p, Piece::Secret(_))) {
        return Err(ArgError::InvalidValue(
            OPTION,
            "the text names no secret: use {name}, or --header for a text without a secret",
        ));
    }
    let texts_valid = pieces.iter().all(|p| match p {
        Piece::Text(text) => is_value(text),
        Piece::Secret(_) => true,
    });
    if !texts_valid {
        return Err(ArgError::InvalidValue(
            OPTION,
            "the text has a control character or a character that is not ASCII",
        ));
    }
    Ok(HeaderSpec::Secret {
        name,
        template: Template(pieces),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_name_follows_the_rule_of_account() {
        assert!(is_secret_name("API_KEY"));
        assert!(is_secret_name("work.key-2@example+x"));
        for bad in ["", "a b", "a{b", "a/b", "a$b", "é", &"a".repeat(65)] {
            assert!(!is_secret_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn secret_env_names_a_portable_variable_and_a_secret() {
        assert_eq!(
            parse_secret_env("API_KEY=my-key"),
            Ok(SecretEnv {
                var: "API_KEY".into(),
                name: "my-key".into()
            })
        );
        for bad in ["API_KEY", "=k", "1A=k", "A-B=k", "A=", "A=a b", "A=$K"] {
            assert!(parse_secret_env(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn secret_header_has_text_and_at_least_one_reference() {
        let spec = parse_secret_header("Authorization=Bearer {api}").expect("valid");
        let HeaderSpec::Secret { name, template } = spec else {
            panic!("not a secret header");
        };
        assert_eq!(name, "Authorization");
        assert_eq!(template.names(), vec!["api"]);
        let value = |n: &str| (n == "api").then(|| "v".to_owned());
        assert_eq!(template.render(value).as_deref(), Some("Bearer v"));
        let two = parse_secret_header("X-Key={a}:{b}{a}").expect("two");
        let HeaderSpec::Secret { template, .. } = two else {
            panic!("not a secret header");
        };
        assert_eq!(template.names(), vec!["a", "b"]);
        assert_eq!(template.render(|_| None), None);
        for bad in [
            "Authorization",
            "Authorization=Bearer",
            "Authorization=Bearer {api",
            "Authorization=Bearer }api{",
            "Authorization=Bearer {a b}",
            "Authorization=Bearer {}",
            "Host={api}",
            "mcp-x={api}",
            "X-Key=\u{7f}{api}",
        ] {
            assert!(parse_secret_header(bad).is_err(), "{bad:?}");
        }
    }
}
