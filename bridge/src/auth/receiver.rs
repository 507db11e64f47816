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
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::failure::sanitize;
use crate::log::{self, Level};

/// The head of a request is read up to this size and this time.
const MAX_HEAD: usize = 16 << 10;
const HEAD_TIME: Duration = Duration::from_secs(10);

/// M6 "start late": after a redirect with a code, the receiver stays this long on its port to
/// answer a second request of a start URL that was used with 410 and a warning (a program
/// that raced the browser for the URL shows itself then). A next sign-in of this bridge on
/// the port takes the listener over at once ([`Receiver::bind`]); another bridge that wants
/// the port in this time gets `redirect_port_unavailable`, as during a sign-in.
pub const LATE_GRACE: Duration = Duration::from_secs(10);

/// The warning of a start URL requested again after the redirect.
pub const START_LATE_WARNING: &str = "The start URL of the sign-in received a second request after the redirect. Another program possibly signed in with a different account. To be sure, run logout and sign in again.";

/// The listener of the last sign-in during its late grace; the task of the grace holds the
/// only strong reference, so the port closes when the grace ends.
struct Lingering {
    port: u16,
    listener: Weak<TcpListener>,
    stop: CancellationToken,
}

static LINGERING: Mutex<Option<Lingering>> = Mutex::new(None);

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

/// What one request tells the wait: an outcome, or (M6) a second request of a used start URL
/// after the redirect with a code, which ends nothing and gets the warning.
#[derive(Debug, PartialEq, Eq)]
enum Heard {
    Ended(Outcome),
    StartLate,
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
    listener: Arc<TcpListener>,
    port: u16,
}

