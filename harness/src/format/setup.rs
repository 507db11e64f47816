//! The setup line of a transcript: the profile, the arguments, the environment and the upstream.
//!
//! serde reads it into [`Setup`] and [`Scripted`]: their derive attributes name the members, the
//! defaults and `deny_unknown_fields` (a typo fails the transcript at load time). What serde
//! cannot say by attributes is here: the environment as an ordered object of texts, the forms
//! of `upstream`, `"discover": "manual"` and the replies of `auto`.
use serde::Deserialize;
use serde::de::{Deserializer, Error};
use serde_json::{Map, Value};

use super::{Scripted, Setup, Upstream, strings};

pub(super) fn parse_setup(body: Value) -> Result<Setup, String> {
    let Value::Object(mut obj) = body else {
        return Err("must be an object".into());
    };
    // Any directive may have a note; it is for the reader only.
    obj.remove("note");
    let s = Setup::deserialize(Value::Object(obj)).map_err(|e| e.to_string())?;
    let fixture = matches!(&s.upstream, Upstream::Fixture(_))
        || matches!(&s.upstream, Upstream::Https(h) if h.path.is_none() && !h.sign_in);
    if s.direct && (!fixture || !s.args.is_empty()) {
        return Err(
            "direct needs the fixture as the upstream (stdio, or https at /mcp without a sign-in) and no args of the bridge"
                .into(),
        );
    }
    if let Some(era) = s.eras.iter().find(|e| !super::ERAS.contains(&e.as_str())) {
        return Err(format!(
            "eras: {era} is not one of {}",
            super::ERAS.join(", ")
        ));
    }
    if !s.eras.is_empty() && !matches!(s.upstream, Upstream::Fixture(_) | Upstream::Https(_)) {
        return Err("eras needs the fixture as the upstream (fixture or https)".into());
    }
    Ok(s)
}

/// The scripted upstream's defaults: it answers `server/discover` by itself.
pub(super) fn scripted_default() -> Scripted {
    Scripted {
        discover: Some(Value::String("default".into())),
        ..Scripted::default()
    }
}

/// `env`: an object of texts, in the order of the line.
pub(super) fn env<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    Map::<String, Value>::deserialize(d)?
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(value) => Ok((name, value)),
            _ => Err(D::Error::custom("env values must be strings")),
        })
        .collect()
}

pub(super) fn upstream<'de, D: Deserializer<'de>>(d: D) -> Result<Upstream, D::Error> {
    parse_upstream(&Value::deserialize(d)?).map_err(D::Error::custom)
}

/// `"manual"` leaves `server/discover` to the transcript; any other value is the result.
pub(super) fn discover<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok((value != "manual").then_some(value))
}

/// Each reply is `{"result":…}`, `{"error":…}`, `"hang"`, or an array of them given in turn
/// (pages, a sequence of results; the last one repeats).
pub(super) fn auto<'de, D: Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
    let auto = Map::<String, Value>::deserialize(d)?;
    for (method, reply) in &auto {
        let replies: Vec<&Value> = match reply {
            Value::Array(list) => list.iter().collect(),
            one => vec![one],
        };
        let valid =
            |r: &&Value| *r == "hang" || r.get("result").is_some() || r.get("error").is_some();
        if replies.is_empty() || !replies.iter().all(valid) {
            return Err(D::Error::custom(format!(
                "auto.{method}: {{\"result\":…}}, {{\"error\":…}}, \"hang\", or an array of them"
            )));
        }
    }
    Ok(auto)
}

fn parse_upstream(v: &Value) -> Result<Upstream, String> {
    match v {
        Value::String(s) if s == "fixture" => Ok(Upstream::Fixture(Vec::new())),
        Value::String(s) if s == "scripted" => Ok(Upstream::Scripted(scripted_default())),
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
                "scripted" => Scripted::deserialize(body)
                    .map(Upstream::Scripted)
                    .map_err(|e| format!("scripted: {e}")),
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
