//! The end of the bridge as a transcript expects it: its exit code or signal within a bound,
//! and no process of its tree left after it (R7). The runner's `expect_exit` directive and the
//! client's stop steps share it.
use std::time::{Duration, Instant};

use crate::process;
use crate::report::Failure;
use crate::session::Session;

/// How long the processes of the tree may take to go after the bridge exited.
pub const TREE_BOUND: Duration = Duration::from_secs(3);

/// `expect_exit` with a signal name: the bridge (already exited) was killed by that signal.
pub fn expect_signal(s: &Session, name: &str) -> Result<(), Failure> {
    let want = process::signal_number(name);
    let status = s.bridge.exit.map(|(status, _)| status);
    match status {
        Some(st) if st.code().is_none() && process::exit_signal(&st) == Some(want) => Ok(()),
        Some(st) => Err(Failure::msg(format!(
            "expected the bridge to be killed by SIG{name} (signal {want}), got {}",
            process::describe(&st)
        ))),
        None => Err(Failure::msg("the bridge did not exit")),
    }
}

/// `expect_exit`: the bridge exits within `bound` (with `code`), and no process of its tree is
/// left (R7).
pub async fn expect_exit(
    s: &mut Session,
    code: Option<i32>,
    bound: Duration,
) -> Result<(), Failure> {
    let since = s.bridge.stdin_closed_at.unwrap_or_else(Instant::now);
    let Some((status, at)) = s.bridge.wait_exit(bound).await else {
        return Err(Failure::msg(format!(
            "the bridge still runs {} ms after the step",
            bound.as_millis()
        )));
    };
    let after = at.saturating_duration_since(since);
    s.note(format!(
        "the bridge exited with {} {} ms after stdin closed",
        process::describe(&status),
        after.as_millis()
    ));
    if let Some(want) = code
        && status.code() != Some(want)
    {
        return Err(Failure::msg(format!(
            "expected exit code {want}, got {}",
            process::describe(&status)
        )));
    }
    let left = process::wait_tree_gone(&s.bridge.tag, TREE_BOUND).await;
    if !left.is_empty() {
        process::kill_tree(&s.bridge.tag);
        return Err(Failure::msg(format!(
            "R7: processes of the tree left {} ms after the exit of the bridge: {left:?}",
            TREE_BOUND.as_millis()
        )));
    }
    Ok(())
}
