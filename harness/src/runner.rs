//! Runs one transcript: spawns the bridge, executes each directive in order, checks the global
//! invariants on every frame, and always leaves no process of the tree behind.
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::exit::{TREE_BOUND, expect_exit, expect_signal};
use crate::format::{Action, Order, Step, Transcript};
use crate::invariants::Schemas;
use crate::pattern::{self, Captures};
use crate::process;
use crate::report::{Failure, Report};
use crate::session::{Binaries, Next, Session};
use crate::upstream::Event;

/// How long a report waits for the exit of a bridge whose stdout ended.
const ENDED_BOUND: Duration = Duration::from_secs(2);

/// The outcome of one transcript.
pub struct Outcome {
    pub path: String,
    pub passed: bool,
    /// Why the transcript did not run (the `--embedded` and `--windows` runs).
    pub skipped: Option<String>,
    pub report: Option<String>,
    pub elapsed: Duration,
    pub schema_checked: usize,
}

/// Runs a transcript to the end; never leaves a process of its tree.
/// With `jitter` (the run's seed), the transcript's processes wait at the points where the
/// contract promises no order (jitter.rs).
pub async fn run(
    t: &Transcript,
    bins: &Binaries,
    schemas: Schemas,
    verbose: bool,
    jitter: Option<u64>,
) -> Outcome {
    let started = Instant::now();
    let skip = if bins.embedded {
        crate::embedded::embedded_skip(&t.setup)
    } else if bins.windows {
        crate::windows::windows_skip(t)
    } else {
        None
    };
    if let Some(why) = skip {
        return Outcome {
            path: t.path.display().to_string(),
            passed: true,
            skipped: Some(why),
            report: None,
            elapsed: started.elapsed(),
            schema_checked: 0,
        };
    }
    let tag = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
    let path = t.path.display().to_string();
    let mut setup = t.setup.clone();
    if let Some(seed) = jitter {
        let seed = crate::jitter::transcript_seed(seed, &path);
        setup
            .env
            .push((crate::jitter::SEED_VAR.into(), seed.to_string()));
    }
    let mut session = match Session::start(setup, bins, schemas, &tag, verbose) {
        Ok(s) => s,
        Err(e) => {
            process::kill_tree(&tag);
            let f = Failure::msg(e);
            let report = Report {
                path: &path,
                line: None,
                failure: &f,
                context: vec![],
                ended: None,
                stderr_tail: vec![],
            }
            .to_string();
            return Outcome {
                path,
                passed: false,
                skipped: None,
                report: Some(report),
                elapsed: started.elapsed(),
                schema_checked: 0,
            };
        }
    };
    let mut failed: Option<(Option<&Step>, Failure)> = None;
    for step in &t.steps {
        if verbose {
            eprintln!("  line {}: {}", step.line, step.text);
        }
        let result = match execute(&mut session, &step.action).await {
            Ok(()) => session
                .check_forbidden()
                .and_then(|()| session.invariant_failure().map_or(Ok(()), Err)),
            // The step's own failure keeps its diff; a broken invariant is named with it.
            Err(mut f) => {
                if let Some(inv) = session.invariant_failure() {
                    f.message = format!("{}\n  also {}", f.message, inv.message);
                }
                Err(f)
            }
        };
        if let Err(f) = result {
            failed = Some((Some(step), f));
            break;
        }
    }
    // How the bridge ended, for the report of a failure after the end of its stdout: read
    // before the cleanup kills whatever still runs.
    let ended = match (&failed, session.stdout_done) {
        (Some(_), true) => session.bridge.how_it_ended(ENDED_BOUND).await,
        _ => None,
    };
    // The end: whatever the transcript did, the tree goes, and the last frames are checked too.
    session.bridge.cleanup().await;
    if failed.is_none() {
        if let Err(f) = drain(&mut session).await {
            failed = Some((None, f));
        } else if let Err(f) = session.check_forbidden() {
            failed = Some((None, f));
        }
    }
    let left = process::wait_tree_gone(&tag, TREE_BOUND).await;
    if !left.is_empty() {
        process::kill_tree(&tag);
        if failed.is_none() {
            failed = Some((
                None,
                Failure::msg(format!(
                    "processes of the tree left after the end: {left:?}"
                )),
            ));
        }
    }
    let schema_checked = session
        .checker
        .lock()
        .map(|c| c.schema_checked)
        .unwrap_or(0);
    keep_outputs(&path, &session);
    let report = failed.map(|(step, f)| {
        let context = session
            .log
            .iter()
            .rev()
            .take(12)
            .rev()
            .map(|l| clip(l, 400))
            .collect();
        let stderr = session.bridge.stderr.snapshot();
        let stderr_tail = stderr.iter().rev().take(8).rev().cloned().collect();
        Report {
            path: &path,
            line: step.map(|s| (s.line, s.text.as_str())),
            failure: &f,
            context,
            ended,
            stderr_tail,
        }
        .to_string()
    });
    Outcome {
        passed: report.is_none(),
        skipped: None,
        report,
        elapsed: started.elapsed(),
        schema_checked,
        path,
    }
}

