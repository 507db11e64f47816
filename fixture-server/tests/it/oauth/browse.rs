//! The test browser `--browse`: it follows the start URL to the redirect receiver, delivers
//! `access_denied`, and fails on an error page.

use super::*;

/// A redirect receiver on `listener`: with `start` it answers the first request with a 303 to
/// `start` (as the start URL of a sign-in does), then one request with 200; the request lines
/// come back through the handle.
fn receiver(listener: TcpListener, start: Option<String>) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        let rounds = if start.is_some() { 2 } else { 1 };
        for round in 0..rounds {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header == "\r\n" || header.is_empty() {
                    break;
                }
            }
            lines.push(line.trim_end().to_string());
            let answer = match (&start, round) {
                (Some(location), 0) => format!(
                    "HTTP/1.1 303 See Other\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                ),
                _ => "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n".to_string(),
            };
            stream.write_all(answer.as_bytes()).unwrap();
        }
        lines
    })
}

/// Runs `--browse <url>` with the test CA: the exit code and stdout.
fn browse(url: &str) -> (i32, String) {
    let ca = cert("ca.crt");
    let output = Command::new(BIN)
        .args(["--browse", url, "--ca-file", ca.to_str().unwrap()])
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// A listener on a free loopback port, its port and the redirect URI on it.
fn loopback() -> (TcpListener, u16, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port, format!("http://127.0.0.1:{port}/callback"))
}

#[test]
fn browse_follows_the_start_url_to_the_redirect_receiver() {
    let auth = Auth::start(&[]);
    let (listener, port, redirect) = loopback();
    let authorization = auth.authorization_url(PUBLIC, "mcp:read", &[("redirect_uri", &redirect)]);
    let thread = receiver(listener, Some(authorization));
    let (code, stdout) = browse(&format!("http://127.0.0.1:{port}/start/abc"));
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with(&format!(
            "200 {redirect}?code=HIDDEN&state=HIDDEN&iss=https"
        )),
        "{stdout}"
    );
    let lines = thread.join().unwrap();
    assert_eq!(lines[0], "GET /start/abc HTTP/1.1");
    assert!(
        lines[1].starts_with("GET /callback?code=bfx_code_"),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("&state=state-1&iss=https"),
        "{}",
        lines[1]
    );
}

#[test]
fn browse_delivers_access_denied_and_fails_on_an_error_page() {
    let denying = Auth::start(&["--deny"]);
    let (listener, _, redirect) = loopback();
    let url = denying.authorization_url(PUBLIC, "mcp:read", &[("redirect_uri", &redirect)]);
    let thread = receiver(listener, None);
    let (code, stdout) = browse(&url);
    assert_eq!(code, 0, "{stdout}");
    let lines = thread.join().unwrap();
    assert!(
        lines[0].starts_with("GET /callback?error=access_denied&"),
        "{}",
        lines[0]
    );

    let auth = Auth::start(&[]);
    let url = auth.authorization_url("unknown-client", "mcp:read", &[]);
    let (code, stdout) = browse(&url);
    assert_eq!(code, 1);
    assert!(stdout.starts_with("400 https://127.0.0.1:"), "{stdout}");
    // http only to a loopback host.
    let (code, _) = browse("http://example.com/");
    assert_eq!(code, 1);
}
