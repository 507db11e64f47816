//! Process tests of milestone M4 (docs/options.md, the URL form), the URL form, on the real binaries:
//! `mcp-bridge-vscode [options] <url>` in front of `bridge-fixture-server --listen 127.0.0.1:0`
//! (fixture-server/README.md, "The HTTP mode"), with the test PKI of certs/ (certs/README.md).
//!
//! - the URL form as docs/options.md states it;
//! - the exit at the end of stdin with the listen stream open and a call in flight (R7), and
//!   VS Code's cancellation (the bridge closes the response stream; the fixture logs it);
//! - the exit code 2 of the refused URLs, headers and files, with nothing on stdout;
//! - a static bearer token through `--header-env`, which never reaches stderr;
//! - the proxies of the contract's "Environment limits": `HTTPS_PROXY`, `ALL_PROXY` (with
//!   credentials in the proxy URL), `NO_PROXY`, and no proxy for a loopback host;
//! - R1: without server information, the name is the host of the URL.
//!
//! Every wait is bounded; nothing sleeps to synchronise. A bridge at a URL has no child
//! process, so the end of its stderr proves that nothing of its tree is left.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::https_fixture::{HttpsFixture, ca_file};
use support::proxy::{FIXTURE_HOST, Proxy};
use support::{Bridge, EXCHANGE, call, request};

/// The URL form: the bridge exits within 2 s of the end of stdin.
const EXIT_2S: Duration = Duration::from_secs(2);

/// The proxy variables of the machine that runs the tests, in both cases: each proxy test
/// sets its own.
use support::MACHINE_VARS as PROXY_VARS;

/// Every tool of the fixture (fixture-server/README.md, "Tools").
const FIXTURE_TOOLS: [&str; 22] = [
    "echo",
    "add",
    "slow",
    "progress",
    "bare_array",
    "structured",
    "crash",
    "shutdown",
    "ask_form",
    "ask_url",
    "ask_url_twice",
    "ask_bad_url",
    "sample",
    "sample_tools",
    "list_roots",
    "multi",
    "many_inputs",
    "toggle",
    "toggled",
    "touch",
    "log",
    "show",
];

fn initialized() -> Value {
    json!({"method":"notifications/initialized","jsonrpc":"2.0"})
}

/// The names of every tool, with VS Code's paging (while `nextCursor` is present).
fn list_tools(b: &mut Bridge, first_id: u64) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    for page in 0..20u64 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = b.exchange(&request(first_id + page, "tools/list", params));
        let result = &r["result"];
        for tool in result["tools"].as_array().expect("tools") {
            names.push(tool["name"].as_str().expect("name").to_owned());
        }
        match result.get("nextCursor") {
            Some(c) => cursor = Some(c.clone()),
            None => return names,
        }
    }
    panic!("more than 20 pages")
}

/// A bridge at `url` through the fixture's CA, initialized (VS Code's line) and
/// `notifications/initialized` sent.
fn bridge_at(url: &str, extra: &[&str], env: &[(&str, &str)]) -> Bridge {
    let ca = ca_file();
    let mut args = vec!["--ca-file", ca.as_str()];
    args.extend_from_slice(extra);
    args.push(url);
    let mut b = Bridge::start_with_env_removed(&args, env, &PROXY_VARS);
    b.initialize();
    b.send(&initialized());
    b
}

