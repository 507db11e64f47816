//! The setup line of a transcript: the profile, the arguments, the environment and the upstream.
use serde_json::Value;

use super::{Mode, Profile, Scripted, Setup, Upstream, strings};

pub(super) fn parse_setup(body: Value) -> Result<Setup, String> {
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
            "embedded" => {
                s.embedded = Some(
                    v.as_str()
                        .ok_or("embedded must be a text (the reason)")?
                        .into(),
                )
            }
            "windows" => {
                s.windows = Some(
                    v.as_str()
                        .ok_or("windows must be a text (the reason)")?
                        .into(),
                )
            }
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
