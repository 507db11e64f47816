//! The bridge with a token store of its own, signing in at the fixture's authorization server
//! (`bridge-fixture-server --oauth`): a state directory (`XDG_STATE_HOME`), a token key, a
//! redirect port, the store of the runs (`file` or `keychain`), and `logout` with the same.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use super::oauth::{bridge, free_port, initialize_signing_in, sign_in_urls};
use super::{Bridge, call};

/// The prefixes of the tokens that the fixture issues.
pub const ISSUED: [&str; 3] = ["bfx_at_", "bfx_rt_", "bfx_code_"];

/// The setup of the runs.
pub struct Stored {
    state: tempfile::TempDir,
    url: String,
    port: u16,
    store: &'static str,
    key: &'static str,
}

impl Stored {
    /// A new state directory for the server at `url`, with `store` and the token key `key`.
    pub fn new(url: &str, store: &'static str, key: &'static str) -> Stored {
        Stored {
            state: tempfile::tempdir().expect("tempdir"),
            url: url.to_owned(),
            port: free_port(),
            store,
            key,
        }
    }

    /// The same state directory, token key and redirect port for the server at `url` (two
    /// servers that share one store).
    pub fn set_url(&mut self, url: &str) {
        url.clone_into(&mut self.url);
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "XDG_STATE_HOME",
                self.state.path().to_string_lossy().into_owned(),
            ),
            ("MCP_BRIDGE_TOKEN_KEY", self.key.to_owned()),
        ]
    }

    /// The state directory (`XDG_STATE_HOME`).
    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }

    /// The token directory of the file store.
    pub fn token_dir(&self) -> PathBuf {
        self.state.path().join("mcp-bridge-vscode").join("tokens")
    }

    /// The bridge with this setup and `extra` options, past the line of its store.
    pub fn start(&self, extra: &[&str]) -> Bridge {
        let mut args = vec!["--no-browser", "--token-store", self.store];
        args.extend_from_slice(extra);
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let b = bridge(&self.url, self.port, &args, &env);
        let line = match self.store {
            "keychain" => "the tokens are in the keychain of the host",
            _ => "the tokens are in encrypted files in ",
        };
        b.expect_line(|l| l.contains(line));
        b
    }

    /// A start that signs in through the sign-in line, then one tool call.
    pub fn sign_in(&self, extra: &[&str]) {
        let mut b = self.start(extra);
        initialize_signing_in(&mut b);
        add(&mut b);
        assert_eq!(sign_in_urls(&b).len(), 1);
        b.close_and_expect_exit_0();
        assert_no_token(&b.stderr());
    }

    /// A start that must not sign in: `initialize` and a tool call with the stored token.
    pub fn reuse(&self, extra: &[&str]) {
        let mut args = vec!["--sign-in-timeout", "5"];
        args.extend_from_slice(extra);
        let mut b = self.start(&args);
        b.initialize();
        add(&mut b);
        assert!(
            sign_in_urls(&b).is_empty(),
            "a sign-in line:\n{}",
            b.stderr()
        );
        b.close_and_expect_exit_0();
        assert_no_token(&b.stderr());
    }

    /// `logout --token-store <store> --redirect-port <port> <args>` with this setup's
    /// environment: the exit code and stderr.
    pub fn logout(&self, args: &[&str]) -> (i32, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
            .arg("logout")
            .args([
                "--token-store",
                self.store,
                "--redirect-port",
                &self.port.to_string(),
            ])
            .args(args)
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .expect("logout runs");
        super::kept::keep_output("logout", &out);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains(self.key));
        (out.status.code().unwrap_or(-1), stderr)
    }
}

/// The tool call `add` 2 + 3 of the fixture.
pub fn add(b: &mut Bridge) {
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(
        r["result"]["content"][0]["text"],
        "5",
        "{r}\n{}",
        b.stderr()
    );
}

/// No token that the fixture issues in `text`.
pub fn assert_no_token(text: &str) {
    for prefix in ISSUED {
        assert!(!text.contains(prefix), "{prefix} in:\n{text}");
    }
}
