//! One lane of the soak: a kind of bridge and its mixed workload, cycle after cycle until the
//! deadline: a call, a call with progress, a form answered, a form cancelled while the bridge
//! waits (the bridge cancels its question, O1 and the quirk "VS Code ignores
//! notifications/cancelled"), a list change (O6), a resource update of a subscription (O7), a
//! line that is not JSON (-32700 of id null) and a ping. The command form also loses its
//! upstream (killed) once a minute: the call in flight gets its error, the bridge exits with
//! code 1, and a new bridge takes its place, as VS Code starts one.
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::conn::{Conn, Programs, Tally};
use crate::format::Profile;
use crate::process;
use crate::profile;

/// The URI that each bridge subscribes to (the fixture's notes).
const NOTES_URI: &str = "file:///fixture/notes.txt";
/// The pause between two cycles: a VS Code window is mostly idle.
const PAUSE: Duration = Duration::from_millis(100);
/// How often the command form loses its upstream.
const RESTART_EVERY: Duration = Duration::from_secs(60);
/// How often the PSS of a bridge is sampled for the trend.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(30);
/// The bridge's watchdog (R7, docs/exit-codes.md): the latest exit after the end of stdin.
const WATCHDOG: Duration = Duration::from_secs(8);

/// The four bridges of the soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `mcp-bridge-vscode -- bridge-fixture-server`, VS Code's Local profile.
    Command,
    /// The URL form with the sign-in at the fixture's authorization server over HTTPS.
    Url,
    /// `bridge-fixture-server --embedded`: the bridge inside the server.
    Embedded,
    /// The command form under the Copilot harness's profile.
    Copilot,
}

/// What one lane saw.
#[derive(Debug, Default)]
pub struct LaneReport {
    pub bridges: u32,
    pub cycles: u64,
    pub tally: Tally,
    /// (PSS after the first cycle, PSS before the stop) of each bridge, in KiB.
    pub pss: Vec<(u64, u64)>,
    /// PSS of each bridge every [`SAMPLE_EVERY`], in KiB (the trend behind the growth).
    pub samples: Vec<Vec<u64>>,
    pub restarts: u32,
    pub refreshes: u64,
    pub stderr_secrets: u64,
}

/// The prefixes of every token, code and secret that the fixture issues.
const ISSUED: [&str; 4] = ["bfx_at_", "bfx_rt_", "bfx_code_", "bfx_secret_"];

pub async fn run(kind: Kind, programs: &Programs, until: Instant, tag: &str) -> LaneReport {
    let mut report = LaneReport::default();
    let mut url_fixture = None;
    if kind == Kind::Url {
        match super::url::start_fixture(programs, tag).await {
            Ok(f) => url_fixture = Some(f),
            Err(e) => {
                report.tally.problems.push(e);
                return report;
            }
        }
    }
    let mut serial = 0;
    while Instant::now() < until {
        serial += 1;
        let bridge_tag = format!("{tag}-{serial}");
        let url = url_fixture.as_ref().map(|f| f.url.clone());
        let restart_at = Instant::now() + RESTART_EVERY;
        let restart = kind == Kind::Command && restart_at < until;
        let end = if restart { restart_at } else { until };
        let code = life(
            kind,
            programs,
            url.as_deref(),
            end,
            restart,
            &bridge_tag,
            &mut report,
        )
        .await;
        if let Err(e) = code {
            report
                .tally
                .problems
                .push(format!("{kind:?} bridge {serial}: {e}"));
            process::kill_tree(&bridge_tag);
            break;
        }
        report.bridges += 1;
        if restart {
            report.restarts += 1;
        }
    }
    if let Some(mut f) = url_fixture {
        report.refreshes = f.refreshes();
        f.process.cleanup().await;
    }
    report
}