/// The "Done when": the listening line; VS Code's initialize answered with the
/// fixture's serverInfo; every fixture tool listed; `add` gives 5; three progress
/// notifications with the token 0; `ask_form` through `elicitation/create`; exit 0 within 2 s
/// of the end of stdin.
#[test]
fn m4_done_when_the_bridge_at_the_url_of_the_https_fixture() {
    let fixture = HttpsFixture::start(&[], &[]);
    let rest = fixture
        .url
        .strip_prefix("https://127.0.0.1:")
        .and_then(|r| r.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("the listening URL is {}", fixture.url));
    assert!(rest.parse::<u16>().is_ok_and(|p| p > 0), "{}", fixture.url);

    let ca = ca_file();
    let mut b = Bridge::start_with_env_removed(&["--ca-file", &ca, &fixture.url], &[], &PROXY_VARS);
    let init = b.initialize();
    assert_eq!(
        init["serverInfo"]["name"], "bridge-fixture-server",
        "{init}"
    );
    assert!(init["serverInfo"]["version"].is_string(), "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    b.send(&initialized());

    let names = list_tools(&mut b, 2);
    for tool in FIXTURE_TOOLS {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }

    let add = b.exchange(&call(30, "add", json!({"a":2,"b":3})));
    assert_eq!(add["result"]["content"][0]["text"], "5", "{add}");

    let mut progress = call(31, "progress", json!({"count":3}));
    progress["params"]["_meta"] = json!({"progressToken": 0});
    b.send(&progress);
    let (done, notes) = b.response_with_notifications(&json!(31));
    assert_eq!(
        done["result"]["content"][0]["text"], "sent 3 progress notifications",
        "{done}"
    );
    let progress: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{notes:?}");
    for (i, note) in progress.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], json!(0), "{note}");
        // rmcp writes the numbers as floats (fixture-server/README.md).
        assert_eq!(
            note["params"]["progress"].as_f64(),
            Some((i + 1) as f64),
            "{note}"
        );
    }

    b.send(&call(32, "ask_form", json!({})));
    let ask = loop {
        let frame = b.next_frame(EXCHANGE);
        if frame["method"] != "notifications/tools/list_changed"
            && frame["method"] != "notifications/prompts/list_changed"
            && frame["method"] != "notifications/resources/list_changed"
        {
            break frame;
        }
    };
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Tell us about you.", "{ask}");
    b.send(&json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"name":"Ada"}}}));
    let form = b.response(32);
    let text = form["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.starts_with("form: accept"), "{form}");

    let since = b.close_stdin();
    let status = b.wait_exit(since, EXIT_2S);
    assert_eq!(status.code(), Some(0), "stderr:\n{}", b.stderr());
}

/// The "Done when": with the fixture killed, a call gets -32603 and the bridge keeps
/// running (an upstream at a URL never stops it); after a restart nothing else is needed.
#[test]
fn m4_with_the_fixture_killed_a_call_gets_32603_and_the_bridge_runs_on() {
    let mut fixture = HttpsFixture::start(&[], &[]);
    let mut b = bridge_at(&fixture.url, &[], &[]);
    let add = b.exchange(&call(2, "add", json!({"a":2,"b":3})));
    assert_eq!(add["result"]["content"][0]["text"], "5", "{add}");
    fixture.kill();
    let failed = b.exchange(&call(3, "add", json!({"a":2,"b":3})));
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let ping = b.exchange(&request(4, "ping", json!({})));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let failed = b.exchange(&call(5, "echo", json!({"text":"x"})));
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    b.close_and_expect_exit_0();
}

/// The "Done when": each refusal exits 2 with nothing on stdout (wait_exit fails on
/// any stdout line), and the cause on stderr.
#[test]
fn m4_refused_urls_headers_and_files_exit_2_with_nothing_on_stdout() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["http://example.com/mcp"],
            "the URL is not valid: use https: http is permitted only for a loopback host",
        ),
        (
            &["https://user@example.com/mcp"],
            "the URL is not valid: remove the user and the password from the URL",
        ),
        (
            &["--header", "Host:x", "https://example.com/mcp"],
            "the header Host of --header is refused",
        ),
        (
            &["--ca-file", "/nonexistent", "https://example.com/mcp"],
            "cannot use the CA certificates of --ca-file: ",
        ),
        (
            &[
                "--header-env",
                "Authorization=MCP_TEST_M4_UNSET_VARIABLE",
                "https://example.com/mcp",
            ],
            "the environment variable MCP_TEST_M4_UNSET_VARIABLE of --header-env is not set, or it is empty",
        ),
    ];
    for (args, cause) in cases {
        let mut b = Bridge::start_with_env_removed(args, &[], &["MCP_TEST_M4_UNSET_VARIABLE"]);
        let status = b.wait_exit(Instant::now(), EXCHANGE);
        assert_eq!(status.code(), Some(2), "{args:?}: {}", b.stderr());
        assert!(b.all_frames.is_empty(), "{args:?}: {:?}", b.all_frames);
        let first = b.stderr().lines().next().unwrap_or_default().to_owned();
        assert!(
            first.starts_with(&format!("mcp-bridge-vscode: vscode: error: {cause}")),
            "{args:?}: {}",
            b.stderr()
        );
    }
}

