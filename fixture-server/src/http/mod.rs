//! The HTTP mode (`--listen <ip>:<port>`): the fixture over Streamable HTTP of revision
//! 2026-07-28 at `/mcp`, with TLS from the embedded test PKI unless `--plain-http`.
//!
//! The MCP side is rmcp's `StreamableHttpService` in its stateless mode, which serves
//! 2026-07-28 per request: the same `ServerHandler` ([`Fixture`]) and the same [`State`] as on
//! stdio, one handler for both transports. rmcp checks the `_meta` envelope, the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers against the body (400, -32020),
//! the body limit (413), answers a notification with 202, and cancels a request whose response
//! stream the client closes. [`gate`] adds what is the fixture's own: POST only, the bearer
//! token, the listen statuses. With `--oauth`, [`crate::oauth`] checks the access token of
//! `/mcp` after the gate and serves the authorization server's endpoints beside `/mcp`.
mod gate;
mod older;
mod sse;
mod tls;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum_server::accept::NoDelayAcceptor;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::cli::Options;
use crate::log;
use crate::oauth;
use crate::revision::Revision;
use crate::server::Fixture;
use crate::state::State;

/// The path of the MCP endpoint.
pub const PATH: &str = "/mcp";
/// The interval of the SSE comment lines that keep a quiet stream open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long the stop waits for the responses in flight.
const STOP_WAIT: Duration = Duration::from_secs(1);
/// The test CA, for `--browse`.
pub const CA_PEM: &str = tls::CA_CRT;

/// The token of `--bearer-env VAR`: an unset or empty variable is an argument error (exit 2).
pub fn bearer_token(options: &Options) -> Result<Option<String>, String> {
    let Some(var) = &options.bearer_env else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(token) if !token.is_empty() => Ok(Some(token)),
        _ => Err(format!(
            "--bearer-env names the variable {var}, which is not set or empty"
        )),
    }
}

/// Serves until SIGINT or SIGTERM (or the tools `crash` and `shutdown`).
pub async fn serve(
    options: Options,
    bearer: Option<String>,
    revision: Revision,
) -> Result<(), String> {
    let address = options
        .listen
        .ok_or_else(|| "the HTTP mode needs --listen".to_string())?;
    let listener = std::net::TcpListener::bind(address)
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the address of the listener: {e}"))?;
    let tls = if options.plain_http {
        None
    } else {
        Some(tls::config(options.untrusted)?)
    };
    let stop = CancellationToken::new();
    let state = Arc::new(State::new(options.clone()));
    let app = router(&options, local, bearer, Arc::clone(&state), &stop, revision)?;
    let handle = axum_server::Handle::new();
    // TCP_NODELAY, as servers set it: an event stream writes its head and each event apart,
    // and with Nagle's algorithm each small write after the first waits for the client's
    // delayed ACK (about 40 ms a response of the sessions of --revision 2025-11-25).
    let server = match tls {
        Some(config) => {
            let config = axum_server::tls_rustls::RustlsConfig::from_config(config);
            let server = axum_server::from_tcp_rustls(listener, config)
                .map_err(|e| format!("cannot serve on {local}: {e}"))?
                .map(|tls| tls.acceptor(NoDelayAcceptor::new()))
                .handle(handle.clone());
            tokio::spawn(server.serve(app.into_make_service()))
        }
        None => {
            let server = axum_server::from_tcp(listener)
                .map_err(|e| format!("cannot serve on {local}: {e}"))?
                .acceptor(NoDelayAcceptor::new())
                .handle(handle.clone());
            tokio::spawn(server.serve(app.into_make_service()))
        }
    };
    announce(&url(&options, local))?;
    let mut server = server;
    tokio::select! {
        outcome = &mut server => return ended(local, outcome),
        () = signalled() => {}
    }
    // The listen streams end with their result and the work in flight stops (as at the end
    // of stdin); the connections get STOP_WAIT to finish, then rmcp's streams are cut.
    log::info("http", "stopping: the listen streams end with their result");
    state.lifecycle.input_ended();
    handle.graceful_shutdown(Some(STOP_WAIT));
    let outcome = tokio::time::timeout(STOP_WAIT * 2, &mut server).await;
    stop.cancel();
    match outcome {
        Ok(outcome) => ended(local, outcome),
        Err(_) => Ok(()),
    }
}