/// One bridge from its start to its end.
async fn life(
    kind: Kind,
    programs: &Programs,
    url: Option<&str>,
    end: Instant,
    lose_upstream: bool,
    tag: &str,
    report: &mut LaneReport,
) -> Result<(), String> {
    // The URL lane's redirect port stays held until the life ends.
    let (program, args, profile, _redirect_port) = match kind {
        Kind::Command => (
            programs.bridge.clone(),
            vec!["--".into(), programs.fixture.to_string_lossy().into_owned()],
            Profile::Local,
            None,
        ),
        Kind::Copilot => (
            programs.bridge.clone(),
            vec!["--".into(), programs.fixture.to_string_lossy().into_owned()],
            Profile::Copilot,
            None,
        ),
        Kind::Embedded => (
            programs.fixture.clone(),
            vec!["--embedded".into()],
            Profile::Local,
            None,
        ),
        Kind::Url => {
            let (args, held) = super::url::bridge_args(programs, url.unwrap_or_default())?;
            (programs.bridge.clone(), args, Profile::Local, Some(held))
        }
    };
    let env = super::url::clean_env();
    let mut conn = Conn::start(&program, &args, &env, profile, tag)?;
    let outcome = drive(&mut conn, kind, programs, end, lose_upstream, report).await;
    if let Err(e) = &outcome {
        conn.tally.problems.push(e.clone());
    }
    let code = if lose_upstream && outcome.is_ok() {
        1
    } else {
        0
    };
    conn.finish(code, WATCHDOG).await;
    let stderr = conn.bridge.stderr.snapshot().join("\n");
    let secrets = ISSUED.iter().filter(|p| stderr.contains(*p)).count() as u64;
    if secrets > 0 {
        conn.tally
            .problems
            .push("a token or secret on stderr".into());
    }
    report.stderr_secrets += secrets;
    keep_outputs(&conn, &stderr);
    report.tally.add(&conn.tally);
    Ok(())
}

/// The bridge's stdout and stderr for the secret sweep of CI (`crate::kept`, docs/harness.md
/// "The secret sweep"), which runs after the soak: the check above knows only the prefixes of
/// the fixture's tokens, the sweep every planted and issued value in every encoded form.
fn keep_outputs(conn: &Conn, stderr: &str) {
    if let Some(path) = crate::kept::path("soak", "stderr") {
        let _ = std::fs::write(path, stderr);
    }
    if let Some(path) = crate::kept::path("soak", "stdout") {
        let stdout = conn
            .bridge
            .stdout_kept
            .lock()
            .map(|k| k.clone())
            .unwrap_or_default();
        let _ = std::fs::write(path, stdout);
    }
}

async fn drive(
    conn: &mut Conn,
    kind: Kind,
    programs: &Programs,
    end: Instant,
    lose_upstream: bool,
    report: &mut LaneReport,
) -> Result<(), String> {
    initialize(conn, kind, programs).await?;
    let id = conn
        .request("resources/subscribe", json!({"uri": NOTES_URI}))
        .await?;
    conn.response(id).await?;
    let mut first_pss = None;
    let mut n: u64 = 0;
    let mut next_sample = Instant::now();
    let mut samples = Vec::new();
    while Instant::now() < end {
        n += 1;
        cycle(conn, n).await?;
        report.cycles += 1;
        if first_pss.is_none() {
            first_pss = conn.pss_kib();
        }
        if Instant::now() >= next_sample {
            samples.extend(conn.pss_kib());
            next_sample += SAMPLE_EVERY;
        }
        tokio::time::sleep(PAUSE).await;
    }
    if let (Some(first), Some(last)) = (first_pss, conn.pss_kib()) {
        report.pss.push((first, last));
    }
    report.samples.push(samples);
    if lose_upstream {
        kill_upstream(conn).await?;
    }
    Ok(())
}