/// The "Done when": a `--bearer-env` fixture reached with
/// `--header-env Authorization=VAR`; the token never appears on stderr (also at the debug
/// level). A wrong token: initialize fails with `HTTP status 401` in the detail and one
/// warning line, the bridge stays up, and that token never appears on stderr either.
#[test]
fn m4_a_static_bearer_token_through_header_env_never_reaches_stderr() {
    const TOKEN: &str = "m4-token-5d7e1f";
    const WRONG: &str = "m4-wrong-token-88c2";
    let fixture = HttpsFixture::start(
        &["--bearer-env", "MCP_TEST_M4_FIXTURE_TOKEN"],
        &[("MCP_TEST_M4_FIXTURE_TOKEN", TOKEN)],
    );
    let right = format!("Bearer {TOKEN}");
    let mut b = bridge_at(
        &fixture.url,
        &[
            "--log-level",
            "debug",
            "--header-env",
            "Authorization=MCP_TEST_M4_AUTH",
        ],
        &[("MCP_TEST_M4_AUTH", &right)],
    );
    let add = b.exchange(&call(2, "add", json!({"a":2,"b":3})));
    assert_eq!(add["result"]["content"][0]["text"], "5", "{add}");
    b.close_and_expect_exit_0();
    assert!(
        !b.stderr().contains(TOKEN),
        "the token on stderr:\n{}",
        b.stderr()
    );

    let wrong = format!("Bearer {WRONG}");
    let ca = ca_file();
    let mut b = Bridge::start_with_env_removed(
        &[
            "--log-level",
            "debug",
            "--ca-file",
            &ca,
            "--header-env",
            "Authorization=MCP_TEST_M4_AUTH",
            &fixture.url,
        ],
        &[("MCP_TEST_M4_AUTH", &wrong)],
        &PROXY_VARS,
    );
    let r = b.exchange(&support::vscode_initialize(1));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let detail = r["error"]["data"]["detail"].as_str().unwrap_or("");
    assert!(detail.contains("HTTP status 401"), "{r}");
    let ping = b.exchange(&request(2, "ping", json!({})));
    assert_eq!(ping["result"], json!({}), "{ping}");
    b.close_and_expect_exit_0();
    let stderr = b.stderr();
    let warnings = stderr
        .lines()
        .filter(|l| l.contains("refused the request with the HTTP status 401"))
        .count();
    assert_eq!(warnings, 1, "{stderr}");
    assert!(!stderr.contains(WRONG), "the token on stderr:\n{stderr}");
    assert!(!stderr.contains(TOKEN), "the token on stderr:\n{stderr}");
}

/// The first list change of the gap replay: the listen stream is open (acknowledged).
fn wait_listen_stream(b: &mut Bridge) {
    let frame = b.next_frame(EXCHANGE);
    assert_eq!(
        frame["method"], "notifications/tools/list_changed",
        "the gap replay of the first listen stream: {frame}"
    );
}

/// Sends a progress call with VS Code's token and waits for its first progress
/// notification: the call runs at the fixture.
fn call_in_flight(b: &mut Bridge, id: u64) {
    let mut slow = call(id, "progress", json!({"count":10000,"ms":50}));
    slow["params"]["_meta"] = json!({"progressToken": "3f1c2e0a-8d0b-4f7e-9a51-6c2d1b7e9f10"});
    b.send(&slow);
    loop {
        let frame = b.next_frame(EXCHANGE);
        assert!(frame.get("id").is_none(), "{frame}");
        if frame["method"] == "notifications/progress" {
            return;
        }
    }
}

