//! The one error table (docs/architecture.md principle 6): every error that the bridge makes has a cause,
//! a JSON-RPC code, a fixed message and `data.cause`. Upstream JSON-RPC errors pass unchanged,
//! except -32042 (quirk of M1: VS Code opens every URL in its data).
//!
//! docs/errors.md lists every cause with its code and text (a test keeps them equal).

use serde_json::{Map, Value, json};

/// A cause of an error of the bridge. The snake-case name goes into `data.cause`.
// Every cause of the table of the docs (a test keeps them equal), also those that no path
// produces yet.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    Rpc,
    Canceled,
    Timeout,
    Closed,
    TransportFailed,
    InvalidResponse,
    TooManyRounds,
    OutOfMemory,
    UndeclaredInputRequest,
    HookFailed,
    NotConnected,
    TaskCancelled,
    InvalidRequest,
    InvalidMeta,
    SpawnFailed,
    DiscoverFailed,
    UpstreamExited,
    NotInitialized,
    AlreadyInitialized,
    TooManyRequests,
    LineTooLong,
    TooDeep,
    ParseError,
    InvalidRequestShape,
    MethodNotFound,
    InvalidParams,
    InvalidInputRequest,
    TooManyInputRequests,
    InputTimeout,
    InvalidClientAnswer,
    SignInTimeout,
    ReauthorizationRequired,
    RegistrationUnavailable,
    RegistrationRefused,
    IssuerNotRegistered,
    RedirectPortUnavailable,
    InvalidAuthorizationUrl,
    SignInDenied,
    AuthorizationError,
    Forbidden,
    Sandbox,
    SignInFailed,
    SignInStartReused,
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

impl Cause {
    /// Every cause, in table order (for the exhaustive tests and the README).
    #[cfg(test)]
    pub const ALL: [Cause; 43] = [
        Cause::Rpc,
        Cause::Canceled,
        Cause::Timeout,
        Cause::Closed,
        Cause::TransportFailed,
        Cause::InvalidResponse,
        Cause::TooManyRounds,
        Cause::OutOfMemory,
        Cause::UndeclaredInputRequest,
        Cause::HookFailed,
        Cause::NotConnected,
        Cause::TaskCancelled,
        Cause::InvalidRequest,
        Cause::InvalidMeta,
        Cause::SpawnFailed,
        Cause::DiscoverFailed,
        Cause::UpstreamExited,
        Cause::NotInitialized,
        Cause::AlreadyInitialized,
        Cause::TooManyRequests,
        Cause::LineTooLong,
        Cause::TooDeep,
        Cause::ParseError,
        Cause::InvalidRequestShape,
        Cause::MethodNotFound,
        Cause::InvalidParams,
        Cause::InvalidInputRequest,
        Cause::TooManyInputRequests,
        Cause::InputTimeout,
        Cause::InvalidClientAnswer,
        Cause::SignInTimeout,
        Cause::ReauthorizationRequired,
        Cause::RegistrationUnavailable,
        Cause::RegistrationRefused,
        Cause::IssuerNotRegistered,
        Cause::RedirectPortUnavailable,
        Cause::InvalidAuthorizationUrl,
        Cause::SignInDenied,
        Cause::AuthorizationError,
        Cause::Forbidden,
        Cause::Sandbox,
        Cause::SignInFailed,
        Cause::SignInStartReused,
    ];