/// The secret sweep of CI (`ci/sweep.sh`, `docs/harness.md`): with `MCP_STDERR_DIR` set, the
/// stdout and the stderr of every transcript are kept there, two files each, named by the replay
/// mode and this harness's process id (and the pass of `--repeat`, `kept::run_tag`), so that
/// the replays of one run (the command form, the embedded bridge, the release archive,
/// Windows) and the passes of a repeat never overwrite each other. The upstream
/// fixture inherits the bridge's stderr, so its lines are in the same file.
fn keep_outputs(path: &str, session: &Session) {
    let Some(dir) = std::env::var_os("MCP_STDERR_DIR") else {
        return;
    };
    let mode = if session.bins.embedded {
        "embedded"
    } else if session.bins.windows {
        "windows"
    } else {
        "command"
    };
    let stem = format!(
        "transcript-{mode}-{}-{}",
        crate::kept::run_tag(),
        path.replace(['/', '\\'], "_")
    );
    let dir = std::path::Path::new(&dir);
    let stderr = session.bridge.stderr.snapshot().join("\n");
    let _ = std::fs::write(dir.join(format!("{stem}.stderr")), stderr);
    let stdout = session
        .bridge
        .stdout_kept
        .lock()
        .map(|k| k.clone())
        .unwrap_or_default();
    let _ = std::fs::write(dir.join(format!("{stem}.stdout")), stdout);
}

/// Cuts a long frame for the report; the diff shows the frame in full.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

/// Reads what is left on stdout so that every frame goes through the invariants.
async fn drain(s: &mut Session) -> Result<(), Failure> {
    while let Next::Frame(_) = s.next_frame(Duration::from_millis(500)).await? {}
    s.invariant_failure().map_or(Ok(()), Err)
}

