//! The unit tests of the command line (cli.rs).

use super::*;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn reads_the_options() {
    assert_eq!(parse(&args(&[])), Ok(Command::Serve(Options::default())));
    assert_eq!(
        parse(&args(&["--many-tools", "30", "--close-stdout"])),
        Ok(Command::Serve(Options {
            many_tools: 30,
            close_stdout: true,
            ..Options::default()
        }))
    );
    assert_eq!(
        parse(&args(&["--many-tools=7"])),
        Ok(Command::Serve(Options {
            many_tools: 7,
            ..Options::default()
        }))
    );
    assert_eq!(
        parse(&args(&["--many-tools", "1", "--help"])),
        Ok(Command::Help)
    );
    assert_eq!(parse(&args(&["--version"])), Ok(Command::Version));
}

#[test]
fn reads_the_options_of_the_http_mode() {
    let parsed = parse(&args(&[
        "--listen",
        "127.0.0.1:0",
        "--bearer-env=TOKEN",
        "--listen-status",
        "503:2",
        "--untrusted",
        "--always-sse",
    ]));
    assert_eq!(
        parsed,
        Ok(Command::Serve(Options {
            listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
            bearer_env: Some("TOKEN".into()),
            listen_status: Some((503, 2)),
            untrusted: true,
            always_sse: true,
            ..Options::default()
        }))
    );
    assert!(parse(&args(&["--listen", "[::1]:8080", "--plain-http"])).is_ok());
    assert!(parse(&args(&["--listen=127.1.2.3:1"])).is_ok());
}

#[test]
fn refuses_http_options_that_are_not_valid() {
    assert_eq!(
        parse(&args(&["--listen", "0.0.0.0:0"])),
        Err(
            "--listen accepts only a loopback address (127.0.0.0/8 or [::1]), not '0.0.0.0:0'"
                .into()
        )
    );
    assert_eq!(
        parse(&args(&["--listen", "localhost:1"])),
        Err("--listen needs <ip>:<port>, not 'localhost:1'".into())
    );
    assert_eq!(
        parse(&args(&["--plain-http"])),
        Err("the option --plain-http needs --listen".into())
    );
    assert_eq!(
        parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--listen-status",
            "99:1"
        ])),
        Err("--listen-status needs <status>:<count>, not '99:1'".into())
    );
    assert!(parse(&args(&["--listen", "127.0.0.1:0", "--close-stdout"])).is_err());
    assert!(
        parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--untrusted",
            "--plain-http"
        ]))
        .is_err()
    );
}

#[test]
fn reads_the_options_of_the_authorization_server() {
    let parsed = parse(&args(&[
        "--listen",
        "127.0.0.1:0",
        "--oauth",
        "--deny",
        "--no-registration",
        "--cimd",
        "--token-lifetime=30",
        "--no-refresh-tokens",
        "--access-token-bytes=4000",
    ]));
    let Ok(Command::Serve(options)) = parsed else {
        panic!("{parsed:?}");
    };
    assert!(options.oauth && options.deny && options.no_registration && options.cimd);
    assert!(options.no_refresh_tokens && !options.no_cimd);
    assert_eq!(options.token_lifetime(), 30);
    assert_eq!(Options::default().token_lifetime(), 900);
    assert_eq!(options.access_token_bytes, Some(4000));
    let short = [
        "--listen",
        "127.0.0.1:0",
        "--oauth",
        "--access-token-bytes",
        "44",
    ];
    assert_eq!(
        parse(&args(&short)),
        Err("--access-token-bytes needs a number from 45 to 65536, not '44'".into())
    );
    assert_eq!(
        parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--access-token-bytes=100"
        ])),
        Err("the option --access-token-bytes needs --oauth".into())
    );
    assert_eq!(
        parse(&args(&["--oauth"])),
        Err("the option --oauth needs --listen".into())
    );
    assert_eq!(
        parse(&args(&["--listen", "127.0.0.1:0", "--deny"])),
        Err("the option --deny needs --oauth".into())
    );
    assert_eq!(
        parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--oauth",
            "--token-lifetime",
            "0"
        ])),
        Err("--token-lifetime needs a number from 1 to 86400, not '0'".into())
    );
    assert!(
        parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--oauth",
            "--bearer-env",
            "T"
        ]))
        .is_err()
    );
    assert!(
        parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--oauth",
            "--cimd",
            "--no-cimd"
        ]))
        .is_err()
    );
}

#[test]
fn reads_the_test_browser() {
    assert_eq!(
        parse(&args(&[
            "--browse",
            "http://127.0.0.1:1/start/x",
            "--ca-file",
            "ca.pem"
        ])),
        Ok(Command::Browse(Browse {
            url: "http://127.0.0.1:1/start/x".into(),
            ca_file: Some("ca.pem".into()),
        }))
    );
    assert_eq!(
        parse(&args(&["--browse", "https://a/", "--oauth"])),
        Err("the option --browse takes no other option than --ca-file".into())
    );
    assert_eq!(
        parse(&args(&["--ca-file", "ca.pem"])),
        Err("the option --ca-file needs --browse".into())
    );
}

#[test]
fn reads_the_embedded_mode() {
    let embedded = |discover| {
        Ok(Command::Serve(Options {
            embedded: Some(discover),
            ..Options::default()
        }))
    };
    assert_eq!(parse(&args(&["--embedded"])), embedded(Discover::Answer));
    assert_eq!(
        parse(&args(&["--embedded=refuse"])),
        embedded(Discover::Refuse)
    );
    assert_eq!(
        parse(&args(&["--embedded=yes"])),
        Err("--embedded takes only =refuse, not 'yes'".into())
    );
    assert!(parse(&args(&["--embedded", "--listen", "127.0.0.1:0"])).is_err());
    assert!(parse(&args(&["--embedded", "--close-stdout"])).is_err());
}

#[test]
fn refuses_arguments_that_are_not_valid() {
    assert_eq!(
        parse(&args(&["--many-tools", "x1"])),
        Err("--many-tools needs a number, not 'x1'".into())
    );
    assert_eq!(
        parse(&args(&["--many-tools"])),
        Err("the option --many-tools needs a value".into())
    );
    assert_eq!(
        parse(&args(&["--many-tools", "10001"])),
        Err("--many-tools needs a number from 0 to 10000, not '10001'".into())
    );
    assert_eq!(
        parse(&args(&["--bogus"])),
        Err("the option --bogus is not known".into())
    );
    assert_eq!(
        parse(&args(&["--close-stdout=1"])),
        Err("the option --close-stdout takes no value".into())
    );
}

#[test]
fn the_clap_definition_is_consistent() {
    use clap::CommandFactory;
    Line::command().debug_assert();
}

#[test]
fn names_both_options_that_exclude_each_other_and_a_repeated_one() {
    let listen = ["--listen", "127.0.0.1:0", "--oauth"];
    assert_eq!(
        parse(&args(&[&listen[..], &["--cimd", "--no-cimd"]].concat())),
        Err("the options --cimd and --no-cimd exclude each other".into())
    );
    assert_eq!(
        parse(&args(&["--many-tools", "1", "--many-tools=2"])),
        Err("the option --many-tools is given twice".into())
    );
}
