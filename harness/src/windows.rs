//! The `--windows` run: the transcripts replayed through the Windows bridge and fixture (under
//! wine on Linux, `ci/windows.sh`). Which transcripts cannot hold there, and why.
//!
//! On Windows the bridge starts its upstream in a job object, not a process group, and no POSIX
//! signal exists (R7's stop sequence there: docs/windows.md). The relay of the scripted upstream
//! and of the tap is the harness built for Windows, over loopback TCP (`HARNESS_RELAY=tcp`).
use crate::format::{Action, Transcript, Upstream};

/// Why a transcript does not run in the `--windows` run, if it does not.
pub fn windows_skip(t: &Transcript) -> Option<String> {
    if let Some(why) = &t.setup.windows {
        return Some(format!("differs on Windows: {why}"));
    }
    match &t.setup.upstream {
        Upstream::Https(_) => return Some("the URL form (HTTPS is tested on Linux)".into()),
        Upstream::Command(cmd)
            if !cmd.iter().any(|a| a.contains("${fixture}"))
                && cmd.first().is_some_and(|p| posix_program(p)) =>
        {
            return Some("a POSIX command as the upstream".into());
        }
        _ => {}
    }
    t.steps.iter().find_map(|s| match &s.action {
        Action::Signal { name, .. } => Some(format!("a POSIX signal (SIG{name})")),
        Action::ExpectExit {
            signal: Some(name), ..
        } => Some(format!("an exit by a POSIX signal (SIG{name})")),
        _ => None,
    })
}

/// True when `program` is a program of this host (a path that exists, or a name on `PATH`),
/// which the Windows bridge cannot start; a program that exists nowhere fails the same way on
/// both systems (R7: spawn_failed).
fn posix_program(program: &str) -> bool {
    let path = std::path::Path::new(program);
    if program.contains('/') {
        return path.exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|dirs| std::env::split_paths(&dirs).any(|d| d.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::windows_skip;

    fn skip(text: &str) -> Option<String> {
        let t = crate::format::parse(std::path::Path::new("t.jsonl"), text).expect("parses");
        windows_skip(&t)
    }

    #[test]
    fn fixture_transcripts_without_signals_run_on_windows() {
        let t = "{\"setup\":{\"profile\":\"local\"}}\n{\"close_stdin\":true}\n{\"expect_exit\":0}";
        assert_eq!(skip(t), None);
    }

    #[test]
    fn signals_and_posix_commands_are_skipped_with_their_reason() {
        let signal = "{\"setup\":{}}\n{\"signal\":\"TERM\"}";
        assert_eq!(skip(signal).as_deref(), Some("a POSIX signal (SIGTERM)"));
        let scripted = "{\"setup\":{\"upstream\":\"scripted\"}}";
        assert_eq!(skip(scripted), None);
        let sh = "{\"setup\":{\"upstream\":{\"command\":[\"sh\",\"-c\",\"exit 3\"]}}}";
        assert_eq!(skip(sh).as_deref(), Some("a POSIX command as the upstream"));
        let nowhere = "{\"setup\":{\"upstream\":{\"command\":[\"/nonexistent/server\"]}}}";
        assert_eq!(skip(nowhere), None);
        let said = "{\"setup\":{\"windows\":\"why\"}}";
        assert_eq!(skip(said).as_deref(), Some("differs on Windows: why"));
    }
}
