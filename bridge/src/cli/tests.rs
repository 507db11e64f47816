use super::*;

fn p(args: &[&str]) -> Result<Command, ArgError> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    parse(&args)
}

fn serve(args: &[&str]) -> Options {
    match p(args) {
        Ok(Command::Serve(o)) => o,
        other => panic!("{args:?}: {other:?}"),
    }
}

fn url_target(args: &[&str]) -> UrlTarget {
    match serve(args).target {
        Target::Url(t) => t,
        other => panic!("{other:?}"),
    }
}

#[test]
fn defaults_and_command() {
    let o = serve(&["--", "/bin/srv", "--its-args", "x"]);
    assert_eq!(o.name, None);
    assert_eq!(o.log_level, Level::Info);
    // S1: the start behind the early answer is not held to the client's 60 s.
    assert_eq!(o.discover_timeout, Duration::from_secs(300));
    assert_eq!(o.answer_initialize_after, Some(Duration::from_secs(40)));
    let off = serve(&["--answer-initialize-after", "off", "--", "/bin/srv"]);
    assert_eq!(off.discover_timeout, Duration::from_secs(60));
    assert_eq!(off.answer_initialize_after, None);
    assert_eq!(o.max_line_bytes, 64 << 20);
    assert_eq!(
        o.target,
        Target::Command {
            command: "/bin/srv".into(),
            args: vec!["--its-args".into(), "x".into()],
            secret_env: Vec::new(),
        }
    );
    // After `--`, nothing is examined: not even --help or an unknown option.
    let o = serve(&["--", "srv", "--help", "--bogus=1", "--", "https://x"]);
    assert!(matches!(o.target, Target::Command { args, .. } if args.len() == 4));
}

#[test]
fn defaults_of_the_url_form() {
    let o = serve(&["https://mcp.example.com:8443/mcp"]);
    assert_eq!(o.name.as_deref(), Some("mcp.example.com"));
    let t = url_target(&["https://mcp.example.com/mcp"]);
    assert_eq!(t.url.as_str(), "https://mcp.example.com/mcp");
    assert!(t.headers.is_empty());
    assert_eq!(t.max_response_bytes, 64 << 20);
    assert_eq!(t.ca_file, None);
    assert_eq!(t.sign_in, SignInOptions::default());
    assert_eq!(t.sign_in.redirect_port, 41894);
    assert_eq!(t.sign_in.account, "default");
    assert_eq!(t.sign_in.sign_in_timeout, Duration::from_secs(300));
    assert_eq!(
        serve(&["--name", "mine", "http://[::1]:9/"])
            .name
            .as_deref(),
        Some("mine")
    );
    assert_eq!(serve(&["http://[::1]:9/"]).name.as_deref(), Some("[::1]"));
}

