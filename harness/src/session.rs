//! One running transcript: the bridge, its upstream, the captures, the invariant checker, and
//! the primitives that the directives and the client steps share (send, next frame, expect).
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::format::{Scripted, Setup, Upstream};
use crate::invariants::{Checker, Schemas};
use crate::pattern::{self, Captures};
use crate::process::Bridge;
use crate::report::Failure;
use crate::upstream::{self, ScriptedUpstream};

/// What waiting for a frame gave.
#[derive(Debug)]
pub enum Next {
    Frame(Value),
    /// The bridge's stdout ended.
    Eof,
    /// Nothing within the bound.
    Timeout,
}

impl Next {
    /// The frame, or the failure that names what came instead.
    pub fn frame(self, bound: Duration) -> Result<Value, Failure> {
        match self {
            Next::Frame(f) => Ok(f),
            Next::Eof => Err(Failure::msg("the stdout of the bridge ended")),
            Next::Timeout => Err(Failure::msg(format!(
                "no frame from the bridge in {} ms",
                bound.as_millis()
            ))),
        }
    }
}

/// Where the binaries are.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub bridge: PathBuf,
    pub fixture: PathBuf,
    pub harness: PathBuf,
    /// M5 (`--embedded`): the fixture's own `--embedded` stands where the bridge and the
    /// fixture stand (one process, the bridge inside it).
    pub embedded: bool,
    /// `--windows`: the bridge, the fixture and the relay (`harness`) are Windows programs
    /// (windows.rs).
    pub windows: bool,
}

/// The state of the client simulator (client.rs).
#[derive(Debug, Default)]
pub struct Sim {
    /// The next id of a request of the simulator.
    pub next_id: i64,
    pub init_result: Option<Value>,
    pub tools: Vec<Value>,
    pub prompts: Vec<Value>,
    /// List changes seen and not yet followed by a new list.
    pub tools_changed: bool,
    pub prompts_changed: bool,
    /// Responses that came while the simulator waited for another one (id as JSON text).
    pub stash: std::collections::HashMap<String, Value>,
    /// The Copilot runtime took the 2026-07-28 path at `start` (a server checked directly
    /// answered its `server/discover` within the window): every request carries the envelope,
    /// and a call answers its input rounds itself (client/modern.rs).
    pub modern: bool,
}

/// A running transcript.
pub struct Session {
    pub setup: Setup,
    pub bridge: Bridge,
    pub upstream: Option<ScriptedUpstream>,
    /// The HTTPS fixture of `{"upstream":{"https":…}}`, killed when the session ends.
    pub https: Option<crate::https::HttpsFixture>,
    /// The redirect port of a sign-in, held until the session ends.
    pub redirect_port: Option<crate::sign_in::Held>,
    pub checker: Arc<Mutex<Checker>>,
    pub caps: Captures,
    /// Frames toward VS Code read but not consumed yet (a client step stashes them).
    pub pending: VecDeque<Value>,
    /// The exchange so far, for the failure report and `--verbose`.
    pub log: Vec<String>,
    pub forbidden: Vec<regex::Regex>,
    /// Patterns that every stderr line must match.
    pub required: Vec<regex::Regex>,
    pub sim: Sim,
    pub verbose: bool,
    pub started: Instant,
    /// The stdout of the bridge ended.
    pub stdout_done: bool,
    pub bins: Binaries,
    pub schemas: Schemas,
}

