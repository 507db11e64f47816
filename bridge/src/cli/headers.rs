//! The headers of the URL form: `--header <name>:<value>` and `--header-env <name>=<var>`.
//!
//! A name is an HTTP token. The names that the bridge or the HTTP connection sets, each name
//! that starts with `mcp-`, and `Proxy-Authorization` are refused; a name occurs once over
//! both options (case-insensitive). A value is trimmed, not empty, and has only visible ASCII,
//! spaces and tabs. No error text carries a value; a name appears only once it is a valid
//! token.

use std::ffi::OsString;
use std::fmt;

use super::ArgError;

/// The hint for the names that the bridge or the HTTP connection sets.
pub const HINT_SET_BY_BRIDGE: &str = "the bridge or the HTTP connection sets this header";
/// The hint for `Proxy-Authorization`.
pub const HINT_PROXY: &str =
    "put the user and the password of the proxy into the proxy URL of HTTPS_PROXY or ALL_PROXY";
/// The hint for the names that start with `mcp-`.
pub const HINT_MCP: &str = "the header names that start with mcp- are for the protocol";

/// Names that the bridge or the HTTP connection sets (lower case). `last-event-id` is set by
/// the bridge when it resumes a stream.
const SET_BY_BRIDGE: [&str; 15] = [
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "accept",
    "content-type",
    "accept-encoding",
    "dpop",
    "te",
    "trailer",
    "upgrade",
    "keep-alive",
    "proxy-connection",
    "expect",
    "last-event-id",
];

/// Names that usually carry a secret: on `--header` they give a warning line.
const SECRET_LOOKING: [&str; 4] = ["authorization", "cookie", "x-api-key", "api-key"];

/// One header of the URL form, in the order of the command line.
#[derive(Clone, PartialEq, Eq)]
pub enum HeaderSpec {
    /// `--header <name>:<value>`: the value is on the command line.
    Literal { name: String, value: String },
    /// `--header-env <name>=<var>`: the value comes from the variable at the start.
    Env { name: String, var: String },
    /// `--secret-header <name>=<text>`: the text with the bridge's own secrets, resolved at
    /// the start (docs/secrets.md).
    Secret {
        name: String,
        template: super::template::Template,
    },
}

impl HeaderSpec {
    /// The name of the header as the command line gives it.
    pub fn name(&self) -> &str {
        match self {
            HeaderSpec::Literal { name, .. }
            | HeaderSpec::Env { name, .. }
            | HeaderSpec::Secret { name, .. } => name,
        }
    }
}

/// Never shows a value (a value can be a secret, despite the advice of docs/options.md).
impl fmt::Debug for HeaderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderSpec::Literal { name, .. } => write!(f, "Literal({name}: <value>)"),
            HeaderSpec::Env { name, var } => write!(f, "Env({name} from ${var})"),
            HeaderSpec::Secret { name, template } => {
                write!(f, "Secret({name} from {:?})", template.names())
            }
        }
    }
}

/// True for an HTTP token (RFC 9110 §5.6.2).
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// True for a header value that the bridge sends: visible ASCII, spaces and tabs.
pub(crate) fn is_value(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_graphic() || b == b' ' || b == b'\t')
}

/// Checks a header name of `option`.
pub(super) fn check_name(option: &'static str, name: &str) -> Result<String, ArgError> {
    if !is_token(name) {
        return Err(ArgError::InvalidValue(
            option,
            "the header name is not an HTTP token",
        ));
    }
    let lower = name.to_ascii_lowercase();
    let hint = if SET_BY_BRIDGE.contains(&lower.as_str()) {
        Some(HINT_SET_BY_BRIDGE)
    } else if lower == "proxy-authorization" {
        Some(HINT_PROXY)
    } else if lower.starts_with("mcp-") {
        Some(HINT_MCP)
    } else {
        None
    };
    match hint {
        Some(hint) => Err(ArgError::HeaderRefused {
            option,
            name: name.to_owned(),
            hint,
        }),
        None => Ok(name.to_owned()),
    }
}

/// Parses the value of `--header`: `<name>:<value>`.
pub fn parse_header(text: &str) -> Result<HeaderSpec, ArgError> {
    const OPTION: &str = "--header";
    let (name, value) = text
        .split_once(':')
        .ok_or(ArgError::InvalidValue(OPTION, "use <name>:<value>"))?;
    let name = check_name(OPTION, name.trim())?;
    let value = value.trim_matches([' ', '\t']);
    if value.is_empty() {
        return Err(ArgError::InvalidValue(OPTION, "the header value is empty"));
    }
    if !is_value(value) {
        return Err(ArgError::InvalidValue(
            OPTION,
            "the header value has a control character or a character that is not ASCII",
        ));
    }
    Ok(HeaderSpec::Literal {
        name,
        value: value.to_owned(),
    })
}

