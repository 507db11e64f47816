//! The transcript format: one JSON object a line, the first member names the directive. Blank
//! lines and lines that start with `#` are comments; any directive may have a `note` member.
//! `transcripts/README.md` documents every directive with an example.
//!
//! The parser checks every member name, so that a typo fails the transcript at load time instead
//! of turning into an expectation that is silently not checked: the setup line in setup.rs, the
//! directives and the options of the client steps in action.rs. The format depends on no
//! module that runs transcripts.
mod action;
mod setup;

use std::path::{Path, PathBuf};

pub use action::{check_options, list_method};

use serde_json::{Map, Value};

/// A parsed transcript.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub path: PathBuf,
    pub setup: Setup,
    pub steps: Vec<Step>,
}

/// One directive with its place in the file, for the failure report.
#[derive(Debug, Clone)]
pub struct Step {
    pub line: usize,
    pub text: String,
    pub action: Action,
}

/// Which of VS Code's two clients the high-level steps behave like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The Local harness: integer ids from 1, UUID progress tokens.
    Local,
    /// The Copilot harness: server/discover with id 0 first, progress token 0.
    Copilot,
    /// Only raw frames; the high-level steps are refused.
    Raw,
}

/// Faithful: the simulator does what VS Code does (keeps paging on `nextCursor`, up to a cap).
/// Assert: each such case is a failure that names the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Faithful,
    Assert,
}

/// Where the bridge's upstream comes from.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// `bridge-fixture-server` with these arguments.
    Fixture(Vec<String>),
    /// The runner plays the upstream through `harness upstream-relay`.
    Scripted(Scripted),
    /// Any command (after `--`).
    Command(Vec<String>),
    /// No `--` and no command: `args` is the whole argument list (tests of the command line).
    None,
    /// `bridge-fixture-server --listen 127.0.0.1:0` reached by its URL (https.rs).
    Https(crate::https::Https),
}

/// Options of the scripted upstream (setup.rs reads them: serde, no other member).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default = "setup::scripted_default", deny_unknown_fields)]
pub struct Scripted {
    /// The result the runner gives to every `server/discover` by itself; `None` leaves the
    /// discover to the transcript (`"discover": "manual"`).
    #[serde(deserialize_with = "setup::discover")]
    pub discover: Option<Value>,
    /// Other methods answered by the runner itself: a `{"result":…}` / `{"error":…}` object,
    /// `"hang"` (never answered), or an array of them used in turn (the last one repeats). These
    /// requests never reach `upstream_expect`.
    #[serde(deserialize_with = "setup::auto")]
    pub auto: Map<String, Value>,
    /// The relay ignores the end of its stdin and the termination signal, like a stuck server.
    pub stubborn: bool,
    /// The transcript plays a server of revision 2025-11-25 (with `"discover": "manual"` it
    /// refuses `server/discover` itself): its side is checked against the schema of 2025-11-25.
    pub older: bool,
}

/// The setup line (setup.rs reads it: serde, no other member than these and `note`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Setup {
    pub profile: Profile,
    pub mode: Mode,
    pub args: Vec<String>,
    #[serde(deserialize_with = "setup::env")]
    pub env: Vec<(String, String)>,
    #[serde(deserialize_with = "setup::upstream")]
    pub upstream: Upstream,
    /// The default bound of every wait of the transcript.
    pub timeout_ms: u64,
    /// Frames from the bridge that `expect` skips (they are still checked by the invariants).
    pub ignore: Vec<Value>,
    /// The fixture runs behind the tap of the relay, so that its frames are checked too; false
    /// starts it directly (the process tree and the default name are then the fixture's own).
    pub tap: bool,
    /// Why the transcript does not hold for the embedded bridge (M5), if it does not: the
    /// `--embedded` run skips it with this reason.
    pub embedded: Option<String>,
    /// Why the transcript does not hold for the Windows bridge: the `--windows` run skips it.
    pub windows: Option<String>,
    /// No bridge: the client talks to the fixture itself (docs/harness.md, "An older
    /// upstream"), with the fixture's arguments of `upstream`.
    pub direct: bool,
    /// The revisions of the fixture that the transcript is replayed against, one run each
    /// (docs/harness.md, "One transcript, both eras"); empty: once, as written.
    pub eras: Vec<String>,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            profile: Profile::Raw,
            mode: Mode::Assert,
            args: Vec::new(),
            env: Vec::new(),
            upstream: Upstream::Fixture(Vec::new()),
            timeout_ms: 5000,
            ignore: Vec::new(),
            tap: true,
            direct: false,
            embedded: None,
            windows: None,
            eras: Vec::new(),
        }
    }
}