impl Session {
    /// Spawns the bridge (and binds the scripted upstream) for `setup`.
    pub fn start(
        setup: Setup,
        bins: &Binaries,
        schemas: Schemas,
        tag: &str,
        verbose: bool,
    ) -> Result<Self, String> {
        let mut checks = Checker::new(schemas.clone());
        checks.upstream_legacy = older_upstream(&setup.upstream);
        checks.direct = setup.direct;
        let checker = Arc::new(Mutex::new(checks));
        let subst = |s: &String| {
            s.replace("${fixture}", &bins.fixture.to_string_lossy())
                .replace("${harness}", &bins.harness.to_string_lossy())
        };
        let mut args: Vec<String> = setup.args.iter().map(subst).collect();
        // The jitter of this transcript (runner.rs): the processes started here get it too.
        let jitter = crate::jitter::env_seed(&setup.env);
        let jitter_env: Vec<(String, String)> = jitter
            .map(|seed| vec![(crate::jitter::SEED_VAR.to_string(), seed.to_string())])
            .unwrap_or_default();
        let mut up = None;
        let mut https = None;
        let mut redirect_port = None;
        match &setup.upstream {
            // No bridge: the fixture itself is the program under test (its own arguments).
            Upstream::Fixture(extra) if setup.direct => {
                args = extra.iter().map(subst).collect();
            }
            Upstream::Fixture(extra) if bins.embedded => {
                // The embedded bridge takes no options of the bridge (see runner::embedded_skip).
                // The Copilot harness tries server/discover first: with the server's answer it
                // would take the modern path, so its transcripts run with `refuse`, which
                // sends it to initialize and the input rounds of the bridge (M5).
                let policy = if setup.profile == crate::format::Profile::Copilot {
                    "--embedded=refuse"
                } else {
                    "--embedded"
                };
                args = vec![policy.into()];
                args.extend(extra.iter().map(subst));
            }
            Upstream::Fixture(extra) if setup.tap => {
                // The tap: the relay runs the fixture and shows the runner every frame.
                let s = ScriptedUpstream::listen(&Scripted::default(), checker.clone(), jitter)?;
                args.push("--".into());
                args.push(bins.harness.to_string_lossy().into_owned());
                args.push("upstream-relay".into());
                args.push(s.address.clone());
                args.push("--".into());
                args.push(bins.fixture.to_string_lossy().into_owned());
                args.extend(extra.iter().map(subst));
                up = Some(s);
            }
            Upstream::Fixture(extra) => {
                args.push("--".into());
                args.push(bins.fixture.to_string_lossy().into_owned());
                args.extend(extra.iter().map(subst));
            }
            Upstream::Command(cmd) => {
                args.push("--".into());
                args.extend(cmd.iter().map(subst));
            }
            Upstream::Scripted(opts) => {
                let s = ScriptedUpstream::listen(opts, checker.clone(), jitter)?;
                args.push("--".into());
                args.push(bins.harness.to_string_lossy().into_owned());
                args.push("upstream-relay".into());
                args.push(s.address.clone());
                if opts.stubborn {
                    args.push("--stubborn".into());
                }
                up = Some(s);
            }
            Upstream::None => {}
            Upstream::Https(opts) => {
                let extra: Vec<String> = opts.args.iter().map(subst).collect();
                let fixture =
                    crate::https::HttpsFixture::start_with_env(&bins.fixture, &extra, &jitter_env)?;
                if setup.direct {
                    // No bridge: the harness's own client of the URL (http_client.rs).
                    args = vec!["http-client".into()];
                }
                if opts.sign_in {
                    let (options, held) = crate::sign_in::bridge_options()?;
                    args.extend(options);
                    redirect_port = Some(held);
                }
                args.extend(opts.bridge_args(&fixture.url));
                https = Some(fixture);
            }
        }
        let program = if setup.direct && matches!(&setup.upstream, Upstream::Https(_)) {
            &bins.harness
        } else if bins.embedded || setup.direct {
            &bins.fixture
        } else {
            &bins.bridge
        };
        let bridge = Bridge::spawn(program, &args, &setup.env, tag)?;
        if matches!(&setup.upstream, Upstream::Https(opts) if opts.sign_in) {
            crate::sign_in::follow(
                &bridge.stderr,
                bins.fixture.clone(),
                crate::https::certs_dir().join("ca.crt"),
            );
        }
        let sim = Sim {
            next_id: if setup.profile == crate::format::Profile::Copilot {
                0
            } else {
                1
            },
            ..Sim::default()
        };
        Ok(Self {
            setup,
            bridge,
            upstream: up,
            https,
            redirect_port,
            checker,
            caps: Captures::new(),
            pending: VecDeque::new(),
            log: Vec::new(),
            forbidden: Vec::new(),
            required: Vec::new(),
            sim,
            verbose,
            started: Instant::now(),
            stdout_done: false,
            bins: bins.clone(),
            schemas,
        })
    }

    /// The default bound of a wait.
    pub fn bound(&self, within: Option<u64>) -> Duration {
        Duration::from_millis(within.unwrap_or(self.setup.timeout_ms))
    }

    pub fn note(&mut self, entry: String) {
        if self.verbose {
            eprintln!("    {:>7.3}s {entry}", self.started.elapsed().as_secs_f64());
        }
        self.log.push(entry);
    }

    /// The first problem the invariants found, as a failure.
    pub fn invariant_failure(&self) -> Option<Failure> {
        let c = self.checker.lock().ok()?;
        let p = c.problems.first()?;
        Some(Failure {
            message: format!("global invariant: {p}"),
            expected: None,
            actual: c.first_bad.clone().map(Box::new),
        })
    }

    /// Sends a frame to the bridge (one line), recording its id for the checks.
    pub async fn send_frame(&mut self, frame: &Value) -> Result<(), Failure> {
        if let Ok(mut c) = self.checker.lock() {
            c.client_sent(frame);
        }
        if let Some(id) = frame.get("id").and_then(Value::as_i64) {
            // High-level steps never reuse an id that the transcript sent itself.
            self.sim.next_id = self.sim.next_id.max(id + 1);
        }
        let text = frame.to_string();
        self.note(format!("→ bridge  {text}"));
        self.bridge
            .write(format!("{text}\n").as_bytes())
            .await
            .map_err(Failure::msg)
    }

