//! Fuzzing on stable: the URL rules and the command line. Each target is driven by a seeded
//! generator (`crate::test_support::values::Rng`) over generated and mutated inputs and checks
//! the rules' properties: an accepted URL has no user, password or fragment and a permitted
//! scheme, and reads the same when written and checked again (parse, write, parse); an error
//! of the command line is one line without the values given. Each counts the cases that
//! reached its property and fails below a floor. The generators and the number of cases:
//! `crate::test_support::fuzz`.

use std::ffi::OsString;

use crate::cli::{self, url_rule::check_url};
use crate::input::url::url_allowed;
use crate::test_support::fuzz::{assert_floor, cases, rng};
use crate::test_support::values::Rng;

// ---------------------------------------------------------------------------------------
// Target: the URL rules (the URL form's `check_url`, the URL elicitation's `url_allowed`)

const SCHEMES: &[&str] = &[
    "https://",
    "http://",
    "HTTPS://",
    "HtTp://",
    "ftp://",
    "file://",
    "javascript:",
    "http:",
    "https:/",
    "https:///",
    "data:",
    "vscode://",
    "command:",
];
const HOSTS: &[&str] = &[
    "example.com",
    "localhost",
    "LOCALHOST.",
    "a.localhost",
    "localhost.evil.com",
    "127.0.0.1",
    "127.1",
    "0x7f.1",
    "2130706433",
    "128.0.0.1",
    "[::1]",
    "[::2]",
    "[::ffff:127.0.0.1]",
    "[0:0:0:0:0:0:0:1]",
    "%6cocalhost",
    "xn--bcher-kva.example",
    "bücher.example",
    "user@localhost",
    "u:p@127.0.0.1",
    "@localhost",
    "evil.com\\@localhost",
    "evil.com%2f@localhost",
    "",
    " ",
    "localhost:0",
    "localhost:65536",
    "localhost:8080",
    "[::1]:443",
    "ex ample.com",
    "\u{3002}x",
];
const TAILS: &[&str] = &[
    "", "/", "/mcp", "/mcp?x=1", "#frag", "/a#", "?q", "\\x", "/%2e%2e/", "/\u{0}",
];

#[test]
fn fuzz_url_rules() {
    let mut rng = rng(6);
    let run = cases() * 4;
    let (mut accepted, mut allowed_count) = (0, 0);
    for case in 0..run {
        let mut url = String::new();
        for _ in 0..1 + rng.next() % 2 {
            url.push_str(SCHEMES[(rng.next() as usize) % SCHEMES.len()]);
            url.push_str(HOSTS[(rng.next() as usize) % HOSTS.len()]);
            url.push_str(TAILS[(rng.next() as usize) % TAILS.len()]);
        }
        if rng.next().is_multiple_of(4) {
            let bytes = mutated_text(&mut rng, &url);
            url = bytes;
        }
        let checked = check_url(&url);
        if let Ok(u) = &checked {
            assert!(u.username().is_empty() && u.password().is_none(), "{url}");
            assert!(u.fragment().is_none(), "{url}");
            let loopback = u.host().is_some_and(|h| {
                crate::cli::url_rule::is_loopback(&h, crate::cli::url_rule::Loopback::UrlForm)
            });
            assert!(
                u.scheme() == "https" || (u.scheme() == "http" && loopback),
                "{url}"
            );
            // The round trip: the URL as written is accepted as the same URL.
            accepted += 1;
            let again = check_url(u.as_str());
            assert_eq!(again.as_ref().ok(), Some(u), "case {case}: {url} -> {u}");
        }
        let allowed = url_allowed(&url);
        if allowed {
            allowed_count += 1;
            let lower = url.to_ascii_lowercase();
            assert!(
                lower.starts_with("https://") || lower.starts_with("http://"),
                "{url}"
            );
            assert!(!url.contains('\\'), "{url}");
        }
    }
    assert_floor("URL form: URLs accepted", accepted, run, 60);
    assert_floor("URL elicitation: URLs allowed", allowed_count, run, 50);
}

fn mutated_text(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let extra = [
        '%', '@', '\\', '/', ':', '[', ']', '.', '#', '?', 'é', '\u{ff0e}',
    ];
    for _ in 0..1 + rng.next() % 3 {
        let at = (rng.next() as usize) % (chars.len() + 1);
        if rng.next().is_multiple_of(2) || chars.is_empty() {
            chars.insert(at, extra[(rng.next() as usize) % extra.len()]);
        } else {
            chars.remove(at.min(chars.len() - 1));
        }
    }
    chars.into_iter().collect()
}

