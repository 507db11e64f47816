//! The HTTPS fixture as the upstream of a transcript: `{"upstream":{"https":[…]}}` starts
//! `bridge-fixture-server --listen 127.0.0.1:0 <args>`, reads its `listening <url>` line, and
//! the bridge gets `[--ca-file <certs/ca.crt>] <url>` instead of `-- <command>`. The step
//! `{"https_fixture":"kill"}` kills the fixture mid-run, `{"https_fixture":"restart"}` starts it
//! again on the same port (same URL). The fixture is killed when the transcript ends.
//!
//! The port is the harness's for the whole transcript ([`Reservation`]): a socket bound to it
//! with `SO_REUSEADDR` that never listens, so that no other program gets the port while the
//! fixture is down between a kill and a restart (the kernel hands a bound port to no `bind` to
//! port 0 and no `connect`), while a connection to it is still refused then, as to a server
//! that is gone.
use serde::Deserialize;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

/// The longest wait for the `listening` line.
const LISTEN_WAIT: Duration = Duration::from_secs(10);

/// Which CA the bridge trusts through `--ca-file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ca {
    /// `certs/ca.crt`, the CA of the fixture's default certificate.
    #[default]
    Trusted,
    /// `certs/untrusted-ca.crt`, the CA of `--untrusted`.
    Untrusted,
    /// No `--ca-file`: the system's CAs only (an untrusted certificate).
    None,
}

/// The setup of an HTTPS upstream: `{"https": [args…]}` (the arguments alone) or
/// `{"https": {"args": [args…], "ca": "trusted"|"untrusted"|"none", "sign_in": bool,
/// "path": "/sse"}}`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Https {
    /// The arguments of the fixture after `--listen 127.0.0.1:<port>`.
    pub args: Vec<String>,
    pub ca: Ca,
    /// The fixture's sign-in (`--oauth`): the bridge signs in, and a test browser follows
    /// each sign-in line (crate::sign_in).
    pub sign_in: bool,
    /// The path that the bridge gets instead of the fixture's `/mcp`: `/sse` for the HTTP+SSE
    /// transport of 2024-11-05 (with `--revision 2025-11-25`).
    pub path: Option<String>,
}

/// The CA certificates of the test PKI (`certs/` of the workspace), built in so that an
/// installed harness reads no file of the source tree.
const CA_FILES: [(&str, &str); 2] = [
    ("ca.crt", include_str!("../certs/ca.crt")),
    (
        "untrusted-ca.crt",
        include_str!("../certs/untrusted-ca.crt"),
    ),
];

/// A folder holding `ca.crt` and `untrusted-ca.crt` for the bridge's `--ca-file`: one folder in
/// the system's temporary folder per content (its name carries a hash), written once and
/// shared by every harness run (rewritten if a file differs); each file is written whole and
/// renamed into place, so concurrent runs never read half a file. A write that fails shows as
/// the bridge's own error for the file.
pub fn certs_dir() -> PathBuf {
    use std::hash::{Hash, Hasher};
    // DefaultHasher::new() has fixed keys: the same content gives the same name in every run.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    CA_FILES.hash(&mut hasher);
    let dir = std::env::temp_dir().join(format!("mcp-harness-certs-{:016x}", hasher.finish()));
    for (name, pem) in CA_FILES {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).is_ok_and(|have| have == pem) {
            continue;
        }
        let written = std::fs::create_dir_all(&dir).and_then(|()| {
            let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
            std::io::Write::write_all(&mut tmp, pem.as_bytes())?;
            tmp.persist(&path).map_err(|e| e.error)?;
            Ok(())
        });
        if let Err(e) = written {
            eprintln!("harness: cannot write {}: {e}", path.display());
        }
    }
    dir
}

impl Https {
    /// The bridge arguments that name the upstream: `[--ca-file <file>] <url>`.
    pub fn bridge_args(&self, url: &str) -> Vec<String> {
        let file = match self.ca {
            Ca::Trusted => Some("ca.crt"),
            Ca::Untrusted => Some("untrusted-ca.crt"),
            Ca::None => None,
        };
        let mut args = Vec::new();
        if let Some(file) = file {
            args.push("--ca-file".into());
            args.push(certs_dir().join(file).to_string_lossy().into_owned());
        }
        match (&self.path, url.strip_suffix("/mcp")) {
            (Some(path), Some(origin)) => args.push(format!("{origin}{path}")),
            _ => args.push(url.to_string()),
        }
        args
    }
}