    /// Sends raw bytes (a line that is not valid, or bytes without a newline).
    pub async fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        if let Ok(mut c) = self.checker.lock() {
            c.client_sent_raw(&text);
        }
        self.note(format!("→ bridge  (raw) {:?}", text));
        self.bridge.write(bytes).await.map_err(Failure::msg)
    }

    /// The next frame from the bridge within `bound`, checked by the invariants. Frames stashed
    /// by a client step come first.
    pub async fn next_frame(&mut self, bound: Duration) -> Result<Next, Failure> {
        if let Some(f) = self.pending.pop_front() {
            return Ok(Next::Frame(f));
        }
        let deadline = Instant::now() + bound;
        loop {
            if self.stdout_done {
                return Ok(Next::Eof);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match tokio::time::timeout(left, self.bridge.stdout.recv()).await {
                Err(_) => return Ok(Next::Timeout),
                Ok(None) => {
                    self.stdout_done = true;
                    return Ok(Next::Eof);
                }
                Ok(Some(line)) => line,
            };
            let text = String::from_utf8_lossy(&line.bytes).into_owned();
            self.note(format!("← bridge  {text}"));
            let frame = match self.checker.lock() {
                Ok(mut c) => {
                    if !line.terminated {
                        c.problems.push("R7: stdout ends without a newline".into());
                    }
                    c.toward_client(&line.bytes)
                }
                Err(_) => None,
            };
            // A broken invariant fails the step after the step's own match, so that a
            // mismatch still shows its diff (runner.rs).
            if let Some(frame) = frame {
                return Ok(Next::Frame(frame));
            }
        }
    }

    /// The next frame that no `ignore` pattern of the setup matches.
    pub async fn next_relevant(&mut self, deadline: Instant) -> Result<Next, Failure> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = match self.next_frame(left).await? {
                Next::Frame(f) => f,
                other => return Ok(other),
            };
            let ignored = self.setup.ignore.iter().any(|p| {
                let mut scratch = self.caps.clone();
                pattern::matches(p, &frame, &mut scratch).is_ok()
            });
            if !ignored {
                return Ok(Next::Frame(frame));
            }
        }
    }

    /// The next frame the bridge wrote to the upstream (scripted upstream only).
    pub async fn next_upstream(&mut self, bound: Duration) -> Result<upstream::Event, Failure> {
        let up = self
            .upstream
            .as_mut()
            .ok_or_else(|| Failure::msg("the transcript has no scripted upstream"))?;
        let ev = tokio::time::timeout(bound, up.events.recv())
            .await
            .map_err(|_| {
                Failure::msg(format!(
                    "nothing at the upstream in {} ms",
                    bound.as_millis()
                ))
            })?
            .ok_or_else(|| Failure::msg("the upstream side ended"))?;
        let text = match &ev {
            upstream::Event::Frame(f) => f.to_string(),
            other => format!("{other:?}"),
        };
        self.note(format!("→ upstream {text}"));
        Ok(ev)
    }

    /// Checks the forbidden stderr patterns, and the patterns every line must match, against
    /// every line so far.
    pub fn check_forbidden(&self) -> Result<(), Failure> {
        for line in self.bridge.stderr.snapshot() {
            if let Some(re) = self.forbidden.iter().find(|re| re.is_match(&line)) {
                return Err(Failure::msg(format!(
                    "a forbidden stderr line (/{re}/): {line}"
                )));
            }
            if let Some(re) = self.required.iter().find(|re| !re.is_match(&line)) {
                return Err(Failure::msg(format!(
                    "a stderr line that does not match /{re}/: {line}"
                )));
            }
        }
        Ok(())
    }

    /// Waits for a stderr line that matches `re` (any line so far counts).
    pub async fn wait_stderr(
        &mut self,
        re: &regex::Regex,
        bound: Duration,
    ) -> Result<String, Failure> {
        self.wait_stderr_at(re, bound).await.map(|(_, line)| line)
    }

    /// Waits for a stderr line that matches `re`; gives the first such line and its index among
    /// the stderr lines (from 0).
    pub async fn wait_stderr_at(
        &mut self,
        re: &regex::Regex,
        bound: Duration,
    ) -> Result<(usize, String), Failure> {
        let deadline = Instant::now() + bound;
        let mut changed = self.bridge.stderr.changed.clone();
        let matched = || {
            self.bridge
                .stderr
                .snapshot()
                .into_iter()
                .enumerate()
                .find(|(_, l)| re.is_match(l))
        };
        loop {
            if let Some(l) = matched() {
                return Ok(l);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, changed.changed()).await {
                Ok(Ok(())) => {}
                // Timed out, or stderr ended: look one last time, then fail.
                _ => {
                    return matched().ok_or_else(|| {
                        Failure::msg(format!(
                            "no stderr line matched /{re}/ in {} ms",
                            bound.as_millis()
                        ))
                    });
                }
            }
        }
    }
}

/// Whether the upstream is the fixture of revision 2025-11-25 (`--revision 2025-11-25` in its
/// arguments) or a scripted server that says `"older": true`: its side is checked against the
/// schema of 2025-11-25 (docs/harness.md).
pub fn older_upstream(upstream: &Upstream) -> bool {
    let args = match upstream {
        Upstream::Fixture(args) => args,
        Upstream::Https(opts) => &opts.args,
        Upstream::Scripted(scripted) => return scripted.older,
        _ => return false,
    };
    let legacy = crate::schema::LEGACY;
    args.windows(2)
        .any(|pair| pair[0] == "--revision" && pair[1] == legacy)
        || args
            .iter()
            .any(|arg| *arg == format!("--revision={legacy}"))
}