async fn execute(s: &mut Session, action: &Action) -> Result<(), Failure> {
    match action {
        Action::Send(frame) => {
            let frame = pattern::substitute(frame, &s.caps)?;
            s.send_frame(&frame).await
        }
        Action::SendRaw { text, newline } => {
            let text = subst_text(text, &s.caps)?;
            let mut bytes = text.into_bytes();
            if *newline {
                bytes.push(b'\n');
            }
            s.send_bytes(&bytes).await
        }
        Action::SendHex(bytes) => s.send_bytes(bytes).await,
        Action::Expect {
            patterns,
            order,
            within_ms,
        } => expect(s, patterns, *order, s.bound(*within_ms)).await,
        Action::ExpectSilence { ms } => {
            let deadline = Instant::now() + Duration::from_millis(*ms);
            match s.next_relevant(deadline).await? {
                Next::Frame(f) => Err(Failure::mismatch(
                    format!("expected no frame for {ms} ms"),
                    &json!("<nothing>"),
                    &f,
                )),
                _ => Ok(()),
            }
        }
        Action::UpstreamExpect {
            pattern: p,
            within_ms,
        } => {
            let bound = s.bound(*within_ms);
            match s.next_upstream(bound).await? {
                Event::Frame(f) => {
                    pattern::matches(p, &f, &mut s.caps).map_err(|m| {
                        Failure::mismatch(
                            format!("the frame at the upstream does not match: {m}"),
                            p,
                            &f,
                        )
                    })?;
                    if f.get("method").is_some()
                        && let (Some(id), Some(up)) = (f.get("id"), s.upstream.as_mut())
                    {
                        up.last_request = Some(id.clone());
                    }
                    Ok(())
                }
                other => Err(Failure::msg(format!(
                    "expected a frame at the upstream, got {other:?}"
                ))),
            }
        }
        Action::UpstreamReply { to, body, delay_ms } => {
            let up = s
                .upstream
                .as_ref()
                .ok_or_else(|| Failure::msg("no scripted upstream"))?;
            let id = match to {
                Some(t) => pattern::substitute(t, &s.caps)?,
                None => up.last_request.clone().ok_or_else(|| {
                    Failure::msg("no request to reply to: upstream_expect one first")
                })?,
            };
            let mut frame = Map::new();
            frame.insert("jsonrpc".into(), json!("2.0"));
            frame.insert("id".into(), id);
            for (k, v) in body {
                frame.insert(k.clone(), pattern::substitute(v, &s.caps)?);
            }
            let line = Value::Object(frame).to_string();
            s.note(format!(
                "← upstream {line}{}",
                if *delay_ms > 0 {
                    format!(" (after {delay_ms} ms)")
                } else {
                    String::new()
                }
            ));
            let up = s
                .upstream
                .as_ref()
                .ok_or_else(|| Failure::msg("no scripted upstream"))?;
            up.write_line(line, Duration::from_millis(*delay_ms))
                .await
                .map_err(Failure::msg)
        }
        Action::UpstreamSend(frame) => {
            let line = pattern::substitute(frame, &s.caps)?.to_string();
            upstream_write(s, line).await
        }
        Action::UpstreamSendRaw(text) => {
            let line = subst_text(text, &s.caps)?;
            upstream_write(s, line).await
        }
        Action::UpstreamExit(code) => {
            s.note(format!("upstream exits with code {code}"));
            s.upstream
                .as_ref()
                .ok_or_else(|| Failure::msg("no scripted upstream"))?
                .exit(*code)
                .await
                .map_err(Failure::msg)
        }
        Action::HttpsFixture(step) => {
            s.note(format!("the HTTPS fixture: {step:?}"));
            let fixture = s
                .https
                .as_mut()
                .ok_or_else(|| Failure::msg("no HTTPS fixture (upstream https)"))?;
            match step {
                crate::https::Step::Kill => fixture.kill(),
                crate::https::Step::Restart => fixture.restart(),
            }
            .map_err(Failure::msg)
        }
        Action::UpstreamCloseStdout => s
            .upstream
            .as_ref()
            .ok_or_else(|| Failure::msg("no scripted upstream"))?
            .close_stdout()
            .await
            .map_err(Failure::msg),
        Action::UpstreamExpectEof { within_ms } => {
            let bound = s.bound(*within_ms);
            let deadline = Instant::now() + bound;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match s.next_upstream(left).await? {
                    Event::Eof | Event::Closed => return Ok(()),
                    // Notifications (a cancellation) may come before the end of input.
                    Event::Frame(f) if f.get("id").is_none() => {}
                    Event::Frame(f) => {
                        return Err(Failure::mismatch(
                            "expected the end of the upstream's stdin",
                            &json!("<eof>"),
                            &f,
                        ));
                    }
                }
            }
        }
        Action::UpstreamExpectSilence { ms } => {
            let bound = Duration::from_millis(*ms);
            let up = s
                .upstream
                .as_mut()
                .ok_or_else(|| Failure::msg("no scripted upstream"))?;
            match tokio::time::timeout(bound, up.events.recv()).await {
                Ok(Some(Event::Frame(f))) => Err(Failure::mismatch(
                    format!("expected nothing at the upstream for {ms} ms"),
                    &json!("<nothing>"),
                    &f,
                )),
                _ => Ok(()),
            }
        }
        Action::CloseStdin => {
            s.note("close stdin".into());
            s.bridge.close_stdin();
            Ok(())
        }
        Action::Signal { name, tree } => {
            s.note(format!(
                "signal {name}{}",
                if *tree { " to the tree" } else { "" }
            ));
            s.bridge.signal(name, *tree);
            Ok(())
        }
        Action::ExpectExit {
            code,
            signal,
            within_ms,
        } => {
            expect_exit(s, *code, s.bound(*within_ms)).await?;
            match signal {
                Some(name) => expect_signal(s, name),
                None => Ok(()),
            }
        }
        Action::ExpectStderr { regex, within_ms } => {
            let re = regex::Regex::new(regex).map_err(|e| Failure::msg(e.to_string()))?;
            let bound = s.bound(*within_ms);
            s.wait_stderr(&re, bound).await.map(|_| ())
        }
        Action::ExpectStderrOrder { regexes, within_ms } => {
            let bound = s.bound(*within_ms);
            let deadline = Instant::now() + bound;
            let mut previous: Option<(usize, &String)> = None;
            for regex in regexes {
                let re = regex::Regex::new(regex).map_err(|e| Failure::msg(e.to_string()))?;
                let left = deadline.saturating_duration_since(Instant::now());
                let (at, line) = s.wait_stderr_at(&re, left).await?;
                if let Some((before, prev)) = previous
                    && at <= before
                {
                    return Err(Failure::msg(format!(
                        "stderr out of order: the line {line:?} (line {}) matches /{regex}/, \
                         and it comes before the first line that matches /{prev}/ (line {})",
                        at + 1,
                        before + 1
                    )));
                }
                previous = Some((at, regex));
            }
            Ok(())
        }
        Action::ForbidStderr(regex) => {
            let re = regex::Regex::new(regex).map_err(|e| Failure::msg(e.to_string()))?;
            s.forbidden.push(re);
            s.check_forbidden()
        }
        Action::StderrAll(regex) => {
            let re = regex::Regex::new(regex).map_err(|e| Failure::msg(e.to_string()))?;
            s.required.push(re);
            s.check_forbidden()
        }
        Action::Pause(ms) => {
            // Client timing, not synchronisation: e.g. Copilot's initialize 0.5 s after its
            // discover whatever the answer.
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            Ok(())
        }
        Action::Set(map) => {
            for (k, v) in map {
                let v = pattern::substitute(v, &s.caps)?;
                s.caps.insert(k.clone(), v);
            }
            Ok(())
        }
        Action::Client { step, opts } => crate::client::run(s, *step, opts).await,
        Action::Crowd { count, within_ms } => {
            let (bins, schemas) = (s.bins.clone(), s.schemas.clone());
            let bound = s.bound(*within_ms);
            crate::crowd::run(s, *count, &bins, &schemas, bound).await
        }
    }
}