/// R7 of the URL form: at the end of stdin with the listen stream open and a call in flight,
/// the bridge exits 0 within 2 s, without a response for the call; no process is left (the
/// end of stderr). The bridge closed the call's response stream: the fixture says so.
#[test]
fn m4_exit_0_at_the_end_of_stdin_with_a_listen_stream_and_a_call_in_flight() {
    let fixture = HttpsFixture::start(&[], &[]);
    let mut b = bridge_at(&fixture.url, &[], &[]);
    wait_listen_stream(&mut b);
    call_in_flight(&mut b, 2);
    let since = b.close_stdin();
    let status = b.wait_exit(since, EXIT_2S);
    assert_eq!(status.code(), Some(0), "stderr:\n{}", b.stderr());
    assert!(
        !b.all_frames.iter().any(|f| f["id"] == 2),
        "a response for the call in flight"
    );
    fixture.expect_text(
        "info(http): the client closed the response stream of tools/call before its end: the request is cancelled",
    );
}

/// VS Code's cancellation over HTTP: `notifications/cancelled` for a call in flight gives no
/// response; the bridge closes that POST's response stream, which the fixture logs as the
/// cancellation; the next call works.
#[test]
fn m4_cancelled_by_vscode_the_fixture_sees_the_response_stream_closed() {
    let fixture = HttpsFixture::start(&[], &[]);
    let mut b = bridge_at(&fixture.url, &[], &[]);
    wait_listen_stream(&mut b);
    call_in_flight(&mut b, 2);
    b.send(&json!({"method":"notifications/cancelled","params":{"requestId":2},"jsonrpc":"2.0"}));
    fixture.expect_text(
        "info(http): the client closed the response stream of tools/call before its end: the request is cancelled",
    );
    let add = b.exchange(&call(3, "add", json!({"a":1,"b":1})));
    assert_eq!(add["result"]["content"][0]["text"], "2", "{add}");
    b.close_and_expect_exit_0();
    assert!(
        !b.all_frames.iter().any(|f| f["id"] == 2),
        "a response for the cancelled call"
    );
}

/// A session through a proxy: initialize, add, exit 0.
fn works(b: &mut Bridge) {
    let add = b.exchange(&call(2, "add", json!({"a":2,"b":3})));
    assert_eq!(add["result"]["content"][0]["text"], "5", "{add}");
    b.close_and_expect_exit_0();
}

/// `HTTPS_PROXY`: the bridge reaches `https://fixture.test:<port>/mcp` through the proxy, which
/// resolves the name itself (the targets name `fixture.test`, so the bridge did not resolve
/// it).
#[test]
fn m4_https_proxy_carries_the_requests_to_a_name_that_only_the_proxy_resolves() {
    let fixture = HttpsFixture::start(&[], &[]);
    let proxy = Proxy::start();
    let url = fixture.url_with_host(FIXTURE_HOST);
    let mut b = bridge_at(&url, &[], &[("HTTPS_PROXY", &proxy.url())]);
    works(&mut b);
    let target = format!("{FIXTURE_HOST}:{}", fixture.port);
    let targets = proxy.targets();
    assert!(!targets.is_empty(), "no tunnel");
    assert!(targets.iter().all(|t| *t == target), "{targets:?}");
    assert!(proxy.tunnels() >= 1);
    assert_eq!(proxy.refused(), 0, "{targets:?}");
}

/// `ALL_PROXY` alone, with the user and the password in the proxy URL (the proxy requires
/// them): the same session works.
#[test]
fn m4_all_proxy_with_credentials_in_the_proxy_url() {
    let fixture = HttpsFixture::start(&[], &[]);
    let proxy = Proxy::with_credentials("m4user", "m4pass");
    let url = fixture.url_with_host(FIXTURE_HOST);
    let proxy_url = proxy.url_with_credentials("m4user", "m4pass");
    let mut b = bridge_at(&url, &[], &[("ALL_PROXY", &proxy_url)]);
    works(&mut b);
    assert!(proxy.tunnels() >= 1);
    assert_eq!(proxy.refused(), 0, "{:?}", proxy.targets());
    assert!(!b.stderr().contains("m4pass"), "{}", b.stderr());
}

/// `HTTPS_PROXY` with the credentials in its URL.
#[test]
fn m4_https_proxy_with_credentials_in_the_proxy_url() {
    let fixture = HttpsFixture::start(&[], &[]);
    let proxy = Proxy::with_credentials("m4user", "m4pass");
    let url = fixture.url_with_host(FIXTURE_HOST);
    let proxy_url = proxy.url_with_credentials("m4user", "m4pass");
    let mut b = bridge_at(&url, &[], &[("HTTPS_PROXY", &proxy_url)]);
    works(&mut b);
    assert!(proxy.tunnels() >= 1);
    assert_eq!(proxy.refused(), 0, "{:?}", proxy.targets());
}