/// Parses the value of `--header-env`: `<name>=<var>`.
pub fn parse_header_env(text: &str) -> Result<HeaderSpec, ArgError> {
    const OPTION: &str = "--header-env";
    let (name, var) = text
        .split_once('=')
        .ok_or(ArgError::InvalidValue(OPTION, "use <name>=<var>"))?;
    let name = check_name(OPTION, name.trim())?;
    if var.is_empty() || var.contains(['=', '\0']) || !var.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ArgError::InvalidValue(
            OPTION,
            "the name of the environment variable is not valid",
        ));
    }
    Ok(HeaderSpec::Env {
        name,
        var: var.to_owned(),
    })
}

/// Refuses a name that occurs more than one time over `--header`, `--header-env` and
/// `--secret-header`.
pub fn check_duplicates(specs: &[HeaderSpec]) -> Result<(), ArgError> {
    for (i, spec) in specs.iter().enumerate() {
        if specs[..i]
            .iter()
            .any(|earlier| earlier.name().eq_ignore_ascii_case(spec.name()))
        {
            return Err(ArgError::DuplicateHeader(spec.name().to_owned()));
        }
    }
    Ok(())
}

/// True when a header is a static `Authorization` header.
pub fn has_authorization(specs: &[HeaderSpec]) -> bool {
    specs
        .iter()
        .any(|spec| spec.name().eq_ignore_ascii_case("authorization"))
}

/// The warning lines (scope `vscode`, level warning) for a `--header` whose name usually
/// carries a secret. They name the header, never its value.
pub fn warnings(specs: &[HeaderSpec]) -> Vec<String> {
    specs
        .iter()
        .filter(|spec| matches!(spec, HeaderSpec::Literal { .. }))
        .filter(|spec| SECRET_LOOKING.contains(&spec.name().to_ascii_lowercase().as_str()))
        .map(|spec| {
            format!(
                "the value of the header {} is on the command line. VS Code writes the command \
                 line to its log, and the process list shows it: give a secret with --header-env",
                spec.name()
            )
        })
        .collect()
}