fn subst_text(text: &str, caps: &Captures) -> Result<String, Failure> {
    match pattern::substitute(&Value::String(text.to_string()), caps)? {
        Value::String(s) => Ok(s),
        other => Ok(other.to_string()),
    }
}

async fn upstream_write(s: &mut Session, line: String) -> Result<(), Failure> {
    s.note(format!("← upstream {line}"));
    // An older scripted server's requests are kept, so that the bridge's answers are checked
    // (the fixture's lines come through its tap).
    if let Ok(mut c) = s.checker.lock() {
        c.from_upstream(&line);
    }
    let up = s
        .upstream
        .as_ref()
        .ok_or_else(|| Failure::msg("no scripted upstream"))?;
    up.write_line(line, Duration::ZERO)
        .await
        .map_err(Failure::msg)
}

/// `expect`: the next frames match the patterns, in order or in any order.
pub async fn expect(
    s: &mut Session,
    patterns: &[Value],
    order: Order,
    bound: Duration,
) -> Result<(), Failure> {
    let deadline = Instant::now() + bound;
    match order {
        Order::Strict => {
            for p in patterns {
                let f = s.next_relevant(deadline).await?.frame(bound)?;
                pattern::matches(p, &f, &mut s.caps).map_err(|m| {
                    Failure::mismatch(format!("the frame does not match: {m}"), p, &f)
                })?;
            }
            Ok(())
        }
        Order::Any => {
            let mut frames = Vec::new();
            for _ in patterns {
                frames.push(s.next_relevant(deadline).await?.frame(bound)?);
            }
            match assign(patterns, &frames, &mut vec![false; frames.len()], &s.caps) {
                Some(caps) => {
                    s.caps = caps;
                    Ok(())
                }
                None => Err(Failure::mismatch(
                    "the frames do not match the group in any order",
                    &Value::Array(patterns.to_vec()),
                    &Value::Array(frames),
                )),
            }
        }
    }
}

/// Finds an assignment of frames to patterns (free order); returns the captures of the first.
pub fn assign(
    patterns: &[Value],
    frames: &[Value],
    used: &mut Vec<bool>,
    caps: &Captures,
) -> Option<Captures> {
    let Some((p, rest)) = patterns.split_first() else {
        return Some(caps.clone());
    };
    for i in 0..frames.len() {
        if used[i] {
            continue;
        }
        let mut c = caps.clone();
        if pattern::matches(p, &frames[i], &mut c).is_ok() {
            used[i] = true;
            if let Some(done) = assign(rest, frames, used, &c) {
                return Some(done);
            }
            used[i] = false;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_order_finds_an_assignment_that_needs_backtracking() {
        // The first pattern matches both frames; only one assignment satisfies both.
        let patterns = vec![json!({"method":"<string>"}), json!({"method":"a"})];
        let frames = vec![json!({"method":"a"}), json!({"method":"b"})];
        assert!(assign(&patterns, &frames, &mut vec![false; 2], &Captures::new()).is_some());
        let frames = vec![json!({"method":"b"}), json!({"method":"c"})];
        assert!(assign(&patterns, &frames, &mut vec![false; 2], &Captures::new()).is_none());
    }

    #[test]
    fn free_order_keeps_the_captures_of_the_assignment() {
        let patterns = vec![json!({"id":"<any@x>","result":{}}), json!({"id":2})];
        let frames = vec![
            json!({"id":2,"result":{"a":1}}),
            json!({"id":1,"result":{}}),
        ];
        let caps =
            assign(&patterns, &frames, &mut vec![false; 2], &Captures::new()).expect("assignment");
        assert_eq!(caps["x"], json!(1));
    }
}
