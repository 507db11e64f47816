//! A small HTTP CONNECT proxy for the tests of the URL form (`HTTPS_PROXY`, `ALL_PROXY`,
//! `NO_PROXY`).
//!
//! - Listens on 127.0.0.1, on a free port; runs on its own thread and runtime, so that both the
//!   synchronous process tests and `#[tokio::test]`s can use it. Dropping the [`Proxy`] stops
//!   it and closes its tunnels.
//! - Accepts `CONNECT host:port` only. It resolves the names itself: `fixture.test`,
//!   `localhost` and `*.localhost` are 127.0.0.1; an IP literal is itself; any other name is
//!   refused with 502 without asking DNS (the tests never need one). A target that is not a
//!   loopback address after that is refused with 403. So the client never resolves
//!   `fixture.test`, and the proxy never reaches beyond the machine.
//! - Optionally requires `Proxy-Authorization: Basic <base64 of user:pass>` (407 with
//!   `Proxy-Authenticate: Basic realm="test-proxy"` otherwise), to test the credentials of a
//!   proxy URL.
//! - Counts the tunnels it opened and records the `CONNECT` target of each request, as the
//!   client wrote it (`fixture.test:40123`).
//!
//! ```ignore
//! let proxy = Proxy::start();                          // or Proxy::with_credentials("u", "p")
//! let env = [("HTTPS_PROXY", proxy.url().as_str())];   // proxy.url_with_credentials("u", "p")
//! // … the bridge reaches https://fixture.test:<port>/mcp …
//! assert_eq!(proxy.tunnels(), 1);
//! assert_eq!(proxy.targets(), [format!("fixture.test:{port}")]);
//! ```
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// The name that the proxy resolves to 127.0.0.1 itself (the SAN of the test certificates).
pub const FIXTURE_HOST: &str = "fixture.test";
/// The bound of the head of a `CONNECT` request.
const MAX_HEAD: usize = 8 * 1024;
/// The realm of the 407 answer.
const REALM: &str = "test-proxy";

/// What the proxy saw, shared with its thread.
#[derive(Default)]
struct Seen {
    tunnels: AtomicUsize,
    refused: AtomicUsize,
    targets: Mutex<Vec<String>>,
}

/// A running CONNECT proxy. Stops when dropped.
pub struct Proxy {
    address: SocketAddr,
    seen: Arc<Seen>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Proxy {
    /// A proxy without credentials.
    pub fn start() -> Proxy {
        Self::spawn(None)
    }

    /// A proxy that requires `Proxy-Authorization: Basic <base64 of user:pass>`.
    pub fn with_credentials(user: &str, password: &str) -> Proxy {
        Self::spawn(Some(format!(
            "Basic {}",
            base64(format!("{user}:{password}").as_bytes())
        )))
    }

    fn spawn(authorization: Option<String>) -> Proxy {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("proxy bind");
        listener
            .set_nonblocking(true)
            .expect("proxy listener nonblocking");
        let address = listener.local_addr().expect("proxy address");
        let seen = Arc::new(Seen::default());
        let (stop, stopped) = oneshot::channel();
        let shared = Arc::clone(&seen);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("proxy runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("proxy listener");
                serve(listener, shared, authorization.map(Arc::from), stopped).await;
            });
            // Dropping the runtime here drops the tunnels still open.
        });
        Proxy {
            address,
            seen,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The address the proxy listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The proxy URL for `HTTPS_PROXY` / `ALL_PROXY`: `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The proxy URL with credentials: `http://user:password@127.0.0.1:<port>` (the two are
    /// written as given: use characters that need no percent-encoding).
    pub fn url_with_credentials(&self, user: &str, password: &str) -> String {
        format!("http://{user}:{password}@{}", self.address)
    }

    /// The number of tunnels opened so far (each counted before its `200` is written, so a
    /// client that has read the `200` sees it counted).
    pub fn tunnels(&self) -> usize {
        self.seen.tunnels.load(Ordering::SeqCst)
    }

    /// The number of requests refused so far (400, 403, 405, 407, 502).
    pub fn refused(&self) -> usize {
        self.seen.refused.load(Ordering::SeqCst)
    }

    /// The target of each `CONNECT` request so far, as the client wrote it, refused ones too.
    pub fn targets(&self) -> Vec<String> {
        self.seen
            .targets
            .lock()
            .map(|targets| targets.clone())
            .unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: TcpListener,
    seen: Arc<Seen>,
    authorization: Option<Arc<str>>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                tokio::spawn(connection(client, Arc::clone(&seen), authorization.clone()));
            }
        }
    }
}