/// `--opt value`, `--opt=value`, and the last value wins, for every option with a value.
#[test]
fn both_value_forms_and_the_last_value_wins_for_every_option() {
    let cases: [(&str, &str, &str); 15] = [
        ("--name", "a", "b"),
        ("--log-level", "err", "debug"),
        ("--discover-timeout", "5", "6"),
        ("--max-line-bytes", "1", "1073741824"),
        ("--max-response-bytes", "2", "3"),
        ("--ca-file", "/a.pem", "/b.pem"),
        ("--client-id", "id-1", "id-2"),
        ("--client-issuer", "https://a.example", "https://b.example"),
        (
            "--client-metadata-url",
            "https://a.example/c.json",
            "https://b.example/c.json",
        ),
        ("--redirect-port", "1", "65535"),
        ("--account", "work", "me@example.com"),
        ("--token-store", "memory", "file"),
        ("--token-key-file", "/k1", "/k2"),
        ("--sign-in-timeout", "1", "86400"),
        ("--header", "x-a:1", "x-a:2"),
    ];
    for (option, first, last) in cases {
        // --client-issuer needs --client-id.
        let pre: &[&str] = if option == "--client-issuer" {
            &["--client-id", "i"]
        } else {
            &[]
        };
        let equals = format!("{option}={first}");
        let equals_last = format!("{option}={last}");
        let spaced = [pre, &[option, first, option, last, "https://m.example/mcp"]].concat();
        let mixed = [pre, &[&equals, option, last, "https://m.example/mcp"]].concat();
        let equals_only = [pre, &[option, first, &equals_last, "https://m.example/mcp"]].concat();
        for args in [&spaced[..], &mixed[..], &equals_only[..]] {
            if option == "--header" {
                // Each --header adds one header; the same name twice is refused.
                assert_eq!(p(args), Err(ArgError::DuplicateHeader("x-a".into())));
                continue;
            }
            let o = serve(args);
            let t = match &o.target {
                Target::Url(t) => t.clone(),
                other => panic!("{other:?}"),
            };
            let got: String = match option {
                "--name" => o.name.clone().unwrap_or_default(),
                "--log-level" => format!("{:?}", o.log_level).to_lowercase(),
                "--discover-timeout" => o.discover_timeout.as_secs().to_string(),
                "--max-line-bytes" => o.max_line_bytes.to_string(),
                "--max-response-bytes" => t.max_response_bytes.to_string(),
                "--ca-file" => t
                    .ca_file
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
                "--client-id" => t.sign_in.client_id.unwrap_or_default(),
                "--client-issuer" => t
                    .sign_in
                    .client_issuer
                    .map(|u| u.to_string())
                    .unwrap_or_default(),
                "--client-metadata-url" => t
                    .sign_in
                    .client_metadata_url
                    .map(|u| u.to_string())
                    .unwrap_or_default(),
                "--redirect-port" => t.sign_in.redirect_port.to_string(),
                "--account" => t.sign_in.account,
                "--token-store" => format!("{:?}", t.sign_in.token_store).to_lowercase(),
                "--token-key-file" => t
                    .sign_in
                    .token_key_file
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
                _ => t.sign_in.sign_in_timeout.as_secs().to_string(),
            };
            let want = match option {
                "--client-issuer" => format!("{last}/"),
                _ => last.to_owned(),
            };
            assert_eq!(got, want, "{args:?}");
        }
    }
    // The common options also in the command form, and a value with `=` in it.
    let o = serve(&[
        "--name=x=y",
        "--log-level",
        "warn",
        "--log-level=info",
        "--",
        "c",
    ]);
    assert_eq!(o.name.as_deref(), Some("x=y"));
    assert_eq!(o.log_level, Level::Info);
    // A flag may occur two times.
    assert!(
        url_target(&["--no-browser", "--no-browser", "https://m.example"])
            .sign_in
            .no_browser
    );
    // Values that start with a hyphen are values (but `--` never is).
    assert_eq!(
        serve(&["--name", "-x", "--", "c"]).name.as_deref(),
        Some("-x")
    );
}

#[test]
fn help_and_version() {
    assert_eq!(p(&["--help"]), Ok(Command::Help));
    assert_eq!(p(&["--version"]), Ok(Command::Version));
    assert_eq!(
        p(&["--name", "x", "--version", "--bogus"]),
        Ok(Command::Version)
    );
    assert_eq!(
        p(&["--version=1"]),
        Err(ArgError::NoValueAllowed("--version"))
    );
    assert_eq!(p(&["--help=1"]), Err(ArgError::NoValueAllowed("--help")));
    assert_eq!(
        p(&["--no-browser=yes", "https://m.example"]),
        Err(ArgError::NoValueAllowed("--no-browser"))
    );
}

