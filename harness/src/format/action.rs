//! The directives of a transcript after the setup line, and the options of the client steps.
use serde_json::{Map, Value};

use super::{Action, ClientStep, Order, strings, u64_of};

pub(super) fn parse_action(key: &str, mut obj: Map<String, Value>) -> Result<Action, String> {
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
        "start" | "list" | "call" | "stop" | "tool_ids" | "listen" => {
            let step = match key {
                "start" => ClientStep::Start,
                "list" => ClientStep::List,
                "call" => ClientStep::Call,
                "stop" => ClientStep::Stop,
                "listen" => ClientStep::Listen,
                _ => ClientStep::ToolIds,
            };
            // The step's main value goes in as "value"; the other members are its options. An
            // object value holds options too: {"start":{"expect":…}} = {"start":{},"expect":…}.
            match body {
                // A listen's object is its filter, not options.
                Value::Object(inner)
                    if !matches!(step, ClientStep::ToolIds | ClientStep::Listen) =>
                {
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
            check_options(step, &obj)?;
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

/// Checks the options of a high-level step at load time (client.rs runs the step).
pub fn check_options(step: ClientStep, opts: &Map<String, Value>) -> Result<(), String> {
    let allowed: &[&str] = match step {
        ClientStep::Start => &["value", "expect", "expect_error", "lists", "within_ms"],
        ClientStep::List => &[
            "value",
            "expect_names",
            "includes",
            "excludes",
            "count",
            "within_ms",
        ],
        ClientStep::Call => &[
            "value",
            "arguments",
            "expect_text",
            "expect",
            "expect_error",
            "progress",
            "answers",
            "within_ms",
            "progress_token",
            "expect_list_changed",
            "no_wait",
            "capture_id",
        ],
        ClientStep::Stop => &["value", "code", "within_ms", "timers"],
        ClientStep::ToolIds => &["value", "instance", "omitted"],
        ClientStep::Listen => &["value", "expect", "capture_id", "within_ms"],
    };
    if let Some(k) = opts.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!("unknown option '{k}'"));
    }
    match step {
        ClientStep::List => {
            let v = opts.get("value").and_then(Value::as_str).unwrap_or("");
            if list_method(v).is_none() {
                return Err("list tools, prompts, resources or templates".into());
            }
        }
        ClientStep::Call if !opts.get("value").is_some_and(Value::is_string) => {
            return Err("call needs the name of a tool".into());
        }
        ClientStep::Listen if !opts.get("value").is_some_and(Value::is_object) => {
            return Err("listen needs the notifications to opt in to (an object)".into());
        }
        _ => {}
    }
    Ok(())
}

pub fn list_method(what: &str) -> Option<(&'static str, &'static str)> {
    match what {
        "tools" => Some(("tools/list", "tools")),
        "prompts" => Some(("prompts/list", "prompts")),
        "resources" => Some(("resources/list", "resources")),
        "templates" => Some(("resources/templates/list", "resourceTemplates")),
        _ => None,
    }
}
