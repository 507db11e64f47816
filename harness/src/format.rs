//! The transcript format: one JSON object a line, the first member names the directive. Blank
//! lines and lines that start with `#` are comments; any directive may have a `note` member.
//! `transcripts/README.md` documents every directive with an example.
//!
//! The parser checks every member name, so that a typo fails the transcript at load time instead
//! of turning into an expectation that is silently not checked.
use std::path::{Path, PathBuf};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Options of the scripted upstream.
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    /// The result the runner gives to every `server/discover` by itself; `None` leaves the
    /// discover to the transcript (`"discover": "manual"`).
    pub discover: Option<Value>,
    /// Other methods answered by the runner itself: a `{"result":…}` / `{"error":…}` object,
    /// `"hang"` (never answered), or an array of them used in turn (the last one repeats). These
    /// requests never reach `upstream_expect`.
    pub auto: Map<String, Value>,
    /// The relay ignores the end of its stdin and the termination signal, like a stuck server.
    pub stubborn: bool,
}

/// The setup line.
#[derive(Debug, Clone)]
pub struct Setup {
    pub profile: Profile,
    pub mode: Mode,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub upstream: Upstream,
    /// The default bound of every wait of the transcript.
    pub timeout_ms: u64,
    /// Frames from the bridge that `expect` skips (they are still checked by the invariants).
    pub ignore: Vec<Value>,
    /// The fixture runs behind the tap of the relay, so that its frames are checked too; false
    /// starts it directly (the process tree and the default name are then the fixture's own).
    pub tap: bool,
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
        }
    }
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
    /// High-level client steps (client.rs); the options are checked there.
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
            setup = Some(parse_setup(body).map_err(|e| format!("line {line}: setup: {e}"))?);
            continue;
        }
        let action = parse_action(&key, obj).map_err(|e| format!("line {line}: {key}: {e}"))?;
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

fn strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
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

fn u64_of(v: Option<&Value>, what: &str) -> Result<Option<u64>, String> {
    match v {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{what} must be a number of ms")),
    }
}

fn parse_setup(body: Value) -> Result<Setup, String> {
    let Value::Object(obj) = body else {
        return Err("must be an object".into());
    };
    let mut s = Setup::default();
    for (k, v) in &obj {
        match k.as_str() {
            "profile" => {
                s.profile = match v.as_str() {
                    Some("local") => Profile::Local,
                    Some("copilot") => Profile::Copilot,
                    Some("raw") => Profile::Raw,
                    _ => return Err("profile is local, copilot or raw".into()),
                }
            }
            "mode" => {
                s.mode = match v.as_str() {
                    Some("faithful") => Mode::Faithful,
                    Some("assert") => Mode::Assert,
                    _ => return Err("mode is faithful or assert".into()),
                }
            }
            "args" => s.args = strings(v, "args")?,
            "env" => {
                let map = v.as_object().ok_or("env must be an object")?;
                for (name, val) in map {
                    let val = val.as_str().ok_or("env values must be strings")?;
                    s.env.push((name.clone(), val.to_string()));
                }
            }
            "upstream" => s.upstream = parse_upstream(v)?,
            "timeout_ms" => s.timeout_ms = v.as_u64().ok_or("timeout_ms must be a number")?,
            "ignore" => s.ignore = v.as_array().ok_or("ignore must be an array")?.clone(),
            "tap" => s.tap = v.as_bool().ok_or("tap must be a boolean")?,
            "note" => {}
            other => return Err(format!("unknown member '{other}'")),
        }
    }
    Ok(s)
}

fn parse_upstream(v: &Value) -> Result<Upstream, String> {
    match v {
        Value::String(s) if s == "fixture" => Ok(Upstream::Fixture(Vec::new())),
        Value::String(s) if s == "scripted" => Ok(Upstream::Scripted(Scripted {
            discover: Some(Value::String("default".into())),
            ..Scripted::default()
        })),
        Value::String(s) if s == "none" => Ok(Upstream::None),
        Value::Object(o) if o.len() == 1 => {
            let (k, body) = o.iter().next().ok_or("empty upstream")?;
            match k.as_str() {
                "fixture" => Ok(Upstream::Fixture(strings(body, "fixture")?)),
                "command" => {
                    let cmd = strings(body, "command")?;
                    if cmd.is_empty() {
                        return Err("command must not be empty".into());
                    }
                    Ok(Upstream::Command(cmd))
                }
                "scripted" => parse_scripted(body).map(Upstream::Scripted),
                "https" => crate::https::parse(body).map(Upstream::Https),
                other => Err(format!("unknown upstream '{other}'")),
            }
        }
        _ => Err(
            "upstream is \"fixture\", \"scripted\", \"none\", or {fixture|command|scripted|https: …}"
                .into(),
        ),
    }
}

