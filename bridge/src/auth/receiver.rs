//! The loopback receiver of the sign-in (M4, M6): `http://127.0.0.1:<port>/callback` gets the
//! redirect of the authorization server, and the one-time start URL `/start/<token>` sends the
//! browser to the authorization URL, so that the argv of the browser opener never holds the
//! authorization URL (other users of a POSIX host can read it).
//!
//! It listens before anything opens, on 127.0.0.1 only and without address reuse (another
//! program on the port is an error, not a shared port). It answers by hand: the requests are a
//! request line and headers, and a general HTTP server would add nothing but surface. Nothing
//! of a request (the code, the state) is logged or echoed.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::failure::sanitize;

/// The head of a request is read up to this size and this time.
const MAX_HEAD: usize = 16 << 10;
const HEAD_TIME: Duration = Duration::from_secs(10);

/// How the wait for the redirect ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The redirect with a code and the right state.
    Code(String),
    /// The authorization server refused the access (`error=access_denied`).
    Denied,
    /// Another error of the authorization server: its code, sanitized (`[a-z_]`, ≤ 48).
    AuthorizationError(String),
    /// The start URL got a second request before the redirect (M6): the sign-in stops.
    StartReused,
    /// The sign-in did not complete in its time.
    TimedOut,
    /// The redirect's `iss` (RFC 9207) is not the issuer of the sign-in, or is missing where
    /// the authorization server said that it sends one: the answer may come from another
    /// authorization server (a mix-up attack), so its code never goes to the token endpoint.
    WrongIssuer,
}

/// What the receiver knows of one sign-in.
#[derive(Clone, Debug)]
pub struct Expect {
    pub state: String,
    /// The token of the one-time start URL, and where it sends the browser; `None` when no
    /// browser is opened (`--no-browser`, or a URL elicitation to VS Code).
    pub start: Option<(String, String)>,
    /// The `iss` that the redirect must carry (RFC 9207).
    pub issuer: IssuerCheck,
}

/// RFC 9207 §2.4 for one sign-in: a redirect's `iss` must be the authorization server's
/// `issuer` exactly as its metadata published it (a simple string comparison: no case
/// folding, no final-slash or port normalization), and a redirect without `iss` is refused
/// when the metadata says `authorization_response_iss_parameter_supported`.
#[derive(Clone, Debug)]
pub struct IssuerCheck {
    pub issuer: String,
    pub required: bool,
}

impl IssuerCheck {
    /// Whether a redirect with this `iss` (or none) is from the issuer of the sign-in.
    pub fn accepts(&self, iss: Option<&str>) -> bool {
        match iss {
            // Not a secret: the issuer is public, but the comparison costs nothing to keep
            // free of early exits, like the others of the receiver.
            Some(iss) => constant_time_eq(iss.as_bytes(), self.issuer.as_bytes()),
            None => !self.required,
        }
    }
}

/// A bound receiver.
pub struct Receiver {
    listener: TcpListener,
    port: u16,
}