    /// The name in `data.cause`.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Rpc => "rpc",
            Cause::Canceled => "canceled",
            Cause::Timeout => "timeout",
            Cause::Closed => "closed",
            Cause::TransportFailed => "transport_failed",
            Cause::InvalidResponse => "invalid_response",
            Cause::TooManyRounds => "too_many_rounds",
            Cause::OutOfMemory => "out_of_memory",
            Cause::UndeclaredInputRequest => "undeclared_input_request",
            Cause::HookFailed => "hook_failed",
            Cause::NotConnected => "not_connected",
            Cause::TaskCancelled => "task_cancelled",
            Cause::InvalidRequest => "invalid_request",
            Cause::InvalidMeta => "invalid_meta",
            Cause::SpawnFailed => "spawn_failed",
            Cause::DiscoverFailed => "discover_failed",
            Cause::UpstreamExited => "upstream_exited",
            Cause::NotInitialized => "not_initialized",
            Cause::AlreadyInitialized => "already_initialized",
            Cause::TooManyRequests => "too_many_requests",
            Cause::LineTooLong => "line_too_long",
            Cause::TooDeep => "too_deep",
            Cause::ParseError => "parse_error",
            Cause::InvalidRequestShape => "invalid_request_shape",
            Cause::MethodNotFound => "method_not_found",
            Cause::InvalidParams => "invalid_params",
            Cause::InvalidInputRequest => "invalid_input_request",
            Cause::TooManyInputRequests => "too_many_input_requests",
            Cause::InputTimeout => "input_timeout",
            Cause::InvalidClientAnswer => "invalid_client_answer",
            Cause::SignInTimeout => "sign_in_timeout",
            Cause::ReauthorizationRequired => "reauthorization_required",
            Cause::RegistrationUnavailable => "registration_unavailable",
            Cause::RegistrationRefused => "registration_refused",
            Cause::IssuerNotRegistered => "issuer_not_registered",
            Cause::RedirectPortUnavailable => "redirect_port_unavailable",
            Cause::InvalidAuthorizationUrl => "invalid_authorization_url",
            Cause::SignInDenied => "sign_in_denied",
            Cause::AuthorizationError => "authorization_error",
            Cause::Forbidden => "forbidden",
            Cause::Sandbox => "sandbox",
            Cause::SignInFailed => "sign_in_failed",
            Cause::SignInStartReused => "sign_in_start_reused",
        }
    }

    /// The JSON-RPC code of the cause.
    pub fn code(self) -> i64 {
        match self {
            Cause::ParseError => code::PARSE_ERROR,
            Cause::NotInitialized
            | Cause::AlreadyInitialized
            | Cause::LineTooLong
            | Cause::TooDeep
            | Cause::InvalidRequestShape => code::INVALID_REQUEST,
            Cause::MethodNotFound => code::METHOD_NOT_FOUND,
            Cause::InvalidParams | Cause::InvalidRequest | Cause::InvalidMeta => {
                code::INVALID_PARAMS
            }
            _ => code::INTERNAL_ERROR,
        }
    }

    /// The fixed message of the cause.
    pub fn message(self) -> &'static str {
        match self {
            Cause::Rpc => {
                "The upstream server sent an error. See the Output channel of the server."
            }
            Cause::Canceled => "The client canceled the request.",
            Cause::Timeout => {
                "The upstream server did not answer in time. See the Output channel of the server."
            }
            Cause::Closed => {
                "The upstream server process stopped. See the Output channel of the server."
            }
            Cause::TransportFailed => {
                "The connection to the upstream server failed. See the Output channel of the server."
            }
            Cause::InvalidResponse => {
                "The upstream server sent a response that is not valid. See the Output channel of the server."
            }
            Cause::TooManyRounds => {
                "The upstream server asked for input too many times. See the Output channel of the server."
            }
            Cause::OutOfMemory => "The bridge does not have sufficient memory for the request.",
            Cause::UndeclaredInputRequest => {
                "The upstream server asked for input that the client did not declare."
            }
            Cause::HookFailed => {
                "The bridge cannot give the input that the upstream server asked for."
            }
            Cause::NotConnected => {
                "The bridge has no connection to the upstream server. See the Output channel of the server."
            }
            Cause::TaskCancelled => "The upstream server canceled the task of the request.",
            Cause::InvalidRequest => {
                "The bridge cannot send the parameters of the request to the upstream server."
            }
            Cause::InvalidMeta => {
                "The request has a _meta key that the bridge cannot send to the upstream server."
            }
            Cause::SpawnFailed => {
                "The bridge cannot start the upstream server. Examine the command in the configuration of the server. See the Output channel of the server."
            }
            Cause::DiscoverFailed => {
                "The upstream server did not answer server/discover. It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server."
            }
            Cause::UpstreamExited => {
                "The upstream server process stopped. See the Output channel of the server."
            }
            Cause::NotInitialized => {
                "The client did not initialize the connection. Send initialize first."
            }
            Cause::AlreadyInitialized => "The client already sent initialize on this connection.",
            // The text VS Code users know from stdio servers: the only message without a final
            // period (docs/errors.md).
            Cause::TooManyRequests => "The connection has too many requests in flight",
            Cause::LineTooLong => "The request is longer than the line limit of the bridge.",
            Cause::TooDeep => {
                "The request has more levels of nesting than the limit of the bridge."
            }
            Cause::ParseError => "The request is not valid JSON.",
            Cause::InvalidRequestShape => "The message is not a valid JSON-RPC 2.0 request.",
            Cause::MethodNotFound => "The server does not have this method.",
            Cause::InvalidParams => "The parameters of the request are not valid.",
            Cause::InvalidInputRequest => {
                "The upstream server sent an input request that is not valid for the client. See the Output channel of the server."
            }
            Cause::TooManyInputRequests => {
                "The upstream server asked for more inputs at one time than the limit of the bridge."
            }
            Cause::InputTimeout => {
                "The client did not answer the input request of the upstream server in time."
            }
            Cause::InvalidClientAnswer => {
                "The client sent an answer that is not valid for the input request of the upstream server."
            }
            Cause::SignInTimeout => {
                "The sign-in did not complete in time. Open the URL of the sign-in line in the Output channel and sign in within --sign-in-timeout. When the sign-in page shows an error, run \"mcp-bridge-vscode logout <url>\" and restart the server."
            }
            Cause::ReauthorizationRequired => {
                "The upstream server needs a new sign-in, and the client did not open the URL of the sign-in. Restart the server to sign in again."
            }
            Cause::RegistrationUnavailable => {
                "The authorization server has no client registration that the bridge can use. Register a client with the redirect URI of the bridge at the authorization server, and give its ID with --client-id and --client-issuer."
            }
            Cause::RegistrationRefused => {
                "The authorization server refused the registration of the client. See the Output channel of the server."
            }
            Cause::IssuerNotRegistered => {
                "The client ID of --client-id is not for the authorization server of the upstream server. Examine --client-id and --client-issuer."
            }
            Cause::RedirectPortUnavailable => {
                "The bridge cannot listen on the redirect port of the sign-in. Stop the program on that port, or set a different port with --redirect-port."
            }
            Cause::InvalidAuthorizationUrl => {
                "The authorization server sent an authorization URL that is not valid. The bridge did not open it."
            }
            Cause::SignInDenied => "The authorization server refused the access.",
            Cause::AuthorizationError => {
                "The authorization server sent an error for the sign-in. See the Output channel of the server."
            }
            Cause::Forbidden => {
                "The upstream server refused the access after the sign-in. The account of the sign-in possibly has no access; use a different account with --account."
            }
            Cause::Sandbox => {
                "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. Disable the sandbox for this server."
            }
            Cause::SignInFailed => {
                "The sign-in at the authorization server of the upstream server failed. See the Output channel of the server."
            }
            Cause::SignInStartReused => {
                "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Another program on the host of the bridge possibly opened the URL. Restart the server to sign in again. When this occurs again on a host that other users share, use --no-browser."
            }
        }
    }

    /// A canceled request never gets a response.
    #[cfg(test)]
    pub fn has_response(self) -> bool {
        self != Cause::Canceled
    }
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

    /// docs/errors.md's table has a row for every cause, with its code.
    #[test]
    fn docs_errors_md_lists_every_cause() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/errors.md"));
        for cause in Cause::ALL {
            let start = format!("| `{}` | ", cause.name());
            let row = doc.lines().find(|line| line.starts_with(&start));
            let row =
                row.unwrap_or_else(|| panic!("docs/errors.md has no row for {}", cause.name()));
            // A code cell with a range (`discover_failed`) is not one number.
            let code = row[start.len()..].split(" | ").next().unwrap_or_default();
            if let Ok(code) = code.parse::<i64>() {
                assert_eq!(
                    code,
                    cause.code(),
                    "the code of {} in docs/errors.md",
                    cause.name()
                );
            }
        }
    }

    #[test]
    fn error_table_names_are_unique_snake_case_and_codes_follow_the_groups() {
        let mut names = HashSet::new();
        for cause in Cause::ALL {
            assert!(names.insert(cause.name()), "duplicate {}", cause.name());
            assert!(
                cause
                    .name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
            );
            let expected = match cause.name() {
                "parse_error" => -32700,
                "not_initialized"
                | "already_initialized"
                | "line_too_long"
                | "too_deep"
                | "invalid_request_shape" => -32600,
                "method_not_found" => -32601,
                "invalid_params" | "invalid_request" | "invalid_meta" => -32602,
                _ => -32603,
            };
            assert_eq!(cause.code(), expected, "{}", cause.name());
            let message = cause.message();
            if cause == Cause::TooManyRequests {
                assert!(!message.ends_with('.'));
            } else {
                assert!(message.ends_with('.'), "{}", cause.name());
            }
        }
        assert_eq!(names.len(), 43);
    }

    #[test]
    fn error_table_only_canceled_has_no_response() {
        for cause in Cause::ALL {
            assert_eq!(cause.has_response(), cause != Cause::Canceled);
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