/// The harness's hold on the fixture's port (POSIX: `SO_REUSEADDR` lets the fixture's own
/// listener share the port with a socket that does not listen; elsewhere no hold).
pub struct Reservation {
    #[cfg(unix)]
    _socket: tokio::net::TcpSocket,
    address: String,
}

impl Reservation {
    /// Binds a free port of 127.0.0.1 and keeps it without listening.
    #[cfg(unix)]
    pub fn new() -> Result<Self, String> {
        let bound = tokio::net::TcpSocket::new_v4().and_then(|socket| {
            socket.set_reuseaddr(true)?;
            socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
            let address = socket.local_addr()?.to_string();
            Ok((socket, address))
        });
        let (socket, address) =
            bound.map_err(|e| format!("cannot hold a port of 127.0.0.1: {e}"))?;
        Ok(Self {
            _socket: socket,
            address,
        })
    }

    /// No hold where `SO_REUSEADDR` would let any program take the port (Windows): the
    /// fixture picks its port itself.
    #[cfg(not(unix))]
    pub fn new() -> Result<Self, String> {
        Ok(Self {
            address: "127.0.0.1:0".into(),
        })
    }

    /// `127.0.0.1:<port>`, the fixture's `--listen`.
    pub fn address(&self) -> &str {
        &self.address
    }
}

/// A running HTTPS fixture.
pub struct HttpsFixture {
    bin: PathBuf,
    args: Vec<String>,
    /// Variables of the fixture's environment (the jitter of a transcript), on a restart too.
    env: Vec<(String, String)>,
    /// `127.0.0.1:<port>`: a restart listens on the same port.
    address: String,
    /// The port, held from the start to the drop of the fixture.
    _port: Reservation,
    pub url: String,
    child: Option<(Child, ChildStdout)>,
}

impl HttpsFixture {
    /// Starts the fixture on a free port of 127.0.0.1 (held by the harness, [`Reservation`]).
    pub fn start(bin: &Path, args: &[String]) -> Result<Self, String> {
        Self::start_with_env(bin, args, &[])
    }

    /// Starts the fixture on a free port of 127.0.0.1 with `env` in its environment.
    pub fn start_with_env(
        bin: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<Self, String> {
        let port = Reservation::new()?;
        let (child, stdout, url) = spawn(bin, port.address(), args, env)?;
        let address = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| format!("the fixture listens on a URL without a host: {url}"))?
            .to_string();
        Ok(Self {
            bin: bin.to_path_buf(),
            args: args.to_vec(),
            env: env.to_vec(),
            address,
            _port: port,
            url,
            child: Some((child, stdout)),
        })
    }

    /// Kills the fixture (SIGKILL) and waits for it.
    pub fn kill(&mut self) -> Result<(), String> {
        let Some((mut child, _)) = self.child.take() else {
            return Err("the HTTPS fixture is not running".into());
        };
        let _ = child.kill();
        child
            .wait()
            .map(|_| ())
            .map_err(|e| format!("cannot wait for the HTTPS fixture: {e}"))
    }

    /// Starts the fixture again on the same port, after killing it if it runs.
    pub fn restart(&mut self) -> Result<(), String> {
        if self.child.is_some() {
            self.kill()?;
        }
        let _taken = take_port_for_test(&self.address);
        let (child, stdout, url) = spawn(&self.bin, &self.address, &self.args, &self.env)?;
        if url != self.url {
            return Err(format!(
                "the restarted fixture listens on {url}, not {}",
                self.url
            ));
        }
        self.child = Some((child, stdout));
        Ok(())
    }
}