impl Receiver {
    /// Listens on `127.0.0.1:<port>` (0: any free port, for tests). `AddrInUse` when another
    /// program has the port.
    pub fn bind(port: u16) -> io::Result<Receiver> {
        let socket = TcpSocket::new_v4()?;
        // The receiver closes each connection first, so the connections of an earlier sign-in
        // on this port (a step-up, a second account) stay in TIME_WAIT for a minute, and
        // without SO_REUSEADDR a POSIX bind fails on them with AddrInUse. On POSIX systems
        // SO_REUSEADDR allows only that (the std and tokio listeners set it for this reason):
        // a port where another socket listens still fails, so a second bridge never shares
        // it. On Windows the option would let a socket take a port in use, so it stays off
        // there (Windows binds over TIME_WAIT without it).
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        let listener = socket.listen(16)?;
        let port = listener.local_addr()?.port();
        Ok(Receiver { listener, port })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The start URL of `token`.
    pub fn start_url(&self, token: &str) -> String {
        format!("http://127.0.0.1:{}/start/{token}", self.port)
    }

    /// Serves until the redirect, a second start request, or the deadline.
    pub async fn wait(self, expect: Expect, deadline: Instant) -> Outcome {
        let (tx, mut rx) = mpsc::channel::<Outcome>(1);
        let state = std::sync::Arc::new(std::sync::Mutex::new(Served::default()));
        let serve = async {
            loop {
                let stream = match self.listener.accept().await {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        // Out of descriptors, for example: wait a little instead of spinning.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let expect = expect.clone();
                let tx = tx.clone();
                let state = std::sync::Arc::clone(&state);
                tokio::spawn(async move {
                    if let Some(outcome) = handle(stream, &expect, &state).await {
                        let _ = tx.send(outcome).await;
                    }
                });
            }
        };
        tokio::select! {
            _ = serve => Outcome::TimedOut,
            Some(outcome) = rx.recv() => outcome,
            _ = tokio::time::sleep_until(deadline) => Outcome::TimedOut,
        }
    }
}

#[derive(Default)]
struct Served {
    start_used: bool,
    claimed: bool,
}

/// A response: status, reason, extra headers, body.
struct Reply {
    status: u16,
    reason: &'static str,
    location: Option<String>,
    body: &'static str,
}

const SUCCESS_PAGE: &str =
    "The bridge received the answer of the authorization server. You can close this page.";
const REUSED_PAGE: &str = "The start URL of the sign-in was opened a second time, thus the bridge stopped the sign-in. Start the sign-in again.";

async fn handle(
    mut stream: TcpStream,
    expect: &Expect,
    state: &std::sync::Mutex<Served>,
) -> Option<Outcome> {
    let head = match tokio::time::timeout(HEAD_TIME, read_head(&mut stream)).await {
        Ok(Ok(head)) => head,
        Ok(Err(HeadError::TooLarge)) => {
            write_reply(&mut stream, plain(431, "Request Header Fields Too Large")).await;
            return None;
        }
        _ => return None,
    };
    let (reply, outcome) = decide(&head, expect, state);
    write_reply(&mut stream, reply).await;
    outcome
}

fn plain(status: u16, reason: &'static str) -> Reply {
    Reply {
        status,
        reason,
        location: None,
        body: "",
    }
}

/// The answer to one request (pure but for the shared record of what was served).
fn decide(
    head: &str,
    expect: &Expect,
    served: &std::sync::Mutex<Served>,
) -> (Reply, Option<Outcome>) {
    let mut served = served
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let request_line = head.lines().next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (method, target, version) = (parts.next(), parts.next(), parts.next());
    let valid = matches!(version, Some("HTTP/1.1" | "HTTP/1.0")) && parts.next().is_none();
    let (Some(method), Some(target), true) = (method, target, valid) else {
        return (plain(400, "Bad Request"), None);
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if let Some(token) = path.strip_prefix("/start/") {
        let Some((want, authorization_url)) = &expect.start else {
            return (plain(404, "Not Found"), None);
        };
        if served.claimed || !constant_time_eq(token.as_bytes(), want.as_bytes()) {
            return (plain(404, "Not Found"), None);
        }
        if method != "GET" {
            return (plain(400, "Bad Request"), None);
        }
        if served.start_used {
            let reply = Reply {
                status: 410,
                reason: "Gone",
                location: None,
                body: REUSED_PAGE,
            };
            return (reply, Some(Outcome::StartReused));
        }
        served.start_used = true;
        let reply = Reply {
            status: 303,
            reason: "See Other",
            location: Some(authorization_url.clone()),
            body: "",
        };
        return (reply, None);
    }
    if path != "/callback" {
        return (plain(404, "Not Found"), None);
    }
    if method != "GET" || served.claimed {
        return (plain(400, "Bad Request"), None);
    }
    let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let state_ok =
        get("state").is_some_and(|s| constant_time_eq(s.as_bytes(), expect.state.as_bytes()));
    if !state_ok {
        return (plain(400, "Bad Request"), None);
    }
    // After the state (a request without the sign-in's state is not its answer and leaves the
    // wait going on), before the code: an answer of the wrong issuer ends the sign-in (the
    // reference client of the specification does so) and its code is dropped. An error
    // answer is checked too: a mixed-up server must not end the sign-in with its error.
    if !expect.issuer.accepts(get("iss")) {
        served.claimed = true;
        return (plain(400, "Bad Request"), Some(Outcome::WrongIssuer));
    }
    let outcome = match (get("code"), get("error")) {
        (Some(code), None) if !code.is_empty() => Outcome::Code(code.to_owned()),
        (_, Some("access_denied")) => Outcome::Denied,
        (_, Some(error)) => Outcome::AuthorizationError(sanitize(error)),
        _ => return (plain(400, "Bad Request"), None),
    };
    served.claimed = true;
    let reply = Reply {
        status: 200,
        reason: "OK",
        location: None,
        body: SUCCESS_PAGE,
    };
    (reply, Some(outcome))
}

/// Compares without an early exit on the first difference (the state and the start token are
/// secrets of the sign-in).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

enum HeadError {
    TooLarge,
    Io,
}

async fn read_head(stream: &mut TcpStream) -> Result<String, HeadError> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    loop {
        let n = stream.read(&mut buf).await.map_err(|_| HeadError::Io)?;
        if n == 0 {
            return Err(HeadError::Io);
        }
        head.extend_from_slice(&buf[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            break;
        }
        if head.len() > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
    }
    String::from_utf8(head).map_err(|_| HeadError::Io)
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) {
    let mut text = format!(
        "HTTP/1.1 {} {}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\nx-content-type-options: nosniff\r\ncontent-security-policy: default-src 'none'\r\nconnection: close\r\n",
        reply.status, reply.reason
    );
    if let Some(location) = &reply.location {
        text.push_str(&format!("location: {location}\r\n"));
    }
    if !reply.body.is_empty() {
        text.push_str("content-type: text/html; charset=utf-8\r\n");
    }
    text.push_str(&format!(
        "content-length: {}\r\n\r\n{}",
        reply.body.len(),
        reply.body
    ));
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(start: bool) -> Expect {
        Expect {
            state: "st4te".into(),
            start: start.then(|| ("t0ken".into(), "https://as.example/authorize?x=1".into())),
            issuer: IssuerCheck {
                issuer: "https://as.example".into(),
                required: false,
            },
        }
    }

    fn get(target: &str) -> String {
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    #[test]
    fn m6_the_start_url_redirects_once_and_a_second_request_stops_the_sign_in() {
        let served = std::sync::Mutex::new(Served::default());
        let e = expect(true);
        let (r, o) = decide(&get("/start/t0ken"), &e, &served);
        assert_eq!(
            (r.status, r.location.as_deref(), o),
            (303, Some("https://as.example/authorize?x=1"), None)
        );
        let (r, o) = decide(&get("/start/wrong"), &e, &served);
        assert_eq!(
            (r.status, o),
            (404, None),
            "a wrong token: 404, the wait goes on"
        );
        let (r, o) = decide(&get("/start/t0ken"), &e, &served);
        assert_eq!((r.status, o), (410, Some(Outcome::StartReused)));
    }

    #[test]
    fn the_redirect_ends_the_wait_only_with_the_right_state() {
        let served = std::sync::Mutex::new(Served::default());
        let e = expect(false);
        assert_eq!(decide(&get("/start/t0ken"), &e, &served).0.status, 404);
        assert_eq!(
            decide(&get("/callback?code=c&state=nope"), &e, &served)
                .0
                .status,
            400
        );
        assert_eq!(decide(&get("/callback?code=c"), &e, &served).0.status, 400);
        assert_eq!(decide(&get("/other"), &e, &served).0.status, 404);
        assert_eq!(
            decide("POST /callback HTTP/1.1\r\n\r\n", &e, &served)
                .0
                .status,
            400
        );
        assert_eq!(decide("GET /callback\r\n\r\n", &e, &served).0.status, 400);
        let (r, o) = decide(&get("/callback?code=c%2F1&state=st4te"), &e, &served);
        assert_eq!((r.status, o), (200, Some(Outcome::Code("c/1".into()))));
        assert_eq!(
            decide(&get("/callback?code=c&state=st4te"), &e, &served)
                .0
                .status,
            400,
            "one claim only"
        );
    }

    #[test]
    fn rfc_9207_the_iss_of_the_redirect_is_the_issuer_exactly() {
        let with = |required: bool| Expect {
            issuer: IssuerCheck {
                issuer: "http://localhost:9".into(),
                required,
            },
            ..expect(false)
        };
        let outcome = |e: &Expect, query: &str| {
            let served = std::sync::Mutex::new(Served::default());
            decide(&get(&format!("/callback?{query}")), e, &served)
        };
        let code = Some(Outcome::Code("c".into()));
        for required in [false, true] {
            let e = with(required);
            let ok = outcome(&e, "code=c&state=st4te&iss=http%3A%2F%2Flocalhost%3A9");
            assert_eq!((ok.0.status, ok.1), (200, code.clone()));
            for wrong in [
                "https%3A%2F%2Fevil.example",
                "http%3A%2F%2Flocalhost%3A9%2F",
                "",
            ] {
                let (r, o) = outcome(&e, &format!("code=c&state=st4te&iss={wrong}"));
                assert_eq!((r.status, o), (400, Some(Outcome::WrongIssuer)), "{wrong}");
            }
            let (r, o) = outcome(&e, "error=access_denied&state=st4te&iss=https%3A%2F%2Fx");
            assert_eq!((r.status, o), (400, Some(Outcome::WrongIssuer)));
        }
        assert_eq!(outcome(&with(false), "code=c&state=st4te").1, code);
        assert_eq!(
            outcome(&with(true), "code=c&state=st4te").1,
            Some(Outcome::WrongIssuer),
            "the server said that it sends iss"
        );
        let (r, o) = outcome(
            &with(true),
            "code=c&state=nope&iss=https%3A%2F%2Fevil.example",
        );
        assert_eq!(
            (r.status, o),
            (400, None),
            "another state: not this sign-in's answer"
        );
    }

    #[test]
    fn errors_of_the_authorization_server() {
        let e = expect(false);
        let served = std::sync::Mutex::new(Served::default());
        assert_eq!(
            decide(
                &get("/callback?error=access_denied&state=st4te"),
                &e,
                &served
            )
            .1,
            Some(Outcome::Denied)
        );
        let served = std::sync::Mutex::new(Served::default());
        assert_eq!(
            decide(
                &get("/callback?error=Server_Error%3Cb%3E&state=st4te"),
                &e,
                &served
            )
            .1,
            Some(Outcome::AuthorizationError("erver_rrorb".into()))
        );
    }

    #[tokio::test]
    async fn a_browser_follows_the_start_url_and_the_redirect_over_real_sockets() {
        let receiver = Receiver::bind(0).expect("bind");
        let port = receiver.port();
        assert!(
            matches!(Receiver::bind(port), Err(e) if e.kind() == io::ErrorKind::AddrInUse),
            "a second receiver on the port fails"
        );
        let e = Expect {
            state: "s".into(),
            start: Some((
                "tok".into(),
                format!("http://127.0.0.1:{port}/callback?code=abc&state=s"),
            )),
            issuer: IssuerCheck {
                issuer: "https://as.example".into(),
                required: false,
            },
        };
        let start = receiver.start_url("tok");
        let wait = tokio::spawn(receiver.wait(e, Instant::now() + Duration::from_secs(10)));
        let location = http_get(&start).await;
        assert!(location.starts_with("HTTP/1.1 303 "), "{location}");
        let target = location
            .lines()
            .find_map(|l| l.strip_prefix("location: "))
            .expect("location")
            .to_owned();
        let page = http_get(&target).await;
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        assert!(!page.contains("abc"), "the code is never echoed");
        assert_eq!(wait.await.ok(), Some(Outcome::Code("abc".into())));
        // The next sign-in (a step-up) binds the same port, over the connections that the
        // receiver closed first (TIME_WAIT).
        let again = Receiver::bind(port).expect("the port again after a sign-in");
        assert!(
            matches!(Receiver::bind(port), Err(e) if e.kind() == io::ErrorKind::AddrInUse),
            "a listening receiver still keeps the port"
        );
        drop(again);
    }

    #[tokio::test]
    async fn the_deadline_ends_the_wait() {
        let receiver = Receiver::bind(0).expect("bind");
        let outcome = receiver.wait(expect(false), Instant::now()).await;
        assert_eq!(outcome, Outcome::TimedOut);
    }

    async fn http_get(url: &str) -> String {
        let url = url::Url::parse(url).expect("url");
        let mut stream = TcpStream::connect(("127.0.0.1", url.port().expect("port")))
            .await
            .expect("connect");
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        stream
            .write_all(get(&target).as_bytes())
            .await
            .expect("write");
        let mut out = String::new();
        stream.read_to_string(&mut out).await.expect("read");
        out
    }
}