async fn initialize(conn: &mut Conn, kind: Kind, programs: &Programs) -> Result<(), String> {
    if conn.profile == Profile::Copilot {
        let discover = profile::copilot_discover();
        let params = discover["params"].as_object().cloned().unwrap_or_default();
        conn.send_with_id(0, "server/discover", params).await?;
        let r = conn.response(0).await?;
        if r["error"]["code"] != -32601 {
            return Err(format!("server/discover got {r}"));
        }
    }
    let params = Value::Object(profile::initialize_params(conn.profile));
    let id = conn.request("initialize", params).await?;
    if kind == Kind::Url {
        super::url::sign_in(conn, programs).await?;
    }
    let r = conn.response(id).await?;
    if r.get("result").is_none() {
        return Err(format!("initialize got {r}"));
    }
    conn.send(&profile::notification("notifications/initialized", None))
        .await
}

/// One cycle of the workload.
async fn cycle(conn: &mut Conn, n: u64) -> Result<(), String> {
    let text = |r: &Value| {
        r["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_owned)
    };
    let id = conn
        .request(
            "tools/call",
            json!({"name":"add","arguments":{"a":n,"b":1}}),
        )
        .await?;
    let r = conn.response(id).await?;
    if text(&r) != Some((n + 1).to_string()) {
        return Err(format!("add got {r}"));
    }
    let before = conn.tally.progress;
    let mut params = json!({"name":"progress","arguments":{"count":3,"ms":5}});
    if conn.profile != Profile::Copilot {
        params["_meta"] = json!({"progressToken": format!("soak-{n}")});
    }
    let id = conn.request("tools/call", params).await?;
    let r = conn.response(id).await?;
    if r.get("result").is_none() || conn.tally.progress == before {
        return Err(format!(
            "progress got {r} after {} notifications",
            conn.tally.progress - before
        ));
    }
    let id = conn
        .request("tools/call", json!({"name":"ask_form","arguments":{}}))
        .await?;
    let r = conn.response(id).await?;
    if !text(&r).is_some_and(|t| t.starts_with("form: accept")) {
        return Err(format!("ask_form got {r}"));
    }
    let id = conn
        .request("tools/call", json!({"name":"ask_form","arguments":{}}))
        .await?;
    let q = conn.question().await?;
    if q["method"] != "elicitation/create" {
        return Err(format!("the question is {q}"));
    }
    conn.cancel(id).await?;
    let qid = q["id"].as_str().unwrap_or_default().to_owned();
    conn.question_cancelled(&qid).await?;
    let id = conn
        .request(
            "tools/call",
            json!({"name":"toggle","arguments":{"enabled": n % 2 == 1}}),
        )
        .await?;
    conn.response(id).await?;
    let id = conn
        .request(
            "tools/call",
            json!({"name":"touch","arguments":{"uri": NOTES_URI}}),
        )
        .await?;
    conn.response(id).await?;
    conn.send_bad_line().await?;
    let id = conn.request("ping", json!({})).await?;
    conn.response(id).await?;
    Ok(())
}

/// The upstream of the command form dies (SIGKILL) with a call in flight: the call gets its
/// error, and the bridge exits by itself with code 1 (checked by the caller).
async fn kill_upstream(conn: &mut Conn) -> Result<(), String> {
    let id = conn
        .request(
            "tools/call",
            json!({"name":"slow","arguments":{"ms":60000}}),
        )
        .await?;
    // The ping's answer comes after the call reached the bridge's queue.
    let ping = conn.request("ping", json!({})).await?;
    conn.response(ping).await?;
    let bridge = conn.bridge.pid;
    let upstream: Vec<i32> = process::tree_pids(&conn.bridge.tag)
        .into_iter()
        .filter(|p| *p != bridge)
        .collect();
    if upstream.is_empty() {
        return Err("no upstream process to kill".into());
    }
    for pid in upstream {
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    let r = conn.response(id).await?;
    if r["error"]["code"] != -32603 {
        return Err(format!("the call in flight got {r}"));
    }
    // "When the upstream server stops" with stdin still open: the bridge exits by itself
    // (code 1, checked by the caller). Closing stdin now would race that exit with the stop
    // sequence of the end of stdin, whose exit code is 0.
    if conn.bridge.wait_exit(WATCHDOG).await.is_none() {
        return Err("the bridge did not exit after the end of its upstream".into());
    }
    Ok(())
}
