//! `crowd`: N more bridges with the transcript's setup, as the Copilot harness starts one per
//! chat request (several chats of the Copilot harness at once). Each initializes and calls `add` 2 + 3; then all
//! stdins close at the same moment, and every bridge must exit with code 0 within the bound, with
//! no process of any tree left (R7). Every frame goes through the invariants.
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::format::Upstream;
use crate::invariants::{Checker, Schemas};
use crate::process::{self, Bridge};
use crate::report::Failure;
use crate::session::{Binaries, Session};

/// One member of the crowd.
struct Member {
    bridge: Bridge,
    checker: Checker,
}

/// Runs the crowd step.
pub async fn run(
    s: &mut Session,
    count: usize,
    bins: &Binaries,
    schemas: &Schemas,
    bound: Duration,
) -> Result<(), Failure> {
    let args = match &s.setup.upstream {
        Upstream::Fixture(extra) => {
            let mut a = s.setup.args.clone();
            a.push("--".into());
            a.push(bins.fixture.to_string_lossy().into_owned());
            a.extend(extra.iter().cloned());
            a
        }
        Upstream::Command(cmd) => {
            let mut a = s.setup.args.clone();
            a.push("--".into());
            a.extend(cmd.iter().cloned());
            a
        }
        _ => {
            return Err(Failure::msg(
                "crowd needs the fixture or a command as the upstream",
            ));
        }
    };
    let mut members = Vec::new();
    let result = drive(&mut members, count, bins, schemas, &args, s, bound).await;
    // Whatever happened, nothing of the crowd stays.
    for m in &mut members {
        m.bridge.cleanup().await;
    }
    result
}

async fn drive(
    members: &mut Vec<Member>,
    count: usize,
    bins: &Binaries,
    schemas: &Schemas,
    args: &[String],
    s: &mut Session,
    bound: Duration,
) -> Result<(), Failure> {
    for i in 0..count {
        let tag = format!("{}-crowd-{i}", s.bridge.tag);
        let bridge = Bridge::spawn(&bins.bridge, args, &s.setup.env, &tag).map_err(Failure::msg)?;
        members.push(Member {
            bridge,
            checker: Checker::new(schemas.clone()),
        });
    }
    let timeout = s.bound(None);
    for (i, m) in members.iter_mut().enumerate() {
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
            "capabilities":{"elicitation":{"form":{},"url":{}},"sampling":{}},"clientInfo":{"name":"copilot-cli","version":"1.0.92"}}});
        exchange(m, &init, timeout)
            .await
            .map_err(|e| Failure::msg(format!("crowd bridge {i}: {e}")))?;
        send(
            m,
            &json!({"method":"notifications/initialized","jsonrpc":"2.0"}),
        )
        .await
        .map_err(Failure::msg)?;
        let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"progressToken":0}}});
        let r = exchange(m, &call, timeout)
            .await
            .map_err(|e| Failure::msg(format!("crowd bridge {i}: {e}")))?;
        if r.pointer("/result/content/0/text") != Some(&json!("5")) {
            return Err(Failure::mismatch(
                format!("crowd bridge {i}: add 2 + 3"),
                &json!({"result":{"content":[{"text":"5"}]}}),
                &r,
            ));
        }
    }
    s.note(format!(
        "crowd: {count} bridges answered; closing all stdins at once"
    ));
    let t0 = Instant::now();
    for m in members.iter_mut() {
        m.bridge.close_stdin();
    }
    for (i, m) in members.iter_mut().enumerate() {
        let left = bound.saturating_sub(t0.elapsed());
        let Some((status, _)) = m.bridge.wait_exit(left).await else {
            return Err(Failure::msg(format!(
                "R7: crowd bridge {i} still runs {} ms after the end of stdin",
                bound.as_millis()
            )));
        };
        if status.code() != Some(0) {
            return Err(Failure::msg(format!(
                "crowd bridge {i} exited with {}",
                process::describe(&status)
            )));
        }
        if let Some(p) = m.checker.problems.first() {
            return Err(Failure::msg(format!(
                "crowd bridge {i}: global invariant: {p}"
            )));
        }
    }
    for (i, m) in members.iter().enumerate() {
        let left = process::wait_tree_gone(&m.bridge.tag, Duration::from_secs(3)).await;
        if !left.is_empty() {
            return Err(Failure::msg(format!(
                "R7: processes of crowd bridge {i} left: {left:?}"
            )));
        }
    }
    s.note(format!(
        "crowd: all {count} exited with code 0 in {} ms",
        t0.elapsed().as_millis()
    ));
    Ok(())
}

async fn send(m: &mut Member, frame: &Value) -> Result<(), String> {
    m.checker.client_sent(frame);
    m.bridge.write(format!("{frame}\n").as_bytes()).await
}

/// Sends a request and reads frames until its response (other frames are only checked).
async fn exchange(m: &mut Member, frame: &Value, bound: Duration) -> Result<Value, String> {
    send(m, frame).await?;
    let id = frame.get("id").cloned().unwrap_or(Value::Null);
    let deadline = Instant::now() + bound;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = tokio::time::timeout(left, m.bridge.stdout.recv())
            .await
            .map_err(|_| format!("no response to {id} in {} ms", bound.as_millis()))?
            .ok_or("the stdout of the bridge ended")?;
        if let Some(f) = m.checker.toward_client(&line.bytes)
            && f.get("id") == Some(&id)
            && f.get("method").is_none()
        {
            return Ok(f);
        }
    }
}
