//! The secret sweep (bridge/README.md "Reliability"): the scenarios of the process
//! tests run with planted, distinctive secrets (form answers, `--header-env` values against the
//! HTTPS fixture with `--bearer-env`, `--header` values, URL query keys, the environment of the
//! upstream, values of refused arguments), all at `--log-level debug`, and every stderr of the
//! bridge is searched for them: zero hits.
#![cfg(unix)]

use crate::support;

use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;
use support::url_upstreams::{HttpsFixture, RawServer, certs_dir};
use support::{Bridge, call, vscode_initialize};

/// Each secret is distinctive: a hit cannot be a word of a log line.
const SECRETS: &[&str] = &[
    "PLANTED-FORM-ANSWER-q7Xv2",
    "PLANTED-BEARER-TOKEN-k3Zr9",
    "PLANTED-WRONG-TOKEN-m8Wd1",
    "PLANTED-API-KEY-HEADER-p4Ln6",
    "PLANTED-CUSTOM-HEADER-s2Hj8",
    "PLANTED-QUERY-KEY-t6Bc3",
    "PLANTED-UPSTREAM-ENV-v9Fg4",
    "PLANTED-REFUSED-HEADER-w1Qe7",
    "PLANTED-SECOND-ANSWER-y5Nu0",
];

fn fixture() -> String {
    support::fixture_bin().to_string_lossy().into_owned()
}

fn ca() -> String {
    certs_dir().join("ca.crt").to_string_lossy().into_owned()
}

/// Answers the next form of the bridge with `secret` as the name.
fn answer_form(b: &mut Bridge, id: u64, secret: &str) {
    b.send(&call(id, "ask_form", json!({})));
    let q = b.next_frame(support::EXCHANGE);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept","content":{"name":secret}}}));
    let r = b.response(id);
    assert!(r.to_string().contains(secret), "{r}");
}

