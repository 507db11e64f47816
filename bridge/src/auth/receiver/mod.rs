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
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod answer;

use crate::sync::lock;
use answer::{Served, constant_time_eq, handle};

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

    #[cfg(test)]
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
        let (tx, mut rx) = mpsc::channel::<Outcome>(1);
        let state = Arc::new(Mutex::new(Served::default()));
        let serve = serve(&self.listener, &expect, &state, &tx);
        let outcome = tokio::select! {
            _ = serve => Outcome::TimedOut,
            Some(outcome) = rx.recv() => outcome,
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
        let previous = lock(&LINGERING).replace(Lingering {
            port: self.port,
            listener: Arc::downgrade(&self.listener),
            stop: stop.clone(),
        });
        if let Some(previous) = previous {
            previous.stop.cancel();
        }
        tokio::spawn(async move {
            // After the code no request ends anything (a late start request writes its
            // warning where it is answered), so no one listens for outcomes.
            let (tx, _) = mpsc::channel::<Outcome>(1);
            tokio::select! {
                biased;
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(LATE_GRACE) => {}
                _ = serve(&self.listener, &expect, &state, &tx) => {}
            }
        });
    }
}

/// Accepts connections and answers each in its own task; outcomes go to `tx`.
async fn serve(
    listener: &TcpListener,
    expect: &Expect,
    state: &Arc<Mutex<Served>>,
    tx: &mpsc::Sender<Outcome>,
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
            if let Some(outcome) = handle(stream, &expect, &state).await {
                let _ = tx.send(outcome).await;
            }
        });
    }
}

/// The listener of a sign-in in its late grace on `port`, if any: its grace ends.
fn take_lingering(port: u16) -> Option<Arc<TcpListener>> {
    let lingering = lock(&LINGERING).take_if(|l| l.port == port)?;
    lingering.stop.cancel();
    lingering.listener.upgrade()
}

#[cfg(test)]
mod tests {
    use super::answer::LATE_PAGE;
    use super::answer::tests::{expect, get};
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

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