/// An answer that refuses the request and closes the connection.
fn refusal(status: &str, extra: &str) -> String {
    format!("HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n")
}

async fn connection(mut client: TcpStream, seen: Arc<Seen>, authorization: Option<Arc<str>>) {
    let Some((head, rest)) = read_head(&mut client).await else {
        seen.refused.fetch_add(1, Ordering::SeqCst);
        let _ = client
            .write_all(refusal("400 Bad Request", "").as_bytes())
            .await;
        return;
    };
    let answer = match route(&head, authorization.as_deref(), &seen) {
        Ok(target) => match TcpStream::connect(target).await {
            Ok(mut upstream) => {
                seen.tunnels.fetch_add(1, Ordering::SeqCst);
                if client
                    .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                    .await
                    .is_err()
                    || upstream.write_all(&rest).await.is_err()
                {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                return;
            }
            Err(_) => refusal("502 Bad Gateway", ""),
        },
        Err(answer) => answer,
    };
    seen.refused.fetch_add(1, Ordering::SeqCst);
    let _ = client.write_all(answer.as_bytes()).await;
}

/// Reads the request head up to the empty line; gives it and the bytes read after it.
async fn read_head(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8(buffer[..end].to_vec()).ok()?;
            return Some((head, buffer[end + 4..].to_vec()));
        }
        if buffer.len() > MAX_HEAD {
            return None;
        }
        let n = client.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// The address to tunnel to, or the refusal to write.
fn route(head: &str, authorization: Option<&str>, seen: &Seen) -> Result<SocketAddr, String> {
    let mut lines = head.split("\r\n");
    let mut request = lines.next().unwrap_or_default().split(' ');
    let (method, target, version) = (request.next(), request.next(), request.next());
    let (Some(method), Some(target), Some(version)) = (method, target, version) else {
        return Err(refusal("400 Bad Request", ""));
    };
    if !version.starts_with("HTTP/1.") || request.next().is_some() {
        return Err(refusal("400 Bad Request", ""));
    }
    if method != "CONNECT" {
        return Err(refusal("405 Method Not Allowed", "Allow: CONNECT\r\n"));
    }
    if let Ok(mut targets) = seen.targets.lock() {
        targets.push(target.to_owned());
    }
    if let Some(expected) = authorization {
        let given = lines
            .filter_map(|line| line.split_once(':'))
            .find_map(|(name, value)| {
                name.trim()
                    .eq_ignore_ascii_case("proxy-authorization")
                    .then(|| value.trim())
            });
        let accepted = given.is_some_and(|given| {
            let mut parts = given.splitn(2, ' ');
            let scheme = parts.next().unwrap_or_default();
            let credentials = parts.next().unwrap_or_default().trim();
            let mut wanted = expected.splitn(2, ' ');
            scheme.eq_ignore_ascii_case(wanted.next().unwrap_or_default())
                && Some(credentials) == wanted.next()
        });
        if !accepted {
            return Err(refusal(
                "407 Proxy Authentication Required",
                &format!("Proxy-Authenticate: Basic realm=\"{REALM}\"\r\n"),
            ));
        }
    }
    let (host, port) = split_authority(target).ok_or_else(|| refusal("400 Bad Request", ""))?;
    let ip = resolve(host).ok_or_else(|| refusal("502 Bad Gateway", ""))?;
    if !ip.is_loopback() {
        return Err(refusal("403 Forbidden", ""));
    }
    Ok(SocketAddr::new(ip, port))
}

/// `host:port` or `[v6]:port`.
fn split_authority(target: &str) -> Option<(&str, u16)> {
    let (host, port) = target.rsplit_once(':')?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let port = port.parse().ok().filter(|p| *p != 0)?;
    (!host.is_empty()).then_some((host, port))
}

/// The proxy's own resolver: no DNS.
fn resolve(host: &str) -> Option<IpAddr> {
    let lower = host.to_ascii_lowercase();
    if lower == FIXTURE_HOST || lower == "localhost" || lower.ends_with(".localhost") {
        return Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    host.parse().ok()
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The bound of every wait in these tests (no sleep synchronises anything).
    const BOUND: Duration = Duration::from_secs(10);

    /// An echo server on 127.0.0.1: every connection gets back what it sends.
    async fn echo() -> u16 {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("echo bind");
        let port = listener.local_addr().expect("echo address").port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut read, mut write) = stream.split();
                    let _ = tokio::io::copy(&mut read, &mut write).await;
                });
            }
        });
        port
    }

    /// Sends a CONNECT request with these extra header lines; gives the status line of the
    /// answer and the stream.
    async fn connect(proxy: &Proxy, target: &str, extra: &str) -> (String, TcpStream) {
        let mut stream = TcpStream::connect(proxy.address())
            .await
            .expect("proxy connect");
        let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{extra}\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .expect("write CONNECT");
        let (head, rest) = tokio::time::timeout(BOUND, read_head(&mut stream))
            .await
            .expect("the proxy answers in time")
            .expect("an answer head");
        assert!(rest.is_empty(), "nothing after the head yet");
        let status = head.lines().next().unwrap_or_default().to_owned();
        (status, stream)
    }

    async fn roundtrip(stream: &mut TcpStream, text: &[u8]) -> Vec<u8> {
        stream.write_all(text).await.expect("write through");
        let mut back = vec![0u8; text.len()];
        tokio::time::timeout(BOUND, stream.read_exact(&mut back))
            .await
            .expect("echo in time")
            .expect("echo");
        back
    }

    #[test]
    fn base64_of_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("user:pass", "dXNlcjpwYXNz"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
    }

    #[tokio::test]
    async fn tunnels_to_fixture_test_through_its_own_resolver() {
        let port = echo().await;
        let proxy = Proxy::start();
        assert_eq!(proxy.tunnels(), 0);
        let target = format!("{FIXTURE_HOST}:{port}");
        let (status, mut stream) = connect(&proxy, &target, "").await;
        assert_eq!(status, "HTTP/1.1 200 Connection Established");
        assert_eq!(proxy.tunnels(), 1);
        assert_eq!(roundtrip(&mut stream, b"ping").await, b"ping");
        assert_eq!(roundtrip(&mut stream, b"pong!").await, b"pong!");

        let (status, mut second) = connect(&proxy, &format!("127.0.0.1:{port}"), "").await;
        assert_eq!(status, "HTTP/1.1 200 Connection Established");
        assert_eq!(roundtrip(&mut second, b"two").await, b"two");
        assert_eq!(proxy.tunnels(), 2);
        assert_eq!(proxy.refused(), 0);
        assert_eq!(proxy.targets(), [target, format!("127.0.0.1:{port}")]);
    }

    #[tokio::test]
    async fn bytes_sent_with_the_connect_request_reach_the_target() {
        let port = echo().await;
        let proxy = Proxy::start();
        let mut stream = TcpStream::connect(proxy.address()).await.expect("connect");
        let request = format!("CONNECT {FIXTURE_HOST}:{port} HTTP/1.1\r\n\r\nearly");
        stream.write_all(request.as_bytes()).await.expect("write");
        let expected = b"HTTP/1.1 200 Connection Established\r\n\r\nearly";
        let mut got = vec![0u8; expected.len()];
        tokio::time::timeout(BOUND, stream.read_exact(&mut got))
            .await
            .expect("in time")
            .expect("read");
        assert_eq!(got, expected);
    }

    #[tokio::test]
    async fn credentials_are_required_when_set() {
        let port = echo().await;
        let proxy = Proxy::with_credentials("user", "pass");
        assert_eq!(
            proxy.url_with_credentials("user", "pass"),
            format!("http://user:pass@{}", proxy.address())
        );
        let target = format!("{FIXTURE_HOST}:{port}");

        let (status, _) = connect(&proxy, &target, "").await;
        assert_eq!(status, "HTTP/1.1 407 Proxy Authentication Required");
        let (status, _) = connect(
            &proxy,
            &target,
            &format!("Proxy-Authorization: Basic {}\r\n", base64(b"user:wrong")),
        )
        .await;
        assert_eq!(status, "HTTP/1.1 407 Proxy Authentication Required");
        assert_eq!(proxy.tunnels(), 0);
        assert_eq!(proxy.refused(), 2);

        let (status, mut stream) = connect(
            &proxy,
            &target,
            "proxy-authorization: basic dXNlcjpwYXNz\r\n",
        )
        .await;
        assert_eq!(status, "HTTP/1.1 200 Connection Established");
        assert_eq!(roundtrip(&mut stream, b"ok").await, b"ok");
        assert_eq!(proxy.tunnels(), 1);
    }

    #[tokio::test]
    async fn the_407_names_basic() {
        let proxy = Proxy::with_credentials("u", "p");
        let mut stream = TcpStream::connect(proxy.address()).await.expect("connect");
        stream
            .write_all(b"CONNECT fixture.test:443 HTTP/1.1\r\n\r\n")
            .await
            .expect("write");
        let mut answer = String::new();
        tokio::time::timeout(BOUND, stream.read_to_string(&mut answer))
            .await
            .expect("in time")
            .expect("read");
        assert!(answer.starts_with("HTTP/1.1 407 "), "{answer}");
        assert!(
            answer.contains("\r\nProxy-Authenticate: Basic realm=\"test-proxy\"\r\n"),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn refuses_what_is_not_a_loopback_tunnel() {
        let proxy = Proxy::start();
        for (target, status) in [
            ("10.0.0.1:443", "HTTP/1.1 403 Forbidden"),
            ("[2001:db8::1]:443", "HTTP/1.1 403 Forbidden"),
            ("example.com:443", "HTTP/1.1 502 Bad Gateway"),
            ("fixture.test:0", "HTTP/1.1 400 Bad Request"),
            ("fixture.test", "HTTP/1.1 400 Bad Request"),
        ] {
            let (got, _) = connect(&proxy, target, "").await;
            assert_eq!(got, status, "{target}");
        }
        let mut stream = TcpStream::connect(proxy.address()).await.expect("connect");
        stream
            .write_all(b"GET http://fixture.test/ HTTP/1.1\r\n\r\n")
            .await
            .expect("write");
        let mut answer = String::new();
        tokio::time::timeout(BOUND, stream.read_to_string(&mut answer))
            .await
            .expect("in time")
            .expect("read");
        assert!(answer.starts_with("HTTP/1.1 405 "), "{answer}");
        assert_eq!(proxy.tunnels(), 0);
        assert_eq!(proxy.refused(), 6);
    }

    #[tokio::test]
    async fn a_port_without_a_listener_is_a_502() {
        // A socket that is bound but does not listen: connections to its port are refused,
        // and no other test can take the port while it is held (a closed port could be).
        let held = tokio::net::TcpSocket::new_v4().expect("socket");
        held.bind((Ipv4Addr::LOCALHOST, 0).into()).expect("bind");
        let closed = held.local_addr().expect("address").port();
        let proxy = Proxy::start();
        let (status, _) = connect(&proxy, &format!("{FIXTURE_HOST}:{closed}"), "").await;
        assert_eq!(status, "HTTP/1.1 502 Bad Gateway");
        assert_eq!(proxy.tunnels(), 0);
    }

    #[test]
    fn dropping_the_proxy_closes_its_tunnels() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let port = echo().await;
            let proxy = Proxy::start();
            let (status, mut stream) = connect(&proxy, &format!("{FIXTURE_HOST}:{port}"), "").await;
            assert_eq!(status, "HTTP/1.1 200 Connection Established");
            drop(proxy);
            let mut rest = Vec::new();
            let read = tokio::time::timeout(BOUND, stream.read_to_end(&mut rest))
                .await
                .expect("the tunnel ends in time");
            assert!(read.is_err() || rest.is_empty());
        });
    }
}