#[test]
fn invalid_arguments_of_the_reference_tests() {
    assert_eq!(p(&[]), Err(ArgError::MissingCommand));
    assert_eq!(p(&["--"]), Err(ArgError::MissingCommand));
    assert_eq!(p(&["--", ""]), Err(ArgError::MissingCommand));
    assert_eq!(p(&["fixture"]), Err(ArgError::CommandWithoutSeparator));
    assert_eq!(p(&["fixture", "a"]), Err(ArgError::CommandWithoutSeparator));
    assert_eq!(
        p(&["--unknown"]),
        Err(ArgError::Unknown("--unknown".into()))
    );
    assert_eq!(p(&["-x"]), Err(ArgError::Unknown("-x".into())));
    assert!(matches!(
        p(&["--log-level", "loud", "--", "c"]),
        Err(ArgError::InvalidValue("--log-level", _))
    ));
    assert_eq!(
        p(&["--name", "--", "c"]),
        Err(ArgError::MissingValue("--name"))
    );
    assert_eq!(p(&["--name"]), Err(ArgError::MissingValue("--name")));
    assert_eq!(p(&["--header"]), Err(ArgError::MissingValue("--header")));
    assert!(matches!(
        p(&["--name=", "--", "c"]),
        Err(ArgError::InvalidValue("--name", _))
    ));
    for bad in ["0", "1073741825", "-1", "x", ""] {
        for option in ["--max-line-bytes", "--max-response-bytes"] {
            assert!(
                matches!(
                    p(&[option, bad, "https://m.example"]),
                    Err(ArgError::InvalidValue(o, _)) if o == option
                ),
                "{option} {bad}"
            );
        }
    }
    for bad in ["0", "86401", "1.5", "x"] {
        for option in ["--discover-timeout", "--sign-in-timeout"] {
            assert!(
                matches!(
                    p(&[option, bad, "https://m.example"]),
                    Err(ArgError::InvalidValue(o, _)) if o == option
                ),
                "{option} {bad}"
            );
        }
    }
    let invalid = |args: &[&str], option: &str| {
        assert!(
            matches!(p(args), Err(ArgError::InvalidValue(o, _)) if o == option),
            "{args:?}: {:?}",
            p(args)
        );
    };
    invalid(
        &["--redirect-port", "0", "https://m.example"],
        "--redirect-port",
    );
    invalid(
        &["--redirect-port", "65536", "https://m.example"],
        "--redirect-port",
    );
    invalid(&["--account", "a|b", "https://m.example"], "--account");
    invalid(&["--account", "", "https://m.example"], "--account");
    invalid(
        &["--account", &"a".repeat(65), "https://m.example"],
        "--account",
    );
    invalid(
        &["--token-store", "vault", "https://m.example"],
        "--token-store",
    );
    invalid(
        &["--client-issuer", "http://a.example", "https://m.example"],
        "--client-issuer",
    );
    invalid(
        &[
            "--client-metadata-url",
            "http://127.0.0.1/c.json",
            "https://m.example",
        ],
        "--client-metadata-url",
    );
    invalid(
        &[
            "--client-metadata-url",
            "https://a.example/",
            "https://m.example",
        ],
        "--client-metadata-url",
    );
    invalid(&["--ca-file", "", "https://m.example"], "--ca-file");
    invalid(&["--client-id", "", "https://m.example"], "--client-id");
    assert_eq!(
        p(&["https://a.example", "--name", "x"]),
        Err(ArgError::OptionAfterUrl("--name"))
    );
    assert_eq!(
        p(&["https://a.example", "--no-browser"]),
        Err(ArgError::OptionAfterUrl("--no-browser"))
    );
    assert_eq!(
        p(&["https://a.example", "b"]),
        Err(ArgError::ArgumentAfterUrl)
    );
    assert_eq!(
        p(&["http://mcp.example.com/mcp"]),
        Err(ArgError::InvalidUrl(url_rule::HINT_SCHEME))
    );
    assert_eq!(
        p(&["https://u@mcp.example.com/"]),
        Err(ArgError::InvalidUrl(url_rule::HINT_USERINFO))
    );
    assert_eq!(p(&["--name", "x"]), Err(ArgError::MissingCommand));
}

#[test]
fn exclusions() {
    for option in URL_OPTIONS {
        let value = match option {
            "--no-browser" => None,
            "--header" => Some("x-a:1"),
            "--header-env" => Some("x-a=V"),
            "--secret-header" => Some("x-a={k}"),
            "--client-issuer" | "--client-metadata-url" => Some("https://a.example/c"),
            "--token-store" => Some("file"),
            "--max-response-bytes" | "--redirect-port" | "--sign-in-timeout" => Some("5"),
            _ => Some("v"),
        };
        let mut args = vec![option];
        args.extend(value);
        args.extend(["--", "cmd"]);
        assert_eq!(
            p(&args),
            Err(ArgError::UrlOptionWithCommand(option)),
            "{args:?}"
        );
    }
    // The command form's own option with a URL.
    assert_eq!(
        p(&["--secret-env", "K=k", "https://a.example/mcp"]),
        Err(ArgError::CommandOptionWithUrl("--secret-env"))
    );
    assert_eq!(
        p(&["https://a.example", "--", "cmd"]),
        Err(ArgError::UrlAndCommand)
    );
    for sign_in in SIGN_IN_OPTIONS {
        let value = match sign_in {
            "--no-browser" => None,
            "--client-issuer" | "--client-metadata-url" => Some("https://a.example/c"),
            "--token-store" => Some("auto"),
            "--redirect-port" | "--sign-in-timeout" => Some("300"),
            _ => Some("v"),
        };
        for header in [
            ["--header", "authorization:x"],
            ["--header-env", "AUTHORIZATION=V"],
        ] {
            let mut args = header.to_vec();
            args.push(sign_in);
            args.extend(value);
            args.push("https://m.example");
            assert_eq!(p(&args), Err(ArgError::AuthorizationAndSignIn), "{args:?}");
        }
    }
    assert_eq!(
        p(&["--client-issuer", "https://a.example", "https://m.example"]),
        Err(ArgError::Needs("--client-issuer", "--client-id"))
    );
    assert_eq!(
        p(&[
            "--client-id",
            "i",
            "--client-metadata-url",
            "https://a.example/c",
            "https://m.example"
        ]),
        Err(ArgError::Excluded("--client-id", "--client-metadata-url"))
    );
    assert_eq!(
        p(&[
            "--token-store",
            "memory",
            "--token-key-file",
            "/k",
            "https://m.example"
        ]),
        Err(ArgError::Needs(
            "--token-key-file",
            "--token-store file or auto"
        ))
    );
    // A sign-in option without an Authorization header, and other headers with sign-in.
    let t = url_target(&["--header", "x-a:1", "--client-id", "i", "https://m.example"]);
    assert_eq!(t.sign_in.client_id.as_deref(), Some("i"));
}

