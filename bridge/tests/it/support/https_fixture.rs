//! The HTTPS fixture as a real process for the process tests of the URL form:
//! `bridge-fixture-server --listen 127.0.0.1:0 <args>` (fixture-server/README.md, "The HTTP
//! mode"). [`HttpsFixture::start`] reads its first stdout line `listening <url>` (bounded);
//! its stderr is collected, so that a test can wait (bounded) for a line of the fixture, such
//! as the one that tells of a cancelled request. Dropping it kills the process and waits.
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::fixture_bin;

/// The bound of the `listening` line and of a wait for a stderr line.
const BOUND: Duration = Duration::from_secs(20);

/// `certs/ca.crt` of the workspace: the CA of the fixture's default certificate.
pub fn ca_file() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("certs")
        .join("ca.crt")
        .to_string_lossy()
        .into_owned()
}

/// A running HTTPS fixture.
pub struct HttpsFixture {
    child: Child,
    /// The URL of its `listening` line: `https://127.0.0.1:<port>/mcp`.
    pub url: String,
    pub port: u16,
    stderr: Arc<Mutex<String>>,
}

impl HttpsFixture {
    /// Starts the fixture on a free port of 127.0.0.1 with `args` and `env`.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> HttpsFixture {
        let mut command = Command::new(fixture_bin());
        command
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the HTTPS fixture starts");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&text);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            // Keep the pipe open (and drained) while the fixture runs.
            let mut rest = Vec::new();
            let _ = reader.read_to_end(&mut rest);
        });
        let line = match rx.recv_timeout(BOUND) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "no listening line from the HTTPS fixture in {BOUND:?}; stderr:\n{}",
                    text.lock().map(|s| s.clone()).unwrap_or_default()
                );
            }
        };
        let url = line
            .trim_end()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("the first line of the HTTPS fixture is {line:?}"))
            .to_owned();
        let port = url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {url}"));
        HttpsFixture {
            child,
            url,
            port,
            stderr: text,
        }
    }

    /// The URL with another host: `https://<host>:<port>/mcp`.
    pub fn url_with_host(&self, host: &str) -> String {
        format!("https://{host}:{}/mcp", self.port)
    }

    /// Kills the fixture (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Everything on its stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits (bounded) until its stderr contains `text`.
    pub fn expect_text(&self, text: &str) {
        let since = Instant::now();
        while since.elapsed() < BOUND {
            if self.stderr().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!(
            "no stderr text {text:?} from the fixture\nstderr:\n{}",
            self.stderr()
        );
    }
}

impl Drop for HttpsFixture {
    fn drop(&mut self) {
        self.kill();
        // The fixture's stderr for the secret sweep (ci/sweep.sh): it never holds what it issued.
        super::kept::keep("fixture", "stderr", self.stderr().as_bytes());
    }
}
