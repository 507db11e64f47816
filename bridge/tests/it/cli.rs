//! The command line on the real binary: exit 2 with the cause and the usage on stderr for
//! arguments that are not valid, never a value, nothing on stdout; `--help` and `--version`
//! on stdout with exit 0.

use assert_cmd::Command;

use crate::support;

fn bridge() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
}

#[test]
fn invalid_arguments_give_exit_code_2_and_no_stdout() {
    let secret = "s3cr3t-marker";
    let cases: Vec<Vec<String>> = vec![
        vec![],
        vec!["--".into()],
        vec!["fixture".into()],
        vec!["--unknown".into()],
        vec!["--log-level".into(), "loud".into(), "--".into(), "x".into()],
        vec!["--name".into(), "--".into(), "x".into()],
        vec![
            "--max-line-bytes".into(),
            "0".into(),
            "--".into(),
            "x".into(),
        ],
        vec![
            "--max-line-bytes".into(),
            "1073741825".into(),
            "--".into(),
            "x".into(),
        ],
        vec![
            "--discover-timeout".into(),
            "0".into(),
            "--".into(),
            "x".into(),
        ],
        vec!["--version=1".into()],
        vec!["http://mcp.example.com/mcp".into()],
        vec![
            format!("--header=Authorization: Bearer {secret}"),
            "--".into(),
            "x".into(),
        ],
        vec![format!("--log-level={secret}"), "--".into(), "x".into()],
        vec![format!("https://user:{secret}@example.com/mcp")],
    ];
    for args in cases {
        let out = bridge().args(&args).write_stdin("").output().expect("runs");
        support::kept::keep_output("cli", &out);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("mcp-bridge-vscode: vscode: error: "),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("Usage: mcp-bridge-vscode "), "{args:?}");
        assert!(!stderr.contains(secret), "a value on stderr: {stderr}");
    }
}

#[test]
fn unknown_option_line_of_the_contract() {
    let out = bridge().arg("--unknown").output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some("mcp-bridge-vscode: vscode: error: the option --unknown is not known")
    );
}

#[test]
fn version_and_help_go_to_stdout_with_exit_0() {
    let out = bridge().arg("--version").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("mcp-bridge-vscode {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert!(out.stderr.is_empty());
    let out = bridge().args(["--help"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Usage: mcp-bridge-vscode "));
}
