//! The `WWW-Authenticate` challenge of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1), pure: the
//! `Bearer` challenge's `resource_metadata`, `scope`, `error` and `error_description`.
//!
//! A header can hold several challenges (`Basic realm="x", Bearer scope="a"`); only the
//! parameters of the `Bearer` challenge count. Quoted strings keep their backslash escapes'
//! characters; a token value stands as it is.

/// The parameters of a `Bearer` challenge that the sign-in uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl Challenge {
    /// M4 step-up: a 403 whose challenge says `insufficient_scope`.
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The `Bearer` challenge of the values of one or more `WWW-Authenticate` headers; `None`
/// when none of them has one.
pub fn parse<'a>(headers: impl IntoIterator<Item = &'a str>) -> Option<Challenge> {
    headers.into_iter().find_map(parse_one)
}

fn parse_one(header: &str) -> Option<Challenge> {
    let mut rest = header;
    let mut in_bearer = false;
    let mut found = false;
    let mut challenge = Challenge::default();
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            break;
        }
        let (token, after) = split_token(rest);
        if token.is_empty() {
            // Not a token: the header is malformed from here on.
            break;
        }
        let after_ws = after.trim_start_matches([' ', '\t']);
        if let Some(value_part) = after_ws.strip_prefix('=') {
            // An auth-param of the current challenge.
            let (value, next) = parse_value(value_part.trim_start_matches([' ', '\t']));
            if in_bearer {
                let slot = match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => Some(&mut challenge.resource_metadata),
                    "scope" => Some(&mut challenge.scope),
                    "error" => Some(&mut challenge.error),
                    "error_description" => Some(&mut challenge.error_description),
                    _ => None,
                };
                if let Some(slot) = slot
                    && slot.is_none()
                {
                    *slot = Some(value);
                }
            }
            rest = next;
        } else {
            // A new auth-scheme (token68 values of other schemes are skipped as tokens).
            if in_bearer {
                break;
            }
            in_bearer = token.eq_ignore_ascii_case("bearer");
            found |= in_bearer;
            rest = after;
        }
    }
    found.then_some(challenge)
}

/// A token (RFC 9110 `tchar`s) and what follows it.
fn split_token(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~/".contains(c)))
        .unwrap_or(text.len());
    text.split_at(end)
}

/// A quoted string or a token, and what follows it.
fn parse_value(text: &str) -> (String, &str) {
    let Some(quoted) = text.strip_prefix('"') else {
        let (token, rest) = split_token(text);
        // A token68 value can end with `=` padding.
        let pad = rest.len() - rest.trim_start_matches('=').len();
        let (padded, rest) = text.split_at(token.len() + pad);
        return (padded.to_owned(), rest);
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &quoted[i + 1..]),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            other => value.push(other),
        }
    }
    // An unterminated string ends the header.
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_of_the_specification() {
        let c = parse([
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read""#,
        ])
        .expect("bearer");
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.scope.as_deref(), Some("files:read"));
        assert!(!c.is_insufficient_scope());
    }

    #[test]
    fn m4_step_up_reads_insufficient_scope_and_the_scopes() {
        let c = parse([
            r#"Bearer error="insufficient_scope", error_description="The tool needs the scope mcp:write", resource_metadata="https://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp:read mcp:write""#,
        ])
        .expect("bearer");
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("mcp:read mcp:write"));
        assert_eq!(
            c.error_description.as_deref(),
            Some("The tool needs the scope mcp:write")
        );
    }

    #[test]
    fn only_the_bearer_challenge_counts() {
        let c = parse([r#"Basic realm="a", scope="no", Bearer realm="b", scope=x, DPoP algs="ES256", scope="d""#])
            .expect("bearer");
        assert_eq!(c.scope.as_deref(), Some("x"));
        assert_eq!(parse([r#"Basic realm="only""#]), None);
        assert_eq!(
            parse([r#"Basic realm="a""#, r#"bearer scope="y""#]).and_then(|c| c.scope),
            Some("y".to_owned())
        );
        assert_eq!(parse(["Bearer"]), Some(Challenge::default()));
        assert_eq!(
            parse([r#"Bearer realm="bridge-fixture""#]),
            Some(Challenge::default())
        );
    }

    #[test]
    fn escapes_tokens_and_broken_headers() {
        let c = parse([r#"Bearer error_description="say \"hi\"", error=invalid_token"#])
            .expect("bearer");
        assert_eq!(c.error_description.as_deref(), Some("say \"hi\""));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        let c = parse([r#"Bearer scope="unterminated"#]).expect("bearer");
        assert_eq!(c.scope.as_deref(), Some("unterminated"));
        assert_eq!(parse(["Bearer @@@, scope=a"]), Some(Challenge::default()));
        assert_eq!(
            parse(["Bearer , , scope=a"]).and_then(|c| c.scope),
            Some("a".into())
        );
        assert_eq!(parse([""]), None);
        assert_eq!(
            parse(["Newauth abc==, Bearer scope=z"]).and_then(|c| c.scope),
            Some("z".into())
        );
    }
}
