//! Which way the check reaches the server. With `--via auto` it tries first: a server that
//! answers a 2025-11-25 `initialize` itself is checked directly, as VS Code would talk to it,
//! unless it also answers `server/discover` for 2026-07-28 (then it is a 2026-07-28 server,
//! and the bridge is the way VS Code uses it). A server that answers `initialize` with an error
//! (-32601, or any other), closes its stdout or stays silent is checked through the bridge. A
//! URL is always checked through the bridge.
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::conn::Conn;
use super::verdict::Direct;
use super::{Path, Plan, Target, Via};
use crate::format::Profile;
use crate::profile::initialize_params;

/// The longest wait of a probe (a slower server is checked through the bridge, which waits as
/// long as `--timeout` says).
const PROBE_WAIT: Duration = Duration::from_secs(10);

/// The path, why it was taken, and whether the server answered a 2025-11-25 `initialize`
/// itself (what VS Code's Local harness needs without the bridge).
pub async fn choose(plan: &Plan) -> (Path, String, Direct) {
    let cmd = match (&plan.target, plan.via) {
        (Target::Url(_), _) => {
            return (
                Path::Bridge,
                "a URL: checked through the bridge's URL form".into(),
                Direct::Unknown,
            );
        }
        (_, Via::Direct) => return (Path::Direct, "--via direct".into(), Direct::Unknown),
        (_, Via::Bridge) => return (Path::Bridge, "--via bridge".into(), Direct::Unknown),
        (Target::Command(c), Via::Auto) => c,
    };
    let (path, why) = probe_paths(plan, cmd).await;
    let direct = if path == Path::Direct || why.contains(BOTH_ERAS) {
        Direct::Initializes
    } else {
        Direct::DoesNotInitialize
    };
    (path, why, direct)
}

/// In the reason of a server that answers both a 2025-11-25 `initialize` and `server/discover`.
const BOTH_ERAS: &str = "and also server/discover for";

async fn probe_paths(plan: &Plan, cmd: &[String]) -> (Path, String) {
    let wait = plan.bound.min(PROBE_WAIT);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":initialize_params(Profile::Local)});
    let answer = match probe(cmd, &init, wait).await {
        Err(e) => {
            return (
                Path::Bridge,
                format!("the command does not start directly ({e})"),
            );
        }
        Ok(a) => a,
    };
    let Some(answer) = answer else {
        return (
            Path::Bridge,
            format!(
                "no answer to a 2025-11-25 initialize in {} s",
                wait.as_secs()
            ),
        );
    };
    if let Some(e) = answer.get("error") {
        let code = e.get("code").cloned().unwrap_or(Value::Null);
        return (
            Path::Bridge,
            format!("the server answers a 2025-11-25 initialize with the error {code}"),
        );
    }
    let version = answer
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if version == "2026-07-28" {
        return (
            Path::Bridge,
            "the server answers initialize with 2026-07-28, not 2025-11-25".into(),
        );
    }
    let discover = crate::profile::copilot_discover();
    if let Ok(Some(d)) = probe(cmd, &discover, wait).await
        && d.pointer("/result/supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|x| x == "2026-07-28"))
    {
        return (
            Path::Bridge,
            format!(
                "the server answers a 2025-11-25 initialize {BOTH_ERAS} 2026-07-28: checked as a 2026-07-28 server behind the bridge; --via direct \
                 checks its {version} face"
            ),
        );
    }
    (
        Path::Direct,
        format!("the server answers a 2025-11-25 initialize itself ({version})"),
    )
}

/// Sends one request to a fresh process of `cmd`; gives its response, `None` for no response.
async fn probe(cmd: &[String], frame: &Value, wait: Duration) -> Result<Option<Value>, String> {
    let (program, args) = cmd.split_first().ok_or("an empty command")?;
    let tag = format!(
        "check-probe-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    );
    let mut conn = Conn::spawn(&PathBuf::from(program), args, Profile::Local, &tag)?;
    let id = frame.get("id").and_then(Value::as_i64).unwrap_or(1);
    let answer = match conn.send(frame).await {
        Ok(()) => conn.response(id, wait).await.ok(),
        Err(_) => None,
    };
    conn.stop(Duration::from_secs(2)).await;
    crate::process::kill_tree(&tag);
    Ok(answer)
}

/// The bridge's own bound for a slow start (its `--answer-initialize-after`, 40 s by default,
/// inside the runtime's 60 s) when the runtime's `initialize` budget is scaled below 60 s: two
/// thirds of it, at least the bridge's 1 s, so that the bridge answers in the budget as it does
/// in the runtime's own.
fn early_answer(plan: &Plan) -> Vec<String> {
    let budget = plan.runtime.budget;
    if budget >= Duration::from_secs(60) {
        return Vec::new();
    }
    let seconds = (budget.as_millis() * 2 / 3 / 1000).max(1);
    vec!["--answer-initialize-after".to_string(), seconds.to_string()]
}

/// The program and the arguments of one run.
pub fn command_line(plan: &Plan, path: Path) -> (PathBuf, Vec<String>) {
    match (&plan.target, path) {
        (Target::Command(cmd), Path::Direct) => {
            let program = cmd.first().cloned().unwrap_or_default();
            (
                PathBuf::from(program),
                cmd.iter().skip(1).cloned().collect(),
            )
        }
        (Target::Command(cmd), Path::Bridge) => {
            let mut args = early_answer(plan);
            args.push("--".to_string());
            args.extend(cmd.iter().cloned());
            (plan.bridge.clone(), args)
        }
        (Target::Url(url), _) => {
            let mut args = early_answer(plan);
            if let Some(ca) = &plan.ca_file {
                args.push("--ca-file".to_string());
                args.push(ca.to_string_lossy().into_owned());
            }
            args.push(url.clone());
            (plan.bridge.clone(), args)
        }
    }
}
