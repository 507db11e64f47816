//! `harness http-client --ca-file <pem> <url>`: the harness's own client of a server at a URL
//! (Streamable HTTP of 2026-07-28), as a pipe, so that a transcript that checks a server
//! directly (`"direct": true` with the `https` upstream) drives it with the same steps as on
//! stdio. Each stdin line is one JSON-RPC message, POSTed with the headers of the revision
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`); each message of the answer (a JSON body,
//! or each `data:` event of an SSE body, a listen stream's too) becomes one stdout line. Requests
//! run side by side, as the runtime's do, so a held listen stream never blocks a call. An HTTP
//! status without a JSON-RPC body, a failed POST, and an event stream that breaks or ends
//! without the response each become an error response naming the cause, so that every request
//! gets exactly one answer. The end of stdin ends the client (exit 0).
use std::sync::Arc;

use base64::Engine;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The revision whose headers the client sends.
const REVISION: &str = "2026-07-28";

/// Runs the pipe; the exit code.
pub async fn run(argv: &[String]) -> i32 {
    let (ca, url) = match argv {
        [flag, ca, url] if flag == "--ca-file" => (ca, url),
        _ => {
            eprintln!("harness http-client: usage: --ca-file <pem> <url>");
            return 2;
        }
    };
    let client = match client(ca) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("harness http-client: {e}");
            return 2;
        }
    };
    let out = Arc::new(Mutex::new(tokio::io::stdout()));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut running = tokio::task::JoinSet::new();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            eprintln!("harness http-client: a line that is not JSON, not sent");
            continue;
        };
        running.spawn(post(client.clone(), url.clone(), message, out.clone()));
    }
    // The client goes away: the open streams (a listen stream) end with it.
    running.abort_all();
    0
}

fn client(ca: &str) -> Result<reqwest::Client, String> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let pem = std::fs::read(ca).map_err(|e| format!("cannot read the CA file: {e}"))?;
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    for cert in reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("the CA file is not PEM certificates: {e}"))?
    {
        builder = builder.add_root_certificate(cert);
    }
    builder.build().map_err(|e| format!("no HTTP client: {e}"))
}

/// The `Mcp-Name` of a request that names a tool, a prompt or a resource: the name as it is
/// when it is a visible ASCII header value, else its `=?base64?…?=` form.
fn mcp_name(message: &Value) -> Option<String> {
    let params = message.get("params")?;
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)?;
    let plain = name.bytes().all(|b| (0x20..0x7f).contains(&b)) && name.trim() == name;
    Some(if plain {
        name.to_string()
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(name);
        format!("=?base64?{b64}?=")
    })
}

async fn post(
    client: reqwest::Client,
    url: String,
    message: Value,
    out: Arc<Mutex<tokio::io::Stdout>>,
) {
    let id = message.get("id").cloned();
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut request = client
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", REVISION)
        .header("Mcp-Method", &method);
    if matches!(
        method.as_str(),
        "tools/call" | "prompts/get" | "resources/read"
    ) && let Some(name) = mcp_name(&message)
    {
        request = request.header("Mcp-Name", name);
    }
    let response = match request.body(message.to_string()).send().await {
        Ok(r) => r,
        Err(e) => return failed(id, format!("the POST of {method} failed: {e}"), &out).await,
    };
    let status = response.status();
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if sse {
        let mut events = sse_stream::SseByteStream::new(response.bytes_stream());
        let mut answered = false;
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    if let Some(data) = event.data {
                        answered |= answers(&data, id.as_ref());
                        write(&out, &data).await;
                    }
                }
                Err(e) => {
                    let why = format!("the event stream of {method} broke: {e}");
                    return failed(id, why, &out).await;
                }
            }
        }
        if !answered {
            let why = format!("the event stream of {method} ended without its response");
            failed(id, why, &out).await;
        }
        return;
    }
    let body = response.bytes().await.unwrap_or_default();
    match serde_json::from_slice::<Value>(&body) {
        // A JSON-RPC answer, whatever the status (400 with -32020, 404 with -32601).
        Ok(v) if v.get("jsonrpc").is_some() => write(&out, &v.to_string()).await,
        _ if status.is_success() && body.is_empty() => {}
        _ => failed(id, format!("HTTP status {status} to {method}"), &out).await,
    }
}

/// Whether the event `data` is the response to the request `id`.
fn answers(data: &str, id: Option<&Value>) -> bool {
    let Some(id) = id else { return false };
    serde_json::from_str::<Value>(data).is_ok_and(|v| {
        v.get("id") == Some(id) && (v.get("result").is_some() || v.get("error").is_some())
    })
}

/// An answer that the server did not give as JSON-RPC: an error response to a request (a
/// notification gets none; the cause goes to stderr).
async fn failed(id: Option<Value>, message: String, out: &Mutex<tokio::io::Stdout>) {
    eprintln!("harness http-client: {message}");
    if let Some(id) = id {
        let frame = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":message}});
        write(out, &frame.to_string()).await;
    }
}

async fn write(out: &Mutex<tokio::io::Stdout>, line: &str) {
    let mut out = out.lock().await;
    let ok = out.write_all(format!("{line}\n").as_bytes()).await.is_ok();
    if !ok || out.flush().await.is_err() {
        eprintln!("harness http-client: stdout is closed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_response_to_the_request_answers_it() {
        let id = json!(4);
        assert!(answers(
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            Some(&id)
        ));
        assert!(answers(
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m"}}"#,
            Some(&id)
        ));
        assert!(!answers(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            Some(&id)
        ));
        assert!(!answers(
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
            Some(&id)
        ));
        // A request of the server with the same id is not the answer.
        assert!(!answers(
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            Some(&id)
        ));
        assert!(!answers(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#, None));
    }

    #[test]
    fn names_in_ascii_go_as_they_are_and_others_in_base64() {
        let m = json!({"method":"tools/call","params":{"name":"echo"}});
        assert_eq!(mcp_name(&m).as_deref(), Some("echo"));
        let m = json!({"method":"tools/call","params":{"name":"grüß"}});
        assert_eq!(mcp_name(&m).as_deref(), Some("=?base64?Z3LDvMOf?="));
    }
}