impl Receiver {
    /// Listens on `127.0.0.1:<port>` (0: any free port, for tests). `AddrInUse` when another
    /// program has the port. The listener of an earlier sign-in of this process that is still
    /// in its late grace on the port is taken over: its grace ends.
    pub fn bind(port: u16) -> io::Result<Receiver> {
        if let Some(listener) = take_lingering(port) {
            return Ok(Receiver { listener, port });
        }
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
        Ok(Receiver {
            listener: Arc::new(listener),
            port,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The start URL of `token`.
    pub fn start_url(&self, token: &str) -> String {
        format!("http://127.0.0.1:{}/start/{token}", self.port)
    }

    /// Serves until the redirect, a second start request, or the deadline. After a redirect
    /// with a code, the late grace begins when the start URL was used.
    pub async fn wait(self, expect: Expect, deadline: Instant) -> Outcome {
        let (tx, mut rx) = mpsc::channel::<Heard>(1);
        let state = Arc::new(Mutex::new(Served::default()));
        let serve = serve(&self.listener, &expect, &state, &tx);
        let outcome = tokio::select! {
            _ = serve => Outcome::TimedOut,
            outcome = first_outcome(&mut rx) => outcome,
            _ = tokio::time::sleep_until(deadline) => Outcome::TimedOut,
        };
        let start_used = lock(&state).start_used;
        if matches!(outcome, Outcome::Code(_)) && start_used {
            self.linger(expect, state);
        }
        outcome
    }

    /// The late grace (M6): the listener answers for [`LATE_GRACE`], a second request of the
    /// start URL with 410 and the warning, until a next sign-in takes it over.
    fn linger(self, expect: Expect, state: Arc<Mutex<Served>>) {
        let stop = CancellationToken::new();
        let previous = lock_lingering().replace(Lingering {
            port: self.port,
            listener: Arc::downgrade(&self.listener),
            stop: stop.clone(),
        });
        if let Some(previous) = previous {
            previous.stop.cancel();
        }
        tokio::spawn(async move {
            let (tx, mut rx) = mpsc::channel::<Heard>(1);
            let serve = serve(&self.listener, &expect, &state, &tx);
            let warnings = async {
                while let Some(heard) = rx.recv().await {
                    if heard == Heard::StartLate {
                        log::bridge(Level::Warn, START_LATE_WARNING);
                    }
                }
            };
            tokio::select! {
                biased;
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(LATE_GRACE) => {}
                _ = serve => {}
                _ = warnings => {}
            }
        });
    }
}

/// Accepts connections and answers each in its own task; outcomes go to `tx`.
async fn serve(
    listener: &TcpListener,
    expect: &Expect,
    state: &Arc<Mutex<Served>>,
    tx: &mpsc::Sender<Heard>,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors, for example: wait a little instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let expect = expect.clone();
        let tx = tx.clone();
        let state = Arc::clone(state);
        tokio::spawn(async move {
            if let Some(heard) = handle(stream, &expect, &state).await {
                let _ = tx.send(heard).await;
            }
        });
    }
}

/// The first outcome that ends the wait. A late start request can only follow a code, but its
/// task may report first; its warning is written here then.
async fn first_outcome(rx: &mut mpsc::Receiver<Heard>) -> Outcome {
    loop {
        match rx.recv().await {
            Some(Heard::StartLate) => log::bridge(Level::Warn, START_LATE_WARNING),
            Some(Heard::Ended(outcome)) => return outcome,
            None => return Outcome::TimedOut,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn lock_lingering() -> std::sync::MutexGuard<'static, Option<Lingering>> {
    lock(&LINGERING)
}

/// The listener of a sign-in in its late grace on `port`, if any: its grace ends.
fn take_lingering(port: u16) -> Option<Arc<TcpListener>> {
    let mut slot = lock_lingering();
    let lingering = slot.take_if(|l| l.port == port && port != 0)?;
    lingering.stop.cancel();
    lingering.listener.upgrade()
}

#[derive(Default)]
struct Served {
    start_used: bool,
    claimed: bool,
    /// The redirect brought a code (the late grace may follow).
    code: bool,
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
const LATE_PAGE: &str = "The sign-in of the bridge had already ended when this page was opened. If you did not sign in just now, another program possibly signed in with a different account: run logout and sign in again.";

async fn handle(
    mut stream: TcpStream,
    expect: &Expect,
    state: &std::sync::Mutex<Served>,
) -> Option<Heard> {
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
) -> (Reply, Option<Heard>) {
    let mut served = lock(served);
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
        if !constant_time_eq(token.as_bytes(), want.as_bytes()) {
            return (plain(404, "Not Found"), None);
        }
        if method != "GET" {
            return (plain(400, "Bad Request"), None);
        }
        if served.claimed {
            // M6 "start late": a used start URL requested again after the code came.
            if served.code && served.start_used {
                let reply = Reply {
                    status: 410,
                    reason: "Gone",
                    location: None,
                    body: LATE_PAGE,
                };
                return (reply, Some(Heard::StartLate));
            }
            return (plain(404, "Not Found"), None);
        }
        if served.start_used {
            let reply = Reply {
                status: 410,
                reason: "Gone",
                location: None,
                body: REUSED_PAGE,
            };
            return (reply, Some(Heard::Ended(Outcome::StartReused)));
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
        return (
            plain(400, "Bad Request"),
            Some(Heard::Ended(Outcome::WrongIssuer)),
        );
    }
    let outcome = match (get("code"), get("error")) {
        (Some(code), None) if !code.is_empty() => Outcome::Code(code.to_owned()),
        (_, Some("access_denied")) => Outcome::Denied,
        (_, Some(error)) => Outcome::AuthorizationError(sanitize(error)),
        _ => return (plain(400, "Bad Request"), None),
    };
    served.claimed = true;
    served.code = matches!(outcome, Outcome::Code(_));
    let reply = Reply {
        status: 200,
        reason: "OK",
        location: None,
        body: SUCCESS_PAGE,
    };
    (reply, Some(Heard::Ended(outcome)))
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

    /// [`super::decide`] for the requests that end the wait.
    fn decide(head: &str, expect: &Expect, served: &Mutex<Served>) -> (Reply, Option<Outcome>) {
        let (reply, heard) = super::decide(head, expect, served);
        let outcome = heard.map(|h| match h {
            Heard::Ended(outcome) => outcome,
            Heard::StartLate => panic!("a late start request"),
        });
        (reply, outcome)
    }

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
        // M6 "start late": in the grace after the code, the used start URL gets 410.
        let late = http_get(&start).await;
        assert!(
            late.starts_with("HTTP/1.1 410 ") && late.ends_with(LATE_PAGE),
            "{late}"
        );
        // The next sign-in (a step-up) takes the port over from the grace at once.
        let again = Receiver::bind(port).expect("the port again after a sign-in");
        assert!(
            matches!(Receiver::bind(port), Err(e) if e.kind() == io::ErrorKind::AddrInUse),
            "a listening receiver still keeps the port"
        );
        drop(again);
    }

    #[test]
    fn m6_a_used_start_url_requested_after_the_code_gets_the_late_page() {
        let e = expect(true);
        let served = std::sync::Mutex::new(Served::default());
        decide(&get("/start/t0ken"), &e, &served);
        let (r, o) = decide(&get("/callback?code=c&state=st4te"), &e, &served);
        assert_eq!((r.status, o), (200, Some(Outcome::Code("c".into()))));
        let (r, heard) = super::decide(&get("/start/t0ken"), &e, &served);
        assert_eq!(
            (r.status, r.body, heard),
            (410, LATE_PAGE, Some(Heard::StartLate))
        );
        let (r, heard) = super::decide(&get("/start/wrong"), &e, &served);
        assert_eq!((r.status, heard), (404, None), "a wrong token: 404");
        // The start URL was not used (the user opened the sign-in line): 404.
        let served = std::sync::Mutex::new(Served::default());
        decide(&get("/callback?code=c&state=st4te"), &e, &served);
        let (r, heard) = super::decide(&get("/start/t0ken"), &e, &served);
        assert_eq!((r.status, heard), (404, None));
        // An error answer is no code: 404.
        let served = std::sync::Mutex::new(Served::default());
        decide(&get("/start/t0ken"), &e, &served);
        decide(
            &get("/callback?error=access_denied&state=st4te"),
            &e,
            &served,
        );
        let (r, heard) = super::decide(&get("/start/t0ken"), &e, &served);
        assert_eq!((r.status, heard), (404, None));
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
