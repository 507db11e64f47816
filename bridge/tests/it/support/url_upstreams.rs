//! Upstreams of the URL form for the fault matrix and the secret sweep: the HTTPS fixture
//! (`bridge-fixture-server --listen`, see fixture-server/README.md) and a tiny raw HTTP/1.1
//! server whose answers a test scripts (a status, an SSE stream that breaks, a response that
//! never ends).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::Value;

/// The test PKI of the repository (certs/README.md).
pub fn certs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("certs")
}

/// A running HTTPS fixture; dropping it kills it (no process is left).
pub struct HttpsFixture {
    child: Child,
    pub url: String,
    pub stderr: Arc<Mutex<String>>,
}

impl HttpsFixture {
    /// `bridge-fixture-server --listen 127.0.0.1:0 <args>` with `env`.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> HttpsFixture {
        let mut cmd = Command::new(super::fixture_bin());
        cmd.args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("the HTTPS fixture starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = tx.send(reader.read_line(&mut line).map(|_| line));
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr_text);
        let mut stderr = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the first line of the HTTPS fixture")
            .expect("read");
        let url = line
            .trim_end()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        HttpsFixture {
            child,
            url,
            stderr: stderr_text,
        }
    }
}

impl Drop for HttpsFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The fixture's stderr for the secret sweep (ci/sweep.sh).
        let text = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        super::kept::keep("fixture", "stderr", text.as_bytes());
    }
}

/// What the raw server does with one request.
pub enum Answer {
    /// Writes these bytes (a whole HTTP response) and keeps the connection.
    Bytes(Vec<u8>),
    /// Writes these bytes, then closes the connection (a broken stream).
    BytesThenClose(Vec<u8>),
    /// Writes these bytes, then never writes again until the client closes.
    BytesThenHang(Vec<u8>),
}

/// A JSON response with `status`.
pub fn json_response(status: u16, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A status with a text body.
pub fn status_response(status: u16) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nno")
        .into_bytes()
}

/// The head of an SSE response (no length: the stream ends with the connection), and events.
pub fn sse_head_and_events(events: &[Value]) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".to_vec();
    for e in events {
        out.extend_from_slice(format!("data: {e}\n\n").as_bytes());
    }
    out
}

/// A raw HTTP/1.1 server on 127.0.0.1 that answers each request (its JSON body) with the
/// handler's [`Answer`]; it counts the connections that the client closed during a hang.
pub struct RawServer {
    pub url: String,
    pub closed_hangs: Arc<AtomicUsize>,
}

impl RawServer {
    pub fn start(handler: impl Fn(&Value) -> Answer + Send + Sync + 'static) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let handler = Arc::new(handler);
        let closed_hangs = Arc::new(AtomicUsize::new(0));
        let hangs = Arc::clone(&closed_hangs);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let handler = Arc::clone(&handler);
                let hangs = Arc::clone(&hangs);
                std::thread::spawn(move || serve(stream, &*handler, &hangs));
            }
        });
        RawServer { url, closed_hangs }
    }
}

/// One HTTP/1.1 request as a raw server reads it: the method, the headers (names in lower
/// case) and the body as JSON (`null` when it is not).
pub struct RawRequest {
    pub method: String,
    pub headers: std::collections::HashMap<String, String>,
    pub body: Value,
}

/// Reads the next request of a connection; `None` when it ends or breaks.
pub fn read_request(reader: &mut BufReader<TcpStream>) -> Option<RawRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split(' ').next().unwrap_or_default().to_owned();
    let mut headers = std::collections::HashMap::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0usize);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(RawRequest {
        method,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn serve(stream: TcpStream, handler: &dyn Fn(&Value) -> Answer, hangs: &AtomicUsize) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    loop {
        let Some(raw) = read_request(&mut reader) else {
            return;
        };
        let request = raw.body;
        match handler(&request) {
            Answer::Bytes(bytes) => {
                if writer.write_all(&bytes).is_err() {
                    return;
                }
            }
            Answer::BytesThenClose(bytes) => {
                let _ = writer.write_all(&bytes);
                let _ = writer.shutdown(std::net::Shutdown::Both);
                return;
            }
            Answer::BytesThenHang(bytes) => {
                let _ = writer.write_all(&bytes);
                let _ = writer.flush();
                // Wait for the client to close the connection.
                let mut buf = [0u8; 1024];
                loop {
                    match reader.get_mut().read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                hangs.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
    }
}
