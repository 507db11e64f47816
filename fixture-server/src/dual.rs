//! `--revision dual`: a server of both eras on stdio that locks its connection to the era of
//! the first request, as the SDKs of revision 2026-07-28 do (the Python SDK 2.x `MCPServer`,
//! the TypeScript SDK v2 `serveStdio`, FastMCP 4; docs/fixture.md). A first `initialize`
//! locks 2025-11-25: the session is the older fixture's, and a later `server/discover` gets
//! -32601, the answer of an older server. Any other first request locks 2026-07-28: the
//! session is the modern fixture's, and a later `initialize` gets -32022 with
//! `data.supported`, which is what makes a Copilot runtime that sends `initialize` after its
//! discover window fail against such a server.
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorCode, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use serde_json::json;

/// The era that a connection is locked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// 2026-07-28: the first request was not `initialize`.
    Modern,
    /// 2025-11-25: the first request was `initialize`.
    Older,
}

/// The era of the connection whose first request is `first` (`None`: stdin ended first).
pub fn lock(first: Option<&RxJsonRpcMessage<RoleServer>>) -> Lock {
    match first {
        Some(JsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::InitializeRequest(_)) =>
        {
            Lock::Older
        }
        _ => Lock::Modern,
    }
}

/// The answer of a connection locked to 2026-07-28 to a later `initialize`: -32022, the
/// revision that the client asked for and the one the connection serves.
pub fn refuse_initialize(message: &RxJsonRpcMessage<RoleServer>) -> Option<ServerJsonRpcMessage> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::InitializeRequest(initialize) = &request.request else {
        return None;
    };
    let requested = initialize.params.protocol_version.to_string();
    let error = McpError::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "the connection is serving the 2026-07-28 protocol",
        Some(json!({"requested": requested, "supported": ["2026-07-28"]})),
    );
    Some(ServerJsonRpcMessage::error(error, Some(request.id.clone())))
}