/// The headers to send, in the order of the command line: the literal values, the values
/// of the variables of `--header-env` from `env` (trimmed), and the texts of `--secret-header`
/// with the values of `secret` (resolved and checked before, docs/secrets.md). A variable that
/// is not set or is empty, or a value that is not a valid header value, is an error of exit
/// code 2; the text names the variable, never the value.
pub fn resolve_headers(
    specs: &[HeaderSpec],
    env: impl Fn(&str) -> Option<OsString>,
    secret: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, ArgError> {
    specs
        .iter()
        .map(|spec| match spec {
            HeaderSpec::Literal { name, value } => Ok((name.clone(), value.clone())),
            HeaderSpec::Env { name, var } => {
                let raw = env(var).unwrap_or_default();
                let Some(text) = raw.to_str() else {
                    return Err(ArgError::HeaderEnvInvalid(var.clone()));
                };
                let value = text.trim_matches([' ', '\t', '\r', '\n']);
                if value.is_empty() {
                    return Err(ArgError::HeaderEnvUnset(var.clone()));
                }
                if !is_value(value) {
                    return Err(ArgError::HeaderEnvInvalid(var.clone()));
                }
                Ok((name.clone(), value.to_owned()))
            }
            HeaderSpec::Secret { name, template } => template
                .render(&secret)
                .filter(|value| is_value(value))
                .map(|value| (name.clone(), value))
                .ok_or_else(|| ArgError::SecretHeaderInvalid(name.clone())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(name: &str, value: &str) -> HeaderSpec {
        HeaderSpec::Literal {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn header_values_are_trimmed_and_checked() {
        assert_eq!(
            parse_header("X-Team:  blue \t"),
            Ok(literal("X-Team", "blue"))
        );
        assert_eq!(parse_header("x-a:b:c"), Ok(literal("x-a", "b:c")));
        assert_eq!(parse_header(" x-a :v"), Ok(literal("x-a", "v")));
        assert_eq!(
            parse_header("Authorization:Bearer a b"),
            Ok(literal("Authorization", "Bearer a b"))
        );
        for bad in [
            "x-a",
            "x-a:",
            "x-a:  ",
            ":v",
            "x a:v",
            "x(a):v",
            "x-a:v\u{7f}",
            "x-a:a\rb",
            "x-a:é",
        ] {
            assert!(
                matches!(
                    parse_header(bad),
                    Err(ArgError::InvalidValue("--header", _))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn header_env_names_a_variable() {
        assert_eq!(
            parse_header_env("Authorization=API_AUTH"),
            Ok(HeaderSpec::Env {
                name: "Authorization".into(),
                var: "API_AUTH".into()
            })
        );
        for bad in [
            "Authorization",
            "Authorization=",
            "Authorization=A=B",
            "x y=V",
            "=V",
            "x=A B",
        ] {
            assert!(
                matches!(
                    parse_header_env(bad),
                    Err(ArgError::InvalidValue("--header-env", _))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn refused_names_with_their_hints() {
        for name in SET_BY_BRIDGE.iter().map(|n| n.to_ascii_uppercase()) {
            for result in [
                parse_header(&format!("{name}:x")),
                parse_header_env(&format!("{name}=V")),
            ] {
                assert!(
                    matches!(
                        result,
                        Err(ArgError::HeaderRefused {
                            hint: HINT_SET_BY_BRIDGE,
                            ..
                        })
                    ),
                    "{name}"
                );
            }
        }
        assert_eq!(
            parse_header("Host:x").map_err(|e| e.to_string()),
            Err("the header Host of --header is refused: the bridge or the HTTP connection sets this header".into())
        );
        for name in [
            "Mcp-Session-Id",
            "mcp-method",
            "MCP-Protocol-Version",
            "mcp-",
        ] {
            assert!(
                matches!(
                    parse_header(&format!("{name}:x")),
                    Err(ArgError::HeaderRefused { hint: HINT_MCP, .. })
                ),
                "{name}"
            );
        }
        assert!(matches!(
            parse_header_env("Proxy-Authorization=V"),
            Err(ArgError::HeaderRefused {
                option: "--header-env",
                hint: HINT_PROXY,
                ..
            })
        ));
        for allowed in [
            "Authorization",
            "Cookie",
            "X-Api-Key",
            "User-Agent",
            "mcpx",
            "x-mcp-a",
        ] {
            assert!(parse_header(&format!("{allowed}:v")).is_ok(), "{allowed}");
        }
    }

    #[test]
    fn duplicates_over_both_options_are_refused() {
        let specs = [
            literal("X-A", "1"),
            HeaderSpec::Env {
                name: "x-a".into(),
                var: "V".into(),
            },
        ];
        assert_eq!(
            check_duplicates(&specs).map_err(|e| e.to_string()),
            Err("the header x-a occurs more than one time in --header and --header-env".into())
        );
        assert_eq!(check_duplicates(&specs[..1]), Ok(()));
    }

    #[test]
    fn warnings_for_secret_looking_names_on_the_command_line_only() {
        let specs = [
            literal("authorization", "s3cr3t"),
            literal("Cookie", "s3cr3t"),
            literal("X-API-KEY", "s3cr3t"),
            literal("api-key", "s3cr3t"),
            literal("x-team", "blue"),
            HeaderSpec::Env {
                name: "Authorization".into(),
                var: "V".into(),
            },
        ];
        let lines = warnings(&specs);
        assert_eq!(lines.len(), 4);
        assert!(
            lines[0].starts_with("the value of the header authorization is on the command line. ")
        );
        assert!(lines.iter().all(|l| !l.contains("s3cr3t")));
        assert!(!format!("{specs:?}").contains("s3cr3t"));
    }

    #[test]
    fn resolve_headers_reads_the_variables_and_never_shows_a_value() {
        let specs = [
            literal("x-a", "1"),
            HeaderSpec::Env {
                name: "Authorization".into(),
                var: "AUTH".into(),
            },
        ];
        let env =
            |value: &'static str| move |var: &str| (var == "AUTH").then(|| OsString::from(value));
        assert_eq!(
            resolve_headers(&specs, env(" Bearer s3cr3t\n"), |_| None),
            Ok(vec![
                ("x-a".into(), "1".into()),
                ("Authorization".into(), "Bearer s3cr3t".into())
            ])
        );
        for unset in ["", " \n"] {
            assert_eq!(
                resolve_headers(&specs, env(unset), |_| None).map_err(|e| e.to_string()),
                Err(
                    "the environment variable AUTH of --header-env is not set, or it is empty"
                        .into()
                )
            );
        }
        assert_eq!(
            resolve_headers(&specs, |_| None, |_| None),
            Err(ArgError::HeaderEnvUnset("AUTH".into()))
        );
        for bad in ["Bearer s3cr3t\nx: y", "s3cr3t\u{0}", "s3cr3té"] {
            let error = resolve_headers(&specs, env(bad), |_| None).map_err(|e| e.to_string());
            assert_eq!(
                error,
                Err("the environment variable AUTH of --header-env is not valid: the value is not a valid HTTP header value".into())
            );
        }
    }
}