/// The revisions that `eras` may name: the fixture's own, and its older one.
pub const ERAS: [&str; 2] = ["2026-07-28", "2025-11-25"];

/// A transcript once per era of its setup (as written when it names none): the older era
/// runs the same steps against the fixture with `--revision 2025-11-25`, and its path says
/// the era (`… [2025-11-25]`), so that a failure names the run.
pub fn by_era(t: Transcript) -> Vec<Transcript> {
    if t.setup.eras.is_empty() {
        return vec![t];
    }
    t.setup
        .eras
        .iter()
        .map(|era| {
            let mut run = t.clone();
            run.setup.eras = Vec::new();
            if era != ERAS[0] {
                let revision = ["--revision".to_owned(), era.clone()];
                match &mut run.setup.upstream {
                    Upstream::Fixture(args) => args.extend(revision),
                    Upstream::Https(https) => https.args.extend(revision),
                    _ => {}
                }
            }
            let mut label = run.path.into_os_string();
            label.push(format!(" [{era}]"));
            run.path = label.into();
            run
        })
        .collect()
}

/// The order of an `expect` group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Strict,
    Any,
}

/// Every directive of the format.
#[derive(Debug, Clone)]
pub enum Action {
    Send(Value),
    SendRaw {
        text: String,
        newline: bool,
    },
    SendHex(Vec<u8>),
    Expect {
        patterns: Vec<Value>,
        order: Order,
        within_ms: Option<u64>,
    },
    ExpectSilence {
        ms: u64,
    },
    UpstreamExpect {
        pattern: Value,
        within_ms: Option<u64>,
    },
    UpstreamReply {
        to: Option<Value>,
        body: Map<String, Value>,
        delay_ms: u64,
    },
    UpstreamSend(Value),
    UpstreamSendRaw(String),
    UpstreamExit(i32),
    UpstreamCloseStdout,
    /// Kills or restarts the HTTPS fixture (https.rs).
    HttpsFixture(crate::https::Step),
    UpstreamExpectEof {
        within_ms: Option<u64>,
    },
    UpstreamExpectSilence {
        ms: u64,
    },
    CloseStdin,
    Signal {
        name: String,
        tree: bool,
    },
    /// The exit within the bound: with `code` (`None`: any), or, with `signal`, killed by that
    /// signal (TERM, KILL or INT) without an exit code.
    ExpectExit {
        code: Option<i32>,
        signal: Option<String>,
        within_ms: Option<u64>,
    },
    ExpectStderr {
        regex: String,
        within_ms: Option<u64>,
    },
    /// Lines that match these regexes, in this order: the first line that matches each regex
    /// comes after the first line that matches the regex before it.
    ExpectStderrOrder {
        regexes: Vec<String>,
        within_ms: Option<u64>,
    },
    ForbidStderr(String),
    /// Every stderr line, before and after, must match (R7: the tag of each log line).
    StderrAll(String),
    Pause(u64),
    Set(Map<String, Value>),
    /// N more bridges that start, call add and stop together (crowd.rs).
    Crowd {
        count: usize,
        within_ms: Option<u64>,
    },
    /// High-level client steps (client.rs); their options are checked at load time (action.rs).
    Client {
        step: ClientStep,
        opts: Map<String, Value>,
    },
}

/// The high-level steps of the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientStep {
    Start,
    List,
    Call,
    Stop,
    ToolIds,
    /// `subscriptions/listen` on the Copilot runtime's 2026-07-28 path (client/modern.rs).
    Listen,
}

/// True when the transcript starts `bridge-fixture-server`: as its upstream (tapped, directly,
/// or over HTTPS), or by `${fixture}` in its arguments or command.
pub fn uses_fixture(t: &Transcript) -> bool {
    let named = |v: &[String]| v.iter().any(|a| a.contains("${fixture}"));
    let upstream = match &t.setup.upstream {
        Upstream::Fixture(_) | Upstream::Https(_) => true,
        Upstream::Command(cmd) => named(cmd),
        Upstream::Scripted(_) | Upstream::None => false,
    };
    upstream || named(&t.setup.args)
}

/// Reads and parses a transcript file.
pub fn load(path: &Path) -> Result<Transcript, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(path, &text)
}