fn parse_scripted(body: &Value) -> Result<Scripted, String> {
    let obj = body.as_object().ok_or("scripted must be an object")?;
    let mut s = Scripted {
        discover: Some(Value::String("default".into())),
        ..Scripted::default()
    };
    for (k, v) in obj {
        match k.as_str() {
            "discover" => {
                s.discover = if v == "manual" { None } else { Some(v.clone()) };
            }
            "auto" => {
                let auto = v.as_object().ok_or("auto must be an object")?;
                for (method, reply) in auto {
                    // An array gives the replies in turn (pages, a sequence of results); the
                    // last one repeats.
                    let replies: Vec<&Value> = match reply {
                        Value::Array(list) => list.iter().collect(),
                        one => vec![one],
                    };
                    let valid = |r: &&Value| {
                        *r == "hang" || r.get("result").is_some() || r.get("error").is_some()
                    };
                    if replies.is_empty() || !replies.iter().all(valid) {
                        return Err(format!(
                            "auto.{method}: {{\"result\":…}}, {{\"error\":…}}, \"hang\", or an array of them"
                        ));
                    }
                }
                s.auto = auto.clone();
            }
            "stubborn" => s.stubborn = v.as_bool().ok_or("stubborn must be a boolean")?,
            other => return Err(format!("unknown member '{other}'")),
        }
    }
    Ok(s)
}

