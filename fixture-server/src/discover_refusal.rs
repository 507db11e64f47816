//! `--discover-error E`: the server refuses `server/discover` with the error E, on stdio as a
//! JSON-RPC error and with `--listen` as a 400 whose body is that error, so that the tests
//! of the bridge's era detection (L1, L4) meet each answer that a server of either revision
//! gives: a recognized error of 2026-07-28 (-32020, -32021, -32022 with its `supported`
//! revisions) or a 400 with a page that is no JSON-RPC error at all (`html`, as a proxy sends).

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The answer of `--discover-error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiscoverError {
    /// -32020 `HeaderMismatch` or -32021 `MissingRequiredClientCapability`.
    Modern(i64),
    /// -32022 `UnsupportedProtocolVersion` whose `data.supported` lists these revisions.
    Unsupported(Vec<String>),
    /// 400 with an HTML page (at a URL only).
    Html,
}

/// The page of [`DiscoverError::Html`].
const PAGE: &str = "<html><body><h1>400 Bad Request</h1></body></html>";

/// `-32020`, `-32021`, `-32022:<revision>[,<revision>…]` or `html`.
pub fn parse(text: &str) -> Result<DiscoverError, String> {
    let fail = || {
        format!(
            "--discover-error needs -32020, -32021, -32022:<revision>[,<revision>...] or html, not '{text}'"
        )
    };
    match text {
        "-32020" => Ok(DiscoverError::Modern(-32020)),
        "-32021" => Ok(DiscoverError::Modern(-32021)),
        "html" => Ok(DiscoverError::Html),
        _ => {
            let list = text.strip_prefix("-32022:").ok_or_else(fail)?;
            let revisions: Vec<String> = list.split(',').map(str::to_owned).collect();
            if revisions.iter().any(String::is_empty) {
                return Err(fail());
            }
            Ok(DiscoverError::Unsupported(revisions))
        }
    }
}

impl DiscoverError {
    /// The JSON-RPC error object; `None` for the HTML page.
    pub fn error(&self) -> Option<Value> {
        match self {
            DiscoverError::Modern(-32020) => Some(json!({
                "code": -32020,
                "message": "Header mismatch: MCP-Protocol-Version does not match the body"
            })),
            DiscoverError::Modern(code) => Some(json!({
                "code": code,
                "message": "Missing required client capability",
                "data": {"requiredCapabilities": {"elicitation": {}}}
            })),
            DiscoverError::Unsupported(supported) => Some(json!({
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": supported, "requested": "2026-07-28"}
            })),
            DiscoverError::Html => None,
        }
    }

    /// The 400 of the HTTP mode to the `server/discover` request of `id`.
    pub fn response(&self, id: Value) -> Response {
        match self.error() {
            Some(error) => {
                let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
                (
                    StatusCode::BAD_REQUEST,
                    [(header::CONTENT_TYPE, "application/json")],
                    body.to_string(),
                )
                    .into_response()
            }
            None => (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "text/html")],
                Body::from(PAGE),
            )
                .into_response(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_is_read_and_a_bad_one_is_named() {
        assert_eq!(parse("-32020"), Ok(DiscoverError::Modern(-32020)));
        assert_eq!(parse("-32021"), Ok(DiscoverError::Modern(-32021)));
        assert_eq!(parse("html"), Ok(DiscoverError::Html));
        assert_eq!(
            parse("-32022:2025-11-25,1999-01-01"),
            Ok(DiscoverError::Unsupported(vec![
                "2025-11-25".into(),
                "1999-01-01".into()
            ]))
        );
        for bad in ["-32022", "-32022:", "-32022:a,,b", "-32000", ""] {
            assert!(
                parse(bad).is_err_and(|e| e.contains("--discover-error")),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_errors_carry_their_codes_and_the_supported_revisions() {
        let unsupported = DiscoverError::Unsupported(vec!["2025-11-25".into()]);
        let error = unsupported.error().expect("an error");
        assert_eq!(error["code"], -32022);
        assert_eq!(error["data"]["supported"], json!(["2025-11-25"]));
        assert_eq!(
            DiscoverError::Modern(-32021).error().expect("an error")["code"],
            -32021
        );
        assert!(DiscoverError::Html.error().is_none());
    }
}