/// Parses the text of a transcript.
pub fn parse(path: &Path, text: &str) -> Result<Transcript, String> {
    let mut setup = None;
    let mut steps = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let value: Value = serde_json::from_str(trimmed)
            .map_err(|e| format!("line {line}: not a JSON object: {e}"))?;
        let Value::Object(mut obj) = value else {
            return Err(format!("line {line}: not a JSON object"));
        };
        obj.remove("note");
        let Some(key) = obj.keys().next().cloned() else {
            return Err(format!("line {line}: empty directive"));
        };
        if key == "setup" {
            if setup.is_some() || !steps.is_empty() {
                return Err(format!(
                    "line {line}: setup must be the first directive, once"
                ));
            }
            let body = obj.remove("setup").unwrap_or(Value::Null);
            only(&obj, &[], line)?;
            setup = Some(setup::parse_setup(body).map_err(|e| format!("line {line}: setup: {e}"))?);
            continue;
        }
        let action =
            action::parse_action(&key, obj).map_err(|e| format!("line {line}: {key}: {e}"))?;
        steps.push(Step {
            line,
            text: trimmed.to_string(),
            action,
        });
    }
    Ok(Transcript {
        path: path.to_path_buf(),
        setup: setup.unwrap_or_default(),
        steps,
    })
}

/// Refuses members other than `allowed` (the directive's own key is removed before).
fn only(obj: &Map<String, Value>, allowed: &[&str], line: usize) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("line {line}: unknown member '{k}'")),
        None => Ok(()),
    }
}

pub(crate) fn strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what} must be an array of strings"))?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{what} must be strings"))
        })
        .collect()
}

pub(crate) fn u64_of(v: Option<&Value>, what: &str) -> Result<Option<u64>, String> {
    match v {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{what} must be a number of ms")),
    }
}

#[cfg(test)]
mod modern_tests;

#[cfg(test)]
mod tests {
    //! The parser's tests.
    use super::*;

    fn p(text: &str) -> Result<Transcript, String> {
        parse(Path::new("t.jsonl"), text)
    }

