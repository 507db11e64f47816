//! The exit codes of the command line itself, before any transcript or check runs.

use std::process::Command;

use crate::bins::harness;

/// A mistake in the arguments is exit code 2 with clap's message on stderr; `--help` is 0 with
/// the usage on stdout: the same for `harness` and for `harness check`.
#[test]
fn argument_mistakes_exit_2_and_help_exits_0_for_both_commands() {
    for prefix in [&[][..], &["check"][..]] {
        let run = |arg: &str| {
            Command::new(harness())
                .args(prefix)
                .arg(arg)
                .output()
                .expect("the harness runs")
        };
        let wrong = run("--no-such-option");
        assert_eq!(wrong.status.code(), Some(2), "{prefix:?}");
        assert!(
            String::from_utf8_lossy(&wrong.stderr).contains("--no-such-option"),
            "{prefix:?}"
        );
        let help = run("--help");
        assert_eq!(help.status.code(), Some(0), "{prefix:?}");
        assert!(
            String::from_utf8_lossy(&help.stdout).contains("Usage"),
            "{prefix:?}"
        );
    }
}