#[test]
fn error_texts_never_carry_a_value() {
    let secret = "s3cr3t-value";
    let with = |f: &str| f.replace("SECRET", secret);
    for args in [
        vec![
            with("--header=Authorization: SECRET"),
            "--".into(),
            "c".into(),
        ],
        vec![with("--token=SECRET")],
        vec![with("--client-secret=SECRET"), "https://m.example".into()],
        vec![
            "--log-level".into(),
            with("SECRET"),
            "--".into(),
            "c".into(),
        ],
        vec![
            "--max-line-bytes".into(),
            with("SECRET"),
            "--".into(),
            "c".into(),
        ],
        vec![
            "--account".into(),
            with("SECRET|"),
            "https://m.example".into(),
        ],
        vec![
            "--token-store".into(),
            with("SECRET"),
            "https://m.example".into(),
        ],
        vec![
            "--redirect-port".into(),
            with("SECRET"),
            "https://m.example".into(),
        ],
        vec![
            "--client-issuer".into(),
            with("http://SECRET.example"),
            "https://m.example".into(),
        ],
        vec![
            "--header".into(),
            with("SECRET"),
            "https://m.example".into(),
        ],
        vec![
            "--header".into(),
            with("x SECRET:v"),
            "https://m.example".into(),
        ],
        vec![
            "--header".into(),
            with("x-a:SECRET\u{1}"),
            "https://m.example".into(),
        ],
        vec![
            "--header-env".into(),
            with("SECRET"),
            "https://m.example".into(),
        ],
        vec![with("http://SECRET.example.com/mcp")],
        vec![with("https://user:SECRET@example.com/mcp")],
        vec![with("https://example.com/#SECRET")],
        vec![with("https://example.com/mcp"), with("SECRET")],
        vec![with("SECRET")],
    ] {
        let e = p(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(!e.is_empty() && !e.contains(secret), "{args:?}: {e}");
    }
}

#[cfg(unix)]
#[test]
fn arguments_that_are_not_utf8() {
    use std::os::unix::ffi::OsStringExt;
    let bad = |prefix: &[u8]| OsString::from_vec([prefix, b"\xff"].concat());
    let parse_of = |args: Vec<OsString>| parse(&args);
    assert_eq!(parse_of(vec![bad(b"--")]), Err(ArgError::NotUtf8));
    assert_eq!(
        parse_of(vec![bad(b"")]),
        Err(ArgError::CommandWithoutSeparator)
    );
    assert_eq!(
        parse_of(vec!["--name".into(), bad(b""), "--".into(), "c".into()]),
        Err(ArgError::InvalidValue("--name", "it is not valid UTF-8"))
    );
    let o = parse_of(vec![
        "--ca-file".into(),
        bad(b"/"),
        "https://m.example".into(),
    ]);
    assert!(matches!(o, Ok(Command::Serve(_))), "{o:?}");
    let o = parse_of(vec!["--".into(), bad(b"/"), bad(b"-")]);
    assert!(matches!(o, Ok(Command::Serve(_))), "{o:?}");
}

#[test]
fn usage_names_every_option_and_both_forms() {
    assert!(USAGE.starts_with("Usage: mcp-bridge-vscode [options] -- <command> [args...]\n"));
    assert!(USAGE.contains("mcp-bridge-vscode [options] <url>"));
    for option in OPTIONS {
        assert!(USAGE.contains(option), "{option}");
    }
}