    #[test]
    fn parses_setup_and_steps_with_line_numbers() {
        let t = p(r#"# a comment
    {"setup":{"profile":"local","upstream":{"scripted":{"stubborn":true}},"args":["--name","x"]}}

    {"send":{"jsonrpc":"2.0","id":1,"method":"ping"},"note":"why"}
    {"expect":{"id":1,"result":{}},"within_ms":100}
    {"expect":[{"id":2},{"id":3}],"order":"any"}
    {"send_hex":"7b 0a"}
    "#)
        .unwrap();
        assert_eq!(t.setup.profile, Profile::Local);
        assert!(
            matches!(&t.setup.upstream, Upstream::Scripted(s) if s.stubborn && s.discover.is_some())
        );
        assert_eq!(t.steps.len(), 4);
        assert_eq!(t.steps[0].line, 4);
        assert!(
            matches!(&t.steps[2].action, Action::Expect { patterns, order: Order::Any, .. } if patterns.len() == 2)
        );
        assert!(matches!(&t.steps[3].action, Action::SendHex(b) if b == &vec![0x7b, 0x0a]));
    }

    #[test]
    fn refuses_unknown_members_and_directives() {
        assert!(
            p(r#"{"expect":{"id":1},"whithin_ms":3}"#)
                .unwrap_err()
                .contains("whithin_ms")
        );
        assert!(
            p(r#"{"expct":{}}"#)
                .unwrap_err()
                .contains("unknown directive")
        );
        assert!(p(r#"{"setup":{"profil":"local"}}"#).is_err());
        assert!(
            p("{\"send\":1}\n{\"setup\":{}}")
                .unwrap_err()
                .contains("first")
        );
        assert!(p(r#"{"upstream_reply":{"result":{},"error":{}}}"#).is_err());
        assert!(p(r#"{"expect_stderr":"("}"#).is_err());
        assert!(p(r#"{"expect_stderr_order":["^a$"]}"#).is_err());
        assert!(p(r#"{"expect_stderr_order":["^a$","("]}"#).is_err());
        assert!(p(r#"{"expect_exit":"HUP"}"#).is_err());
    }

    #[test]
    fn exit_by_signal_and_ordered_stderr() {
        let t = p(r#"{"expect_exit":"TERM","within_ms":3000}
    {"expect_exit":null}
    {"expect_exit":1}
    {"expect_stderr_order":["^a$","^b$"],"within_ms":2000}
    "#)
        .unwrap();
        assert!(matches!(&t.steps[0].action,
                Action::ExpectExit { code: None, signal: Some(s), within_ms: Some(3000) } if s == "TERM"));
        assert!(matches!(
            &t.steps[1].action,
            Action::ExpectExit {
                code: None,
                signal: None,
                ..
            }
        ));
        assert!(matches!(
            &t.steps[2].action,
            Action::ExpectExit {
                code: Some(1),
                signal: None,
                ..
            }
        ));
        assert!(matches!(&t.steps[3].action,
                Action::ExpectStderrOrder { regexes, within_ms: Some(2000) } if regexes.len() == 2));
    }

    #[test]
    fn manual_discover_and_auto_replies() {
        let t = p(r#"{"setup":{"upstream":{"scripted":{"discover":"manual","auto":{"subscriptions/listen":"hang"}}}}}"#)
                .unwrap();
        let Upstream::Scripted(s) = t.setup.upstream else {
            panic!("scripted")
        };
        assert!(s.discover.is_none());
        assert_eq!(s.auto.len(), 1);
        assert!(p(r#"{"setup":{"upstream":{"scripted":{"auto":{"x":{}}}}}}"#).is_err());
    }

    #[test]
    fn client_step_values_hold_options_too() {
        let t = p(r#"{"setup":{"profile":"local"}}
    {"start":{"expect":{"a":1}}}
    {"stop":{},"code":0,"within_ms":2000}
    {"call":"add","arguments":{"a":1},"expect_text":"2"}
    "#)
        .unwrap();
        let Action::Client { opts, .. } = &t.steps[0].action else {
            panic!("a client step")
        };
        assert_eq!(opts["expect"], serde_json::json!({"a":1}));
        let Action::Client { opts, .. } = &t.steps[1].action else {
            panic!("a client step")
        };
        assert_eq!(opts["within_ms"], serde_json::json!(2000));
        let Action::Client { opts, .. } = &t.steps[2].action else {
            panic!("a client step")
        };
        assert_eq!(opts["value"], serde_json::json!("add"));
        assert!(
            p(r#"{"stop":{"code":0},"code":1}"#)
                .unwrap_err()
                .contains("twice")
        );
        assert!(
            p(r#"{"call":"add","bogus":1}"#)
                .unwrap_err()
                .contains("bogus")
        );
    }

    #[test]
    fn client_step_options_are_checked() {
        use serde_json::json;
        let mut o = Map::new();
        o.insert("value".into(), json!("tools"));
        assert!(check_options(ClientStep::List, &o).is_ok());
        o.insert("bogus".into(), json!(1));
        assert!(check_options(ClientStep::List, &o).is_err());
        let mut o = Map::new();
        o.insert("value".into(), json!("nope"));
        assert!(check_options(ClientStep::List, &o).is_err());
        let o = Map::new();
        assert!(check_options(ClientStep::Call, &o).is_err());
    }

    #[test]
    fn the_fixture_is_needed_only_when_a_transcript_starts_it() {
        let uses = |text: &str| uses_fixture(&p(text).unwrap());
        assert!(uses(r#"{"setup":{"upstream":"fixture"}}"#));
        assert!(
            uses(r#"{"send":{}}"#),
            "the default upstream is the fixture"
        );
        assert!(!uses(r#"{"setup":{"upstream":"scripted"}}"#));
        assert!(!uses(r#"{"setup":{"upstream":"none","args":["--help"]}}"#));
        assert!(uses(
            r#"{"setup":{"upstream":{"command":["sh","-c","exec ${fixture}"]}}}"#
        ));
    }

    #[test]
    fn a_transcript_with_two_eras_runs_twice_the_older_with_the_revision_of_the_fixture() {
        let t = p(
            r#"{"setup":{"upstream":{"fixture":["--x"]},"eras":["2026-07-28","2025-11-25"]}}
{"send":1}"#,
        )
        .unwrap();
        let runs = by_era(t);
        assert_eq!(runs.len(), 2);
        assert!(matches!(&runs[0].setup.upstream, Upstream::Fixture(a) if a == &["--x"]));
        assert!(
            matches!(&runs[1].setup.upstream, Upstream::Fixture(a) if a == &["--x", "--revision", "2025-11-25"])
        );
        assert!(runs[1].path.to_string_lossy().ends_with(" [2025-11-25]"));
        assert_eq!(runs[1].steps.len(), 1);
        assert!(p(r#"{"setup":{"eras":["2024-01-01"]}}"#).is_err());
        assert!(p(r#"{"setup":{"upstream":"scripted","eras":["2025-11-25"]}}"#).is_err());
    }

    /// The setup lines of every transcript of the repository parse (the serde form of
    /// setup.rs accepts what the transcripts say), and so do all their other lines.
    #[test]
    fn every_transcript_of_the_repository_parses() {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    out.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../transcripts"),
            &mut files,
        );
        assert!(files.len() > 50, "{} transcripts", files.len());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            if let Err(e) = parse(&file, &text) {
                panic!("{}: {e}", file.display());
            }
        }
    }
}
