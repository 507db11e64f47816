//! The receiver's answer to one request (M4, M6): the start URL, the redirect of the
//! authorization server and anything else, with the status codes, headers and pages of the
//! contract. Nothing of a request (the code, the state) is logged or echoed.

use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Expect, Outcome, START_LATE_WARNING};
use crate::auth::failure::sanitize;
use crate::log::{self, Level};
use crate::sync::lock;

/// The head of a request is read up to this size and this time.
const MAX_HEAD: usize = 16 << 10;
const HEAD_TIME: Duration = Duration::from_secs(10);

/// What one request tells the wait: an outcome, or (M6) a second request of a used start URL
/// after the redirect with a code, which ends nothing and gets the warning.
#[derive(Debug, PartialEq, Eq)]
enum Heard {
    Ended(Outcome),
    StartLate,
}

/// What the receiver of one sign-in has served so far.
#[derive(Default)]
pub(super) struct Served {
    pub(super) start_used: bool,
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
pub(super) const LATE_PAGE: &str = "The sign-in of the bridge had already ended when this page was opened. If you did not sign in just now, another program possibly signed in with a different account: run logout and sign in again.";

/// Answers one request; the outcome when it ends the wait. A late start request (M6) ends
/// nothing: its warning is written here.
pub(super) async fn handle(
    mut stream: TcpStream,
    expect: &Expect,
    state: &Mutex<Served>,
) -> Option<Outcome> {
    let head = match tokio::time::timeout(HEAD_TIME, read_head(&mut stream)).await {
        Ok(Ok(head)) => head,
        Ok(Err(HeadError::TooLarge)) => {
            write_reply(&mut stream, plain(431, "Request Header Fields Too Large")).await;
            return None;
        }
        _ => return None,
    };
    let (reply, heard) = decide(&head, expect, state);
    write_reply(&mut stream, reply).await;
    match heard? {
        Heard::Ended(outcome) => Some(outcome),
        Heard::StartLate => {
            log::bridge(Level::Warn, START_LATE_WARNING);
            None
        }
    }
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
fn decide(head: &str, expect: &Expect, served: &Mutex<Served>) -> (Reply, Option<Heard>) {
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
pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
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
pub(super) mod tests {
    use super::*;
    use crate::auth::receiver::IssuerCheck;

    /// [`super::decide`] for the requests that end the wait.
    fn decide(head: &str, expect: &Expect, served: &Mutex<Served>) -> (Reply, Option<Outcome>) {
        let (reply, heard) = super::decide(head, expect, served);
        let outcome = heard.map(|h| match h {
            Heard::Ended(outcome) => outcome,
            Heard::StartLate => panic!("a late start request"),
        });
        (reply, outcome)
    }

    pub(crate) fn expect(start: bool) -> Expect {
        Expect {
            state: "st4te".into(),
            start: start.then(|| ("t0ken".into(), "https://as.example/authorize?x=1".into())),
            issuer: IssuerCheck {
                issuer: "https://as.example".into(),
                required: false,
            },
        }
    }

    pub(crate) fn get(target: &str) -> String {
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
}
