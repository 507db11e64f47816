//! The command line of the URL form on the real binary: each refusal exits 2 with its line on
//! stderr and nothing on stdout, and no value (a secret marker) ever reaches stderr.

use assert_cmd::Command;

use crate::support;

const SECRET: &str = "s3cr3t-marker";

fn bridge() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"));
    command.env_remove("MCP_TEST_UNSET_VAR");
    command
}

fn run(args: &[String]) -> (Option<i32>, String, String) {
    let out = bridge()
        .args(args)
        .env("MCP_TEST_SECRET_VAR", format!("Bearer {SECRET}"))
        .env("MCP_TEST_BAD_VAR", format!("{SECRET}\u{1}"))
        .write_stdin("")
        .output()
        .expect("runs");
    support::kept::keep_output("cli", &out);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn refusals_of_the_url_form_give_exit_2_their_line_and_no_value() {
    let s = |text: &str| text.replace("SECRET", SECRET);
    let url = "https://mcp.example.com/mcp".to_owned();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![s("http://SECRET.example.com/mcp")],
            "the URL is not valid: use https: http is permitted only for a loopback host such as 127.0.0.1",
        ),
        (
            vec![s("https://user:SECRET@example.com/mcp")],
            "the URL is not valid: remove the user and the password from the URL: give a secret with --header-env",
        ),
        (
            vec![s("https://example.com/mcp#SECRET")],
            "the URL is not valid: remove the fragment from the URL",
        ),
        (
            vec!["https://example.com:0/mcp".into()],
            "the URL is not valid: the port 0 is not valid",
        ),
        (
            vec![s("ftp://SECRET.example.com/")],
            "the URL is not valid: use https: http is permitted only for a loopback host such as 127.0.0.1",
        ),
        (
            vec!["--header".into(), s("Host:SECRET"), url.clone()],
            "the header Host of --header is refused: the bridge or the HTTP connection sets this header",
        ),
        (
            vec!["--header".into(), s("Mcp-Method:SECRET"), url.clone()],
            "the header Mcp-Method of --header is refused: the header names that start with mcp- are for the protocol",
        ),
        (
            vec![
                "--header-env".into(),
                "Proxy-Authorization=MCP_TEST_SECRET_VAR".into(),
                url.clone(),
            ],
            "the header Proxy-Authorization of --header-env is refused: ",
        ),
        (
            vec![
                "--header".into(),
                s("x-a:SECRET"),
                "--header-env".into(),
                "X-A=MCP_TEST_SECRET_VAR".into(),
                url.clone(),
            ],
            "the header X-A occurs more than one time in --header and --header-env",
        ),
        (
            vec![
                "--header-env".into(),
                "Authorization=MCP_TEST_SECRET_VAR".into(),
                "--client-id".into(),
                "c".into(),
                url.clone(),
            ],
            "a static authorization header and the sign-in options exclude each other",
        ),
        (
            vec![
                "--header".into(),
                s("x-a:SECRET"),
                "--".into(),
                "cmd".into(),
            ],
            "the option --header applies only to the URL form, not to -- and a command",
        ),
        (
            vec![
                "--ca-file".into(),
                "/c.pem".into(),
                "--".into(),
                "cmd".into(),
            ],
            "the option --ca-file applies only to the URL form, not to -- and a command",
        ),
        (
            vec![url.clone(), "--".into(), "cmd".into()],
            "give a URL or -- and a command, not both",
        ),
        (
            vec![url.clone(), "--header".into(), s("x-a:SECRET")],
            "the option --header follows the URL: give the options before the URL",
        ),
        (
            vec![s("--client-secret=SECRET"), url.clone()],
            "the option --client-secret is not known",
        ),
        (
            vec!["--token-store".into(), s("SECRET"), url.clone()],
            "the value of the option --token-store is not valid: use auto, keychain, file or memory",
        ),
        (
            vec!["--redirect-port".into(), "65536".into(), url.clone()],
            "the value of the option --redirect-port is not valid: use a port from 1 to 65535",
        ),
        (
            vec!["--max-response-bytes".into(), "0".into(), url.clone()],
            "the value of the option --max-response-bytes is not valid: use a number of bytes from 1 to 1073741824",
        ),
    ];
    for (args, line) in cases {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!("mcp-bridge-vscode: vscode: error: {line}")),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("Usage: mcp-bridge-vscode "), "{args:?}");
        assert!(!stderr.contains(SECRET), "a value on stderr: {stderr}");
    }
}

#[test]
fn header_env_variables_are_resolved_at_the_start() {
    let url = "https://mcp.example.com/mcp".to_owned();
    for (var, line) in [
        (
            "MCP_TEST_UNSET_VAR",
            "the environment variable MCP_TEST_UNSET_VAR of --header-env is not set, or it is empty",
        ),
        (
            "MCP_TEST_BAD_VAR",
            "the environment variable MCP_TEST_BAD_VAR of --header-env is not valid: the value is not a valid HTTP header value",
        ),
    ] {
        let (code, stdout, stderr) = run(&[
            "--header-env".into(),
            format!("Authorization={var}"),
            url.clone(),
        ]);
        assert_eq!(code, Some(2));
        assert!(stdout.is_empty());
        assert_eq!(
            stderr.lines().next(),
            Some(format!("mcp-bridge-vscode: vscode: error: {line}").as_str())
        );
        assert!(!stderr.contains(SECRET), "{stderr}");
    }
}

#[test]
fn a_secret_looking_header_on_the_command_line_gives_the_warning_without_its_value() {
    let (_, stdout, stderr) = run(&[
        "--header".into(),
        format!("Authorization: Bearer {SECRET}"),
        "https://mcp.example.com/mcp".into(),
    ]);
    assert!(stdout.is_empty());
    assert!(
        stderr.starts_with("mcp-bridge-vscode: vscode: warning: the value of the header Authorization is on the command line. "),
        "{stderr}"
    );
    assert!(!stderr.contains(SECRET), "{stderr}");
}
