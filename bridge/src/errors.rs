//! The one error table (docs/architecture.md principle 6): every error that the bridge makes has a cause,
//! a JSON-RPC code, a fixed message and `data.cause`. Upstream JSON-RPC errors pass unchanged,
//! except -32042 (quirk of M1: VS Code opens every URL in its data).
//!
//! docs/errors.md lists every cause with its code and text (a test keeps them equal).

use serde_json::{Map, Value, json};

/// The table itself: one row per cause, `Variant, "data.cause", CODE, "message";`. The enum
/// [`Cause`], `Cause::ALL` (of the tests), [`Cause::name`], [`Cause::code`] and [`Cause::message`] are made
/// from it, so that a cause is written once (docs/errors.md has the same rows; a test keeps
/// them equal).
macro_rules! error_table {
    ($($(#[$note:meta])* $variant:ident, $cause:literal, $code:ident, $message:expr;)*) => {
        /// A cause of an error of the bridge. The snake-case name goes into `data.cause`.
        // Every cause of the table of the docs (a test keeps them equal), also those that no
        // path produces yet.
        #[allow(dead_code)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Cause {
            $($(#[$note])* #[doc = $cause] $variant,)*
        }

        impl Cause {
            /// Every cause, in table order (for the exhaustive tests and the README).
            #[cfg(test)]
            pub const ALL: [Cause; [$($cause),*].len()] = [$(Cause::$variant),*];

            /// The name in `data.cause`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Cause::$variant => $cause,)*
                }
            }

            /// The JSON-RPC code of the cause.
            pub fn code(self) -> i64 {
                match self {
                    $(Cause::$variant => code::$code,)*
                }
            }

            /// The fixed message of the cause.
            pub fn message(self) -> &'static str {
                match self {
                    $(Cause::$variant => $message,)*
                }
            }
        }
    };
}

/// JSON-RPC codes of the table.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// 2025-11-25's URL elicitation required; never sent to VS Code (quirk of M1).
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
}