/// Fixed vectors of the two URL rules (the contract's URL form and URL elicitation rules, and
/// the troubleshooting line of a refused URL): (URL, check_url accepts, url_allowed accepts).
const URL_VECTORS: &[(&str, bool, bool)] = &[
    ("https://mcp.example.com/mcp", true, true),
    ("HTTPS://mcp.example.com/mcp", true, true),
    ("https://mcp.example.com:8443/mcp?x=1", true, true),
    ("http://localhost/mcp", true, true),
    ("http://LOCALHOST:8080/mcp", true, true),
    // The URL form takes `localhost` and `*.localhost`, not the root form `localhost.`.
    ("http://localhost./mcp", false, true),
    ("http://127.0.0.1:3000/mcp", true, true),
    ("http://127.9.8.7/", true, true),
    ("http://[::1]:3000/mcp", true, true),
    ("http://[0:0:0:0:0:0:0:1]/", true, true),
    ("http://[::ffff:127.0.0.1]/", false, true),
    ("http://a.localhost/mcp", true, false),
    ("http://example.com/mcp", false, false),
    ("http://localhost.example.com/", false, false),
    ("http://128.0.0.1/", false, false),
    ("http://[::2]/", false, false),
    ("ftp://example.com/", false, false),
    ("file:///etc/passwd", false, false),
    ("javascript:alert(1)", false, false),
    ("vscode://ext/x", false, false),
    ("command:workbench.action.quit", false, false),
    ("data:text/html,x", false, false),
    ("https://user@example.com/", false, true),
    ("https://user:pass@example.com/", false, true),
    ("http://user@localhost/", false, false),
    ("http://u:p@127.0.0.1/", false, false),
    ("https://@example.com/", false, true),
    ("http://localhost@example.com/", false, false),
    ("http://evil.com\\@localhost/", false, false),
    // The URL form connects where the WHATWG parser says (the host before the backslash);
    // a URL elicitation needs both parsers to agree.
    ("https://example.com\\@example.org/", true, false),
    ("http://localhost\\.evil.com/", true, false),
    ("https://example.com/#frag", false, true),
    ("https://example.com/a#", false, true),
    ("https:///x", false, false),
    ("https://", false, false),
    ("https://example.com:0/", false, true),
    ("https://example.com:65536/", false, false),
    ("https://bücher.example/", false, false),
    ("https://xn--bcher-kva.example/", true, true),
    ("https://ex ample.com/", false, false),
    ("http://%6cocalhost/", true, false),
    ("http://127.1/", true, false),
    ("http://0x7f.0.0.1/", true, false),
    ("http://2130706433/", true, false),
    ("http:localhost/", true, false),
    ("", false, false),
    ("https://exa%41mple.com/", true, false),
];

#[test]
fn url_rule_vectors() {
    let mut wrong = Vec::new();
    for (url, form, elicitation) in URL_VECTORS {
        let got = (check_url(url).is_ok(), url_allowed(url));
        if got != (*form, *elicitation) {
            wrong.push(format!(
                "{url:?}: got {got:?}, want {:?}",
                (form, elicitation)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(URL_VECTORS.len() >= 40);
}

// ---------------------------------------------------------------------------------------
// Target: the command line

const ARGS: &[&str] = &[
    "--",
    "--name",
    "--log-level",
    "--discover-timeout",
    "--max-line-bytes",
    "--header",
    "--header-env",
    "--ca-file",
    "--max-response-bytes",
    "--client-id",
    "--client-issuer",
    "--token-store",
    "--redirect-port",
    "--no-browser",
    "--sign-in-timeout",
    "--account",
    "-h",
    "--help",
    "-V",
    "--version",
    "--bogus",
    "-x",
    "=",
    "debug",
    "0",
    "86401",
    "1073741825",
    "64",
    "https://mcp.example.com/mcp",
    "http://example.com/",
    "Authorization=AUTH_VAR",
    "X-Api-Key:Vq9z-planted",
    "cmd",
    "--name=demo",
    "--log-level=warn",
    "--discover-timeout=5",
];

#[test]
fn fuzz_command_line() {
    let mut rng = rng(7);
    // clap builds its command for each parse: a third of the cases keeps this target at about
    // two seconds in the debug build.
    let run = cases() / 3;
    let (mut parsed, mut refused) = (0, 0);
    for _ in 0..run {
        let args: Vec<OsString> = (0..rng.next() % 7)
            .map(|_| OsString::from(ARGS[(rng.next() as usize) % ARGS.len()]))
            .collect();
        let a = cli::parse(&args);
        if a.is_ok() {
            parsed += 1;
        }
        if let Err(e) = a {
            refused += 1;
            let text = e.to_string();
            assert!(!text.is_empty());
            assert!(!text.contains('\n'), "one line: {text}");
            // A value on the command line is never in an error line.
            assert!(!text.contains("Vq9z-planted"), "{args:?}: {text}");
        }
    }
    assert_floor("command line: parsed", parsed, run, 20);
    assert_floor("command line: refused", refused, run, 300);
}