impl Drop for HttpsFixture {
    fn drop(&mut self) {
        if let Some((mut child, _)) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The forced reproduction of the races of a chosen port (docs/ci.md, "The hunt"): with
/// `HARNESS_TEST_TAKE_PORT=1`, another program's binds to port 0 (up to 200 000) run where the
/// port is not in use (the fixture down before its restart, the redirect port before the
/// sign-in), and the one that gets the port keeps it. With the port held ([`Reservation`]) none
/// gets it.
pub(crate) fn take_port_for_test(address: &str) -> Option<std::net::TcpListener> {
    std::env::var_os("HARNESS_TEST_TAKE_PORT")?;
    (0..200_000).find_map(|_| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
        let got = listener.local_addr().ok()?.to_string();
        (got == address).then_some(listener)
    })
}

/// Spawns the fixture and reads its first stdout line, `listening <url>`.
fn spawn(
    bin: &Path,
    listen: &str,
    args: &[String],
    env: &[(String, String)],
) -> Result<(Child, ChildStdout, String), String> {
    let mut child = Command::new(bin)
        .args(["--listen", listen])
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(crate::kept::stdio("fixture-https", "stderr"))
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        return Err("the HTTPS fixture has no stdout".into());
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let read = reader.read_line(&mut line);
        let _ = sender.send((read.map(|_| line), reader.into_inner()));
    });
    let outcome = receiver.recv_timeout(LISTEN_WAIT);
    let (line, stdout) = match outcome {
        Ok((Ok(line), stdout)) => (line, stdout),
        Ok((Err(e), _)) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("cannot read the stdout of the HTTPS fixture: {e}"));
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the HTTPS fixture printed no `listening` line in {} s",
                LISTEN_WAIT.as_secs()
            ));
        }
    };
    match line.trim_end().strip_prefix("listening ") {
        Some(url) => Ok((child, stdout, url.to_string())),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("the first line of the HTTPS fixture is {line:?}"))
        }
    }
}

/// Reads the body of `https` (both forms of [`Https`]).
pub fn parse(body: &serde_json::Value) -> Result<Https, String> {
    let https = match body {
        serde_json::Value::Array(_) => Vec::<String>::deserialize(body).map(|args| Https {
            args,
            ..Https::default()
        }),
        serde_json::Value::Object(_) => Https::deserialize(body),
        _ => return Err("https is an array of fixture arguments or {args, ca, sign_in}".into()),
    };
    https.map_err(|e| format!("https: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The hold keeps the port from a program that binds it, and a listener of the fixture
    /// still listens on it beside the hold (SO_REUSEADDR on both).
    #[cfg(unix)]
    #[test]
    fn a_held_port_is_no_other_program_s_and_the_fixture_still_listens_on_it() {
        let hold = Reservation::new().expect("a port");
        let address = hold.address().to_string();
        let plain = socket_without_reuse(&address);
        assert!(
            plain.is_err(),
            "another program bound the held port {address}"
        );
        let fixture = std::net::TcpListener::bind(&address).expect("the fixture's listener");
        drop(fixture);
        drop(hold);
        assert!(socket_without_reuse(&address).is_ok());
    }

    /// A bind without SO_REUSEADDR, as a program that did not choose the port would do.
    #[cfg(unix)]
    fn socket_without_reuse(address: &str) -> std::io::Result<tokio::net::TcpSocket> {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(address.parse().expect("an address"))?;
        Ok(socket)
    }

    #[test]
    fn reads_both_forms() {
        let https = parse(&json!(["--bearer-env", "T"])).unwrap_or_default();
        assert_eq!(https.args, ["--bearer-env", "T"]);
        assert_eq!(https.ca, Ca::Trusted);
        let https = parse(&json!({"args": ["--untrusted"], "ca": "untrusted"})).unwrap_or_default();
        assert_eq!(https.ca, Ca::Untrusted);
        let args = https.bridge_args("https://127.0.0.1:1/mcp");
        assert_eq!(args[0], "--ca-file");
        assert!(args[1].ends_with("untrusted-ca.crt"));
        assert_eq!(args[2], "https://127.0.0.1:1/mcp");
        let sse = parse(&json!({"args": [], "path": "/sse"})).unwrap_or_default();
        assert_eq!(
            sse.bridge_args("https://127.0.0.1:1/mcp")[2],
            "https://127.0.0.1:1/sse"
        );
        assert!(parse(&json!({"ca": "x"})).is_err());
        assert!(parse(&json!("x")).is_err());
    }
}

/// A step of a transcript on the HTTPS fixture: `{"https_fixture":"kill"}` or
/// `{"https_fixture":"restart"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Kill,
    Restart,
}

/// Reads the body of `https_fixture`.
pub fn parse_step(body: &serde_json::Value) -> Result<Step, String> {
    match body.as_str() {
        Some("kill") => Ok(Step::Kill),
        Some("restart") => Ok(Step::Restart),
        _ => Err("https_fixture is \"kill\" or \"restart\"".into()),
    }
}