error_table! {
    Rpc, "rpc", INTERNAL_ERROR,
        "The upstream server sent an error. See the Output channel of the server.";
    Canceled, "canceled", INTERNAL_ERROR,
        "The client canceled the request.";
    Timeout, "timeout", INTERNAL_ERROR,
        "The upstream server did not answer in time. See the Output channel of the server.";
    Closed, "closed", INTERNAL_ERROR,
        "The upstream server process stopped. See the Output channel of the server.";
    TransportFailed, "transport_failed", INTERNAL_ERROR,
        "The connection to the upstream server failed. See the Output channel of the server.";
    InvalidResponse, "invalid_response", INTERNAL_ERROR,
        "The upstream server sent a response that is not valid. See the Output channel of the server.";
    TooManyRounds, "too_many_rounds", INTERNAL_ERROR,
        "The upstream server asked for input too many times. See the Output channel of the server.";
    OutOfMemory, "out_of_memory", INTERNAL_ERROR,
        "The bridge does not have sufficient memory for the request.";
    UndeclaredInputRequest, "undeclared_input_request", INTERNAL_ERROR,
        "The upstream server asked for input that the client did not declare.";
    HookFailed, "hook_failed", INTERNAL_ERROR,
        "The bridge cannot give the input that the upstream server asked for.";
    NotConnected, "not_connected", INTERNAL_ERROR,
        "The bridge has no connection to the upstream server. See the Output channel of the server.";
    TaskCancelled, "task_cancelled", INTERNAL_ERROR,
        "The upstream server canceled the task of the request.";
    InvalidRequest, "invalid_request", INVALID_PARAMS,
        "The bridge cannot send the parameters of the request to the upstream server.";
    InvalidMeta, "invalid_meta", INVALID_PARAMS,
        "The request has a _meta key that the bridge cannot send to the upstream server.";
    SpawnFailed, "spawn_failed", INTERNAL_ERROR,
        "The bridge cannot start the upstream server. Examine the command in the configuration of the server. See the Output channel of the server.";
    DiscoverFailed, "discover_failed", INTERNAL_ERROR,
        "The upstream server did not answer server/discover. It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server.";
    UpstreamExited, "upstream_exited", INTERNAL_ERROR,
        "The upstream server process stopped. See the Output channel of the server.";
    NotInitialized, "not_initialized", INVALID_REQUEST,
        "The client did not initialize the connection. Send initialize first.";
    AlreadyInitialized, "already_initialized", INVALID_REQUEST,
        "The client already sent initialize on this connection.";
    // The text VS Code users know from stdio servers: the only message without a final
    // period (docs/errors.md).
    TooManyRequests, "too_many_requests", INTERNAL_ERROR,
        "The connection has too many requests in flight";
    LineTooLong, "line_too_long", INVALID_REQUEST,
        "The request is longer than the line limit of the bridge.";
    TooDeep, "too_deep", INVALID_REQUEST,
        "The request has more levels of nesting than the limit of the bridge.";
    ParseError, "parse_error", PARSE_ERROR,
        "The request is not valid JSON.";
    InvalidRequestShape, "invalid_request_shape", INVALID_REQUEST,
        "The message is not a valid JSON-RPC 2.0 request.";
    MethodNotFound, "method_not_found", METHOD_NOT_FOUND,
        "The server does not have this method.";
    InvalidParams, "invalid_params", INVALID_PARAMS,
        "The parameters of the request are not valid.";
    InvalidInputRequest, "invalid_input_request", INTERNAL_ERROR,
        "The upstream server sent an input request that is not valid for the client. See the Output channel of the server.";
    TooManyInputRequests, "too_many_input_requests", INTERNAL_ERROR,
        "The upstream server asked for more inputs at one time than the limit of the bridge.";
    InputTimeout, "input_timeout", INTERNAL_ERROR,
        "The client did not answer the input request of the upstream server in time.";
    InvalidClientAnswer, "invalid_client_answer", INTERNAL_ERROR,
        "The client sent an answer that is not valid for the input request of the upstream server.";
    SignInTimeout, "sign_in_timeout", INTERNAL_ERROR,
        "The sign-in did not complete in time. Open the URL of the sign-in line in the Output channel and sign in within --sign-in-timeout. When the sign-in page shows an error, run \"mcp-bridge-vscode logout <url>\" and restart the server.";
    ReauthorizationRequired, "reauthorization_required", INTERNAL_ERROR,
        "The upstream server needs a new sign-in, and the client did not open the URL of the sign-in. Restart the server to sign in again.";
    RegistrationUnavailable, "registration_unavailable", INTERNAL_ERROR,
        "The authorization server has no client registration that the bridge can use. Register a client with the redirect URI of the bridge at the authorization server, and give its ID with --client-id and --client-issuer.";
    RegistrationRefused, "registration_refused", INTERNAL_ERROR,
        "The authorization server refused the registration of the client. See the Output channel of the server.";
    IssuerNotRegistered, "issuer_not_registered", INTERNAL_ERROR,
        "The client ID of --client-id is not for the authorization server of the upstream server. Examine --client-id and --client-issuer.";
    RedirectPortUnavailable, "redirect_port_unavailable", INTERNAL_ERROR,
        "The bridge cannot listen on the redirect port of the sign-in. Stop the program on that port, or set a different port with --redirect-port.";
    InvalidAuthorizationUrl, "invalid_authorization_url", INTERNAL_ERROR,
        "The authorization server sent an authorization URL that is not valid. The bridge did not open it.";
    SignInDenied, "sign_in_denied", INTERNAL_ERROR,
        "The authorization server refused the access.";
    AuthorizationError, "authorization_error", INTERNAL_ERROR,
        "The authorization server sent an error for the sign-in. See the Output channel of the server.";
    Forbidden, "forbidden", INTERNAL_ERROR,
        "The upstream server refused the access after the sign-in. The account of the sign-in possibly has no access; use a different account with --account.";
    Sandbox, "sandbox", INTERNAL_ERROR,
        "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. Disable the sandbox for this server.";
    SignInFailed, "sign_in_failed", INTERNAL_ERROR,
        "The sign-in at the authorization server of the upstream server failed. See the Output channel of the server.";
    // The texts of the two secret causes are filled in (secrets/resolve.rs): each `<…>` is the
    // name, the place, or the command as the user installed the bridge.
    SecretMissing, "secret_missing", INTERNAL_ERROR,
        "The secret <name> of the bridge is missing or cannot be read, thus the bridge did not start the upstream server. Run <command> in a terminal, then restart the server.";
    SecretElsewhere, "secret_elsewhere", INTERNAL_ERROR,
        "The configuration gives the secret <name> to <place>, but the secret is bound to another place. The bridge sent it nowhere. Correct the configuration, or bind the secret to this place with <command>.";
    SignInStartReused, "sign_in_start_reused", INTERNAL_ERROR,
        "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Another program on the host of the bridge possibly opened the URL. Restart the server to sign in again. When this occurs again on a host that other users share, use --no-browser.";
}