/// A process that is expected to stop at once (argument errors): its whole stderr.
fn run_to_end(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(support::bridge_bin());
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the bridge runs");
    support::kept::keep_output("cli", &out);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn no_planted_secret_reaches_any_stderr() {
    let started = Instant::now();
    let mut stderrs: Vec<(String, String)> = Vec::new();

    // 1. stdio: form answers, and the environment of the upstream.
    let mut b = Bridge::start_with_env(
        &["--log-level", "debug", "--", &fixture()],
        &[("API_KEY", SECRETS[6])],
    );
    b.initialize();
    answer_form(&mut b, 2, SECRETS[0]);
    answer_form(&mut b, 3, SECRETS[8]);
    b.close_and_expect_exit_0();
    stderrs.push(("stdio form answers".into(), b.stderr()));

    // 2. The URL form: --header-env with the fixture's bearer token, --header values, a
    // query key, and a form answer over HTTPS.
    let fixture = HttpsFixture::start(
        &["--bearer-env", "FIXTURE_TOKEN"],
        &[("FIXTURE_TOKEN", SECRETS[1])],
    );
    let url = format!("{}?api_key={}", fixture.url, SECRETS[5]);
    let bearer = format!("Bearer {}", SECRETS[1]);
    let api_key = format!("X-Api-Key: {}", SECRETS[3]);
    let custom = format!("X-Custom: {}", SECRETS[4]);
    let mut b = Bridge::start_with_env(
        &[
            "--log-level",
            "debug",
            "--ca-file",
            &ca(),
            "--header-env",
            "Authorization=BRIDGE_AUTH",
            "--header",
            &api_key,
            "--header",
            &custom,
            &url,
        ],
        &[("BRIDGE_AUTH", &bearer)],
    );
    b.initialize();
    answer_form(&mut b, 2, SECRETS[0]);
    let r = b.exchange(&call(3, "echo", json!({"text": "hello"})));
    assert!(r.get("result").is_some(), "{r}");
    b.close_and_expect_exit_0();
    stderrs.push(("URL form with the bearer token".into(), b.stderr()));

    // 3. The wrong token: 401 on every request.
    let wrong = format!("Bearer {}", SECRETS[2]);
    let mut b = Bridge::start_with_env(
        &[
            "--log-level",
            "debug",
            "--ca-file",
            &ca(),
            "--header-env",
            "Authorization=BRIDGE_AUTH",
            &url,
        ],
        &[("BRIDGE_AUTH", &wrong)],
    );
    let r = b.exchange(&vscode_initialize(1));
    assert!(r.get("error").is_some(), "{r}");
    b.close_and_expect_exit_0();
    stderrs.push(("URL form with a wrong token".into(), b.stderr()));

    // 4. A URL with a query key that cannot be reached, and one that answers garbage.
    let garbage = RawServer::start(|_| {
        support::url_upstreams::Answer::Bytes(support::url_upstreams::status_response(500))
    });
    for target in [
        format!("http://127.0.0.1:1/mcp?token={}", SECRETS[5]),
        format!("{}?token={}", garbage.url, SECRETS[5]),
    ] {
        let mut b = Bridge::start(&["--log-level", "debug", "--header", &custom, &target]);
        let r = b.exchange(&vscode_initialize(1));
        assert!(r.get("error").is_some(), "{r}");
        b.close_and_expect_exit_0();
        stderrs.push((
            format!("unreachable URL {}", target.split('?').next().unwrap_or("")),
            b.stderr(),
        ));
    }

    // 5. Refused arguments that carry a secret value.
    let refused_header = format!("Host: {}", SECRETS[7]);
    let bad_name = format!("Bad Name: {}", SECRETS[7]);
    let userinfo = format!("https://user:{}@example.com/mcp", SECRETS[7]);
    let fragment = format!("https://example.com/mcp#{}", SECRETS[7]);
    let unknown = format!("--bogus={}", SECRETS[7]);
    for args in [
        vec![
            "--header",
            refused_header.as_str(),
            "https://example.com/mcp",
        ],
        vec!["--header", bad_name.as_str(), "https://example.com/mcp"],
        vec![userinfo.as_str()],
        vec![fragment.as_str()],
        vec![unknown.as_str(), "--", "x"],
        vec![
            "--header-env",
            "Authorization=UNSET_VARIABLE_OF_THE_SWEEP",
            "https://example.com/mcp",
        ],
    ] {
        stderrs.push((
            format!("refused {:?}", args[0].split(':').next()),
            run_to_end(&args, &[]),
        ));
    }
    let bad_value = format!("Bearer {}\u{1}", SECRETS[7]);
    stderrs.push((
        "a --header-env value that is not valid".into(),
        run_to_end(
            &[
                "--header-env",
                "Authorization=BRIDGE_AUTH",
                "https://example.com/mcp",
            ],
            &[("BRIDGE_AUTH", &bad_value)],
        ),
    ));

    // The sweep; the control proves that a planted secret would be found.
    let (hits, bytes) = sweep(&stderrs);
    let control = vec![(
        "control".to_owned(),
        format!("x\nmcp-bridge-vscode: bridge: debug: {}\n", SECRETS[3]),
    )];
    assert_eq!(sweep(&control).0.len(), 1);
    eprintln!(
        "secret sweep: {} secrets, {} scenarios, {bytes} bytes of stderr, {} hits, {:.1} s",
        SECRETS.len(),
        stderrs.len(),
        hits.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        hits.is_empty(),
        "planted secrets on stderr:\n{}",
        hits.join("\n")
    );
    assert!(
        bytes > 2000,
        "the scenarios wrote too little to prove anything"
    );
}

/// The lines of `stderrs` with a planted secret, and the bytes searched.
fn sweep(stderrs: &[(String, String)]) -> (Vec<String>, usize) {
    let mut hits = Vec::new();
    let mut bytes = 0;
    for (scenario, text) in stderrs {
        bytes += text.len();
        for secret in SECRETS {
            for line in text.lines().filter(|l| l.contains(secret)) {
                hits.push(format!("{scenario}: {line}"));
            }
        }
    }
    (hits, bytes)
}