fn ended(
    local: SocketAddr,
    outcome: Result<std::io::Result<()>, tokio::task::JoinError>,
) -> Result<(), String> {
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("the server on {local} failed: {e}")),
        Err(e) => Err(format!("the server on {local} stopped: {e}")),
    }
}

/// `https://<ip>:<port>/mcp` (or `http://`), `[::1]` in brackets.
fn url(options: &Options, local: SocketAddr) -> String {
    format!("{}{PATH}", origin(options, local))
}

/// `https://<ip>:<port>` (or `http://`): also the issuer of `--oauth`.
fn origin(options: &Options, local: SocketAddr) -> String {
    let scheme = if options.plain_http { "http" } else { "https" };
    format!("{scheme}://{local}")
}

/// The first stdout line, flushed: the tests read the URL from it.
fn announce(url: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(format!("listening {url}\n").as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write the listening line: {e}"))
}

fn router(
    options: &Options,
    local: SocketAddr,
    bearer: Option<String>,
    state: Arc<State>,
    stop: &CancellationToken,
    revision: Revision,
) -> Result<Router, String> {
    let hosts = [
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "fixture.test".to_string(),
        local.ip().to_string(),
    ];
    let older = revision == Revision::Older;
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(!options.always_sse && !older)
        .with_max_request_body_bytes(gate::MAX_BODY_BYTES)
        .with_allowed_hosts(hosts)
        .with_stateless_protocol_metadata_required(true)
        .with_sse_keep_alive(Some(KEEP_ALIVE))
        .with_cancellation_token(stop.child_token());
    let mut hooks = None;
    let mut router = if older {
        let (mcp, sessions) = older::service(options, config);
        hooks = Some(older::expire_route(sessions));
        // The 2024-11-05 transport beside /mcp, behind the same gate and token check.
        Router::new()
            .route_service(PATH, mcp)
            .merge(sse::routes(options))
    } else {
        let mcp = StreamableHttpService::new(
            move || Ok(Fixture::new(Arc::clone(&state))),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let mut router = Router::new().route_service(PATH, mcp.clone());
        if options.oauth {
            // The tenants of the authorization server: the same MCP server, each its own
            // protected resource (oauth/tenants.rs).
            for tenant in oauth::TENANTS {
                router = router.route_service(tenant, mcp.clone());
            }
        }
        router
    };
    let gate = Arc::new(gate::Gate {
        bearer,
        header_sha256: options.header_sha256.clone(),
        listen_status: options.listen_status.and_then(|(code, count)| {
            StatusCode::from_u16(code)
                .ok()
                .map(|status| (status, AtomicU32::new(count)))
        }),
        older,
        discover_error: options.discover_error.clone(),
    });
    let auth = if options.oauth {
        let config = oauth::Config::of(options, tls::CA_CRT);
        let server = oauth::AuthServer::new(origin(options, local), url(options, local), config)?;
        Some(Arc::new(server))
    } else {
        None
    };
    if let Some(auth) = &auth {
        router = router.route_layer(from_fn_with_state(Arc::clone(auth), oauth::guard));
    }
    router = router.route_layer(from_fn_with_state(gate, gate::check));
    if let Some(auth) = auth {
        router = router.merge(oauth::routes(auth));
    }
    if let Some(hooks) = hooks {
        router = router.merge(hooks);
    }
    Ok(
        router
            .fallback(|| async { (StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp") }),
    )
}

/// SIGINT, or SIGTERM on POSIX.
async fn signalled() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