/// The error object of a cause: `{code, message, data: {cause, detail?}}`.
pub fn error_object(cause: Cause, detail: Option<&str>) -> Value {
    let mut data = Map::new();
    data.insert("cause".into(), Value::from(cause.name()));
    if let Some(detail) = detail {
        data.insert("detail".into(), Value::from(detail));
    }
    json!({"code": cause.code(), "message": cause.message(), "data": Value::Object(data)})
}

/// A complete error response frame.
pub fn error_frame(id: Value, error: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// True when an upstream error object has the JSON-RPC shape (integer code, string message).
pub fn is_valid_error(error: &Value) -> bool {
    error.get("code").is_some_and(|c| c.is_i64())
        && error.get("message").is_some_and(Value::is_string)
}

/// Quirk of M1: an upstream JSON-RPC error goes to VS Code unchanged (O8), except -32042,
/// which becomes -32603 with the same message and without `data`, because VS Code opens each
/// URL in the data of -32042. A shape that is not valid becomes `invalid_response`.
pub fn upstream_error(error: Value) -> Value {
    if !is_valid_error(&error) {
        return error_object(
            Cause::InvalidResponse,
            Some("the error has no code or no message"),
        );
    }
    if error.get("code").and_then(Value::as_i64) == Some(code::URL_ELICITATION_REQUIRED) {
        let message = error.get("message").cloned().unwrap_or(Value::Null);
        return json!({"code": code::INTERNAL_ERROR, "message": message});
    }
    error
}

/// R2: the error of `initialize` when server/discover failed. It keeps the upstream code (but
/// -32042 becomes -32603), the message of `discover_failed`, and the upstream message as
/// `data.detail`. Without an upstream error (time-out, exit, bad response) the code is -32603.
pub fn discover_failed(upstream: Option<&Value>, detail: &str) -> Value {
    let mut error = error_object(Cause::DiscoverFailed, Some(detail));
    if let Some(up) = upstream.filter(|e| is_valid_error(e)) {
        let code = up
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or(code::INTERNAL_ERROR);
        let code = if code == code::URL_ELICITATION_REQUIRED {
            code::INTERNAL_ERROR
        } else {
            code
        };
        error["code"] = Value::from(code);
        if let Some(message) = up.get("message").and_then(Value::as_str) {
            error["data"]["detail"] = Value::from(message);
        }
    }
    error
}

/// The format of a time limit in details and log lines: whole seconds as `<n> s`, else `<n> ms`.
pub fn format_limit(limit: std::time::Duration) -> String {
    let ms = limit.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::time::Duration;

    /// docs/errors.md's table has one row for each cause of the table, with its code and, where
    /// the docs do not show a text that the sign-in builds (`<n>`), its message; and no other row.
    #[test]
    fn docs_errors_md_has_the_rows_of_the_error_table() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/errors.md"));
        let rows: Vec<Vec<&str>> = doc
            .lines()
            .filter(|line| line.starts_with("| `"))
            .map(|line| {
                line.trim_matches('|')
                    .split(" | ")
                    .map(str::trim)
                    .collect::<Vec<_>>()
            })
            .filter(|row| row[0] != "`data.cause`")
            .collect();
        assert_eq!(rows.len(), Cause::ALL.len(), "the rows of docs/errors.md");
        for cause in Cause::ALL {
            let name = format!("`{}`", cause.name());
            let row = rows.iter().find(|row| row[0] == name);
            let row = row.unwrap_or_else(|| panic!("docs/errors.md has no row for {name}"));
            // A code cell with a range (`discover_failed`) is not one number.
            if let Ok(code) = row[1].parse::<i64>() {
                assert_eq!(code, cause.code(), "the code of {name} in docs/errors.md");
            }
            if !row[2].contains('<') {
                assert_eq!(
                    row[2],
                    cause.message(),
                    "the message of {name} in docs/errors.md"
                );
            }
        }
    }

    /// The names are unique and in snake case; every message but one ends with a period.
    #[test]
    fn error_table_names_are_unique_snake_case_and_messages_are_sentences() {
        let mut names = HashSet::new();
        for cause in Cause::ALL {
            assert!(names.insert(cause.name()), "duplicate {}", cause.name());
            assert!(
                cause
                    .name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
            );
            let message = cause.message();
            if cause == Cause::TooManyRequests {
                assert!(!message.ends_with('.'));
            } else {
                assert!(message.ends_with('.'), "{}", cause.name());
            }
        }
    }

    #[test]
    fn error_object_has_cause_and_optional_detail() {
        assert_eq!(
            error_object(Cause::NotInitialized, None),
            json!({"code":-32600,"message":"The client did not initialize the connection. Send initialize first.","data":{"cause":"not_initialized"}})
        );
        assert_eq!(
            error_object(Cause::LineTooLong, Some("limit: 10 bytes"))["data"],
            json!({"cause":"line_too_long","detail":"limit: 10 bytes"})
        );
    }

    #[test]
    fn quirk_upstream_32042_becomes_32603_without_data() {
        let up = json!({"code":-32042,"message":"Needs a URL","data":{"elicitations":[{"url":"https://x"}]}});
        assert_eq!(
            upstream_error(up),
            json!({"code":-32603,"message":"Needs a URL"})
        );
    }

    #[test]
    fn o8_upstream_errors_pass_unchanged() {
        for up in [
            json!({"code":-32601,"message":"Method not found"}),
            json!({"code":-32602,"message":"bad","data":{"uri":"file:///x","extra":[1]}}),
            json!({"code":-32021,"message":"needs roots","data":{"requiredCapabilities":{"roots":{}}}}),
            json!({"code":7,"message":"custom","data":null}),
        ] {
            assert_eq!(upstream_error(up.clone()), up);
        }
    }

    #[test]
    fn upstream_error_without_code_or_message_is_invalid_response() {
        for up in [
            json!({"message":"m"}),
            json!({"code":"x","message":"m"}),
            json!({"code":1}),
            json!(3),
        ] {
            assert_eq!(upstream_error(up)["data"]["cause"], "invalid_response");
        }
    }

    #[test]
    fn r2_discover_failed_keeps_the_upstream_code_and_message_as_detail() {
        let e = discover_failed(
            Some(&json!({"code":-32601,"message":"Method not found"})),
            "x",
        );
        assert_eq!(
            e,
            json!({"code":-32601,"message":Cause::DiscoverFailed.message(),"data":{"cause":"discover_failed","detail":"Method not found"}})
        );
        let e = discover_failed(Some(&json!({"code":-32042,"message":"m"})), "x");
        assert_eq!(e["code"], -32603);
        let e = discover_failed(None, "no response in 60 s");
        assert_eq!(e["code"], -32603);
        assert_eq!(e["data"]["detail"], "no response in 60 s");
    }

    #[test]
    fn time_limits_format_as_seconds_or_milliseconds() {
        assert_eq!(format_limit(Duration::from_secs(3600)), "3600 s");
        assert_eq!(format_limit(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(format_limit(Duration::from_secs(60)), "60 s");
    }
}