fn parse_action(key: &str, mut obj: Map<String, Value>) -> Result<Action, String> {
    let body = obj.remove(key).unwrap_or(Value::Null);
    let check = |obj: &Map<String, Value>, allowed: &[&str]| match obj
        .keys()
        .find(|k| !allowed.contains(&k.as_str()))
    {
        Some(k) => Err(format!("unknown member '{k}'")),
        None => Ok(()),
    };
    let within = |obj: &Map<String, Value>| u64_of(obj.get("within_ms"), "within_ms");
    Ok(match key {
        "send" => {
            check(&obj, &[])?;
            Action::Send(body)
        }
        "send_raw" => {
            check(&obj, &["newline"])?;
            let text = body.as_str().ok_or("must be a string")?.to_string();
            let newline = obj.get("newline").and_then(Value::as_bool).unwrap_or(true);
            Action::SendRaw { text, newline }
        }
        "send_hex" => {
            check(&obj, &[])?;
            Action::SendHex(hex(body
                .as_str()
                .ok_or("must be a string of hex digits")?)?)
        }
        "expect" => {
            check(&obj, &["within_ms", "order"])?;
            let order = match obj.get("order").and_then(Value::as_str) {
                None | Some("strict") => Order::Strict,
                Some("any") => Order::Any,
                Some(o) => return Err(format!("order '{o}' is strict or any")),
            };
            // An array is a group of frames; a single frame pattern is an object.
            let patterns = match body {
                Value::Array(items) => items,
                Value::Object(_) => vec![body],
                _ => return Err("an object pattern or an array of them".into()),
            };
            Action::Expect {
                patterns,
                order,
                within_ms: within(&obj)?,
            }
        }
        "expect_silence" => {
            check(&obj, &[])?;
            Action::ExpectSilence {
                ms: body.as_u64().ok_or("must be a number of ms")?,
            }
        }
        "upstream_expect" => {
            check(&obj, &["within_ms"])?;
            Action::UpstreamExpect {
                pattern: body,
                within_ms: within(&obj)?,
            }
        }
        "upstream_reply" => {
            check(&obj, &["to", "delay_ms"])?;
            let body = body
                .as_object()
                .ok_or("must be {\"result\":…} or {\"error\":…}")?
                .clone();
            if body.contains_key("result") == body.contains_key("error") {
                return Err("exactly one of result and error".into());
            }
            Action::UpstreamReply {
                to: obj.get("to").cloned(),
                body,
                delay_ms: u64_of(obj.get("delay_ms"), "delay_ms")?.unwrap_or(0),
            }
        }
        "upstream_send" => {
            check(&obj, &[])?;
            Action::UpstreamSend(body)
        }
        "upstream_send_raw" => {
            check(&obj, &[])?;
            Action::UpstreamSendRaw(body.as_str().ok_or("must be a string")?.to_string())
        }
        "upstream_exit" => {
            check(&obj, &[])?;
            let code = body
                .as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .ok_or("an exit code")?;
            Action::UpstreamExit(code)
        }
        "upstream_close_stdout" => {
            check(&obj, &[])?;
            Action::UpstreamCloseStdout
        }
        "https_fixture" => {
            check(&obj, &[])?;
            Action::HttpsFixture(crate::https::parse_step(&body)?)
        }
        "upstream_expect_eof" => {
            check(&obj, &["within_ms"])?;
            Action::UpstreamExpectEof {
                within_ms: within(&obj)?,
            }
        }
        "upstream_expect_silence" => {
            check(&obj, &[])?;
            Action::UpstreamExpectSilence {
                ms: body.as_u64().ok_or("must be a number of ms")?,
            }
        }
        "close_stdin" => {
            check(&obj, &[])?;
            Action::CloseStdin
        }
        "signal" => {
            check(&obj, &["tree"])?;
            let name = body.as_str().ok_or("TERM, KILL or INT")?.to_string();
            if !["TERM", "KILL", "INT"].contains(&name.as_str()) {
                return Err("TERM, KILL or INT".into());
            }
            Action::Signal {
                name,
                tree: obj.get("tree").and_then(Value::as_bool).unwrap_or(false),
            }
        }
        "expect_exit" => {
            check(&obj, &["within_ms"])?;
            let (code, signal) = match body {
                Value::Null => (None, None),
                Value::String(name) if ["TERM", "KILL", "INT"].contains(&name.as_str()) => {
                    (None, Some(name))
                }
                v => (
                    Some(
                        v.as_i64()
                            .and_then(|c| i32::try_from(c).ok())
                            .ok_or("an exit code, null, or a signal: TERM, KILL or INT")?,
                    ),
                    None,
                ),
            };
            Action::ExpectExit {
                code,
                signal,
                within_ms: within(&obj)?,
            }
        }
        "expect_stderr" => {
            check(&obj, &["within_ms"])?;
            let regex = body.as_str().ok_or("a regex")?.to_string();
            regex::Regex::new(&regex).map_err(|e| e.to_string())?;
            Action::ExpectStderr {
                regex,
                within_ms: within(&obj)?,
            }
        }
        "expect_stderr_order" => {
            check(&obj, &["within_ms"])?;
            let regexes = strings(&body, "expect_stderr_order")?;
            if regexes.len() < 2 {
                return Err("an array of two regexes or more".into());
            }
            for r in &regexes {
                regex::Regex::new(r).map_err(|e| e.to_string())?;
            }
            Action::ExpectStderrOrder {
                regexes,
                within_ms: within(&obj)?,
            }
        }
        "forbid_stderr" => {
            check(&obj, &[])?;
            let regex = body.as_str().ok_or("a regex")?.to_string();
            regex::Regex::new(&regex).map_err(|e| e.to_string())?;
            Action::ForbidStderr(regex)
        }
        "expect_stderr_all" => {
            check(&obj, &[])?;
            let regex = body.as_str().ok_or("a regex")?.to_string();
            regex::Regex::new(&regex).map_err(|e| e.to_string())?;
            Action::StderrAll(regex)
        }
        "pause_ms" => {
            check(&obj, &[])?;
            Action::Pause(body.as_u64().ok_or("a number of ms")?)
        }
        "crowd" => {
            check(&obj, &["within_ms"])?;
            let count = body
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (1..=64).contains(n));
            Action::Crowd {
                count: count.ok_or("a number of bridges from 1 to 64")?,
                within_ms: within(&obj)?,
            }
        }
        "set" => {
            check(&obj, &[])?;
            Action::Set(
                body.as_object()
                    .ok_or("an object of names and values")?
                    .clone(),
            )
        }
        "start" | "list" | "call" | "stop" | "tool_ids" => {
            let step = match key {
                "start" => ClientStep::Start,
                "list" => ClientStep::List,
                "call" => ClientStep::Call,
                "stop" => ClientStep::Stop,
                _ => ClientStep::ToolIds,
            };
            // The step's main value goes in as "value"; the other members are its options. An
            // object value holds options too: {"start":{"expect":…}} = {"start":{},"expect":…}.
            match body {
                Value::Object(inner) if step != ClientStep::ToolIds => {
                    for (k, v) in inner {
                        if obj.insert(k.clone(), v).is_some() {
                            return Err(format!("option '{k}' given twice"));
                        }
                    }
                    obj.insert("value".into(), Value::Null);
                }
                other => {
                    obj.insert("value".into(), other);
                }
            }
            crate::client::check_options(step, &obj)?;
            Action::Client { step, opts: obj }
        }
        other => return Err(format!("unknown directive '{other}'")),
    })
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err("an odd number of hex digits".into());
    }
    digits
        .chunks(2)
        .map(|p| {
            let t: String = p.iter().collect();
            u8::from_str_radix(&t, 16).map_err(|_| format!("'{t}' is not hex"))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
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
}