/// `NO_PROXY=fixture.test`: no tunnel; the bridge resolves `fixture.test` itself, which fails
/// (a name under the reserved `.test`), so initialize fails with the cause of a discover that
/// got no answer, and the bridge stays up.
#[test]
fn m4_no_proxy_names_a_host_without_the_proxy() {
    let fixture = HttpsFixture::start(&[], &[]);
    let proxy = Proxy::start();
    let url = fixture.url_with_host(FIXTURE_HOST);
    let ca = ca_file();
    let mut b = Bridge::start_with_env_removed(
        &["--ca-file", &ca, &url],
        &[("HTTPS_PROXY", &proxy.url()), ("NO_PROXY", FIXTURE_HOST)],
        &PROXY_VARS,
    );
    let r = b.exchange(&support::vscode_initialize(1));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    // The bridge asked its own resolver (hyper's connector names it "dns error").
    let detail = r["error"]["data"]["detail"].as_str().unwrap_or("");
    assert!(detail.contains("dns error"), "{r}");
    b.close_and_expect_exit_0();
    assert_eq!(proxy.tunnels(), 0);
    assert!(proxy.targets().is_empty(), "{:?}", proxy.targets());
}

/// A loopback host never uses the proxy: `https://127.0.0.1:<port>/mcp` and
/// `https://localhost:<port>/mcp` with `HTTPS_PROXY` and `ALL_PROXY` set work without a tunnel.
#[test]
fn m4_a_loopback_host_never_uses_the_proxy() {
    let fixture = HttpsFixture::start(&[], &[]);
    let proxy = Proxy::start();
    for host in ["127.0.0.1", "localhost"] {
        let url = fixture.url_with_host(host);
        let mut b = bridge_at(
            &url,
            &[],
            &[("HTTPS_PROXY", &proxy.url()), ("ALL_PROXY", &proxy.url())],
        );
        works(&mut b);
    }
    assert_eq!(proxy.tunnels(), 0);
    assert!(proxy.targets().is_empty(), "{:?}", proxy.targets());
}

/// A plain-HTTP MCP server on 127.0.0.1 whose `server/discover` result has no server
/// information (neither does any fixture tool): one response per connection, JSON.
fn serve_discover_without_server_info() -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let thread = std::thread::spawn(move || {
        // One bridge, one discover: serve until the discover was answered, and the few
        // notifications after it.
        for stream in listener.incoming().take(4) {
            let Ok(stream) = stream else { return };
            let _ = stream.set_read_timeout(Some(EXCHANGE));
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0u8; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let frame: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let mut stream = reader.into_inner();
            let answer = if frame["method"] == "server/discover" {
                let body = json!({"jsonrpc":"2.0","id":frame["id"],"result":{
                    "resultType":"complete","ttlMs":0,"cacheScope":"private",
                    "supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}})
                .to_string();
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            } else {
                "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into()
            };
            let _ = stream.write_all(answer.as_bytes());
            let _ = stream.flush();
        }
    });
    (url, thread)
}

/// R1 of the URL form: without server information from the upstream server, serverInfo has
/// the host of the URL as its name (and `--name` when given), and the bridge's version.
#[test]
fn m4_r1_the_name_defaults_to_the_host_of_the_url() {
    for (extra, name) in [(&[][..], "127.0.0.1"), (&["--name", "demo"][..], "demo")] {
        let (url, _server) = serve_discover_without_server_info();
        let mut args: Vec<&str> = extra.to_vec();
        args.push(&url);
        let mut b = Bridge::start_with_env_removed(&args, &[], &PROXY_VARS);
        let init = b.initialize();
        assert_eq!(init["serverInfo"]["name"], name, "{init}");
        assert_eq!(
            init["serverInfo"]["version"],
            mcp_bridge_vscode::VERSION,
            "{init}"
        );
        b.close_and_expect_exit_0();
    }
}
